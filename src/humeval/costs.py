"""What a study will cost before it is launched: :func:`budget`.

A fixed design knows its judgements exactly: the participant lists (``lists/lists.jsonl``
from the ``design`` stage) are the places, their tasks the judgements. With dynamic
stopping (``stopping`` in the protocol) the number of judgements is a prediction: the
simulator (:mod:`humeval.simulate`) is fitted to a pilot (a pilot file, or humeval's own
``results/judgements.jsonl``, or a rehearsal's ``results/rehearsal/judgements.jsonl``) and
predicts the judgements until the decision, with a 99% bootstrap interval of the mean, per
labelling strategy and error probability delta (never more than the design offers).

Money, in the protocol's ``pay`` section (currency, hourly pay or ``platform.reward`` per list,
minimum hourly pay, fee rate, time estimates):

    minutes per list  = pay.minutes_per_list, else the higher of the median seconds per task (pay.pilot
                        or --pilot, export or rehearsal) and pay.seconds_per_task (either when the other is
                        missing) x tasks per list / 60 + pay.extra_minutes; rounded up to whole minutes (what
                        a platform's estimated completion time takes): never below the declared time
    reward per list   = pay.hourly x minutes / 60 (rounded up to the cent), else platform.reward
    hourly pay        = reward per list / (minutes / 60), checked against the minimum
    fee               = fee rate x rewards (the platform's published fee by default)
    total             = rewards + fee

Sessions (``assignment.strategy: list`` with dynamic stopping): a place is a session, admitted
by the rule of :mod:`humeval.stopping.admission`; :func:`humeval.simulate.crowd.simulate_crowd`
predicts places, money (places x reward x (1 + fee rate), plus the lists with no watched task,
which are always paid), judgements used and unused, and wall time (with
``crowd.arrivals_per_hour``) for ``stopping.sessions`` and for W = 1, 2, 3, beside the fixed
design with the same crowd (:attr:`Budget.sessions`).

``humeval budget`` prints this; a platform's ``create`` (``humeval prolific create``) prints the
budget of :func:`launch_budget` (the same, without the simulated effort), which refuses a pay below
the minimum.

The platform's published fee and minimum pay (:attr:`humeval.protocol.platform_kinds.PlatformKind.fee` and
``minimum_hourly``; Prolific's, with sources and dates, in docs/budget.md) apply unless the protocol
declares ``pay.fee_rate`` or ``pay.minimum_hourly``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from humeval.errors import DataError, ProtocolError
from humeval.study import StudyFolder, StudyLike, as_study

__all__ = [
    "Budget",
    "BudgetOptions",
    "EffortCost",
    "SessionPlan",
    "budget",
    "budget_of",
    "launch_budget",
    "reward_per_list",
]

#: the wall time to a decision a plan of sessions aims at, as a multiple of the fixed design's with the same crowd
WALL_TARGET = 1.25


@dataclass(frozen=True)
class EffortCost:
    """Predicted judgements and cost of one labelling strategy at one delta (dynamic stopping)."""

    strategy: str
    delta: float
    rule: str
    judgements: float
    judgements_low: float
    judgements_high: float
    decided_share: float
    places: int
    total: float
    total_low: float
    total_high: float


@dataclass(frozen=True)
class SessionPlan:
    """Places, money, judgements and wall time of one way of collecting with a crowd (simulated).

    ``design``: ``fixed`` (every place open at once) or ``dynamic``; ``sessions``: W
    (``stopping.sessions``; 0 for the fixed design); ``protocol``: the protocol's own setting.
    Each quantity as ``[mean, ci_low, ci_high, q95, q05]`` over the simulated runs (normal 95 %
    interval of the mean, 95th and 5th percentiles: the 5-95 % range of one collection); ``wall_hours`` is
    None without ``crowd.arrivals_per_hour`` or a crowd file.
    """

    design: str
    sessions: int
    protocol: bool
    places: list[float]
    total: list[float]
    used: list[float]
    unused: list[float]
    wall_hours: list[float] | None
    wall_ratio: list[float] | None
    decided_share: float | None
    signature: str


@dataclass(frozen=True)
class Budget:
    """The cost of a study before launch (see the module docstring for every formula)."""

    study: str
    platform: str
    currency: str
    design: str  # "fixed" or "dynamic"
    places: int
    tasks_per_list: int
    judgements: int
    minutes_per_list: float
    time_source: str
    reward_per_list: float
    reward_source: str
    hourly_pay: float
    minimum_hourly: float | None
    meets_minimum: bool | None
    fee_rate: float
    fee_source: str
    rewards: float
    fee: float
    total: float
    effort: list[EffortCost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sessions: list[SessionPlan] = field(default_factory=list)
    #: the LLM judges' predicted requests, tokens and money before their run, and their last run's (``humeval judge``)
    judge_runs: list[dict[str, Any]] = field(default_factory=list)
    #: per judge in the analysis plan, the human labels it saves (:class:`humeval.judge_budget.JudgeSaving`)
    judges: list[Any] = field(default_factory=list)
    #: dynamic stopping: the pilot fit the predictions use (:class:`humeval.simulate.plan.PilotFit` as a dict)
    fit: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["judges"] = [j.to_json() for j in self.judges]
        return data

    def session_rows(self) -> list[dict[str, Any]]:
        """The session plans as table rows: mean [95 % CI] and 95th percentile over simulated runs."""
        def show(q: list[float] | None, digits: int = 1) -> str:
            if q is None:
                return "-"
            if q[0] == q[1] == q[2] == q[3]:
                return f"{q[0]:.{digits}f}"
            low = f"{q[4]:.{digits}f}-" if len(q) > 4 else "p95 "
            return f"{q[0]:.{digits}f} [{q[1]:.{digits}f}, {q[2]:.{digits}f}] 5-95% {low}{q[3]:.{digits}f}"

        c = self.currency
        return [{"design": p.design if p.design == "fixed" else f"dynamic W={p.sessions}" + (" (protocol)" if p.protocol else ""),
                 "places": show(p.places), f"total ({c})": show(p.total, 2), "judgements used": show(p.used),
                 "unused": show(p.unused), "wall hours": show(p.wall_hours, 2), "wall / fixed": show(p.wall_ratio, 2),
                 "decided": "" if p.decided_share is None else f"{p.decided_share:.0%}"}
                for p in self.sessions]

    def rows(self) -> list[dict[str, Any]]:
        """The budget as ``{"item", "value", "source"}`` rows for a table (both CLIs print these)."""
        c = self.currency
        minimum = "none declared" if self.minimum_hourly is None else f"{self.minimum_hourly:.2f} {c}"
        verdict = "" if self.meets_minimum is None else (" (meets the minimum)" if self.meets_minimum else " (BELOW the minimum)")
        return [
            {"item": "design", "value": self.design, "source": f"platform: {self.platform}"},
            {"item": "places (participant lists)", "value": self.places, "source": "lists/lists.jsonl"},
            {"item": "tasks per list", "value": self.tasks_per_list, "source": "lists/lists.jsonl"},
            {"item": "judgements (fixed design)", "value": self.judgements, "source": "lists/lists.jsonl"},
            {"item": "minutes per list", "value": self.minutes_per_list, "source": self.time_source},
            {"item": "reward per list", "value": f"{self.reward_per_list:.2f} {c}", "source": self.reward_source},
            {"item": "hourly pay", "value": f"{self.hourly_pay:.2f} {c}{verdict}", "source": f"minimum {minimum}"},
            {"item": "rewards", "value": f"{self.rewards:.2f} {c}", "source": "places x reward"},
            {"item": "fee", "value": f"{self.fee:.2f} {c}", "source": f"{self.fee_rate:.1%}: {self.fee_source}"},
            {"item": "total", "value": f"{self.total:.2f} {c}", "source": "rewards + fee"},
        ]


def _money(x: float) -> float:
    return round(x + 1e-9, 2)


def _source_name(study: StudyFolder, path: Path | None) -> str:
    """What a file of judgements is, in the budget's words: the study's collected judgements, a rehearsal's, or a
    pilot (any other file)."""
    if path is not None and path.resolve() == (study.results_dir / "judgements.jsonl").resolve():
        return "collected judgements (results/judgements.jsonl)"
    if path is not None and path.resolve() == (study.results_dir / "rehearsal" / "judgements.jsonl").resolve():
        return "rehearsal"
    return "pilot"


def _seconds_measured(study: StudyFolder, pilot_seconds: np.ndarray | None,
                      pilot: Path | None, fitted: Path | None = None) -> tuple[float | None, str]:
    """Median seconds per task: of the pilot fitted (``fitted``: its file), else of the collected judgements, else
    of the rehearsal."""
    if pilot_seconds is not None and pilot_seconds.size:
        return float(np.median(pilot_seconds)), _source_name(study, fitted)
    from humeval.judgements import read_judgements

    candidates = [(path, _source_name(study, path))
                  for path in (study.results_dir / "judgements.jsonl", study.results_dir / "rehearsal" / "judgements.jsonl")]
    if pilot is not None:
        candidates.insert(0, (pilot, "pilot"))
    for path, what in candidates:
        if path.is_file():
            try:
                frame = read_judgements(path)
            except DataError:
                if what == "pilot":  # an AMT batch or a request/choice CSV: no times per task
                    continue
                raise
            seconds = frame.loc[frame["kind"] == "task", "seconds"].dropna().to_numpy(dtype=float)
            if seconds.size:
                return float(np.median(seconds)), what
    return None, ""


def _pilot_path(study: StudyFolder, pilot: str | Path | None) -> Path | None:
    if pilot is not None:
        return Path(pilot)
    if study.protocol.pay.pilot:
        path = study.root / study.protocol.pay.pilot
        if not path.is_file():
            raise DataError(f"{path}: pay.pilot names a judgements file that does not exist")
        return path
    for path in (study.results_dir / "judgements.jsonl", study.results_dir / "rehearsal" / "judgements.jsonl"):
        if path.is_file():
            return path
    return None


def _strategies(study: StudyFolder, strategies: list[str] | None) -> list[str]:
    if strategies:
        return list(dict.fromkeys(strategies))
    a = study.protocol.assignment
    own = {"one": "one", "fixed": "fixed", "max3": "max3", "majority": f"majority{a.workers}"}.get(a.strategy)
    return list(dict.fromkeys([s for s in (own, "one", "max3", "majority5") if s]))


@dataclass(frozen=True)
class BudgetOptions:
    """What :func:`budget` is asked (each field as its keyword); :meth:`check` refuses what the protocol
    cannot use."""

    pilot: str | Path | None = None
    strategies: list[str] | None = None
    deltas: list[float] | None = None
    iterations: int = 200
    seed: int | None = None
    system_a: str = ""
    predict: bool = True
    crowd_runs: int = 2000
    precision: float | None = None
    difficulty_var: float | None = None
    crowd: str | Path | None = None
    #: seconds an arrival who finds no open place waits for one; None: the protocol's ``stopping.waitlist_seconds``
    patience: float | None = None
    #: the share of participants who do not quit that pause once past the lease (settled, paid, their list given on),
    #: besides those a crowd file's task times show; None: 0 (a pilot or an earlier study tells it)
    pausers: float | None = None

    def check(self, protocol: Any) -> BudgetOptions:
        """These options, or a :class:`DataError`/:class:`ProtocolError` naming the one ``protocol`` cannot use."""
        if self.patience is not None and not (math.isfinite(self.patience) and self.patience >= 0):
            raise DataError(f"--patience: seconds an arrival waits for a place are a number >= 0, got {self.patience!r}")
        if self.pausers is not None and not (math.isfinite(self.pausers) and 0 <= self.pausers <= 1):
            raise DataError(f"--pausers: the share of participants who pause past the lease is in [0, 1], got "
                            f"{self.pausers!r}")
        var = self.difficulty_var
        if var is None:
            return self
        if not (math.isfinite(var) and var >= 0):
            raise DataError(f"--difficulty-var: the variance of the items' difficulty is a number >= 0, got {var!r}")
        if protocol.stopping is None:
            raise ProtocolError("--difficulty-var: the difficulty is used to predict the judgements of dynamic stopping, "
                                "and this protocol has no stopping section: a fixed design's budget needs no pilot")
        if not self.predict:
            raise DataError("difficulty_var: predict=False budgets every place of the fixed design, which needs no "
                            "difficulty; pass predict=True to predict the judgements of dynamic stopping")
        return self


def budget(study: StudyLike, *, pilot: str | Path | None = None, strategies: list[str] | None = None,
           deltas: list[float] | None = None, iterations: int = 200, seed: int | None = None,
           system_a: str = "", predict: bool = True, crowd_runs: int = 2000,
           precision: float | None = None, difficulty_var: float | None = None, crowd: str | Path | None = None,
           patience: float | None = None, pausers: float | None = None) -> Budget:
    """The study's budget from its design (run ``humeval design`` first) and its ``pay`` section.

    Dynamic stopping: ``pilot`` (any file ``humeval plan`` reads; default ``pay.pilot``, then
    the study's exported or rehearsal judgements) fits the simulator; ``strategies`` (default:
    the protocol's, ``one``, ``max3``, ``majority5``) and ``deltas`` (default: the protocol's)
    are predicted with ``iterations`` simulated studies each (seed: the study seed).
    ``predict=False`` budgets the fixed design only (every place; what a platform is asked for).
    With the ``list`` strategy, :attr:`Budget.sessions` plans the sessions (``crowd_runs`` simulated
    collections per setting; :func:`humeval.simulate.crowd.simulate_crowd`).
    With judges in the analysis plan, :attr:`Budget.judges` predicts the human labels each saves
    at the study's precision (or ``precision``, a half-width) from the pilot's human judgements
    (:func:`humeval.judge_budget.judge_savings`).
    ``difficulty_var``: the variance of the items' difficulty, as ``humeval plan --difficulty-var``
    takes it; default: fitted from the items the pilot judged more than once, and 0 (items of equal
    difficulty, a documented prior) when it judged every item once.
    ``crowd``: a crowd file or an AMT batch CSV (:func:`humeval.simulate.arrivals.read_crowd`) the sessions are
    simulated with (default: with ``crowd.arrivals_per_hour``, the default crowd fitted to the AMT batches);
    ``patience``: seconds an arrival who finds no open place waits for one (0: turned away; None: the protocol's
    ``stopping.waitlist_seconds``, what the store does); ``pausers``: the share of participants (who do not quit)
    that pause once past the lease, besides those a crowd file's task times show (default 0).
    """
    options = BudgetOptions(pilot=pilot, strategies=strategies, deltas=deltas, iterations=iterations, seed=seed,
                            system_a=system_a, predict=predict, crowd_runs=crowd_runs, precision=precision,
                            difficulty_var=difficulty_var, crowd=crowd, patience=patience, pausers=pausers)
    return budget_of(study, options)


def budget_of(study: StudyLike, options: BudgetOptions) -> Budget:
    """:func:`budget` with ``options``: checked, then the design, the pilot, time, reward, fee and the predictions."""
    study = as_study(study)
    options = options.check(study.protocol)
    protocol = study.protocol
    pay, platform = protocol.pay, protocol.platform
    notes: list[str] = []
    lists, tasks_per_list, judgements = _design_size(study)
    path = _pilot_path(study, options.pilot)
    pilot = _fit_pilot_data(study, options, path, notes)
    declared_pilot = path if (options.pilot is not None or pay.pilot) else None
    minutes, time_source = _minutes_per_list(study, pilot.seconds if pilot is not None else None, declared_pilot, path,
                                             tasks_per_list)
    reward, reward_source = _reward(protocol, minutes)
    hourly = reward / (minutes / 60)
    minimum, meets = _minimum_hourly(protocol, hourly, notes)
    fee_rate, fee_source = _fee_rate(protocol)
    rewards = reward * len(lists)
    effort, sessions_plan, fit = ([], [], None) if pilot is None else _dynamic(
        study, options, pilot, lists, judgements, minutes, reward, fee_rate, notes)
    savings = _judge_savings(study, options, notes)
    return Budget(
        study=protocol.study.name, platform=platform.kind, currency=pay.currency,
        design="fixed" if pilot is None else "dynamic",
        places=len(lists), tasks_per_list=tasks_per_list, judgements=judgements,
        minutes_per_list=round(minutes, 2), time_source=time_source,
        reward_per_list=_money(reward), reward_source=reward_source, hourly_pay=round(hourly, 2),
        minimum_hourly=minimum, meets_minimum=meets, fee_rate=fee_rate, fee_source=fee_source,
        rewards=_money(rewards), fee=_money(rewards * fee_rate), total=_money(rewards * (1 + fee_rate)),
        effort=effort, notes=notes, sessions=sessions_plan, judge_runs=_judge_costs(study), judges=savings,
        fit=None if fit is None else fit.to_dict(),
    )


def reward_per_list(study: StudyLike, tasks_per_list: int) -> tuple[float, str]:
    """The reward of one place (a list of ``tasks_per_list`` tasks) and its currency, as :func:`budget` with
    ``predict=False`` pays it, without reading the design (a server knows its lists' sizes)."""
    study = as_study(study)
    declared = _pilot_path(study, None) if study.protocol.pay.pilot else None
    minutes, _ = _minutes_per_list(study, None, declared, declared, tasks_per_list)
    return _money(_reward(study.protocol, minutes)[0]), study.protocol.pay.currency


def _design_size(study: StudyFolder) -> tuple[list[Any], int, int]:
    """The participant lists (the places), the most tasks of a list, and the judgements (tasks of kind ``task``)."""
    lists = study.read_lists()
    if not lists:
        raise DataError(f"{study.lists_file}: the design has no participant lists; nothing to budget")
    return lists, max(len(pl.tasks) for pl in lists), sum(t.kind == "task" for pl in lists for t in pl.tasks)


def _fit_pilot_data(study: StudyFolder, options: BudgetOptions, path: Path | None, notes: list[str]) -> Any:
    """The pilot the simulator is fitted to (:class:`humeval.simulate.plan.Pilot`), or None for a budget of the
    fixed design (no stopping section, or ``predict=False``)."""
    protocol = study.protocol
    if protocol.stopping is None or not options.predict:
        return None
    if path is None:
        raise DataError("budget: the protocol stops dynamically, so the number of judgements must be predicted "
                        "from a pilot: pass one (--pilot FILE: humeval's exported judgements, an AMT batch or a "
                        "request/choice CSV), or run `humeval rehearse` or `humeval export` first")
    from humeval.simulate.plan import read_pilot

    pilot = read_pilot(path, system_a=options.system_a or (protocol.stopping.systems or [""])[0])
    notes.append(f"simulator fitted to {pilot.source} {study.relative(path) if path.is_relative_to(study.root) else path}")
    return pilot


def _minutes_per_list(study: StudyFolder, pilot_seconds: np.ndarray | None, declared_pilot: Path | None,
                      fitted: Path | None, tasks_per_list: int) -> tuple[float, str]:
    """Whole minutes per list and where they come from (see the module docstring)."""
    pay = study.protocol.pay
    if pay.minutes_per_list is not None:
        minutes, time_source = float(pay.minutes_per_list), "protocol (pay.minutes_per_list)"
    else:
        median, time_source = _seconds_measured(study, pilot_seconds, declared_pilot, fitted)
        declared = None if pay.seconds_per_task is None else float(pay.seconds_per_task)
        if median is None:
            if declared is None:
                raise ProtocolError("pay: no time estimate: declare pay.minutes_per_list or pay.seconds_per_task, "
                                    "or measure it with `humeval rehearse` or a pilot")
            median, time_source = declared, "protocol (pay.seconds_per_task)"
        elif declared is not None and declared > median:
            # never priced below the declared time: a fast pilot (or a rehearsal's simulated pace) is shown beside it
            time_source = (f"protocol (pay.seconds_per_task {declared:g} s), above the median seconds per task "
                           f"({median:.1f} s) of the {time_source}: the higher is used")
            median = declared
        else:
            time_source = f"median seconds per task ({median:.1f} s) of the {time_source}" + (
                "" if declared is None else f", above pay.seconds_per_task ({declared:g} s): the higher is used")
        minutes = median * tasks_per_list / 60 + pay.extra_minutes
        if pay.extra_minutes:
            time_source += f" + {pay.extra_minutes:g} min (pay.extra_minutes)"
    minutes = float(math.ceil(minutes - 1e-9))
    if minutes <= 0:
        raise DataError(f"budget: estimated minutes per list is {minutes}; the time measurements are zero")
    return minutes, time_source


def _reward(protocol: Any, minutes: float) -> tuple[float, str]:
    """The reward per list and where it comes from."""
    pay, platform = protocol.pay, protocol.platform
    if pay.hourly is not None:
        return math.ceil(pay.hourly * minutes / 60 * 100 - 1e-9) / 100, f"pay.hourly {pay.hourly:.2f} x {minutes:.2f} min"
    if platform.reward > 0:
        return float(platform.reward), "platform.reward"
    raise ProtocolError("pay: no reward: declare pay.hourly (pay per hour) or platform.reward (pay per list)")


def launch_budget(study: StudyLike) -> Budget:
    """The budget of every place a platform's ``create`` opens (:func:`budget` of the fixed design).

    Refuses what a platform would refuse or a participant should not get: a pay below the minimum.
    """
    study = as_study(study)
    result = budget(study, predict=False)
    if result.meets_minimum is False:
        raise ProtocolError(f"{study.protocol_file}: pay: the hourly pay {result.hourly_pay:.2f} {result.currency} "
                            f"is below the minimum of {result.minimum_hourly:.2f} {result.currency}/h; raise pay.hourly "
                            "or platform.reward (or lower pay.minutes_per_list if the estimate is too high)")
    return result


def _minimum_hourly(protocol: Any, hourly: float, notes: list[str]) -> tuple[float | None, bool | None]:
    """The minimum hourly pay (declared, else the platform's in its currency) and whether ``hourly`` meets it."""
    from humeval.protocol.platform_kinds import platform_kind

    pay, platform = protocol.pay, platform_kind(protocol.platform.kind)
    minimum = pay.minimum_hourly
    if minimum is None and platform.minimum_hourly:
        minimum = platform.minimum_hourly.get(pay.currency)
        if minimum is None:
            notes.append(f"{platform.title} pays in {' or '.join(platform.minimum_hourly)}; no minimum known for "
                         f"{pay.currency}: declare pay.minimum_hourly")
    meets = None if minimum is None else hourly >= minimum - 1e-9
    if meets is False:
        notes.append(f"hourly pay {hourly:.2f} {pay.currency} is below the minimum {minimum:.2f}: raise pay.hourly or platform.reward")
    return minimum, meets


def _fee_rate(protocol: Any) -> tuple[float, str]:
    """The platform's fee as a share of the rewards and where it comes from."""
    if protocol.pay.fee_rate is not None:
        return float(protocol.pay.fee_rate), "pay.fee_rate"
    from humeval.protocol.platform_kinds import platform_kind

    fee = platform_kind(protocol.platform.kind).fee
    if fee is not None:
        return fee
    return 0.0, f"none known for platform '{protocol.platform.kind}' (declare pay.fee_rate)"


def _dynamic(study: StudyFolder, options: BudgetOptions, pilot: Any, lists: list[Any], judgements: int, minutes: float,
             reward: float, fee_rate: float, notes: list[str]) -> tuple[list[EffortCost], list[SessionPlan], Any]:
    """Dynamic stopping: the simulator fitted to ``pilot``, the predicted effort, and the session plans."""
    from humeval.simulate.plan import fit_pilot

    protocol = study.protocol
    seed = protocol.study.seed if options.seed is None else options.seed
    fit = fit_pilot(pilot.frame, seed=seed, difficulty_var=_difficulty_var(options, pilot.frame, notes))
    effort = _effort(study, fit, options.strategies, options.deltas, options.iterations, options.seed, judgements,
                     judgements / len(lists), reward, fee_rate)
    notes.append(f"dynamic stopping: the fixed design's {judgements} judgements ({len(lists)} places) are the most it can cost")
    if protocol.assignment.strategy != "list":
        return effort, [], fit
    plans, plan_notes = _sessions(study, lists, fit, minutes, reward * (1 + fee_rate), runs=options.crowd_runs,
                                  seed=seed, tasks_per_list=max(len(pl.tasks) for pl in lists),
                                  crowd_file=options.crowd, pilot=pilot, patience=options.patience,
                                  pausers=options.pausers)
    notes += plan_notes
    return effort, plans, fit


def _difficulty_var(options: BudgetOptions, frame: Any, notes: list[str]) -> float | None:
    """The variance of the items' difficulty: as given, 0 when the pilot judged every item once, else None (fitted)."""
    if options.difficulty_var is not None:
        notes.append(f"the variance of the items' difficulty is {options.difficulty_var:g}, as given (--difficulty-var)")
        return options.difficulty_var
    repeated = bool((frame.groupby("request").size() >= 2).any()) if "request" in frame else True
    if repeated:
        return None
    # served in a random order, a short pilot judges each item once
    notes.append("the pilot judged every item once, so how much items differ in difficulty is not known: "
                 "the simulator takes items of equal difficulty (variance 0; a longer pilot measures it, or "
                 "give it: --difficulty-var V)")
    return 0.0


def _judge_savings(study: StudyFolder, options: BudgetOptions, notes: list[str]) -> list[Any]:
    """Per judge in the analysis plan, the human labels it saves (none without judges or with ``predict=False``)."""
    if not (study.protocol.analysis.judges and options.predict):
        return []
    from humeval.judge_budget import judge_savings

    savings, judge_notes = judge_savings(study, options.pilot, precision=options.precision)
    notes += judge_notes
    return savings


def _judge_costs(study: StudyFolder) -> list[dict[str, Any]]:
    """The LLM judges' cost (:func:`humeval.judging.estimate_cost`), in their own currency."""
    if not any(j.llm is not None for j in study.protocol.data.judges):
        return []
    from humeval.judging.cost import estimate_cost

    return [c.to_json() for c in estimate_cost(study)]


def watched_per_list(study: StudyFolder, lists: list[Any]) -> tuple[Any, list[int]] | None:
    """The first watched comparison and each list's watched tasks (as the store counts them), or None."""
    from humeval.protocol.comparisons import watched_comparisons, watched_criteria

    systems = list(study.protocol.systems) or sorted({x for pl in lists for t in pl.tasks for x in t.systems})
    found = watched_comparisons(study.protocol, systems)
    if not found:
        return None
    c = found[0]
    per_list = [sum(1 for t in pl.tasks if watched_criteria(t, {c.criterion: c})) for pl in lists]
    return c, per_list


def _sessions(study: StudyFolder, lists: list[Any], fit: Any, minutes: float, cost_per_place: float, *, runs: int,
              seed: int, tasks_per_list: int, crowd_file: str | Path | None = None, pilot: Any = None,
              patience: float | None = None, pausers: float | None = None) -> tuple[list[SessionPlan], list[str]]:
    """The session plans: the fixed design, the protocol's W, and W = 1, 2, 3 (within the watched lists)."""
    from humeval.simulate.crowd import plan_sessions, simulate_crowd
    from humeval.stopping.admission import unused_bound

    protocol = study.protocol
    if patience is None:  # the store's waitlist
        patience = float(protocol.stopping.waitlist_seconds) if protocol.stopping is not None else 0.0
    found = watched_per_list(study, lists)
    if found is None:
        return [], []
    comp, per_list = found
    if comp.multi:
        return [], [f"sessions: goal '{comp.goal}' over {len(comp.members)} systems is not simulated with sessions yet; "
                    "places, money and wall time are predicted for a pair goal only"]
    watched_lists = [k for k in per_list if k > 0]
    if not watched_lists:
        return [], []
    big_p = len(watched_lists)
    other = len(per_list) - big_p  # lists with no watched task: always paid
    lam = protocol.crowd.arrivals_per_hour
    rule = comp.build_rule()
    notes: list[str] = []
    feed = protocol.stopping.feed if protocol.stopping is not None else "session"
    if feed == "judgement":
        notes.append(f"sessions: simulated with stopping.feed: judgement: after the {protocol.design.qualification} "
                     "qualification check(s) first in a list (and any practice items before them), each watched outcome reaches the rule when it is "
                     "submitted (the watched tasks evenly spread over the rest of the list), so a place can open and "
                     "the rule can decide mid-session")
    crowd, shape = _crowd(crowd_file, pilot, lam, tasks_per_list, notes)
    if crowd_file is not None:
        lam = None  # a recorded crowd brings its own arrivals
    if lam is None and crowd is None:
        notes.append("sessions: wall time is not predicted: set crowd.arrivals_per_hour (participants who start the "
                     "study per hour while places are open; a pilot or an earlier study on the platform tells it). "
                     "Without it every open place is taken at once (the most places and unused judgements)")
    own = protocol.stopping.sessions if protocol.stopping is not None else 2
    settings = sorted({min(v, big_p) for v in (1, 2, 3, own)})
    same = {"lists": big_p, "watched": watched_lists, "minutes_per_list": minutes, "fit": fit,
            "in_flight_share": comp.in_flight_share, "min_in_flight": comp.min_in_flight, "horizon": comp.horizon,
            "runs": runs, "seed": seed, "crowd": crowd, "tasks_per_list": tasks_per_list, "patience": patience,
            "lease_seconds": float(protocol.lease(tasks_per_list)), "feed": feed,
            "qualification": protocol.design.qualification, "practice": len(protocol.design.practice)}
    timed = lam is not None or crowd is not None
    if not timed:
        same["patience"] = 0.0  # every open place is taken at once: no one waits
        if pausers:
            notes.append(f"sessions: --pausers {pausers:g} is not simulated: a pause is timed against the lease, and "
                         "without arrivals (crowd.arrivals_per_hour or --crowd) nothing is timed")
    else:
        same["pausers"] = float(pausers or 0.0)
    planned, tried = (None, []) if not timed else plan_sessions(rule, arrivals_per_hour=lam, **same)
    simulated = {r.sessions: r for r in tried}  # the planner's runs, reused for the rows they share
    plans = []
    for i, sessions in enumerate(settings):
        r = simulated.get(sessions) or simulate_crowd(rule, arrivals_per_hour=lam, sessions=sessions, **same)
        sm = r.summary()
        if sessions == min(own, big_p) and "pauses" in sm and "quits" in sm:
            notes.append(f"sessions: per collection at W = {sessions}, {sm['quits'].mean:.2f} quitters (not paid) and "
                         f"{sm['pauses'].mean:.2f} pauses past the lease of {same['lease_seconds']:g} s (paid, their "
                         f"answered outcomes fed, the list given on) on average; pausers: "
                         + (f"{same.get('pausers', 0.0):g} of those who do not quit (--pausers), plus " if same.get("pausers")
                            else "") + "those whose recorded task took longer than the lease at this study's pace")
        if i == 0:
            fixed_wall = sm.get("fixed_wall_hours")
            plans.append(SessionPlan(
                "fixed", 0, False, [float(big_p + other)] * 5, [_money((big_p + other) * cost_per_place)] * 5,
                [float(r.fixed_judgements)] * 5, [0.0] * 5,
                None if fixed_wall is None else _quad(fixed_wall), None if fixed_wall is None else [1.0] * 5, None,
                r.signature().replace(f"|W:{sessions}|", "|W:all|")))

        def shifted(q: Any, by: float = 0.0, scale: float = 1.0) -> list[float]:
            return [round((v + by) * scale, 2) for v in _quad(q)]

        plans.append(SessionPlan(
            "dynamic", sessions, sessions == own, shifted(sm["places"], other), shifted(sm["places"], other, cost_per_place),
            shifted(sm["used"]), shifted(sm["unused"]),
            shifted(sm["wall_hours"]) if "wall_hours" in sm else None,
            shifted(sm["wall_ratio"]) if "wall_ratio" in sm else None, r.decided_share, r.signature()))
    if shape is not None:
        _long_warning(plans, shape, crowd_file is not None, notes)
    if other:
        notes.append(f"sessions: {other} lists hold no watched task and are always paid (counted in the places)")
    w, total = max(watched_lists), sum(watched_lists)
    bound = unused_bound(own, w, comp.in_flight_bound(total))
    notes.append(f"sessions: with stopping.sessions: {own} and lists of {w} watched tasks, at most {bound} judgements "
                 "of the comparison are paid but unused at the decision (a bound, whatever the answers; "
                 "docs/stopping.md, 'Sessions')")
    if (wave := _wave_note(protocol, watched_lists, plans, cost_per_place)) is not None:
        notes.append(wave)
    if planned is not None:
        notes.append(f"sessions: stopping.sessions: {planned} is the smallest W whose predicted wall time to the decision "
                     f"is within {WALL_TARGET:g}x the fixed design's with this crowd (the protocol has {own}); each W "
                     "more pays for more unused judgements (the table above)")
    return plans, notes


def _wave_note(protocol: Any, watched_lists: list[int], plans: list[SessionPlan], cost_per_place: float) -> str | None:
    """What a confirmation wave (``stopping.drift_check: wave``) adds to a decided collection, not in the table: at
    most ceil(w / k) more places (k: the watched tasks of a list), each paid, and no end before the wave opens."""
    stopping = protocol.stopping
    if stopping is None or stopping.drift_check != "wave" or stopping.wave is None:
        return None
    w = stopping.wave.size(protocol.analysis.alpha)
    k = sum(watched_lists) / len(watched_lists)
    places = math.ceil(w / k)
    own = next((p for p in plans if p.protocol), None)
    left = None if own is None else max(0.0, len(watched_lists) - own.places[0])
    opens = stopping.wave.opens_after_seconds / 3600
    return (f"sessions: the confirmation wave (stopping.wave: w = {w} outcomes, {k:.1f} watched tasks a list) adds up "
            f"to {places} places after a decision, {_money(places * cost_per_place):.2f} at most (it stops early once "
            f"its flag is settled, never fed to the rule; not in the table above)"
            + (f", within the {left:.1f} lists the protocol's W leaves unused on average" if left is not None else "")
            + f"; the collection ends no sooner than the wave opens, {opens:.2f} hours after the launch, plus a session")


def _quad(q: Any) -> list[float]:
    return [round(float(v), 2) for v in (q.mean, q.ci_low, q.ci_high, q.q95, q.q05)]


#: a planned collection longer than this (hours) is warned about: the crowd's preference can drift
LONG_HOURS = 24.0


def _crowd(crowd_file: str | Path | None, pilot: Any, lam: float | None, tasks_per_list: int,
           notes: list[str]) -> tuple[Any, Any]:
    """The crowd the sessions are simulated with and its shape: the crowd file (arrivals and paces as logged),
    else with ``crowd.arrivals_per_hour`` the default crowd fitted to the AMT batches (its session spread from
    the pilot when the pilot has per-task times of participants who did a whole list), else None."""
    from dataclasses import replace

    from humeval.simulate.arrivals import DEFAULT_SHAPE, fit_crowd, read_crowd

    if crowd_file is not None:
        crowd = read_crowd(crowd_file)
        shape = fit_crowd(crowd, tasks=tasks_per_list)
        notes.append(f"crowd: {shape.describe()}; arrivals and paces as logged, resampled per simulated run, the pace "
                     "scaled to this study's seconds per task by the ratio of medians (docs/budget.md, 'The crowd')")
        return crowd, shape
    if lam is None:
        return None, None
    shape = DEFAULT_SHAPE
    spread = _pilot_spread(pilot, tasks_per_list)
    if spread is not None:
        shape = replace(shape, pace_sd=spread[0], source=f"{shape.source}, session log-sd from the pilot ({spread[1]} "
                                                             "participants)")
    notes.append(f"crowd: {shape.describe()}; at crowd.arrivals_per_hour {lam:g} with a launch burst of "
                 f"{shape.burst_hours:.2f} h of arrivals (docs/budget.md, 'The crowd'; --crowd FILE for your own)")
    return shape, shape


def _pilot_spread(pilot: Any, tasks_per_list: int) -> tuple[float, int] | None:
    """The log-sd of a whole list's time over the pilot's participants who did one (:attr:`Pilot.sessions`: humeval's
    judgements with seconds), and how many; None when fewer than 3 did."""
    sessions = np.empty((0, 2)) if pilot is None else pilot.sessions
    whole = sessions[(sessions[:, 1] >= tasks_per_list) & (sessions[:, 0] > 0), 0]
    if len(whole) < 3:
        return None
    return float(np.log(whole).std(ddof=1)), int(len(whole))


def _long_warning(plans: list[SessionPlan], shape: Any, from_file: bool, notes: list[str]) -> None:
    """One warning when a planned collection spans more than LONG_HOURS (or the crowd file's span)."""
    walls = [p.wall_hours[3] for p in plans if p.wall_hours is not None]
    if not walls:
        return
    longest = max(walls)
    limit = min(LONG_HOURS, shape.span_hours) if from_file else LONG_HOURS
    if longest > limit:
        what = f"the crowd file's span ({shape.span_hours:.2f} h)" if from_file and shape.span_hours < LONG_HOURS \
            else f"{LONG_HOURS:g} h"
        notes.append(f"warning: the planned collection may last {longest:.2f} h (95th percentile), longer than {what}: "
                     "the crowd's preference can drift over that time (docs/budget.md, 'The crowd')")


def _effort(study: StudyFolder, fit: Any, strategies: list[str] | None, deltas: list[float] | None, iterations: int,
            seed: int | None, judgements: int, per_list: float, reward: float, fee_rate: float) -> list[EffortCost]:
    """Predicted judgements per strategy and delta; places = judgements / judgements per list, rounded up."""
    from humeval.simulate.plan import predict_effort

    protocol = study.protocol
    stopping = protocol.stopping
    if stopping is None:
        raise ProtocolError("budget: predicted effort needs the protocol's stopping section")
    seed = protocol.study.seed if seed is None else seed
    requests = len({t.item_id for t in study.read_tasks() if t.family == "pair"}) or judgements
    results = predict_effort(fit, _strategies(study, strategies), deltas or [stopping.delta], rule=stopping.rule,
                             n_requests=requests, iterations=iterations, seed=seed)
    out = []
    for r in results:
        mean, lo, hi = (min(float(v), judgements) for v in (r.mean_effort, r.ci_low, r.ci_high))
        places = [math.ceil(n / per_list - 1e-9) for n in (mean, lo, hi)]
        cost = [_money(k * reward * (1 + fee_rate)) for k in places]
        out.append(EffortCost(r.strategy, r.delta, r.rule, round(mean, 1), round(lo, 1), round(hi, 1),
                              r.decided_share, places[0], *cost))
    return out
