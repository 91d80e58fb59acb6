"""Which process is on the other end of a session: a stolen token is useless without it.

A bot's token is in its environment, which any process of the same user can read
(``/proc/PID/environ``).  So the runner also tells the referee which process it started for
each identity, and a session is accepted only from that process or one of its descendants
(a shell wrapper, say).  Linux only; on other systems the check lets every session through.

- Over TCP on loopback the servicer knows the peer's address and port (``context.peer()``);
  the kernel's socket tables (``/proc/net/tcp`` and ``tcp6``, where an IPv4-mapped socket
  is listed) map that exact address and port to a socket inode, and the inode to the
  process holding it (as ``ss -p`` does).  More than one match is refused: a session is
  never credited to a process on a guess.
- Over a Unix socket gRPC names no peer, but the kernel does for every accepted connection
  (``SO_PEERCRED``).  Each bot process gets a socket of its own; every connection on it must
  come from that bot's processes.  A connection from anyone else is shut down, and the
  session asking while one was open is refused: a thief is cut off, and cannot hide behind
  the bot's own connection.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

_PROC = Path("/proc")


class PeerCheck:
    """The processes the runner started, by identity; callable as the referee's
    ``check_peer(name, peer) -> reason | None`` (None: the peer may be ``name``)."""

    def __init__(self, tcp_port: int = 0) -> None:
        self.tcp_port = tcp_port
        self.roots: dict[str, int] = {}  # identity -> pid of the process started for it
        self.sockets: dict[str, str] = {}  # Unix socket path -> identity
        self._cut: set[int] = set()  # inodes of connections shut down (dead, if not closed yet)

    def expect(self, name: str, pid: int) -> None:
        """``name`` may connect from ``pid`` and its descendants (called at each start)."""
        self.roots[name] = pid

    def listen(self, name: str, path: Path) -> None:
        """``path`` is ``name``'s own Unix socket."""
        self.sockets[str(path)] = name

    def __call__(self, name: str, peer: str) -> str | None:
        root = self.roots.get(name)
        if root is None:
            return None  # not a bot the runner started (``serve``): its token decides
        if not _PROC.joinpath("net", "tcp").exists():
            return None  # no procfs: nothing to check with
        if peer.startswith("unix:"):
            return self._check_unix(name, root)
        address = _peer_address(peer)
        if address is None:
            return f"cannot tell which process is on the other end of {peer!r}"
        inodes = _tcp_inodes(address, self.tcp_port)
        if not inodes:
            return f"no loopback connection from {peer!r} in the kernel's socket table"
        # The started process itself first: its launcher's helpers exec the bot in place, so
        # it usually holds the socket, and its descendants' table is read only if it does not.
        held = _socket_inodes(root)
        if not inodes <= held:
            for pid in descendants(root)[1:]:
                held |= _socket_inodes(pid)
        if inodes <= held:
            # Every socket at that address is the bot's own (a socket can be listed more than
            # once, or the bot hold several at one port): the connection is one of them.
            return None
        if len(inodes) > 1:
            return (
                f"{len(inodes)} sockets in the kernel's tables match {peer!r}, not all of them "
                f"{name!r}'s: the connection cannot be told apart, so it is refused"
            )
        return (
            f"the connection does not come from the process the runner started for "
            f"{name!r} (pid {root}): a bot's token works only from its own process"
        )

    def _check_unix(self, name: str, root: int) -> str | None:
        own = [path for path, owner in self.sockets.items() if owner == name]
        # Each connection's peer is walked up to its owner's process (a few reads of /proc
        # each), never the whole process table: a table per connection made one admission
        # cost seconds once 20 bots were connected, and the referee's loop stood still
        # meanwhile (the Hellos queued behind it timed out: 'exited with code 0 before
        # connecting'); one table a check was still most of the runner's CPU in a start.
        foreign = 0
        mine = 0
        for path, pid, sock in _unix_connections(set(self.sockets)):
            with sock:
                inode = os.fstat(sock.fileno()).st_ino
                if inode in self._cut:
                    continue
                owner = self.sockets[path]
                if _descends_from(pid, self.roots.get(owner, -1)):
                    mine += path in own
                    continue
                if path in own:
                    foreign += 1
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)  # cut the intruder off
                self._cut.add(inode)
        if foreign:
            return (
                f"a process that is not {name!r}'s own connected to its socket (cut off); "
                "this session is refused"
            )
        if not mine:
            return f"no connection on {name!r}'s own socket comes from its process"
        return None


