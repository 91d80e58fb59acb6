"""tacocat-arena: a tournament server for bots that play Tacocat Spelled Backwards.

Rooms, each importing only rooms before it (docs/architecture.md has the map, with what each
may import; tests/test_architecture.py checks it):

- ``engine``: the pure rules engine (RULES-SPEC.md); ``play``: reference policies, local play;
- ``protocol``: engine values <-> protobuf (``wire.py``);
- ``referee``: the gRPC referee (sessions, clocks, identities, the failure policy);
- ``launch``: starting bots (specs, builtins, processes, the sandbox); ``stats``: standings,
  Elo, pairs, SPRT; ``tournament``: config, schedule, runner, executors, storage, verify;
  ``check``: the conformance checks;
- ``report``: result files and pages; ``arena``: the long-running ladder; ``web``: its page;
- ``bench``: the figures of ``tacocat-arena bench``; ``envs``: learning-library adapters;
- ``cli``: the ``tacocat-arena`` command, the only package importing Click.
"""

__version__ = "0.1.0"
