"""``analyze``: each decision of a seat re-searched from what it knew, and the costly ones marked.

For every decision of the seat in a record (``play.decisions``), the reference searches the
seat's view alone (its information set: the worlds it searches are dealt by
``worlds.RoundWorlds`` from what the seat had seen, never from the hidden cards), trying the
move played and every candidate of ``ismcts.candidates`` in the same worlds
(``IsmctsPolicy.evaluate``), with several seeds.  Each action gets the mean of its round
results and a standard error; the loss of the move played is the best action's value minus
its own, per world (paired: the luck of the deal cancels), with the larger of two errors:
the spread within the seeds' worlds and the spread between the seeds' means (the reference
disagreeing with itself).

Win probability: a round's result is +1, 0 or -1, and the next position depends only on who
won it (M4 reshuffles everything), so with ``W+``/``W-`` the chances to win the game from the
board after winning/losing this round, an action whose mean result is ``m`` wins the game
with probability ``W0 + m * (W+ - W-) / 2``, where ``W0 = (W+ + W-) / 2`` -- if, from the next
round on, each decisive round is an even coin (``board_win``: both players equally strong;
a tie replays the position).  So losses are in win-probability points of the whole game,
weighted by what the round is worth on the board.

Marks, from lichess's thresholds on its win chances (0.1/0.2/0.3 on a -1..1 scale): ``?!`` from
5 points, ``?`` from 10, ``??`` from 15, each only when the loss is also at least
``SIGNIFICANCE`` (2) standard errors, so the reference's own noise is never a mark.  A
decision's accuracy is lichess's published mapping of the win-percentage drop,
``103.1668 * exp(-0.04354 * loss) - 3.1669`` clamped to 0..100; the game's accuracy is their
plain mean over the decisions that had a choice (lichess weights its moves by volatility; we
do not).  A forfeit loses the game: its loss is the whole win chance of the best action.
"""

from __future__ import annotations

import enum
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, ClassVar
from urllib.parse import parse_qsl

from tacocat_arena.engine import Action, Card, Replace, Seat, SeatView, move_tacocat
from tacocat_arena.play.decisions import Answered, Decision, seat_decisions
from tacocat_arena.play.ismcts import IsmctsPolicy, candidates

#: How many standard errors a loss must pass to be marked.
SIGNIFICANCE = 2.0


class Mark(enum.Enum):
    """A costly decision, as chess annotates one."""

    INACCURACY = "?!"
    MISTAKE = "?"
    BLUNDER = "??"


#: Each mark's threshold, in win-probability points (lichess's 0.1/0.2/0.3 win chances).
MARK_FROM: tuple[tuple[Mark, float], ...] = (
    (Mark.BLUNDER, 15.0),
    (Mark.MISTAKE, 10.0),
    (Mark.INACCURACY, 5.0),
)


class ReferenceSpecError(ValueError):
    """A ``--reference`` spec that names no reference or gives it a bad option."""


@dataclass(frozen=True)
class Reference:
    """The strong reference: ISMCTS (``play.ismcts``) at ``iterations`` simulations per seed,
    ``seeds`` independent searches, each seeded from ``seed`` and the decision."""

    iterations: int = 6000
    seeds: int = 4
    uct: float = 0.7
    seed: int = 0

    #: Each option's range (inclusive).
    RANGES: ClassVar[dict[str, tuple[float, float]]] = {
        "iterations": (10, 1_000_000),
        "seeds": (1, 64),
        "uct": (0.0, 10.0),
    }

    @classmethod
    def parse(cls, spec: str | None) -> Reference:
        """``ismcts?iterations=N&seeds=K&uct=C&seed=S`` (every option optional)."""
        if spec is None or not spec.strip():
            return cls()
        name, _, query = spec.strip().partition("?")
        if name != "ismcts":
            raise ReferenceSpecError(
                f"reference {spec!r}: the only reference is ismcts (ismcts?iterations=N&seeds=K)"
            )
        known = [f.name for f in fields(cls)]
        values: dict[str, Any] = {}
        for key, text in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
            if key not in known:
                raise ReferenceSpecError(
                    f"reference {spec!r}: no option {key!r} (options: {', '.join(known)})"
                )
            kind = float if key == "uct" else int
            try:
                value = kind(text)
            except ValueError:
                what = "a number" if kind is float else "an integer"
                raise ReferenceSpecError(
                    f"reference {spec!r}: {key}={text!r} is not {what}"
                ) from None
            low, high = cls.RANGES.get(key, (0, 2**63 - 1))
            if not low <= value <= high or value != value:
                raise ReferenceSpecError(
                    f"reference {spec!r}: {key}={text} is out of range [{low:g}, {high:g}]"
                )
            values[key] = value
        return cls(**values)

    def __str__(self) -> str:
        return f"ismcts?iterations={self.iterations}&seeds={self.seeds}&uct={self.uct:g}" + (
            f"&seed={self.seed}" if self.seed else ""
        )


