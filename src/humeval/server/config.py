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
    ``sqlite_sync``: SQLite's ``synchronous`` setting for commits (``full`` or ``normal``)."""

    study_dir: str
    admin_token: str
    db: str | None = None
    allowed_origins: list[str] = field(default_factory=list)
    sqlite_sync: str = "full"

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServerConfig:
        raw = os.environ.get(ENV)
        if not raw:
            raise HumevalError(f"{ENV} is not set: start the server with `humeval serve`")
        return cls(**json.loads(raw))
