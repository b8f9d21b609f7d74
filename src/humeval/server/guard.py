"""The entry guard: who may become a new participant, and how the store records an entry.

Every entry (``POST /api/v1/enter``, the entry link, the start form) goes through
:func:`admit_entry`. Within a first reservation window W (``first_lease_seconds``: the window in
which an entry holds a list without answering), counted in the store (so shared by every process
and machine), and in this order:

1. a returning participant is let in through the route of their first entry only (the
   store refuses another route: 403 ``entry_route_mismatch``); nothing below counts them;
2. a new participant from a client network (an IPv4 address, an IPv6 /64) that added
   ``new_per_address`` participants within W, or from a wider network (/24, /48) that added
   ``new_per_wide_network``, is refused with 429 ``too_many_new_participants`` and ``Retry-After``;
3. a new participant is refused with 503 ``study_full`` and ``Retry-After`` while the study holds
   ``max_active`` unfinished participants seen within a lease;
4. a new participant is refused with 503 ``entry_rate`` and ``Retry-After`` while as many new
   participants entered within W as the study admits in W from every network together, the entry
   budget B: ``new_per_minute`` x W / 60, by default :func:`auto_entry_budget`.

Why 2 comes first: the budget B is shared, so without it one address (or one /64) entering 30
times spends B and every real participant from elsewhere is refused for W. With 2, one network
takes at most a quarter of B and one wider network half of it, by default
(:func:`network_budgets`), and a participant from another network still gets in while it floods.
Many networks together (a botnet) still meet B, the last bound.

Why 4 bounds what entries that never answer can hold: such an entry holds a list for at most two
first reservations (:data:`humeval.store.assign.FIRST_LEASES`), so at any time they hold at most
twice the entries of one window, which the default budget keeps to half the places (of a study of
80 places or more: the budget is at least 20).

Clients on the server's own machine (a loopback address, after ``X-Forwarded-For`` from a
trusted proxy is applied) are neither counted nor capped: rehearsals and tests run there.
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
from humeval.server.throttle import TrustedProxies, client_address, network_of
from humeval.store.participants import NO_LIMITS, EntryLimits
from humeval.store.store import Store

__all__ = [
    "EntryGuard", "admit_entry", "auto_entry_budget", "auto_max_active", "entry_budget", "install_guard",
    "network_budgets", "places",
]

_AUTO_FLOOR = 50
#: the default entry budget of one first reservation window is a quarter of the places, so that entries that never
#: answer (each holding a list for at most two windows) hold at most half of them
_PLACES_SHARE = 0.25
#: ... or, if more, this many times the arrivals expected in the window (``crowd.arrivals_per_hour``)
_ARRIVALS_HEADROOM = 5.0
#: ... and never fewer than this many (a small study's first burst of honest participants passes)
_BUDGET_FLOOR = 20
#: by default one client network may take this share of the entry budget, and one wider network this share
_NETWORK_SHARE, _WIDE_SHARE = 0.25, 0.5


@dataclass(frozen=True)
class EntryGuard:
    trusted: TrustedProxies
    #: the bounds on new participants, counted in the store within the first reservation window
    limits: EntryLimits
    #: the prefix lengths a client network is counted by, (IPv4, IPv6), and a wider network
    prefixes: tuple[int, int] = (32, 64)
    wide_prefixes: tuple[int, int] = (24, 48)

    def networks(self, address: str) -> tuple[str, str]:
        """The client's network and wider network (``198.51.100.7/32``, ``198.51.100.0/24``)."""
        return network_of(address, *self.prefixes), network_of(address, *self.wide_prefixes)


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


def network_budgets(budget: int, per_network: int, per_wide: int) -> tuple[int, int]:
    """New participants one client network and one wider network may add in a window (0: no limit), from the
    settings (-1: no limit; 0: a quarter and a half of the entry ``budget``, at least 1) so that neither can
    spend the whole budget."""
    def one(setting: int, share: float) -> int:
        if setting != 0:
            return max(0, setting)
        return max(1, math.ceil(share * budget))

    return one(per_network, _NETWORK_SHARE), one(per_wide, _WIDE_SHARE)


def install_guard(app: object, config: ServerConfig, store: Store) -> EntryGuard:
    """Build the guard from ``config``, apply the first reservation to the store, keep it on ``app.state``."""
    store.context.first_lease_seconds = config.first_lease_seconds
    cap = auto_max_active(store) if config.max_active == 0 else max(0, config.max_active)
    window = float(store.context.reservation(0))
    budget = entry_budget(store, config.new_per_minute, window)
    shared = budget or entry_budget(store, 0, window)  # the networks' shares of the default budget when B is off
    per_network, per_wide = network_budgets(shared, config.new_per_address, config.new_per_wide_network)
    guard = EntryGuard(TrustedProxies(config.trusted_proxies), EntryLimits(cap, budget, per_network, per_wide, window),
                       (config.throttle_prefix_v4, config.throttle_prefix_v6), (config.wide_prefix_v4, config.wide_prefix_v6))
    app.state.guard = guard  # type: ignore[attr-defined]
    return guard


async def admit_entry(request: Request, entry: Entry, *, consented: bool = False) -> str:
    """Record ``entry`` (returning or new, within the limits above); the new session's id."""
    store: Store = request.app.state.store
    guard: EntryGuard = request.app.state.guard
    address = client_address(request, guard.trusted)
    loopback = is_loopback(address)  # the server's own machine: rehearsals, tests, the operator
    return await store.enter(entry.participant_id, entry.platform, entry.params,
                             user_agent=request.headers.get("user-agent", ""), consented=consented,
                             limits=NO_LIMITS if loopback else guard.limits,
                             networks=None if loopback else guard.networks(address))


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
