"""Which addresses outbound requests may reach: public ones, and what the allow list names.

One definition of loopback for the whole tool, and the rule of ARCHITECTURE.md ("Outbound
requests"): loopback, private, link-local (cloud metadata included), shared, multicast,
reserved and unspecified addresses, also when wrapped in an IPv6 form, are refused unless
CODEBLANKS_OUTBOUND_ALLOW lists the host, the host:port pair, the address or its range.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT, not private per ipaddress
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known prefix: an IPv4 address inside
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_HOST_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


def address(host: str) -> IP | None:
    """Return `host` as an IP address if it is an IP literal (brackets allowed), else None."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def loopback(host: str) -> bool:
    """Return whether `host` is "localhost" or a loopback IP literal (127.0.0.0/8, ::1)."""
    name = host.lower().rstrip(".")
    if name == "localhost":
        return True
    found = address(name)
    return found is not None and found.is_loopback


def check_url(url: str, what: str) -> None:
    """Require an absolute https URL, or http on a loopback host; raise ValueError if not."""
    parts = urlsplit(url)
    if parts.netloc and parts.hostname:
        if parts.scheme == "https" or (parts.scheme == "http" and loopback(parts.hostname)):
            return
    raise ValueError(f"{what} must be an https URL (http only for loopback): {url!r}")


def kind(ip: IP) -> str | None:
    """Return why an address is not public ("loopback", "private", ...), or None if it is."""
    if isinstance(ip, ipaddress.IPv6Address):
        # the same IPv4 host reached through an IPv6 form must meet the IPv4 rule
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is None and ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None and (found := kind(inner)) is not None:
            return found
        if ip in _NAT64_LOCAL or ip.is_site_local:
            return "private"
    checks = (
        (ip.is_loopback, "loopback"),
        (ip.is_unspecified, "unspecified"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),
        (ip in _SHARED, "shared (100.64.0.0/10)"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
        (not ip.is_global, "not public"),
    )
    return next((name for hit, name in checks if hit), None)


@dataclass(frozen=True)
class Allowed:
    """The CODEBLANKS_OUTBOUND_ALLOW entries: host names, host:port pairs, addresses, ranges."""

    hosts: frozenset[str] = frozenset()
    host_ports: frozenset[tuple[str, int]] = frozenset()
    networks: tuple[Network, ...] = ()
    address_ports: frozenset[tuple[IP, int]] = frozenset()

    @classmethod
    def parse(cls, text: str) -> Allowed:
        """Read a comma-separated list; raise ValueError naming an entry that is none of these."""
        hosts: set[str] = set()
        host_ports: set[tuple[str, int]] = set()
        networks: list[Network] = []
        address_ports: set[tuple[IP, int]] = set()
        for raw in text.split(","):
            entry = raw.strip().lower().rstrip(".")
            if not entry:
                continue
            if "/" in entry:
                networks.append(_network(entry))
            elif (ip := address(entry)) is not None:
                networks.append(ipaddress.ip_network(ip))
            else:
                host, port = _host_port(entry)
                if (ip := address(host)) is not None and port is not None:
                    address_ports.add((ip, port))
                elif port is not None:
                    host_ports.add((host, port))
                else:
                    hosts.add(host)
        return cls(
            frozenset(hosts), frozenset(host_ports), tuple(networks), frozenset(address_ports)
        )

    def permits(self, host: str, port: int, ip: IP) -> bool:
        """Return whether a connection to `ip`:`port`, for the URL host `host`, is allowed."""
        name = host.lower().rstrip(".").strip("[]")
        if (
            name in self.hosts
            or (name, port) in self.host_ports
            or (ip, port) in self.address_ports
        ):
            return True
        if any(ip.version == net.version and ip in net for net in self.networks):
            return True
        return kind(ip) is None


def _network(entry: str) -> Network:
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        raise ValueError(_bad(entry)) from None


def _host_port(entry: str) -> tuple[str, int | None]:
    host, port = entry, None
    if entry.startswith("["):  # [::1]:8000
        host, _, rest = entry[1:].partition("]")
        if not rest.startswith(":") or address(host) is None:
            raise ValueError(_bad(entry))
        port = _port(entry, rest[1:])
    elif ":" in entry:
        host, _, text = entry.rpartition(":")
        port = _port(entry, text)
    if address(host) is None and not _HOST_NAME.match(host):
        raise ValueError(_bad(entry))
    return host, port


def _port(entry: str, text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(_bad(entry))
    return int(text)


def _bad(entry: str) -> str:
    return (
        f"CODEBLANKS_OUTBOUND_ALLOW: {entry!r} is not a host, host:port pair, IP address "
        "or CIDR range (e.g. moodle.school.lan, 127.0.0.1:8000, 10.20.0.0/16)"
    )
