#!/usr/bin/env python3
"""Regenerate the Python code of the protocol (``proto/``) with grpcio-tools.

Usage (from anywhere; paths are relative to this file)::

    python proto/generate.py            # write server/tacocat/v1/arena_pb2{.py,.pyi,_grpc.py}
                                        # and the examples' copies (example_bots/*/proto)
    python proto/generate.py --check    # exit 1 if the committed code is out of date

It runs, for every ``.proto`` under ``proto/``, the equivalent of::

    python -m grpc_tools.protoc -I proto --python_out=server --pyi_out=server \\
        --grpc_python_out=server proto/tacocat/v1/arena.proto

so ``proto/tacocat/v1/arena.proto`` becomes the module ``tacocat.v1.arena_pb2`` (the import path
mirrors the proto path; nothing is patched afterwards). Put ``server`` on ``sys.path``
(``PYTHONPATH=server``) to import it. The generated files are committed; the test
``tests/test_proto_generated.py`` fails when they differ from a fresh generation, so edit the
.proto, run this script, and commit both. The output depends on the grpcio-tools version: use
the one pinned for the project.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

PROTO_ROOT = Path(__file__).resolve().parent
REPO_ROOT = PROTO_ROOT.parent
DEFAULT_OUT_DIR = REPO_ROOT / "server"

#: The example bots' own copies of the .proto files (a real file, not a link: a folder copied
#: elsewhere as its header says, ``cp -r example_bots/node mybot``, must still find it).
EXAMPLE_COPIES = (
    REPO_ROOT / "example_bots" / "node" / "proto",
    REPO_ROOT / "example_bots" / "cpp" / "proto",
)

#: The suffixes protoc writes for one ``name.proto``: ``name_pb2.py``, ``.pyi``, ``_grpc.py``.
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")


def proto_files(proto_root: Path = PROTO_ROOT) -> list[Path]:
    """Every .proto under ``proto_root``, sorted (paths relative to ``proto_root``)."""
    return sorted(p.relative_to(proto_root) for p in proto_root.rglob("*.proto"))


def expected_outputs(out_dir: Path, proto_root: Path = PROTO_ROOT) -> list[Path]:
    """The files ``generate(out_dir)`` writes, sorted."""
    outputs = []
    for proto in proto_files(proto_root):
        stem = proto.with_suffix("")
        for suffix in GENERATED_SUFFIXES:
            outputs.append(out_dir / stem.parent / (stem.name + suffix))
    return sorted(outputs)


def _ensure_packages(out_dir: Path, proto_root: Path) -> None:
    """Write an empty ``__init__.py`` in every generated package directory that lacks one."""
    for proto in proto_files(proto_root):
        package = out_dir
        for part in proto.parent.parts:
            package = package / part
            init = package / "__init__.py"
            if not init.exists():
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_bytes(b"")


def generate(out_dir: Path, proto_root: Path = PROTO_ROOT) -> list[Path]:
    """Generate the Python code of every .proto under ``proto_root`` into ``out_dir``.

    Returns the generated ``*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py`` files, sorted (the
    ``__init__.py`` files it creates when missing are not listed). Raises RuntimeError with
    protoc's output when protoc fails.
    """
    out_dir = Path(out_dir).resolve()
    proto_root = Path(proto_root).resolve()
    protos = proto_files(proto_root)
    if not protos:
        raise RuntimeError(f"no .proto files under {proto_root}")
    out_dir.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"--proto_path={proto_root}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *(str(proto_root / proto) for proto in protos),
    ]
    # Run protoc in a child process: grpc_tools.protoc.main keeps state between calls and
    # would print into this process's streams.
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(
            f"protoc failed (exit status {completed.returncode}):\n"
            f"{completed.stdout}{completed.stderr}"
        )
    _ensure_packages(out_dir, proto_root)
    outputs = expected_outputs(out_dir, proto_root)
    missing = [str(path) for path in outputs if not path.is_file()]
    if missing:
        raise RuntimeError("protoc did not write: " + ", ".join(missing))
    return outputs


def stale_files(out_dir: Path = DEFAULT_OUT_DIR, proto_root: Path = PROTO_ROOT) -> list[str]:
    """Generate afresh into a temporary directory and compare with ``out_dir``.

    Returns a description of every difference (empty when up to date): a generated file that
    is missing or differs in ``out_dir``, or a generated-looking file in ``out_dir`` whose
    .proto no longer exists.
    """
    out_dir = Path(out_dir).resolve()
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh_root = Path(tmp)
        fresh = generate(fresh_root, proto_root)
        wanted = set()
        for path in fresh:
            relative = path.relative_to(fresh_root)
            wanted.add(relative)
            committed = out_dir / relative
            if not committed.is_file():
                problems.append(f"{committed}: missing")
            elif committed.read_bytes() != path.read_bytes():
                problems.append(f"{committed}: differs from a fresh generation")
        for proto in proto_files(proto_root):
            package_dir = out_dir / proto.parent
            for path in sorted(package_dir.glob("*_pb2*.py*")):
                if path.relative_to(out_dir) not in wanted and path.suffix in (".py", ".pyi"):
                    problems.append(f"{path}: generated file without a .proto")
    return problems


def copy_examples(proto_root: Path = PROTO_ROOT) -> list[Path]:
    """Write every .proto into each example's ``proto`` folder; the files written."""
    written = []
    for folder in EXAMPLE_COPIES:
        for proto in proto_files(proto_root):
            target = folder / proto
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((proto_root / proto).read_bytes())
            written.append(target)
    return written


def stale_copies(proto_root: Path = PROTO_ROOT) -> list[str]:
    """Each example's copy of a .proto that is missing, a link, or differs from the source."""
    problems = []
    for folder in EXAMPLE_COPIES:
        if folder.is_symlink():
            problems.append(f"{folder}: a link (a copied example loses it): a folder of copies")
            continue
        for proto in proto_files(proto_root):
            copy = folder / proto
            if not copy.is_file() or copy.read_bytes() != (proto_root / proto).read_bytes():
                problems.append(f"{copy}: missing or not a copy of {proto_root / proto}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=DEFAULT_OUT_DIR,
        help=f"where the packages go (default: {DEFAULT_OUT_DIR})",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the code in --out-dir is not what generation gives",
    )
    args = parser.parse_args(argv)
    if args.check:
        problems = stale_files(args.out_dir) + stale_copies()
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print("run: python proto/generate.py", file=sys.stderr)
            return 1
        print("generated code is up to date")
        return 0
    for path in [*generate(args.out_dir), *copy_examples()]:
        try:
            shown = path.relative_to(REPO_ROOT)
        except ValueError:
            shown = path
        print(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
