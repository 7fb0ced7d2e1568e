"""The network guard: schemes, private/loopback/link-local addresses in every spelling, DNS
results checked after resolution (injected resolver — no real DNS), malformed URLs."""

from __future__ import annotations

import re

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
    ("http://100.64.0.1/", "shared (carrier-grade NAT)"),
    ("http://[64:ff9b:1::1]/", "reserved"),  # local-use NAT64 (Python 3.11 calls it reserved)
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "loopback (embedded IPv4 127.0.0.1)"),  # Teredo client
    ("HTTP://LOCALHOST./", "loopback"),
]


@pytest.mark.parametrize("url,why", REFUSED_LITERALS)
async def test_non_public_addresses_are_refused(url: str, why: str) -> None:
    with pytest.raises(GuardError) as e:
        await check_url(url, resolver=NO_DNS)
    msg = str(e.value)
    assert f"is not a public address ({why})" in msg or f"is not a public address ({why} (embedded" in msg
    assert msg.endswith("; only public internet addresses may be fetched")
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


async def test_refusals_say_what_was_refused_and_why_exactly() -> None:
    with pytest.raises(GuardError) as e:
        await check_url("http://127.0.0.1/", resolver=NO_DNS)
    assert str(e.value) == ("refused to fetch http://127.0.0.1/: host 127.0.0.1 is not a public address (loopback); "
                            "only public internet addresses may be fetched")
    with pytest.raises(GuardError) as e:
        await check_url("http://sneaky.test/x", resolver=static_resolver({"sneaky.test": ["93.184.216.34", "10.0.0.7"]}))
    assert str(e.value) == ("refused to fetch http://sneaky.test/x: host sneaky.test (10.0.0.7) is not a public "
                            "address (private); only public internet addresses may be fetched")
    long = "http://127.0.0.1/" + "p" * 300
    with pytest.raises(GuardError) as e:
        await check_url(long, resolver=NO_DNS)
    assert str(e.value).startswith(f"refused to fetch {long[:200]}: host")


@pytest.mark.parametrize("url, message", [
    ("", "empty URL"),
    ("   ", "empty URL"),
    ("http://e.test/\x7f", "URL contains control characters"),
    ("http://u:p@e.test/", "URLs with embedded credentials (user:password@) are not fetched"),
    ("http://example.test:0/", "malformed URL 'http://example.test:0/': port 0 out of range"),
    ("http://example.test:65536/", "malformed URL 'http://example.test:65536/': port 65536 out of range"),
    ("www.example.test/" + "w" * 300, f"malformed URL {('www.example.test/' + 'w' * 300)[:200]!r}: no scheme "
                                      "(expected http:// or https://)"),
    ("http://example.test:0/" + "q" * 300, f"malformed URL {('http://example.test:0/' + 'q' * 300)[:200]!r}: port 0 "
                                           "out of range"),
    ("http:///" + "n" * 300, f"malformed URL {('http:///' + 'n' * 300)[:200]!r}: no host"),
    ("http://[::zz]/" + "z" * 300, f"malformed URL {('http://[::zz]/' + 'z' * 300)[:200]!r}: Invalid IPv6 address: "
                                   "'[::zz]'"),
])
def test_malformed_url_messages(url: str, message: str) -> None:
    with pytest.raises(GuardError) as e:
        normalise_url(url)
    assert str(e.value) == message


async def test_the_port_range_is_inclusive() -> None:
    for port in (1, 65535):
        target = await check_url(f"http://example.test:{port}/", resolver=NO_DNS, resolve=False)
        assert target.port == port


