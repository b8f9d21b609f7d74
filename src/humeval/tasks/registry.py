"""The registry of task types: every criterion ``type`` a protocol may declare, in the order the docs list them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from humeval.errors import ProtocolError
from humeval.registry import Registry
from humeval.tasks.base import TaskType
from humeval.tasks.battle import BattleType
from humeval.tasks.bws import BWSType
from humeval.tasks.esa import ESAType
from humeval.tasks.likert import LikertType
from humeval.tasks.magnitude import MagnitudeType
from humeval.tasks.mqm import MQMType
from humeval.tasks.rankme import RankMEType
from humeval.tasks.slider import SliderType
from humeval.tasks.twoafc import TwoAFCType

if TYPE_CHECKING:  # the union of the criterion models, spelt out for the type checker beside the registration
    # (humeval.protocol.models' Criterion; tests/unit/test_task_types.py compares it with the registry)
    from typing import TypeAlias

    from humeval.tasks.battle import Battle
    from humeval.tasks.bws import BWS
    from humeval.tasks.esa import ESA
    from humeval.tasks.likert import Likert
    from humeval.tasks.magnitude import Magnitude
    from humeval.tasks.mqm import MQM
    from humeval.tasks.rankme import RankME
    from humeval.tasks.slider import Slider
    from humeval.tasks.twoafc import TwoAFC

    CriterionModel: TypeAlias = TwoAFC | Likert | Magnitude | RankME | Slider | ESA | Battle | MQM | BWS

__all__ = ["TASK_TYPES", "TaskTypes", "docs_columns"]

TaskTypes = Registry[TaskType]


def _build() -> TaskTypes:
    types = TaskTypes("task type", "criteria.type", error=ProtocolError)
    for kind in (TwoAFCType, LikertType, MagnitudeType, RankMEType, SliderType, ESAType, BattleType, MQMType,
                 BWSType):
        types.add(kind.name, kind.model.task_type, summary=kind.summary)
    return types


#: every task type, by the ``type`` of a protocol's criterion
TASK_TYPES = _build()

_SHOWS = {"single": "one output", "pair": "two outputs", "multi": "all outputs of an item"}


def docs_columns() -> dict[str, Any]:
    """The columns of the task types' docs table (``<!-- registry:task-types -->``) beyond name and summary."""
    return {
        "module": lambda e: f"`{type(e.value).__module__}`",
        "a task shows": lambda e: e.value.shows or _SHOWS[e.value.family],
        "statistics that apply": lambda e: "; ".join(s.name for s in e.value.statistics if s.applies),
        "do not apply (why)": lambda e: "; ".join(f"{s.name} ({s.reason})" for s in e.value.statistics
                                                  if not s.applies) or "none",
    }
