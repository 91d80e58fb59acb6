"""The checks, in the order they run: each puts the bot in one situation and judges it.

Every check returns a short account of what the bot did (shown when it passes) or raises
``CheckFailed`` with what was expected and what came back.  Positions are built with
``Game.from_position`` on the default ruleset (7 spaces, hand sizes 4 5 6 7 6 5 4, seat 1's
arrow on spaces 1-3, both on the centre, seat 0's on 5-7), so each names the rule it tests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.check.link import CHECK_LOOK, BotLink, Look
from tacocat_arena.check.script import CheckFailed, Opponent, ScriptedGame
from tacocat_arena.engine import (
    DEFAULT_RULESET,
    Action,
    Attack,
    DecisionKind,
    Defend,
    Duel,
    Game,
    Replace,
    Seat,
    SeatView,
    build_view,
)
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy

#: Cards to draw from in replacement positions (more than any replacement can take).
_DRAW_PILE = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 5, 6, 7, 8)


@dataclass
class Context:
    """What the checks share: the bot's stream, the clock, and a source of game ids."""

    link: BotLink
    allowance_ms: int
    look: Look = CHECK_LOOK
    games: int = 0
    #: Every game started, so that the runner can end those a failed check left open.
    started: list[ScriptedGame] = field(default_factory=list)

    def new_game(
        self,
        game: Game,
        seat: Seat,
        opponent: Opponent | None = None,
        *,
        failure_policy: pb.FailurePolicy = pb.FAILURE_POLICY_FORFEIT,
    ) -> ScriptedGame:
        self.games += 1
        policy = RandomPolicy(random.Random(self.games))
        scripted = ScriptedGame(
            self.link,
            self.look.game_id(self.games),
            game,
            seat,
            opponent or (lambda view, _: policy.act(view)),
            allowance_ms=self.allowance_ms,
            failure_policy=failure_policy,
            look=self.look,
            match_info=self.look.match(self.games),
        )
        self.started.append(scripted)
        return scripted

    async def end_open_games(self) -> None:
        """Abort every game a check left without its GameEnd."""
        for scripted in self.started:
            if not scripted.ended:
                await scripted.abort("conformance check: this check failed; no contest")
        self.started.clear()


Check = Callable[[Context], Awaitable[str]]


async def _one_decision(ctx: Context, scripted: ScriptedGame, kind: DecisionKind) -> Action:
    """Start ``scripted``, play until the bot has answered a ``kind`` decision, abort it."""
    await scripted.start()
    while True:
        if scripted.game.outcome is not None:
            raise RuntimeError(f"{scripted.game_id} ended before the bot was asked {kind.value}")
        if scripted.game.decision_for(scripted.seat) is kind:
            break
        await scripted.step()
    # A simultaneous opponent commits after the bot, from the view it had before.
    other = 1 - scripted.seat
    their_view = build_view(scripted.game, other) if other in scripted.game.pending else None
    action = await scripted.ask()
    scripted.apply(action)
    if their_view is not None:
        scripted.game.apply(other, scripted.opponent(their_view, action))
    await scripted.abort()
    return action


# -- replace (R1-R4) ------------------------------------------------------------------------------
async def replace_first(ctx: Context) -> str:
    """R1: on a one-arrow space the arrow's seat replaces first, any number of cards."""
    game = Game.from_position(
        ((1, 4, 7, 9, 10, 12), (2, 3, 5, 6, 8, 11)), tacocat=5, draw_pile=_DRAW_PILE
    )
    action = await _one_decision(ctx, ctx.new_game(game, 0), DecisionKind.REPLACE)
    assert isinstance(action, Replace)
    return f"discarded {len(action.cards)} of 6 (cap 6)"


