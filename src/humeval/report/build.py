"""Assemble the report from the protocol and the back half's outputs (no statistics computed here)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from humeval.analysis.decisions import DECIDED
from humeval.analysis.drift import drift_text, population_text
from humeval.analysis.status import caveats
from humeval.protocol.models import Protocol
from humeval.report.document import Example, Figure, Report, Section, Table, fmt
from humeval.report.figures import (
    board_figure,
    decision_bound_figure,
    distribution_figure,
    goal_timeline_figure,
    ranking_figure,
    winrate_heatmap,
)
from humeval.tasks import TASK_TYPES

if TYPE_CHECKING:
    from humeval.results import (
        ArenaBoardResult,
        CriterionResult,
        DriftCheck,
        JudgeResult,
        Leaderboard,
        RankingResult,
        Record,
        Results,
        Stopping,
    )

__all__ = ["build_report"]

_EST = ["estimate", "ci_low", "ci_high", "p_value", "n"]


def _summary(protocol: Protocol, results: Results, design: dict[str, Any]) -> Section:
    c = results.counted()
    paras = [protocol.study.description] if protocol.study.description else []
    paras.append(f"Systems: {', '.join(results.systems)}. Criteria: "
                 + ", ".join(f"{k} ({v.type})" for k, v in results.criteria.items()) + ".")
    # the vocabulary of docs/data-model.md: an answer is one row of judgements.jsonl (one question of a task)
    paras.append(f"{c.judgements} answers from {c.participants} participants (an answer is one question of a task "
                 f"answered: one output's score on one criterion, or one choice). Left out: {c.excluded} answers by "
                 f"the preregistered exclusion rules, {c.invalid} malformed answers, {c.attention_or_repeat} answers "
                 f"to attention checks or repeated tasks. Analysed: {c.analysed} answers from "
                 f"{c.participants_analysed} participants.")
    rows = [[k, v] for k, v in design.items()]
    return Section("Study", paras, [Table("Design", ["setting", "value"], rows)])


def _outcome_words(d: Stopping) -> str:
    """What a stopping rule's replayed decision came to, in words."""
    if not d.pairwise:
        what = {"best": "the best system", "top-k": f"the top {d.top}", "ranking": "the ranking"}[d.goal or ""]
        if d.outcome == "decided":
            return f"identified {what}, {', '.join(d.decision)}, after n = {d.n} judgements"
        if d.outcome == "horizon":
            return f"reached its horizon of {d.horizon} judgements without identifying {what}"
        if not d.reachable:
            return (f"cannot identify {what}: after n = {d.n} judgements the pairs resolved directly admit no "
                    "answer (intransitive preferences)")
        return f"has not identified {what} after n = {d.n} judgements ({len(d.contention)} systems in contention)"
    if d.outcome in ("A", "B"):
        return f"decided for {d.decision} after n = {d.n} decisive judgements"
    if d.outcome == "horizon":
        return f"reached its horizon of {d.horizon} outcomes without a decision"
    return f"has not decided after n = {d.n} decisive judgements"


def _compared(d: Stopping) -> str:
    return f"{d.a} vs {d.b}" if d.pairwise else f"goal {d.goal}"


def _decision_text(d: Stopping) -> str:
    """One stopping decision in words, with the judgements it used against the fixed design."""
    text = f"{d.criterion} ({_compared(d)}): the {d.rule} rule (delta {d.delta:g}) {_outcome_words(d)}"
    if d.fixed_design and d.saved is not None:
        text += (f"; {d.collected} judgements used where the fixed design takes {d.fixed_design} "
                 f"({d.saved} saved, {100 * d.saved / d.fixed_design:.0f}%)")
    elif d.fixed_design:
        text += f"; {d.collected} judgements collected of the fixed design's {d.fixed_design}"
    return text + _places_text(d) + "." + _whose_text(d)


def _whose_text(d: Stopping) -> str:
    """Whose preference the decision is about, and the drift check's reading of it (empty for goals)."""
    text = ""
    if d.population is not None:
        text += f" It is about the preference of {population_text(d.population)}, in the order they arrived."
    if d.drift is not None:
        text += f" {_drift_words(d.drift, d.a, brief=True)}."
    return text