async def test_a_checked_target_carries_what_the_fetcher_needs() -> None:
    seen: list[tuple[str, int]] = []

    async def resolver(host: str, port: int) -> list[str]:
        seen.append((host, port))
        return {"one.test": ["93.184.216.34", "2606:4700:4700::1111"], "zone.test": ["fe80::1%eth0%x", "93.184.216.34"],
                "bad.test": ["nonsense"]}[host]

    t = await check_url("https://one.test/a#frag", resolver=resolver)
    assert (str(t.url), t.host, t.port, t.address, t.addresses, t.private) == (
        "https://one.test/a", "one.test", 443, "93.184.216.34", ("93.184.216.34", "2606:4700:4700::1111"), False)
    z = await check_url("http://zone.test:8080/", resolver=resolver, allow_private_network=True)
    assert (z.port, z.address, z.addresses, z.private) == (8080, "fe80::1", ("fe80::1", "93.184.216.34"), True)
    assert seen == [("one.test", 443), ("zone.test", 8080)]
    with pytest.raises(GuardError) as e:
        await check_url("http://bad.test/", resolver=resolver)
    assert str(e.value) == "resolver returned a malformed address 'nonsense' for 'bad.test'"
    replay = await check_url("http://some.test/x", resolver=NO_DNS, resolve=False)
    assert (str(replay.url), replay.host, replay.port, replay.address, replay.addresses, replay.private) == (
        "http://some.test/x", "some.test", 80, "", (), False)


def test_address_labels() -> None:
    import ipaddress

    for addr, label in [("0.0.0.0", "unspecified"), ("127.0.0.1", "loopback"), ("169.254.1.1", "link-local"),
                        ("224.0.0.1", "multicast"), ("240.0.0.1", "reserved"), ("10.0.0.1", "private"),
                        ("100.64.0.1", "shared (carrier-grade NAT)"), ("64:ff9b:1::1", "reserved"),
                        ("2001:db8::1", "private")]:
        assert address_problem(ipaddress.ip_address(addr)) == label, addr


def test_zone_ids_and_malformed_numbers() -> None:
    assert str(parse_ip_host("[fe80::1%eth0%x]")) == "fe80::1"
    with pytest.raises(GuardError) as e:
        parse_ipv4_loose("09.1.1.1")
    assert str(e.value) == "malformed numeric host '09.1.1.1'"
    with pytest.raises(GuardError) as e:
        parse_ip_host("[::zz%eth0]")
    assert str(e.value) == "malformed IPv6 host '[::zz%eth0]'"


async def test_the_system_resolver_answers_from_the_hosts_file_and_literals() -> None:
    """No network: localhost comes from /etc/hosts, literals are not looked up at all."""
    from subagents.web.guard import default_resolver

    local = await default_resolver("localhost", 80)
    assert "127.0.0.1" in local and len(local) == len(set(local))
    assert await default_resolver("127.0.0.1", 443) == ["127.0.0.1"]
    assert await default_resolver("fe80::1%lo", 80) == ["fe80::1"]


def test_loose_ipv4_bounds_and_forms() -> None:
    from subagents.web.guard import normalised_url_str

    assert str(parse_ipv4_loose("1.16777215")) == "1.255.255.255"
    assert str(parse_ipv4_loose("1.2.3.4.")) == "1.2.3.4"  # a trailing dot is the root
    assert parse_ipv4_loose(".1.2.3") is None  # an empty label: a name, not an address
    assert str(parse_ipv4_loose("0x.0.0.1")) == "0.0.0.1" and str(parse_ipv4_loose("0")) == "0.0.0.0"
    for bad in ("256.1", "1.2.3.256", "1.16777216", "1.2.65536", "08", "0.0.0.09"):
        with pytest.raises(GuardError, match=f"^malformed numeric host '{re.escape(bad)}'$"):
            parse_ipv4_loose(bad)
    assert normalised_url_str("HTTP://X.Test:80/a#frag") == "http://x.test/a"


@pytest.mark.parametrize("url, why", [("http://[::127.0.0.1]/", "loopback (embedded IPv4 127.0.0.1)"),
                                      ("http://[::2]/", "private (embedded IPv4 0.0.0.2)")])
async def test_ipv4_compatible_addresses_are_judged_by_their_ipv4(url: str, why: str) -> None:
    with pytest.raises(GuardError, match=re.escape(f"not a public address ({why})")):
        await check_url(url, resolver=NO_DNS)