async def replace_second(ctx: Context) -> str:
    """R2: the second replacer discards at most as many cards as the first did."""
    game = Game.from_position(
        ((1, 4, 7, 9, 10, 12), (2, 3, 5, 6, 8, 11)), tacocat=5, draw_pile=_DRAW_PILE
    )
    scripted = ctx.new_game(game, 1, lambda view, _: Replace((1, 4)))
    action = await _one_decision(ctx, scripted, DecisionKind.REPLACE)
    assert isinstance(action, Replace)
    return f"discarded {len(action.cards)} after the opponent's 2 (cap 2)"


async def replace_simultaneous(ctx: Context) -> str:
    """R3: on the two-arrow centre both seats replace at once, with no cap."""
    game = Game.from_position(
        ((1, 2, 4, 7, 9, 10, 12), (2, 3, 5, 6, 8, 11, 11)), tacocat=4, draw_pile=_DRAW_PILE
    )
    action = await _one_decision(ctx, ctx.new_game(game, 0), DecisionKind.REPLACE)
    assert isinstance(action, Replace)
    return f"discarded {len(action.cards)} of 7 (simultaneous, no cap)"


# -- duel (D1-D4) ---------------------------------------------------------------------------------
async def duel(ctx: Context) -> str:
    """D1: both seats commit one card at the same time."""
    game = Game.from_position(((2, 5, 9, 11), (3, 6, 8, 12)), phase=DecisionKind.DUEL)
    action = await _one_decision(ctx, ctx.new_game(game, 1), DecisionKind.DUEL)
    assert isinstance(action, Duel)
    return f"committed {action.card}"


def _mirror(view: SeatView, theirs: Action | None) -> Action:
    """The opponent commits the bot's duel value: every duel ties (D2)."""
    if isinstance(theirs, Duel) and theirs.card in view.hand:
        return Duel(theirs.card)
    return Duel(view.hand[0])


async def duel_tie(ctx: Context) -> str:
    """D2: tied duel cards are discarded and the seats duel again."""
    game = Game.from_position(((3, 6, 9, 11), (3, 6, 9, 11)), phase=DecisionKind.DUEL)
    scripted = ctx.new_game(game, 0, _mirror)
    await scripted.start()
    cards = []
    for _ in range(2):
        if scripted.game.decision_for(0) is not DecisionKind.DUEL:
            break
        action = await scripted.ask()
        scripted.apply(action)
        assert isinstance(action, Duel)
        cards.append(action.card)
        scripted.game.apply(1, _mirror(build_view(scripted.game, 1), action))
    await scripted.abort()
    if len(cards) < 2:
        raise CheckFailed("two duel decisions after a tie", f"{len(cards)}")
    return f"duelled {cards[0]}, tied, then duelled {cards[1]}"


# -- attack (P1, P3, P6) --------------------------------------------------------------------------
async def attack_single(ctx: Context) -> str:
    """P1: a hand with no set or sequence can only attack with a single card."""
    game = Game.from_position(((2, 5, 9, 12), (1, 4, 7, 10)), phase=DecisionKind.ATTACK)
    action = await _one_decision(ctx, ctx.new_game(game, 0), DecisionKind.ATTACK)
    assert isinstance(action, Attack)
    return f"attacked with {list(action.cards)}"


async def attack_jumbo(ctx: Context) -> str:
    """P3: singles, sets and sequences are all on offer."""
    game = Game.from_position(
        ((3, 3, 3, 4, 5, 9, 11), (1, 2, 6, 7, 8, 10, 12)), tacocat=4, phase=DecisionKind.ATTACK
    )
    action = await _one_decision(ctx, ctx.new_game(game, 0), DecisionKind.ATTACK)
    assert isinstance(action, Attack)
    return f"attacked with {list(action.cards)} (from singles, sets and sequences)"


async def attack_last_cards(ctx: Context) -> str:
    """P6: with two equal cards left, the pair would be the last card: only a single."""
    game = Game.from_position(((5, 5), (2, 9)), phase=DecisionKind.ATTACK)
    action = await _one_decision(ctx, ctx.new_game(game, 0), DecisionKind.ATTACK)
    assert isinstance(action, Attack)
    return f"attacked with {list(action.cards)}"


