"""A HEDS 2.0 datasheet (Shimorina & Belz, 2022) filled from the protocol, the lock and the results.

Questions are identified by their HEDS numbers (1.1-5.4; section 4 once per criterion).
What humeval knows is answered, each answer naming its ``source`` (protocol field, lock,
results); what it cannot know (the paper, languages, task type, evaluator demographics,
ethics approval, ...) is listed under ``unanswered`` with the reason, for the
researcher to complete. Question texts here are short paraphrases; the full questions
and their options are in the HEDS template (github.com/Shimorina/human-evaluation-datasheet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from humeval.protocol.models import Protocol

if TYPE_CHECKING:
    from humeval.results import CriterionResult, Results

__all__ = ["HEDS_CRITERION_QUESTIONS", "HEDS_QUESTIONS", "heds_before_collection", "heds_datasheet"]

HEDS_QUESTIONS: dict[str, str] = {
    "1.1": "Link to the paper reporting the experiment (or 'for preregistration')",
    "1.2": "Link to resources used (system outputs, tools)",
    "1.3": "Name, affiliation and email of the person completing the sheet",
    "2.1": "Type of input the evaluated systems take",
    "2.2": "Type of output the evaluated systems generate",
    "2.3": "Task the evaluated systems perform",
    "2.4": "Input language(s)",
    "2.5": "Output language(s)",
    "3.1.1": "Number of system outputs evaluated per system",
    "3.1.2": "How outputs were selected for the experiment",
    "3.1.3": "Statistical power of the sample size",
    "3.2.1": "Number of evaluators",
    "3.2.2": "Kind of evaluators",
    "3.2.3": "How evaluators were recruited (incl. exclusion/inclusion criteria)",
    "3.2.4": "Training and/or practice given to evaluators",
    "3.2.5": "Other characteristics of the evaluators",
    "3.3.1": "Has the experimental design been preregistered? Where?",
    "3.3.2": "How responses are collected",
    "3.3.3": "Quality assurance methods used",
    "3.3.4": "What evaluators see (interface)",
    "3.3.5": "How free evaluators are regarding when and how quickly to evaluate",
    "3.3.6": "Whether evaluators can ask questions / give feedback",
    "3.3.7": "Experimental conditions of the evaluation",
    "3.3.8": "The (range of) conditions, unless at a place of the evaluators' choosing",
    "5.1": "Approval by a research ethics committee",
    "5.2": "Personal data in outputs or responses (GDPR Art. 4)",
    "5.3": "Special-category information (GDPR Art. 9)",
    "5.4": "Impact assessments carried out",
}

HEDS_CRITERION_QUESTIONS: dict[str, str] = {
    "4.1.1": "Type of quality assessed (correctness, goodness, feature)",
    "4.1.2": "Aspect of outputs assessed (form, content, both)",
    "4.1.3": "Quality in its own right, relative to the input, or to an external frame of reference",
    "4.2.1": "Objective or subjective judgement",
    "4.2.2": "Absolute or relative assessment",
    "4.2.3": "Intrinsic or extrinsic evaluation",
    "4.3.1": "Name of the criterion shown to evaluators",
    "4.3.2": "Definition of the criterion shown to evaluators",
    "4.3.3": "Size of the scale or rating instrument",
    "4.3.4": "List or range of possible values",
    "4.3.5": "How the rating instrument is presented",
    "4.3.6": "Task performed when there is no rating instrument",
    "4.3.7": "Verbatim question or prompt shown to evaluators",
    "4.3.8": "Form of response elicitation",
    "4.3.9": "How raw responses are aggregated into reported scores",
    "4.3.10": "Methods for effect size and significance",
    "4.3.11": "Inter- and intra-annotator agreement: method and scores",
}

_UNKNOWN = {
    "1.1": "the paper is not part of the protocol",
    "1.2": "resource links are not part of the protocol",
    "1.3": "contact details are not part of the protocol",
    "2.1": "the input type is not declared in the protocol",
    "2.2": "the output type is not declared in the protocol",
    "2.3": "the task is not declared in the protocol",
    "2.4": "languages are not declared in the protocol",
    "2.5": "languages are not declared in the protocol",
    "3.1.3": "no power analysis is part of the protocol",
    "3.2.5": "evaluator characteristics are not collected",
    "3.3.5": "time limits per assessment are not recorded",
    "3.3.6": "whether evaluators could ask questions is not recorded",
    "5.1": "ethics approval is not recorded",
    "5.2": "personal data handling is not recorded",
    "5.3": "special-category data handling is not recorded",
    "5.4": "impact assessments are not recorded",
}

_SELECTION = {
    "random": "by an automatic random process from a larger set",
    "stratified": "by an automatic random process but using stratified sampling over given properties",
}
_PLATFORM = {
    "local": "humeval's web server (online forms served to participants)",
    "prolific": "Prolific (online crowdsourcing platform)",
    "connect": "CloudResearch Connect (online crowdsourcing platform)",
    "sona": "SONA Systems (university participant pool)",
    "panel": "an online participant panel (URL-parameter entry)",
    "files": "spreadsheets handed out to participants",
}
#: kinds whose participants work at a place of their own choosing
_REMOTE = ("prolific", "connect", "sona", "panel")


def _platform(protocol: Protocol) -> str:
    """How participants were reached: ``platform.source`` says where a ``files`` study's judgements come from."""
    source = protocol.platform.source
    if protocol.platform.kind == "files" and source:
        return f"{source} (judgements imported from files)"
    return _PLATFORM[protocol.platform.kind]