def _drift_words(drift: DriftCheck, system_a: str | None, *, brief: bool = False) -> str:
    """The drift check's sentence; a flag opens with DRIFT, as the banner does."""
    text = drift_text(drift, system_a, brief=brief)
    return f"DRIFT: {text}" if drift.flagged else text


def _places_text(d: Stopping) -> str:
    """Places (sessions paid) against the fixed design's: what the money follows."""
    if d.places is None or not d.fixed_places:
        return ""
    return (f"; {d.places} places (participants who judged it) where the fixed design pays "
            f"{d.fixed_places} ({d.fixed_places - d.places} saved)")


#: what the report prints where a method gave no interval at this n (``no_interval`` in the record says why)
NOT_ENOUGH = "not enough data"


def _interval(record: Record) -> str:
    est, lo, hi = record.estimate, record.ci_low, record.ci_high
    if est is None:
        return "–"
    if lo is not None and hi is not None:
        return f"{fmt(est)} [{fmt(lo)}, {fmt(hi)}]"
    return fmt(est) + (f" [interval: {NOT_ENOUGH}]" if record.no_interval else "")


def _ranks(rk: RankingResult) -> tuple[tuple[str, int, int], ...]:
    return tuple(sorted((r.system, r.rank_low, r.rank_high) for r in rk.systems))


def _without_intervals(rk: RankingResult) -> str | None:
    """Why a computed ranking is no key result: none of its systems has an interval and its rank ranges separate
    nothing, so all it holds are bare point estimates (Bradley-Terry under near-perfect separation: 1338 vs 662 from
    one tie); ``None`` when some system has an interval, when its ranks separate systems (the paired bootstrap's
    come from its tests, not from the intervals), or when the ranking was not computed."""
    k = len(rk.systems)
    if rk.undefined or not k or any(r.ci_low is not None and r.ci_high is not None for r in rk.systems) \
            or any((r.rank_low, r.rank_high) != (1, k) for r in rk.systems):
        return None
    return next((r.no_interval for r in rk.systems if r.no_interval), "no interval was computed")


def _rankings_agreement(name: str, res: CriterionResult) -> str | None:
    """Whether the plan's rankings of a criterion agree (the same rank range for every system), in words;
    ``None`` when the plan has one ranking. A ranking that is no key result (:func:`_without_intervals`) is left
    out of the comparison."""
    planned = {m: rk for m, rk in res.rankings.items() if not rk.not_applicable}
    if len(planned) < 2:
        return None
    done = {m: rk for m, rk in planned.items() if not rk.undefined and rk.systems and _without_intervals(rk) is None}
    missing = [f"{m} not computed ({rk.undefined or 'no systems'})" if rk.undefined or not rk.systems
               else f"{m} left out (no interval)" for m, rk in planned.items() if m not in done]
    tail = ("; " + "; ".join(missing)) if missing else ""
    if len(done) < 2:
        return f"Rankings of {name}: " + "; ".join([f"{m}: {rk.label}" for m, rk in done.items()] + missing) + "."
    if len({_ranks(rk) for rk in done.values()}) == 1:
        return f"Rankings of {name}: the {len(done)} planned methods ({', '.join(done)}) agree: " \
               f"{next(iter(done.values())).label}{tail}."
    ahead = [{(a, b) for a, _, a_hi in _ranks(rk) for b, b_lo, _ in _ranks(rk) if a_hi < b_lo}
             for rk in done.values()]  # (a, b): a is ranked strictly above b by that method
    opposite = any((b, a) in other for one in ahead for other in ahead for a, b in one)
    verdict = ("CONTRADICT each other (one ranks a system above another that a second ranks above it)" if opposite
               else "differ in which systems they can separate (no method contradicts another)")
    return (f"Rankings of {name}: the planned methods {verdict}: "
            + "; ".join(f"{m}: {rk.label}" for m, rk in done.items()) + tail + ".")