# -- defend (P2, P4, P5) --------------------------------------------------------------------------
def _answers(action: Action) -> list[int | None]:
    """A defence's answers, for the account of what the bot did."""
    return list(action.answers) if isinstance(action, Defend) else []


async def _defend(
    ctx: Context, hands: tuple[tuple[int, ...], tuple[int, ...]], attack: tuple[int, ...]
) -> str:
    """The check plays ``attack`` from seat 1's hand; the bot, in seat 0, answers it."""
    game = Game.from_position(hands, phase=DecisionKind.ATTACK, attacker=1)
    scripted = ctx.new_game(game, 0, lambda view, _: Attack(attack))
    action = await _one_decision(ctx, scripted, DecisionKind.DEFEND)
    return f"answered {list(attack)} with {_answers(action)}"


async def defend_single(ctx: Context) -> str:
    """P2: one attack card, defended with an equal or higher card or sacrificed."""
    return await _defend(ctx, ((2, 5, 8, 10), (3, 7, 9, 11)), (7,))


async def defend_sequence(ctx: Context) -> str:
    """P4: a three-card sequence, each card answered in order."""
    return await _defend(ctx, ((1, 2, 4, 9, 11, 12, 12), (3, 5, 8, 9, 10, 11, 12)), (8, 9, 10))


async def defend_set_with_sacrifice(ctx: Context) -> str:
    """P4-P5: a set of three 6s against a hand that can defend at most two of them."""
    return await _defend(ctx, ((1, 2, 3, 4, 5, 7, 12), (6, 6, 6, 8, 9, 10, 11)), (6, 6, 6))


# -- whole games and endings ----------------------------------------------------------------------
async def full_game(ctx: Context) -> str:
    """A whole game on the default rules against the greedy policy, to its real GameEnd."""
    greedy = GreedyPolicy()
    scripted = ctx.new_game(Game(DEFAULT_RULESET, seed=7), 1, lambda view, _: greedy.act(view))
    await scripted.start()
    await scripted.play_out()
    outcome = scripted.game.outcome
    assert outcome is not None
    kinds = sorted({k.value for k in scripted.asked})
    return (
        f"{len(scripted.asked)} decisions ({', '.join(kinds)}), {scripted.game.round} rounds, "
        f"ended {outcome.termination.value}"
    )


async def round_cap(ctx: Context) -> str:
    """W2: a game with max_rounds = 1 ends in a draw after its first round."""
    ruleset = dataclasses.replace(DEFAULT_RULESET, max_rounds=1)
    scripted = ctx.new_game(Game(ruleset, seed=3), 0)
    await scripted.start()
    await scripted.play_out()
    outcome = scripted.game.outcome
    assert outcome is not None
    return f"{len(scripted.asked)} decisions, ended {outcome.termination.value}"


#: The GameEnds of an opponent's forfeit (the bot wins) and of an aborted game.
_OTHER_ENDINGS = (
    (pb.END_REASON_TIMEOUT, pb.GAME_RESULT_WIN, "check timed out on its request"),
    (pb.END_REASON_ILLEGAL_ACTION, pb.GAME_RESULT_WIN, "check played card 99, not in its hand"),
    (pb.END_REASON_DISCONNECT, pb.GAME_RESULT_WIN, "check's stream closed"),
    (pb.END_REASON_CRASH, pb.GAME_RESULT_WIN, "check's process died"),
    (pb.END_REASON_ABORTED, pb.GAME_RESULT_NO_CONTEST, "the referee cancelled the game"),
)


async def game_end_kinds(ctx: Context) -> str:
    """Every other way a game ends, each mid-game; the bot must go on to the next game."""
    for reason, result, detail in _OTHER_ENDINGS:
        game = Game.from_position(((2, 5, 9, 11), (3, 6, 8, 12)), phase=DecisionKind.DUEL)
        scripted = ctx.new_game(game, 0)
        await scripted.start()
        scripted.apply(await scripted.ask())
        winner = scripted.seat if result == pb.GAME_RESULT_WIN else None
        await scripted.send_end(scripted.end_message(reason, result, winner, detail))
    await _carries_on(ctx, "after the GameEnds")
    names = ", ".join(pb.EndReason.Name(r).removeprefix("END_REASON_") for r, *_ in _OTHER_ENDINGS)
    return f"took GameEnd {names} and played on"


