"""``mqm``: MQM error annotation (the WMT typology) of one output: error spans, each with a category and a severity.

The value is ``{"spans": [{"start", "end", "severity", "category"}, ...]}``: character offsets
into the output's source text (0 <= start < end <= its length, at most ``max_spans``; errors
may overlap, as in WMT's data, where a minor error lies inside a major one), a ``severity`` of the criterion's ``severities`` (WMT's ``minor`` and ``major``;
``critical`` when the protocol lists it) and a ``category`` of its ``categories`` (by default the
typology of Freitag et al. 2021, as in WMT's MQM data: ``Accuracy/Mistranslation``,
``Fluency/Grammar``, ..., ``Non-translation``). No error marked is a valid answer (WMT's
``No-error``).

**Scoring** (:func:`mqm_weights`, the one scoring function; the WMT MQM reader
:func:`humeval.formats.mqm.read_mqm` scores with it): an error weighs ``weights.major`` (5),
``weights.minor`` (1) or ``weights.critical`` (25) by its severity, a minor
``Fluency/Punctuation`` error ``weights.minor_punctuation`` (0.1) and a ``Non-translation``
``weights.non_translation`` (25) whatever its severity: WMT's defaults, which the protocol may
change. A judgement's **MQM score** is the sum of its errors' weights (0 is perfect); a system's
is the mean over its judgements (WMT's published system scores, negated). In the long table the
``spans`` column holds every error with its ``weight``, and ``value`` puts the score on a 0-100
scale, higher better, ``100 - 100 / worst * min(score, worst)`` (:func:`mqm_value`; ``worst``
25, the reader's), so the rating statistics apply to it.

**Statistics**: the MQM score per system with a percentile bootstrap interval, the minor and
major errors per output, span agreement (:mod:`humeval.stats.spans`), and the rating statistics
of the 0-100 value; not stopping rules (they need pairwise preferences) nor Fleiss' kappa (the
value is continuous).

**WMT MQM TSV**: :func:`mqm_tsv` writes an MQM criterion's judgements in the layout
:func:`humeval.formats.mqm.read_mqm` reads (``humeval import mqm`` brings such a file into a study
with an MQM criterion: :attr:`MQMType.receives`); reading what it wrote gives the same judgements.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from humeval.tasks import base
from humeval.tasks.base import CriterionBase, InvalidValue, Scale, Statistic, TaskType, show

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["MQM", "MQM_TSV_COLUMNS", "WMT_CATEGORIES", "WMT_WEIGHTS", "MQMType", "MQMWeights", "mqm_score",
           "mqm_tsv", "mqm_value", "mqm_weight", "mqm_weights"]

_ = base.mark

#: the error categories of WMT's MQM typology (Freitag et al. 2021, Table 10), as WMT's MQM data spells them
WMT_CATEGORIES = (
    "Accuracy/Addition", "Accuracy/Omission", "Accuracy/Mistranslation", "Accuracy/Untranslated text",
    "Fluency/Grammar", "Fluency/Spelling", "Fluency/Punctuation", "Fluency/Register", "Fluency/Inconsistency",
    "Fluency/Character encoding", "Terminology/Inappropriate for context", "Terminology/Inconsistent use",
    "Style/Awkward", "Locale convention/Address format", "Locale convention/Currency format",
    "Locale convention/Date format", "Locale convention/Name format", "Locale convention/Telephone format",
    "Locale convention/Time format", "Non-translation", "Other", "Source error",
)
#: the columns of the WMT MQM TSV that :func:`mqm_tsv` writes (the reader's, with ``comment``)
MQM_TSV_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity",
                   "comment")
_SEVERITIES = ("minor", "major", "critical")
#: the segment MQM score that the 0-100 value maps to 0 (five major errors, or a non-translation)
WORST = 25.0


class MQMWeights(BaseModel):
    """The weight of an error by its severity and category (WMT's defaults: Freitag et al. 2021)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    minor: float = Field(1.0, ge=0, description="Weight of a minor error.")
    major: float = Field(5.0, ge=0, description="Weight of a major error.")
    critical: float = Field(25.0, ge=0, description="Weight of a critical error (when `severities` lists critical).")
    minor_punctuation: float = Field(0.1, ge=0, description="Weight of a minor error of the category "
                                     "`Fluency/Punctuation`.")
    non_translation: float = Field(25.0, ge=0, description="Weight of an error of a category starting "
                                   "`Non-translation`, whatever its severity.")


#: WMT's weights: major 5, minor 1, critical 25, minor Fluency/Punctuation 0.1, Non-translation 25
WMT_WEIGHTS = MQMWeights()


def mqm_weights(categories: Iterable[str], severities: Iterable[str],
                weights: MQMWeights = WMT_WEIGHTS) -> np.ndarray:
    """The weight of each error (``categories[i]``, ``severities[i]``): the one MQM scoring function.

    A category starting ``Non-translation`` weighs ``weights.non_translation`` whatever the severity;
    otherwise ``critical``, ``major`` and ``minor`` weigh their weight, a minor ``Fluency/Punctuation``
    ``weights.minor_punctuation`` (case-insensitive, as WMT's files vary in case).

    Examples:
        >>> from humeval.tasks.mqm import mqm_weights
        >>> mqm_weights(["Accuracy/Mistranslation", "Fluency/Punctuation", "Fluency/Punctuation", "Non-translation!"],
        ...             ["major", "minor", "major", "minor"]).tolist()
        [5.0, 0.1, 5.0, 25.0]
    """
    import numpy as np

    cat = np.char.lower(np.asarray(list(categories), dtype=str))
    sev = np.char.lower(np.asarray(list(severities), dtype=str))
    minor = np.where(cat == "fluency/punctuation", weights.minor_punctuation, weights.minor)
    by_severity = np.select([sev == "critical", sev == "major"], [weights.critical, weights.major], minor)
    return np.where(np.char.startswith(cat, "non-translation"), weights.non_translation, by_severity).astype(float)


def mqm_weight(category: str, severity: str, weights: MQMWeights = WMT_WEIGHTS) -> float:
    """One error's weight (:func:`mqm_weights` of one error)."""
    return float(mqm_weights([category], [severity], weights)[0])


def mqm_value(score: float | np.ndarray, worst: float = WORST) -> Any:
    """An MQM score on the 0-100 scale of the long table's ``value``, higher better: ``100 - 100 / worst *
    min(score, worst)`` (a score of ``worst`` or more is 0)."""
    import numpy as np

    return 100 - 100 / worst * np.minimum(score, worst)


def mqm_score(frame: pd.DataFrame, weights: MQMWeights = WMT_WEIGHTS) -> np.ndarray:
    """Each judgement's MQM score: the sum of the weights of its errors (the long table's ``spans``, a JSON list of
    ``{start, end, severity, category, ...}``), by :func:`mqm_weights` (the spans' stored ``weight`` is not read)."""
    import numpy as np
    import pandas as pd

    parsed = frame["spans"].fillna("").map(lambda s: json.loads(s) if s else [])
    flat = parsed.explode().dropna()
    out = np.zeros(len(frame))
    if flat.empty:
        return out
    spans = pd.DataFrame(flat.tolist(), index=flat.index)
    w = mqm_weights(spans["category"].astype(str), spans["severity"].astype(str), weights)
    position = pd.Series(np.arange(len(frame)), index=frame.index)
    np.add.at(out, position.loc[flat.index].to_numpy(), w)
    return out


class MQM(CriterionBase):
    """MQM error annotation (the WMT typology): mark the errors of one output, each with a category and a
    severity; scored by the MQM weights. Spans are character offsets into the output's source text."""

    type: Literal["mqm"] = Field(description="Response type: MQM error spans (category and severity) in one output.")
    categories: tuple[str, ...] = Field(
        WMT_CATEGORIES, min_length=1, description="The error categories offered (WMT's MQM typology by default; "
        "`Non-translation` and minor `Fluency/Punctuation` are weighed by their own weights). Shown as written.")
    severities: tuple[Literal["minor", "major", "critical"], ...] = Field(
        ("minor", "major"), min_length=1, description="The severities offered: WMT's minor and major; add "
        "critical for a third (weight `weights.critical`).")
    weights: MQMWeights = Field(WMT_WEIGHTS, description="The weight of an error by severity and category (WMT's "
                                "defaults). A judgement's MQM score is the sum of its errors' weights.")
    worst: float = Field(WORST, gt=0, description="The MQM score whose 0-100 value is 0 (the value is "
                         "100 - 100 / worst x min(score, worst), higher better).")
    max_spans: int = Field(50, ge=1, le=500, description="Most errors a participant may mark in one output.")


def _tsv_cell(text: str, where: str) -> str:
    """A TSV cell as WMT writes it (no quoting): refused when it holds a tab or a line break."""
    if "\t" in text or "\n" in text or "\r" in text:
        raise InvalidValue(where, f"a WMT MQM TSV cell cannot hold a tab or a line break, got {show(text)}")
    return text


def mqm_tsv(judgements: pd.DataFrame, texts: Mapping[tuple[str, str], Any], *, criterion: str = "",
            documents: Mapping[str, tuple[str, str]] | None = None) -> str:
    """The judgements of an MQM criterion (the long table's rows, ``spans`` with ``category``) as a WMT MQM TSV.

    ``texts``: ``(item_id, system) ->`` the output shown (``.output``, the target) and its ``.input`` (the
    source), as :meth:`humeval.study.StudyFolder.outputs` ``.texts`` gives them; ``criterion``: the criterion's name
    (empty: every row); ``documents``: ``item_id -> (doc, doc_id)`` (empty cells without). One row per error, the
    error marked ``<v>...</v>`` in the target (an empty span, an error WMT marked in the source, leaves the
    target unmarked); a judgement without errors is one ``No-error`` row. Severities are written as WMT does
    (``Major``, ``Minor``, ``Critical``); attention checks and repeats are left out.
    """
    rows = judgements if not criterion else judgements[judgements["criterion"] == criterion]
    rows = rows[rows["kind"] == "task"] if "kind" in rows else rows
    documents = documents or {}
    lines = ["\t".join(MQM_TSV_COLUMNS)]
    for rater, item, system, spans_json, comment in zip(rows["participant_id"], rows["item_id"], rows["system"],
                                                        rows["spans"], rows.get("comment", [""] * len(rows)),
                                                        strict=True):
        where = f"{rater}/{system}/{item}"
        shown = texts.get((item, system))
        if shown is None:
            raise InvalidValue(where, f"no output of system {system!r} for item {item!r} in the texts given")
        doc, doc_id = documents.get(item, ("", ""))
        head = [_tsv_cell(str(x), where) for x in (system, doc, doc_id, item, rater, shown.input)]
        target = _tsv_cell(shown.output, where)
        tail = _tsv_cell(str(comment or ""), where)
        spans = json.loads(spans_json) if spans_json else []
        if not spans:
            lines.append("\t".join([*head, target, "No-error", "No-error", tail]))
        for s in spans:
            start, end = int(s["start"]), int(s["end"])
            marked = target if start == end else f"{target[:start]}<v>{target[start:end]}</v>{target[end:]}"
            lines.append("\t".join([*head, marked, _tsv_cell(str(s["category"]), where),
                                    str(s["severity"]).capitalize(), tail]))
    return "\n".join(lines) + "\n"


def _spans(criterion: MQM, v: Any, field: str, length: int | None) -> list[dict[str, Any]]:
    """Errors checked (integer offsets within the output, a severity and a category the criterion offers, at most
    ``max_spans``) and sorted by position. Errors may overlap, as in WMT's data (a minor punctuation error inside a
    major awkward phrase); the task page marks disjoint ones."""
    most = criterion.max_spans
    if not isinstance(v, list) or len(v) > most:
        raise InvalidValue(field, f"expected a list of at most {most} errors {{start, end, severity, category}}, "
                           f"got {show(v)}")
    spans = []
    for i, span in enumerate(v):
        where = f"{field}[{i}]"
        if not isinstance(span, dict) or set(span) != {"start", "end", "severity", "category"}:
            raise InvalidValue(where, f"expected {{start, end, severity, category}}, got {show(span)}")
        start, end, severity, category = span["start"], span["end"], span["severity"], span["category"]
        if any(isinstance(x, bool) or not isinstance(x, int) for x in (start, end)) or not 0 <= start < end:
            raise InvalidValue(where, f"expected integer offsets 0 <= start < end, got start={start!r}, end={end!r}")
        if length is not None and end > length:
            raise InvalidValue(where, f"end {end} is past the end of the output ({length} characters)")
        if severity not in criterion.severities:
            raise InvalidValue(where, f"severity: expected one of {', '.join(criterion.severities)}, got {show(severity)}")
        if category not in criterion.categories:
            raise InvalidValue(where, f"category: {show(category)} is not one of the criterion's categories "
                               f"({', '.join(criterion.categories[:4])}{', ...' if len(criterion.categories) > 4 else ''})")
        spans.append({"start": start, "end": end, "severity": severity, "category": category})
    spans.sort(key=lambda s: (s["start"], s["end"]))
    return spans


#: MQM's messages in the server's other languages (:attr:`humeval.tasks.TaskType.translations`)
TRANSLATIONS = {
    "de": {
        'critical':
            'kritisch',
        'Critical error':
            'Kritischer Fehler',
        'Category of the error':
            'Kategorie des Fehlers',
        'Mark the words that contain an error: tap or click the first and then the last word of the error (in the text, the arrow keys move and Shift with an arrow extends), then choose its category and its severity.':
            'Markieren Sie die Wörter, die einen Fehler enthalten: Tippen oder klicken Sie auf das erste und dann auf das letzte Wort des Fehlers (im Text bewegen die Pfeiltasten, Umschalt mit einem Pfeil erweitert), und wählen Sie dann seine Kategorie und seinen Schweregrad.',
        'This is an attention check. Please mark no error and submit, for the question: %(question)s':
            'Dies ist eine Aufmerksamkeitsprüfung. Bitte markieren Sie keinen Fehler und senden Sie ab, für die Frage: %(question)s',
    },
    "ar": {
        'critical':
            'حرج',
        'Critical error':
            'خطأ حرج',
        'Category of the error':
            'فئة الخطأ',
        'Mark the words that contain an error: tap or click the first and then the last word of the error (in the text, the arrow keys move and Shift with an arrow extends), then choose its category and its severity.':
            'حدّد الكلمات التي تحتوي على خطأ: انقر أو المس الكلمة الأولى ثم الكلمة الأخيرة من الخطأ (في النص، تنقل مفاتيح الأسهم ويمدّ Shift مع سهم التحديد)، ثم اختر فئته ودرجة خطورته.',
        'This is an attention check. Please mark no error and submit, for the question: %(question)s':
            'هذا اختبار للانتباه. من فضلك لا تحدّد أي خطأ وأرسل، للسؤال: %(question)s',
    },
    "zh": {
        'critical':
            '严重',
        'Critical error':
            '严重错误',
        'Category of the error':
            '错误类别',
        'Mark the words that contain an error: tap or click the first and then the last word of the error (in the text, the arrow keys move and Shift with an arrow extends), then choose its category and its severity.':
            '标记包含错误的词：先点按错误的第一个词，再点按最后一个词（在文本中，方向键移动，Shift 加方向键扩展），然后选择其类别和严重程度。',
        'This is an attention check. Please mark no error and submit, for the question: %(question)s':
            '这是一道注意力检查题。请不要标记任何错误并直接提交，问题是：%(question)s',
    },
}


class MQMType(TaskType):
    name = "mqm"
    model = MQM
    summary = "MQM error annotation: error spans in one output, each with a category and a severity (WMT typology)"
    marks_spans = True
    receives = ("mqm",)
    translations = TRANSLATIONS
    statistics = (
        Statistic("MQM score per system (percentile bootstrap)", True,
                  "each error's category and severity give its weight"),
        Statistic("error counts per system; span agreement", True, "the spans mark each error"),
        *base.RATING_STATISTICS, base.CONTINUOUS)

    def form_value(self, criterion: Any, form: Mapping[str, str], n_outputs: int) -> Any:
        field = f"{criterion.name}.spans"
        if field not in form:
            return base.MISSING
        try:
            return {"spans": json.loads(form[field] or "[]")}
        except json.JSONDecodeError:
            return {"spans": form[field]}

    def problem_input(self, criterion: Any, index: str | None, part: str | None) -> str:
        return f"{criterion.name}.spans"

    def problem_text(self, criterion: Any, field: str, gettext: Callable[[str], str]) -> str:
        return gettext(_("The errors marked could not be read. Please mark them again."))

    def attention_text(self, criterion: Mapping[str, Any], expected: Any, gettext: Callable[[str], str]) -> str:
        ask = gettext(_("This is an attention check. Please mark no error and submit, for the question: %(question)s"))
        return base.attention_fill(ask, criterion, None)

    def check(self, criterion: Any, value: Any, field: str, n_outputs: int, lengths: Sequence[int] | None) -> Any:
        if not isinstance(value, dict) or set(value) != {"spans"}:
            raise InvalidValue(field, f"expected {{spans}}, got {show(value)}")
        return {"spans": _spans(criterion, value["spans"], f"{field}.spans", lengths[0] if lengths else None)}

    def values_schema(self, criterion: Any) -> dict[str, Any]:
        span = {"type": "object", "required": ["start", "end", "severity", "category"], "additionalProperties": False,
                "properties": {"start": {"type": "integer", "minimum": 0}, "end": {"type": "integer", "minimum": 1},
                               "severity": {"type": "string", "enum": list(criterion.severities)},
                               "category": {"type": "string", "enum": list(criterion.categories)}}}
        return {"type": "object", "required": ["spans"], "additionalProperties": False,
                "properties": {"spans": {"type": "array", "items": span, "maxItems": criterion.max_spans}}}

    def long_rows(self, criterion: Any, value: Any, display: Sequence[str], base: dict[str, Any],
                  seq: int | None) -> list[dict[str, Any]]:
        spans = value["spans"]
        w = mqm_weights([s["category"] for s in spans], [s["severity"] for s in spans], criterion.weights)
        stored = [s | {"weight": float(x)} for s, x in zip(spans, w, strict=True)]
        return [base | {"criterion": criterion.name, "system": display[0], "system_b": "", "position": 0,
                        "value": float(mqm_value(float(w.sum()), criterion.worst)), "choice": "",
                        "spans": json.dumps(stored, ensure_ascii=False)}]

    def bounds(self, criterion: Any, logged: bool) -> tuple[float, float] | None:
        return (0.0, 100.0)

    def off_scale(self, criterion: Any, value: np.ndarray) -> tuple[np.ndarray, str]:
        return (value < 0) | (value > 100), "0..100"

    def span_penalties(self, criterion: Any, frame: pd.DataFrame) -> np.ndarray:
        return mqm_score(frame, criterion.weights)

    def penalty_label(self, criterion: Any) -> str:
        w = criterion.weights
        return (f"MQM score per output (minor {w.minor:g}, major {w.major:g}"
                + (f", critical {w.critical:g}" if "critical" in criterion.severities else "")
                + f", minor Fluency/Punctuation {w.minor_punctuation:g}, Non-translation {w.non_translation:g})")

    def scale(self, criterion: Any) -> Scale:
        return Scale(0.0, 100.0, False)  # the quality a simulated participant's errors are drawn for

    def shaped(self, criterion: Any, scores: np.ndarray) -> Any:
        return {"spans": []}

    def with_spans(self, criterion: Any, value: Any, scores: np.ndarray,
                   draw: Callable[[float], list[dict[str, Any]]]) -> Any:
        import numpy as np

        # errors drawn for the quality, each of the first category that is no non-translation
        category = next((c for c in criterion.categories if not c.lower().startswith("non-translation")),
                        criterion.categories[0])
        offered = criterion.severities
        spans = [s | {"severity": s["severity"] if s["severity"] in offered else offered[-1], "category": category}
                 for s in draw(float(np.clip(scores[0], 0.0, 100.0)))]
        return {"spans": spans}

    def check_answers(self, criterion: Any) -> tuple[Any, ...]:
        return (100.0,)  # no error marked: an attention page shows no markable output

    def check_request(self, criterion: Any, expected: Any) -> str:
        return "mark no error"

    def attention_answer(self, criterion: Any, expected: Any, shown: int) -> Any:
        return {"spans": []}

    def cheap_answer(self, criterion: Any, level: float, shown: int) -> Any:
        return {"spans": []}

    def heds_scale(self, criterion: Any) -> tuple[Any, str, str]:
        return ("continuous", "error spans marked in the output, each with a category "
                f"({len(criterion.categories)}) and a severity ({', '.join(criterion.severities)}); the MQM score "
                "sums their weights",
                "Other: marking error spans in the text, then choosing a category and a severity")