def _key_results(results: Results) -> Section:
    """The answer first: decisions (with judgements used against the fixed design), agreement and every
    planned ranking of each criterion with its intervals, and whether the rankings agree; the sections below
    give every detail. A ranking in which no system has an interval and no rank range separates systems is not
    listed (:func:`_without_intervals`): a paragraph says why, and where its battles come from, instead of scores
    that read as a confident result."""
    level = f"{100 * (1 - results.alpha):.0f}%"
    paras = [f"Decision: {_decision_text(res.stopping)}" for res in results.criteria.values() if res.stopping]
    agree, ranks = [], []
    for name, res in results.criteria.items():
        for a in res.agreement:
            if a.estimate is not None:
                agree.append([name, a.method, _interval(a), a.n, a.verdict])
        for method, rk in res.rankings.items():
            if (why := _without_intervals(rk)) is not None:
                source = rk.extra.get("battles_from")
                paras.append(f"Ranking of {name} by {method}: not a key result, no interval: {why}"
                             + (f" (battles {source})" if source else "") + ".")
            elif not rk.undefined and rk.systems:
                ranks += [[name, method, f"{r.rank_low}-{r.rank_high}", r.system, _interval(r), r.n]
                          for r in rk.systems]
        if (agreement := _rankings_agreement(name, res)) is not None:
            paras.append(agreement)
    if not paras and not agree and not ranks:
        paras.append("No result: see the sections below.")
    tables = []
    if agree:
        tables.append(Table(f"Agreement (estimate [{level} interval])", ["criterion", "measure", "estimate", "n",
                                                                           "verdict"], agree, results.signature))
    if ranks:
        tables.append(Table(f"Rankings (rank range; score [{level} interval])",
                            ["criterion", "method", "rank", "system", "score", "n"], ranks, results.signature))
    return Section("Key results", paras, tables)


def _collation(collation: dict[str, Any] | None) -> Section:
    if collation is None:
        return Section("Collation", ["Not run (no collation.json)."])
    verdict = "complete" if collation["complete"] else (
        f"INCOMPLETE: {collation['judgements_missing']} judgements missing in {collation['tasks_incomplete']} "
        "tasks; a re-run file was written to rerun/")
    rows = [[k, collation[k]] for k in ("required_per_task", "tasks", "tasks_complete", "tasks_decided",
                                         "tasks_incomplete", "judgements_missing", "invalid_rows",
                                         "unknown_task_rows") if k in collation]
    paras = [f"Collation: {verdict}."]
    if collation.get("tasks_decided"):
        paras.append(f"{collation['tasks_decided']} pair tasks are complete by design: the stopping rule decided their "
                     "comparison, so they need no further judgements and are never re-run (see Dynamic stopping).")
    return Section("Collation", paras, [Table("", ["check", "value"], rows)])


def _stopping(results: Results) -> Section | None:
    """The stopping rule's decisions, stated in words and a table (not only in a figure caption)."""
    decisions = [res.stopping for res in results.criteria.values() if res.stopping]
    if not decisions:
        return None
    paras = [_stopping_text(d) for d in decisions]
    rows = [[d.criterion, _compared(d) if d.pairwise else f"goal {d.goal} over {', '.join(d.systems)}", d.rule,
             d.delta, d.anytime_valid, d.decision if not isinstance(d.decision, list) else ", ".join(d.decision),
             d.n, d.collected, d.fixed_design, d.saved, d.live_n, *_population_cells(d)] for d in decisions]
    table = Table("Decisions of the stopping rule (replayed on the valid judgements in the live rule's order)",
                  ["criterion", "comparison", "rule", "delta", "anytime-valid", "decision", "n", "judgements",
                   "fixed design", "saved", "live n", "participants", "first judgement (UTC)",
                   "last judgement (UTC)", "drift check"], rows, results.signature)
    return Section("Dynamic stopping", paras, [table])


def _population_cells(d: Stopping) -> list[Any]:
    """participants, first and last judgement used, the drift check's verdict (p), for the decisions table."""
    p, drift = d.population, d.drift
    cells: list[Any] = [None, None, None] if p is None else [p.participants, p.first, p.last]
    if drift is None:
        verdict = "–"
    elif drift.wave is not None:
        w = drift.wave
        sign = "=" if w.p_bound == "exact" else "<=" if w.p_bound == "at most" else ">="
        state = "FLAGGED" if w.flagged else ("no change" if w.settled else "open")
        verdict = f"wave: {state} ({w.wins}/{w.n} for {w.side}, w = {w.size}, p {sign} {w.p_value:.2g})"
    elif drift.undefined or drift.p_value is None:
        verdict = "not computed"
    else:
        verdict = f"{'FLAGGED' if drift.flagged else 'no change'} (p = {drift.p_value:.2g})"
    return [*cells, verdict]


