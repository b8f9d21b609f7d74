"""Synthetic participants of a rehearsal: an HTTP client of the JSON API and their answers.

A synthetic participant only sees what the server sends (``GET /api/v1/next``): the item
id, the criteria and the output *texts* in display order, never system names. To answer
like a dummy participant of :mod:`humeval.simulate.dummy` (``static``/``normal`` need the
hidden score of each output) it is given an :class:`AnswerKey` built by the researcher
side from the study's own files: the data (``(item, text) -> system``) and the design
(``attention check text -> expected answer``). Values are drawn with the very functions
of :mod:`humeval.simulate.dummy`, or, for the ``crowd`` kind, by the agent model of
:mod:`humeval.simulate.population` (:class:`Population`: capability, position bias, spammers).
"""

from __future__ import annotations

import functools
import http.client
import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from humeval.design.tasks import ParticipantList
from humeval.errors import HumevalError
from humeval.protocol.models import Criterion, Protocol
from humeval.rehearsal.replay import VoteReplay
from humeval.simulate.dummy import (
    DEFAULT_SECONDS,
    DUMMY_KINDS,
    Scale,
    _scores,
    _static_scores,
    scale_of,
)
from humeval.simulate.dummy import draw_seconds as _draw
from humeval.simulate.population import WorkerPool, make_pool

__all__ = ["CHEAP_STRATEGIES", "REHEARSAL_KINDS", "AnswerKey", "Answerer", "ApiClient", "ApiRefused", "Population", "RehearsalError",
           "ReplayedWorker", "SimulatedParticipant", "draw_seconds", "prompts_to_type"]

#: what synthetic participants answer: the dry run's dummy kinds, a simulated ``crowd``, or ``replay``: recorded
#: votes replayed worker by worker (:mod:`humeval.rehearsal.replay`)
REHEARSAL_KINDS = (*DUMMY_KINDS, "crowd", "replay")


class RehearsalError(HumevalError):
    """A rehearsal could not run, or the server answered something a participant cannot use."""