def descendants(root: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """``root`` and every process below it (from each process's parent in /proc);
    ``children`` is a ``_children()`` table already read, for several trees at one cost."""
    if children is None:
        children = _children()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _descends_from(pid: int, root: int) -> bool:
    """Whether ``pid`` is ``root`` or one of its descendants, from ``pid``'s parents (as
    ``descendants(root)`` would say, reading only the chain above ``pid``)."""
    seen: set[int] = set()
    while pid > 0 and pid not in seen:
        if pid == root:
            return True
        seen.add(pid)
        parent = _parent(pid)
        if parent is None:
            return False
        pid = parent
    return False


def _children() -> dict[int, list[int]]:
    """Every process's children, by pid, from one pass over /proc."""
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        parent = _parent(int(entry.name))
        if parent is not None:
            children.setdefault(parent, []).append(int(entry.name))
    return children


def _parent(pid: int) -> int | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def _socket_inodes(pid: int) -> set[int]:
    inodes: set[int] = set()
    try:
        entries = list((_PROC / str(pid) / "fd").iterdir())
    except OSError:
        return inodes
    for entry in entries:
        with contextlib.suppress(OSError):
            target = os.readlink(entry)
            if target.startswith("socket:["):
                inodes.add(int(target[8:-1]))
    return inodes


def _peer_address(peer: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int] | None:
    """The client's loopback address and port in gRPC's peer string (``ipv4:127.0.0.1:5000``,
    ``ipv6:[::1]:5000``), an IPv4-mapped IPv6 address as the IPv4 one it is; None if the peer
    is not on loopback."""
    _, _, address = peer.partition(":")
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return None
    try:
        ip = _plain(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None
    return (ip, int(port)) if ip.is_loopback else None


def _plain(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``::ffff:127.0.0.2`` is 127.0.0.2: the kernel lists such a socket in ``tcp6``, while
    the server, listening on IPv4, names its peer in IPv4."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _table_address(field: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """An ``ADDRESS:PORT`` of ``/proc/net/tcp{,6}``: the address is printed as 32-bit words
    in the host's byte order, the port in hex."""
    hex_address, _, hex_port = field.rpartition(":")
    raw = bytes.fromhex(hex_address)
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.IPv4Address(raw) if len(raw) == 4 else ipaddress.IPv6Address(raw)
    return _plain(ip), int(hex_port, 16)


def _tcp_inodes(
    client: tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int], server_port: int
) -> set[int]:
    """The inodes of every socket, in both tables, whose local end is exactly ``client``
    (address and port) and whose remote end is ``server_port`` on loopback: one for a
    genuine connection.  Matching the port alone let a socket bound to another loopback
    address at the same port (``::ffff:127.0.0.2``, listed in ``tcp6``) pass as the bot's."""
    found: set[int] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (_PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            inode = int(fields[9])
            if not inode:
                continue  # TIME_WAIT and the like: held by no process
            remote_ip, remote_port = _table_address(fields[2])
            if (
                remote_port == server_port
                and remote_ip.is_loopback
                and _table_address(fields[1]) == client
            ):
                found.add(inode)
    return found


def _unix_connections(paths: set[str]) -> Iterator[tuple[str, int, socket.socket]]:
    """This process's accepted connections on the Unix sockets ``paths``: (path, peer pid,
    a duplicate of the socket, which the caller closes)."""
    for entry in _PROC.joinpath("self", "fd").iterdir():
        try:
            if not os.readlink(entry).startswith("socket:"):
                continue
            sock = socket.socket(fileno=os.dup(int(entry.name)))
        except OSError:
            continue
        try:
            if sock.family != socket.AF_UNIX or sock.getsockopt(
                socket.SOL_SOCKET, socket.SO_ACCEPTCONN
            ):
                sock.close()
                continue
            path = sock.getsockname()
            if path not in paths:
                sock.close()
                continue
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, _, _ = struct.unpack("3i", creds)
        except OSError:
            sock.close()
            continue
        yield path, pid, sock
