"""How a server process is configured: one :class:`ServerConfig`, passed to the app factory as an object.

``humeval serve`` runs several uvicorn worker processes, and uvicorn builds each worker's app
by calling a factory by name. The configuration reaches those processes as a file: ``serve``
writes it with :meth:`ServerConfig.write` (mode 0600, in a private temporary folder, removed on
exit) and names the file in ``$HUMEVAL_SERVER_CONFIG_FILE``; :func:`humeval.server.app.app_from_env`
reads it back. No setting, and no secret, travels in the environment itself.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from humeval.errors import HumevalError

__all__ = ["CONFIG_FILE_ENV", "MIN_ADMIN_TOKEN", "ServerConfig"]

#: the environment variable naming the configuration file of the server's worker processes
CONFIG_FILE_ENV = "HUMEVAL_SERVER_CONFIG_FILE"
#: the shortest admin token accepted (a guessable token opens every judgement and the export)
MIN_ADMIN_TOKEN = 16


@dataclass(frozen=True)
class ServerConfig:
    """``study_dir``: the study; ``db``: URL or file (default study.db); ``admin_token``: admin secret (at least
    16 characters); ``sqlite_sync``: SQLite's ``synchronous`` setting for commits (``full`` or ``normal``); the
    entry guard (:mod:`humeval.server.guard`): ``new_per_address`` per client network (``throttle_prefix_v4`` and
    ``throttle_prefix_v6`` bits) and ``new_per_wide_network`` per wider network (``wide_prefix_v4`` and
    ``wide_prefix_v6`` bits), both per first-lease window, ``new_per_minute``, ``trusted_proxies``,
    ``first_lease_seconds`` and ``max_active``; ``public_url``: the address participants open (the origin
    cross-origin writes are checked against, :mod:`humeval.server.security`); ``admin_session_seconds``: how long
    an admin login lasts."""

    study_dir: str
    admin_token: str
    db: str | None = None
    allowed_origins: list[str] = field(default_factory=list)
    sqlite_sync: str = "full"
    #: new participants admitted per client network in a first-lease window (0: a quarter of the entry budget,
    #: :func:`humeval.server.guard.network_budgets`; -1: no limit)
    new_per_address: int = 0
    #: a client network is an IPv4 address's first ``throttle_prefix_v4`` bits (32: the address)
    throttle_prefix_v4: int = 32
    #: ... and an IPv6 address's first ``throttle_prefix_v6`` bits (64: the network of one subscriber's line)
    throttle_prefix_v6: int = 64
    #: new participants admitted per wider network in a first-lease window (0: half the entry budget; -1: no limit)
    new_per_wide_network: int = 0
    #: a wider network is an IPv4 address's first ``wide_prefix_v4`` bits (24) and an IPv6 one's ``wide_prefix_v6`` (48)
    wide_prefix_v4: int = 24
    wide_prefix_v6: int = 48
    #: new participants the study admits per minute from every address together (0: sized from the study,
    #: :func:`humeval.server.guard.auto_new_per_minute`; -1: no limit)
    new_per_minute: int = 0
    #: the address participants open (``https://eval.example.org``); empty: see :mod:`humeval.server.security`
    public_url: str = ""
    #: addresses or networks of reverse proxies whose X-Forwarded-For (and X-Forwarded-Proto) is believed
    trusted_proxies: list[str] = field(default_factory=list)
    #: seconds a list and lease are held before a participant's first submit (then a whole lease)
    first_lease_seconds: int = 300
    #: unfinished participants seen within a lease the study admits at once (0: twice the lists or places; -1: no cap)
    max_active: int = 0
    #: seconds an admin login (the admin cookie) is valid
    admin_session_seconds: int = 8 * 3600
    #: the platform's hook secret: with it, the server verifies and handles the platform's hooks (Prolific's
    #: ``POST /prolific/hook``; :meth:`humeval.platforms.base.CrowdPlatform.hook_routes`)
    hook_secret: str = ""
    #: a first entry through the platform route is checked with the platform (Prolific, served with an API token:
    #: an active submission of the study; :meth:`humeval.platforms.base.CrowdPlatform.entry_check`)
    check_entries: bool = False

    def __post_init__(self) -> None:
        check_admin_token(self.admin_token)
        if not 8 <= self.throttle_prefix_v4 <= 32:
            raise HumevalError(f"--throttle-prefix-v4: expected 8 to 32 bits, got {self.throttle_prefix_v4}")
        if not 16 <= self.throttle_prefix_v6 <= 128:
            raise HumevalError(f"--throttle-prefix-v6: expected 16 to 128 bits, got {self.throttle_prefix_v6}")
        if not 8 <= self.wide_prefix_v4 <= self.throttle_prefix_v4:
            raise HumevalError(f"--wide-prefix-v4: expected 8 to {self.throttle_prefix_v4} bits (--throttle-prefix-v4), "
                               f"got {self.wide_prefix_v4}")
        if not 16 <= self.wide_prefix_v6 <= self.throttle_prefix_v6:
            raise HumevalError(f"--wide-prefix-v6: expected 16 to {self.throttle_prefix_v6} bits (--throttle-prefix-v6), "
                               f"got {self.wide_prefix_v6}")
        for flag, value in (("--new-per-minute", self.new_per_minute), ("--new-per-address", self.new_per_address),
                            ("--new-per-wide-network", self.new_per_wide_network)):
            if value < -1:
                raise HumevalError(f"{flag}: expected -1 (no limit), 0 (sized from the study) or a number of "
                                   f"participants, got {value}")
        if self.public_url:
            from humeval.server.security import origin_of

            origin_of(self.public_url)

    def write(self, folder: Path) -> Path:
        """Write the configuration to ``folder/server.json``, readable by its owner only; the file's path."""
        path = Path(folder) / "server.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(asdict(self), out)
        return path

    @classmethod
    def read(cls, path: str | Path) -> ServerConfig:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise HumevalError(f"{path}: cannot read the server configuration ({exc}); start the server with "
                               "`humeval serve`") from None
        return cls(**data)

    @classmethod
    def from_env(cls) -> ServerConfig:
        """The configuration in the file ``$HUMEVAL_SERVER_CONFIG_FILE`` names (set by ``humeval serve``)."""
        path = os.environ.get(CONFIG_FILE_ENV)
        if not path:
            raise HumevalError(f"${CONFIG_FILE_ENV} is not set: start the server with `humeval serve`")
        return cls.read(path)


def check_admin_token(token: str) -> None:
    """Refuse a missing or short admin token, saying why and what would do."""
    if len(token) < MIN_ADMIN_TOKEN:
        raise HumevalError(f"admin token: at least {MIN_ADMIN_TOKEN} characters are required, got {len(token)}; "
                           "leave it out to have one generated, or make one with "
                           "`python -c \"import secrets; print(secrets.token_urlsafe(24))\"`")
