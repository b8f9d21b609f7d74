"""A preregistration from the lock: ``humeval prereg``.

Written before any response is collected, from what the lock pins: the protocol (design,
sample, exclusion rules, analysis plan, stopping rule with delta), the hashes of the
protocol, its sections and the input files, the selected items and participant lists
(hashed here), and the signature every result of the study will carry. Two files in
``prereg/``: ``preregistration.md`` (to paste or upload to OSF) and ``heds.json`` (the HEDS
answers known before collection, from :func:`humeval.report.heds.heds_before_collection`).
A study that is not locked is refused: a preregistration of a protocol that can still
change registers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from humeval.errors import ProtocolError
from humeval.files import write_json, write_text
from humeval.hashing import sha256_file
from humeval.lock import check_lock, read_lock
from humeval.study import StudyFolder, StudyLike, as_study

__all__ = ["Preregistration", "PreregOptions", "prereg", "prereg_with"]


@dataclass(frozen=True)
class Preregistration:
    """What ``humeval prereg`` wrote: the two files, the signature and the hashes it is tied to."""

    markdown: Path
    heds: Path
    signature: str
    protocol_sha256: str
    files: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"markdown": str(self.markdown), "heds": str(self.heds), "signature": self.signature,
                "protocol_sha256": self.protocol_sha256, "files": self.files}


def _exclusion_text(rule: Any) -> str:
    if rule.rule == "straight-lining":
        return f"straight-lining: a participant who gave the same response to every task (at least {rule.min_tasks} tasks)"
    if rule.rule == "same-side":
        how = "every" if rule.max_share >= 1 else f"at least {rule.max_share:.0%} of the"
        return (f"same-side: a participant who chose the output shown on the same side (first or second) in {how} "
                f"pairwise answer(s) (at least {rule.min_tasks} tasks answered A or B)")
    if rule.rule == "attention":
        return f"attention: a participant who failed more than {rule.max_failures} attention check(s)"
    if rule.rule == "min-time":
        what = "judgements" if rule.scope == "judgement" else "a participant whose median time per task is"
        return f"min-time: {what} faster than {rule.seconds:g} s per task"
    if rule.rule == "vote-outlier":
        return (f"vote-outlier: a participant whose pairwise votes a sequential test (an e-process against the "
                f"Bradley-Terry model of the other participants' votes) finds unlike the crowd's, at {rule.alpha:g} "
                "split over the participants")
    if rule.rule == "vote-cap":
        return f"vote-cap: a participant's pairwise votes of a criterion after the first {rule.max_votes}"
    return (f"inconsistent: a participant whose repeated tasks differ by more than {rule.max_difference:g} "
            f"more than {rule.max_failures} time(s)")


def _drift_text(check: str, alpha: float, wave: Any = None) -> str:
    """The preregistered drift check, as the preregistration states it."""
    if check == "wave":
        w = wave.size(alpha)
        sized = ("" if wave.late_share is None else
                 f" (sized for power {wave.power:g} against a later crowd giving the decided side a share of "
                 f"{wave.late_share:g}, humeval.stats.drift.confirmation_wave_size)")
        return ("Drift check (`stopping.drift_check: wave`): a decision is about the participants who took part "
                "between the first and last judgement it used, in the order they arrived. After each decision of a "
                f"pair, a confirmation wave of w = {w} judgements of the same pair{sized} opens "
                f"{wave.opens_after_seconds:g} s after the first participant entered (or at the decision, if that "
                "time has passed); its judgements are never fed to the rule. It is flagged when the wave prefers "
                "the other side than the decision: the exact one-sided binomial test P(Bin(w, 1/2) <= wins for the "
                f"decided side) <= alpha = {alpha:g} (humeval.stats.drift.confirmation_pvalues); the wave stops "
                "early once its flag is settled (curtailed_wave: the same flag). The exact split test of the "
                "halves the decision used is reported beside it. A flag says that the later crowd prefers the "
                "other side and that the decision is about the crowd that made it; it never changes the decision.")
    if check == "none":
        return ("Drift check: none. A decision is about the participants who took part between the first and last "
                "judgement it used, in the order they arrived; whether their preference moved is not checked.")
    return ("Drift check (`stopping.drift_check: halves`): a decision is about the participants who took part "
            "between the first and last judgement it used, in the order they arrived. For each decision of a "
            "pair the judgements it used are split into the first and the second half in the order the rule "
            "consumed them, and the halves' preference shares are compared by an exact test given the rule's "
            f"stop (humeval.stats.drift) at alpha = {alpha:g}. A flag says that the crowd's preference changed "
            "during collection and that the decision is about the mixture of both; it never changes the decision.")


def _feed_text(protocol: Any) -> str:
    """When a participant's watched judgements reach the stopping rule, and the qualification they pass first."""
    if protocol.stopping.feed == "session":
        return ("Feeding (`stopping.feed: session`): a participant's watched judgements reach the rule when their "
                "session ends, after every exclusion rule above ran on it.")
    d, platform = protocol.design, protocol.platform
    attention = next((r for r in protocol.exclusion if r.rule == "attention"), None)
    failures = attention.max_failures if attention is not None else 0
    route = (f"shown the screen-out code `{platform.screenout_code}`" if platform.screenout_code
             else "sent to the screen-out link" if platform.screenout_url else "given the completion code")
    reward = platform.prolific.screenout_reward if platform.kind == "prolific" else 0.0
    paid = (f", paid {reward:.2f} {protocol.pay.currency} by the platform (a fixed screen-out payment)" if reward
            else "")
    return (f"Feeding (`stopping.feed: judgement`): the first {d.qualification} attention check(s) of every list are "
            f"the qualification, answered before any watched task. A participant who fails more than {failures} of "
            f"them is screened out at once: excluded, nothing of theirs fed, no further task, {route}{paid}. Once "
            "qualified, each watched judgement reaches the rule when it is submitted (a judgement-scope `min-time` "
            "rule decides before it is fed) and is final; the analysis replays the rule on the same judgements.")