async def _carries_on(ctx: Context, after: str) -> None:
    """A fresh game's first decision must be answered."""
    game = Game.from_position(((2, 5, 9, 11), (3, 6, 8, 12)), phase=DecisionKind.DUEL)
    scripted = ctx.new_game(game, 1)
    await scripted.start()
    try:
        scripted.apply(await scripted.ask())
    except CheckFailed as failure:
        raise CheckFailed(
            f"the bot to go on playing {after}: {failure.expected}", failure.got
        ) from None
    await scripted.abort()


# -- errors and timeouts --------------------------------------------------------------------------
#: A marker in the Errors the check sends, to find them in the bot's log.
ERROR_MARKER = "conformance-check-error"


async def errors_carry_on(ctx: Context) -> str:
    """An Error for a stale request, and one saying the bot's answer was illegal (a default
    action was played instead, FAILURE_POLICY_DEFAULT_ACTION): the bot goes on."""
    await ctx.link.send(
        pb.RefereeMessage(
            error=pb.Error(
                request_id=999_999,
                code=pb.ERROR_CODE_STALE_REPLY,
                message=f"{ERROR_MARKER}: request 999999 is no longer open",
                outcome=pb.ERROR_OUTCOME_IGNORED,
            )
        )
    )
    game = Game.from_position(
        ((3, 5, 7, 9), (2, 4, 8, 10)), phase=DecisionKind.DUEL
    )  # the duel, then attacks
    scripted = ctx.new_game(game, 0, failure_policy=pb.FAILURE_POLICY_DEFAULT_ACTION)
    await scripted.start()
    first = await scripted.ask()
    # The check treats the answer as refused (simulated, said so in the message), plays the
    # default action, the lowest card, in its place and goes on with the game.
    scripted.apply(Duel(scripted.game.hands[0][0]))
    await ctx.link.send(
        pb.RefereeMessage(
            error=pb.Error(
                game_id=scripted.game_id,
                request_id=scripted.last_request_id,
                code=pb.ERROR_CODE_ILLEGAL_ACTION,
                rule_id="D1",
                message=(
                    f"{ERROR_MARKER}: simulated refusal of your answer {first} (it was legal); "
                    "the default action was played"
                ),
                outcome=pb.ERROR_OUTCOME_DEFAULT_ACTION,
            )
        )
    )
    scripted.game.apply(1, scripted.opponent(build_view(scripted.game, 1), None))
    try:
        await scripted.play_until(lambda s: len(s.asked) >= 3)
    except CheckFailed as failure:
        raise CheckFailed(
            f"the bot to go on after an Error: {failure.expected}", failure.got
        ) from None
    await scripted.abort()
    decisions = len(scripted.asked)
    return f"went on after STALE_REPLY and ILLEGAL_ACTION Errors ({decisions} decisions)"


async def timeout_forfeit(ctx: Context) -> str:
    """The bot's decision times out: Error{TIMEOUT} and a lost GameEnd come before its answer
    can; its late answer gets STALE_REPLY; the next game must be played."""
    game = Game.from_position(((2, 5, 9, 11), (3, 6, 8, 12)), phase=DecisionKind.DUEL)
    scripted = ctx.new_game(game, 0)
    await scripted.start()
    message, request_id, _ = scripted.request_message()
    await ctx.link.send(message)
    ctx.link.close_request(request_id)
    scripted.ended = True
    await ctx.link.send(
        pb.RefereeMessage(
            error=pb.Error(
                game_id=scripted.game_id,
                request_id=request_id,
                code=pb.ERROR_CODE_TIMEOUT,
                message=f"{ERROR_MARKER}: no answer to request {request_id} (simulated timeout)",
                outcome=pb.ERROR_OUTCOME_FORFEIT,
            )
        ),
        scripted.end_message(
            pb.END_REASON_TIMEOUT, pb.GAME_RESULT_LOSS, 1, "seat 0 timed out (simulated)"
        ),
    )
    await _carries_on(ctx, "after losing on time")
    return "took a timeout forfeit and played on"


