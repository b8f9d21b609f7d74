"""An arena's prompts: from a prompt file and/or typed by participants, checked, de-duplicated; and the identity filter.

* :class:`PromptPool` holds the protocol's rules (:class:`humeval.protocol.arena.ArenaPrompts`) and the file's
  prompts. :meth:`PromptPool.draw` gives a prompt of the file (uniformly, from the caller's seeded generator);
  :meth:`PromptPool.offer` checks a typed prompt: its length (``min_chars`` .. ``max_chars``), the ``blocklist`` (whole
  words or phrases, case-insensitive) and ``blocklist_regex``, and its repeats.
* **Repeats.** A typed prompt is counted by its normalised text (:func:`prompt_key`: Unicode NFKC, case folded,
  everything but letters and digits dropped: "Hello!", "hello" and "HELLO ." are one prompt). Once a text has been
  used ``max_repeats`` times, the next offer of it is not used as typed: with ``repeats: file`` the battle gets a
  prompt of the file instead (the participant still votes; the decision says so), else it is refused. Why: the few
  prompts people type most ("hi", "hello", a famous riddle) would otherwise carry a large share of the votes, and a
  leaderboard would weigh models by how they greet (Chatbot Arena's duplicates are largely greetings and tester
  prompts, docs/arena.md#prompts). Capping at the source keeps every vote in the analysis (no post-hoc removal to explain) and is
  stateful only in a counter of keys, which the caller can seed from the votes stored (``seen``).
* **The identity filter** (:class:`IdentityFilter`): a battle whose answers (and prompt, with
  ``identity_in_prompt``) name a model or its maker is dropped, as Chatbot Arena does for anonymous battles. The
  words are the protocol's ``identity_words`` (:data:`humeval.protocol.arena.IDENTITY_WORDS` by default) and, from
  every model of the arena (:func:`identity_words`), its name, its API or table name, its maker and its aliases. They match as whole words, case-insensitively, with ``-``, ``_``, ``.``, ``/`` and
  white space between a name's parts interchangeable or absent ("GPT-4o" matches "gpt 4o" and "GPT4o"): a
  substring test would drop "metaphor" for "Meta" and "napalm" for "PaLM".
"""

from __future__ import annotations

import csv
import json
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from humeval.errors import DataError
from humeval.hashing import sha256_json
from humeval.protocol.arena import ArenaPrompts

__all__ = ["MESSAGES", "IdentityFilter", "Prompt", "PromptDecision", "PromptPool", "describe_problems", "identity_words",
           "prompt_key", "read_prompts"]

#: why a typed prompt is not used as typed (:attr:`PromptDecision.reason`)
REASONS = {
    "not_allowed": "the arena takes no typed prompts (prompts.typed: false)",
    "too_short": "shorter than prompts.min_chars",
    "too_long": "longer than prompts.max_chars",
    "blocked": "contains a word or phrase of prompts.blocklist, or matches prompts.blocklist_regex",
    "repeated": "its text was used prompts.max_repeats times already",
}


def _(message: str) -> str:
    """Mark ``message`` for the server's catalogue (extracted by ``python -m humeval.server.i18n``)."""
    return message


#: what a participant reads when a typed prompt is not used as typed (English msgids, ``%(name)s`` filled from
#: :attr:`PromptDecision.params`; the server shows them in the study's language, :meth:`PromptDecision.text`)
MESSAGES = {
    "not_allowed": _("This arena gives the prompts; typing one is not offered."),
    "too_short": _("Please write a prompt of at least %(min_chars)s characters."),
    "too_long": _("Please shorten the prompt to at most %(max_chars)s characters (it has %(chars)s)."),
    "blocked": _("This prompt cannot be used in this study; please write another."),
    "repeated": _("This prompt has been asked often already; please write another."),
    "replaced": _("This prompt has been asked often already; here is one from the study's list instead."),
}


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def prompt_key(text: str) -> str:
    """The key a prompt is counted by: NFKC, case folded, only letters and digits kept, words one space apart."""
    return " ".join(re.sub(r"[\W_]+", " ", _fold(text)).split())


