"""Pair statistics and SPRT results as JSON values and as a terminal table.

Plain functions of ``PairStats`` and ``SprtState`` so that every output (results.json, the
terminal, report pages) shows the same figures under the same names.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from tacocat_arena.stats.pairs import PAIR_POINTS, PairStats
from tacocat_arena.stats.sprt import SprtState

PENTANOMIAL_LABELS = ("0", "0.5", "1", "1.5", "2")
"""Column names of the five pair outcomes: A's points of 2 in a pair."""


def pairing_dict(stats: PairStats) -> dict[str, object]:
    """One pairing for results.json: records, the pentanomial and the estimate (or nulls)."""
    found = stats.estimate
    return {
        "a": stats.a,
        "b": stats.b,
        "games": stats.games,
        "wins": stats.wins,
        "losses": stats.losses,
        "draws": stats.draws,
        "pairs": stats.pentanomial.pairs,
        "pentanomial": dict(zip(PENTANOMIAL_LABELS, stats.pentanomial.counts, strict=True)),
        "unpaired_games": stats.unpaired,
        "score": None if found is None else found.score,
        "elo": None if found is None else found.elo,
        "elo_low": None if found is None else found.elo_low,
        "elo_high": None if found is None else found.elo_high,
        "elo_err": None if found is None else found.err,
        "los": None if found is None else found.los,
        "nelo": None if found is None else found.nelo,
    }


def sprt_dict(state: SprtState) -> dict[str, object]:
    """The SPRT's design and outcome for results.json."""
    test = state.sprt
    return {
        "elo0": test.elo0,
        "elo1": test.elo1,
        "alpha": test.alpha,
        "beta": test.beta,
        "lower": test.lower,
        "upper": test.upper,
        "llr": state.llr,
        "pairs": state.pairs,
        "pentanomial": dict(zip(PENTANOMIAL_LABELS, state.pentanomial.counts, strict=True)),
        "decision": state.decision.value,
        "summary": state.summary(),
    }


def sprt_closing(state: SprtState, pairings: Sequence[PairStats]) -> str:
    """The SPRT's closing line, saying what the tables count besides: the test stops at its
    decision, while the games in flight then still finish and are counted in the tables
    (and their pairs), so both figures are given, and how they differ."""
    line = state.summary()
    pairs = sum(p.pentanomial.pairs for p in pairings)
    games = sum(p.games for p in pairings)
    unpaired = sum(p.unpaired for p in pairings)
    if pairs == state.pairs and not unpaired:
        return f"{line} ({games} games, as in the tables)"
    after = pairs - state.pairs
    return (
        f"{line} ({2 * state.pairs} games); the tables count every finished game: {pairs} "
        f"pairs and {games} games, as {after} more pair{'s' if after != 1 else ''}"
        + (f" and {unpaired} unpaired game{'s' if unpaired != 1 else ''}" if unpaired else "")
        + " finished after the decision, in flight"
    )


def _estimate_cells(stats: PairStats) -> list[str]:
    found = stats.estimate
    if found is None:
        return ["—", "—", "—"]
    return [f"{found.elo:+.1f}", f"{found.err:.1f}", f"{found.los:.1%}"]


PAIRINGS_LEGEND = (
    "A pair is one deal played twice, seats swapped. W-L-D: A's games against B. 0 to 2: "
    "how many pairs A scored 0, 0.5, 1, 1.5 or 2 points in. Elo A-B ±95%: A's rating above "
    "B's from the pairs, with its 95% interval. LOS: how likely A is the stronger."
)
"""The key to the terminal pairings table's short headers."""


def render_pairings(stats: Sequence[PairStats], *, title: str | None = "Pairs") -> Table:
    """The pairings as a rich table: W-L-D, the five pair outcomes, Elo ± and LOS of A,
    with a legend of those short headers."""
    table = Table(title=title, caption=PAIRINGS_LEGEND, caption_justify="left")
    for header in ("A", "B", "W-L-D", *(f"{p:g}" for p in PAIR_POINTS), "Elo A-B", "±95%", "LOS"):
        table.add_column(header, justify="left" if header in ("A", "B") else "right")
    for row in stats:
        record = f"{row.wins}-{row.losses}-{row.draws}"
        counts = [str(c) for c in row.pentanomial.counts]
        table.add_row(row.a, row.b, record, *counts, *_estimate_cells(row))
    return table