def _answer(qid: str, question: str, answer: Any, source: str) -> dict[str, Any]:
    return {"id": qid, "question": question, "answer": answer, "source": source}


def _protocol_answers(protocol: Protocol) -> dict[str, tuple[Any, str]]:
    """The study-level answers the protocol alone gives (known before collection)."""
    known: dict[str, tuple[Any, str]] = {}
    method = protocol.sampling.method
    known["3.1.2"] = (_SELECTION.get(method, f"Other: humeval sampler '{method}' (rate {protocol.sampling.rate:g}, "
                                             f"params {protocol.sampling.params})"), "protocol: sampling")
    if protocol.platform.reward > 0 or protocol.pay.hourly is not None:
        known["3.2.2"] = ("paid (further kinds not recorded)", "protocol: platform.reward, pay")
    rules = ", ".join(r.rule for r in protocol.exclusion) or "none"
    known["3.2.3"] = (f"via {_platform(protocol)}; preregistered exclusion rules: {rules}",
                      "protocol: platform, exclusion")
    if protocol.presentation.instructions:
        known["3.2.4"] = (f"instructions shown before the first task: {protocol.presentation.instructions}",
                          "protocol: presentation.instructions")
    known["3.3.2"] = (_platform(protocol), "protocol: platform.kind, platform.source")
    qa = []
    if protocol.design.attention_checks:
        qa.append("automatic quality checking methods are used during/post evaluation "
                  f"({protocol.design.attention_checks} attention checks per list)")
    if any(r.rule != "min-time" or r.scope == "participant" for r in protocol.exclusion):
        qa.append("evaluators are excluded if they fail quality checks (often or badly enough)")
    if any(r.rule == "min-time" and r.scope == "judgement" for r in protocol.exclusion):
        qa.append("some evaluations are excluded because of failed quality checks")
    known["3.3.3"] = ("; ".join(qa) or "none of the above", "protocol: design.attention_checks, exclusion")
    kinds = ", ".join(sorted({c.type for c in protocol.criteria}))
    shown = (f"{kinds} tasks ({protocol.presentation.setup} setup; input shown: {protocol.presentation.show_input}; "
             f"output order randomised: {protocol.presentation.randomise_order}); screenshots not recorded")
    known["3.3.4"] = (shown, "protocol: presentation")
    if protocol.platform.kind in _REMOTE:
        known["3.3.7"] = ("evaluation carried out by evaluators at a place of their own choosing", "protocol: platform")
        known["3.3.8"] = ("N/A (place of the evaluators' own choosing)", "protocol: platform")
    return known


