"""tacocat-arena: a tournament server for bots that play Tacocat Spelled Backwards.

Layers, each pointing only at the ones before it:

- ``tacocat_arena.engine``: the pure rules engine (RULES-SPEC.md);
- ``tacocat_arena.referee``: the gRPC referee (protocol <-> engine, clocks, identities);
- ``tacocat_arena.tournament``: scheduling, storage, statistics and reports;
- ``tacocat_arena.cli``: the ``tacocat-arena`` command.
"""

__version__ = "0.1.0"