@dataclass(frozen=True)
class ActionValue:
    """One action's value for the seat: the mean round result and the game's win chance."""

    action: Action
    #: Mean of the round's results (+1 won, 0 tied, -1 lost) over every world of every seed.
    mean: float
    mean_se: float
    #: The game's win probability (percent) after this action (see the module's docstring).
    win: float
    win_se: float
    worlds: int


#: How the figure from the true deal is always labelled.
HINDSIGHT_LABEL = "with hindsight (the true deal, which the seat could not see)"


@dataclass(frozen=True)
class Hindsight:
    """A decision's figure *with hindsight*: the same actions tried in the one true deal (the
    opponent's hand and the draw pile as they were), which the seat did not know.  It says
    what would have been best had the cards been face up; it is never a mark, never in the
    accuracy, and always shown under ``HINDSIGHT_LABEL``."""

    best: Action
    win_best: float
    win_played: float
    loss: float
    loss_se: float

    def to_json(self) -> dict[str, Any]:
        return {
            "label": HINDSIGHT_LABEL,
            "best": str(self.best),
            "win_best": round(self.win_best, 2),
            "win_played": round(self.win_played, 2),
            "loss": round(self.loss, 2),
            "loss_se": round(self.loss_se, 2),
        }


@dataclass(frozen=True)
class DecisionAnalysis:
    """One decision: every action tried, the move played, its loss and its mark."""

    index: int
    round: int
    kind: str
    played: Action | None
    answered: Answered
    values: tuple[ActionValue, ...]
    best: Action | None
    #: The game's win probability (percent) after the best action, and after the move played.
    win_best: float
    win_played: float
    #: ``win_best - win_played`` in percentage points, and its standard error.
    loss: float
    loss_se: float
    mark: Mark | None
    #: lichess's accuracy of the move (percent); None for a forced move.
    accuracy: float | None
    #: The round's weight on the board: ``(W+ - W-) / 2`` in points per unit of mean result.
    stake: float
    forced: bool = False
    #: The figure from the true deal (``analyze --hindsight``), else None.
    hindsight: Hindsight | None = None

    def to_json(self) -> dict[str, Any]:
        """The decision as JSON-ready values (actions in their text form)."""
        shown = {
            "index": self.index,
            "round": self.round,
            "kind": self.kind,
            "played": None if self.played is None else str(self.played),
            "answered": self.answered.value,
            "best": None if self.best is None else str(self.best),
            "win_best": round(self.win_best, 2),
            "win_played": round(self.win_played, 2),
            "loss": round(self.loss, 2),
            "loss_se": round(self.loss_se, 2),
            "mark": None if self.mark is None else self.mark.value,
            "accuracy": None if self.accuracy is None else round(self.accuracy, 1),
            "stake": round(self.stake, 2),
            "forced": self.forced,
            "values": [
                {
                    "action": str(v.action),
                    "mean": round(v.mean, 4),
                    "mean_se": round(v.mean_se, 4),
                    "win": round(v.win, 2),
                    "win_se": round(v.win_se, 2),
                    "worlds": v.worlds,
                }
                for v in self.values
            ],
        }
        if self.hindsight is not None:
            shown["hindsight"] = self.hindsight.to_json()
        return shown


