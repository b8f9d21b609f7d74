"""Task types: one module per criterion ``type`` (what is shown, asked, checked, stored, simulated and analysed).

=============  ====================================================================
module         criterion type
=============  ====================================================================
``twoafc``     ``2afc``: choose the better of two outputs
``likert``     ``likert``: a k-point scale
``magnitude``  ``magnitude``: magnitude estimation relative to a standard
``rankme``     ``rankme``: rank-based magnitude estimation, all outputs side by side
``slider``     ``slider``: a bounded continuous scale
``esa``        ``esa``: error spans, then a 0-100 score
``battle``     ``battle``: an arena battle, two anonymous models' answers to one prompt
=============  ====================================================================

``TASK_TYPES`` is the registry (:class:`humeval.registry.Registry`); a criterion's type is
``criterion.task``. docs/task-types.md says how to add one.
"""

from __future__ import annotations

from humeval.tasks.base import (
           MISSING,
           PARTIALS,
           CriterionBase,
           InvalidValue,
           Scale,
           StandardItem,
           Statistic,
           TaskType,
)
from humeval.tasks.battle import Battle
from humeval.tasks.esa import ESA
from humeval.tasks.likert import Likert
from humeval.tasks.magnitude import Magnitude
from humeval.tasks.rankme import RankME
from humeval.tasks.registry import TASK_TYPES
from humeval.tasks.slider import Slider
from humeval.tasks.twoafc import TwoAFC

__all__ = ["ESA", "Battle", "MISSING", "PARTIALS", "TASK_TYPES", "CriterionBase", "InvalidValue", "Likert", "Magnitude",
           "RankME", "Scale", "Slider", "StandardItem", "Statistic", "TaskType", "TwoAFC"]
