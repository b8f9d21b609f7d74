"""The admin page's recruitment section: places used, in progress and wanted, the rule's state, the waves
opened on the platform and what the stop saved.

``saved`` counts the participant lists no participant was given (each a paid place on a crowd platform)
and their tasks, with the reward per list of the budget the platform's ``create`` recorded (or, when it can be computed
from the protocol alone, the one :func:`humeval.costs.budget` of the fixed design pays:
:func:`humeval.costs.reward_per_list`).
While the study runs it is what stopping now would save; once recruitment is finished it is final.
"""

from __future__ import annotations

from typing import Any

from humeval.errors import HumevalError
from humeval.platforms.registry import platform_of
from humeval.store.store import Store

__all__ = ["places_json", "poll_seconds", "recruitment_view"]

#: the waitlist page asks again every waitlist / POLLS seconds, within [FASTEST, SLOWEST]
POLLS, FASTEST, SLOWEST = 40, 0.25, 15.0


def _reward(store: Store, state: dict[str, Any]) -> tuple[float | None, str]:
    saved = state.get("budget") or {}
    if saved.get("reward_per_list") is not None:
        return float(saved["reward_per_list"]), str(saved.get("currency", ""))
    from humeval.costs import budget, reward_per_list

    sizes = store.context.list_sizes  # (the design's lists, as the store serves them; none for a pool strategy)
    try:  # what the budget of the fixed design pays per place, without reading the design (22 s at 100k items)
        if sizes:
            return reward_per_list(store.study, max(sizes.values()))
        b = budget(store.study, predict=False)
    except HumevalError:
        return None, ""
    return b.reward_per_list, b.currency


def recruitment_view(store: Store) -> dict[str, Any]:
    """``recruitment`` (:meth:`Store.recruitment`), ``lists``, ``unused`` lists and ``unused_tasks``,
    ``reward``/``currency``/``saved`` (None when no reward is known), ``final``, and the platform's ``waves``,
    ``places`` and ``status`` (:meth:`~humeval.platforms.base.CrowdPlatform.recruitment_state`: Prolific's
    ``.humeval/prolific.json``; empty for platforms without an API)."""
    rec = store.recruitment()
    unused, unused_tasks = store.unused_lists()
    state = platform_of(store.context.protocol.platform.kind).recruitment_state(store.study)
    reward, currency = _reward(store, state)
    return {
        "recruitment": rec.to_json(), "lists": len(store.context.list_sizes), "unused": int(unused),
        "unused_tasks": int(unused_tasks or 0), "reward": reward, "currency": currency,
        "saved": None if reward is None else round(reward * int(unused), 2), "final": rec.finished,
        "waves": list(state.get("waves", [])), "places": state.get("places"), "status": state.get("status", ""),
        "stopped": bool(state.get("stopped")),
    }



def poll_seconds(waitlist_seconds: float) -> float:
    """How often a participant on the waitlist asks again: ``waitlist_seconds / 40`` within 0.25-15 s (600 s: 15 s)."""
    return min(SLOWEST, max(FASTEST, waitlist_seconds / POLLS))


def places_json(store: Store) -> dict[str, Any]:
    """``GET /api/v1/places`` (:class:`humeval.server.contract.Places`): the places a participant can take now
    (:attr:`Recruitment.wanted`: sessions the stopping rule admits and other lists left), whether none can open
    any more, and the study's waitlist."""
    rec = store.recruitment()
    stopping = store.context.protocol.stopping
    wait = float(stopping.waitlist_seconds) if stopping is not None and store.context.list_watched else 0.0
    return {"open": 0 if rec.finished else int(rec.wanted), "finished": bool(rec.finished),
            "waitlist_seconds": wait, "poll_seconds": poll_seconds(wait or FASTEST * POLLS)}
