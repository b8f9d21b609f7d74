"""Admin pages behind the admin token: progress, recruitment, participants, live decision, agreement, export."""

from __future__ import annotations

import hmac
import io
import json
from collections.abc import Iterator
from typing import Any

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from humeval.errors import HumevalError
from humeval.extras import require
from humeval.files import csv_chunks, jsonl_chunks
from humeval.server.agreement import agreement_so_far
from humeval.server.errors import BadRequest, HttpError, NotFound, Unauthorized
from humeval.server.plot import bound_svg
from humeval.server.recruitment import recruitment_view
from humeval.server.throttle import is_https
from humeval.server.tokens import admin_cookie, admin_cookie_valid
from humeval.store.store import Store

__all__ = ["admin_routes", "export_bytes", "pairwise_boards"]

ADMIN_COOKIE = "humeval_admin"
#: rows per page of the admin page's item and participant tables (a study can have 100,000 items)
PAGE = 50
FORMATS = {"csv": "text/csv", "jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}


def _store(request: Request) -> Store:
    return request.app.state.store


def _require(request: Request) -> None:
    config = request.app.state.config
    if not admin_cookie_valid(_store(request).context.secret, config.admin_token, request.cookies.get(ADMIN_COOKIE),
                              config.admin_session_seconds):
        raise Unauthorized("unauthorized", "Admin pages need the admin token (or the admin session expired): open "
                           "/admin?token=<admin token>.")


def export_chunks(rows: list[dict[str, Any]], fmt: str) -> Iterator[bytes]:
    """The canonical judgements table (``rows`` from :meth:`Store.judgement_rows`) in ``fmt``, chunk by chunk.

    CSV and JSON lines are encoded as they are sent (no pandas, no whole file in memory);
    Parquet, a columnar file, is built whole (pyarrow, the ``parquet`` extra).
    """
    from humeval.judgements import JUDGEMENT_COLUMNS

    if fmt == "csv":
        yield from csv_chunks(rows, JUDGEMENT_COLUMNS)
    elif fmt == "parquet":
        require("pyarrow", "the Parquet export")
        import pandas as pd

        buf = io.BytesIO()
        pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS).to_parquet(buf, index=False)
        yield buf.getvalue()
    else:
        yield from jsonl_chunks({c: r.get(c) for c in JUDGEMENT_COLUMNS} for r in rows)


def export_bytes(store: Store, fmt: str) -> bytes:
    """The canonical judgements table in ``fmt`` (csv, jsonl, parquet) as one byte string."""
    return b"".join(export_chunks(store.judgement_rows(), fmt))


def pairwise_boards(store: Store, rows: list[dict[str, Any]], goals: dict[str, Any] | None = None) -> dict[str, Any]:
    """Per pairwise criterion (``2afc``, ``battle``) over K >= 3 systems: its live leaderboard
    (:func:`humeval.stopping.board.arena_board`) on the task votes so far, in the order they were submitted.

    A criterion a goal watches (``stopping.goal`` over K systems) is decided by the goal rule, whose server skips the
    pairs it no longer needs: its pooled statements would not hold, so it keeps the goal's direct board
    (``store.leaderboards``) and gets the scores and the votes per pair only (``kind`` ``direct``). A goal decided on
    pooled statements (``stopping.pooling``) shows the goal's own pooled rank sets (``goals``: ``store.leaderboards``;
    ``kind`` ``pooled``, or ``direct`` once its fit check withdrew them), the statements the decision reads."""
    from humeval.stopping.board import TIE_CHOICES, arena_board

    ctx = store.context
    out: dict[str, Any] = {}
    choices = ("A", "B", *TIE_CHOICES)
    for crit in ctx.protocol.criteria:
        if not crit.task.pairwise:
            continue
        comp = ctx.comparisons.get(crit.name)
        multi = comp is not None and comp.multi
        systems = list(comp.members) if multi and comp is not None else list(ctx.systems)
        if len(systems) < 3:
            continue
        votes = sorted((r for r in rows if r["criterion"] == crit.name and r["kind"] in ("task", "")
                        and r["choice"] in choices and r["system"] in systems and r["system_b"] in systems),
                       key=lambda r: r["submitted_at"] or "")
        board = arena_board(systems, [r["system"] for r in votes], [r["system_b"] for r in votes],
                            [r["choice"] for r in votes], delta=comp.delta if comp is not None else 0.05,
                            seed=ctx.protocol.study.seed)
        names = board.systems
        goal = (goals or {}).get(crit.name) if multi else None
        ranks = {i: (int(board.rank_low[i]), int(board.rank_high[i])) for i in range(len(names))}
        kind = "direct" if multi else board.basis
        if goal is not None and goal.get("pooling"):
            by_name = {r["system"]: (r["rank_low"], r["rank_high"]) for r in goal["rows"]}
            ranks = {i: by_name[n] for i, n in enumerate(names)}
            kind = goal["basis"]
        out[crit.name] = {
            "goal_rule": multi, "kind": kind, "board": board, "votes": board.votes,
            "rows": [{"system": names[i], "score": float(board.theta[i]), "rank_low": ranks[i][0],
                      "rank_high": ranks[i][1], "won": int(board.wins[i].sum()),
                      "lost": int(board.wins[:, i].sum()), "ties": int(board.ties[i].sum())} for i in board.order],
            "matrix": [{"system": names[i], "cells": [None if i == j else {"won": int(board.wins[i, j]),
                                                                            "lost": int(board.wins[j, i]),
                                                                            "ties": int(board.ties[i, j])}
                                                      for j in board.order]} for i in board.order],
            "columns": [names[j] for j in board.order],
        }
    return out


