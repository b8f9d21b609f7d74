"""How a server process is configured (passed from ``humeval serve`` through the environment)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

from humeval.errors import HumevalError

__all__ = ["ENV", "ServerConfig"]

ENV = "HUMEVAL_SERVER_CONFIG"


@dataclass(frozen=True)
class ServerConfig:
    """``study_dir``: the study; ``db``: URL or file (default study.db); ``admin_token``: admin secret;
    ``sqlite_sync``: SQLite's ``synchronous`` setting for commits (``full`` or ``normal``); the entry guard
    (:mod:`humeval.server.guard`): ``new_per_address`` per ``throttle_window``, ``trusted_proxies``,
    ``first_lease_seconds`` and ``max_active``."""

    study_dir: str
    admin_token: str
    db: str | None = None
    allowed_origins: list[str] = field(default_factory=list)
    sqlite_sync: str = "full"
    #: new participants admitted per client address in any ``throttle_window`` seconds (0: no limit)
    new_per_address: int = 30
    throttle_window: float = 600.0
    #: addresses or networks of reverse proxies whose X-Forwarded-For is believed
    trusted_proxies: list[str] = field(default_factory=list)
    #: seconds a list and lease are held before a participant's first submit (then a whole lease)
    first_lease_seconds: int = 300
    #: unfinished participants seen within a lease the study admits at once (0: twice the lists or places; -1: no cap)
    max_active: int = 0

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServerConfig:
        raw = os.environ.get(ENV)
        if not raw:
            raise HumevalError(f"{ENV} is not set: start the server with `humeval serve`")
        return cls(**json.loads(raw))
