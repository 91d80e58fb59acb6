"""Bots that try to cheat, as real processes in real tournaments (``tacocat-arena run``).

Each hostile bot (tests/hostile_bots/hostile_bot.py) makes its attempt and writes what it
found to its log, then plays; the tests check that every attempt failed or was contained,
that the tournament completed, that the honest bot's games were unaffected and that each
forfeit names the right reason.  One tournament runs in the bubblewrap sandbox (skipped, with
the reason, where bwrap cannot run), one without it (the peer-credential check, the secret
deals, crashes and exit codes, the log cap).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from nobody_support import NOBODY, as_nobody, python_for_nobody  # tests/ (pytest pythonpath)
from verify_support import assert_verifies

from tacocat_arena.engine import DEFAULT_RULESET, Game
from tacocat_arena.launch import sandbox
from tacocat_arena.tournament.config import load_config
from tacocat_arena.tournament.schedule import plan_for

HOSTILE = Path(__file__).parent / "hostile_bots" / "hostile_bot.py"
FINISHED = {"goal", "round_cap"}

needs_bwrap = pytest.mark.skipif(
    sandbox.bwrap_path() is None,
    reason="bubblewrap (bwrap) is not installed or cannot create namespaces here "
    "(apt-get install bubblewrap)",
)


def bot_entry(name: str, command: str, extra: str = "") -> str:
    return f'\n[[bots]]\nname = "{name}"\ncommand = "{command}"\n{extra}'


def run_tournament(folder: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(HOSTILE, folder / "hostile_bot.py")
    (folder / "tournament.toml").write_text(text)
    env = dict(os.environ, COLUMNS="300", ORGANIZER_SECRET="the-organizers-own")
    argv = [sys.executable, "-m", "tacocat_arena.cli", "run", "tournament.toml", "--quiet"]
    return subprocess.run(
        [*argv, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


def probes(log: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("PROBE "):
            _, what, result = line.split(" ", 2)
            found.setdefault(what, []).append(result)
    return found


def games(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "games.jsonl").open()]


def processes_tagged(tag: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if tag.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


def assert_no_process_left(tag: str) -> None:
    deadline = time.monotonic() + 10
    while (left := processes_tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        os.kill(pid, 9)
    assert left == [], f"processes tagged {tag} outlived the tournament"


def assert_victim_unaffected(played: list[dict], victim: str, opponents: set[str]) -> None:
    """The honest bot played each of these opponents' games to a normal end."""
    against = [g for g in played if victim in g["seats"] and set(g["seats"]) & opponents]
    assert against
    for game in against:
        assert game["reason"] in FINISHED, (game["id"], game["reason"], game["detail"])


def deals_as_logged(log: Path) -> dict[tuple[str, int], list[int]]:
    hands = {}
    for line in log.read_text().splitlines():
        if line.startswith("HAND "):
            _, game_id, seat, cards = line.split(" ")
            hands[(game_id, int(seat))] = [int(c) for c in cards.split(",")]
    return hands


def check_deals_need_the_secret(folder: Path, out: Path, log: Path) -> None:
    """The config seed predicted no hand; the published secret re-derives every one."""
    found = probes(log)
    assert "predicted" not in found and len(found["mispredicted"]) >= 2
    secret = json.loads((out / "results.json").read_text())["metadata"]["deal_secret"]
    config = load_config(folder / "tournament.toml", {}, [])
    seeds = {game.game_id: game.seed for game in plan_for(config, secret=secret)}
    hands = deals_as_logged(log)
    assert len(hands) == len(found["mispredicted"])
    for (game_id, seat), hand in hands.items():
        assert sorted(Game(DEFAULT_RULESET, seeds[game_id]).hands[seat]) == hand, game_id


