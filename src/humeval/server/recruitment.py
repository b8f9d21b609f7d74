"""The admin page's recruitment section: places used, in progress and wanted, the rule's state, the waves
opened on Prolific and what the stop saved.

``saved`` counts the participant lists no participant was given (each a paid place on a crowd platform)
and their tasks, with the reward per list of the budget ``prolific create`` recorded (or
:func:`humeval.costs.budget` of the fixed design when it can be computed from the protocol alone).
While the study runs it is what stopping now would save; once recruitment is finished it is final.
"""

from __future__ import annotations

from typing import Any

from humeval.errors import HumevalError
from humeval.files import read_json
from humeval.store.store import Store

__all__ = ["recruitment_view"]


def _reward(store: Store, state: dict[str, Any]) -> tuple[float | None, str]:
    saved = state.get("budget") or {}
    if saved.get("reward_per_list") is not None:
        return float(saved["reward_per_list"]), str(saved.get("currency", ""))
    from humeval.costs import budget

    try:
        b = budget(store.study, predict=False)
    except HumevalError:
        return None, ""
    return b.reward_per_list, b.currency


def recruitment_view(store: Store) -> dict[str, Any]:
    """``recruitment`` (:meth:`Store.recruitment`), ``lists``, ``unused`` lists and ``unused_tasks``,
    ``reward``/``currency``/``saved`` (None when no reward is known), ``final``, and Prolific's ``waves``,
    ``places`` and ``status`` (from ``.humeval/prolific.json``; empty for other platforms)."""
    rec = store.recruitment()
    lists = store.study.read_lists()
    tasks = {pl.list_id: sum(t.kind == "task" for t in pl.tasks) for pl in lists}
    given = set(store.read(_given))
    unused = [lid for lid in tasks if lid not in given]
    path = store.study.state_dir / "prolific.json"
    state = read_json(path) if path.is_file() else {}
    reward, currency = _reward(store, state)
    return {
        "recruitment": rec.to_json(), "lists": len(lists), "unused": len(unused),
        "unused_tasks": sum(tasks[lid] for lid in unused), "reward": reward, "currency": currency,
        "saved": None if reward is None else round(reward * len(unused), 2), "final": rec.finished,
        "waves": list(state.get("waves", [])), "places": state.get("places"), "status": state.get("status", ""),
        "stopped": bool(state.get("stopped")),
    }


def _given(conn: Any) -> list[str]:
    """Lists ever given to a participant (a list released after a return counts once given: it is wanted again
    and will be given again, so it is not saved)."""
    from sqlalchemy import text

    rows = conn.execute(text("SELECT DISTINCT list_id FROM participants WHERE list_id IS NOT NULL "
                             "UNION SELECT list_id FROM lists WHERE participant_id IS NOT NULL"))
    return [r[0] for r in rows]
