"""The HTTP client of Prolific's API: the token, retries, and a dry run that sends nothing.

Every request carries ``Authorization: Token <token>`` (Prolific's scheme). The token comes
from ``$PROLIFIC_TOKEN`` or from a file outside the study folder (:func:`read_token`); it is
never printed, logged or written: a dry run shows ``Token ***``.

Retries are bounded (``retries``, default 4) and depend on whether a call is safe to repeat:

=======================  =============================================================
answer                   what the client does
=======================  =============================================================
429                      waits ``Retry-After`` seconds (capped), then sends again: the
                         request was refused before it was processed
5xx, timeout             idempotent calls: sends again after an exponential backoff;
                         unsafe calls (``safe=False``: paying a bonus) raise
                         :class:`UncertainOutcome`, never send again
connection refused       sends again (the request never reached Prolific)
401                      :class:`ProlificError`: the token is wrong or revoked
other 4xx                :class:`ProlificError` with Prolific's message
=======================  =============================================================
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TextIO

from humeval.errors import PlatformError
from humeval.files import read_secret
from humeval.retry_after import retry_after
from humeval.secrets import remember

__all__ = [
    "API_URL",
    "API_URL_ENV",
    "TIMEOUT_ENV",
    "TOKEN_ENV",
    "TOKEN_FILE_ENV",
    "DryRun",
    "ProlificClient",
    "ProlificError",
    "Reply",
    "UncertainOutcome",
    "read_token",
]

API_URL = "https://api.prolific.com"
API_URL_ENV = "PROLIFIC_API_URL"
TOKEN_ENV = "PROLIFIC_TOKEN"
TOKEN_FILE_ENV = "PROLIFIC_TOKEN_FILE"
TIMEOUT_ENV = "PROLIFIC_TIMEOUT"


class ProlificError(PlatformError):
    """Prolific answered a request with an error (``status``: the HTTP status, 0 for no answer)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class UncertainOutcome(ProlificError):
    """An unsafe request got no clear answer (timeout, 5xx): it may or may not have been carried out."""


def read_token(study_root: Path, token_file: Path | None = None) -> str:
    """The API token: ``$PROLIFIC_TOKEN``, else ``token_file`` (or ``$PROLIFIC_TOKEN_FILE``).

    A token file inside the study folder is refused: the folder is shared, archived and
    published with the study, and the token carries full permission on the workspace.
    """
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return remember(token)
    path = token_file or (Path(os.environ[TOKEN_FILE_ENV]) if os.environ.get(TOKEN_FILE_ENV) else None)
    if path is None:
        raise PlatformError(f"no Prolific API token: set ${TOKEN_ENV}, or keep the token in a file outside the study "
                            f"folder and pass --token-file (or ${TOKEN_FILE_ENV}). Create a token in the Prolific app "
                            "under Settings > API tokens")
    return read_secret(path, study_root, "Prolific API token", PlatformError)  # full access to the workspace