@dataclass(frozen=True)
class GameAnalysis:
    """Every decision of one seat of one game, analysed by one reference."""

    seat: Seat
    reference: Reference
    decisions: tuple[DecisionAnalysis, ...]
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def accuracy(self) -> float | None:
        """The mean accuracy of the decisions that had a choice (None when none had)."""
        scores = [d.accuracy for d in self.decisions if d.accuracy is not None]
        return sum(scores) / len(scores) if scores else None

    def costliest(self, count: int = 3) -> list[DecisionAnalysis]:
        """The ``count`` decisions of the largest loss that passes its noise (marked first)."""
        ranked = sorted(self.decisions, key=lambda d: (d.mark is None, -d.loss))
        return [d for d in ranked if d.loss > SIGNIFICANCE * d.loss_se and d.loss > 0][:count]

    def count(self, mark: Mark) -> int:
        """How many decisions carry ``mark``."""
        return sum(d.mark is mark for d in self.decisions)

    def to_json(self) -> dict[str, Any]:
        """The analysis as JSON-ready values."""
        accuracy = self.accuracy
        return {
            "seat": self.seat,
            "reference": str(self.reference),
            "accuracy": None if accuracy is None else round(accuracy, 1),
            "marks": {mark.value: self.count(mark) for mark in Mark},
            "costliest": [d.index for d in self.costliest()],
            "seconds": round(self.seconds, 1),
            **({"hindsight": self.hindsight_summary()} if self.has_hindsight else {}),
            "decisions": [d.to_json() for d in self.decisions],
        }

    @property
    def has_hindsight(self) -> bool:
        return any(d.hindsight is not None for d in self.decisions)

    def hindsight_summary(self) -> dict[str, Any]:
        """The game's figure with hindsight: the points its moves lost against the best move
        for the true deal, in all and on average, and how many differ from that best."""
        seen = [d.hindsight for d in self.decisions if d.hindsight is not None]
        lost = sum(h.loss for h in seen)
        return {
            "label": HINDSIGHT_LABEL,
            "decisions": len(seen),
            "loss_total": round(lost, 1),
            "loss_mean": round(lost / len(seen), 2) if seen else None,
            "other_best": sum(
                d.hindsight is not None and d.played is not None and d.hindsight.best != d.played
                for d in self.decisions
            ),
        }


# -- the board's worth of a round -------------------------------------------------------------
@lru_cache(maxsize=4096)
def board_win(tacocat: int, covered: tuple[bool, ...], seat: Seat) -> float:
    """``seat``'s chance to win the game from this board between rounds, if each decisive
    round from now on is an even coin (ties replay the position and change nothing)."""
    last = len(covered) - 1
    if tacocat in (0, last):
        return 1.0 if (tacocat == 0) == (seat == 0) else 0.0
    won = move_tacocat(tacocat, covered, seat)
    lost = move_tacocat(tacocat, covered, 1 - seat)
    return 0.5 * board_win(*won, seat) + 0.5 * board_win(*lost, seat)


def round_stakes(view: SeatView) -> tuple[float, float]:
    """``(W0, stake)`` in percent for the view's round: the game's win chance at a mean round
    result of 0, and what one unit of mean result adds to it."""
    covered = tuple(view.covered)
    won = board_win(*move_tacocat(view.tacocat, covered, view.seat), view.seat)
    lost = board_win(*move_tacocat(view.tacocat, covered, 1 - view.seat), view.seat)
    return 50.0 * (won + lost), 50.0 * (won - lost)


# -- one decision -----------------------------------------------------------------------------
def accuracy_of(loss: float) -> float:
    """lichess's accuracy of a move that drops the win percentage by ``loss`` points."""
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * max(0.0, loss)) - 3.1669))