def _arena_lines(arena: Any) -> list[str]:
    """The arena section as preregistered: who answers, what is asked, the limits on an answer, the reveal."""
    if arena.models:
        models = [f"- Model **{m.name}**: `{m.kind}` " + (f"(recorded answers from `{m.table}`)" if m.kind == "recorded"
                                                      else f"(`{m.model}` at {m.url})") for m in arena.models]
    else:
        models = ["- Models: the data's systems, their recorded outputs shown as the battles' answers."]
    lim = arena.limits
    return [
        *models,
        (f"- Prompts: {'from `' + arena.prompts.file + '`' if arena.prompts.file else 'the data items (their input)'}"
         f"{'; participants may type their own' if arena.prompts.typed else ''}. A battle whose answers name a model "
         "or its maker is dropped (the identity filter)."),
        (f"- Limits on one answer: first piece within {lim.first_token_seconds:g} s, whole within "
         f"{lim.total_seconds:g} s, {lim.min_chars}-{lim.max_chars:,} characters, at most {lim.max_tokens} tokens "
         f"(an answer cut at the limit is {'dropped' if lim.cut == 'drop' else 'kept'}). A generation that fails "
         "a limit is never shown as a battle and never counted."),
        "- Two models per battle, on sides drawn from the study's seed; votes A, B, tie, both bad.",
        f"- The models' names are {'shown after the vote' if arena.reveal else 'never shown to participants'}.",
    ]


