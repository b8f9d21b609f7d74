"""The client address behind proxies, the networks it is counted by, and the default entry budgets."""

from __future__ import annotations

from starlette.requests import Request

from humeval.server.guard import auto_entry_budget, network_budgets
from humeval.server.throttle import TrustedProxies, client_address, network_of


def _request(peer: str, forwarded: str | None = None) -> Request:
    headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
    return Request({"type": "http", "method": "GET", "path": "/", "headers": headers, "client": (peer, 1)})


def test_client_address() -> None:
    none, proxies = TrustedProxies(), TrustedProxies(["10.0.0.0/8", "2001:db8::1"])
    assert client_address(_request("192.0.2.1", "198.51.100.9"), none) == "192.0.2.1"  # not a proxy: header ignored
    assert client_address(_request("10.0.0.5", "198.51.100.9"), proxies) == "198.51.100.9"
    # a client cannot choose its address by sending its own header through the proxy: right-most untrusted hop
    assert client_address(_request("10.0.0.5", "6.6.6.6, 198.51.100.9, 10.0.0.7"), proxies) == "198.51.100.9"
    assert client_address(_request("2001:db8::1", "198.51.100.3"), proxies) == "198.51.100.3"
    assert client_address(_request("10.0.0.5"), proxies) == "10.0.0.5"


def test_addresses_are_counted_by_network() -> None:
    assert network_of("2001:db8:1:2:aaaa::1") == network_of("2001:db8:1:2:ffff:1:2:3") == "2001:db8:1:2::/64"
    assert network_of("2001:db8:1:3::1") != network_of("2001:db8:1:2::1")  # the next /64 is another line
    assert network_of("198.51.100.7") == "198.51.100.7/32" != network_of("198.51.100.8")
    assert network_of("198.51.100.7", prefix_v4=24) == network_of("198.51.100.200", prefix_v4=24) == "198.51.100.0/24"
    assert network_of("2001:db8::1", prefix_v6=48) == "2001:db8::/48"
    assert network_of("::ffff:198.51.100.7") == "198.51.100.7/32"  # IPv4 mapped into IPv6
    assert network_of("fe80::1%eth0") == "fe80::/64"
    assert network_of("testclient") == "testclient"


def test_the_entry_budget_of_a_window() -> None:
    assert auto_entry_budget(120, 300) == 30  # a quarter of the places: a flood holds at most 2 x 30 = 60 lists
    assert auto_entry_budget(400, 300) == 100
    assert auto_entry_budget(40, 300) == 20  # at least 20
    assert auto_entry_budget(120, 300, arrivals_per_hour=600) == 250  # 5 x 600/h x 300 s = 250 > 30
    assert auto_entry_budget(120, 300, arrivals_per_hour=60) == 30  # 5 x 5 = 25 < 30


def test_the_networks_budgets_are_shares_of_the_entry_budget() -> None:
    assert network_budgets(30, 0, 0) == (8, 15)  # ceil(30 / 4), ceil(30 / 2): neither spends the whole budget
    assert network_budgets(20, 0, 0) == (5, 10)
    assert network_budgets(1, 0, 0) == (1, 1)  # at least one
    assert network_budgets(30, 3, -1) == (3, 0)  # given; -1: no limit (0 in the store's terms)
    assert network_budgets(30, -1, 40) == (0, 40)
