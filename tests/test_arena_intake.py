"""A hostile player's uploads against a real ``tacocat-arena serve`` (issue 34: breaks 2-6, 8, 9).

Each test posts real archives over loopback HTTP to the CLI's server in its own process, as
any client would, and reads back what a player (or a stranger) can read.  What the arena
process cost is read from /proc (its peak RSS); no test asserts a duration: the gates' test
asserts the order in which versions went through the gate.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import signal
import socket
import tarfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import arena_support
import pytest
from arena_support import ArenaProcess, add_players, wait_until

from tacocat_arena.launch.package import pack
from tacocat_arena.launch.sandbox import bwrap_path

REPO = Path(__file__).resolve().parent.parent
GREEDY = REPO / "example_bots" / "packages" / "python-greedy"
MANIFEST = ("bot.toml", b'command = "python bot.py"\n')

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here"),
]


def start_arena(folder: Path, *args: str) -> ArenaProcess:
    return arena_support.start_arena(folder, "--move-timeout", "5", *args)


def request(
    arena: ArenaProcess,
    path: str,
    *,
    body: bytes | None = None,
    token: str = "",
) -> tuple[int, dict[str, str], bytes]:
    """GET (or POST ``body`` to) ``path``: status, headers (names in lower case), body."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    asked = urllib.request.Request(
        arena.web + path, data=body, method="POST" if body is not None else "GET", headers=headers
    )
    try:
        with urllib.request.urlopen(asked, timeout=120) as response:
            found = {k.lower(): v for k, v in response.headers.items()}
            return response.status, found, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def upload(arena: ArenaProcess, body: bytes, token: str) -> tuple[int, dict[str, Any]]:
    status, _, answer = request(arena, "/api/submissions", body=body, token=token)
    return status, json.loads(answer)


def versions(arena: ArenaProcess) -> dict[str, dict[str, Any]]:
    return {v["bot"]: v for v in arena.json("/api/submissions")}


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024  # type: ignore[index]


