"""The ``judge`` stage: ask every LLM judge (or those named) and write their files; the logbook keeps what each cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from humeval.stage import StageOutput
from humeval.study import StudyFolder

__all__ = ["judge_stage"]


def judge_stage(study: StudyFolder, judges: list[str] | None = None) -> StageOutput:
    """``humeval judge``: per judge, the model, endpoint, prompt hash, requests, tokens, cost, refusals,
    unparseable answers and (verdicts) position swaps that disagreed, in the summary."""
    from humeval.judging.client import JudgeError
    from humeval.judging.run import answers_file, ask_judge, llm_judges

    chosen = llm_judges(study, judges)
    summary: dict[str, Any] = {}
    outputs: list[Path] = []
    for judge in chosen:
        try:
            run = ask_judge(study, judge)
        except JudgeError as exc:  # the logbook's error entry keeps what every judge asked so far, and spent
            raise JudgeError(str(exc), {"judges": summary | ({judge.name: exc.summary} if exc.summary else {})}) from None
        summary[judge.name] = run.summary()
        outputs += [study.root / judge.file, answers_file(study, judge)]
    return StageOutput(outputs=outputs, parameters={"judges": [j.name for j in chosen]}, summary={"judges": summary})