class ApiRefused(RehearsalError):
    """The server answered a request with an unexpected status."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        try:
            error = json.loads(body)["error"]
            detail = f"{error.get('code')}: {error.get('message')}"
        except (ValueError, KeyError, TypeError):
            detail = body[:200]
        super().__init__(f"rehearsal: {method} {path} answered {status} ({detail})")
        self.status = status


@dataclass(frozen=True)
class AnswerKey:
    """What the researcher knows and the browser never shows: which system wrote each text."""

    #: (item_id, output text) -> systems that wrote that text for the item (more than one when identical)
    systems: dict[tuple[str, str], tuple[str, ...]]
    #: (item_id, attention check text) -> the answer the check asks for
    attention: dict[tuple[str, str], Any]

    @classmethod
    def build(cls, outputs: list[tuple[str, str, str]], lists: list[ParticipantList]) -> AnswerKey:
        """From ``(item_id, system, output)`` rows of the data and the participant lists."""
        systems: dict[tuple[str, str], list[str]] = {}
        for item_id, system, text in outputs:
            holders = systems.setdefault((item_id, text), [])
            if system not in holders:
                holders.append(system)
        attention = {
            (t.item_id, t.text): t.expected
            for pl in lists for t in pl.tasks if t.kind == "attention"
        }
        return cls({k: tuple(sorted(v)) for k, v in systems.items()}, attention)

    @property
    def ambiguous(self) -> int:
        """Outputs whose text another system of the same item also wrote (indistinguishable when shown)."""
        return sum(len(v) for v in self.systems.values() if len(v) > 1)

    @functools.cached_property
    def _items(self) -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        for item_id, text in self.systems:
            index.setdefault(text, set()).add(item_id)
        return index

    @functools.cached_property
    def _checks(self) -> dict[str, str]:
        return {text: item_id for item_id, text in self.attention}

    def knows(self, texts: list[str]) -> bool:
        """Whether one item of the key holds every one of ``texts`` (a live battle's streamed answers)."""
        return bool(texts) and bool(set.intersection(*(self._items.get(t, set()) for t in texts)))

    def identify(self, texts: list[str]) -> tuple[str, bool]:
        """``(item id, is an attention check)`` of an assignment from the texts it shows: the server tells
        neither (a participant could not either), the researcher's key does."""
        if texts and texts[0] in self._checks and texts[0] not in self._items:
            return self._checks[texts[0]], True
        candidates = set.intersection(*(self._items.get(t, set()) for t in texts)) if texts else set()
        if not candidates:
            raise RehearsalError(
                f"rehearsal: the server showed outputs that no item of the study's data holds together "
                f"({texts[0][:60] if texts else ''!r}); the store was seeded from other data. Use a fresh --db"
            )
        return min(candidates), False

    def writers(self, item_id: str, text: str) -> tuple[str, ...]:
        found = self.systems.get((item_id, text))
        if found is None:
            raise RehearsalError(
                f"rehearsal: the server showed an output of item '{item_id}' that the study's data does not hold "
                f"({text[:60]!r}); the store was seeded from other data. Use a fresh --db"
            )
        return found


#: the cheap strategies of a simulated crowd: always the output shown first (and a scale's first point), or the
#: same answer to every task (straight-lining)
CHEAP_STRATEGIES = ("first", "straight")


@dataclass(frozen=True)
class SimulatedParticipant:
    """One member of a simulated crowd: capability ``c`` in [0, 1] (0 for a spammer) and a spammer flag; a cheap
    clicker's ``strategy`` (one of :data:`CHEAP_STRATEGIES`, "" for anyone who reads) and, for a straight-liner,
    ``level`` in [0, 1): where on every scale (and, below 0.5, side A of a pair) their one answer lies."""

    capability: float
    spammer: bool
    strategy: str = ""
    level: float = 0.0


@dataclass(frozen=True)
class Population:
    """Simulated participants of a ``crowd`` rehearsal: the agent model of :mod:`humeval.simulate.population`.

    A pool of ``size`` participants is drawn once (:func:`~humeval.simulate.population.make_pool`):
    capability ``c ~ U(low, high)``, ``round(spammer_share * size)`` spammers (``c = 0``).
    Participant ``i`` of the rehearsal is pool member ``i mod size``. With the dummy
    quality ``q`` of each system (``dry_run.static``, as the ``static`` kind uses it):

    * ``2afc``: the task's difficulty is ``d ~ clip(N((q_A - q_B) / (high - low), difficulty_var), -1, 1)``
      on the criterion's latent 5-point scale, and the participant chooses the output shown
      first (``A``) with ``P = clip((c d + 1) / 2 + position_bias / 2, 0, 1)``, Thorleiksdottir
      et al.'s model with a position bias towards the first output;
    * ratings (Likert, slider, magnitude, RankME): ``q`` plus normal noise of ``dry_run.sd / c``
      (the scale's spread for log scales, as the ``normal`` kind), plus ``position_bias`` times a
      quarter of the scale for the output shown first; a spammer answers uniformly at random;
    * attention checks: answered correctly by everyone but spammers, who answer them as any
      other task (and so fail most of them);
    * cheap clickers, who read nothing and answer checks as any task: ``round(first_share * size)``
      always choose the output shown first (``A``) and give a scale its first point (Likert 1, a
      slider's minimum, ESA 0 with no error marked, the standard's score for magnitude and RankME);
      ``round(straight_share * size)`` straight-line: each gives one answer to every task, at a
      seeded level ``u ~ U(0, 1)`` of each scale (Likert ``1 + round(u (points - 1))``) and, for
      pairs, ``A`` when ``u < 0.5``, else ``B``.
    """

    capability: tuple[float, float] = (0.7, 1.0)
    position_bias: float = 0.1
    spammer_share: float = 0.1
    difficulty_var: float = 0.1
    size: int = 40
    first_share: float = 0.1
    straight_share: float = 0.1

    def __post_init__(self) -> None:
        lo, hi = self.capability
        if not 0.0 < lo <= hi <= 1.0:
            raise RehearsalError(f"crowd: capability must satisfy 0 < low <= high <= 1, got ({lo!r}, {hi!r})")
        if not -1.0 <= self.position_bias <= 1.0:
            raise RehearsalError(f"crowd: position bias must lie in [-1, 1], got {self.position_bias!r}")
        if not 0.0 <= self.spammer_share < 1.0:
            raise RehearsalError(f"crowd: spammer share must lie in [0, 1), got {self.spammer_share!r}")
        for name, what in (("first_share", "first-clicker"), ("straight_share", "straight-liner")):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise RehearsalError(f"crowd: the {what} share must lie in [0, 1], got {getattr(self, name)!r}")
        if self.spammer_share + self.first_share + self.straight_share > 1.0:
            raise RehearsalError(f"crowd: spammers ({self.spammer_share:g}), first clickers ({self.first_share:g}) and "
                                 f"straight-liners ({self.straight_share:g}) are more than the crowd; their shares "
                                 "must sum to at most 1")
        if self.difficulty_var < 0:
            raise RehearsalError(f"crowd: difficulty variance must be >= 0, got {self.difficulty_var!r}")
        if self.size < 1:
            raise RehearsalError(f"crowd: pool size must be at least 1, got {self.size!r}")

    def pool(self, seed: int) -> WorkerPool:
        """The pool of simulated participants (seeded: the same study and seed give the same crowd)."""
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0x63726F77,)))
        return make_pool(rng, self.size, *self.capability, spammer_share=self.spammer_share,
                         first_share=self.first_share, straight_share=self.straight_share)

    def levels(self, seed: int) -> np.ndarray:
        """Each pool member's straight-lining level ``u ~ U(0, 1)`` (its own stream of ``seed``)."""
        return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0x73747261,))).random(self.size)

    def to_json(self) -> dict[str, Any]:
        return {"capability": list(self.capability), "position_bias": self.position_bias,
                "spammer_share": self.spammer_share, "difficulty_var": self.difficulty_var, "size": self.size,
                "first_share": self.first_share, "straight_share": self.straight_share}


