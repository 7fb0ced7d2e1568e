"""The network guard: schemes, private/loopback/link-local addresses in every spelling, DNS
results checked after resolution (injected resolver — no real DNS), malformed URLs."""

from __future__ import annotations

import pytest

from subagents.web.guard import (
    GuardError,
    address_problem,
    check_url,
    normalise_url,
    parse_ip_host,
    parse_ipv4_loose,
)
from tests.fakes.web_server import static_resolver

NO_DNS = static_resolver({})  # any name lookup fails: these URLs must be decided without DNS

REFUSED_LITERALS = [
    ("http://127.0.0.1/", "loopback"),
    ("http://127.0.0.1:8080/admin", "loopback"),
    ("http://localhost/", "loopback"),
    ("http://foo.localhost:3000/", "loopback"),
    ("http://10.0.0.5/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://172.31.255.254/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[::1]/", "loopback"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[fe80::1%25eth0]/", "link-local"),
    ("http://[fc00::1]/", "private"),
    ("http://[fd12:3456::1]/", "private"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[::ffff:169.254.169.254]/", "link-local"),
    ("http://[::ffff:10.0.0.1]/", "private"),
    ("http://[64:ff9b::a9fe:a9fe]/", "link-local"),  # NAT64 of 169.254.169.254
    ("http://[2002:7f00:1::]/", "loopback"),  # 6to4 of 127.0.0.1
    ("http://0.0.0.0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://2130706433/", "loopback"),  # decimal 127.0.0.1
    ("http://0x7f000001/", "loopback"),  # hex
    ("http://127.1/", "loopback"),  # short form
    ("http://0x7f.0.0.1/", "loopback"),
    ("http://3232235777/", "private"),  # 192.168.1.1
    ("http://224.0.0.1/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    ("http://240.0.0.1/", "reserved"),
    ("http://100.64.0.1/", "shared"),
    ("HTTP://LOCALHOST./", "loopback"),
]


@pytest.mark.parametrize("url,why", REFUSED_LITERALS)
async def test_non_public_addresses_are_refused(url: str, why: str) -> None:
    with pytest.raises(GuardError) as e:
        await check_url(url, resolver=NO_DNS)
    msg = str(e.value)
    assert "not a public address" in msg and why in msg
    assert NO_DNS.calls == []  # decided without asking DNS


@pytest.mark.parametrize("url", REFUSED_LITERALS[:8])
async def test_private_addresses_allowed_when_explicitly_enabled(url: tuple[str, str]) -> None:
    target = await check_url(url[0], allow_private_network=True, resolver=NO_DNS)
    assert target.private


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.test/x", "gopher://example.test/", "javascript:alert(1)",
            "data:text/html,hi", "ws://example.test/"]
)
async def test_other_schemes_refused_even_with_private_network_allowed(url: str) -> None:
    with pytest.raises(GuardError, match="scheme"):
        await check_url(url, allow_private_network=True, resolver=NO_DNS)


@pytest.mark.parametrize(
    "url,match",
    [
        ("not a url", "no scheme"),
        ("example.test/page", "no scheme"),
        ("http://", "no host"),
        ("http:///path", "no host"),
        ("http://exa mple.test/", "malformed"),
        ("http://a..b/", "malformed host"),
        ("http://example.test:99999/", "port"),
        ("http://user:pw@example.test/", "credentials"),
        ("http://[::zz]/", "malformed"),
        ("http://09.1.1.1/", "malformed"),
        ("http://0177.0.0.1/", "malformed"),  # httpx refuses leading-zero dotted quads outright
        ("http://1.2.3.300/", "malformed"),
        ("", "empty"),
        ("http://example.test/\r\nX-Injected: 1", "control characters"),
    ],
)
async def test_malformed_urls_are_refused_readably(url: str, match: str) -> None:
    with pytest.raises(GuardError, match=match):
        await check_url(url, resolver=NO_DNS)


async def test_names_are_checked_after_resolution() -> None:
    resolver = static_resolver(
        {
            "public.test": ["93.184.216.34"],
            "sneaky.test": ["93.184.216.34", "10.0.0.7"],  # one bad address refuses the host
            "metadata.test": ["169.254.169.254"],
            "v6local.test": ["::1"],
            "mapped.test": ["::ffff:127.0.0.1"],
        }
    )
    ok = await check_url("https://Public.TEST./a?b=1#frag", resolver=resolver)
    assert ok.address == "93.184.216.34" and ok.host == "public.test" and not ok.private
    assert str(ok.url) == "https://public.test/a?b=1"
    for host, why in [("sneaky.test", "private"), ("metadata.test", "link-local"), ("v6local.test", "loopback"),
                      ("mapped.test", "loopback")]:
        with pytest.raises(GuardError, match=why) as e:
            await check_url(f"http://{host}/", resolver=resolver)
        assert host in str(e.value)


async def test_dns_failure_is_a_readable_error() -> None:
    resolver = static_resolver({})
    with pytest.raises(GuardError, match="could not resolve host 'nowhere.test'"):
        await check_url("http://nowhere.test/", resolver=resolver)

    async def broken(host: str, port: int) -> list[str]:
        raise OSError("resolver exploded")

    with pytest.raises(GuardError, match="resolver exploded"):
        await check_url("http://nowhere.test/", resolver=broken)

    async def empty(host: str, port: int) -> list[str]:
        return []

    with pytest.raises(GuardError, match="no addresses"):
        await check_url("http://nowhere.test/", resolver=empty)


async def test_replay_checks_without_dns() -> None:
    target = await check_url("http://some-host.test/x", resolver=NO_DNS, resolve=False)
    assert target.address == "" and NO_DNS.calls == []
    with pytest.raises(GuardError):
        await check_url("http://127.1/", resolve=False)


def test_numeric_host_forms() -> None:
    assert str(parse_ipv4_loose("2130706433")) == "127.0.0.1"
    assert str(parse_ipv4_loose("127.1")) == "127.0.0.1"
    assert str(parse_ipv4_loose("10.1.258")) == "10.1.1.2"
    assert str(parse_ipv4_loose("0x7f.0x0.0x0.0x1")) == "127.0.0.1"
    assert str(parse_ipv4_loose("017700000001")) == "127.0.0.1"
    assert parse_ipv4_loose("example.test") is None
    assert parse_ipv4_loose("1.2.3.4.5") is None  # a (silly) name, not an address
    assert str(parse_ip_host("[::ffff:127.0.0.1]")) == "::ffff:7f00:1"


def test_normalise_url() -> None:
    assert str(normalise_url("HTTP://Example.TEST:80/A?x=1#top")) == "http://example.test/A?x=1"
    assert str(normalise_url("https://example.test:443/")) == "https://example.test/"
    assert str(normalise_url("https://example.test:8443/")) == "https://example.test:8443/"
    assert str(normalise_url("http://2130706433/x")) == "http://127.0.0.1/x"


def test_public_addresses_pass() -> None:
    import ipaddress

    for a in ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"]:
        assert address_problem(ipaddress.ip_address(a)) is None, a