@dataclass(frozen=True)
class Reply:
    """An answer of Prolific's API: the decoded JSON ``body`` (None when empty or in a dry run) and the
    response ``headers`` (lower-case names; e.g. ``x-hook-secret`` of a new hook subscription)."""

    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class DryRun:
    """Where a dry run writes the requests it would send: one JSON object per line."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.requests: list[dict[str, Any]] = []

    def record(self, method: str, url: str, body: Any) -> None:
        line = {"method": method, "url": url, "headers": {"Authorization": "Token ***"}, "json": body}
        self.requests.append(line)
        self.stream.write(json.dumps(line, sort_keys=True) + "\n")
        self.stream.flush()


class ProlificClient:
    """Requests to Prolific's API (``base_url``: the API root, e.g. a local fake for tests).

    ``dry_run``: record and print each request instead of sending it; a request then
    returns ``None``. ``sleep`` and ``rng`` are injectable for tests of the backoff.
    """

    def __init__(self, token: str, *, base_url: str = API_URL, timeout: float = 30.0, retries: int = 4,
                 backoff: float = 0.5, dry_run: DryRun | None = None,
                 sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.dry_run = dry_run
        self.sleep = sleep
        self.rng = rng or random.Random()
        self._token = token
        self._http: Any = None
        #: every request actually sent (method, path, status or exception name), for the logbook
        self.sent: list[dict[str, Any]] = []

    def __repr__(self) -> str:  # the token never appears in a repr, a traceback or a log
        return f"ProlificClient(base_url={self.base_url!r}, token=***, dry_run={self.dry_run is not None})"

    @classmethod
    def from_env(cls, study_root: Path, *, token_file: Path | None = None, dry_run: DryRun | None = None) -> ProlificClient:
        """A client for ``$PROLIFIC_API_URL`` (default Prolific's) with the token of :func:`read_token` and
        ``$PROLIFIC_TIMEOUT`` seconds per request (default 30); a dry run needs no token."""
        token = "" if dry_run is not None and not os.environ.get(TOKEN_ENV) else read_token(study_root, token_file)
        try:
            timeout = float(os.environ.get(TIMEOUT_ENV, "30"))
        except ValueError:
            raise PlatformError(f"${TIMEOUT_ENV}: seconds per request, got {os.environ[TIMEOUT_ENV]!r}") from None
        return cls(token, base_url=os.environ.get(API_URL_ENV, API_URL), dry_run=dry_run, timeout=timeout)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests -------------------------------------------------------------------
    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any = None, *, safe: bool = True) -> Any:
        return self.request("POST", path, body=body, safe=safe)

    def patch(self, path: str, body: Any) -> Any:
        """A partial update; safe to send again when it sets absolute values (``total_available_places``)."""
        return self.request("PATCH", path, body=body)

    def delete(self, path: str) -> Any:
        """Delete a resource (a hook subscription); safe to send again (a second one answers 404)."""
        return self.request("DELETE", path)

    def request(self, method: str, path: str, *, body: Any = None, params: dict[str, Any] | None = None,
                safe: bool = True) -> Any:
        """Send one request (retrying as the module docstring says); return the decoded JSON body."""
        return self.send(method, path, body=body, params=params, safe=safe).body

    def send(self, method: str, path: str, *, body: Any = None, params: dict[str, Any] | None = None,
             safe: bool = True) -> Reply:
        """As :meth:`request`, with the response headers (:class:`Reply`)."""
        url = self._url(path)
        if self.dry_run is not None:
            self.dry_run.record(method, url + (f"?{_query(params)}" if params else ""), body)
            return Reply(None)
        from humeval.extras import require

        httpx = require("httpx", "a request to Prolific's API")

        if self._http is None:
            self._http = httpx.Client(timeout=self.timeout, headers={"Authorization": f"Token {self._token}",
                                                                     "Accept": "application/json"})
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = self._http.request(method, url, json=body, params=params)
            except httpx.ConnectError as exc:  # never reached Prolific: safe to send again
                self._note(method, path, type(exc).__name__)
                if last:
                    raise ProlificError(f"Prolific: {method} {path}: cannot connect to {self.base_url} ({exc})") from None
                self.sleep(self._backoff(attempt))
                continue
            except httpx.TransportError as exc:  # sent, no answer: it may have been carried out
                self._note(method, path, type(exc).__name__)
                if not safe:
                    raise UncertainOutcome(f"Prolific: {method} {path}: no answer ({type(exc).__name__}); it may have "
                                           "been carried out, so it is not sent again") from None
                if last:
                    raise ProlificError(f"Prolific: {method} {path}: no answer after {attempt + 1} attempts "
                                        f"({type(exc).__name__})") from None
                self.sleep(self._backoff(attempt))
                continue
            self._note(method, path, response.status_code)
            status = response.status_code
            if status == 429 and not last:
                self.sleep(retry_after(response.headers.get("retry-after"), self._backoff(attempt)))
                continue
            if status >= 500:
                if not safe:
                    raise UncertainOutcome(f"Prolific: {method} {path}: answered {status}; it may have been carried "
                                           "out, so it is not sent again", status)
                if not last:
                    self.sleep(self._backoff(attempt))
                    continue
            if status >= 400:
                raise ProlificError(_message(method, path, response), status)
            headers = {k.lower(): v for k, v in response.headers.items()}
            if not response.content:
                return Reply(None, headers)
            try:
                return Reply(response.json(), headers)
            except ValueError:
                raise ProlificError(f"Prolific: {method} {path}: answered {status} with a body that is not JSON") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def pages(self, path: str) -> list[dict[str, Any]]:
        """Every item of a paginated list (``results``, following ``_links.next.href``)."""
        out: list[dict[str, Any]] = []
        page = self.get(path)
        seen = 0
        while page is not None:
            out += list(page.get("results", []))
            nxt = ((page.get("_links") or {}).get("next") or {}).get("href")
            seen += 1
            if not nxt or seen > 10000:
                break
            page = self.get(nxt)
        return out

    # -- helpers --------------------------------------------------------------------
    def _url(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return f"{self.base_url}/{path.lstrip('/')}"

    def _backoff(self, attempt: int) -> float:
        return self.backoff * (2 ** attempt) * (0.5 + self.rng.random() / 2)

    def _note(self, method: str, path: str, outcome: int | str) -> None:
        self.sent.append({"method": method, "path": path.replace(self.base_url, ""), "outcome": outcome})


def _query(params: dict[str, Any]) -> str:
    from urllib.parse import urlencode

    return urlencode(params)


def _message(method: str, path: str, response: Any) -> str:
    status = response.status_code
    try:
        body = response.json()
        detail = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(detail, dict):
            detail = detail.get("detail", detail)
    except ValueError:
        detail = response.text[:300]
    if status == 401:
        return (f"Prolific: {method} {path}: 401, the API token was refused (wrong, revoked, or from another "
                f"workspace); check ${TOKEN_ENV}")
    if status == 404:
        return f"Prolific: {method} {path}: 404, not found (a study or submission id that does not exist in this workspace)"
    return f"Prolific: {method} {path}: {status}: {json.dumps(detail)[:500] if not isinstance(detail, str) else detail[:500]}"