def _split(known: dict[str, tuple[Any, str]], questions: dict[str, str], reasons: dict[str, str],
           default: str) -> tuple[list[dict], list[dict]]:
    answers, unanswered = [], []
    for qid, question in questions.items():
        if qid in known:
            answers.append(_answer(qid, question, *known[qid]))
        else:
            unanswered.append({"id": qid, "question": question, "reason": reasons.get(qid, default)})
    return answers, unanswered


def _study_answers(protocol: Protocol, results: Results, lock: dict[str, Any] | None,
                   exclusion: dict[str, Any] | None) -> tuple[list[dict], list[dict]]:
    known = _protocol_answers(protocol)
    items = max((c.items for c in results.criteria.values()), default=0)
    known["3.1.1"] = (items, "results: items with valid judgements")
    counts = results.counted()
    known["3.2.1"] = (counts.participants_analysed, f"results: participants analysed ({counts.participants} took part)")
    if lock:
        locked = (f"Yes: protocol locked at {lock.get('locked_at', '?')} (sha256 {lock['protocol']['sha256']}) "
                  "in .humeval/lock.json; registry not recorded")
        known["3.3.1"] = (locked, "lock")
    else:
        known["3.3.1"] = ("No (the study is not locked)", "lock")
    if exclusion:
        answer, source = known["3.3.3"]
        counted = (f"excluded: {exclusion['participants_excluded']} participants, "
                   f"{exclusion['judgements_excluded']} judgements")
        known["3.3.3"] = (counted if answer == "none of the above" else f"{answer}; {counted}", source)
    return _split(known, HEDS_QUESTIONS, _UNKNOWN, "not derivable from the protocol for this platform")


def _planned_analysis(c: Any, protocol: Protocol) -> dict[str, tuple[Any, str]]:
    plan = protocol.analysis
    if c.task.pairwise:
        agg = "win rates per pair (ties as half wins) and pairwise ranking models"
        tests = "binomial test of each pair's win rate" + (
            f"; stopping rule '{protocol.stopping.rule}' with delta {protocol.stopping.delta:g}" if protocol.stopping else "")
    else:
        agg = "mean per system" + (" of log-transformed scores" if c.task.log_scale and plan.log_magnitude else "")
        tests = {"auto": "Shapiro-Wilk decides: ANOVA and t-tests, or Kruskal-Wallis/Friedman and Wilcoxon",
                 "parametric": "ANOVA and t-tests", "nonparametric": "Kruskal-Wallis/Friedman and Wilcoxon"}[plan.tests]
        tests += f"; post hoc {plan.correction} correction"
    return {
        "4.3.9": (agg, "protocol: analysis"),
        "4.3.10": (f"{tests}; alpha {plan.alpha:g}; rankings: {', '.join(plan.rankings)}", "protocol: analysis"),
        "4.3.11": ((f"{', '.join(plan.agreement) or 'none'} (level {plan.agreement_level}); tentative above "
                    f"{plan.tentative_agreement:g}, reliable above {plan.reliable_agreement:g}"), "protocol: analysis"),
    }


def _criterion_known(c: Any) -> dict[str, tuple[Any, str]]:
    """The answers about one criterion that the protocol gives."""
    size, values, shown = c.task.heds_scale(c)
    relative = c.task.relative
    return {
        "4.2.1": ("Subjective", "protocol: criterion type (ratings and preferences)"),
        "4.2.2": ("Relative" if relative else "Absolute", f"protocol: criterion type {c.type}"),
        "4.3.1": (c.name, "protocol: criteria.name"),
        "4.3.2": (c.definition or "N/A", "protocol: criteria.definition"),
        "4.3.3": (size, "protocol: criterion scale"),
        "4.3.4": (values, "protocol: criterion scale"),
        "4.3.5": (shown, "protocol: criterion type"),
        "4.3.6": ("N/A (there is a rating instrument)", "protocol: criterion type"),
        "4.3.7": (c.question, "protocol: criteria.question"),
        "4.3.8": ("relative quality estimation (including ranking)" if relative else "direct quality estimation",
                  "protocol: criterion type"),
    }


