"""Asking a judge: the requests of every output or pair, the answers (cached), the judge's file and what it cost.

For a judge with ``llm`` (``data.judges``), :func:`ask_judge` renders one prompt per request and
asks the endpoint (:class:`~humeval.judging.client.ChatClient`), through the answer cache
(:class:`~humeval.judging.cache.AnswerCache`):

* ``scores``: one request per output (every item of the data, every system); the answer is
  read by :func:`~humeval.judging.prompt.parse_score`;
* ``verdicts``: per item, every pair of systems (sorted names, ``system_a`` < ``system_b``) is
  asked in both orders, ``system_a`` first and then ``system_b`` first (position swap). When both
  answers are read and name the same winner, that is the verdict; when they differ, ``llm.swap``
  says: ``tie`` records a tie, ``drop`` leaves the pair out. A pair with a refused or unparseable
  answer gets no verdict.

Refusals (``message.refusal``, or ``finish_reason: content_filter``) and unparseable answers are
counted, never guessed. Every attempt is written to the ledger before it is sent
(:mod:`humeval.judging.ledger`), and the summary's ``spend`` counts every request the ledger holds
for the judge, from every run, a killed one included. ``llm.run_timeout`` bounds the whole run.
The judge's file (``data.judges[].file``) gets one row per verdict or score with the SHA-256 of the prompt template (``prompt_sha256``) and of the requests that
produced it (``request_sha256``); a second file beside it (``<stem>.answers.jsonl``) keeps
every answer as the endpoint gave it.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Coroutine
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from humeval.errors import DataError, ProtocolError, did_you_mean
from humeval.files import write_jsonl
from humeval.judging.cache import AnswerCache, request_key
from humeval.judging.client import ChatClient, JudgeError, Reply, chat_body, estimate_tokens, read_key
from humeval.judging.ledger import Ledger, spend
from humeval.judging.prompt import (
    Template,
    judge_criterion,
    load_template,
    parse_score,
    parse_verdict,
    template_problems,
)
from humeval.protocol.models import Judge
from humeval.study import StudyFolder

__all__ = ["Ask", "JudgeRun", "answers_file", "ask_judge", "cache_file", "ledger_file", "llm_judges", "plan_requests"]


def cache_file(study: StudyFolder) -> Path:
    """The answer cache of every judge of the study."""
    return study.state_dir / "judge-cache.sqlite"


def ledger_file(study: StudyFolder) -> Path:
    """The ledger of every request sent to every judge of the study (:mod:`humeval.judging.ledger`)."""
    return study.state_dir / "judge-ledger.jsonl"


def answers_file(study: StudyFolder, judge: Judge) -> Path:
    """Every answer of ``judge`` as the endpoint gave it, beside its file (``<stem>.answers.jsonl``)."""
    path = study.root / judge.file
    return path.with_name(f"{path.stem}.answers.jsonl")


def llm_judges(study: StudyFolder, names: list[str] | None = None) -> list[Judge]:
    """The judges ``humeval judge`` asks: those with ``llm`` (all, or those named)."""
    declared = {j.name: j for j in study.protocol.data.judges}
    asked = [j for j in declared.values() if j.llm is not None]
    if not names:
        if not asked:
            raise ProtocolError(f"{study.protocol_file}: no judge to ask: declare one under data.judges with an `llm` "
                                "section (endpoint, model, prompt; see docs/judges.md)")
        return asked
    out = []
    for name in names:
        if name not in declared:
            raise ProtocolError(f"data.judges: no judge '{name}'. {did_you_mean(name, list(declared))}")
        if declared[name].llm is None:
            raise ProtocolError(f"data.judges[{name}]: no `llm` section, so `humeval judge` cannot ask it (its file "
                                f"{declared[name].file} is made elsewhere)")
        out.append(declared[name])
    return out


@dataclass(frozen=True)
class Ask:
    """One request: its cache key and body, and what it asks (``order``: ``ab`` or ``ba`` for a pair, ``""`` for
    an output)."""

    key: str
    body: dict[str, Any]
    item_id: str
    systems: tuple[str, ...]
    order: str
    chars: int


def _body(judge: Judge, prompt: str) -> dict[str, Any]:
    llm = judge.llm
    assert llm is not None
    return chat_body(llm.model, prompt, system=llm.system, temperature=llm.temperature, max_tokens=llm.max_tokens,
                     top_p=llm.top_p, seed=llm.seed, params=llm.params)


def plan_requests(study: StudyFolder, judge: Judge) -> tuple[Template, list[Ask]]:
    """The template and every request of ``judge``, in a fixed order (items as in the data, systems sorted)."""
    problems = template_problems(judge, study.protocol, study.root)
    if problems:
        raise ProtocolError("\n".join(problems), problems)
    llm = judge.llm
    assert llm is not None
    template = load_template(judge, study.root)
    criterion = judge_criterion(judge, study.protocol)
    about = {"criterion": criterion.name, "question": criterion.question,
             "definition": criterion.definition} if criterion is not None else {}
    outputs = study.outputs()
    items = list(dict.fromkeys(outputs.frame["item_id"].astype(str)))
    systems = outputs.systems
    url = llm.base_url.rstrip("/") + "/chat/completions"
    asks = []

    def add(item: str, shown: tuple[str, ...], order: str, values: dict[str, str]) -> None:
        prompt = template.render(about | values)
        body = _body(judge, prompt)
        chars = sum(len(m["content"]) for m in body["messages"])
        asks.append(Ask(request_key(url, body), body, item, shown, order, chars))

    for item in items:
        texts = {s: outputs.text(item, s) for s in systems}
        present = [s for s in systems if texts[s].output]
        if not present:
            continue
        first = texts[present[0]]
        common = {"input": first.input, "references": first.references}
        if judge.kind == "scores":
            for s in present:
                add(item, (s,), "", common | {"output": texts[s].output})
        else:
            for a, b in combinations(present, 2):
                add(item, (a, b), "ab", common | {"output_a": texts[a].output, "output_b": texts[b].output})
                add(item, (a, b), "ba", common | {"output_a": texts[b].output, "output_b": texts[a].output})
    if not asks:
        raise DataError(f"judge '{judge.name}': the data has no output to judge"
                        + (" (a verdicts judge needs two systems' outputs of one item)" if judge.kind == "verdicts" else ""))
    return template, asks


# --------------------------------------------------------------------------- running


@dataclass
class JudgeRun:
    """What one judge's run did and found (the logbook's summary of it, :meth:`summary`)."""

    judge: Judge
    prompt_sha256: str
    prompt_source: str
    asked: int = 0
    from_cache: int = 0
    answered_now: int = 0
    failed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_in_all: int = 0
    tokens_out_all: int = 0
    refusals: int = 0
    unparseable: int = 0
    units: int = 0
    rows: int = 0
    incomplete: int = 0
    swaps_disagreed: int = 0
    swaps_compared: int = 0
    first_shown_chosen: int = 0
    decisive: int = 0
    usage_estimated: int = 0
    usage_estimated_all: int = 0
    client: dict[str, Any] = field(default_factory=dict)
    spend: dict[str, Any] = field(default_factory=dict)

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        llm = self.judge.llm
        assert llm is not None
        return round(tokens_in * llm.price_input / 1e6 + tokens_out * llm.price_output / 1e6, 6)

    def summary(self) -> dict[str, Any]:
        llm = self.judge.llm
        assert llm is not None
        out: dict[str, Any] = {
            "model": llm.model, "endpoint": llm.base_url, "kind": self.judge.kind,
            "prompt_sha256": self.prompt_sha256, "prompt_source": self.prompt_source,
            "requests": self.client.get("requests", 0), "asked": self.asked, "from_cache": self.from_cache,
            "answered_now": self.answered_now, "failed": self.failed,
            "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "currency": llm.currency,
            "cost": self.cost(self.tokens_in, self.tokens_out),
            "tokens_in_all": self.tokens_in_all, "tokens_out_all": self.tokens_out_all,
            "cost_all": self.cost(self.tokens_in_all, self.tokens_out_all),
            # tokens of answers whose usage the endpoint did not give (or gave invalid) are estimated from the text
            "usage_estimated": self.usage_estimated, "cost_estimated": self.usage_estimated > 0,
            "usage_estimated_all": self.usage_estimated_all, "cost_all_estimated": self.usage_estimated_all > 0,
            "refusals": self.refusals, "unparseable": self.unparseable,
            "units": self.units, "rows": self.rows, "incomplete": self.incomplete, "client": self.client,
            "spend": self.spend,
        }
        if self.judge.kind == "verdicts":
            out |= {"swap": llm.swap, "swaps_compared": self.swaps_compared, "swaps_disagreed": self.swaps_disagreed,
                    "position_consistency": round(1 - self.swaps_disagreed / self.swaps_compared, 6)
                    if self.swaps_compared else None,
                    "first_shown_chosen": round(self.first_shown_chosen / self.decisive, 6) if self.decisive else None}
        return out


def _run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to its end, also from inside a running event loop (a notebook): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 (handed to the caller's thread)
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _answer(asks: list[Ask], client: ChatClient, cache: AnswerCache, ledger: Ledger, url: str,
                  run: JudgeRun, progress: bool) -> tuple[dict[str, Reply], list[str]]:
    """Every request's reply (from the cache, else asked now); the messages of requests that failed.

    Raises :class:`JudgeError` when a request is refused, or when the run takes longer than ``llm.run_timeout``
    (the answers received by then are cached)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    unique = list({a.key: a for a in asks}.values())
    replies: dict[str, Reply] = {}
    todo = []
    for ask in unique:
        hit = cache.get(ask.key)
        if hit is not None:
            replies[ask.key] = hit
        else:
            todo.append(ask)
    run.from_cache = len(unique) - len(todo)
    failures: list[str] = []
    columns = (TextColumn(f"judge {run.judge.name}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True,
                  disable=not progress or not todo) as bar:
        task = bar.add_task("", total=len(todo))

        llm = run.judge.llm
        assert llm is not None

        async def one(ask: Ask) -> None:
            record = ledger.recorder(ask.key, estimate_tokens(ask.chars), llm.max_tokens)
            try:
                reply = await client.complete(ask.body, record)
            except JudgeError as exc:
                if "no usable answer" not in str(exc):
                    raise  # a refused request (4xx): every other would be refused alike
                failures.append(str(exc))
            else:
                cache.put(ask.key, url, llm.model, reply)
                replies[ask.key] = reply
                run.answered_now += 1
                run.tokens_in += reply.tokens_in
                run.tokens_out += reply.tokens_out
                run.usage_estimated += bool(reply.usage_estimated)
            bar.advance(task)

        try:
            async with asyncio.timeout(llm.run_timeout):
                try:
                    async with client, asyncio.TaskGroup() as group:
                        for ask in todo:
                            group.create_task(one(ask))
                except* JudgeError as group_error:
                    raise group_error.exceptions[0] from None
        except TimeoutError:
            raise JudgeError(f"judge '{run.judge.name}': the run took longer than its run_timeout "
                             f"({llm.run_timeout:g} s; data.judges[{run.judge.name}].llm.run_timeout): "
                             f"{run.answered_now} of {len(todo)} request(s) answered now, {run.from_cache} from the "
                             f"cache; the answers received are cached in {cache.path}: run `humeval judge` again to "
                             "resume") from None
    return replies, failures


def ask_judge(study: StudyFolder, judge: Judge, *, progress: bool | None = None, transport: Any = None) -> JudgeRun:
    """Ask ``judge``'s endpoint for every output or pair (through the cache) and write its file and answers file.

    Raises :class:`JudgeError` when the endpoint refuses a request (4xx) or some requests got no
    usable answer after their retries (the answers received are cached: a re-run resumes).
    """
    llm = judge.llm
    if llm is None:
        raise ProtocolError(f"data.judges[{judge.name}]: no `llm` section")
    template, asks = plan_requests(study, judge)
    key = read_key(llm, study.root, judge.name)
    run = JudgeRun(judge, template.sha256, template.source, asked=len({a.key for a in asks}))
    url = llm.base_url.rstrip("/") + "/chat/completions"
    client = ChatClient(llm.base_url, key, timeout=llm.timeout, retries=llm.retries, backoff=llm.backoff,
                        concurrency=llm.concurrency, transport=transport)
    ledger = Ledger(ledger_file(study), judge.name)

    def account() -> None:  # what was sent so far, from this run and every earlier one (a killed one included)
        run.client = client.counters.to_json()
        run.spend = spend(ledger.path, judge.name).to_json(llm.price_input, llm.price_output)

    with AnswerCache(cache_file(study)) as cache:
        try:
            replies, failures = _run_sync(_answer(asks, client, cache, ledger, url, run,
                                                  sys.stderr.isatty() if progress is None else progress))
        except JudgeError as exc:
            account()
            raise JudgeError(str(exc), run.summary()) from None
    account()
    run.failed = len(failures)
    if failures:
        raise JudgeError(f"judge '{judge.name}': {len(failures)} of {run.asked} request(s) got no usable answer "
                         f"({run.answered_now} answered now, {run.from_cache} from the cache); the answers received "
                         f"are cached in {cache_file(study)}: run `humeval judge` again to resume. First: {failures[0]}",
                         run.summary())
    for reply in replies.values():
        run.tokens_in_all += reply.tokens_in
        run.tokens_out_all += reply.tokens_out
        run.usage_estimated_all += bool(reply.usage_estimated)
    rows, answers = _collect(judge, template, asks, replies, run)
    _write(study.root / judge.file, rows)
    write_jsonl(answers_file(study, judge), answers)
    return run


def _read(judge: Judge, reply: Reply) -> tuple[str, Any]:
    """``("refusal", None)``, ``("unparseable", None)`` or ``("ok", value)`` for one reply."""
    llm = judge.llm
    assert llm is not None
    if reply.refused:
        return "refusal", None
    text = reply.content or ""
    value = parse_verdict(text) if judge.kind == "verdicts" else parse_score(text, llm.score_min, llm.score_max)
    return ("unparseable", None) if value is None else ("ok", value)


def _collect(judge: Judge, template: Template, asks: list[Ask], replies: dict[str, Reply],
             run: JudgeRun) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The judge file's rows and the answers file's rows, counting refusals, unparseable answers and swaps."""
    llm = judge.llm
    assert llm is not None
    answers, rows = [], []
    read: dict[int, tuple[str, Any]] = {}
    for i, ask in enumerate(asks):
        reply = replies[ask.key]
        status, value = read[i] = _read(judge, reply)
        run.refusals += status == "refusal"
        run.unparseable += status == "unparseable"
        answers.append({"item_id": ask.item_id, "systems": list(ask.systems), "order": ask.order,
                        "request_sha256": ask.key, "status": status, "parsed": value, **reply.to_json()})
    if judge.kind == "scores":
        for i, ask in enumerate(asks):
            run.units += 1
            status, value = read[i]
            if status != "ok":
                run.incomplete += 1
                continue
            rows.append({"item_id": ask.item_id, "system": ask.systems[0], "score": value,
                         "prompt_sha256": template.sha256, "request_sha256": ask.key})
    else:
        for i in range(0, len(asks), 2):
            ab, ba = asks[i], asks[i + 1]
            a, b = ab.systems
            run.units += 1
            (s1, v1), (s2, v2) = read[i], read[i + 1]
            if s1 != "ok" or s2 != "ok":
                run.incomplete += 1
                continue
            first = {"A": a, "B": b, "tie": "tie"}[v1]
            second = {"A": b, "B": a, "tie": "tie"}[v2]
            for v in (v1, v2):
                if v != "tie":
                    run.decisive += 1
                    run.first_shown_chosen += v == "A"
            run.swaps_compared += 1
            consistent = first == second
            if not consistent:
                run.swaps_disagreed += 1
                if llm.swap == "drop":
                    continue
            rows.append({"item_id": ab.item_id, "system_a": a, "system_b": b,
                         "winner": first if consistent else "tie", "winner_ab": first, "winner_ba": second,
                         "consistent": consistent, "prompt_sha256": template.sha256,
                         "request_sha256": f"{ab.key} {ba.key}"})
    run.rows = len(rows)
    return rows, answers


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    """The judge's file, in the format its suffix names (what :func:`humeval.data.judges.read_judge` reads)."""
    from humeval.data.readers import write_table

    write_table(path, rows, what="a judge's file")