# -- concurrency and batches ----------------------------------------------------------------------
async def concurrent_games(ctx: Context) -> str:
    """Several games at once on one stream, their requests interleaved."""
    count = ctx.link.max_games
    games = [ctx.new_game(Game(DEFAULT_RULESET, seed=100 + i), i % 2) for i in range(count)]
    for scripted in games:
        await scripted.start()
    # One game's failure stops the others at their next step, before any game is aborted:
    # played on (gather does not stop them) they sent requests of games already ended, and
    # cancelling them in a write could break the stream.
    failed: list[BaseException] = []

    async def play(scripted: ScriptedGame) -> None:
        try:
            await scripted.play_until(lambda s: bool(failed) or len(s.asked) >= 12)
        except BaseException as error:
            failed.append(error)

    await asyncio.gather(*(play(s) for s in games))
    if failed:
        raise failed[0]
    for scripted in games:
        await scripted.finish()
    return f"{count} games at once, {sum(len(s.asked) for s in games)} decisions interleaved"


async def batches(ctx: Context) -> str:
    """RefereeBatch (only for a bot whose Hello set accept_batches): two GameStarts and two
    DecisionRequests in one message."""
    if not ctx.link.batches:
        raise Skipped("the bot's Hello did not set accept_batches")
    first, second = (
        ctx.new_game(
            Game.from_position(((2, 5, 9, 11), (3, 6, 8, 12)), phase=DecisionKind.DUEL), seat
        )
        for seat in (0, 1)
    )
    requests = [g.request_message() for g in (first, second)]
    await ctx.link.send(
        first.start_message(), second.start_message(), *(r[0] for r in requests), batch=True
    )
    for _, request_id, _ in requests:
        ctx.link.mark_sent(request_id)
    for scripted, prepared in zip((first, second), requests, strict=True):
        scripted.apply(await scripted.ask(prepared))
    for scripted in (first, second):
        await scripted.abort()
    return "answered both requests of a batch"


class Skipped(Exception):
    """A check that does not apply to this bot (the reason says why)."""


def decision_times(ctx: Context) -> str:
    """The time the bot took per decision, as the check measured it (send to receipt)."""
    times = ctx.link.decision_ms
    if not times:
        raise CheckFailed("decisions to time", "none were answered")
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    allowance = f"allowance {ctx.allowance_ms} ms" if ctx.allowance_ms else "no limit"
    text = (
        f"{len(times)} decisions: mean {statistics.fmean(times):.1f} ms, p95 {p95:.1f} ms, "
        f"max {ordered[-1]:.1f} ms ({allowance})"
    )
    if ctx.allowance_ms and ordered[-1] > ctx.allowance_ms:
        raise CheckFailed(f"every decision within {ctx.allowance_ms} ms", text)
    return text


#: The checks over the stream, in order (name, what it checks, the check).
CHECKS: tuple[tuple[str, Check], ...] = (
    ("replace-first", replace_first),
    ("replace-second", replace_second),
    ("replace-simultaneous", replace_simultaneous),
    ("duel", duel),
    ("duel-tie", duel_tie),
    ("attack-single", attack_single),
    ("attack-jumbo", attack_jumbo),
    ("attack-last-cards", attack_last_cards),
    ("defend-single", defend_single),
    ("defend-sequence", defend_sequence),
    ("defend-set-with-sacrifice", defend_set_with_sacrifice),
    ("full-game", full_game),
    ("round-cap", round_cap),
    ("game-end-kinds", game_end_kinds),
    ("errors-carry-on", errors_carry_on),
    ("timeout-forfeit", timeout_forfeit),
    ("concurrent-games", concurrent_games),
    ("batches", batches),
)
