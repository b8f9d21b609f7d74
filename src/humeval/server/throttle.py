"""Who is asking, and how often: the client address (behind trusted proxies) and the new-participant throttle.

A study link posted in public can be scripted: without a limit, one client entering as 250
new participants reserves every list of the study. The server admits at most
``new_per_address`` new participants per client network in any ``throttle_window`` seconds.
An address is counted by its network (:func:`network_of`): an IPv6 address by its /64 (one
subscriber's line or one server is given a whole /64, so 2^64 addresses cost an attacker
nothing), an IPv4 address by itself (/32; a shared NAT puts many honest people behind one
address, so a shorter prefix would refuse them together); both prefixes are settings
(a sliding window, kept in each server process: with N machines of K processes behind a
proxy, an address gets at most N x K times the limit). That is acceptable for what it is, a
brake on scripted entries: the bound that protects the study's lists, ``max_active``
unfinished participants, is counted in the store and so shared by every process
(:mod:`humeval.server.guard`). Returning participants are never throttled: someone who
already has work keeps it.

The client address is the TCP peer, unless the peer is a trusted proxy
(``trusted_proxies``, addresses or networks): then it is the right-most address of
``X-Forwarded-For`` that is not itself a trusted proxy. ``X-Forwarded-For`` from anyone
else is ignored, so a client cannot choose its own address.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable

from starlette.requests import Request

from humeval.server.errors import TooManyRequests

__all__ = ["Throttle", "Throttled", "TrustedProxies", "client_address", "is_https", "network_of"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_MAX_ADDRESSES = 100_000


class Throttled(TooManyRequests):
    """429: too many new participants from one client address; ``retry_after`` seconds until a slot frees."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("too_many_new_participants", "too many new participants from your network address in a short "
                         f"time; try again in {retry_after} s", retry_after=retry_after)


class TrustedProxies:
    """The addresses (or networks) whose ``X-Forwarded-For`` header is believed."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.networks: list[Network] = [ipaddress.ip_network(e.strip(), strict=False) for e in entries if e.strip()]

    def __contains__(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.networks)


def client_address(request: Request, trusted: TrustedProxies) -> str:
    """The client's address: the peer, or the first untrusted hop of ``X-Forwarded-For`` behind a trusted proxy."""
    peer = request.client.host if request.client else ""
    if not trusted.networks or peer not in trusted:
        return peer
    hops = [h.strip() for h in ",".join(request.headers.getlist("x-forwarded-for")).split(",") if h.strip()]
    for hop in reversed(hops):
        if hop not in trusted:
            return hop[:64]
    return hops[0][:64] if hops else peer


def is_https(request: Request, trusted: TrustedProxies) -> bool:
    """Whether the client reached the study over HTTPS: served over TLS directly, or (behind a trusted proxy)
    the proxy says so in ``X-Forwarded-Proto``. A client's own ``X-Forwarded-Proto`` is ignored."""
    if request.url.scheme in ("https", "wss"):
        return True  # TLS here, or a proxy uvicorn believes (--forwarded-allow-ips) already set the scheme
    peer = request.client.host if request.client else ""
    if not trusted.networks or peer not in trusted:
        return False
    proto = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return proto == "https"


def network_of(address: str, prefix_v4: int = 32, prefix_v6: int = 64) -> str:
    """The network ``address`` is counted by: its first ``prefix_v4`` (IPv4) or ``prefix_v6`` (IPv6) bits, as
    ``a.b.c.d/n`` or ``x:y::/n``; an IPv4 address mapped into IPv6 (``::ffff:a.b.c.d``) counts as the IPv4 one.
    A value that is no address (a test client's name) is its own network."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = prefix_v4 if ip.version == 4 else prefix_v6
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


class Throttle:
    """At most ``limit`` new participants per address in any ``window`` seconds; ``limit`` 0 turns it off."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._seen.get(address)
        if times is None:
            return deque()
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._seen[address]
        return times

    def retry_after(self, address: str) -> int | None:
        """Seconds until ``address`` may add a new participant, or None when it may now."""
        if self.limit <= 0:
            return None
        with self._lock:
            now = self.clock()
            times = self._recent(address, now)
            if len(times) < self.limit:
                return None
            return max(1, math.ceil(times[0] + self.window - now))

    def admit(self, address: str) -> None:
        """Count one new participant from ``address``; :class:`Throttled` when over the limit (nothing counted)."""
        if self.limit <= 0:
            return
        with self._lock:
            now = self.clock()
            times = self._recent(address, now)
            if len(times) >= self.limit:
                raise Throttled(max(1, math.ceil(times[0] + self.window - now)))
            times.append(now)
            self._seen[address] = times
            self._seen.move_to_end(address)
            while len(self._seen) > _MAX_ADDRESSES:
                self._seen.popitem(last=False)
