"""The entry guard: who may become a new participant, and how the store records an entry.

Every entry (``POST /api/v1/enter``, the entry link, the start form) goes through
:func:`admit_entry`:

1. a returning participant is let in through the route of their first entry only (the
   store refuses another route: 403 ``entry_route_mismatch``);
2. a new participant from a client network (an IPv4 address, an IPv6 /64) that added
   ``new_per_address`` participants in the last ``throttle_window`` seconds is refused with 429
   and ``Retry-After`` (:mod:`humeval.server.throttle`), before anything reaches the store;
3. a new participant is refused with 503 and ``Retry-After`` while the study holds
   ``max_active`` unfinished participants seen within a lease;
4. a new participant is refused with 503 (``entry_rate``) and ``Retry-After`` while as many new
   participants entered within the last first reservation (``first_lease_seconds``: the window W
   in which an entry holds a list without answering) as the study admits in W, from every address
   together (counted in the store, so shared by every process): ``new_per_minute`` x W / 60, by
   default :func:`auto_entry_budget`.

Why 4 bounds what entries that never answer can hold: such an entry holds a list for at most two
first reservations (:data:`humeval.store.assign.FIRST_LEASES`), so at any time they hold at most
twice the entries of one window, which the default budget keeps to half the places (of a study of
80 places or more: the budget is at least 20).

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
from humeval.server.throttle import Throttle, Throttled, TrustedProxies, client_address, network_of
from humeval.store.store import Store

__all__ = ["EntryGuard", "admit_entry", "auto_entry_budget", "auto_max_active", "entry_budget", "install_guard", "places"]

_AUTO_FLOOR = 50
#: the default entry budget of one first reservation window is a quarter of the places, so that entries that never
#: answer (each holding a list for at most two windows) hold at most half of them
_PLACES_SHARE = 0.25
#: ... or, if more, this many times the arrivals expected in the window (``crowd.arrivals_per_hour``)
_ARRIVALS_HEADROOM = 5.0
#: ... and never fewer than this many (a small study's first burst of honest participants passes)
_BUDGET_FLOOR = 20


@dataclass
class EntryGuard:
    throttle: Throttle
    trusted: TrustedProxies
    max_active: int
    #: new participants admitted within ``entry_window`` seconds (0: no limit)
    entry_budget: int = 0
    entry_window: float = 300.0
    prefixes: tuple[int, int] = (32, 64)

    def network(self, address: str) -> str:
        return network_of(address, *self.prefixes)


def places(store: Store) -> int:
    """The study's places: its lists (``list`` strategy), or caps x judgements / tasks per participant (pools)."""
    ctx = store.context
    if ctx.strategy is None:
        return len(ctx.list_sizes)
    return math.ceil(len(ctx.tasks) * ctx.protocol.design.judgements_per_item / max(1, ctx.per_participant))


def auto_max_active(store: Store) -> int:
    """Twice the lists (``list`` strategy) or the places (pool strategies: caps / tasks per participant), at least 50."""
    return max(_AUTO_FLOOR, 2 * places(store))


def auto_entry_budget(places: int, window: float, arrivals_per_hour: float | None = None) -> int:
    """New participants admitted per first reservation window (``window`` seconds), by default: a quarter of the
    ``places``, or five times the arrivals expected in the window (``crowd.arrivals_per_hour``) if that is more;
    at least 20 (so below 80 places a flood may hold more than half of them)."""
    budget = math.ceil(_PLACES_SHARE * places)
    if arrivals_per_hour:
        budget = max(budget, math.ceil(_ARRIVALS_HEADROOM * arrivals_per_hour * window / 3600))
    return max(_BUDGET_FLOOR, budget)


def entry_budget(store: Store, new_per_minute: int, window: float) -> int:
    """The entry budget of a ``window``: from ``new_per_minute`` (-1: none; 0: :func:`auto_entry_budget`)."""
    if new_per_minute < 0:
        return 0
    if new_per_minute == 0:
        return auto_entry_budget(places(store), window, store.context.protocol.crowd.arrivals_per_hour)
    return max(1, round(new_per_minute * window / 60))


def install_guard(app: object, config: ServerConfig, store: Store) -> EntryGuard:
    """Build the guard from ``config``, apply the first reservation to the store, keep it on ``app.state``."""
    store.context.first_lease_seconds = config.first_lease_seconds
    cap = auto_max_active(store) if config.max_active == 0 else max(0, config.max_active)
    window = float(store.context.reservation(0))
    guard = EntryGuard(Throttle(config.new_per_address, config.throttle_window), TrustedProxies(config.trusted_proxies),
                       cap, entry_budget(store, config.new_per_minute, window), window,
                       (config.throttle_prefix_v4, config.throttle_prefix_v6))
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
    network = guard.network(address)
    wait = guard.throttle.retry_after(network)
    if wait is not None and await store.route_of(entry.participant_id) is None:
        raise Throttled(wait)  # refused before the store: a burst costs one read per request
    return await store.enter(entry.participant_id, entry.platform, entry.params,
                             user_agent=request.headers.get("user-agent", ""), consented=consented,
                             admit=lambda: guard.throttle.admit(network), max_active=guard.max_active,
                             recent_max=guard.entry_budget, recent_window=guard.entry_window)


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