# -- in the sandbox -----------------------------------------------------------------------------
@needs_bwrap
@pytest.mark.slow
def test_hostile_bots_in_the_sandbox_are_contained(tmp_path: Path) -> None:
    tag = f"tacocat-orphan-{uuid.uuid4().hex}"
    listener = socket.create_server(("127.0.0.1", 0))  # the host's loopback: unreachable
    port = listener.getsockname()[1]
    hostile = "python hostile_bot.py --mode"
    text = (
        "games = 4\nseed = 1\nconcurrency = 2\nmove_timeout = 10.0\nmax_restarts = 0\n"
        'format = "gauntlet"\nconnect_timeout = 60\nsandbox = "bwrap"\nout = "out"\n'
        + bot_entry("victim", "builtin:greedy")
        + bot_entry("spy", f"{hostile} spy --probe-port {port}", 'env = { LEVEL = "3" }\n')
        + bot_entry("predict", f"{hostile} predict --seed 1")
        + bot_entry("remember", f"{hostile} remember")
        + bot_entry("orphan", f"{hostile} orphan --tag {tag}")
        + bot_entry("forkbomb", f"{hostile} forkbomb --after 3", "limits = { processes = 32 }\n")
        + bot_entry("hog", f"{hostile} hog --after 3", "limits = { memory_mib = 160 }\n")
    )
    try:
        done = run_tournament(tmp_path, text, "--seed", "1")
    finally:
        listener.close()
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "out"
    logs = out / "logs"
    played = games(out)
    assert_verifies(out)  # every forfeit, refusal and timing as the referee recorded it
    assert len(played) == 6 * 4  # the gauntlet completed: every game recorded
    assert "Sandbox: bwrap for victim, spy, predict" in done.stdout
    assert "memory 1024 MiB (RLIMIT_DATA" in done.stdout

    # The spy saw no other process, no token, no seed, no config, store, output or home, no
    # variable of the organizer's (only the config's), and could not write or connect out.
    for name in ("spy", "spy~B"):
        found = probes(logs / f"{name}.log")
        assert found["arena-processes-visible"] == ["0"], found
        assert int(found["processes-visible"][0]) <= 3  # its own, and bwrap's init
        assert found["tokens-found"] == ["none"]
        assert found["cmdlines-with-seed"] == ["0"]
        assert found["config"][0] in ("read:0",) or found["config"][0].startswith("denied")
        assert found["store"][0].startswith("denied")
        assert found["output-folder"] == ["hidden"]
        home = Path(os.path.expanduser("~root"))
        allowed = {
            path.relative_to(home).parts[0] for path in sandbox.code_paths() if home in path.parents
        }
        entries = found["home-entries"][0]
        assert entries in ("absent", "empty") or set(entries.split(",")) <= allowed, entries
        assert found["organizer-secret"] == ["absent"]
        assert found["shadow"][0].startswith("denied")  # never root's permissions
        assert found["config-env"] == ["3"]  # what the config passes does arrive
        assert found["write-own-folder"][0].startswith("denied")
        assert found["tcp-127.0.0.1"][0].startswith("refused")
        assert found["tcp-1.1.1.1"][0].startswith("refused")
    assert not (tmp_path / "written-by-bot.txt").exists()

    # Twins: no process ever played a deal it had seen from the other seat.
    remembered = [probes(logs / f"{n}.log") for n in ("remember", "remember~B")]
    assert all("held-opponent-hand" not in found for found in remembered)
    assert sum(len(found.get("fresh-deal", [])) for found in remembered) == 4

    check_deals_need_the_secret(tmp_path, out, logs / "predict.log")

    # The fork bomb and the memory hog crash into their limits, and lose by crash with the
    # limit named; past max_restarts their remaining games are unplayed forfeits.
    unplayed = 0
    for name, limit in (("forkbomb", "process limit 32"), ("hog", "memory limit 160 MiB")):
        theirs = [g for g in played if name in g["seats"]]
        crashed = [g for g in theirs if g["reason"] == "crash"]
        assert len(crashed) == 4, [(g["id"], g["reason"], g["detail"]) for g in theirs]
        assert all(g["seats"][g["winner"]] == "victim" for g in crashed)
        in_game = [g for g in crashed if g["rounds"] >= 1]
        # Each twin's process crashes once, in every game it has in flight then (one or two at
        # concurrency 2, as the machine's speed has it); its later games go unplayed.
        assert 2 <= len(in_game) <= 4, [(g["id"], g["rounds"], g["detail"]) for g in crashed]
        assert all(limit in g["detail"] for g in in_game), [g["detail"] for g in in_game]
        unplayed += len(crashed) - len(in_game)
        if name == "forkbomb" and sandbox.process_limit_kind() == "":
            continue
        forked = probes(logs / f"{name}.log")
        assert forked, f"{name} never reached its attempt"
    assert (f"{unplayed} games went unplayed" in done.stdout) == (unplayed > 0), done.stdout
    assert_victim_unaffected(played, "victim", {"spy", "predict", "remember", "orphan"})
    assert_no_process_left(tag)  # the orphan went with its sandbox