def _compact(text: str) -> str:
    """A name without case, separators or punctuation ("GPT-4o", "gpt 4o" and "GPT4o" are one)."""
    return re.sub(r"[\W_]+", "", _fold(text))


def _word_pattern(word: str) -> str:
    """A whole-word, separator-tolerant pattern of ``word`` (its parts joined by any of ``-_./`` and white space,
    or by nothing), not preceded or followed by a letter or digit."""
    parts = [re.escape(p) for p in re.split(r"[\s\-_./]+", _fold(word).strip()) if p]
    return r"(?<![^\W_])" + r"[\s\-_./]*".join(parts) + r"(?![^\W_])"


@dataclass(frozen=True)
class Prompt:
    """One prompt of a battle: its ``id`` (the file's, or ``typed-<key hash>``), its text, and where it came from."""

    id: str
    text: str
    source: Literal["file", "typed"]

    @property
    def key(self) -> str:
        return prompt_key(self.text)


@dataclass(frozen=True)
class PromptDecision:
    """What became of a typed prompt: ``prompt`` is the one to use (the typed one, or a file prompt in its place;
    None when refused); ``reason`` is "" when used as typed, else a key of :data:`REASONS`; ``message`` says it to
    the participant."""

    prompt: Prompt | None
    reason: str = ""
    params: Mapping[str, int] = field(default_factory=dict)

    @property
    def message(self) -> str:
        """What the participant reads, in English ("" when used as typed)."""
        return self.text()

    def text(self, gettext: Callable[[str], str] | None = None, language: str = "en") -> str:
        """What the participant reads, through ``gettext`` (the study's catalogue,
        :func:`humeval.server.i18n.translations`), its numbers written as ``language`` writes them."""
        if not self.reason:
            return ""
        from babel.numbers import format_decimal

        msgid = MESSAGES["replaced" if self.prompt is not None else self.reason]
        translated = (gettext or (lambda m: m))(msgid)
        return translated % {k: format_decimal(v, locale=language) for k, v in self.params.items()}

    @property
    def accepted(self) -> bool:
        """The typed prompt is used as typed."""
        return self.prompt is not None and not self.reason

    @property
    def replaced(self) -> bool:
        """A prompt of the file is used instead of the typed one."""
        return self.prompt is not None and bool(self.reason)


class _Random(Protocol):
    def integers(self, high: int) -> Any: ...


def read_prompts(path: Path, where: str = "arena.prompts.file") -> list[Prompt]:
    """The prompts of a file: ``.jsonl`` / ``.csv`` rows with ``text`` (or ``prompt``) and an optional ``id``
    (default: the row's number), or ``.txt`` with one prompt a line (ids: line numbers)."""
    if not path.is_file():
        raise DataError(f"{where}: {path} not found")
    suffix = path.suffix.lower()
    rows: list[tuple[str, Any]] = []
    if suffix == ".txt":
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                rows.append((str(n), line))
    elif suffix in (".jsonl", ".csv"):
        if suffix == ".csv":
            with path.open(encoding="utf-8", newline="") as fh:
                records: list[Any] = list(csv.DictReader(fh))
        else:
            records = []
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    try:
                        records.append(json.loads(line))
                    except ValueError as exc:
                        raise DataError(f"{where}: {path} line {n} is not JSON ({exc})") from None
        for n, record in enumerate(records, 1):
            if not isinstance(record, dict) or not isinstance(record.get("text", record.get("prompt")), str):
                raise DataError(f"{where}: {path} row {n} has no `text` (or `prompt`) field")
            rows.append((str(record.get("id", n)), record.get("text", record.get("prompt"))))
    else:
        raise DataError(f"{where}: {path} has suffix {suffix!r}; a prompt file is .jsonl, .csv or .txt")
    ids = Counter(i for i, _ in rows)
    twice = sorted(i for i, c in ids.items() if c > 1)
    if twice:
        raise DataError(f"{where}: {path}: prompt id(s) {', '.join(twice[:5])} given more than once")
    if not rows:
        raise DataError(f"{where}: {path} holds no prompt")
    return [Prompt(i, str(text), "file") for i, text in rows]


