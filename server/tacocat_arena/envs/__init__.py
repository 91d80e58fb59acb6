"""Adapters of the game to the learning libraries: OpenSpiel, PettingZoo and Gymnasium.

Each adapter is its own module, imported only by whoever wants it (an optional extra each):
``import tacocat_arena.envs.openspiel`` registers the OpenSpiel game ``python_tacocat``,
``tacocat_arena.envs.pettingzoo.env()`` builds the PettingZoo AEC environment, and
``import tacocat_arena.envs.gymnasium`` registers ``tacocat_arena/Tacocat-v0``.  They share the
flat action space (``codec``), the observation features (``features``) and the step-by-step
game (``steps``), which hold no rule of their own: legality comes from the engine's ``legal``
functions and what a seat sees from ``engine.view.build_view``.  Nothing else in the package
imports this one.  See docs/envs.md.
"""
