"""Files from other tools read as humeval's judgements or outputs: FastChat battles, WMT MQM TSV, Label Studio
and Argilla exports, SummEval JSONL, Hugging Face data sets (docs/data-formats.md).

One entry point by format name, :func:`read_judgement_file`, and the join to a study's design,
:func:`match_tasks`; the readers live in one module per tool.
"""

from humeval.formats.external import (
    JUDGEMENT_FORMATS,
    JudgementFormat,
    match_tasks,
    read_judgement_file,
)

__all__ = ["JUDGEMENT_FORMATS", "JudgementFormat", "match_tasks", "read_judgement_file"]