def describe_problems(bad: Sequence[tuple[int, Prompt, str]], most: int = 5) -> str:
    """The prompts of :meth:`PromptPool.problems` as one sentence: each one's id, its row and the rule it breaks."""
    def one(n: int, p: Prompt, why: str) -> str:
        size = f", {len(p.text.strip()):,} characters" if why in ("too_short", "too_long") else ""
        return f"{p.id} (row {n}{size}): {REASONS[why]}"

    return "; ".join(one(*b) for b in bad[:most]) + ("; ..." if len(bad) > most else "")


class PromptPool:
    """The prompts of an arena and their rules; :meth:`draw` and :meth:`offer` are safe from several threads.

    ``prompts``: the file's (:func:`read_prompts`; each must pass the rules, else :class:`DataError` names it;
    ``strict=False`` keeps them, for :meth:`problems` to list: ``humeval validate``);
    ``seen``: uses so far by :func:`prompt_key` (the pool's own counter of :meth:`offer`)."""

    def __init__(self, rules: ArenaPrompts, prompts: Sequence[Prompt] = (), seen: Mapping[str, int] | None = None,
                 *, strict: bool = True) -> None:
        self.rules = rules
        self.prompts = list(prompts)
        self.seen: Counter[str] = Counter(dict(seen or {}))
        self._lock = threading.Lock()
        self._blocked = [re.compile(_word_pattern(w)) for w in rules.blocklist]
        self._blocked_regex = [re.compile(p, re.IGNORECASE) for p in rules.blocklist_regex]
        bad = self.problems() if strict else []
        if bad:
            raise DataError(f"arena.prompts.file: {len(bad)} prompt(s) break the prompt rules: "
                            + describe_problems(bad))

    @classmethod
    def from_rules(cls, rules: ArenaPrompts, root: Path | str = ".", seen: Mapping[str, int] | None = None) -> PromptPool:
        """The pool of ``rules`` with its file read (relative to the study folder ``root``)."""
        prompts = read_prompts(Path(root) / rules.file) if rules.file else []
        return cls(rules, prompts, seen)

    def check(self, text: str) -> str:
        """Why ``text`` breaks the length or blocklist rules (a key of :data:`REASONS`), or "" when it does not."""
        size = len(text.strip())
        if size < self.rules.min_chars:
            return "too_short"
        if size > self.rules.max_chars:
            return "too_long"
        folded = _fold(text)
        if any(p.search(folded) for p in self._blocked) or any(p.search(text) for p in self._blocked_regex):
            return "blocked"
        return ""

    def draw(self, rng: _Random) -> Prompt:
        """A prompt of the file, uniformly at random (``rng``: a seeded ``numpy.random.Generator``)."""
        if not self.prompts:
            raise DataError("arena.prompts.file: the arena has no prompt file to draw from")
        return self.prompts[int(rng.integers(len(self.prompts)))]

    def refusal(self, text: str) -> PromptDecision | None:
        """The decision on a typed prompt that breaks the rules of :meth:`check` (or any typed prompt, when the arena
        takes none); None when ``text`` may be used, its repeats aside."""
        rules = self.rules
        if not rules.typed:
            return PromptDecision(None, "not_allowed")
        why = self.check(text)
        if why == "too_short":
            return PromptDecision(None, why, {"min_chars": rules.min_chars})
        if why == "too_long":
            return PromptDecision(None, why, {"max_chars": rules.max_chars, "chars": len(text.strip())})
        return PromptDecision(None, why) if why else None

    def repeated(self, rng: _Random | None = None) -> PromptDecision:
        """The decision on a typed prompt used ``max_repeats`` times: a prompt of the file in its place
        (``repeats: file``, a file, ``rng`` to draw it), else refused."""
        if self.rules.repeats == "file" and self.prompts and rng is not None:
            return PromptDecision(self.draw(rng), "repeated")
        return PromptDecision(None, "repeated")

    @staticmethod
    def typed_prompt(text: str) -> Prompt:
        """The prompt a typed ``text`` is used as (its id from its key, so one text has one id)."""
        return Prompt(f"typed-{sha256_json(prompt_key(text))[:16]}", text.strip(), "typed")

    def offer(self, text: str, rng: _Random | None = None) -> PromptDecision:
        """A participant's typed prompt: used as typed, replaced by a file prompt (``repeats: file``; ``rng``
        draws it), or refused; a prompt used (as typed) is counted in :attr:`seen` (this pool's own counter: the
        server counts in the store instead, :func:`humeval.store.generations.claim_typed_prompt`)."""
        refused = self.refusal(text)
        if refused is not None:
            return refused
        key = prompt_key(text)
        with self._lock:
            if self.seen[key] >= self.rules.max_repeats:
                return self.repeated(rng)
            self.seen[key] += 1
        return PromptDecision(self.typed_prompt(text))

    def problems(self) -> list[tuple[int, Prompt, str]]:
        """The file's prompts that break the rules of :meth:`check`: (their row in the file, 1-based; the prompt;
        the key of :data:`REASONS`)."""
        return [(n, p, why) for n, p in enumerate(self.prompts, 1) if (why := self.check(p.text))]


