"""Signed tokens: a participant's session token and invite tokens, keyed by the store's secret.

The secret lives in the store (``meta.secret``), so every server process accepts the
same tokens and a token stays valid across restarts. A token is
``v1.<participant id, base64url>.<session id>.<HMAC-SHA256>``; an invite is
``i1.<participant id, base64url>.<HMAC>``. Verification needs no database round trip.

The admin cookie is ``a1.<issued at>.<random nonce>.<HMAC over both and a hash of the admin
token>``: every login makes a new value, it expires ``max_age`` seconds after it was issued, and
changing the admin token (or the store's secret) ends every admin session.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

__all__ = ["Session", "admin_cookie", "admin_cookie_valid", "make_invite", "make_token", "read_invite",
           "read_token", "sign"]


@dataclass(frozen=True)
class Session:
    participant_id: str
    session_id: str


def sign(secret: bytes, message: str) -> str:
    mac = hmac.new(secret, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:24]).decode().rstrip("=")


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def make_token(secret: bytes, participant_id: str, session_id: str) -> str:
    body = f"v1.{_b64(participant_id)}.{session_id}"
    return f"{body}.{sign(secret, body)}"


def read_token(secret: bytes, token: str | None) -> Session | None:
    """The session a token names, or None if it is missing, malformed or forged."""
    if not token or len(token) > 600:
        return None
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != "v1":
        return None
    body = ".".join(parts[:3])
    if not hmac.compare_digest(sign(secret, body), parts[3]):
        return None
    pid = _unb64(parts[1])
    return Session(pid, parts[2]) if pid else None


def make_invite(secret: bytes, participant_id: str) -> str:
    body = f"i1.{_b64(participant_id)}"
    return f"{body}.{sign(secret, body)}"


def read_invite(secret: bytes, invite: str) -> str | None:
    """The participant id of a valid invite token, else None."""
    parts = invite.split(".")
    if len(invite) > 600 or len(parts) != 3 or parts[0] != "i1":
        return None
    if not hmac.compare_digest(sign(secret, ".".join(parts[:2])), parts[2]):
        return None
    return _unb64(parts[1])


def _admin_mac(secret: bytes, admin_token: str, issued: int, nonce: str) -> str:
    fingerprint = hashlib.sha256(admin_token.encode()).hexdigest()
    return sign(secret, f"admin|{issued}|{nonce}|{fingerprint}")


def admin_cookie(secret: bytes, admin_token: str, now: float | None = None) -> str:
    """A new admin session value (a fresh nonce each login)."""
    issued = int(time.time() if now is None else now)
    nonce = secrets.token_urlsafe(12)
    return f"a1.{issued}.{nonce}.{_admin_mac(secret, admin_token, issued, nonce)}"


def admin_cookie_valid(secret: bytes, admin_token: str, value: str | None, max_age: float,
                       now: float | None = None) -> bool:
    """Whether ``value`` is an admin session this server issued less than ``max_age`` seconds ago."""
    parts = (value or "").split(".")
    if len(parts) != 4 or parts[0] != "a1" or not parts[1].isascii() or not parts[1].isdigit() or len(parts[1]) > 12:
        return False
    issued = int(parts[1])
    now = time.time() if now is None else now
    if not issued - 60 <= now < issued + max_age:  # a minute of clock skew between server processes
        return False
    return hmac.compare_digest(_admin_mac(secret, admin_token, issued, parts[2]), parts[3])
