"""Versions of submitted bots: numbered per player, stored by hash and never overwritten, one
active version per player (the previous one retired)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

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


# -- issue 34: a version's row only once its package is whole; quotas; what a player reads ---
def _history(store: ArenaStore) -> None:
    """Record every status a version row ever takes (an SQLite trigger), in ``seen``."""
    store.db.executescript(
        """
        CREATE TEMP TABLE seen (player TEXT, version INTEGER, status TEXT);
        CREATE TEMP TRIGGER seen_insert AFTER INSERT ON versions BEGIN
            INSERT INTO seen VALUES (NEW.player, NEW.version, NEW.status); END;
        CREATE TEMP TRIGGER seen_update AFTER UPDATE ON versions BEGIN
            INSERT INTO seen VALUES (NEW.player, NEW.version, NEW.status); END;
        """
    )


def _upload(submissions: Submissions, player: str, data: bytes) -> Version:
    async def go() -> Version:
        body = submissions.receiving()
        body.write_bytes(data)
        return await submissions.add(player, body)

    return asyncio.run(go())


def test_a_refused_archive_is_rejected_in_its_first_row_and_its_archive_removed(
    tmp_path: Path,
) -> None:
    store = ArenaStore(tmp_path / "arena")
    try:
        submissions = Submissions(store)
        _history(store)
        bad = _upload(submissions, "mal", b"PK\x05\x06" + bytes(18))  # an empty 'zip'
        good = _upload(submissions, "mal", pack(GREEDY))
        seen = store.db.execute("SELECT player, version, status FROM seen").fetchall()
        assert seen == [("mal", 1, "rejected"), ("mal", 2, "checking")]  # never checking
        assert bad.public_reason == "not a valid package"
        assert not submissions.archive_path(bad.sha256).exists()  # its reason is kept
        assert submissions.archive_path(good.sha256).exists()
        assert list((tmp_path / "arena" / "uploads").iterdir()) == []  # nothing half-made
        assert submissions.folder_of(good).is_dir() and not submissions.folder_of(bad).exists()
    finally:
        store.close()


def test_an_unexpected_unpack_error_rejects_the_version_instead_of_leaving_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tacocat_arena.arena import submissions as module

    def broken(*args: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(module, "unpack", broken)
    store = ArenaStore(tmp_path / "arena")
    try:
        found = _upload(Submissions(store), "mal", pack(GREEDY))
        assert found.status is Status.REJECTED
        assert "could not be unpacked (RecursionError" in found.reason
    finally:
        store.close()


def test_bot_toml_is_read_once_a_build_rewriting_it_changes_nothing(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path / "arena")
    try:
        submissions = Submissions(store)
        version = _upload(submissions, "ann", pack(GREEDY))
        package = submissions.package(version)
        assert package.root == submissions.folder_of(version).resolve()
        (package.root / "bot.toml").write_text('command = "sh -c evil"\n' + "#" * 10**6)
        assert submissions.package(version) == package  # as read when it was unpacked
        restarted = Submissions(store)  # a new run: the row's bot.toml, not the folder's
        assert restarted.package(version) == package
    finally:
        store.close()


def test_uploads_past_the_hours_quota_are_refused_with_when_to_retry(tmp_path: Path) -> None:
    from tacocat_arena.arena.submissions import UploadQuota

    store = ArenaStore(tmp_path / "arena")
    try:
        submissions = Submissions(store, quota=UploadQuota(uploads_per_hour=2, bytes_per_hour=1000))
        insert = "INSERT INTO versions (player, version, sha256, size, status, submitted_at)"
        old = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-7200 seconds')"
        recent = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-600 seconds')"
        store.db.execute(f"{insert} VALUES ('ann', 1, 'a', 900, 'rejected', {old})")
        assert submissions.over_quota("ann", 900) is None  # two hours ago: out of the window
        store.db.execute(f"{insert} VALUES ('ann', 2, 'b', 600, 'rejected', {recent})")
        over = submissions.over_quota("ann", 500)
        assert over is not None and "bytes_per_hour" in over.message
        assert 2900 <= over.retry_after_s <= 3001  # when the upload of 10 minutes ago ages out
        assert submissions.over_quota("ann", 100) is None
        store.db.execute(f"{insert} VALUES ('ann', 3, 'c', 1, 'active', {recent})")
        over = submissions.over_quota("ann", 1)
        assert over is not None and "uploads_per_hour" in over.message
        assert submissions.over_quota("bob", 1) is None  # counted per player
        with pytest.raises(ValueError, match="uploads_per_hour"):
            UploadQuota(uploads_per_hour=0)
    finally:
        store.close()


def test_stored_reasons_and_logs_name_no_folder_of_the_arenas_machine(tmp_path: Path) -> None:
    import sys
    import tempfile

    store = ArenaStore(tmp_path / "arena")
    try:
        submissions = Submissions(store)
        version = _upload(submissions, "ann", pack(GREEDY))
        folder = submissions.folder_of(version).resolve()
        log = (
            f"cwd {folder}\nfile {folder}/bot.py\nstore {tmp_path / 'arena'}/arena.sqlite\n"
            f"python {sys.executable}\nscratch {tempfile.gettempdir()}/tacocat-build-x\n"
            f'File "{REPO}/example_bots/greedy_bot.py", line 1\n'
        )
        settled = submissions.settle(version, Status.REJECTED, f"no {folder}/x", log, public="p")
        everything = settled.reason + settled.log + settled.public_reason
        assert str(tmp_path) not in everything and sys.prefix not in everything
        assert str(REPO) not in everything  # a traceback through the example bots
        assert "cwd .\nfile ./bot.py\nstore <arena>/arena.sqlite" in settled.log
        assert settled.reason == "no ./x" and settled.public_reason == "p"
        assert not submissions.folder_of(version).exists()  # rejected: folder and archive go
        assert not submissions.archive_path(version.sha256).exists()
    finally:
        store.close()


def test_a_public_summary_shows_the_public_reason_only() -> None:
    from tacocat_arena.arena.submissions import version_summary

    version = Version(
        "ann", 1, "0" * 64, 9, "t", Status.REJECTED, "check 'handshake' failed: got secret",
        "the bot printed its secret", "check 'handshake' failed",
    )  # fmt: skip
    assert version_summary(version, 0)["reason"] == "check 'handshake' failed"
    assert "log" not in version_summary(version, 0)
    assert version_summary(version, 0, private=True)["reason"].endswith("got secret")


@pytest.mark.parametrize(
    ("text", "number"),
    [("2", 2), ("v2", 2), ("0", None), ("v", None), ("-1", None), ("1" * 400, None),
     ("999999999", 999999999), ("1000000000", None), ("2 ", None), ("٣", None)],
)  # fmt: skip
def test_version_numbers_from_urls_are_range_checked(text: str, number: int | None) -> None:
    from tacocat_arena.arena.submissions import parse_version_number

    assert parse_version_number(text) == number
    expected = None if number is None else ("alice", number)
    assert parse_identity(f"alice@v{text.removeprefix('v')}") == expected


def test_a_version_number_out_of_sqlites_range_is_no_version(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path / "arena")
    try:
        submissions = Submissions(store)
        assert submissions.get("alice", 10**400) is None and submissions.get("alice", 0) is None
    finally:
        store.close()


def test_the_store_makes_the_versions_table_and_gives_an_old_one_its_new_columns(
    tmp_path: Path,
) -> None:
    """The store owns every table of arena.sqlite, ``versions`` included: a store from before
    issue 34 (no ``public_reason``, no ``manifest``) is given them when it is opened, and
    its rows read as they did."""
    ArenaStore(tmp_path / "arena").close()
    with sqlite3.connect(tmp_path / "arena" / "arena.sqlite") as db:
        db.executescript(
            "DROP TABLE versions;"
            "CREATE TABLE versions (player TEXT NOT NULL, version INTEGER NOT NULL,"
            " sha256 TEXT NOT NULL, size INTEGER NOT NULL, submitted_at TEXT NOT NULL,"
            " status TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',"
            " log TEXT NOT NULL DEFAULT '', PRIMARY KEY (player, version));"
            "INSERT INTO versions VALUES ('ann', 1, 'a', 9, 't', 'rejected', 'why', 'log');"
        )
    store = ArenaStore(tmp_path / "arena")
    try:
        columns = {row[1] for row in store.db.execute("PRAGMA table_info(versions)")}
        assert {"public_reason", "manifest"} <= columns
        (old,) = Submissions(store, server=False).versions()
        assert (old.player, old.status, old.reason, old.public_reason) == (
            "ann", Status.REJECTED, "why", "rejected",
        )  # fmt: skip
    finally:
        store.close()
