"""The network guard: which URLs an agent may make us fetch.

A fetched page is untrusted, and so is any URL a model asks for (a page can tell a model to
"fetch http://169.254.169.254/…"). The guard refuses, in code, whatever the model says:

* schemes other than http and https, URLs with embedded credentials, malformed hosts/ports;
* any host that resolves to an address that is not globally routable: loopback, private
  (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16 — cloud metadata — and
  fe80::/10), multicast, reserved, unspecified (0.0.0.0, ::), shared/CGNAT, documentation
  ranges; IPv6 forms that embed an IPv4 address (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::/96 NAT64,
  2002::/16 6to4, Teredo) are judged by the embedded address too.

Numeric hosts are normalised the way the C resolver would read them (``2130706433``,
``0x7f000001``, ``127.1``, ``0177.0.0.1`` are all 127.0.0.1), without any DNS query. Names are
resolved (``trio.socket.getaddrinfo``, or an injected resolver in tests) and *every* address
they resolve to must be allowed: one bad address refuses the host.

DNS rebinding. A check on the name followed by a second lookup at connect time can be fooled
by a resolver that answers "public" first and "127.0.0.1" second. So the fetcher does not look
the name up again: it connects to the very address the guard checked (the request goes to
``http://<checked-ip>:port/…`` with the original ``Host`` header and, for https, the original
name as TLS SNI and for certificate verification). The remaining trade-offs: one address is
tried (no happy-eyeballs fallback to the others), and keep-alive is off so a pooled connection
is never reused for a different name. Every redirect hop goes through the same check.

``allow_private_network=True`` (tests against a loopback server, an operator's explicit CLI
flag) lifts the address check but never the scheme check.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import Awaitable, Callable

import httpx
import trio

from ..tools import ToolError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# An async callable: (host, port) -> list of IP address strings. Raise OSError on failure.
Resolver = Callable[[str, int], Awaitable[list[str]]]

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}

_HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$")
_NUMERIC_PART_RE = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4_COMPAT = ipaddress.IPv6Network("::/96")
_SHARED_V4 = ipaddress.IPv4Network("100.64.0.0/10")


class GuardError(ToolError):
    """A URL the guard refuses. The message names the reason so the agent can read it."""


@dataclass(frozen=True)
class CheckedTarget:
    """A URL that passed the guard, with the address to connect to."""

    url: httpx.URL  # the logical URL (original host name), fragment dropped
    host: str  # ASCII (IDNA) host name or the normalised IP literal
    port: int
    address: str  # the checked IP to connect to
    addresses: tuple[str, ...]  # everything the host resolved to (all checked)
    private: bool  # True if any address is not public (only possible with allow_private_network)


async def default_resolver(host: str, port: int) -> list[str]:
    """Resolve through the system resolver, in trio's worker thread."""
    infos = await trio.socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    out: list[str] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        ip = str(sockaddr[0]).split("%", 1)[0]
        if ip not in out:
            out.append(ip)
    return out


def parse_ipv4_loose(host: str) -> ipaddress.IPv4Address | None:
    """Read a host the way inet_aton(3) does: 1–4 dot-separated parts, each decimal, 0x-hex or
    0-octal, the last part filling the remaining bytes. Returns None when it is not numeric."""
    h = host.lower().rstrip(".")
    if not h:
        return None
    parts = h.split(".")
    if len(parts) > 4 or not all(_NUMERIC_PART_RE.match(p) for p in parts):
        return None
    values: list[int] = []
    for p in parts:
        if p.startswith("0x"):
            values.append(int(p[2:] or "0", 16))
        elif len(p) > 1 and p.startswith("0"):
            if any(c in "89" for c in p):
                raise GuardError(f"malformed numeric host {host!r}")
            values.append(int(p, 8))
        else:
            values.append(int(p))
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        raise GuardError(f"malformed numeric host {host!r}")
    n = 0
    for v in head:
        n = (n << 8) | v
    n = (n << (8 * (4 - len(head)))) | last
    return ipaddress.IPv4Address(n)