def _markdown(study: StudyFolder, lock: dict[str, Any], files: dict[str, str], signature: str, heds: dict[str, Any],
              items: int, lists: list[Any]) -> str:
    p = study.protocol
    d, a = p.design, p.analysis
    systems = p.systems or study.outputs().systems
    tasks = sum(t.kind == "task" for pl in lists for t in pl.tasks)
    lines = [
        f"# Preregistration: {p.study.name}", "",
        p.study.description or "", "",
        f"**Signature** (printed under every result of this study): `{signature}`", "",
        f"Locked at {lock.get('locked_at', '?')} with humeval {lock.get('humeval_version', '?')}.", "",
        "## Hypotheses and criteria", "",
        f"Systems compared: {', '.join(systems)}.", "",
    ]
    for c in p.criteria:
        lines.append(f"- **{c.name}** ({c.type}): \"{c.question}\"" + (f" Definition: {c.definition}" if c.definition else ""))
    lines += [
        "", "Null hypothesis per criterion: no difference between the systems.", "",
        "## Design", "",
        (f"- {items} items selected by `{p.sampling.method}` sampling (rate {p.sampling.rate:g}, "
         f"params {dict(p.sampling.params)}, seed {lock['seeds']['sampling']})."),
        (f"- {len(lists)} participant lists of {d.items_per_participant} tasks, {d.judgements_per_item} judgement(s) "
         f"per output from different participants: {tasks} judgements in all."),
        (f"- Order within lists: {d.counterbalancing}; attention checks per list: {d.attention_checks}; "
         f"repeated tasks per list: {d.repeated_items}"
         + (f"; the first {d.qualification} check(s) of every list are the qualification" + (
             f", with {d.qualification_attempts} attempts at each: a check answered otherwise than it asks is shown "
             "again at once, the last attempt is judged, and answering anything after the qualification gives the "
             "attempts left up." if d.qualification_attempts > 1 else ".") if d.qualification else ".")),
    ]
    if d.practice:
        lines.append(f"- Practice: {len(d.practice)} item(s) open every list, before the qualification and every task, "
                     "each followed at once by feedback (right or not and the answer expected, when the item names "
                     "one, and the explanation). Their answers are stored with the kind `practice`: not analysed, fed "
                     "to no stopping rule, judged by no exclusion rule.")
        lines += [f"  - Practice {i + 1} ({item.criterion}, {len(item.outputs)} output(s)): "
                  + (f"expects {item.answer}. " if item.answer is not None else "names no answer. ")
                  + f"Explanation: \"{item.explanation}\"" for i, item in enumerate(d.practice)]
    if d.balance:
        lines.append(f"- Balanced lists: every list holds one item of each combination of {', '.join(d.balance)} "
                     "for each system.")
    if p.sampling.pairing is not None:
        pr = p.sampling.pairing
        lines.append(f"- Pairs built from unaligned outputs of {pr.systems[0]} and {pr.systems[1]}: equal "
                     f"{', '.join(pr.match) or '(no properties)'}, lengths within {pr.max_length_difference} tokens, "
                     f"duplicates {'dropped' if pr.drop_duplicates else 'kept'}, order and sides randomised.")
    lines.append(f"- Labelling strategy: {p.assignment.strategy}; platform: {p.platform.kind}.")
    if p.arena is not None:
        lines += ["", "## Arena", "", *_arena_lines(p.arena)]
    lines += ["", "## Stopping rule", ""]
    if p.stopping is None:
        lines.append("None: every list of the design is collected.")
    else:
        s = p.stopping
        lines.append(f"Rule `{s.rule}` with error probability delta = {s.delta:g}"
                     + (f", horizon {s.max_judgements} outcomes" if s.max_judgements else "")
                     + (f", comparing {' vs '.join(s.systems)}" if s.systems else "") + ".")
        if s.pooling:
            lines.append(f"Goal `{s.goal or 'best'}`{f' (top {s.top})' if s.goal == 'top-k' else ''} decided on pooled "
                         "anytime-valid statements (`stopping.pooling: true`): each system's votes against every "
                         "opponent, virtual duels through common opponents under Davidson's model, with a fit check "
                         "that falls back to the pairs' direct statements; votes fed in epochs of at least "
                         f"{s.epoch} votes (10 % of the votes before them), the pairs of an epoch chosen "
                         f"({s.pair_choice}) before its votes are seen; virtual duels paired with seed {p.study.seed}.")
        if p.assignment.strategy == "list":
            lines.append(_feed_text(p))
        lines.append(_drift_text(s.drift_check, a.alpha, s.wave))
    lines += ["", "## Exclusion rules (applied before analysis)", ""]
    lines += [f"- {_exclusion_text(r)}" for r in p.exclusion] or ["- none"]
    lines += [
        "", "## Analysis plan", "",
        f"- Significance level alpha = {a.alpha:g}; tests: {a.tests}; multiple-comparison correction: {a.correction}.",
        (f"- Agreement: {', '.join(a.agreement) or 'none'} (level {a.agreement_level}); conclusions tentative above "
         f"{a.tentative_agreement:g}, reliable above {a.reliable_agreement:g}."),
        f"- Rankings: {', '.join(a.rankings)}; {a.bootstrap} bootstrap resamples; seed {p.study.seed}.",
        "- Analyses not listed here will be reported as post hoc.",
        "", "## Files this preregistration is tied to (SHA-256)", "",
        "| file | sha256 |", "|---|---|",
    ]
    lines += [f"| `{path}` | `{digest}` |" for path, digest in files.items()]
    lines += ["", "Section hashes of the protocol:", ""]
    lines += [f"- {name}: `{digest}`" for name, digest in lock["sections"].items()]
    lines += ["", "## HEDS answers known before collection", "",
              "Also in `heds.json` (question numbers of humeval's HEDS datasheet; each answer names its source).", ""]
    for ans in heds["answers"]:
        lines.append(f"- **{ans['id']}** {ans['question']}: {ans['answer']}")
    lines.append("")
    return "\n".join(lines)


