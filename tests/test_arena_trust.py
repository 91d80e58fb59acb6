"""A hostile player against the arena: what it must not learn, keep or hold.

Each test is the attack of issue 23 as real processes over loopback: ``tacocat-arena serve``,
bots in their own processes, HTTP clients written here (``arena_support.fetch``).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from arena_support import (
    ArenaProcess,
    add_players,
    connected_sessions,
    fetch,
    group_texts,
    hidden_groups,
    start_arena,
    start_bot,
    start_bots,
    wait_until,
)

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.engine import spectator_event
from tacocat_arena.protocol.wire import PROTOCOL_VERSION
from tacocat_arena.tournament.schedule import deal_seed

pytestmark = pytest.mark.slow


def _everything_served(
    arena: ArenaProcess, first: str, second: str, bots: list[str]
) -> dict[str, bytes]:
    """Every page, JSON answer and event stream of the web server, headers included."""
    paths = [
        "/", "/events", "/api/leaderboard", "/api/status", "/api/connections", "/api/games",
        "/api/games?limit=1000", "/api/games?event=ladder&limit=1000",
        f"/games/{first}", f"/games/{first}?account", f"/api/games/{first}",
        f"/games/{first}/events", f"/games/{second}", f"/api/games/{second}",
        f"/games/{second}/events",
    ]  # fmt: skip
    for bot in bots:
        paths += [f"/bots/{bot}", f"/api/bots/{bot}", f"/api/games?bot={bot}&limit=1000"]
    return {path: fetch(arena.web, path, stream_s=0.5) for path in paths}


def _substrings(text: str) -> set[str]:
    """The JSON lists in ``text`` (to ask which printed groups it holds)."""
    return set(re.findall(r"\[[\d, ]*\]", text))


def _is_live(arena: ArenaProcess, game_id: str) -> bool:
    return any(g["id"] == game_id and g["live"] for g in arena.json("/api/games"))


def _body(answer: bytes) -> bytes:
    return answer.split(b"\n\n", 1)[1]


def test_nothing_of_a_pairs_first_game_is_served_while_its_twin_is_live(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    # One deal played twice (connected bots play independent deals by default, issue 34):
    # the rule under test is how a duplicate pair's first game is held (hosted batches').
    arena = start_arena(
        folder, "--concurrency", "1", "--per-bot", "1", "--move-timeout", "5", "--duplicate-deals"
    )
    cleanup.append(arena)
    cleanup.extend(start_bots(tokens, arena.address, tmp_path, delay=0.04))
    crawled: dict[int, dict[str, bytes]] = {}
    for pair in range(6):  # a crawl that outlasted the second game is retried on the next
        first, second = f"L{pair:06d}a", f"L{pair:06d}b"
        wait_until(lambda: _is_live(arena, second), 60, f"{second} to be live")  # noqa: B023
        served = _everything_served(arena, first, second, ["ann", "ben"])
        if _is_live(arena, second):
            crawled[pair] = served
            if len(crawled) == 2:
                break
    assert len(crawled) == 2, "the second games ended before a crawl did: slow the bots down"
    for pair, served in crawled.items():
        first = f"L{pair:06d}a"
        assert b"shown once its duplicate twin" in served[f"/api/games/{first}"]
        assert served[f"/games/{first}"].startswith(b"404")
        # No count tells the first game's result: the pairs before it are all there is.
        assert json.loads(_body(served["/api/status"]))["games"] == 2 * pair
        leaderboard = json.loads(_body(served["/api/leaderboard"]))
        assert sum(row["games"] for row in leaderboard) <= 4 * pair
        wait_until(lambda: arena.status(f"/api/games/{first}") == 200, 60, "the pair's end")  # noqa: B023
        game = arena.json(f"/api/games/{first}")
        seed = game["record"]["seed"]
        signed = seed - 2**64 if seed >= 2**63 else seed
        everything = b"\n".join(served.values())
        assert str(seed).encode() not in everything and str(signed).encode() not in everything
        # The twin's showdowns show its hands, the same cards: what it made public is not a
        # leak of the first game (the stream of the twin is checked in test_arena_server).
        twin = arena.json(f"/api/games/L{pair:06d}b")["record"]
        public = json.dumps([spectator_event(e) for e in twin["events"]])
        public += json.dumps([spectator_event(e) for e in twin["events"]], separators=(",", ":"))
        shown_by_twin = {g for g in hidden_groups(twin) if group_texts(g) & _substrings(public)}
        leaks = [
            (path, text)
            for group in hidden_groups(game["record"]) - shown_by_twin
            for text in group_texts(group)
            for path, answer in served.items()
            if text.encode() in answer
        ]
        assert not leaks, leaks
        # The pair's deal secret is published with it: anyone can re-derive the seed; the
        # arena's seed alone (run's scheme without the secret) predicts nothing.
        deal = game["deal"]
        pairing = tuple(deal["pairing"])
        assert deal_seed(deal["arena_seed"], pairing, deal["deal"], secret=deal["secret"]) == seed
        assert deal_seed(deal["arena_seed"], pairing, deal["deal"], secret="") != seed


def _other_user_reads(path: Path) -> str:
    """What uid/gid 65534 gets trying to read ``path`` (``cat``, or ``ls`` for a folder)."""
    command = ["ls", str(path)] if path.is_dir() else ["cat", str(path)]
    done = subprocess.run(
        command, user=65534, group=65534, extra_groups=[], capture_output=True, timeout=30
    )
    if done.returncode == 0:
        return "read"
    return "denied" if b"Permission denied" in done.stderr else done.stderr.decode()


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to uid 65534 needs root")
def test_another_user_of_the_machine_cannot_read_the_store_or_the_deal_secret(
    tmp_path: Path, cleanup: list
) -> None:
    shared = Path(tmp_path / "shared")  # a folder every user may enter, as /srv or /home is
    shared.mkdir()
    for part in (shared, *shared.parents):
        if part == Path("/"):
            break
        part.chmod(part.stat().st_mode | 0o005)
    control = shared / "public.txt"
    control.write_text("anyone may read this")
    control.chmod(0o644)
    assert _other_user_reads(control) == "read"  # the test can tell: uid 65534 reads elsewhere
    folder = shared / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder)
    cleanup.append(arena)
    cleanup.extend(start_bots(tokens, arena.address, tmp_path))
    wait_until(lambda: arena.json("/api/status")["games"] >= 2, 60, "games stored")
    store = folder / "arena.sqlite"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for part in (store, folder / "arena.sqlite-wal", folder / "organizer.token"):
        assert stat.S_IMODE(part.stat().st_mode) == 0o600, part
    # Even a copy of the store made readable to everyone is refused once inside the folder.
    for part in (folder, store, folder / "arena.sqlite-wal", folder / "logs" / "arena.log"):
        assert _other_user_reads(part) == "denied", part
    arena.stop()
    # An older store (0755 folder, 0644 file) is made private when the arena opens it.
    folder.chmod(0o755)
    store.chmod(0o644)
    restarted = start_arena(folder)
    cleanup.append(restarted)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert _other_user_reads(folder) == "denied"


_REVOKE_AND_ADD = """
import sys
from pathlib import Path
from typing import Any
from tacocat_arena.arena.players import add_player
from tacocat_arena.arena.store import ArenaStore
store = ArenaStore(Path(sys.argv[1]))
store.revoke_player(sys.argv[2])
token = add_player(store, sys.argv[2])
print(token)
store.close()
"""


def _handshake(address: str, name: str, token: str) -> tuple[grpc.StatusCode, str]:
    """Open a Play stream with a Hello, as any client written from arena.proto would; the
    status the referee ends it with (OK if it answered with a Welcome)."""
    with grpc.insecure_channel(address) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        hello = pb.BotMessage(
            hello=pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=name, token=token)
        )
        try:
            first = next(iter(stub.Play(iter([hello]), timeout=10)))
        except grpc.RpcError as error:
            return error.code(), error.details()
        assert first.WhichOneof("message") == "welcome", first
        return grpc.StatusCode.OK, ""


def _stored_games_of(folder: Path, name: str) -> int:
    with sqlite3.connect(folder / "arena.sqlite") as db:
        query = "SELECT COUNT(*) FROM games WHERE seat0 = ? OR seat1 = ?"
        return int(db.execute(query, (name, name)).fetchone()[0])


def _live_games_of(arena: ArenaProcess, name: str) -> list[dict[str, Any]]:
    """``name``'s games in flight, from /api/games (live ones first, each ``live``)."""
    return [g for g in arena.json(f"/api/games?bot={name}&limit=1") if g["live"]]


