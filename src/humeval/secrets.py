"""Secrets kept out of every message, log line and logbook entry: one function, :func:`redact`, that every writer uses.

A secret is removed when it is *known* (every API key and token humeval reads is registered with
:func:`remember` where it is read: :func:`humeval.files.read_secret`, the judge's and Prolific's key
readers, :class:`~humeval.judging.client.ChatClient`) and when it has the *shape* of one, whoever
wrote it (an endpoint that echoes ``Authorization: Bearer <key>`` in an error, a logbook written
before the key was known):

===========================================  ===============================
text                                         written as
===========================================  ===============================
a known secret, anywhere                     ``***``
``Bearer <x>``, ``Token <x>``, ``Basic <x>``  ``Bearer ***`` (the scheme kept; ``<x>``: 8 or more
                                             characters with a digit)
``sk-<x>`` (OpenAI-style keys)               ``sk-***``
``api_key=<x>``, ``"token": "<x>"``, ...     ``api_key=***``
``scheme://user:<password>@host``            ``scheme://user:***@host``
===========================================  ===============================

Writers that call :func:`redact`: the judge client's errors and the answers it keeps, the CLI's
error and traceback printing, :mod:`humeval.logbook` (when an entry is written and when it is read,
so ``humeval log`` never prints an old entry's key), and the judge's ledger.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MASK", "forget_all", "redact", "remember"]

MASK = "***"
#: shorter values are not taken as secrets: a short "key" of a local server would mask every word or hash that holds
#: it (an 8-character hex key is in one SHA-256 of 75 million; a 6-character one in one of 280,000)
MIN_SECRET = 8
#: the secrets read in this process (values, never written anywhere); filled at run time, never at import
_known: set[str] = set()

_SHAPES = [
    # an Authorization value: at least 8 characters with a digit (so that prose such as "bearer tokens" stays)
    (re.compile(r"(?i)\b(bearer|token|basic)(\s+)(?=[A-Za-z._~+/=:-]*\d)[A-Za-z0-9._~+/=:-]{8,}"), rf"\1\2{MASK}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{6,}"), f"sk-{MASK}"),
    (re.compile(r"""(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd)["']?\s*[:=]\s*["']?)"""
                r"""[^\s"'&,;}]{4,}"""), rf"\1{MASK}"),
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@"), rf"\1{MASK}@"),
]


def remember(secret: str) -> str:
    """Register ``secret`` (an API key or token just read) so that :func:`redact` removes it; returns it."""
    secret = secret.strip()
    if len(secret) >= MIN_SECRET:
        _known.add(secret)
    return secret


def forget_all() -> None:
    """Forget every registered secret (tests; a long-lived process that rotated its keys)."""
    _known.clear()


def redact(value: Any) -> Any:
    """``value`` with every known secret and every secret-shaped text masked (see the module docstring); dicts,
    lists and tuples are redacted item by item, other values returned as they are.

    >>> redact('401: {"error": "Incorrect API key: Bearer abc123def456"}')
    '401: {"error": "Incorrect API key: Bearer ***"}'
    """
    if isinstance(value, str):
        return _redact_text(value)
    if isinstance(value, dict):
        return {redact(k): redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v) for v in value)
    return value


def _redact_text(text: str) -> str:
    for secret in sorted(_known, key=len, reverse=True):  # the longest first: a key that holds another
        if secret in text:
            text = text.replace(secret, MASK)
    for pattern, replacement in _SHAPES:
        text = pattern.sub(replacement, text)
    return text