@dataclass(frozen=True)
class ReplayedWorker:
    """A synthetic participant of a ``replay`` rehearsal, the ``index``-th to enter (the recorded worker it plays is
    bound at its first battle: :meth:`humeval.rehearsal.replay.VoteReplay.worker`)."""

    index: int


class Answerer:
    """Answers of one ``kind`` (random, static, normal dummies; a simulated ``crowd``; or ``replay``: the recorded
    votes of ``replay``) to assignments as the API serves them."""

    def __init__(self, protocol: Protocol, key: AnswerKey, kind: str, systems: list[str],
                 population: Population | None = None, seed: int = 0, replay: VoteReplay | None = None) -> None:
        self.protocol, self.key, self.kind = protocol, key, kind
        if (kind == "replay") != (replay is not None):
            raise RehearsalError("rehearsal: the 'replay' kind needs recorded votes (--crowd-votes), and only it")
        self.replay = replay
        #: the simulated crowd (``crowd`` kind only) and its pool, drawn once from ``seed``
        self.population = (population or Population()) if kind == "crowd" else None
        self._pool = self.population.pool(seed) if self.population is not None else None
        self._levels = self.population.levels(seed) if self.population is not None else None
        self.criteria: dict[str, Criterion] = {c.name: c for c in protocol.criteria}
        self.scales: dict[str, Scale] = {c.name: scale_of(c) for c in protocol.criteria}
        #: each criterion's static score per system, as the dry run uses them
        self.static: dict[str, dict[str, float]] = {
            c.name: _static_scores(protocol, systems, c) for c in protocol.criteria
        }

    def participant(self, index: int) -> SimulatedParticipant | ReplayedWorker | None:
        """The simulated participant who enters ``index``-th (None for the dummy kinds)."""
        if self.replay is not None:
            return ReplayedWorker(index)
        if self._pool is None:
            return None
        i = index % self._pool.size
        pool = self._pool
        strategy = ("first" if pool.first_clicker is not None and pool.first_clicker[i] else
                    "straight" if pool.straight_liner is not None and pool.straight_liner[i] else "")
        level = float(self._levels[i]) if strategy == "straight" and self._levels is not None else 0.0
        return SimulatedParticipant(float(pool.effective[i]), bool(pool.spammer[i]), strategy, level)

    def _centres(self, criterion: str, item_id: str, texts: list[str]) -> tuple[np.ndarray, dict[str, float]]:
        static = self.static[criterion]
        labels, centres = [], {}
        for text in texts:
            writers = self.key.writers(item_id, text)
            label = "+".join(writers)
            centres[label] = float(np.mean([static[w] for w in writers]))
            labels.append(label)
        return np.array(labels), centres

    def _latent(self, criterion: str, item_id: str, texts: list[str], rng: np.random.Generator,
                who: SimulatedParticipant | None = None) -> np.ndarray:
        """One score per shown text (log scale for magnitude/RankME): a dummy, or a simulated participant's."""
        labels, centres = self._centres(criterion, item_id, texts)
        scale, sd = self.scales[criterion], self.protocol.dry_run.sd
        if who is None:
            return _scores(self.kind, labels, centres, scale, sd, rng)
        if who.spammer:
            return _scores("random", labels, centres, scale, sd, rng)
        scores = _scores("normal", labels, centres, scale, sd / who.capability, rng)
        bias = self.population.position_bias if self.population is not None else 0.0
        if len(scores) and bias:
            scores[0] = np.clip(scores[0] + bias * (scale.high - scale.low) / 4, scale.low, scale.high)
            if scale.discrete:
                scores[0] = np.round(scores[0])
        return scores

    def values(self, assignment: dict[str, Any], rng: np.random.Generator,
               who: SimulatedParticipant | ReplayedWorker | None = None) -> dict[str, Any]:
        """``{criterion: value}`` for an assignment of ``GET /api/v1/next`` (``who``: a simulated participant)."""
        texts: list[str] = list(assignment["outputs"])
        names = [c["name"] for c in assignment["criteria"]]
        if (practice := assignment.get("practice")) is not None:  # said openly: the protocol's item, no data's
            return {name: self._practised(name, int(practice["number"]) - 1, texts, rng, who) for name in names}
        item_id, attention = self.key.identify(texts)
        if isinstance(who, ReplayedWorker):
            return {name: self._replayed(name, item_id, texts, attention, rng, who) for name in names}
        if who is not None and who.strategy:  # a cheap clicker reads nothing: checks are answered as any task
            return {name: self._cheap(name, len(texts), who) for name in names}
        if attention and not (who is not None and who.spammer):
            return {name: self._attention(name, item_id, texts) for name in names}
        if attention:  # a spammer answers a check like any task: at random
            return {name: self._spam(name, texts, rng) for name in names}
        return {name: self._value(name, item_id, texts, rng, who) for name in names}

    def _replayed(self, name: str, item_id: str, texts: list[str], attention: bool, rng: np.random.Generator,
                  who: ReplayedWorker) -> Any:
        """A recorded worker's vote on the battle served, flipped to its sides (attention checks: answered right)."""
        if attention:
            return self._attention(name, item_id, texts)
        criterion = self.criteria[name]
        if not criterion.task.pairwise or len(texts) != 2:
            raise RehearsalError(f"rehearsal: the 'replay' kind replays pairwise votes; criterion '{name}' is "
                                 f"{criterion.type} with {len(texts)} output(s)")
        if not all(texts):
            raise RehearsalError("rehearsal: the 'replay' kind needs to know which model wrote each answer; a live "
                                 "battle's answers are known only for `recorded` models (not openai or local ones)")
        sides = [self.key.writers(item_id, t) for t in texts]
        if any(len(s) != 1 for s in sides):
            raise RehearsalError(f"rehearsal: item '{item_id}': two models wrote the same answer ({sides}); a "
                                 "replayed vote needs to know which model is on each side")
        assert self.replay is not None
        return self.replay.answer(who.index, item_id, sides[0][0], sides[1][0], rng)

    def _spam(self, name: str, texts: list[str], rng: np.random.Generator) -> Any:
        """A spammer's answer that needs no text's writer (an attention check shows no system's output)."""
        criterion, scale = self.criteria[name], self.scales[name]
        bias = self.population.position_bias if self.population is not None else 0.0
        if criterion.task.pairwise:
            return "A" if rng.random() < float(np.clip(0.5 + bias / 2, 0, 1)) else "B"
        scores = _scores("random", np.array([""] * max(len(texts), 1)), {}, scale, 1.0, rng)
        return self._shaped(criterion, scale, scores)

    def _cheap(self, name: str, shown: int, who: SimulatedParticipant) -> Any:
        """A cheap clicker's answer: the first output and a scale's first point, or a straight-liner's one answer."""
        c = self.criteria[name]
        return c.task.cheap_answer(c, who.level if who.strategy == "straight" else 0.0, shown)

    def _practised(self, name: str, index: int, texts: list[str], rng: np.random.Generator,
                   who: SimulatedParticipant | ReplayedWorker | None) -> Any:
        """A practice item's answer: the one it expects from anyone who reads (any valid answer when it names none),
        the cheap answer from a cheap clicker, a random one from a spammer."""
        criterion = self.criteria[name]
        if isinstance(who, SimulatedParticipant) and who.strategy:
            return self._cheap(name, len(texts), who)
        expected = self.protocol.design.practice[index].expected(criterion)
        if expected is None or (isinstance(who, SimulatedParticipant) and who.spammer):
            return self._spam(name, texts, rng)
        return criterion.task.attention_answer(criterion, expected, len(texts))

    def _attention(self, name: str, item_id: str, texts: list[str]) -> Any:
        expected = self.key.attention.get((item_id, texts[0] if texts else ""))
        if expected is None:
            raise RehearsalError(f"rehearsal: attention check '{item_id}' is not in lists/lists.jsonl; "
                                 "the store was seeded from other lists. Use a fresh --db")
        criterion = self.criteria[name]
        return criterion.task.attention_answer(criterion, expected, len(texts))

    def _value(self, name: str, item_id: str, texts: list[str], rng: np.random.Generator,
               who: SimulatedParticipant | None = None) -> Any:
        criterion = self.criteria[name]
        scale = self.scales[name]
        if criterion.task.pairwise and who is not None:
            return "A" if rng.random() < self._prefer_first(name, item_id, texts[:2], who, rng) else "B"
        if criterion.task.pairwise:
            a, b = self._latent(name, item_id, texts[:2], rng)
            if a != b:
                return "A" if a > b else "B"
            return "tie" if "tie" in criterion.task.choices(criterion) else ("A" if rng.random() < 0.5 else "B")
        scores = self._latent(name, item_id, texts, rng, who)
        value = self._shaped(criterion, scale, scores)
        if criterion.task.marks_spans:
            limit = criterion.task.span_limit(criterion)
            value = criterion.task.with_spans(criterion, value, scores, lambda quality: simulated_spans(
                texts[0] if texts else "", quality, rng, limit))
        return value

    def _prefer_first(self, name: str, item_id: str, texts: list[str], who: SimulatedParticipant,
                      rng: np.random.Generator) -> float:
        """P(choose the first output): ``clip((c d + 1) / 2 + b / 2, 0, 1)`` (see :class:`Population`)."""
        pop = self.population or Population()
        labels, centres = self._centres(name, item_id, texts)
        scale = self.scales[name]
        gap = (centres[labels[0]] - centres[labels[1]]) / (scale.high - scale.low)
        d = float(np.clip(rng.normal(gap, np.sqrt(pop.difficulty_var)), -1.0, 1.0))
        return float(np.clip((who.capability * d + 1) / 2 + pop.position_bias / 2, 0.0, 1.0))

    @staticmethod
    def _shaped(criterion: Criterion, scale: Scale, scores: np.ndarray) -> Any:
        """Scores on the criterion's scale as the API takes them (a list for RankME, one number otherwise)."""
        if scale.log:
            scores = np.exp(scores)
        return criterion.task.shaped(criterion, scores)