def identity_words(models: Iterable[Any], extra: Iterable[str] = ()) -> list[str]:
    """The words of the identity filter: ``extra`` (the protocol's ``identity_words``) and, for each model spec, its
    name, its ``model`` (the API name or the table's), its maker and its aliases. Words of fewer than 2 characters
    are left out (they would match everywhere). A name's parts are not added on their own (a family name belongs
    in ``aliases``): see docs/arena.md#prompts for what the leading words of LLMFAO's names caught."""
    words = list(extra)
    for spec in models:
        words += [spec.name, getattr(spec, "model", "") or "", spec.maker, *spec.aliases]
    return list(dict.fromkeys(w.strip() for w in words if len(w.strip()) >= 2))


class IdentityFilter:
    """Finds the names of models and makers in a text (whole words, case-insensitive, separators optional)."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = list(dict.fromkeys(w for w in words if w.strip()))
        # one alternation, the longest first, so "Meta AI" is reported rather than "Meta"
        ordered = sorted(self.words, key=lambda w: -len(w))
        self._names = {_compact(w): w for w in reversed(ordered)}
        self._pattern = re.compile("|".join(f"(?:{_word_pattern(w)})" for w in ordered)) if ordered else None

    @classmethod
    def for_arena(cls, models: Iterable[Any], rules: ArenaPrompts | None = None) -> IdentityFilter:
        """The filter of an arena: its models' words and the prompt rules' ``identity_words``."""
        return cls(identity_words(models, (rules or ArenaPrompts(typed=True)).identity_words))

    def find(self, text: str) -> list[str]:
        """The words of the filter that ``text`` uses, as the filter lists them, in the order they first appear."""
        if self._pattern is None:
            return []
        found = (self._names.get(_compact(m.group(0)), m.group(0)) for m in self._pattern.finditer(_fold(text)))
        return list(dict.fromkeys(found))

    def battle(self, answers: Sequence[str], prompt: str = "", *, in_prompt: bool = True) -> list[str]:
        """The names that drop a battle: those its answers use, and its prompt's when ``in_prompt``; [] keeps it."""
        texts = [*answers, *([prompt] if in_prompt and prompt else [])]
        return list(dict.fromkeys(w for t in texts for w in self.find(t)))