def _stopping_text(d: Stopping) -> str:
    """One decision of the stopping rule with its guarantee, its cost and the live rule beside it."""
    among = "" if d.population is None else \
        f", about the preference among {population_text(d.population)}, in the order they arrived"
    guarantee = (f"anytime-valid: the probability that it ever decides wrongly is at most {d.delta:g}{among}"
                 if d.anytime_valid else f"not anytime-valid: delta {d.delta:g} holds only for a fixed n")
    compared = _compared(d) if d.pairwise else f"goal {d.goal} over {', '.join(d.systems)}"
    text = f"{d.criterion} ({compared}): the {d.rule} rule ({guarantee}) {_outcome_words(d)}."
    if d.fixed_design and d.saved is not None:
        text += (f" It used {d.collected} judgements of this comparison where the fixed design would have "
                 f"collected {d.fixed_design}: {d.saved} saved ({100 * d.saved / d.fixed_design:.0f}%)"
                 f"{_places_text(d)}.")
    if d.live_n is not None:
        live = (f"The live rule stopped at n = {d.live_n}" if d.outcome in DECIDED
                else f"The live rule was fed n = {d.live_n} outcomes and had not decided")
        text += (f" {live}; the replay on the exported, excluded judgements "
                 + ("agrees." if d.agrees_with_live else f"reaches n = {d.n}: THEY DISAGREE."))
    if d.drift is not None:
        text += f" {_drift_words(d.drift, d.a)}" + (
            "; this qualifies the decision and does not change it." if d.drift.flagged else ".")
    if d.intransitive:
        text += f" {d.intransitive}."
    return text


def _practice(counts: dict[str, Any]) -> tuple[str, Table]:
    """The practice items' paragraph and table (``exclusion.json``'s ``practice``)."""
    judged = [i for i in counts["items"] if i["right"] is not None]
    right, answered = sum(i["right"] for i in judged), sum(i["answered"] for i in judged)
    text = (f"Practice ({len(counts['items'])} item(s) first in every list, with feedback; judged by no rule and not "
            f"analysed): {counts['participants']} participants answered practice items"
            + (f"; {right} of {answered} answers to the items that name an answer were right." if judged else
               "; no item names an answer (the feedback showed the explanation only)."))
    rows = [[i["item"], i["criterion"], "" if i["expected"] is None else i["expected"], i["answered"],
             "" if i["right"] is None else i["right"]] for i in counts["items"]]
    return text, Table("Practice items", ["item", "criterion", "answer expected", "answered", "right"], rows)


def _exclusion(exclusion: dict[str, Any] | None, protocol: Protocol) -> Section:
    if exclusion is None:
        return Section("Exclusion", ["Not run (no exclusion.json)."])
    section = _excluded(exclusion, protocol)
    if (practice := exclusion.get("practice")) is not None:
        text, table = _practice(practice)
        section.paragraphs.append(text)
        section.tables.append(table)
    return section


