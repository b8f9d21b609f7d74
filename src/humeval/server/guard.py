"""The entry guard: who may become a new participant, and how the store records an entry.

Every entry (``POST /api/v1/enter``, the entry link, the start form) goes through
:func:`admit_entry`:

1. a returning participant is let in through the route of their first entry only (the
   store refuses another route: 403 ``entry_route_mismatch``);
2. a new participant from a client address that added ``new_per_address`` participants
   in the last ``throttle_window`` seconds is refused with 429 and ``Retry-After``
   (:mod:`humeval.server.throttle`), before anything reaches the store;
3. a new participant is refused with 503 and ``Retry-After`` while the study holds
   ``max_active`` unfinished participants seen within a lease.

Clients on the server's own machine (a loopback address, after ``X-Forwarded-For`` from a
trusted proxy is applied) are neither throttled nor capped: rehearsals and tests run there.
A reverse proxy on the same machine must therefore forward the client's address
(``X-Forwarded-For``), which uvicorn believes from loopback by default.

Lists and leases of a participant who has not submitted yet are held for
``first_lease_seconds`` only (:meth:`humeval.store.context.StoreContext.reservation`).
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from starlette.requests import Request

from humeval.platforms.entry import Entry
from humeval.server.config import ServerConfig
from humeval.server.throttle import Throttle, Throttled, TrustedProxies, client_address
from humeval.store.store import Store

__all__ = ["EntryGuard", "admit_entry", "install_guard"]

_AUTO_FLOOR = 50


@dataclass
class EntryGuard:
    throttle: Throttle
    trusted: TrustedProxies
    max_active: int


def auto_max_active(store: Store) -> int:
    """Twice the lists (``list`` strategy) or the places (pool strategies: caps / tasks per participant), at least 50."""
    ctx = store.context
    if ctx.strategy is None:
        places = len(ctx.list_sizes)
    else:
        places = math.ceil(len(ctx.tasks) * ctx.protocol.design.judgements_per_item / max(1, ctx.per_participant))
    return max(_AUTO_FLOOR, 2 * places)


def install_guard(app: object, config: ServerConfig, store: Store) -> EntryGuard:
    """Build the guard from ``config``, apply the first reservation to the store, keep it on ``app.state``."""
    store.context.first_lease_seconds = config.first_lease_seconds
    cap = auto_max_active(store) if config.max_active == 0 else max(0, config.max_active)
    guard = EntryGuard(Throttle(config.new_per_address, config.throttle_window), TrustedProxies(config.trusted_proxies), cap)
    app.state.guard = guard  # type: ignore[attr-defined]
    return guard


async def admit_entry(request: Request, entry: Entry, *, consented: bool = False) -> str:
    """Record ``entry`` (returning or new, within the limits above); the new session's id."""
    store: Store = request.app.state.store
    guard: EntryGuard = request.app.state.guard
    address = client_address(request, guard.trusted)
    if is_loopback(address):  # the server's own machine: rehearsals, tests, the operator
        return await store.enter(entry.participant_id, entry.platform, entry.params,
                                 user_agent=request.headers.get("user-agent", ""), consented=consented)
    wait = guard.throttle.retry_after(address)
    if wait is not None and await store.route_of(entry.participant_id) is None:
        raise Throttled(wait)  # refused before the store: a burst costs one read per request
    return await store.enter(entry.participant_id, entry.platform, entry.params,
                             user_agent=request.headers.get("user-agent", ""), consented=consented,
                             admit=lambda: guard.throttle.admit(address), max_active=guard.max_active)


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
