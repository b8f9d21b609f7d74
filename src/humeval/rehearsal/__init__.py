"""Rehearsing a study: dummy responses through the real pipeline.

``dry-run`` (:mod:`humeval.stages.dry_run`) writes dummy judgements of each kind (:mod:`humeval.simulate.dummy`: random,
static, normal; Thomson & Belz, section 3.7) straight into a results folder and runs the
back half on them; :func:`rehearse` drives synthetic participants (:mod:`.participants`)
through the real web server and store (dummy answers, or a simulated crowd: :class:`Population`),
then exports and runs the back half. Effort
simulation of stopping rules and labelling strategies is :mod:`humeval.simulate`.
"""

from humeval.rehearsal.participants import CHEAP_STRATEGIES, REHEARSAL_KINDS, Population
from humeval.rehearsal.rehearse import (
    RehearsalError,
    RehearsalOptions,
    RehearsalResult,
    rehearse,
    rehearse_with,
)
from humeval.simulate.dummy import DUMMY_KINDS, dummy_judgements

__all__ = ["CHEAP_STRATEGIES", "DUMMY_KINDS", "REHEARSAL_KINDS", "Population", "RehearsalError", "RehearsalOptions", "RehearsalResult",
           "dummy_judgements", "rehearse", "rehearse_with"]