def _excluded(exclusion: dict[str, Any], protocol: Protocol) -> Section:
    if not protocol.exclusion:
        return Section("Exclusion", ["The protocol declares no exclusion rules; nothing was excluded."])
    rows = [[r["rule"], ", ".join(f"{k}={v}" for k, v in r["parameters"].items()), r["participants"],
             r.get("only", ""), r["judgements"]] for r in exclusion["rules"]]
    text = (f"Preregistered rules only. {exclusion['participants_excluded']} of {exclusion['participants_total']} "
            f"participants and {exclusion['judgements_excluded']} of {exclusion['judgements_total']} answers "
            "excluded (one participant can be excluded by several rules; 'by this rule only': by no other). "
            "No data were deleted: see excluded.jsonl.")
    tables = [Table("", ["rule", "parameters", "participants", "by this rule only", "answers"], rows)]
    checks = exclusion.get("attention_checks") or []
    paragraphs = [text]
    if checks:
        failed, answered = sum(c["failed"] for c in checks), sum(c["answered"] for c in checks)
        paragraphs.append(f"Attention checks: {failed} of {answered} answered other than they asked, by the answer "
                          "each asked for (the side of a pair: A the output shown first, B the second; a scale's "
                          "point), over every participant.")
        tables.append(Table("Attention checks failed, by the answer asked for",
                            ["criterion", "answer asked", "answered", "failed"],
                            [[c["criterion"], c["expected"], c["answered"], c["failed"]] for c in checks]))
    if (q := exclusion.get("qualification")) is not None:
        attempts = protocol.design.qualification_attempts
        paragraphs.append(
            f"Qualification (the first {protocol.design.qualification} attention check(s) of every list, "
            f"{attempts} attempt(s) at each): {q['participants']} participants answered it; {q['passed']} passed "
            f"({q['passed_retried']} of them with a second attempt at a check), {q['failed']} failed; {q['retried']} "
            "answered a check again.")
    return Section("Exclusion", paragraphs, tables)


def _est(record: Record) -> list[Any]:
    """estimate, ci_low, ci_high, p, n; "not enough data" in place of the interval a method could not give."""
    row = [record.estimate, record.ci_low, record.ci_high, record.p_value, record.n]
    if record.no_interval and row[0] is not None and row[1] is None and row[2] is None:
        row[1], row[2] = NOT_ENOUGH, ""
    return row


def _criterion(name: str, res: CriterionResult, sig: str) -> Section:
    """One criterion: scores, errors, pairs, significance, agreement, rankings, leaderboard, judges, figures."""
    s = Section(f"Criterion: {name} ({res.type})", [f"Question: {res.question}"], level=2)
    if res.undefined:
        s.paragraphs.append(f"Not analysed: {res.undefined}.")
        return s
    if res.transform:
        s.paragraphs.append("Scores are log-transformed before averaging, tests and agreement (analysis.log_magnitude).")
    for part in (_descriptives, _errors, _span_agreement, _sign_tests, _significance, _agreement, _rankings):
        part(res, s, sig)
    if res.leaderboard:
        _leaderboard(res.leaderboard, s, sig)
    if res.arena_board:
        _arena_board(res.arena_board, s, sig)
    for judge, jr in res.judges.items():
        _judge_tables(judge, jr, s, sig)
    _figures(name, res, s)
    return s


def _descriptives(res: CriterionResult, s: Section, sig: str) -> None:
    if not res.descriptives:
        return
    rows = [[d.system, *_est(d), d.sd, d.median, d.items] for d in res.descriptives]
    methods = {d.method for d in res.descriptives}
    how = ("BCa bootstrap interval over items, which stays on the scale" if "mean_t_interval" not in methods
           else "t interval")
    s.tables.append(Table(f"Scores per system (mean with {how})",
                          ["system", "mean", "ci_low", "ci_high", "p", "n", "sd", "median", "items"], rows, sig))
    fallback = [d.system for d in res.descriptives if d.method.startswith("mean, percentile")]
    if fallback:
        s.paragraphs.append(
            f"For {', '.join(fallback)} every resampled mean fell on one side of the observed mean, so the "
            "bias correction is undefined and the plain percentile interval is shown.")


def _errors(res: CriterionResult, s: Section, sig: str) -> None:
    if not res.errors:
        return
    rows = [[e.system, e.measure, *_est(e), e.outputs_with_errors] for e in res.errors]
    s.tables.append(Table("Errors per system (error spans per output, mean with percentile bootstrap interval; "
                          "fewer is better)", ["system", "measure", "mean", "ci_low", "ci_high", "p", "n",
                                               "outputs with errors"], rows, sig))


