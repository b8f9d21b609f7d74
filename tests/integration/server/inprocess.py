"""The web app in-process (httpx.ASGITransport, as datasette tests do): no subprocess, no port.

``InProcess(study, db)`` prepares the store and builds the app from a :class:`ServerConfig`;
``run(fn)`` runs ``await fn(client)`` with a client whose peer address is ``peer``. :func:`drive_clock` makes
the store's modules read a driven :class:`Clock`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any

import httpx
from sqlalchemy import func, select

from humeval.server.app import create_app
from humeval.server.config import ServerConfig
from humeval.store import assign as store_assign
from humeval.store import participants as store_participants
from humeval.store import schema as s
from humeval.store import submit as store_submit
from humeval.store.store import Store
from humeval.study import StudyFolder

ADMIN = "in-process-admin-token-0123456789"
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}


class Clock:
    """``time`` for the store's modules: ``time()`` is driven, everything else the real module."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def drive_clock(monkeypatch: Any, *more: ModuleType) -> Clock:
    """A :class:`Clock` that the store's modules that read the time (and ``more``) read from now on."""
    c = Clock()
    for module in (store_assign, store_submit, store_participants, *more):
        monkeypatch.setattr(module, "time", c)
    return c


class InProcess:
    def __init__(self, study: StudyFolder, db: str | None = None, **config: Any) -> None:
        self.study = study
        self.store = Store.open(study, db)
        self.store.prepare()
        self.config = ServerConfig(study_dir=str(study.root), admin_token=ADMIN, db=db, **config)
        self.app = create_app(self.config, self.store)

    def client(self, peer: str = "127.0.0.1", scheme: str = "http", **kw: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app, client=(peer, 4321)),
                                 base_url=f"{scheme}://testserver", **kw)

    def run(self, body: Callable[[httpx.AsyncClient], Awaitable[Any]], peer: str = "127.0.0.1", **kw: Any) -> Any:
        async def main() -> Any:
            async with self.client(peer, **kw) as c:
                return await body(c)

        return asyncio.run(main())

    def count(self, table: Any) -> int:
        return self.store.read(lambda c: c.execute(select(func.count()).select_from(table)).scalar_one())

    def counts(self) -> dict[str, int]:
        """Rows of the tables a refused request must not touch."""
        return {"participants": self.count(s.participants), "sessions": self.count(s.sessions),
                "judgements": self.count(s.judgements)}

    def close(self) -> None:
        self.store.close()


async def enter(c: httpx.AsyncClient, pid: str) -> dict[str, str]:
    r = await c.post("/api/v1/enter", json={"participant_id": pid})
    assert r.status_code == 200, r.text
    return {"authorization": f"Bearer {r.json()['token']}"}


def assert_error(r: httpx.Response, status: int, code: str, field: str | None = None) -> None:
    """``r`` is the one JSON error shape with ``status`` and ``code`` (and ``field``)."""
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}
    assert set(body["error"]) <= {"code", "message", "field"}
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    if field is not None:
        assert body["error"].get("field") == field, body
