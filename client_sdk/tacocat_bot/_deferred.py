"""What a bot's start need not execute: modules its libraries import but a bot never uses,
put in ``sys.modules`` unexecuted, to run on first use.

A bot speaks to its referee over grpcio's synchronous API and protobuf's C (upb) messages,
yet importing them executes more:

- ``asyncio``: grpcio's extension module imports it, and with it ``ssl`` (OpenSSL's
  initialisation), ``socket``, ``subprocess``, ``concurrent.futures``;
- ``grpc.aio``: ``grpc/__init__.py`` ends with ``from grpc import aio`` (the asyncio call
  and channel classes, ``typing_extensions``);
- ``google.protobuf.internal.python_message``: protobuf's pure-Python message classes,
  imported by its descriptor pool even where the C messages are in use (and with them the
  text format, the pure-Python decoder and containers, ``pickle``).
- ``inspect``: grpcio's extension imports it (and with it ``ast``, ``dis``); a dataclass
  reads it only when it has no docstring, to write one (the SDK's and the engine's have).

A synchronous channel and upb messages never touch them, yet they were a third of a Python
bot's start (docs/submissions.md, "A Python bot's start").  Each is deferred only when nothing
has imported its package yet, so a process that already uses them (the arena, a test that
runs a server) is left as it is.  An import of a deferred module (grpc's, or the bot's own)
hands out the module object at once; its first attribute read (``asyncio.run``, ``from
asyncio import Queue``, ``import asyncio.events``) executes the real module into that same
object, which from then on is an ordinary module.  A bot can use them all as before, and
pays for them when it does.  The standard library's ``LazyLoader`` does not do here: Python
3.11's import statement reads a module's ``__spec__`` to see whether it is still
initialising, and that read alone makes a ``LazyLoader`` module execute.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
import types

#: Held while a deferred module executes: another thread's first read waits for the whole
#: module, as it would wait on the import lock of a module being imported.
_LOCK = threading.RLock()
#: The deferred modules executing now: their own reads while they execute pass through.
_RUNNING: set[str] = set()
#: Read without executing the module: the import system's own questions about it.
_PASSIVE = frozenset({"__spec__", "__name__", "__class__"})

#: Each deferred module and the package that must not be imported yet for it to be deferred.
DEFERRED = (
    ("asyncio", "grpc"),
    ("grpc.aio", "grpc"),
    ("google.protobuf.internal.python_message", "google.protobuf"),
    ("inspect", "grpc"),
)
# Not deferrable: logging (grpcio's extension calls it as it loads) and protobuf's
# well_known_types (its message builder reads it for every message class).


class _Deferred(types.ModuleType):
    """A module not executed yet: the first read of any other attribute executes it."""

    def __getattribute__(self, attr: str) -> object:
        read = types.ModuleType.__getattribute__  # not super(): the class changes below
        if attr not in _PASSIVE:
            with _LOCK:
                spec = read(self, "__spec__")
                if type(self) is _Deferred and spec.name not in _RUNNING:
                    _RUNNING.add(spec.name)
                    try:
                        spec.loader.exec_module(self)
                    except BaseException:
                        sys.modules.pop(spec.name, None)
                        raise
                    finally:
                        _RUNNING.discard(spec.name)
                        self.__class__ = types.ModuleType
        return read(self, attr)


def _find(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of ``name``, found without importing its packages (only the top one's
    folders are looked up, which imports nothing)."""
    top, *rest = name.split(".")
    if top in sys.modules:  # a namespace package (``google``) may be
        spec = getattr(sys.modules[top], "__spec__", None)
    else:
        spec = importlib.util.find_spec(top)
    for part in rest:
        if spec is None or spec.submodule_search_locations is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(
            f"{spec.name}.{part}", list(spec.submodule_search_locations)
        )
    return spec


def defer(name: str) -> bool:
    """Put ``name`` in ``sys.modules`` unexecuted; False where it is there already or is no
    plain source or bytecode module (nothing unusual is deferred).  A package or a module."""
    if name in sys.modules:
        return False
    spec = _find(name)
    if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
        return False
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _Deferred
    sys.modules[name] = module
    return True


def defer_unused() -> None:
    """Defer ``DEFERRED``'s modules whose packages nothing has imported yet, then import
    their packages (grpc, which the SDK imports anyway, and protobuf's two small package
    modules) and bind each deferred submodule to its package: an import of a module already
    in ``sys.modules`` binds no attribute of its package, and ``grpc.aio.Channel`` must
    still work after ``import grpc``."""
    deferred = [name for name, package in DEFERRED if package not in sys.modules and defer(name)]
    for name in deferred:
        parent, _, child = name.rpartition(".")
        if parent:
            package = importlib.import_module(parent)
            if child not in vars(package):
                setattr(package, child, sys.modules[name])


defer_unused()
