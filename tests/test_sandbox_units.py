"""The pieces that keep bots honest, one at a time: the peer check on real sockets, the
bwrap command line, limits, the capped log, exit descriptions, per-bot options, the deal
secret.  (tests/test_hostile_bots.py runs them together against hostile bots.)"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tacocat_arena.launch import sandbox
from tacocat_arena.launch.bots import CappedLog, describe_exit
from tacocat_arena.launch.sandbox import Limits, SandboxMode
from tacocat_arena.referee import peers
from tacocat_arena.referee.peers import PeerCheck, descendants
from tacocat_arena.tournament.config import BotSpec, ConfigError, TournamentConfig, load_config
from tacocat_arena.tournament.schedule import plan_for, round_robin, tournament_plan
from tacocat_arena.tournament.storage import TournamentStore

linux_only = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")


# -- the peer check ---------------------------------------------------------------------------
@linux_only
@pytest.mark.slow
def test_a_tcp_session_is_accepted_only_from_the_bots_own_process_tree() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        check = PeerCheck(tcp_port=server.getsockname()[1])
        peer = f"ipv4:127.0.0.1:{client.getsockname()[1]}"
        check.expect("me", os.getpid())  # the client end is held by this process
        assert check("me", peer) is None
        check.expect("me", stranger.pid)  # ... which is not the process started for "me"
        refused = check("me", peer)
        assert refused is not None and "does not come from the process" in refused
        assert check("unknown-to-the-runner", peer) is None  # serve's bots: tokens decide
        assert check("me", "ipv4:10.1.2.3:4000") is not None  # not loopback: no process
    finally:
        stranger.kill()
        stranger.wait()
        for sock in (client, accepted, server):
            sock.close()


@linux_only
@pytest.mark.slow
def test_a_socket_at_the_bots_port_on_another_loopback_address_is_not_the_bots() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server_port = server.getsockname()[1]

    def hold(family: str, source: str, port: int) -> subprocess.Popen[bytes]:
        target = "::ffff:127.0.0.1" if family == "AF_INET6" else "127.0.0.1"
        code = (
            f"import socket, time; s = socket.socket(socket.{family}); s.bind(({source!r}, "
            f"{port})); s.connect(({target!r}, {server_port})); "
            "print(s.getsockname()[1], flush=True); time.sleep(30)"
        )
        return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)

    bot = hold("AF_INET", "127.0.0.1", 0)
    held = [bot]
    try:
        assert bot.stdout is not None
        port = int(bot.stdout.readline())
        thief = hold("AF_INET6", "::ffff:127.0.0.2", port)  # the bot's port, listed in tcp6
        held.append(thief)
        assert thief.stdout is not None and int(thief.stdout.readline()) == port
        check = PeerCheck(tcp_port=server_port)
        check.expect("me", bot.pid)
        assert check("me", f"ipv4:127.0.0.1:{port}") is None
        for peer in (f"ipv4:127.0.0.2:{port}", f"ipv6:[::ffff:127.0.0.2]:{port}"):
            refused = check("me", peer)  # the thief's connection, at the bot's port
            assert refused is not None and "does not come from the process" in refused, peer
    finally:
        for process in held:
            process.kill()
            process.wait()
        server.close()


@linux_only
def test_a_tcp_peer_is_the_started_process_or_one_of_its_descendants() -> None:
    """The started process is looked at first (its helpers exec the bot in place), its
    descendants only if it does not hold the socket: a connection from this process is
    accepted for this process and for its parent (a shell wrapper's bot), not for a pid
    that is no ancestor of it."""
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    try:
        check = PeerCheck(tcp_port=server.getsockname()[1])
        peer = f"ipv4:127.0.0.1:{client.getsockname()[1]}"
        for root in (os.getpid(), os.getppid()):
            check.expect("me", root)
            assert check("me", peer) is None, root
        check.expect("me", 2**22 + 1)  # beyond pid_max: nobody's ancestor
        refused = check("me", peer)
        assert refused is not None and "does not come from the process" in refused
    finally:
        for sock in (accepted, client, server):
            sock.close()


def test_a_peer_that_two_sockets_match_is_refused_and_mapped_addresses_read_as_ipv4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's tables as text: ``::ffff:127.0.0.2`` in tcp6 is 127.0.0.2; when both
    tables hold a socket at the peer's address and port, no process is credited."""
    head = "  sl  local_address rem_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout\n"
    v4 = "   0: 0200007F:1388 0100007F:1770 01 00000000:00000000 00:00000000 00000000 0 0 11 1\n"
    mapped = "0000000000000000FFFF00000200007F:1388 0000000000000000FFFF00000100007F:1770"
    v6 = f"   0: {mapped} 01 00000000:00000000 00:00000000 00000000 0 0 12 1\n"
    (tmp_path / "net").mkdir()
    monkeypatch.setattr(peers, "_PROC", tmp_path)
    check = PeerCheck(tcp_port=0x1770)
    check.expect("me", 999_999)
    for tcp, tcp6, inodes in ((v4, "", {11}), ("", v6, {12}), (v4, v6, {11, 12})):
        (tmp_path / "net" / "tcp").write_text(head + tcp)
        (tmp_path / "net" / "tcp6").write_text(head + tcp6)
        client = peers._peer_address("ipv4:127.0.0.2:5000")
        assert client is not None and peers._tcp_inodes(client, 0x1770) == inodes
        assert peers._tcp_inodes(client, 0x1771) == set()  # another server's port
    refused = check("me", "ipv4:127.0.0.2:5000")
    assert refused is not None and "2 sockets" in refused and "refused" in refused
    # Both sockets are the bot's own (a table listed one twice as the kernel's seq_file may,
    # or the bot holds both): the connection is one of them, so the bot is admitted.
    fds = tmp_path / "999999" / "fd"
    fds.mkdir(parents=True)
    (fds / "3").symlink_to("socket:[11]")
    assert check("me", "ipv4:127.0.0.2:5000") is not None  # 12 is still nobody's
    (fds / "4").symlink_to("socket:[12]")
    assert check("me", "ipv4:127.0.0.2:5000") is None


@linux_only
@pytest.mark.slow
def test_a_unix_socket_intruder_is_cut_off_and_its_session_refused(tmp_path: Path) -> None:
    path = tmp_path / "bot.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    connect = (
        "import socket, time; s = socket.socket(socket.AF_UNIX); "
        f"s.connect({str(path)!r}); time.sleep(30)"
    )
    owner = subprocess.Popen([sys.executable, "-c", connect])
    intruder = subprocess.Popen([sys.executable, "-c", connect])
    try:
        first, _ = listener.accept()
        second, _ = listener.accept()
        check = PeerCheck()
        check.listen("bot", path)
        check.expect("bot", owner.pid)
        refused = check("bot", "unix:")
        assert refused is not None and "cut off" in refused
        # The intruder's connection was shut down; the owner's is intact.
        for conn in (first, second):
            conn.setblocking(False)
        ends = []
        for conn in (first, second):
            try:
                ends.append(conn.recv(1))
            except BlockingIOError:
                ends.append(None)
        assert sorted(ends, key=repr) == sorted([b"", None], key=repr)
        assert check("bot", "unix:") is None  # only the owner is left
    finally:
        for process in (owner, intruder):
            process.kill()
            process.wait()
        listener.close()


