"""A hosted batch at the default size keeps the twins' rule (issue 41): the batch the arena
plans (``Hosting._batch``) is played by ``run``'s runner in two phases, every deal's first
game (the A instances) before any second one (the B instances, A stopped), each deal once in
each phase; so a batch of eight deals is still four process starts."""

from __future__ import annotations

from types import SimpleNamespace

from tacocat_arena.arena.hosted import HostedSettings, Hosting
from tacocat_arena.tournament.runner import twin_phases


def test_a_default_batch_plays_all_first_games_before_any_twin() -> None:
    pairs = HostedSettings().pairs_per_batch
    fake = SimpleNamespace(arena=SimpleNamespace(seed=7, secret="s"))
    batch = Hosting._batch(fake, "alice@v1", "bob@v2", range(40, 40 + pairs))  # type: ignore[arg-type]
    assert len(batch.games) == 2 * pairs
    phases = twin_phases(batch.games, twins=True)
    assert len(phases) == 2, "one phase of A instances, one of B instances"
    first, second = phases
    assert not any(game.twin for game in first) and all(game.twin for game in second)
    assert (
        sorted(g.deal for g in first)
        == sorted(g.deal for g in second)
        == list(range(40, 40 + pairs))
    )
    by_deal = sorted(first, key=lambda g: g.deal), sorted(second, key=lambda g: g.deal)
    for a, b in zip(*by_deal, strict=True):
        assert a.seed == b.seed and a.seats == b.seats[::-1]  # one deal, seats swapped
