"""Bot packages: bot.toml is checked key by key, and hostile archives are refused with nothing
written outside the version's own folder (every test looks at the whole disk area around it).
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tacocat_arena.launch.package import (
    DEFAULT_CAPS,
    MANIFEST,
    BotPackage,
    PackageCaps,
    PackageError,
    load_package,
    open_package,
    pack,
    unpack,
)

MANIFEST_TEXT = b'command = "python bot.py"\n'


# -- building archives by hand, hostile ones included -----------------------------------------
Entry = tarfile.TarInfo | tuple[str | tarfile.TarInfo, bytes]


def tar_bytes(entries: list[Entry]) -> bytes:
    """A .tar.gz of ``entries``: bare TarInfos (links, devices...) or (name or TarInfo, data)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                tar.addfile(entry)
                continue
            name, data = entry
            info = name if isinstance(name, tarfile.TarInfo) else tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def tar_entry(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


def zip_bytes(entries: list[tuple[str, bytes, int]]) -> bytes:
    """(name, data, unix mode) entries; a mode with S_IFLNK makes a symlink (data its target)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zipped.writestr(info, data)
    return buffer.getvalue()


def snapshot(area: Path, skip: Path) -> set[str]:
    """Every path under ``area`` (symlinks not followed) except ``skip`` and below."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(area):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            if path != skip and skip not in path.parents:
                found.add(str(path.relative_to(area)))
    return found


@pytest.fixture
def area(tmp_path: Path) -> Path:
    """A disk area with a file a hostile archive would like to reach."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("keep out")
    (tmp_path / "versions").mkdir()
    return tmp_path


def refused(area: Path, data: bytes, caps: PackageCaps = DEFAULT_CAPS) -> str:
    """Unpack ``data`` into a fresh version folder; its refusal's message.  Checks that the
    version folder is gone and that nothing else in the area changed."""
    archive = area / "upload.bin"
    archive.write_bytes(data)
    into = area / "versions" / "v1"
    before = snapshot(area, into)
    with pytest.raises(PackageError) as caught:
        unpack(archive, into, caps)
    assert not into.exists(), "a refused archive leaves no half-unpacked folder"
    assert snapshot(area, into) == before, "nothing may land outside the version's folder"
    assert (area / "outside" / "secret.txt").read_text() == "keep out"
    return str(caught.value)


HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "tar absolute path": (lambda: tar_bytes([("/tmp/evil.txt", b"x")]), "absolute path"),
    "tar dot-dot": (lambda: tar_bytes([("../outside/evil.txt", b"x")]), "'..'"),
    "tar dot-dot deep": (lambda: tar_bytes([("a/b/../../../evil", b"x")]), "'..'"),
    "tar backslash": (lambda: tar_bytes([("..\\evil", b"x")]), "plain relative path"),
    "tar symlink absolute": (
        lambda: tar_bytes([tar_entry("link", tarfile.SYMTYPE, "/etc/passwd")]),
        "points outside",
    ),
    "tar symlink dot-dot": (
        lambda: tar_bytes([tar_entry("link", tarfile.SYMTYPE, "../../outside/secret.txt")]),
        "points outside",
    ),
    "tar symlink chain": (
        # "here" is the package's root, so "here/.." is its parent: only a real resolution
        # through the first link sees that the second points out.
        lambda: tar_bytes(
            [
                tar_entry("here", tarfile.SYMTYPE, "."),
                tar_entry("up", tarfile.SYMTYPE, "here/.."),
            ]
        ),
        "points outside",
    ),
    "tar write through symlink": (
        lambda: tar_bytes(
            [tar_entry("sub", tarfile.SYMTYPE, "."), ("sub/evil.txt", b"x")],
        ),
        "goes through the symlink",
    ),
    "tar hard link absolute": (
        lambda: tar_bytes([tar_entry("hard", tarfile.LNKTYPE, "/etc/passwd")]),
        "hard link",
    ),
    "tar hard link dot-dot": (
        lambda: tar_bytes([tar_entry("hard", tarfile.LNKTYPE, "../outside/secret.txt")]),
        "hard link",
    ),
    "tar character device": (
        lambda: tar_bytes([tar_entry("null", tarfile.CHRTYPE)]),
        "device file",
    ),
    "tar block device": (lambda: tar_bytes([tar_entry("sda", tarfile.BLKTYPE)]), "device file"),
    "tar fifo": (lambda: tar_bytes([tar_entry("pipe", tarfile.FIFOTYPE)]), "FIFO"),
    "tar duplicate": (lambda: tar_bytes([(MANIFEST, b"a"), (MANIFEST, b"b")]), "twice"),
    "zip absolute path": (lambda: zip_bytes([("/evil.txt", b"x", 0o100644)]), "absolute path"),
    "zip dot-dot": (lambda: zip_bytes([("a/../../evil.txt", b"x", 0o100644)]), "'..'"),
    "zip drive letter": (lambda: zip_bytes([("C:/evil.txt", b"x", 0o100644)]), "absolute"),
    "zip symlink out": (
        lambda: zip_bytes([("link", b"../outside/secret.txt", stat.S_IFLNK | 0o777)]),
        "points outside",
    ),
    "zip fifo": (lambda: zip_bytes([("pipe", b"", stat.S_IFIFO | 0o644)]), "FIFO"),
    "not an archive": (lambda: b"just some bytes, not an archive at all", "not a readable"),
    "truncated tar.gz": (
        lambda: tar_bytes([(MANIFEST, MANIFEST_TEXT), ("big", os.urandom(200_000))])[:5000],
        "'big': cannot be unpacked",
    ),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_archive_is_refused_and_nothing_lands_outside(area: Path, kind: str) -> None:
    make, reason = HOSTILE[kind]
    assert reason in refused(area, make())


def test_archive_over_the_size_cap_is_refused_before_it_is_read(area: Path) -> None:
    data = tar_bytes([(MANIFEST, MANIFEST_TEXT), ("noise", os.urandom(20_000))])
    message = refused(area, data, PackageCaps(archive_bytes=10_000))
    assert "archive_bytes" in message


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_zip_bomb_is_stopped_as_it_unpacks(area: Path, kind: str) -> None:
    """64 MiB of zeros compress to a few dozen KiB: the cap counts the bytes written."""
    zeros = bytes(64 * 2**20)
    if kind == "zip":
        data = zip_bytes([(MANIFEST, MANIFEST_TEXT, 0o100644), ("bomb", zeros, 0o100644)])
    else:
        data = tar_bytes([(MANIFEST, MANIFEST_TEXT), ("bomb", zeros)])
    assert len(data) < 2**20
    message = refused(area, data, PackageCaps(unpacked_bytes=2**20))
    assert "unpacked_bytes" in message and "'bomb'" in message


def test_zip_whose_header_lies_about_the_size_is_still_counted(area: Path) -> None:
    """A zip entry claiming 10 bytes but holding 4 MiB: the bytes written are what counts
    (zipfile stops at the claimed size and fails the CRC; either way nothing big lands)."""
    data = bytearray(zip_bytes([("bomb", bytes(4 * 2**20), 0o100644)]))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).infolist()[0]
    # Patch the uncompressed size in the central directory and the local header.
    for offset in (data.find(b"PK\x01\x02") + 24, info.header_offset + 22):
        data[offset : offset + 4] = (10).to_bytes(4, "little")
    message = refused(area, bytes(data), PackageCaps(unpacked_bytes=2**20))
    assert "unpacked_bytes" in message or "'bomb': cannot be unpacked: Bad CRC" in message


def test_too_many_files_is_refused(area: Path) -> None:
    data = tar_bytes([(f"f{i}", b"") for i in range(50)])
    assert "files" in refused(area, data, PackageCaps(files=20))


def test_safe_archive_unpacks_with_its_links_and_modes(area: Path) -> None:
    run = tarfile.TarInfo("bin/run")
    run.mode = 0o4755  # setuid is dropped, the executable bit kept
    entries: list[Entry] = [
        (MANIFEST, b'command = "./bin/run"\nbuild = "make all"\n[env]\nLEVEL = "3"\n'),
        (run, b"#!x"),
        ("node_modules/pkg/bin/cli.js", b"//"),
        tar_entry("node_modules/.bin", tarfile.DIRTYPE),
        tar_entry("node_modules/.bin/cli", tarfile.SYMTYPE, "../pkg/bin/cli.js"),
        tar_entry("copy.js", tarfile.LNKTYPE, "node_modules/pkg/bin/cli.js"),
    ]
    (area / "ok.tar.gz").write_bytes(tar_bytes(entries))
    package = open_package(area / "ok.tar.gz", area / "versions" / "v1")
    root = area / "versions" / "v1"
    assert package == BotPackage(root.resolve(), "./bin/run", "make all", (("LEVEL", "3"),))
    assert os.readlink(root / "node_modules/.bin/cli") == "../pkg/bin/cli.js"
    assert (root / "copy.js").read_bytes() == b"//" and not (root / "copy.js").is_symlink()
    mode = (root / "bin/run").stat().st_mode
    assert mode & stat.S_IXUSR and not mode & stat.S_ISUID


def test_an_archive_of_the_folder_itself_is_found_one_level_down(area: Path) -> None:
    data = zip_bytes([("mybot/" + MANIFEST, MANIFEST_TEXT, 0o100644)])
    (area / "mybot.zip").write_bytes(data)
    package = open_package(area / "mybot.zip", area / "versions" / "v1")
    assert package.root == (area / "versions" / "v1" / "mybot").resolve()


# -- bot.toml -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "command is required"),
        ('comand = "python bot.py"', "unknown key 'comand'"),
        ('command = "python bot.py"\ntimeout = 3', "unknown key 'timeout'"),
        ("command = 3", "command must be a non-empty string"),
        ('command = "  "', "command must be a non-empty string"),
        ('command = "python \'bot.py"', "cannot parse command"),
        ('command = "x"\nbuild = ""', "build must be a non-empty string"),
        ('command = "x"\nenv = "A=1"', "env must be a table"),
        ('command = "x"\n[env]\nA = 1', "env 'A' must be a string"),
        ('command = "x"\n[env]\n"A-B" = "1"', "not a variable name"),
        ('command = "x"\n[env]\nTACOCAT_ARENA_TOKEN = "t"', "set by the arena"),
        ('command = "x', "not valid TOML"),
    ],
)
def test_malformed_manifest_names_the_key(tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / MANIFEST).write_text(text)
    with pytest.raises(PackageError, match=reason.replace("(", r"\(")):
        load_package(tmp_path)


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="no bot.toml"):
        load_package(tmp_path)


def test_pack_round_trips_and_skips_caches(area: Path) -> None:
    folder = area / "src"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (folder / MANIFEST).write_bytes(MANIFEST_TEXT)
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "alias.py").symlink_to("bot.py")
    data = pack(folder)
    assert data == pack(folder), "the same folder packs to the same bytes"
    (area / "up.tar.gz").write_bytes(data)
    package = open_package(area / "up.tar.gz", area / "versions" / "v1")
    assert package.command == "python bot.py"
    names = sorted(p.name for p in package.root.iterdir())
    assert names == ["alias.py", "bot.py", MANIFEST]
    with pytest.raises(PackageError, match="over the package caps"):
        pack(folder, PackageCaps(files=2))


def test_pack_follows_links_that_point_outside(area: Path) -> None:
    """The example bots link the repository's proto folder: packed, it becomes real files."""
    (area / "outside" / "shared").mkdir()
    (area / "outside" / "shared" / "arena.proto").write_text("syntax")
    folder = area / "src"
    folder.mkdir()
    (folder / MANIFEST).write_bytes(MANIFEST_TEXT)
    (folder / "proto").symlink_to(area / "outside" / "shared")
    (area / "up.tar.gz").write_bytes(pack(folder))
    package = open_package(area / "up.tar.gz", area / "versions" / "v1")
    copied = package.root / "proto" / "arena.proto"
    assert copied.read_text() == "syntax" and not (package.root / "proto").is_symlink()


REPO = Path(__file__).resolve().parent.parent
EXAMPLE_PACKAGES = [
    "example_bots/packages/python-random",
    "example_bots/packages/python-greedy",
    "example_bots/node",
    "example_bots/cpp",
]


@pytest.mark.parametrize("folder", EXAMPLE_PACKAGES)
def test_example_packages_load_and_pack(folder: str) -> None:
    package = load_package(REPO / folder)
    assert package.argv()
    with tarfile.open(fileobj=io.BytesIO(pack(REPO / folder))) as tar:
        names = tar.getnames()
    assert MANIFEST in names
    if "proto" in os.listdir(REPO / folder):
        assert "proto/tacocat/v1/arena.proto" in names


# -- bounded in memory and time (issue 34) ------------------------------------------------------
def _peak_mib(action: Callable[[], object]) -> float:
    """The peak of Python's allocations while ``action`` runs, in MiB."""
    import tracemalloc

    tracemalloc.start()
    try:
        action()
    except PackageError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak / 2**20


def test_a_zip_symlink_entry_is_read_only_up_to_a_link_targets_cap(area: Path) -> None:
    """A 1 MB upload whose 'symlink' inflates to 64 MiB: it was inflated whole before 4 KiB
    were kept (+1.5 GiB of RSS for 300 MiB); now 4 KiB + 1 are read and it is refused."""
    zeros = bytes(64 * 2**20)
    data = zip_bytes([(MANIFEST, MANIFEST_TEXT, 0o100644), ("link", zeros, stat.S_IFLNK | 0o777)])
    del zeros
    assert len(data) < 2**20
    assert "'link': a symlink target over 4096 bytes" in refused(area, data)
    (area / "again.zip").write_bytes(data)
    peak = _peak_mib(lambda: unpack(area / "again.zip", area / "versions" / "v2"))
    assert peak < 8, f"unpacking the link allocated {peak:.1f} MiB"


def _zip_of(count: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zipped:
        for i in range(count):
            zipped.writestr(f"f{i}", b"")
    return buffer.getvalue()


def test_a_zips_list_of_entries_is_capped_before_zipfile_reads_it(
    area: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted record by record from the central directory itself: no ZipInfo is made (a
    zip listing 1,000,000 entries cost +380 MiB before the entry cap counted)."""
    data = _zip_of(1000)
    made: list[object] = []
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: made.append(a))  # must not run
    assert "lists more than 200 entries" in refused(area, data, PackageCaps(files=200))
    message = refused(area, data, PackageCaps(directory_bytes=10_000))
    assert "over the cap of 10000 (package caps: directory_bytes)" in message
    assert made == []


def _corrupt_deflate() -> bytes:
    data = bytearray(
        zip_bytes([(MANIFEST, MANIFEST_TEXT, 0o100644), ("x.bin", os.urandom(4000) * 4, 0o100644)])
    )
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("x.bin")
    start = info.header_offset + 30 + len("x.bin")
    data[start : start + 64] = b"\xff" * 64  # the deflate stream's first bytes
    return bytes(data)


def _gnu_long_names(count: int) -> bytes:
    """``count`` GNU long-name headers in a row, then a file: tarfile recursed once a header
    (3,000 of them: RecursionError, a 500 and a dead gate task)."""
    blocks = []
    for _ in range(count):
        payload = b"x" * 200 + b"\0"
        header = tarfile.TarInfo("././@LongLink")
        header.type, header.size = tarfile.GNUTYPE_LONGNAME, len(payload)
        blocks.append(header.tobuf(tarfile.GNU_FORMAT) + payload.ljust(512, b"\0"))
    last = tarfile.TarInfo("bot.toml")
    last.size = len(MANIFEST_TEXT)
    blocks.append(last.tobuf(tarfile.GNU_FORMAT) + MANIFEST_TEXT.ljust(512, b"\0"))
    return gzip_bytes(b"".join(blocks) + bytes(1024))


def _pax_header(size: int) -> bytes:
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, size
    body = header.tobuf(tarfile.USTAR_FORMAT) + bytes(size + (-size % 512))
    return gzip_bytes(body + bytes(1024))


def gzip_bytes(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, 6)


UNPACK_ERRORS: dict[str, tuple[Callable[[], bytes], str]] = {
    "corrupt deflate": (_corrupt_deflate, "'x.bin': cannot be unpacked"),
    "a 300-character name": (
        lambda: tar_bytes([(MANIFEST, MANIFEST_TEXT), ("n" * 300, b"x")]),
        "a name over 255 bytes",
    ),
    "a 4,200-character path": (
        lambda: zip_bytes([(MANIFEST, MANIFEST_TEXT, 0o100644), ("d/" * 2100, b"x", 0o100644)]),
        "a path over 1024 bytes",
    ),
    "3,000 chained long names": (
        lambda: _gnu_long_names(3000),
        "more than 8 tar extension headers",
    ),
    "a 1 MiB pax header": (lambda: _pax_header(2**20), "over 65536"),
    "a link target over 4 KiB": (
        lambda: tar_bytes([tar_entry("l", tarfile.SYMTYPE, "a/" * 2100)]),
        "a symlink target over 4096 bytes",
    ),
    "folders on the way count": (
        lambda: tar_bytes([("/".join("d" * 40) + "/f", b"")]),
        "more than 20 entries",
    ),
}


@pytest.mark.parametrize("kind", sorted(UNPACK_ERRORS))
def test_every_unpack_error_is_a_refusal_naming_the_entry(area: Path, kind: str) -> None:
    make, reason = UNPACK_ERRORS[kind]
    message = refused(area, make(), PackageCaps(files=20))
    assert reason in message
    assert len(message) < 400, "a refusal quotes a long name cut short"


def test_a_tar_stream_is_counted_as_it_is_read_and_skipped() -> None:
    from tacocat_arena.launch.package import _Counted

    stream = _Counted(io.BytesIO(bytes(5000)), 1000)
    assert len(stream.read(600)) == 600
    with pytest.raises(PackageError, match="over 1000 bytes"):
        stream.seek(2000)  # a skipped member's data counts as read
    with pytest.raises(OSError, match="forward only"):
        _Counted(io.BytesIO(bytes(10)), 100).seek(-1, os.SEEK_END)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('command = "x"\n# ' + "x" * 70_000 + "\n", "over 65536 bytes"),
        ("a = " + "[" * 20_000, "not valid TOML"),
        ('command = "x"\n[env]\nA = "a\\u0000b"', "env 'A'.* NUL character"),
        ('command = "x\\u0000y"', "command holds a NUL character"),
    ],
)
def test_a_manifest_is_capped_and_refused_before_it_reaches_a_process(
    tmp_path: Path, text: str, reason: str
) -> None:
    (tmp_path / MANIFEST).write_text(text)
    with pytest.raises(PackageError, match=reason):
        load_package(tmp_path)