def mark_of(loss: float, loss_se: float) -> Mark | None:
    """The mark a loss earns: past its threshold and ``SIGNIFICANCE`` standard errors."""
    if loss < SIGNIFICANCE * loss_se:
        return None
    for mark, threshold in MARK_FROM:
        if loss >= threshold:
            return mark
    return None


def _normal(action: Action) -> Action:
    """A replace by its cards in order (the record keeps them as the bot sent them)."""
    return Replace(tuple(sorted(action.cards))) if isinstance(action, Replace) else action


def analyze_view(
    view: SeatView,
    played: Action | None,
    reference: Reference,
    *,
    index: int = 0,
    answered: Answered = Answered.OWN,
    known: tuple[tuple[Card, ...], tuple[Card, ...]] | None = None,
) -> DecisionAnalysis:
    """Analyse one decision from ``view`` alone; ``played`` None is a forfeit (no move).
    ``known``, the true hidden cards (the opponent's sorted hand, the draw pile), adds the
    figure *with hindsight* (``Hindsight``), searched apart: the analysis itself never
    reads them."""
    if view.kind is None:
        raise ValueError("no decision is pending for this view")
    options = list(candidates(view))
    if played is not None:
        played = _normal(played)
        if played not in options:
            options.append(played)
    base, stake = round_stakes(view)
    if len(options) == 1:
        only = ActionValue(options[0], 0.0, 0.0, base, 0.0, 0)
        return DecisionAnalysis(
            index, view.round, view.kind.value, played, answered, (only,), options[0],
            base, base, 0.0, 0.0, None, None, stake, forced=True,
        )  # fmt: skip
    per_seed, values = _searched(view, options, reference, index, base, stake)
    best, win_played, loss, loss_se = _judged(per_seed, values, played, stake)
    hindsight = None
    if known is not None:
        true_seeds, true_values = _searched(view, options, reference, index, base, stake, known)
        true_best, true_played, true_loss, true_se = _judged(true_seeds, true_values, played, stake)
        hindsight = Hindsight(true_best.action, true_best.win, true_played, true_loss, true_se)
    return DecisionAnalysis(
        index=index,
        round=view.round,
        kind=view.kind.value,
        played=played,
        answered=answered,
        values=tuple(sorted(values, key=lambda v: -v.mean)),
        best=best.action,
        win_best=best.win,
        win_played=win_played,
        loss=loss,
        loss_se=loss_se,
        mark=mark_of(loss, loss_se),
        accuracy=accuracy_of(loss),
        stake=stake,
        hindsight=hindsight,
    )


def _searched(
    view: SeatView,
    options: list[Action],
    reference: Reference,
    index: int,
    base: float,
    stake: float,
    known: tuple[tuple[Card, ...], tuple[Card, ...]] | None = None,
) -> tuple[list[dict[Action, list[float]]], tuple[ActionValue, ...]]:
    """Every option tried by the reference's search, once per seed (each seed's results per
    action, and each action's value over them): from the seat's information set, or with
    ``known`` in the true deal alone (the figure with hindsight, on seeds of its own)."""
    tag = "" if known is None else ":hindsight"
    per_seed: list[dict[Action, list[float]]] = []
    for seed_index in range(reference.seeds):
        rng = random.Random(f"{reference.seed}:{index}:{seed_index}{tag}")
        policy = IsmctsPolicy(reference.iterations, uct=reference.uct, rng=rng)
        per_seed.append(policy.evaluate(view, options, known))
    values = tuple(
        _value(action, [seed[action] for seed in per_seed], base, stake) for action in options
    )
    return per_seed, values


def _judged(
    per_seed: list[dict[Action, list[float]]],
    values: Sequence[ActionValue],
    played: Action | None,
    stake: float,
) -> tuple[ActionValue, float, float, float]:
    """The best action, the played one's win chance, and its loss with its error."""
    best = max(values, key=lambda v: v.mean)
    if played is None:
        return best, 0.0, best.win, best.win_se
    mean, se = _paired_loss(per_seed, best.action, played)
    return best, next(v.win for v in values if v.action == played), mean * stake, se * stake