def test_revoke_then_add_back_to_back_ends_the_old_session_at_once(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "bob")
    arena = start_arena(folder, "--concurrency", "4")
    cleanup.append(arena)
    cleanup.append(start_bot("ann", tokens["ann"], arena.address, tmp_path))
    rounds = [
        # The store's own calls back to back, from another process: the tightest race (no
        # moment between them for the arena to see the player gone before it is back).
        lambda: subprocess.run(
            [sys.executable, "-c", _REVOKE_AND_ADD, str(folder), "bob"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout.split()[-1],
        # The organizer's commands, as docs/arena-server.md gives them.
        lambda: subprocess.run(
            f"{sys.executable} -m tacocat_arena.cli players revoke bob --dir {folder} && "
            f"{sys.executable} -m tacocat_arena.cli players add bob --dir {folder}",
            shell=True, capture_output=True, text=True, timeout=60, check=True,
        ).stdout.split()[-1],
    ]  # fmt: skip
    token = tokens["bob"]
    for race in rounds:
        bob = start_bot("bob", token, arena.address, tmp_path)
        cleanup.append(bob)
        played = _stored_games_of(folder, "bob")
        wait_until(lambda: _stored_games_of(folder, "bob") >= played + 2, 60, "bob's games")  # noqa: B023
        old_session = connected_sessions(arena)["bob"]
        new_token = race()
        # The old session is ended (its games in flight forfeited) and plays nothing more.
        assert bob.process.wait(10) == 0, bob.output()
        assert connected_sessions(arena).get("bob") != old_session
        # Its games in flight end as forfeits, stored after its process saw SessionEnd (a game
        # stays live until it is stored); then nothing more.
        wait_until(lambda: not _live_games_of(arena, "bob"), 30, "bob's games in flight to end")
        settled = _stored_games_of(folder, "bob")
        time.sleep(2.0)
        assert _stored_games_of(folder, "bob") == settled
        # The old token no longer connects; the new one does, with a session of its own.
        assert _handshake(arena.address, "bob", token)[0] is grpc.StatusCode.UNAUTHENTICATED
        token = new_token
    newcomer = start_bot("bob", token, arena.address, tmp_path)
    cleanup.append(newcomer)
    wait_until(lambda: _stored_games_of(folder, "bob") >= settled + 2, 60, "the new bob's games")


def test_a_revoked_player_is_told_so_and_a_wrong_token_is_not(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "bob")
    arena = start_arena(folder)
    cleanup.append(arena)
    assert _handshake(arena.address, "bob", tokens["bob"])[0] is grpc.StatusCode.OK
    subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "players", "revoke", "bob", "--dir",
         str(folder)],
        capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    assert _handshake(arena.address, "bob", tokens["bob"]) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "player 'bob' was revoked by the organizer",
    )
    code, details = _handshake(arena.address, "bob", "tca_not-bobs-token")
    assert code is grpc.StatusCode.UNAUTHENTICATED and "wrong token" in details
    assert _handshake(arena.address, "nobody", tokens["bob"])[0] is grpc.StatusCode.UNAUTHENTICATED
    reasons = {f["reason"] for f in arena.json("/api/connections")["failures"]}
    assert "revoked by the organizer" in reasons