@linux_only
@pytest.mark.slow
def test_descendants_include_children_of_children() -> None:
    child = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & wait"], start_new_session=True)
    try:
        deadline = time.monotonic() + 5
        while len(descendants(child.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert child.pid in descendants(os.getpid())
        assert len(descendants(child.pid)) == 2
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the sleep too
        child.wait()


# -- the sandbox's command line and limits ----------------------------------------------------
@pytest.mark.parametrize("root", [False, True])
@pytest.mark.slow
def test_bwrap_hides_the_config_the_output_and_other_bots(
    tmp_path: Path, root: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "runs_as_root", lambda: root)
    monkeypatch.setattr(sandbox, "code_paths", lambda: ())  # each asks a process otherwise
    monkeypatch.setattr(sandbox, "_bwrap_has", lambda bwrap, option: True)
    (tmp_path / "tournament.toml").write_text("seed = 1\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "other").mkdir()
    argv = sandbox.bwrap_argv(
        ["python", "bot.py"],
        bwrap="bwrap",
        bot_dir=tmp_path,
        writable_dir=False,
        socket=tmp_path / "s.sock",
        hide=[tmp_path / "tournament.toml", tmp_path / "out", tmp_path / "other", Path("/x/y")],
        tmpfs_mib=64,
    )
    pairs = list(zip(argv, argv[1:], argv[2:], strict=False))
    twos = list(zip(argv, argv[1:], strict=False))
    fours = list(zip(argv, argv[1:], argv[2:], argv[3:], strict=False))
    assert ("--ro-bind", str(tmp_path), str(tmp_path)) in pairs
    assert ("--ro-bind", "/dev/null", str(tmp_path / "tournament.toml")) in pairs
    assert ("--tmpfs", str(tmp_path / "out")) in twos
    assert ("--tmpfs", str(tmp_path / "other")) in twos
    assert "/x/y" not in argv  # not mounted in the first place
    assert ("--bind", str(tmp_path / "s.sock"), sandbox.SOCKET_IN_SANDBOX) in pairs
    # /tmp and /dev/shm are memory: sized (64 MiB and a quarter of it), open to the bot.
    assert ("--size", str(64 * 2**20), "--tmpfs", "/tmp") in fours
    assert ("--size", str(16 * 2**20), "--tmpfs", "/dev/shm") in fours
    # The folders above its code and its own folder can be crossed whatever the host's mode.
    assert ("--perms", "0755", "--dir", str(tmp_path.parent)) in fours
    if root:  # no user namespace (it would map the bot to root): it drops to uid 65534
        for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent"):
            assert flag in argv
        assert "--unshare-user" not in argv and "--unshare-all" not in argv
        assert {a for f, a in twos if f == "--cap-add"} == {"CAP_SETUID", "CAP_SETGID"}
        drop = argv[argv.index("--chdir") + 3 :]
        assert drop[0].endswith("setpriv") and drop[1:5] == ["--reuid", "65534", "--regid", "65534"]
        assert drop[-3:] == ["--", "python", "bot.py"]
    else:
        for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--disable-userns"):
            assert flag in argv
        assert "--cap-add" not in argv
    assert ("--cap-drop", "ALL") in twos
    # The sandbox stays in the launcher's process group (one kill ends it: test_orphans).
    assert "--new-session" not in argv
    assert argv[-3:] == ["--", "python", "bot.py"]
    home = Path.home()
    mounted = [Path(source) for flag, source in twos if flag in ("--ro-bind", "--bind")]
    assert home not in mounted  # at most the code under it, never the home itself
    writable = sandbox.bwrap_argv(
        ["b"], bwrap="bwrap", bot_dir=tmp_path, writable_dir=True, socket=tmp_path, hide=[]
    )
    assert ("--bind", str(tmp_path), str(tmp_path)) in list(
        zip(writable, writable[1:], writable[2:], strict=False)
    )


def test_hiding_never_takes_the_code_or_the_bots_own_folder_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mounts go in path order: a hidden folder above the code is covered, then the code is
    mounted again inside it; hidden code (the built-ins' folder) stays visible."""
    org = tmp_path / "org"  # another bot's dir, holding the arena's Python and packages
    code, package = org / "venv", org / "example_bots"
    mine, theirs = package / "packages" / "mine", package / "packages" / "theirs"
    for path in (code, mine, theirs):
        path.mkdir(parents=True)
    monkeypatch.setattr(sandbox, "code_paths", lambda: (code, package))
    monkeypatch.setattr(sandbox, "_bwrap_has", lambda bwrap, option: True)  # no process

    def mounts(bot_dir: Path, hide: list[Path]) -> list[str]:
        socket = tmp_path / "s.sock"
        argv = sandbox.bwrap_argv(
            ["b"], bwrap="bwrap", bot_dir=bot_dir, writable_dir=False, socket=socket, hide=hide
        )
        last_dir = len(argv) - 1 - argv[::-1].index("--dir")
        return argv[last_dir + 2 : argv.index(str(socket)) - 1]

    def bind(path: Path) -> list[str]:
        return ["--ro-bind", str(path), str(path)]

    assert mounts(tmp_path, [org, package, theirs]) == [
        *bind(tmp_path),  # its own folder holds the others
        *["--tmpfs", str(org)],  # the other bot's folder: covered, then the code inside it
        *bind(package),  # the built-ins' folder, hidden as a bot's: code, so shown
        *["--tmpfs", str(theirs)],  # another bot's folder inside the code: hidden
        *bind(code),
    ]
    assert mounts(mine, [package, theirs]) == [
        *bind(package),
        *bind(mine),  # its own folder inside the code (a package of example_bots)
        *["--tmpfs", str(theirs)],
        *bind(code),
    ]


@pytest.mark.slow
def test_the_code_a_bot_is_shown_is_its_pythons_not_the_runners_folder(tmp_path: Path) -> None:
    """A runner started with ``python -m`` from a folder has that folder on its sys.path;
    the code shown to bots is the same from any folder, and holds none of them."""
    ask = "import json; from tacocat_arena.launch import sandbox; "
    ask += "print(json.dumps(list(map(str, sandbox.code_paths()))))"
    shown = []
    for start in (tmp_path, Path(__file__).parent.parent):
        done = subprocess.run(
            [sys.executable, "-c", ask], cwd=start, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        shown.append(done.stdout)
    assert shown[0] == shown[1]
    paths = [Path(p) for p in json.loads(shown[0])]
    assert str(tmp_path) not in shown[0] and Path(__file__).parent.parent not in paths
    for package in ("tacocat_bot", "example_bots", "grpc"):
        where = Path(__import__(package).__file__).parent.resolve()
        assert any(p == where or p in where.parents for p in paths), (package, paths)


def test_a_sandboxed_bot_gets_only_the_base_env_the_sdk_settings_and_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "organizer's")
    monkeypatch.setenv("TACOCAT_BOT_STRICT", "1")
    env = sandbox.bot_env({"LEVEL": "3"}, {"TACOCAT_ARENA_TOKEN": "t"})
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["TACOCAT_BOT_STRICT"] == "1" and env["LEVEL"] == "3"
    assert env["TACOCAT_ARENA_TOKEN"] == "t" and env["HOME"] == "/tmp"


@pytest.mark.slow
def test_the_launcher_sets_the_limits_and_enters_the_cgroups_when_there_are_some(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if sandbox.launcher_missing():
        pytest.skip(f"{sandbox.launcher_missing()} (util-linux) is not installed")
    limits = Limits(memory_mib=64, processes=8, open_files=32)
    plain = sandbox.launcher(limits, None)
    assert "--pdeathsig" in plain and f"--data={64 * 2**20}:{64 * 2**20}" in plain
    assert "--nofile=32:32" in plain
    assert not any(a.startswith("--nproc") for a in plain)  # it would count all the user's
    script = (
        "import resource as r; "
        "print(r.getrlimit(r.RLIMIT_DATA)[0], r.getrlimit(r.RLIMIT_NOFILE)[0])"
    )
    done = subprocess.run([*plain, sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == [str(64 * 2**20), "32"]
    # v1: one folder per hierarchy; the shell writes its pid into each, then execs the bot.
    (tmp_path / "pids").mkdir()
    (tmp_path / "memory").mkdir()
    cgroup = sandbox.BotCgroup(pids=tmp_path / "pids", memory=tmp_path / "memory")
    wrapped = sandbox.launcher(limits, cgroup)
    assert wrapped[:2] == ["/bin/sh", "-c"]
    done = subprocess.run(
        [*wrapped, sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
    )
    pid = done.stdout.strip()
    assert pid and all((f / "cgroup.procs").read_text().strip() == pid for f in cgroup.folders)
    # Inside the sandbox: an ordinary runner's bot gets RLIMIT_NPROC in its own user
    # namespace where no pids cgroup counts; a root runner's drops to uid 65534.
    monkeypatch.setattr(sandbox, "runs_as_root", lambda: False)
    assert sandbox.in_sandbox(limits, None)[1:] == ["--nproc=8:8", "--"]
    assert sandbox.in_sandbox(limits, cgroup) == []
    monkeypatch.setattr(sandbox, "runs_as_root", lambda: True)
    assert sandbox.in_sandbox(limits, None) == []  # no user namespace: a cgroup, or nothing


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        ("Traceback ...\nMemoryError\n", "memory limit 100 MiB"),
        (
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
            "memory limit 100 MiB",
        ),
        (
            "OSError: [Errno 28] No space left on device: '/tmp/x'",
            "memory limit 100 MiB (its /tmp is that size)",
        ),
        ("OSError: [Errno 24] Too many open files", "open-file limit 20"),
        ("BlockingIOError: [Errno 11] Resource temporarily unavailable", "process limit 9"),
        ("ValueError: my own bug", ""),
    ],
)
def test_a_crash_names_the_limit_it_ran_into(tail: str, reason: str) -> None:
    limits = Limits(memory_mib=100, processes=9, open_files=20)
    assert sandbox.limit_reason(limits, tail, None) == reason


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="memory_mib must be an integer >= 32"):
        Limits(memory_mib=8)


def test_auto_without_bwrap_warns_what_is_unprotected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    warnings: list[str] = []
    assert sandbox.resolve_mode(SandboxMode.AUTO, warn=warnings.append) is SandboxMode.NONE
    assert "unsandboxed" in warnings[0] and "apt-get install bubblewrap" in warnings[0]
    with pytest.raises(sandbox.SandboxError, match="bubblewrap is not installed"):
        sandbox.resolve_mode(SandboxMode.BWRAP)
    assert sandbox.resolve_mode(SandboxMode.NONE) is SandboxMode.NONE


# -- logs and exits -----------------------------------------------------------------------------
def test_the_log_keeps_its_newest_part_within_the_cap(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "bot.log", limit=4096)
    for index in range(500):
        log.write(f"line {index:04d} {'x' * 40}\n".encode())
    text = (tmp_path / "bot.log").read_text()
    assert len(text.encode()) <= 4096
    assert text.startswith("--- [") and "bytes of older output dropped" in text
    assert text.rstrip().endswith("line 0499 " + "x" * 40)
    assert "line 0000" not in text
    assert log.size == len(text.encode())


@pytest.mark.parametrize(
    ("code", "sandboxed", "words"),
    [
        (0, False, "exited with code 0"),
        (7, False, "exited with code 7"),
        (-9, False, "killed by signal 9 (SIGKILL)"),
        (137, True, "killed by signal 9 (SIGKILL)"),  # bwrap reports 128 + N
        (137, False, "exited with code 137"),
    ],
)
def test_how_a_process_ended_in_words(code: int, sandboxed: bool, words: str) -> None:
    assert describe_exit(code, sandboxed=sandboxed) == words


# -- per-bot options ----------------------------------------------------------------------------
def test_per_bot_options_load_from_the_config(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    config_file = tmp_path / "tournament.toml"
    config_file.write_text(
        'sandbox = "none"\n[limits]\nmemory_mib = 256\n'
        '[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        '[[bots]]\nname = "b"\ncommand = "python bot.py"\ndir = "mine"\n'
        'env = { LEVEL = "3" }\nargs = ["--fast"]\nsandbox = "bwrap"\nwritable_dir = true\n'
        "limits = { processes = 10 }\n"
    )
    config = load_config(config_file, {}, [])
    a, b = config.bots
    assert config.sandbox is SandboxMode.NONE and config.limits.memory_mib == 256
    assert a.dir is None and a.sandbox is None and a.limits is None
    assert b.dir == (tmp_path / "mine").resolve() and b.env == (("LEVEL", "3"),)
    assert b.argv() == ["python", "bot.py", "--fast"] and b.writable_dir
    assert b.sandbox is SandboxMode.BWRAP
    assert b.limits == Limits(memory_mib=256, processes=10)  # the tournament's, then its own
    assert config.config_file == config_file.resolve()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('dir = "nowhere"', "dir"),
        ("env = { LEVEL = 3 }", "env must be a table of strings"),
        ('args = "--fast"', "args must be a list of strings"),
        ('sandbox = "docker"', "sandbox 'docker' must be 'auto', 'bwrap' or 'none'"),
        ("limits = { memory_mib = 1 }", "memory_mib must be an integer >= 32"),
        ("limits = { cpu = 1 }", "unknown limit 'cpu'"),
    ],
)
def test_bad_per_bot_options_name_the_bot_and_the_key(
    tmp_path: Path, entry: str, message: str
) -> None:
    config_file = tmp_path / "tournament.toml"
    config_file.write_text(
        '[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        f'[[bots]]\nname = "b"\ncommand = "builtin:greedy"\n{entry}\n'
    )
    with pytest.raises(ConfigError, match="'b'") as error:
        load_config(config_file, {}, [])
    assert message in str(error.value)


# -- the deal secret ----------------------------------------------------------------------------
def test_the_deal_secret_is_drawn_once_and_kept_for_resume(tmp_path: Path) -> None:
    store = TournamentStore(tmp_path)
    store.claim("fp1", resume=False)
    secret = store.deal_secret()
    assert len(secret) == 32 and store.deal_secret() == secret
    store.close()
    again = TournamentStore(tmp_path)
    again.claim("fp1", resume=True)
    assert again.deal_secret() == secret  # --resume deals the same cards
    again.claim("fp2", resume=False)  # an empty store taken over by another tournament
    assert again.deal_secret() != secret
    again.close()


def test_a_tournament_is_planned_with_its_stores_secret(tmp_path: Path) -> None:
    """``tournament_plan`` is the one place a run, its workers and its progress plan: with
    the store's secret, never the config's seed alone."""
    config = TournamentConfig((BotSpec("a", "builtin:random"), BotSpec("b", "builtin:greedy")))
    store = TournamentStore(tmp_path)
    store.claim(config.fingerprint(), resume=False)
    plan = tournament_plan(config, store)
    assert plan == plan_for(config, secret=store.deal_secret())
    assert {g.seed for g in plan}.isdisjoint(g.seed for g in plan_for(config, secret=""))
    store.close()


def test_the_secret_changes_every_deal_and_only_the_deals() -> None:
    bots = ["a", "b", "c"]
    plain = round_robin(bots, 4, 7, secret="")
    secret = round_robin(bots, 4, 7, secret="0123456789abcdef0123456789abcdef")
    other = round_robin(bots, 4, 7, secret="fedcba9876543210fedcba9876543210")
    assert [(g.game_id, g.seats, g.twin) for g in plain] == [
        (g.game_id, g.seats, g.twin) for g in secret
    ]
    assert {g.seed for g in plain}.isdisjoint(g.seed for g in secret)
    assert {g.seed for g in secret}.isdisjoint(g.seed for g in other)
    assert [g.twin for g in secret[:4]] == [False, True, False, True]


# -- the cost ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_bench_sandbox_prints_both_modes_from_one_run() -> None:
    from click.testing import CliRunner

    from tacocat_arena.cli import main

    done = CliRunner().invoke(
        main, ["bench", "sandbox", "--games", "4", "--repeats", "1", "--starts", "1"]
    )
    assert done.exit_code == 0, done.output
    assert re.search(r" none: start-up +\d+ ms per bot process, +[\d,]+ decisions/s", done.output)
    # One start of each kind that can run here (the Python example always can).
    assert re.search(r"python +none: wall +[\d.]+ \( *[\d.]+\); CPU of the bot's tree", done.output)
    for kind in ("node", "c\\+\\+"):
        assert re.search(rf"{kind} +(none: wall|not measured: )", done.output), done.output
    if sandbox.bwrap_path() is not None:
        assert re.search(r"bwrap/none decisions/s = \d+\.\d\d, CPU per decision = \d", done.output)
    else:
        assert "bwrap: not available here" in done.output


def test_under_by_text_agrees_with_the_paths_parents() -> None:
    """``_under`` compares text (a start's command line was mostly ``Path.parents``): it says
    what the path-based test says, trailing slashes, the root and look-alike names included."""
    paths = ["/", "/usr", "/usr/lib", "/usrx", "/usr/lib/python3", "/root/.pyenv/x", "/opt"]
    roots = ["/", "/usr", "/usr/", "/usr/lib", "/root", "/opt/", "/us"]
    for text in paths:
        for root in roots:
            path = Path(text)
            expected = path == Path(root) or Path(root) in path.parents
            assert sandbox._under(path, (root,)) is expected, (text, root)


def test_the_folders_above_a_bots_mounts_are_worked_out_once_per_set_of_targets() -> None:
    targets = (Path("/root/.pyenv/versions/3.11.7"), Path("/work/x/bot"), Path("/run/t/s"))
    first = sandbox._folders_above(targets)
    assert sandbox._folders_above(targets) is first  # kept, not computed again
    assert Path("/root") in first and Path("/work/x") in first and Path("/usr") not in first


@pytest.mark.slow
def test_bench_sandbox_against_a_commit_starts_the_python_bot_of_each_tree_in_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--against HEAD: both trees' example bot started through their own launcher, each in
    its environment (figures are not asserted: only that each row is measured)."""
    import tempfile

    from click.testing import CliRunner

    from tacocat_arena.cli import main

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    done = CliRunner().invoke(main, ["bench", "sandbox", "--against", "HEAD", "--starts", "1"])
    assert done.exit_code == 0, done.output
    assert re.search(r"against: +HEAD \([0-9a-f]{7}\)", done.output)
    modes = ("none", "bwrap") if sandbox.bwrap_path() is not None else ("none",)
    for mode in modes:
        for label in ("wall", "CPU, bot's tree", "CPU, runner"):
            assert re.search(rf"{mode} {re.escape(label)} +[\d.]+ +[\d.]+ +\d+\.\d\d", done.output)
    assert list(tmp_path.iterdir()) == []


class _SlowPopen:
    """A reaper process that takes its time to start (no process: a fork's time, widened),
    for ``test_one_reaper_for_two_threads``: its lines are kept, its input closable."""

    started: list[_SlowPopen] = []

    def __init__(self, *args: object, **kwargs: object) -> None:
        time.sleep(0.1)  # the GIL is let go: the other thread may look at the reaper now
        self.lines: list[bytes] = []
        self.stdin = self
        self.closed = False
        _SlowPopen.started.append(self)

    def poll(self) -> int | None:
        return None

    def wait(self) -> int:
        return 0

    def write(self, data: bytes) -> None:
        self.lines.append(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_one_reaper_for_two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two threads' runners (two ``check_bot`` calls, each its own ``asyncio.run``) start
    their bots at once: one reaper holds both groups, and it ends when both are forgotten.
    Unlocked, each thread started a reaper, the second's groups replaced the first's, and
    the first ran (holding its group, to be killed at the runner's end) for good."""
    monkeypatch.setattr(sandbox.subprocess, "Popen", _SlowPopen)
    monkeypatch.setattr(_SlowPopen, "started", [])
    reaper = sandbox._Reaper()
    both = threading.Barrier(2)

    def start(pgid: int) -> None:
        both.wait()
        reaper.track(pgid)

    threads = [threading.Thread(target=start, args=(pgid,)) for pgid in (4101, 4102)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (only,) = _SlowPopen.started
    assert sorted(only.lines) == [b"+4101\n", b"+4102\n"]
    reaper.forget(4101)
    assert not only.closed  # 4102 still runs
    reaper.forget(4102)
    assert only.closed


def test_two_bots_of_one_name_get_cgroups_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes of one name at once in one runner (two checks of a bot named "bot")
    never share a cgroup: the first one's removal kills all that is in it, and named for the
    bot alone it SIGKILLed the other's bot.  (Folders of tmp_path stand for the cgroup
    parents: no cgroup of the machine's is written.)"""
    for controller in ("pids", "memory"):
        (tmp_path / controller).mkdir()
    monkeypatch.setattr(sandbox, "_cgroup_parents", lambda controller: (tmp_path / controller,))
    first = sandbox.BotCgroup.create("bot", Limits())
    second = sandbox.BotCgroup.create("bot", Limits())
    assert first is not None and second is not None
    assert len(first.folders) == 2 and set(first.folders).isdisjoint(second.folders)
    assert all(f"tacocat-{os.getpid()}-" in path.name for path in first.folders)
