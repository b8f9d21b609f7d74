"""LaTeX tables for a paper: a small Results rendered exactly as written by hand, escaping, booktabs structure."""

from __future__ import annotations

import re

from humeval.report.latex import latex_escape, latex_tables, write_latex_tables
from humeval.results import FORMAT_VERSION, Results

SIG = "humeval|protocol:0123abcd|seed:7|plan:feedbeef|version:0.1.0"


def _results() -> Results:
    def ranked(system: str, rank: int, est: float, lo: float, hi: float) -> dict:
        return {"system": system, "rank_low": rank, "rank_high": rank, "estimate": est, "ci_low": lo, "ci_high": hi,
                "p_value": None, "n": 24, "method": "mean_score"}

    return Results.from_json({"format_version": FORMAT_VERSION,
        "study": "s", "signature": SIG, "plan": {"alpha": 0.1}, "systems": ["gpt_4 & co", "base#1"],
        "criteria": {
            "fluency": {
                "type": "likert", "question": "How fluent?",
                "descriptives": [
                    {"system": "gpt_4 & co", "estimate": 4.25, "ci_low": 4.0, "ci_high": 4.5, "p_value": None,
                     "n": 72, "method": "mean", "sd": 0.5, "items": 24},
                ],
                "agreement": [
                    {"measure": "krippendorff", "estimate": 0.71234, "ci_low": 0.6, "ci_high": 0.8, "p_value": None,
                     "n": 24, "method": "krippendorff_alpha[ordinal]", "verdict": "tentative"},
                    {"measure": "icc", "estimate": None, "ci_low": None, "ci_high": None, "p_value": None, "n": 0,
                     "method": "icc", "verdict": "undefined", "undefined": "needs numbers"},
                ],
                "rankings": {"bootstrap": {"method": "paired_bootstrap", "label": "1. gpt_4 & co; 2. base#1", "systems": [
                    ranked("gpt_4 & co", 1, 4.25, 4.0, 4.5), ranked("base#1", 2, 3.0, 2.75, 3.3125)]}},
            },
            "100% ~fun": {
                "type": "likert", "question": "Fun?",
                "rankings": {"mean": {"method": "mean", "label": "", "systems": [
                    {**ranked("base#1", 1, 2.5, 2.0, 3.0), "rank_high": 2},
                    {**ranked("gpt_4 & co", 1, 2.25, 1.5, 3.0), "rank_high": 2}]}},
            },
        },
    })


EXPECTED_RANKINGS = r"""% rankings: written by humeval from results.json (the same rows as rankings.csv); needs \usepackage{booktabs}
\begin{table}[t]
  \centering
  \caption{Rankings of the systems: rank range and score with its 90\% interval.}
  \label{tab:humeval-rankings}
  \begin{tabular}{llclrcr}
    \toprule
    Criterion & Method & Rank & System & Score & 90\% CI & $n$ \\
    \midrule
    fluency & bootstrap & 1 & gpt\_4 \& co & 4.25 & [4, 4.5] & 24 \\
     & bootstrap & 2 & base\#1 & 3 & [2.75, 3.312] & 24 \\
    \midrule
    100\% \textasciitilde{}fun & mean & 1--2 & base\#1 & 2.5 & [2, 3] & 24 \\
     & mean & 1--2 & gpt\_4 \& co & 2.25 & [1.5, 3] & 24 \\
    \bottomrule
  \end{tabular}
  \par\smallskip{\footnotesize Signature: \texttt{humeval|protocol:0123abcd|seed:7|plan:feedbeef|version:0.1.0}}
\end{table}
"""


def test_rankings_table_is_the_hand_written_one():
    assert latex_tables(_results())["rankings"] == EXPECTED_RANKINGS


def test_agreement_leaves_out_measures_that_do_not_apply_and_descriptives_escape_names():
    tables = latex_tables(_results())
    assert set(tables) == {"rankings", "descriptives", "agreement"}  # no pairs: no 2afc criterion
    agreement = tables["agreement"]
    assert "    fluency & krippendorff\\_alpha[ordinal] & 0.7123 & [0.6, 0.8] & 24 & tentative \\\\" in agreement
    assert "icc" not in agreement.split("\\midrule", 1)[1]
    assert "    fluency & gpt\\_4 \\& co & 4.25 & [4, 4.5] & 0.5 & 72 & 24 \\\\" in tables["descriptives"]


def test_every_table_is_well_formed_booktabs():
    for name, tex in latex_tables(_results()).items():
        body = re.sub(r"\\[{}%&#_$]", "", tex)  # escaped characters are not braces
        assert body.count("{") == body.count("}"), name
        rules = [line.strip() for line in tex.splitlines() if line.strip() in ("\\toprule", "\\midrule", "\\bottomrule")]
        assert rules[0] == "\\toprule" and rules[1] == "\\midrule" and rules[-1] == "\\bottomrule", name
        assert "\\hline" not in tex and "|" not in tex.split("\\texttt", 1)[0].split("\n", 1)[1]  # no vertical rules
        begin = tex.index("\\begin{tabular}{") + len("\\begin{tabular}{")
        columns = len(tex[begin:tex.index("}", begin)])
        for line in tex.splitlines():
            if line.rstrip().endswith("\\\\"):
                assert line.count(" & ") == columns - 1, (name, line)
        assert tex.count("\\begin{table}") == tex.count("\\end{table}") == 1
        assert f"\\texttt{{{SIG}}}" in tex


def test_escape_every_special_character():
    assert latex_escape(r"a_b&c%d$e#f{g}h~i^j\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k")


def test_written_next_to_the_csvs(tmp_path):
    paths = write_latex_tables(_results(), tmp_path / "tables")
    assert sorted(p.name for p in paths) == ["agreement.tex", "descriptives.tex", "rankings.tex"]
    assert (tmp_path / "tables" / "rankings.tex").read_text() == EXPECTED_RANKINGS