class StatusProbe:
    """Asks ``/api/status`` in a thread, one request after the other, while in its ``with``
    block; ``summary`` prints how long the answers took (the loop blocked shows here)."""

    def __init__(self, arena: ArenaProcess) -> None:
        self.arena = arena
        self.times: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._ask, daemon=True)

    def _ask(self) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            self.arena.status("/api/status")
            self.times.append(time.monotonic() - began)

    def __enter__(self) -> StatusProbe:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(30)

    def summary(self) -> str:
        ordered = sorted(self.times) or [0.0]
        median = ordered[len(ordered) // 2] * 1000
        return f"{len(ordered)} answers, median {median:.1f} ms, max {ordered[-1] * 1000:.0f} ms"


# -- hostile archives, made by hand ------------------------------------------------------------
def _tar(entries: list[tuple[str, bytes]], *, format: int = tarfile.PAX_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=format) as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip(entries: list[tuple[str, bytes, int]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zipped.writestr(info, data)
    return buffer.getvalue()


def symlink_bomb() -> bytes:
    """A zip whose 'symlink' entry inflates to 300 MiB (the arena inflated it whole: 598 ->
    2,123 MiB for a 1 MB upload)."""
    return _zip([("bot.toml", MANIFEST[1], 0o100644), ("link", bytes(300 * 2**20), 0o120777)])


def million_entries() -> bytes:
    """A zip whose central directory lists 1,000,000 entries (all pointing at one local
    header): +380 MiB before the entry cap counted them."""
    name = b"f"
    local = b"PK\x03\x04" + bytes(22) + len(name).to_bytes(2, "little") + bytes(2) + name
    record = (
        b"PK\x01\x02" + bytes(24) + len(name).to_bytes(2, "little") + bytes(16) + name
    )  # 46 bytes and the name; offset 0: the one local header
    count = 1_000_000
    directory = record * count
    end = (
        b"PK\x05\x06" + bytes(4) + (0xFFFF).to_bytes(2, "little") * 2
        + len(directory).to_bytes(4, "little") + len(local).to_bytes(4, "little") + bytes(2)
    )  # fmt: skip
    return local + directory + end


def big_manifest() -> bytes:
    """A 32 MiB bot.toml, 32 KiB gzipped (it froze /api/status for 56 s)."""
    return _tar([("bot.toml", b'command = "x"\n' + b"#" * (32 * 2**20) + b"\n")])


def corrupt_deflate() -> bytes:
    data = bytearray(
        _zip([("bot.toml", MANIFEST[1], 0o100644), ("x.bin", os.urandom(16000), 0o100644)])
    )
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("x.bin")
    start = info.header_offset + 30 + len("x.bin")
    data[start : start + 64] = b"\xff" * 64
    return bytes(data)


def chained_long_names(count: int = 3000) -> bytes:
    blocks = []
    for _ in range(count):
        payload = b"n" * 200 + b"\0"
        header = tarfile.TarInfo("././@LongLink")
        header.type, header.size = tarfile.GNUTYPE_LONGNAME, len(payload)
        blocks.append(header.tobuf(tarfile.GNU_FORMAT) + payload.ljust(512, b"\0"))
    last = tarfile.TarInfo("bot.toml")
    last.size = len(MANIFEST[1])
    blocks.append(last.tobuf(tarfile.GNU_FORMAT) + MANIFEST[1].ljust(512, b"\0"))
    return gzip.compress(b"".join(blocks) + bytes(1024))


HOSTILE = {
    "symlink bomb": (symlink_bomb, "'link': a symlink target over 4096 bytes"),
    "1,000,000 entries": (million_entries, "(package caps: directory_bytes)"),
    "32 MiB bot.toml": (big_manifest, "bot.toml: over 65536 bytes"),
    "corrupt deflate": (corrupt_deflate, "'x.bin': cannot be unpacked"),
    "300-character name": (lambda: _tar([MANIFEST, ("n" * 300, b"x")]), "a name over 255 bytes"),
    "4,200-character path": (
        lambda: _zip([("bot.toml", MANIFEST[1], 0o100644), ("d/" * 2100, b"x", 0o100644)]),
        "a path over 1024 bytes",
    ),
    "3,000 chained long names": (chained_long_names, "more than 8 tar extension headers"),
    "NUL in an env value": (
        lambda: _tar([("bot.toml", b'command = "python bot.py"\n[env]\nA = "x\\u0000y"\n')]),
        "a value cannot hold a NUL character",
    ),
    "no bot.toml": (lambda: _tar([("bot.py", b"")]), "no bot.toml at the package's root"),
}


def test_hostile_archives_are_422s_naming_the_entry_in_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "mal")
    arena = start_arena(folder)
    try:
        before = peak_rss_mib(arena.process.pid)
        bodies = {kind: make() for kind, (make, _) in HOSTILE.items()}
        probe = StatusProbe(arena)  # /api/status asked meanwhile: a figure, not an assertion
        with probe:
            for kind, (_, reason) in HOSTILE.items():
                status, answer = upload(arena, bodies[kind], tokens["mal"])
                assert status == 422, (kind, status, answer)
                assert answer["status"] == "rejected" and reason in answer["reason"], kind
                assert str(tmp_path) not in json.dumps(answer), answer  # no arena folder
        peak = peak_rss_mib(arena.process.pid)
        print(f"arena peak RSS {before:.0f} -> {peak:.0f} MiB over {len(HOSTILE)} hostile uploads;")
        print(f"/api/status meanwhile: {probe.summary()}")
        assert peak - before < 200, (before, peak)  # the symlink bomb alone took +1,525 MiB
        assert arena.status("/api/status") == 200  # alive, and no gate task died
        found = versions(arena)
        assert len(found) == len(HOSTILE)
        assert {v["status"] for v in found.values()} == {"rejected"}  # none left checking
        assert {v["reason"] for v in found.values()} == {"not a valid package"}
        # Rejected: the reasons are kept, the archives and folders are not.
        assert not list((folder / "packages").glob("*"))
        assert not (folder / "versions" / "mal").exists()
        assert list((folder / "uploads").iterdir()) == []
        # Numbers from URLs: a 404, never a 500.
        huge = "9" * 400
        paths = [f"/api/submissions/mal/{huge}", f"/api/submissions/mal/v{huge}"]
        paths += ["/api/submissions/mal/0", "/api/submissions/mal/-1", f"/api/bots/mal@v{huge}"]
        paths += [f"/bots/mal@v{huge}", f"/players/mal@v{huge}"]
        for path in paths:
            assert arena.status(path) == 404, path
        assert arena.status("/api/submissions/mal/v1") == 200
    finally:
        output = arena.stop()
    assert "Traceback" not in output, output


def _raw_post_head(arena: ArenaProcess, token: str, length: int) -> socket.socket:
    """An upload whose head is sent and whose body is still to come."""
    host, port = arena.web.removeprefix("http://").split(":")
    conn = socket.create_connection((host, int(port)), timeout=30)
    conn.sendall(
        (
            f"POST /api/submissions HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Length: {length}\r\n\r\n"
        ).encode()
    )
    return conn


def _answer(conn: socket.socket) -> str:
    """The whole answer read from ``conn`` (its head and its JSON body may come apart)."""
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.decode()


def test_uploads_past_a_players_quota_are_429s_with_retry_after(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "mal", "ann", "cat")
    arena = start_arena(folder, "--uploads-per-hour", "3", "--upload-mib-per-hour", "1")
    try:
        not_a_package = _tar([("bot.py", b"")])
        for _ in range(3):
            assert upload(arena, not_a_package, tokens["mal"])[0] == 422  # rejected ones count
        status, headers, answer = request(
            arena, "/api/submissions", body=not_a_package, token=tokens["mal"]
        )
        assert status == 429 and "uploads_per_hour" in json.loads(answer)["error"]
        assert 1 <= int(headers["retry-after"]) <= 3600
        assert len(versions(arena)) == 3  # the fourth made nothing
        # Bytes: 2 MiB announced is refused before a byte of it is read.
        with _raw_post_head(arena, tokens["ann"], 2 * 2**20) as conn:
            head = _answer(conn)
        assert head.startswith("HTTP/1.1 429") and "bytes_per_hour" in head, head
        assert int(re.search(r"(?i)retry-after: (\d+)", head)[1]) >= 1  # type: ignore[index]

        # One upload at a time: a second while the first is still arriving.  The second one
        # announces 2 MiB, so that until the first is taken it is refused by the bytes quota
        # and makes no version either.
        def second() -> str:
            with _raw_post_head(arena, tokens["cat"], 2 * 2**20) as conn:
                return _answer(conn)

        slow = _raw_post_head(arena, tokens["cat"], 50_000)
        try:
            slow.sendall(bytes(1000))
            wait_until(lambda: "one at a time" in second(), 20, "the second upload refused")
            assert second().startswith("HTTP/1.1 429")
        finally:
            slow.close()
        wait_until(lambda: upload(arena, not_a_package, tokens["cat"])[0] == 422, 20, "a 422")
        assert [v["player"] for v in versions(arena).values()].count("cat") == 1
    finally:
        arena.stop()


def _python_package(folder: Path, code: str, build: str = "") -> Path:
    folder.mkdir(parents=True)
    manifest = 'command = "python bot.py"\n' + (f"build = {json.dumps(build)}\n" if build else "")
    (folder / "bot.toml").write_text(manifest)
    (folder / "bot.py").write_text(code)
    return folder


def test_a_players_sleeping_builds_delay_another_players_version_by_one_gate_at_most(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "mal", "bob")
    arena = start_arena(folder, "--gates", "1", "--build-timeout", "8")
    try:
        sleeper = pack(
            _python_package(
                tmp_path / "sleeper", "raise SystemExit(0)\n",
                build="python -c 'import time; time.sleep(120)'",
            )
        )  # fmt: skip
        # mal's third version fails its build at once: its gate comes after bob's all the
        # same (a gate given to it first would show in the order below), without a second
        # build timeout to sit out.
        failer = pack(_python_package(tmp_path / "failer", "raise SystemExit(0)\n", build="exit 3"))
        for package in (sleeper, sleeper, failer):
            assert upload(arena, package, tokens["mal"])[0] == 201
        assert upload(arena, pack(GREEDY), tokens["bob"])[0] == 201
        wait_until(lambda: versions(arena)["bob@v1"]["status"] == "active", 120, "bob@v1 active")
        found = versions(arena)
        assert found["mal@v1"]["status"] == "rejected"
        assert found["mal@v1"]["reason"] == "build failed"
        assert found["mal@v2"]["status"] == "rejected"
        assert found["mal@v2"]["reason"] == "superseded by v3 while waiting for its gate"
        wait_until(lambda: versions(arena)["mal@v3"]["status"] == "rejected", 120, "mal@v3")
    finally:
        arena.stop()
    # bob's gate came right after mal's first, mal's third after it, its second never.  (The
    # log says so, not mal@v3's status when bob's turned active: its build fails at once, so
    # under load its gate could be over by the time the test read it.)
    log = (folder / "logs" / "arena.log").read_text()
    starts = re.findall(r"gate: (\S+) start", log)
    assert starts == ["mal@v1", "bob@v1", "mal@v3"], starts


def test_the_gate_log_is_its_owners_and_names_no_folder_of_the_arena(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "carl", "mal")
    arena = start_arena(folder)
    code = (
        "import os, sys\n"
        "print('MARKER-42 cwd', os.getcwd(), 'file', os.path.abspath(__file__), file=sys.stderr)\n"
        "print('MARKER-42 python', sys.executable, file=sys.stderr)\n"
        "raise SystemExit(3)\n"
    )
    try:
        package = pack(_python_package(tmp_path / "talker", code))
        status, answer = upload(arena, package, tokens["carl"])
        assert status == 201, answer
        wait_until(lambda: versions(arena)["carl@v1"]["status"] == "rejected", 90, "the gate")
        path = "/api/submissions/carl/1"
        organizer = (folder / "organizer.token").read_text().strip()
        public = json.loads(request(arena, path)[2])
        other = json.loads(request(arena, path, token=tokens["mal"])[2])
        own = json.loads(request(arena, path, token=tokens["carl"])[2])
        desk = json.loads(request(arena, path, token=organizer)[2])
        for stranger in (public, other):
            assert "log" not in stranger and stranger["reason"] == "check 'handshake' failed"
        for reader in (own, desk):
            assert "MARKER-42 cwd . file ./bot.py" in reader["log"], reader["log"]
            assert "exited with code 3 before its Hello" in reader["reason"]
        # Nothing a player can read names the arena's folders (the bot's output included).
        readable = [
            request(arena, p, token=t)[2]
            for p in ("/api/submissions", path, "/players/carl", "/api/admin")
            for t in ("", tokens["carl"], tokens["mal"])
        ]
        for text in readable:
            assert str(tmp_path).encode() not in text
            assert str(REPO).encode() not in text
        assert b"MARKER-42" not in b"".join(
            request(arena, p)[2] for p in ("/api/submissions", path, "/players/carl")
        )
    finally:
        arena.stop()


def test_a_restart_leaves_no_version_checking_without_a_gate(tmp_path: Path) -> None:
    """Killed (-9) mid-build with a newer version of the same player waiting: at restart both
    are queued again, the newer supersedes the older, and every version settles.  (The build
    sleeps 8 s only: a SIGKILLed arena's build outlives it, see the note of issue 34.)"""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "mal")
    args = ("--gates", "1", "--build-timeout", "60")
    arena = start_arena(folder, *args)
    try:
        sleeper = pack(
            _python_package(
                tmp_path / "sleeper", "raise SystemExit(0)\n",
                build="python -c 'import time; time.sleep(8)'",
            )
        )  # fmt: skip
        assert upload(arena, sleeper, tokens["mal"])[0] == 201
        assert upload(arena, pack(GREEDY), tokens["mal"])[0] == 201
        assert {v["status"] for v in versions(arena).values()} == {"checking"}
    finally:
        arena.stop(signal.SIGKILL)  # mid-build, v2 waiting
    arena = start_arena(folder, *args)
    try:
        wait_until(lambda: versions(arena)["mal@v2"]["status"] == "active", 120, "mal@v2")
        found = versions(arena)
        assert found["mal@v1"]["status"] == "rejected"
        assert found["mal@v1"]["reason"] == "superseded by v2 while waiting for its gate"
        assert not (folder / "versions" / "mal" / "v1").exists()
    finally:
        arena.stop()
