"""A bot's start imports only what it uses (issue 41): the SDK of a bot that plays on a
server loads no record module, JSON or TOML reader, and no local game loop, nor the asyncio
half of grpcio and the pure-Python messages of protobuf, which it does not use
(``tacocat_bot._deferred``); every name the engine and the SDK export still resolves,
lazily, and the deferred modules still work when a bot uses them."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tacocat_arena.engine as engine
import tacocat_bot

#: What a bot connected to a referee never needs at start (the deferred modules' objects are
#: there, not executed: what they import comes only with their first use; ``ast`` and
#: ``dis`` come with inspect, which the engine's dataclasses would execute had the bot
#: imported the engine before the SDK: the example bots import the SDK first).
NOT_AT_START = ("tacocat_arena.engine.record", "tacocat_bot.local", "tacocat_arena.play.local",
                "tomllib", "json", "asyncio.events", "ssl", "grpc.aio._channel",
                "google.protobuf.text_format", "pickle", "ast", "dis")  # fmt: skip


def test_every_engine_name_resolves_to_its_submodule() -> None:
    for name in engine.__all__:
        value = getattr(engine, name)
        assert value is not None, name
    assert set(engine.__all__) <= set(dir(engine))
    with pytest.raises(AttributeError, match="no_such_name"):
        engine.no_such_name  # noqa: B018


def test_sdk_public_names_resolve() -> None:
    for name in tacocat_bot.__all__:
        assert getattr(tacocat_bot, name) is not None, name
    from tacocat_bot.local import play_local

    assert tacocat_bot.play_local is play_local
    with pytest.raises(AttributeError, match="nothing_here"):
        tacocat_bot.nothing_here  # noqa: B018


@pytest.mark.slow
@pytest.mark.parametrize(
    "module",
    ["example_bots.random_bot", "example_bots.greedy_bot", "example_bots.search_bot",
     "example_bots.__main__"],
)  # fmt: skip
def test_a_bot_start_imports_no_engine_records(module: str) -> None:
    code = f"import sys, {module}; print(' '.join(m for m in {NOT_AT_START!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip() == "", f"{module} imported at start: {out.stdout.strip()}"


def test_the_engines_two_lists_of_names_agree() -> None:
    """``engine/__init__.py`` names each export three times, for type checkers (its
    ``TYPE_CHECKING`` imports), for ``__getattr__`` (``_WHERE``) and in ``__all__``: the
    same names, each from the same submodule, so none of the lists can drift."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(engine.__file__).read_text())
    guarded = next(
        node for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
    )  # fmt: skip
    imported = {
        alias.name: statement.module.rsplit(".", 1)[1]
        for statement in guarded.body
        if isinstance(statement, ast.ImportFrom) and statement.module
        for alias in statement.names
    }
    assert imported == engine._WHERE
    assert sorted(engine.__all__) == sorted(engine._WHERE)


@pytest.mark.slow
def test_the_clis_help_imports_click_and_the_command_modules_only() -> None:
    """``tacocat-arena --help`` (under 0.25 s: issue 41) loads no gRPC, protobuf, web
    server, engine or bench module: each command imports what it runs inside itself."""
    code = (
        "import sys\nfrom tacocat_arena.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(done.stderr.split())
    assert "Usage:" in done.stdout
    heavy = ("grpc", "google.protobuf", "starlette", "uvicorn", "tacocat_arena.engine",
             "tacocat_arena.bench.arena", "tacocat_bot", "rich")  # fmt: skip
    assert not [name for name in heavy if name in loaded], sorted(loaded)


#: A bot that uses the deferred modules itself, after the SDK deferred them: every way in.
USES_DEFERRED = """
import sys, types
import tacocat_bot, grpc
import google.protobuf.internal
for name in tacocat_bot._deferred.DEFERRED:
    assert type(sys.modules[name[0]]) is not types.ModuleType, name[0] + " executed at start"
from google.protobuf.internal import python_message
assert google.protobuf.internal.python_message is python_message
assert callable(python_message._AttachFieldHelpers)
import asyncio
from asyncio import Queue
import asyncio.subprocess
from grpc import aio

async def main():
    channel = aio.insecure_channel("127.0.0.1:9")
    await channel.close()
    queue = Queue()
    await queue.put(3)
    return await queue.get()

assert asyncio.run(main()) == 3
import dataclasses, inspect

@dataclasses.dataclass(frozen=True)
class NoDocstring:
    value: int

assert NoDocstring.__doc__ == "NoDocstring(value: int)", NoDocstring.__doc__
assert list(inspect.signature(main).parameters) == []
for name in tacocat_bot._deferred.DEFERRED:
    assert type(sys.modules[name[0]]) is types.ModuleType, name[0]
assert grpc.aio is aio is sys.modules["grpc.aio"] and asyncio.subprocess.PIPE
print("ok")
"""


@pytest.mark.slow
def test_the_deferred_modules_work_when_a_bot_uses_them() -> None:
    out = subprocess.run([sys.executable, "-c", USES_DEFERRED], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert (out.returncode, out.stdout.strip()) == (0, "ok"), out.stderr
