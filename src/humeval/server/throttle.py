"""Who is asking: the client address (behind trusted proxies) and the networks it is counted by.

A study link posted in public can be scripted: without a limit, one client entering as 250
new participants reserves every list of the study, and with only a study-wide budget of new
participants, it spends that budget and shuts out everyone else. The entry guard
(:mod:`humeval.server.guard`) therefore counts new participants by network first. An address is
counted by its network (:func:`network_of`): an IPv6 address by its /64 (one subscriber's line or
one server is given a whole /64, so 2^64 addresses cost an attacker nothing), an IPv4 address by
itself (/32; a shared NAT puts many honest people behind one address, so a shorter prefix would
refuse them together); and by its wider network, /48 and /24 (one site's or one provider's block,
so a flood from many neighbouring addresses is bounded too). All four prefixes are settings.
The counts are kept in the store (:mod:`humeval.store.participants`), so every process and
machine shares them. Returning participants are never counted: someone who already has work
keeps it.

The client address is the TCP peer, unless the peer is a trusted proxy
(``trusted_proxies``, addresses or networks): then it is the right-most address of
``X-Forwarded-For`` that is not itself a trusted proxy. ``X-Forwarded-For`` from anyone
else is ignored, so a client cannot choose its own address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.requests import Request

__all__ = ["TrustedProxies", "client_address", "is_https", "network_of"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


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
