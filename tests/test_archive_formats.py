"""The archive formats a package may come in are the ones docs/submissions.md lists (issue 34,
point 11): each is accepted by ``unpack``, and another is refused naming what is accepted."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from tacocat_arena.launch.package import MANIFEST, PackageError, load_package, unpack

DOCS = Path(__file__).resolve().parent.parent / "docs" / "submissions.md"
_MANIFEST = b'command = "python bot.py"\n'


def _tar(mode: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:
        for name, data in ((MANIFEST, _MANIFEST), ("bot.py", b"print(1)\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr(MANIFEST, _MANIFEST)
        zipped.writestr("bot.py", b"print(1)\n")
    return buffer.getvalue()


FORMATS = {
    ".zip": _zip,
    ".tar": lambda: _tar("w"),
    ".tar.gz": lambda: _tar("w:gz"),
    ".tgz": lambda: _tar("w:gz"),
    ".tar.bz2": lambda: _tar("w:bz2"),
    ".tar.xz": lambda: _tar("w:xz"),
}


@pytest.mark.parametrize("suffix", sorted(FORMATS))
def test_every_documented_format_is_accepted(tmp_path: Path, suffix: str) -> None:
    assert f"`{suffix}`" in DOCS.read_text(encoding="utf-8")
    archive = tmp_path / f"package{suffix}"
    archive.write_bytes(FORMATS[suffix]())
    unpack(archive, tmp_path / "out")
    assert load_package(tmp_path / "out").command == "python bot.py"


def test_another_format_is_refused_naming_what_is(tmp_path: Path) -> None:
    archive = tmp_path / "package.7z"
    archive.write_bytes(b"7z\xbc\xaf\x27\x1c" + bytes(64))
    with pytest.raises(PackageError, match="not a readable archive"):
        unpack(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
