"""Versions of submitted bots: numbered per player, stored by hash and never overwritten, one
active version per player (the previous one retired)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tacocat_arena.arena.store import ArenaStore
from tacocat_arena.arena.submissions import (
    PACKAGES_DIR,
    Status,
    Submissions,
    Version,
    identity,
    parse_identity,
)
from tacocat_arena.launch.package import pack

REPO = Path(__file__).resolve().parent.parent
GREEDY = REPO / "example_bots" / "packages" / "python-greedy"


def test_versions_are_numbered_per_player_and_stored_once_by_hash(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path / "arena")
    try:
        submissions = Submissions(store)

        async def upload(player: str, data: bytes) -> Version:
            body = submissions.receiving()
            body.write_bytes(data)
            return await submissions.add(player, body)

        data = pack(GREEDY)
        first = asyncio.run(upload("alice", data))
        stored = submissions.archive_path(first.sha256)
        inode = stored.stat().st_ino
        second = asyncio.run(upload("alice", data))
        other = asyncio.run(upload("bob", data))
        assert [(v.player, v.version) for v in (first, second, other)] == [
            ("alice", 1),
            ("alice", 2),
            ("bob", 1),
        ]
        assert {v.status for v in submissions.versions()} == {Status.CHECKING}
        assert list((tmp_path / "arena" / PACKAGES_DIR).iterdir()) == [stored]
        assert stored.stat().st_ino == inode  # the same bytes again: never rewritten
        assert submissions.package(submissions.versions("alice")[1]).command.endswith("greedy_bot")

        v1, v2 = submissions.versions("alice")
        submissions.activate(v1, "log")
        submissions.activate(v2, "log")
        statuses = [(v.version, v.status, v.reason) for v in submissions.versions("alice")]
        assert statuses == [
            (1, Status.RETIRED, "replaced by v2"),
            (2, Status.ACTIVE, "passed the gate"),
        ]
        assert submissions.get("bob", 1).status is Status.CHECKING  # type: ignore[union-attr]
        bad = asyncio.run(upload("bob", b"not an archive"))
        assert bad.status is Status.REJECTED and "not a valid package" in bad.reason
        assert not submissions.folder_of(bad).exists()
    finally:
        store.close()


def test_a_version_plays_under_a_name_no_player_can_take() -> None:
    assert identity("alice", 2) == "alice@v2"
    assert parse_identity("alice@v2") == ("alice", 2)
    assert parse_identity("alice") is None
