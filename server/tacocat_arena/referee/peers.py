"""Which process is on the other end of a session: a stolen token is useless without it.

A bot's token is in its environment, which any process of the same user can read
(``/proc/PID/environ``).  So the runner also tells the referee which process it started for
each identity, and a session is accepted only from that process or one of its descendants
(a shell wrapper, say).  Linux only; on other systems the check lets every session through.

- Over TCP on loopback the servicer knows the peer's port (``context.peer()``); the kernel's
  socket table (``/proc/net/tcp``, ``tcp6``) maps that connection to a socket inode, and the
  inode to the process holding it (as ``ss -p`` does).  That is exact for each call.
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
        port = _peer_port(peer)
        if port is None:
            return f"cannot tell which process is on the other end of {peer!r}"
        inode = _tcp_inode(port, self.tcp_port)
        if inode is None:
            return f"no loopback connection from port {port} in the kernel's socket table"
        if not any(inode in _socket_inodes(pid) for pid in descendants(root)):
            return (
                f"the connection does not come from the process the runner started for "
                f"{name!r} (pid {root}): a bot's token works only from its own process"
            )
        return None

    def _check_unix(self, name: str, root: int) -> str | None:
        own = [path for path, owner in self.sockets.items() if owner == name]
        family = set(descendants(root))
        foreign = 0
        mine = 0
        for path, pid, sock in _unix_connections(set(self.sockets)):
            with sock:
                inode = os.fstat(sock.fileno()).st_ino
                if inode in self._cut:
                    continue
                owner = self.sockets[path]
                tree = family if owner == name else set(descendants(self.roots.get(owner, -1)))
                if pid in tree:
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


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (from each process's parent in /proc)."""
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        parent = _parent(int(entry.name))
        if parent is not None:
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


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


def _peer_port(peer: str) -> int | None:
    """The client's port in gRPC's peer string (``ipv4:127.0.0.1:5000``, ``ipv6:[::1]:5000``)."""
    _, _, address = peer.partition(":")
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return None
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host.strip("[]")).is_loopback or host.strip("[]").startswith(
            "::ffff:127."
        ):
            return int(port)
    return None


def _tcp_inode(client_port: int, server_port: int) -> int | None:
    """The inode of the client's end of a loopback connection to ``server_port``."""
    for table in ("tcp", "tcp6"):
        try:
            lines = (_PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], int(fields[9])
            if (
                int(local.rsplit(":", 1)[1], 16) == client_port
                and int(remote.rsplit(":", 1)[1], 16) == server_port
                and inode
            ):
                return inode
    return None


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