def _span_agreement(res: CriterionResult, s: Section, sig: str) -> None:
    a = res.span_agreement
    if a is None:
        return
    if a.estimate is None:
        s.paragraphs.append(f"Span agreement: not computed ({a.undefined or 'no pairs'}).")
        return
    sev = a.severity_agreement
    s.paragraphs.append(
        f"Span agreement (pairwise F1 of the characters two participants marked as errors, over "
        f"{a.n} pairs of judgements of {a.outputs} outputs; {a.n_both_clean} pairs where "
        f"neither marked an error are left out): {_interval(a)}"
        + (f"; both gave the same severity to {100 * sev:.0f}% of the characters both marked." if sev is not None else "."))


def _sign_tests(res: CriterionResult, s: Section, sig: str) -> None:
    if not TASK_TYPES.get(res.type).pairwise:
        return
    rows = [[p.a, p.b, p.wins_a, p.wins_b, p.ties, *_est(p)] for p in res.pairs]
    s.tables.append(Table(f"Win rates and sign tests ({res.decision})",
                          ["a", "b", "wins a", "wins b", "ties", "win rate a", "ci_low", "ci_high", "p", "n"],
                          rows, sig))


def _significance(res: CriterionResult, s: Section, sig: str) -> None:
    """The test family, normality, omnibus and post hoc tests."""
    s.paragraphs.append(f"Test family: {res.decision}.")
    tests = [["normality", t.system, t.method, *_est(t), t.undefined or ""]
             for t in (res.normality.tests if res.normality else ())]
    if res.omnibus is not None:
        o = res.omnibus
        tests.append(["omnibus", "all", o.method, *_est(o), o.undefined or ""])
    ph = res.posthoc
    tests += [["post hoc", f"{p.a} vs {p.b}", p.method, *_est(p), p.undefined or ""] for p in (ph.pairs if ph else ())]
    if tests:
        s.tables.append(Table("Significance (post hoc p-values corrected: " + str((ph and ph.correction) or "–") + ")",
                              ["step", "systems", "method", "estimate", "ci_low", "ci_high", "p", "n", "note"],
                              tests, sig))
    if ph and ph.skipped:
        s.paragraphs.append(f"Post hoc tests {ph.skipped}.")
    elif ph and ph.unit:
        s.paragraphs.append(f"Post hoc tests ({ph.test}) on {ph.unit}.")


def _agreement(res: CriterionResult, s: Section, sig: str) -> None:
    agree = [[a.measure, a.method, *_est(a), a.verdict, a.undefined or ""] for a in res.agreement]
    if agree:
        s.tables.append(Table("Agreement (tentative >= 0.667, reliable >= 0.8 by default; see the plan)",
                              ["measure", "method", "estimate", "ci_low", "ci_high", "p", "n", "verdict", "note"],
                              agree, sig))


def _rankings(res: CriterionResult, s: Section, sig: str) -> None:
    for method, rk in res.rankings.items():
        if rk.undefined:
            s.paragraphs.append(f"Ranking '{method}' not computed: {rk.undefined}")
            continue
        rows = [[r.system, f"{r.rank_low}-{r.rank_high}", *_est(r)] for r in rk.systems]
        s.tables.append(Table(f"Ranking: {method} ({rk.label})",
                              ["system", "rank", "score", "ci_low", "ci_high", "p", "n"], rows, sig))
        if coefficients := rk.extra.get("coefficients"):
            level = f"{100 * float(rk.extra.get('ci_level', 0.95)):.0f}%"
            s.paragraphs.append(
                f"Style control ({method}): Bradley-Terry on {rk.extra.get('n_decisive')} decisive votes with the "
                "style of the two outputs as covariates (normalised differences of length in "
                f"{rk.extra.get('length_unit', 'characters')} and Markdown headers, list items and bold, "
                f"standardised); log-odds per standard deviation [{level} interval]: "
                + ", ".join(f"{name} {c['estimate']:+.3f} [{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]"
                            for name, c in coefficients.items())
                + (f"; dropped (constant): {', '.join(rk.extra['dropped'])}" if rk.extra.get("dropped") else "")
                + ". Compare its ranking with the plain Bradley-Terry one: a system that moves down won partly by "
                  "style.")