def simulated_spans(text: str, score: float, rng: np.random.Generator, most: int) -> list[dict[str, Any]]:
    """Error spans a simulated participant marks in ``text`` given the score they give: about
    ``(100 - score) / 25`` errors (Poisson), each one word, major with probability ``(100 - score) / 150``;
    words are drawn without replacement, so spans never overlap."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    n = min(int(rng.poisson(max(100.0 - score, 0.0) / 25.0)), len(words), most)
    if n == 0:
        return []
    chosen = sorted(rng.choice(len(words), size=n, replace=False).tolist())
    major = rng.random(n) < max(100.0 - score, 0.0) / 150.0
    return [{"start": words[i][0], "end": words[i][1], "severity": "major" if m else "minor"}
            for i, m in zip(chosen, major, strict=True)]


def draw_seconds(rng: np.random.Generator, median: float = DEFAULT_SECONDS) -> float:
    """Time on a task as the dry run draws it (log-normal around ``median``, the protocol's declared time:
    :func:`humeval.simulate.dummy.declared_seconds`); reported, not waited."""
    return float(_draw(rng, median))


class ApiClient:
    """One participant's keep-alive connection to the server's JSON API (stdlib only).

    A request that fails on a dropped connection is sent once more on a new one: every
    request a participant makes is safe to repeat (entering is an upsert, a submit
    carries its idempotency key).
    """

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self._conn: http.client.HTTPConnection | None = None
        #: the ``Humeval-Reason`` header of the last answer: why a participant was given nothing (wait, closed)
        self.last_reason = ""

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, *,
                token: str | None = None, expect: tuple[int, ...] = (200,)) -> tuple[int, Any]:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self._conn.request(method, path, body=data, headers=headers)
                response = self._conn.getresponse()
                raw = response.read()
                self.last_reason = response.getheader("humeval-reason") or ""
                break
            except (ConnectionError, http.client.HTTPException) as exc:
                self.close()
                if attempt == 2:
                    raise RehearsalError(f"rehearsal: {method} {path}: the server closed the connection ({exc})") from None
            except TimeoutError:
                self.close()
                raise RehearsalError(f"rehearsal: {method} {path}: no answer within {self.timeout:g}s") from None
        text = raw.decode("utf-8", "replace")
        if response.status not in expect:
            raise ApiRefused(method, path, response.status, text)
        if not text or "json" not in (response.getheader("content-type") or ""):
            return response.status, text or None
        try:
            return response.status, json.loads(text)
        except ValueError:
            raise RehearsalError(f"rehearsal: {method} {path}: the server sent malformed JSON ({text[:80]!r})") from None


def prompts_to_type(study: Any) -> list[str]:
    """The prompts a rehearsal's participants type in an arena with ``arena.prompts.typed`` (empty otherwise): those
    every ``recorded`` model has an answer to (so that a typed prompt can be answered), else those of
    ``arena.prompts.file``, else the data's prompts (the items' ``input``); within the length the rules allow."""
    arena = study.protocol.arena
    if arena is None or not arena.prompts.typed:
        return []
    from humeval.arena.models import read_recorded

    rules = arena.prompts
    recorded = [set(read_recorded(m, study.root)) for m in arena.models if m.kind == "recorded"]
    if recorded:
        pool = sorted(set.intersection(*recorded))
    elif rules.file:
        from humeval.arena.prompts import read_prompts

        pool = [p.text for p in read_prompts(study.root / rules.file)]
    else:
        pool = sorted({t.input for t in study.outputs().texts.values() if t.input})
    pool = [p for p in pool if rules.min_chars <= len(p.strip()) <= rules.max_chars]
    if not pool:
        raise RehearsalError("rehearsal: arena.prompts.typed, and no prompt to type within "
                             f"{rules.min_chars}-{rules.max_chars} characters: the recorded models answer no common "
                             "prompt, or arena.prompts.file and the data's inputs hold none")
    return pool

