"""Asking LLM judges: an OpenAI-compatible client, the answer cache, prompts, and the judges' files.

``humeval judge`` (:meth:`humeval.Study.judge`, :func:`humeval.pipeline.judge`) runs the ``judge`` stage; see docs/judges.md for the
exact request and how answers are read.
"""

from humeval.judging.cache import AnswerCache, request_key
from humeval.judging.client import ChatClient, JudgeError, Reply, read_key
from humeval.judging.cost import JudgeCost, estimate_cost
from humeval.judging.prompt import (
    Template,
    load_template,
    parse_score,
    parse_verdict,
    template_problems,
)
from humeval.judging.run import JudgeRun, ask_judge, llm_judges, plan_requests

__all__ = [
    "AnswerCache",
    "ChatClient",
    "JudgeCost",
    "JudgeError",
    "JudgeRun",
    "Reply",
    "Template",
    "ask_judge",
    "estimate_cost",
    "llm_judges",
    "load_template",
    "parse_score",
    "parse_verdict",
    "plan_requests",
    "read_key",
    "request_key",
    "template_problems",
]