@dataclass(frozen=True)
class PreregOptions:
    """What :func:`prereg` is asked (each field as its keyword): ``out_dir`` the folder written into (default
    ``prereg/``), ``registry`` where it will be registered (e.g. an OSF link), if known."""

    out_dir: str | Path | None = None
    registry: str = ""


def prereg(study: StudyLike, *, out_dir: str | Path | None = None, registry: str = "") -> Preregistration:
    """Write ``prereg/preregistration.md`` and ``prereg/heds.json`` for the locked study.

    Refuses (:class:`ProtocolError`) when the study is not locked or the protocol or an input
    changed after the lock. ``registry``: where it will be registered (e.g. an OSF link), if known.
    """
    return prereg_with(study, PreregOptions(out_dir=out_dir, registry=registry))


def prereg_with(study: StudyLike, options: PreregOptions) -> Preregistration:
    """:func:`prereg` with ``options``."""
    study = as_study(study)
    out_dir, registry = options.out_dir, options.registry
    from humeval.analysis.plan import analysis_signature
    from humeval.report.heds import heds_before_collection

    lock = read_lock(study)
    if lock is None:
        raise ProtocolError(f"{study.root}: the study is not locked; a preregistration is tied to the lock. "
                            f"Run `humeval lock {study.root}` first")
    check_lock(study)
    lists = study.read_lists()
    tasks = study.read_tasks()
    items = len({t.item_id for t in tasks})
    p = study.protocol
    signature = analysis_signature(p, lock.protocol_sha256, p.study.seed)
    files = {lock.data["protocol"]["path"]: lock.protocol_sha256}
    files |= {entry["path"]: entry["sha256"] for entry in lock.data["inputs"]}
    for path in (study.items_file, study.tasks_file, study.lists_file):
        files[study.relative(path)] = sha256_file(path)
    heds = heds_before_collection(p, items=items, lists=len(lists), lock=lock.data, registry=registry)
    heds = {"heds_version": "2.0", "stage": "preregistration", "study": p.study.name, "signature": signature,
            "protocol_sha256": lock.protocol_sha256, "files": files} | heds
    out = Path(out_dir) if out_dir is not None else study.root / "prereg"
    md = write_text(out / "preregistration.md", _markdown(study, lock.data, files, signature, heds, items, lists))
    js = write_json(out / "heds.json", heds)
    return Preregistration(Path(md), Path(js), signature, lock.protocol_sha256, files)
