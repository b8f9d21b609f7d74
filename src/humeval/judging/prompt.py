"""A judge's prompt: the template, its placeholders, its hash, and reading the answer.

A template is plain text with ``{placeholders}``. Only the names below are replaced; any other
brace is sent as written (a JSON example in a prompt needs no escaping).

==============  ===========================================================================
placeholder     replaced by
==============  ===========================================================================
``{input}``       the system input of the item (``data.input``)
``{references}``  the item's reference texts, one per line (``data.references``)
``{output}``      ``scores``: the output judged
``{output_a}``    ``verdicts``: the output shown first
``{output_b}``    ``verdicts``: the output shown second
``{criterion}``   the name of the criterion the judge stands in for
``{question}``    that criterion's question
``{definition}``  that criterion's definition
==============  ===========================================================================

Answers are read strictly, never guessed (:func:`parse_verdict`, :func:`parse_score`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from humeval.errors import ProtocolError
from humeval.protocol.models import Criterion, Judge, Protocol

__all__ = ["PLACEHOLDERS", "Template", "judge_criterion", "load_template", "parse_score", "parse_verdict",
           "template_problems"]

#: the placeholders each kind may use, and the ones it must use
PLACEHOLDERS = {
    "verdicts": ("input", "references", "output_a", "output_b", "criterion", "question", "definition"),
    "scores": ("input", "references", "output", "criterion", "question", "definition"),
}
_REQUIRED = {"verdicts": ("output_a", "output_b"), "scores": ("output",)}
_ALL = sorted({p for names in PLACEHOLDERS.values() for p in names}, key=len, reverse=True)
_PLACEHOLDER = re.compile(r"\{(" + "|".join(_ALL) + r")\}")
_CRITERION = ("criterion", "question", "definition")


@dataclass(frozen=True)
class Template:
    """A judge's prompt template (``text``), its ``sha256`` (of the UTF-8 text), and where it came from."""

    text: str
    source: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def used(self) -> set[str]:
        return set(_PLACEHOLDER.findall(self.text))

    def render(self, values: dict[str, str]) -> str:
        """The template with each known placeholder replaced (in one pass: a value's braces stay as they are)."""
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), self.text)


def load_template(judge: Judge, root: Path) -> Template:
    """The template of ``judge`` (which has ``llm``): inline, or read from its ``prompt_file``."""
    llm = judge.llm
    if llm is None:
        raise ProtocolError(f"data.judges: judge '{judge.name}' has no `llm` section; `humeval judge` asks only "
                            "judges declared with one")
    if llm.prompt:
        return Template(llm.prompt, f"data.judges[{judge.name}].llm.prompt")
    path = root / llm.prompt_file
    if not path.is_file():
        raise ProtocolError(f"data.judges[{judge.name}].llm.prompt_file: prompt file not found: {path}")
    return Template(path.read_text(encoding="utf-8"), llm.prompt_file)


def judge_criterion(judge: Judge, protocol: Protocol) -> Criterion | None:
    """The one criterion the judge stands in for (named in ``criteria``, or the only one its kind fits), else None."""
    if judge.criteria:
        named = [c for c in protocol.criteria if c.name in judge.criteria]
    else:
        named = [c for c in protocol.criteria if c.task.pairwise == (judge.kind == "verdicts")]
    return named[0] if len(named) == 1 else None


def template_problems(judge: Judge, protocol: Protocol, root: Path) -> list[str]:
    """What is wrong with the judge's template: unreadable, a required placeholder missing, one of the other kind,
    or ``{criterion}``/``{question}``/``{definition}`` when the judge stands in for no single criterion."""
    where = f"data.judges[{judge.name}].llm"
    try:
        template = load_template(judge, root)
    except ProtocolError as exc:
        return [str(exc)]
    used = template.used
    problems = []
    missing = [p for p in _REQUIRED[judge.kind] if p not in used]
    if missing:
        problems.append(f"{where}: the prompt of a `{judge.kind}` judge must contain "
                        f"{', '.join('{' + p + '}' for p in missing)} ({template.source})")
    wrong = sorted(used - set(PLACEHOLDERS[judge.kind]))
    if wrong:
        problems.append(f"{where}: {', '.join('{' + p + '}' for p in wrong)} is not a placeholder of a `{judge.kind}` "
                        f"judge; available: {', '.join('{' + p + '}' for p in PLACEHOLDERS[judge.kind])}")
    if used & set(_CRITERION) and judge_criterion(judge, protocol) is None:
        problems.append(f"{where}: the prompt uses {{criterion}}, {{question}} or {{definition}}, but the judge stands "
                        "in for no single criterion; name one in `criteria`")
    return problems


_BRACKETED = re.compile(r"\[\[\s*([^\[\]]*?)\s*\]\]")
_VERDICTS = {"a": "A", "b": "B", "c": "tie", "tie": "tie"}
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)")
_DECORATION = " \t\r\n*_`'\".:!"


def parse_verdict(text: str) -> str | None:
    """``A``, ``B`` or ``tie`` from an answer, else None (unparseable).

    Read are: exactly one distinct bracketed verdict anywhere (``[[A]]``, ``[[B]]``, ``[[C]]`` or
    ``[[tie]]``: MT-Bench's convention, so the model may reason first), or an answer that is
    nothing but ``A``, ``B`` or ``tie`` (case, spaces, quotes, ``*``/``_`` emphasis and a final
    period ignored). Anything else, two different bracketed verdicts included, is unparseable.
    """
    found = {_VERDICTS.get(m.lower()) for m in _BRACKETED.findall(text)}
    if found:
        return found.pop() if len(found) == 1 and None not in found else None
    bare = text.strip(_DECORATION).lower()
    return None if bare == "c" else _VERDICTS.get(bare)


def parse_score(text: str, low: float | None = None, high: float | None = None) -> float | None:
    """A number from an answer, else None: exactly one distinct bracketed number (``[[4]]``), or an answer that
    is nothing but a number; outside ``[low, high]`` it is unparseable too."""
    bracketed = _BRACKETED.findall(text)
    if bracketed:
        values = set(bracketed)
        candidate = values.pop() if len(values) == 1 else ""
    else:
        candidate = text.strip(_DECORATION.replace(".", ""))
        candidate = candidate.removesuffix(".")  # a sentence's final period
    if not _NUMBER.fullmatch(candidate):
        return None
    value = float(candidate)
    if (low is not None and value < low) or (high is not None and value > high):
        return None
    return value