# -- without the sandbox ------------------------------------------------------------------------
@pytest.mark.slow
def test_hostile_bots_without_the_sandbox(tmp_path: Path) -> None:
    hostile = "python hostile_bot.py --mode"
    tag = f"tacocat-nosandbox-{uuid.uuid4().hex}"
    text = (
        "games = 2\nseed = 1\nconcurrency = 2\nmove_timeout = 10.0\nmax_restarts = 1\n"
        'format = "gauntlet"\nsandbox = "none"\ntwins = false\nlog_limit_kib = 16\n'
        'out = "out"\n'
        + bot_entry("victim", f"python -m example_bots.greedy_bot {tag}")
        + bot_entry("thief", f"{hostile} spy --tag {tag}")
        + bot_entry("predict", f"{hostile} predict --seed 1 --tag {tag}")
        + bot_entry("remember", f"{hostile} remember --tag {tag}")
        + bot_entry("killed", f"{hostile} kill9 --after 3 --tag {tag}")
        + bot_entry("quitter", f"{hostile} exit --after 3 --tag {tag}")
        + bot_entry("chatty", f"{hostile} chatter --chatter-kib 64 --tag {tag}")
    )
    # Without bwrap a child that leaves the bot's session (setsid, double fork) escapes the
    # process-group kill; only a pids cgroup holds it.
    escapes = not sandbox.process_limit_kind().startswith("cgroup")
    if not escapes:
        text += bot_entry("orphan", f"{hostile} orphan --tag {tag}")
    done = run_tournament(tmp_path, text, "--seed", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "out"
    logs = out / "logs"
    played = games(out)
    assert_verifies(out)  # every forfeit, refusal and timing as the referee recorded it
    assert "Sandbox: none for victim" in done.stdout

    # Without a sandbox the thief reads the victim's token, the runner's command line and
    # the config; the referee still refuses a session from a process that is not the
    # victim's own, so the token buys nothing.
    found = probes(logs / "thief.log")
    assert "victim" in found["tokens-found"][0].split(",")
    assert int(found["cmdlines-with-seed"][0]) >= 1
    assert found["config"][0].startswith("read:")
    assert found["theft-victim"] == ["PERMISSION_DENIED"]
    assert_victim_unaffected(played, "victim", {"thief", "predict", "remember", "chatty"})
    assert len(played) == (6 if escapes else 7) * 2
    forfeits = [g for g in played if g["reason"] not in FINISHED]
    assert all(g["seats"][g["winner"]] == "victim" for g in forfeits)  # it lost none

    # The config seed alone predicts no deal: the secret is mixed in.
    check_deals_need_the_secret(tmp_path, out, logs / "predict.log")

    # Without twins one process plays both games of a deal: the control for the twin test.
    remembered = probes(logs / "remember.log")
    assert remembered["held-opponent-hand"] and remembered["fresh-deal"]

    # kill -9 is a crash (never a disconnect), and an exit code is in the log and summary.
    ends = (("killed", "killed by signal 9 (SIGKILL)"), ("quitter", "exited with code 7"))
    for name, how in ends:
        theirs = [g for g in played if name in g["seats"]]
        assert [g["reason"] for g in theirs] == ["crash", "crash"], [g["detail"] for g in theirs]
        assert all(how in g["detail"] for g in theirs)
        # One end per process: two when its games came one after the other, one when both
        # were in flight when it died (concurrency 2, as the machine's speed has it).
        died = Counter(re.findall(r"--- (.*)\n", (logs / f"{name}.log").read_text()))[how]
        assert died in (1, 2), (logs / f"{name}.log").read_text()
        assert f"bot {name}: {'; '.join([how] * died)}" in done.stdout

    # The log cap: the oldest output dropped, a marker in its place, the newest kept.
    chatty = (logs / "chatty.log").read_text()
    assert len(chatty.encode()) <= 16 * 1024 + 200
    assert "bytes of older output dropped" in chatty and "(log_limit_kib)" in chatty
    assert "LAST CHATTER LINE" in chatty and "--- exited with code 0" in chatty
    assert_no_process_left(tag)


# -- the peer check against a socket at the victim's port -------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/net/tcp6").exists(), reason="needs Linux /proc and IPv6")
def test_a_socket_at_the_victims_port_on_another_loopback_address_is_refused(
    tmp_path: Path,
) -> None:
    """The thief reads the victim's token, binds ``::ffff:127.0.0.2`` at the port of the
    victim's connection (the kernel lists it in ``tcp6``, the victim's in ``tcp``) and asks
    for the victim's seat: once while the victim plays, then right after each of three kills
    and restarts.  Every attempt is refused (port matching alone let it past the peer check
    to ALREADY_EXISTS), and the victim loses no game but those it was killed in."""
    text = (
        "games = 40\nseed = 1\nconcurrency = 1\nmove_timeout = 10.0\nmax_restarts = 5\n"
        'sandbox = "none"\ntwins = false\nout = "out"\n'
        + bot_entry("victim", "python -m example_bots.greedy_bot")
        + bot_entry("thief", "python hostile_bot.py --mode portthief --attempts 4")
    )
    done = run_tournament(tmp_path, text, "--seed", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    found = probes(tmp_path / "out" / "logs" / "thief.log")
    assert found["port-theft"] == [
        "live:PERMISSION_DENIED",
        *["restarted:PERMISSION_DENIED"] * 3,
    ], found
    played = games(tmp_path / "out")
    assert len(played) == 40
    assert_verifies(tmp_path / "out")
    lost = Counter(g["reason"] for g in played if g["seats"][1 - g["winner"]] == "victim")
    # Killed mid-game it loses that game by crash (between games, none): no other loss.
    assert lost["crash"] <= 3 and set(lost) <= FINISHED | {"crash"}, lost


# -- every way to take memory ------------------------------------------------------------------
@needs_bwrap
@pytest.mark.slow
def test_every_way_to_take_memory_ends_in_a_crash_naming_the_limit(tmp_path: Path) -> None:
    """The heap (RLIMIT_DATA), files in the private /tmp (a sized tmpfs), shared anonymous
    mappings and memfds (neither counted by any rlimit): each hog takes up to 1 GiB under a
    128 MiB limit, and each of its games ends in a crash that names the limit."""
    methods = ["heap", "tmpfs"]
    if sandbox.memory_limit_kind():
        methods += ["shared", "memfd"]  # only a memory cgroup counts these
    hostile = "python hostile_bot.py --mode hog --after 3 --hog-mib 1024 --method"
    text = (
        "games = 2\nseed = 1\nconcurrency = 2\nmove_timeout = 10.0\nmax_restarts = 0\n"
        'format = "gauntlet"\nsandbox = "bwrap"\nout = "out"\n'
        "limits = { memory_mib = 128 }\n"
        + bot_entry("victim", "builtin:greedy")
        + "".join(bot_entry(f"hog-{method}", f"{hostile} {method}") for method in methods)
    )
    done = run_tournament(tmp_path, text, "--seed", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    played = games(tmp_path / "out")
    for method in methods:
        theirs = [g for g in played if f"hog-{method}" in g["seats"]]
        assert len(theirs) == 2
        for game in theirs:  # one game per instance (twins A and B), each crashed into it
            assert game["reason"] == "crash" and game["rounds"] >= 1, (method, game["detail"])
            assert "memory limit 128 MiB" in game["detail"], (method, game["detail"])
            assert game["seats"][game["winner"]] == "victim"
        taken = probes(tmp_path / "out" / "logs" / f"hog-{method}.log").get("allocated-mib", [])
        assert all(int(mib) < 1024 for mib in taken), (method, taken)
    if not sandbox.memory_limit_kind():
        pytest.skip("no writable memory cgroup here: shared mappings and memfds not limited")


# -- an ordinary user, without a pids cgroup ---------------------------------------------------
@needs_bwrap
@pytest.mark.slow
def test_four_bots_play_for_an_ordinary_user_without_a_pids_cgroup() -> None:
    """As uid 65534 (root's cgroups are not writable to it), four bots (eight processes,
    ~9 threads each, and the runner's) play: the process limit counts each bot's own, in
    its user namespace, not every thread of the user."""
    folder = Path(tempfile.mkdtemp(prefix="tacocat-nobody-"))  # outside root's 0700 tmp
    try:
        folder.chmod(0o755)
        bots = [arg for n in range(1, 5) for arg in ("--bot", f"b{n}=builtin:random")]
        if os.geteuid() == 0:
            python = python_for_nobody(folder)
            os.chown(folder, NOBODY, NOBODY)
            prefix = as_nobody(python)
        else:
            prefix = [sys.executable]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8", "COLUMNS": "300"}
        argv = [*prefix, "-m", "tacocat_arena.cli", "run", *bots, "--games", "2", "--out", "out"]
        done = subprocess.run(
            [*argv, "--quiet"], cwd=folder, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Sandbox: bwrap for b1, b2, b3, b4" in done.stdout
        if not sandbox.process_limit_kind().startswith("cgroup") or os.geteuid() == 0:
            assert "processes 64 (rlimit in the sandbox)" in done.stdout, done.stdout
        played = games(folder / "out")
        assert len(played) == 6 * 2
        assert all(g["reason"] in FINISHED for g in played), [g["detail"] for g in played]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- twins cannot talk -------------------------------------------------------------------------
@needs_bwrap
@pytest.mark.slow
def test_twins_never_live_at_once_so_flock_carries_no_hand(tmp_path: Path) -> None:
    """Instance A holds an flock() on one read-only file per card of each hand it is dealt;
    instance B tries its deal's while it plays, to read its opponent's hand in the twin game
    (which is A's).  A lock the test holds reaches both sandboxes (the channel is there),
    but A is stopped before B plays: B reads no card, and no hand."""
    locks = tmp_path / "locks"
    locks.mkdir()
    for deal in range(6):
        for value in range(16):
            for copy in range(7):
                (locks / f"d{deal}-{value}-{copy}").touch()
    (locks / "canary").touch()
    text = (
        "games = 12\nseed = 1\nconcurrency = 2\nmove_timeout = 10.0\n"
        'sandbox = "bwrap"\nout = "out"\n'
        + bot_entry("victim", "builtin:greedy")
        + bot_entry("talker", "python hostile_bot.py --mode flocktwin")
    )
    with open(locks / "canary") as canary:
        fcntl.flock(canary, fcntl.LOCK_EX)
        done = run_tournament(tmp_path, text, "--seed", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "out"
    logs = out / "logs"
    assert probes(logs / "talker.log")["canary"] == ["locked"]
    assert probes(logs / "talker~B.log")["canary"] == ["locked"]
    secret = json.loads((out / "results.json").read_text())["metadata"]["deal_secret"]
    config = load_config(tmp_path / "tournament.toml", {}, [])
    plan = {g.game_id: g for g in plan_for(config, secret=secret)}
    saw = [line.split() for line in (logs / "talker~B.log").read_text().splitlines()]
    saw = [fields for fields in saw if fields[:1] == ["TWINSAW"]]
    assert len(saw) == 6  # every twin game B played
    right = 0
    for _, game_id, seat, cards in saw:
        hands = Game(DEFAULT_RULESET, plan[game_id].seed).hands
        right += cards == ",".join(map(str, sorted(hands[1 - int(seat)])))
        assert cards == "none", (game_id, cards)
    assert right == 0
    assert len(games(out)) == 12