def _arena_board(ab: ArenaBoardResult, s: Section, sig: str) -> None:
    """A pairwise criterion's leaderboard over K >= 3 systems: scores, intervals, pooled rank sets, decision."""
    rows = [[r.system, r.score, r.ci_low, r.ci_high, f"{r.rank_low}-{r.rank_high}", r.won, r.lost, r.ties]
            for r in ab.rows]
    basis = ("the pooled anytime-valid statements (direct duels and virtual duels through common opponents) and the "
             "direct ones" if ab.basis == "pooled" else
             "the direct statements only (the Bradley-Terry fit check rejected: pooled statements withdrawn)")
    s.tables.append(Table(f"Leaderboard (Davidson scores, {ab.interval_method}; rank sets valid together with "
                          f"probability >= {1 - ab.delta:g})",
                          ["system", "score", "ci_low", "ci_high", "rank set", "won", "lost", "ties"], rows, sig))
    decision = f"decided: {', '.join(ab.answer)}" if ab.answer else "undecided"
    s.paragraphs.append(
        f"Leaderboard: {decision} (question {ab.goal}). Rank sets from {basis}, on the first {ab.fed} votes in "
        f"batches of {ab.batch} in the order they were submitted ({ab.pending} votes of an incomplete last batch "
        f"left out). {ab.reason}."
        + (" The scores add half a win each way to every pair (the maximum-likelihood fit does not exist)."
           if ab.ridge else ""))


def _leaderboard(lb: Leaderboard, s: Section, sig: str) -> None:
    """The goal's leaderboard: Bradley-Terry ratings, anytime-valid intervals and rank sets, contention, cost."""
    rows = [[r.system, f"{r.rank_low}-{r.rank_high}", "yes" if r.in_contention else "no", r.rating,
             r.ci_low, r.ci_high, r.vs_leader_low, r.vs_leader_high, r.judgements] for r in lb.rows]
    s.tables.append(Table(f"Leaderboard (goal {lb.goal}): rank sets and intervals vs the leader {lb.leader} are "
                          f"{lb.interval_method}; ratings are {lb.rating_method}",
                          ["system", "rank set", "in contention", "rating", "ci_low", "ci_high",
                           "strength - leader (low)", "(high)", "judgements"], rows, sig))
    cost = lb.cost
    if cost.uniform_expected is not None:
        s.paragraphs.append(
            f"The goal used {cost.spent} judgements. Uniform pair sampling (every pair equally often) with the same "
            f"tests would need about {cost.uniform_expected:,.0f} (decided within {cost.horizon:,} judgements in "
            f"{100 * (cost.uniform_decided_share or 0):.0f}% of {cost.runs} simulated studies; adaptive pair choice "
            f"{cost.adaptive_expected:,.0f}), {cost.method}.")


def _judge_tables(judge: str, jr: JudgeResult, s: Section, sig: str) -> None:
    """Human-only and prediction-powered estimates side by side, and the judge's calibration."""
    def num(value: Any) -> Any:
        return round(value, 1) if isinstance(value, float) else value

    rows = [[e.about, e.human_only, e.human_ci_low, e.human_ci_high, *_est(e)[:3], e.n_labelled, e.n_unlabelled,
             num(e.effective_n), e.lam, e.undefined or ""] for e in jr.estimates]
    s.tables.append(Table(f"Automatic judges: {judge} ({jr.kind}); human-only beside prediction-powered",
                          ["about", "human only", "ci_low", "ci_high", "prediction-powered", "ci_low", "ci_high",
                           "labelled", "unlabelled", "effective n", "lambda", "note"], rows, sig))
    cal = [[c.about, *_est(c)[:3], c.n, c.bias, c.agreement_share, c.undefined or ""] for c in jr.calibration]
    s.tables.append(Table(f"Judge calibration: {judge} against the human scores of the labelled items",
                          ["about", "pearson r", "ci_low", "ci_high", "items", "bias (judge - human)",
                           "same preference", "note"], cal, sig))
    s.paragraphs.append(f"Judge {judge}: the prediction-powered estimates assume {jr.assumption}; "
                        "'effective n' is how many human labels the human-only estimate would need for the "
                        "same interval width.")