def parse_ip_host(host: str) -> IPAddress | None:
    """An IP literal in any accepted form (IPv6 without brackets), or None for a name."""
    h = host.strip("[]")
    if ":" in h:
        h = h.split("%", 1)[0]  # zone id ("fe80::1%eth0"); scope is irrelevant to the check
        try:
            return ipaddress.IPv6Address(h)
        except ValueError:
            raise GuardError(f"malformed IPv6 host {host!r}") from None
    return parse_ipv4_loose(h)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries (mapped, compatible, NAT64, 6to4, Teredo)."""
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if ip in _IPV4_COMPAT and int(ip) > 1:
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if ip in _NAT64:
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    return found


def address_problem(ip: IPAddress) -> str | None:
    """Why `ip` is not a public address, or None if it is."""
    if isinstance(ip, ipaddress.IPv6Address):
        for v4 in embedded_ipv4(ip):
            why = address_problem(v4)
            if why:
                return f"{why} (embedded IPv4 {v4})"
    for label, flag in (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
    ):
        if flag:
            return label
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED_V4:
        return "shared (carrier-grade NAT)"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL:
            return "local NAT64"
    if not ip.is_global:
        return "not globally routable"
    return None


def normalise_url(url: str | httpx.URL) -> httpx.URL:
    """Parse and normalise: lowercase scheme and host, default port dropped, fragment dropped.

    Raises GuardError for anything that is not a well-formed http(s) URL.
    """
    if isinstance(url, str):
        url = url.strip()
        if not url:
            raise GuardError("empty URL")
        if any(ord(c) < 0x20 or c == "\x7f" for c in url):
            raise GuardError("URL contains control characters")
    try:
        u = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as e:
        raise GuardError(f"malformed URL {str(url)[:200]!r}: {e}") from None
    scheme = u.scheme.lower()
    if not scheme:
        raise GuardError(f"malformed URL {str(url)[:200]!r}: no scheme (expected http:// or https://)")
    if scheme not in ALLOWED_SCHEMES:
        raise GuardError(f"scheme {scheme!r} is not allowed (only http and https)")
    if u.userinfo:
        raise GuardError("URLs with embedded credentials (user:password@) are not fetched")
    try:
        host = u.raw_host.decode("ascii").lower()
    except UnicodeDecodeError:
        raise GuardError(f"malformed host in {str(url)[:200]!r}") from None
    if not host:
        raise GuardError(f"malformed URL {str(url)[:200]!r}: no host")
    port = u.port
    if port is not None and not (1 <= port <= 65535):
        raise GuardError(f"malformed URL {str(url)[:200]!r}: port {port} out of range")
    if port == DEFAULT_PORTS[scheme]:
        port = None
    ip = parse_ip_host(host)
    if ip is None:
        name = host.rstrip(".")
        if not _HOSTNAME_RE.match(name):
            raise GuardError(f"malformed host name {host!r}")
        host = name
    else:
        host = str(ip)
    return u.copy_with(scheme=scheme, host=host, port=port, fragment=None)


def normalised_url_str(url: str | httpx.URL) -> str:
    return str(normalise_url(url))


async def check_url(
    url: str | httpx.URL,
    *,
    allow_private_network: bool = False,
    resolver: Resolver | None = None,
    resolve: bool = True,
) -> CheckedTarget:
    """Check a URL and resolve its host; every address it resolves to must be allowed.

    With ``resolve=False`` (replaying recorded responses offline) names are not looked up:
    only the scheme, the form of the URL and IP literals are checked.
    """
    u = normalise_url(url)
    host = u.raw_host.decode("ascii")
    port = u.port or DEFAULT_PORTS[u.scheme]
    ip = parse_ip_host(host)
    if ip is not None:
        addrs: list[IPAddress] = [ip]
    elif host == "localhost" or host.endswith(".localhost"):
        # RFC 6761: always loopback, whatever a resolver says.
        addrs = [ipaddress.IPv4Address("127.0.0.1")]
    elif not resolve:
        return CheckedTarget(u, host, port, "", (), False)
    else:
        resolver = resolver or default_resolver
        try:
            raw = await resolver(host, port)
        except (OSError, UnicodeError) as e:  # socket.gaierror is an OSError
            raise GuardError(f"could not resolve host {host!r}: {e}") from None
        addrs = []
        for a in raw:
            try:
                addrs.append(ipaddress.ip_address(str(a).split("%", 1)[0]))
            except ValueError:
                raise GuardError(f"resolver returned a malformed address {a!r} for {host!r}") from None
        if not addrs:
            raise GuardError(f"could not resolve host {host!r}: no addresses")
    private = False
    for a in addrs:
        why = address_problem(a)
        if why:
            private = True
            if not allow_private_network:
                shown = host if ip is not None else f"{host} ({a})"
                raise GuardError(
                    f"refused to fetch {str(u)[:200]}: host {shown} is not a public address ({why}); "
                    "only public internet addresses may be fetched"
                )
    return CheckedTarget(u, host, port, str(addrs[0]), tuple(str(a) for a in addrs), private)