_CRITERION_REASON = "a classification of the criterion (Belz et al. 2020) that the protocol does not record"


def _criterion_answers(c: Any, res: CriterionResult) -> tuple[list[dict], list[dict]]:
    agg = ("win rates per pair (ties as half wins) and pairwise ranking models" if c.task.pairwise else
           "mean per system" + (" of log-transformed scores" if res.transform == "log" else ""))
    methods = [res.decision]
    if res.omnibus is not None:
        methods.append(f"omnibus: {res.omnibus.method}")
    if res.posthoc and res.posthoc.test:
        methods.append(f"post hoc: {res.posthoc.test} with {res.posthoc.correction} correction")
    agreement = "; ".join(
        f"{a.method} = {a.estimate:.3f} [{a.ci_low:.3f}, {a.ci_high:.3f}] ({a.verdict})"
        if a.estimate is not None and a.ci_low is not None and a.ci_high is not None else
        f"{a.method} = {a.estimate:.3f} ({a.verdict})" if a.estimate is not None else
        f"{a.method}: undefined ({a.undefined or ''})" for a in res.agreement)
    known = _criterion_known(c) | {
        "4.3.9": (agg, "results"),
        "4.3.10": ("; ".join(m for m in methods if m), "results"),
        "4.3.11": (agreement or "not measured", "results: agreement"),
    }
    return _split(known, HEDS_CRITERION_QUESTIONS, {}, _CRITERION_REASON)


def heds_before_collection(protocol: Protocol, *, items: int, lists: int, lock: dict[str, Any],
                           registry: str = "") -> dict[str, Any]:
    """The HEDS answers known before any response: from the protocol, the design and the lock.

    ``items``: selected items (3.1.1); ``lists``: participant lists = planned participants
    (3.2.1); the analysis plan stands in for the results (4.3.9-4.3.11, marked "planned").
    """
    known = _protocol_answers(protocol)
    known["3.1.1"] = (items, "design: selected items (lists/tasks.jsonl)")
    planned = f"{lists} planned (one participant per list)"
    if protocol.stopping is not None:
        planned += f"; at most, as the stopping rule may decide earlier (delta {protocol.stopping.delta:g})"
    known["3.2.1"] = (planned, "design: lists/lists.jsonl")
    where = registry or "registry not recorded"
    locked = f"Yes: protocol locked at {lock.get('locked_at', '?')} (sha256 {lock['protocol']['sha256']}); {where}"
    known["3.3.1"] = (locked, "lock")
    answers, unanswered = _split(known, HEDS_QUESTIONS, _UNKNOWN, "not derivable from the protocol for this platform")
    criteria = {}
    for c in protocol.criteria:
        crit = _criterion_known(c) | {k: (v, f"{s} (planned)") for k, (v, s) in _planned_analysis(c, protocol).items()}
        a, u = _split(crit, HEDS_CRITERION_QUESTIONS, {}, _CRITERION_REASON)
        criteria[c.name] = {"answers": a, "unanswered": u}
    return {"answers": answers, "criteria": criteria, "unanswered": unanswered}


def heds_datasheet(protocol: Protocol, results: Results, lock: dict[str, Any] | None = None,
                   exclusion: dict[str, Any] | None = None) -> dict[str, Any]:
    """The HEDS 2.0 datasheet as a JSON-ready dict: answers with sources, and what stays unanswered."""
    answers, unanswered = _study_answers(protocol, results, lock, exclusion)
    criteria = {}
    for c in protocol.criteria:
        res = results.criteria.get(c.name)
        if res is None:
            continue
        crit_answers, crit_unanswered = _criterion_answers(c, res)
        criteria[c.name] = {"answers": crit_answers, "unanswered": crit_unanswered}
    return {
        "heds_version": "2.0",
        "reference": "Shimorina, A. & Belz, A. (2022). The Human Evaluation Datasheet. HumEval 2022, 54-75.",
        "study": protocol.study.name,
        "signature": results.signature,
        "dry_run": results.dry_run,
        "answers": answers,
        "criteria": criteria,
        "unanswered": unanswered,
    }