def _figures(name: str, res: CriterionResult, s: Section) -> None:
    if res.distribution:
        s.figures.append(Figure(f"{name}-distribution", distribution_figure(res.distribution, f"{name}: responses"),
                                f"{name}: distribution of responses per system"))
    for method, rk in res.rankings.items():
        if rk.systems:
            s.figures.append(Figure(f"{name}-ranking-{method}",
                                    ranking_figure([r.to_json() for r in rk.systems], f"{name}: {method}", "score"),
                                    f"{name}: ranking by {method} with confidence intervals"))
    if res.arena_board and res.arena_board.rows:
        s.figures.append(Figure(f"{name}-leaderboard",
                                board_figure([r.to_json() for r in res.arena_board.rows], f"{name}: leaderboard"),
                                f"{name}: Davidson score per system with its {res.arena_board.interval_method} "
                                f"interval; beside each name its anytime-valid rank set"))
    if res.win_rates:
        s.figures.append(Figure(f"{name}-win-rates", winrate_heatmap(res.win_rates, f"{name}: win rates"),
                                f"{name}: win rate of the row system over the column system (ties count half)"))
    st = res.stopping
    if res.leaderboard and st:
        s.figures.append(Figure(f"{name}-decisions-over-time", goal_timeline_figure(st.to_json(), f"{name}: goal {st.goal}"),
                                f"{name}: systems in contention after each judgement fed to the goal rule "
                                f"(delta {st.delta:g}); decision: {st.decision} at n = {st.n}"))
    if st and st.path:
        s.figures.append(Figure(f"{name}-decision-bound", decision_bound_figure(st.to_json(), f"{name}: {st.rule} rule"),
                                f"{name}: win rate of {st.a} over {st.b} after each decisive judgement, with "
                                f"the win rates at which the {st.rule} rule (delta {st.delta:g}) decides; "
                                f"decision: {st.decision} at n = {st.n}"))


def build_report(
    protocol: Protocol,
    results: Results,
    *,
    design: dict[str, Any],
    collation: dict[str, Any] | None,
    exclusion: dict[str, Any] | None,
    posthoc: list[Results] | None = None,
    examples: list[Example] | None = None,
) -> Report:
    """The whole report: key results, study and design, dynamic stopping, collation, exclusion, one section per
    criterion, post hoc."""
    sig = results.signature
    banners = []
    if results.dry_run == "rehearsal-crowd":
        banners.append("SIMULATED PARTICIPANTS ('rehearsal-crowd': capability, position bias, spammers) through the "
                       "real server: these numbers show the pipeline at work and say nothing about the systems.")
    elif results.dry_run == "pilot":
        banners.append("PILOT: the judgements of a pilot's store (`humeval pilot`), read apart from the study: they "
                       "check the study's path and time, and are not the study's data.")
    elif results.dry_run:
        banners.append(f"DRY RUN with '{results.dry_run}' dummy responses: these numbers rehearse the pipeline and "
                       "say nothing about the systems.")
    banners += caveats(results, collation)
    sections = [_key_results(results), _summary(protocol, results, design), _collation(collation),
                _exclusion(exclusion, protocol)]
    if (stopping := _stopping(results)) is not None:
        sections.insert(2, stopping)
    sections += [_criterion(name, res, sig) for name, res in results.criteria.items()]
    if examples:
        sections.append(Section("Examples", [f"The first {len(examples)} selected item(s) as participants saw them "
                                             "(system names are shown here, never to participants)."],
                                examples=examples))
    for ph in posthoc or []:
        note = ("Post hoc analysis, run after the preregistered plan and not part of it; it does not change the "
                "preregistered results above.")
        sec = Section(f"POST HOC: {ph.post_hoc}", [note], level=2)
        for name, res in ph.criteria.items():
            sub = _criterion(name, res, ph.signature)
            sec.paragraphs += sub.paragraphs
            sec.tables += sub.tables
        for corr in ph.correlations or ():
            sec.tables.append(Table("Correlations between criteria (per-output mean scores)",
                                    ["a", "b", "method", *_EST], [[c.a, c.b, c.method, *_est(c)]
                                                                  for c in corr.pairs], ph.signature))
        sections.append(sec)
    title = f"{protocol.study.name}: human evaluation report" + (
        " (pilot)" if results.dry_run == "pilot" else f" (dry run: {results.dry_run})" if results.dry_run else "")
    return Report(title, sig, banners, sections)