def _value(action: Action, seeds: list[list[float]], base: float, stake: float) -> ActionValue:
    mean, se = _mean_se(seeds)
    return ActionValue(action, mean, se, base + mean * stake, se * stake, sum(map(len, seeds)))


def _paired_loss(
    per_seed: list[dict[Action, list[float]]], best: Action, played: Action
) -> tuple[float, float]:
    """The best action's results minus the played one's, world by world, per seed."""
    return _mean_se([[b - p for b, p in zip(s[best], s[played], strict=True)] for s in per_seed])


def _mean_se(seeds: Sequence[Sequence[float]]) -> tuple[float, float]:
    """The mean over every world of every seed, and its standard error: the larger of the
    within-seed error (the worlds' spread) and the between-seed error (the seeds' means)."""
    means = [sum(values) / len(values) for values in seeds]
    count = sum(len(values) for values in seeds)
    mean = sum(sum(values) for values in seeds) / count
    squares = sum((v - mean) ** 2 for values in seeds for v in values)
    within = math.sqrt(squares / max(1, count - 1) / count)
    between = 0.0
    if len(means) > 1:
        spread = sum((m - mean) ** 2 for m in means) / (len(means) - 1)
        between = math.sqrt(spread / len(means))
    return mean, max(within, between)


# -- a game -----------------------------------------------------------------------------------
def analyze_decisions(
    decisions: Sequence[Decision],
    reference: Reference,
    *,
    progress: Callable[[DecisionAnalysis], None] | None = None,
    hindsight: bool = False,
) -> tuple[DecisionAnalysis, ...]:
    """Each decision analysed in turn (``progress`` is shown each as it is done);
    ``hindsight`` adds each one's figure with the true deal (``true_deal``)."""
    done: list[DecisionAnalysis] = []
    for decision in decisions:
        analysed = analyze_view(
            decision.view,
            decision.action,
            reference,
            index=decision.index,
            answered=decision.answered,
            known=true_deal(decision) if hindsight else None,
        )
        done.append(analysed)
        if progress is not None:
            progress(analysed)
    return tuple(done)


def true_deal(decision: Decision) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    """The hidden cards at a decision as they were: the opponent's sorted hand and the draw
    pile (the record's, for the figure with hindsight alone)."""
    game = decision.game
    return tuple(sorted(game.hands[1 - decision.seat])), tuple(game.draw_pile)


def analyze_record(
    record: Mapping[str, Any],
    seat: Seat,
    reference: Reference | None = None,
    *,
    progress: Callable[[DecisionAnalysis], None] | None = None,
    hindsight: bool = False,
) -> GameAnalysis:
    """Every decision ``seat`` took in ``record``, analysed (RecordError if the record does
    not re-verify); ``hindsight``: each with its figure from the true deal too."""
    reference = reference or Reference()
    started = time.perf_counter()
    decisions = seat_decisions(record, seat)
    analysed = analyze_decisions(decisions, reference, progress=progress, hindsight=hindsight)
    notes = []
    substituted = sum(d.answered is Answered.SUBSTITUTED for d in decisions)
    if substituted:
        notes.append(
            f"{substituted} decisions were the referee's default moves, analysed as played"
        )
    return GameAnalysis(seat, reference, analysed, time.perf_counter() - started, tuple(notes))


__all__ = [
    "MARK_FROM",
    "SIGNIFICANCE",
    "ActionValue",
    "DecisionAnalysis",
    "GameAnalysis",
    "HINDSIGHT_LABEL",
    "Hindsight",
    "Mark",
    "Reference",
    "ReferenceSpecError",
    "accuracy_of",
    "analyze_decisions",
    "analyze_record",
    "analyze_view",
    "board_win",
    "mark_of",
    "round_stakes",
    "true_deal",
]
