"""The judges' answer cache: one SQLite file in the study folder (``.humeval/judge-cache.sqlite``).

A row is one answer of an endpoint, keyed on everything that determines it
(:func:`request_key`: the endpoint, and the request body with the model, the messages as
rendered, and every sampling field), never on the key. Each answer is committed when it
arrives, so a run that stops part way resumes with the requests it has not answered yet, and a
re-run sends none. Only answers are stored: a request that failed after its retries is asked again.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Self

from humeval.hashing import sha256_json
from humeval.judging.client import Reply

__all__ = ["AnswerCache", "request_key"]


def request_key(url: str, body: dict[str, Any]) -> str:
    """SHA-256 of the endpoint URL and the request body (canonical JSON)."""
    return sha256_json({"url": url, "body": body})


class AnswerCache:
    """Answers by request key, in SQLite (WAL); ``get`` and ``put`` from one thread at a time."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # used by one thread at a time: the event loop's, which may be a thread of its own (a notebook)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, url TEXT NOT NULL, "
                         "model TEXT NOT NULL, reply TEXT NOT NULL, at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)")
        self._db.commit()

    def get(self, key: str) -> Reply | None:
        row = self._db.execute("SELECT reply FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else Reply.from_json(json.loads(row[0]))

    def put(self, key: str, url: str, model: str, reply: Reply) -> None:
        self._db.execute("INSERT OR REPLACE INTO answers (key, url, model, reply) VALUES (?, ?, ?, ?)",
                         (key, url, model, json.dumps(reply.to_json())))
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
