"""The report's section on the LLM judges' runs (``humeval judge``): what was asked, what it cost, and how
consistent the judge was when the two outputs swapped places. Read from the logbook's last successful run."""

from __future__ import annotations

from typing import Any

from humeval import logbook
from humeval.report.document import Section, Table
from humeval.study import StudyFolder

__all__ = ["judge_runs_section"]


def _last_runs(study: StudyFolder) -> dict[str, tuple[dict[str, Any], logbook.Entry]]:
    """Judge name -> (its summary, the logbook entry) of the last successful ``judge`` run that asked it."""
    last: dict[str, tuple[dict[str, Any], logbook.Entry]] = {}
    for entry in logbook.entries(study):
        if entry.stage == "judge" and entry.ok:
            for name, summary in (entry.summary or {}).get("judges", {}).items():
                last[name] = (summary, entry)
    return last


def judge_runs_section(study: StudyFolder) -> Section | None:
    """One row per judge with ``llm`` that ran: model, endpoint, prompt hash, requests, tokens, cost, refusals,
    unparseable answers, and for verdicts the position consistency (share of pairs whose two orders agreed)."""
    asked = [j for j in study.protocol.data.judges if j.llm is not None]
    if not asked:
        return None
    runs = _last_runs(study)
    rows, paragraphs = [], []
    for judge in asked:
        if judge.name not in runs:
            paragraphs.append(f"Judge {judge.name} ({judge.llm.model if judge.llm else ''}) has not been asked yet "
                              "(`humeval judge`).")
            continue
        s, entry = runs[judge.name]
        recorded = {o["path"]: o["sha256"] for o in entry.outputs or []}
        now = study.hashes([study.root / judge.file])[0]
        if recorded.get(now["path"]) != now["sha256"]:
            paragraphs.append(f"WARNING: {judge.file} is not the file judge {judge.name}'s last run wrote "
                              f"(sha256 {recorded.get(now['path'], 'none')[:12]}, now {now['sha256'][:12]}).")
        consistency = s.get("position_consistency")
        rows.append([judge.name, s["model"], s["endpoint"], s["prompt_sha256"][:12], s["asked"], s["requests"],
                     s["tokens_in_all"], s["tokens_out_all"],
                     f"{s['cost_all']:.4f} {s['currency']}" + (" (estimated)" if s.get("cost_all_estimated") else ""),
                     s["refusals"],
                     s["unparseable"], s["rows"],
                     "-" if consistency is None else f"{consistency:.3f} ({s['swaps_disagreed']} of {s['swaps_compared']} disagreed, {s['swap']})",
                     "-" if s.get("first_shown_chosen") is None else f"{s['first_shown_chosen']:.3f}"])
    if rows:
        paragraphs.insert(0, "Each LLM judge's last run (`humeval judge`, from the logbook). Tokens and cost are those "
                             "of every answer its file rests on (cached answers included), estimated from the text where the "
                             "endpoint gave no valid usage (marked); 'requests' were sent in that run. Position consistency is the share of pairs, asked in both orders, whose two answers "
                             "named the same winner; 'first shown chosen' is the share of decisive answers that chose "
                             "the output shown first (0.5 without position bias). Refused and unparseable answers are "
                             "counted, never guessed: a pair with one gets no verdict. Agreement with the humans and the "
                             "prediction-powered estimates are in each criterion's 'Automatic judges' tables.")
    table = Table("LLM judges: runs", ["judge", "model", "endpoint", "prompt sha256", "asked", "requests", "tokens in",
                                       "tokens out", "cost", "refusals", "unparseable", "verdicts/scores",
                                       "position consistency", "first shown chosen"], rows)
    return Section("LLM judges", paragraphs, [table] if rows else [])
