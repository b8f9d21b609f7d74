"""Tables for a paper: LaTeX (booktabs) renderings of the tidy tables of :meth:`humeval.results.Results.tables`.

The report stage writes ``tables/<name>.tex`` next to the tidy ``tables/<name>.csv`` that
``analyze`` writes (both from the same :meth:`~humeval.results.Results.tables`): rankings,
descriptives (mean scores), agreement and pairwise win rates. Each ``.tex`` file is one
``table`` float that needs only ``\\usepackage{booktabs}``: ``\\toprule``/``\\midrule``/
``\\bottomrule``, a rule between criteria, intervals as ``[low, high]`` at the plan's
confidence level, and the signature in a footnote under the table. System and criterion names
are escaped (``& % $ # _ { } ~ ^ \\``). The CSV carries the signature in its ``signature``
column, on every row.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from humeval.files import write_text

if TYPE_CHECKING:
    import pandas as pd

    from humeval.results import Results

__all__ = ["PAPER_TABLES", "latex_escape", "latex_table", "latex_tables", "write_latex_tables"]

_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def latex_escape(text: Any) -> str:
    """``text`` with LaTeX's special characters escaped (so a system called ``gpt_4 & co`` prints as is)."""
    return "".join(_SPECIAL.get(ch, ch) for ch in str(text))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _num(value: Any) -> str:
    """A number with 4 significant digits (``--`` when missing)."""
    if _missing(value):
        return "--"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.1e}"
    return latex_escape(value)


def _p(value: Any) -> str:
    if _missing(value):
        return "--"
    return "$<$0.001" if value < 0.001 else f"{value:.3f}"


def _ci(row: dict[str, Any]) -> str:
    lo, hi = row.get("ci_low"), row.get("ci_high")
    return "--" if _missing(lo) or _missing(hi) else f"[{_num(lo)}, {_num(hi)}]"


def _rank(row: dict[str, Any]) -> str:
    low, high = row.get("rank_low"), row.get("rank_high")
    if low is None or high is None or _missing(low) or _missing(high):
        return "--"
    lo, hi = int(low), int(high)
    return str(lo) if lo == hi else f"{lo}--{hi}"


def _text(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda row: "" if _missing(row.get(key)) else latex_escape(row[key])


def _number(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda row: _num(row.get(key))


#: name -> (caption, [(header, alignment, cell)]): the columns of each paper table, read from the tidy rows
PAPER_TABLES: dict[str, tuple[str, list[tuple[str, str, Callable[[dict[str, Any]], str]]]]] = {
    "rankings": ("Rankings of the systems: rank range and score with its {level} interval.", [
        ("Method", "l", _text("analysis")), ("Rank", "c", _rank), ("System", "l", _text("system")),
        ("Score", "r", _number("estimate")), ("{level} CI", "c", _ci), ("$n$", "r", _number("n"))]),
    "descriptives": ("Mean score per system with its {level} interval.", [
        ("System", "l", _text("system")), ("Mean", "r", _number("estimate")), ("{level} CI", "c", _ci),
        ("SD", "r", _number("sd")), ("$n$", "r", _number("n")), ("Items", "r", _number("items"))]),
    "agreement": ("Agreement between participants with its {level} interval.", [
        ("Measure", "l", _text("method")), ("Estimate", "r", _number("estimate")), ("{level} CI", "c", _ci),
        ("$n$", "r", _number("n")), ("Verdict", "l", _text("verdict"))]),
    "pairs": ("Pairwise comparisons: wins, win rate of the first system with its {level} interval, sign test.", [
        ("A", "l", _text("a")), ("B", "l", _text("b")), ("Wins A", "r", _number("wins_a")),
        ("Wins B", "r", _number("wins_b")), ("Ties", "r", _number("ties")), ("Win rate A", "r", _number("estimate")),
        ("{level} CI", "c", _ci), ("$p$", "r", lambda row: _p(row.get("p_value"))), ("$n$", "r", _number("n"))]),
}


def latex_table(name: str, rows: list[dict[str, Any]], signature: str, *, level: str = "95\\%",
                label_prefix: str = "humeval") -> str:
    """One booktabs ``table`` of the tidy rows of table ``name`` (see :data:`PAPER_TABLES`), grouped by criterion,
    with ``signature`` in a footnote under the table."""
    caption, columns = PAPER_TABLES[name]
    heads = ["Criterion", *(h.format(level=level) for h, _, _ in columns)]
    align = "l" + "".join(a for _, a, _ in columns)
    lines = [
        f"% {name}: written by humeval from results.json (the same rows as {name}.csv); needs \\usepackage{{booktabs}}",
        "\\begin{table}[t]",
        "  \\centering",
        f"  \\caption{{{caption.format(level=level)}}}",
        f"  \\label{{tab:{label_prefix}-{name}}}",
        f"  \\begin{{tabular}}{{{align}}}",
        "    \\toprule",
        "    " + " & ".join(heads) + " \\\\",
        "    \\midrule",
    ]
    previous = None
    for row in rows:
        criterion = row.get("criterion", "")
        if previous is not None and criterion != previous:
            lines.append("    \\midrule")
        first = latex_escape(criterion) if criterion != previous else ""
        lines.append("    " + " & ".join([first, *(cell(row) for _, _, cell in columns)]) + " \\\\")
        previous = criterion
    lines += [
        "    \\bottomrule",
        "  \\end{tabular}",
        f"  \\par\\smallskip{{\\footnotesize Signature: \\texttt{{{latex_escape(signature)}}}}}",
        "\\end{table}",
        "",
    ]
    return "\n".join(lines)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if _missing(v) else v) for k, v in r.items()} for r in frame.to_dict(orient="records")]


def latex_tables(results: Results) -> dict[str, str]:
    """``{name: LaTeX}`` for every non-empty paper table of ``results`` (from :meth:`Results.tables`)."""
    level = f"{100 * (1 - results.alpha):g}\\%"
    out = {}
    for name, frame in results.tables().items():
        if name in PAPER_TABLES and not frame.empty:
            rows = _records(frame)
            if name == "agreement":  # a measure that does not apply (the ICC of choices) is no row of a paper
                rows = [r for r in rows if r.get("estimate") is not None]
            if rows:
                out[name] = latex_table(name, rows, results.signature, level=level)
    return out


def write_latex_tables(results: Results, tables_dir: Path) -> list[Path]:
    """Write ``tables_dir/<name>.tex`` for every paper table of ``results``; returns the paths written."""
    return [write_text(tables_dir / f"{name}.tex", text) for name, text in latex_tables(results).items()]