def _page(request: Request, name: str) -> int:
    """The page number in query parameter ``name`` (0 when absent; a 400 error naming it when not a count)."""
    value = request.query_params.get(name, "0")
    if not (value.isascii() and value.isdigit()) or len(value) > 9:
        raise BadRequest("invalid_value", f"query parameter '{name}': expected a page number (0, 1, 2, ...), got {value[:20]!r}",
                         field=name)
    return int(value)


async def admin_page(request: Request) -> Response:
    token = request.query_params.get("token")
    if token is not None:
        config = request.app.state.config
        if not hmac.compare_digest(token.encode(), config.admin_token.encode()):
            raise Unauthorized("unauthorized", "wrong admin token")
        response = RedirectResponse("/admin", status_code=303)
        response.set_cookie(ADMIN_COOKIE, admin_cookie(_store(request).context.secret, config.admin_token),
                            max_age=config.admin_session_seconds, httponly=True, samesite="strict",
                            secure=is_https(request, request.app.state.guard.trusted))
        return response
    _require(request)
    store = _store(request)

    items_page, people_page = _page(request, "items"), _page(request, "participants")

    def gather() -> dict[str, Any]:
        rows = store.judgement_rows()
        stopping = store.stopping()
        boards = store.leaderboards()
        pairwise = pairwise_boards(store, rows, boards)
        for st in stopping:
            st["svg"] = Markup("") if st["comparison"] in boards else Markup(bound_svg(st["curve"]))
            st["board"] = boards.get(st["comparison"])
            st["pairwise"] = pairwise.get(st["comparison"])
        comments = [j for j in store.judgements() if j.get("comment")]
        overview = store.overview(items_limit=PAGE, items_offset=items_page * PAGE)
        pages = {"items": items_page, "participants": people_page, "size": PAGE,
                 "items_last": max(overview["item_totals"]["items"] - 1, 0) // PAGE,
                 "participants_last": max(overview["counts"]["participants"] - 1, 0) // PAGE}
        return {"overview": overview, "participants": store.participants(limit=PAGE, offset=people_page * PAGE),
                "stopping": stopping, "arena_boards": {c: b for c, b in pairwise.items() if not b["goal_rule"]},
                "agreement": agreement_so_far(store.context.protocol, rows), "pages": pages,
                "comments": comments[-200:], "recruitment": recruitment_view(store),
                "exclusion": store.exclusion_overview(), "waves": _waves_view(store)}

    data = await run_in_threadpool(gather)
    return request.app.state.templates.TemplateResponse(request, "admin.html", {"study": store.context.protocol.study.name, **data})


def _waves_view(store: Any) -> list[dict[str, Any]]:
    """The confirmation waves with what the page prints: the decided side's name, the opening time (UTC) and the
    flag's threshold (the most wins for the decided side that flag)."""
    protocol = store.context.protocol
    if protocol.stopping is None or protocol.stopping.wave is None:
        return []
    import datetime as dt

    from humeval.stats.drift import confirmation_threshold

    def utc(t: float | None) -> str:
        return "" if t is None else dt.datetime.fromtimestamp(float(t), dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")

    out = []
    for w in store.waves():
        comp = store.context.comparisons[w["comparison"]]
        out.append(w | {"side_name": comp.system_a if w["side"] else comp.system_b, "opens": utc(w["opens_at"]),
                        "opened": utc(w["opened_at"]), "closed": utc(w["closed_at"]),
                        "threshold": int(confirmation_threshold(int(w["size"]), protocol.analysis.alpha)[0])})
    return out


async def admin_export(request: Request) -> Response:
    _require(request)
    fmt = request.path_params["fmt"]
    if fmt not in FORMATS:
        raise NotFound("not_found", f"unknown export format '{fmt}'; available: {', '.join(FORMATS)}")
    if fmt == "parquet":
        try:
            require("pyarrow", "the Parquet export")  # refused before the download starts
        except HumevalError as exc:
            raise HttpError("missing_extra", str(exc), status=501) from None
    rows = await run_in_threadpool(_store(request).judgement_rows)
    return StreamingResponse(export_chunks(rows, fmt), media_type=FORMATS[fmt],  # sync iterator: run in a thread
                             headers={"content-disposition": f'attachment; filename="judgements.{fmt}"'})


async def admin_json(request: Request) -> Response:
    _require(request)
    rows = await run_in_threadpool(_store(request).judgements)
    return Response(json.dumps(rows), media_type="application/json")


def admin_routes() -> list[Route]:
    return [
        Route("/admin", admin_page, methods=["GET"]),
        Route("/admin/export.{fmt}", admin_export, methods=["GET"]),
        Route("/admin/judgements.json", admin_json, methods=["GET"]),
    ]
