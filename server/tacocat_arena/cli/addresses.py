"""Addresses a person can open: ``serve --host 0.0.0.0`` listens everywhere, but nobody can
browse to 0.0.0.0 from another machine; start-up prints this machine's name and addresses.

The addresses are found without sending anything: the host name's own addresses, and the
source address the system would use for a route out (a UDP socket's ``connect`` picks it,
no packet leaves).  Loopback addresses come last: they only work on this machine.
"""

from __future__ import annotations

import ipaddress
import socket

#: Hosts that mean "every interface" to ``bind``.
WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})
#: A documentation address (TEST-NET-1): connecting a UDP socket there only picks a route.
_PROBE = "192.0.2.1"


def _routed_address() -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((_PROBE, 9))
            return str(probe.getsockname()[0])
    except OSError:
        return None


def _name_addresses(name: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return []
    return [str(info[4][0]) for info in infos]


def reachable_hosts(host: str) -> list[str]:
    """Hosts to print for a server bound to ``host``: itself unless it is a wildcard, else
    this machine's addresses (others first, loopback last) and then its name."""
    if host not in WILDCARDS:
        return [host]
    name = socket.gethostname()
    found = [a for a in [_routed_address(), *_name_addresses(name)] if a]
    unique = list(dict.fromkeys(found))
    unique.sort(key=lambda a: ipaddress.ip_address(a).is_loopback)
    others = [a for a in unique if not ipaddress.ip_address(a).is_loopback]
    names = [name] if name and others else []
    return [*others, *names, *(unique if not others else []), "127.0.0.1"][:6]


def describe(host: str, port: int, scheme: str = "") -> tuple[str, str]:
    """``(first, note)``: the address to print first (scripts read it) and, for a wildcard,
    what else to try and that it listens everywhere."""
    hosts = list(dict.fromkeys(reachable_hosts(host)))
    shown = [f"{scheme}{h}:{port}{'/' if scheme else ''}" for h in hosts]
    if host not in WILDCARDS:
        return shown[0], ""
    rest = f"; also {', '.join(shown[1:])}" if len(shown) > 1 else ""
    return shown[0], f" (listening on every interface{rest})"
