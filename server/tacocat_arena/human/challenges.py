"""A person's games in the arena (``serve``): a signed-in player challenges a bot.

Each challenge is ``play human``'s match (``local.run_match``: a referee of its own on
loopback, the bot started by the one launcher in its sandbox, the person's seat relayed to
the page), played on the arena's loop and written to a folder of its own,
``DIR/human/N/``, which ``tacocat-arena verify`` re-checks like any match.  Human games are
unrated and kept apart from the ladder: nothing of them enters ``arena.sqlite`` or its
ratings; their one table, ``human_games`` of ``DIR/human/games.sqlite``, is the players'
history of them.

The opponents are the example bots (``builtin:NAME``) and, where the arena hosts bots, its
active hosted versions (``Opponent``: the web resolves a version to the spec the hosted wing
starts it by, its package in the wing's sandbox and limits, and to a slot of the arena's
capacity held until the game ends).  A version's owner may opt it out of human challenges
(``set_opted_out``: the table ``human_optouts`` of the same file); a challenge of it is then
refused with a message saying so.  Connected bots are not offered (docs/human-seat.md).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tacocat_arena.human.local import (
    DEFAULT_HUMAN_MOVE_TIMEOUT_S,
    HumanMatch,
    human_config,
    run_match,
)
from tacocat_arena.human.relay import Relay, SeatResult
from tacocat_arena.launch.builtins import BUILTINS
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee.untrusted import printable
from tacocat_arena.report.verify_tables import verify_run_folder
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import ConfigError, load_config
from tacocat_arena.tournament.verify import Problem, result_of

log = logging.getLogger(__name__)

#: Person's games at once in one arena (each is a bot process and a referee).
MAX_LIVE = 4
#: Finished challenges whose page still answers (its last state), the oldest dropped first.
KEEP_FINISHED = 64
#: The most rows of people's games listed at once (``history``), newest first.
HISTORY_ROWS = 200
#: The reason of a row whose game could not be played (its bot did not start); its result
#: stays empty, as no game was played (``verify_games`` reads no result into it).
NOT_PLAYED = "not played"
#: The reason of a row whose game an arena stop interrupted (its result empty too; ``verify``
#: checks its folder as far as it went).
INTERRUPTED = "interrupted"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS human_games (
    number INTEGER PRIMARY KEY,
    player TEXT NOT NULL,
    opponent TEXT NOT NULL,
    folder TEXT NOT NULL,
    started_at REAL NOT NULL,
    result TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    rounds INTEGER NOT NULL DEFAULT 0,
    seat INTEGER,
    games INTEGER NOT NULL DEFAULT 1,
    twin_result TEXT NOT NULL DEFAULT '',
    pair_points REAL
);
CREATE TABLE IF NOT EXISTS human_optouts (
    bot TEXT PRIMARY KEY,
    at REAL NOT NULL
)
"""


#: The columns of a duplicate pair (the twin game offered after the first), added to a
#: table that an arena wrote before they existed.
_PAIR_COLUMNS = (
    ("games", "INTEGER NOT NULL DEFAULT 1"),
    ("twin_result", "TEXT NOT NULL DEFAULT ''"),
    ("pair_points", "REAL"),
)


class ChallengeError(ValueError):
    """A challenge the arena refuses; the message says why (the web answers 409)."""


@dataclass(frozen=True)
class Opponent:
    """A bot other than an example one that a person may challenge, as the arena resolved
    it: ``spec`` is what the launcher starts (a hosted version's package, its sandbox and
    limits, as the hosted wing starts it), ``release`` gives back the arena's capacity the
    game holds, called once when the game ends (or when it could not start)."""

    spec: BotSpec
    release: Callable[[], None] = lambda: None


@dataclass
class Challenge:
    """One person's game: its page's key, its row's number and the relay of its seat."""

    key: str
    number: int
    player: str
    opponent: str
    folder: Path
    relay: Relay
    done: bool = False


class Challenges:
    """The arena's person's games: started, looked up by their page's key, listed."""

    def __init__(
        self,
        folder: Path,
        *,
        bot_move_timeout_s: float,
        human_move_timeout_s: float = DEFAULT_HUMAN_MOVE_TIMEOUT_S,
        spawn: Callable[[Coroutine[Any, Any, None]], object] | None = None,
    ) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.bot_move_timeout_s = bot_move_timeout_s
        self.human_move_timeout_s = human_move_timeout_s
        self.spawn = spawn or asyncio.ensure_future
        self.db = sqlite3.connect(folder / "games.sqlite", isolation_level=None)
        self.db.executescript(_SCHEMA)
        have = {row[1] for row in self.db.execute("PRAGMA table_info(human_games)")}
        for column, kind in _PAIR_COLUMNS:  # a table written before pairs were offered
            if column not in have:
                self.db.execute(f"ALTER TABLE human_games ADD COLUMN {column} {kind}")
        # No game is in play yet in this process: a row without a result is one an earlier
        # run stopped mid-game, not one "in play" for ever on the pages.
        self.db.execute(
            "UPDATE human_games SET reason = ? WHERE result = '' AND reason = ''", (INTERRUPTED,)
        )
        self.by_key: dict[str, Challenge] = {}

    @staticmethod
    def opponents() -> list[str]:
        """What a person may challenge: the example bots."""
        return sorted(BUILTINS)

    def opted_out(self) -> set[str]:
        """The bots whose owners opted them out of human challenges."""
        return {row[0] for row in self.db.execute("SELECT bot FROM human_optouts")}

    def set_opted_out(self, bot: str, opted_out: bool) -> None:
        """Opt ``bot`` (a hosted version's name) out of human challenges, or back in; a
        game in play against it plays on."""
        if opted_out:
            self.db.execute(
                "INSERT OR IGNORE INTO human_optouts (bot, at) VALUES (?, ?)", (bot, time.time())
            )
        else:
            self.db.execute("DELETE FROM human_optouts WHERE bot = ?", (bot,))

    def refusal(self, player: str, bot: str) -> str:
        """Why ``player`` may not start a game against ``bot`` now ("" if it may)."""
        if bot in self.opted_out():
            return f"{bot}'s owner opted it out of games against people"
        live = [c for c in self.by_key.values() if not c.done]
        if any(c.player == player for c in live):
            return "you have a game in play already: finish it first"
        if len(live) >= MAX_LIVE:
            return f"{MAX_LIVE} people are playing already: try again soon"
        return ""

    def start(self, player: str, opponent: Any, *, pair: bool = False) -> Challenge:
        """Start ``player``'s game against ``opponent``: an example bot's name or an
        ``Opponent`` the arena resolved; refused (``refusal``) while the player has a game in
        play, the arena has ``MAX_LIVE``, or the bot's owner opted it out.  An ``Opponent``'s
        ``release`` is called when the game ends, or at once if it does not start.
        ``pair``: the twin game (the same deal, seats swapped) is offered after the first,
        as ``play human --pair`` offers it."""
        if isinstance(opponent, Opponent):
            try:
                return self._start(player, opponent.spec, opponent.release, pair=pair)
            except BaseException:
                opponent.release()
                raise
        if not isinstance(opponent, str) or opponent.removeprefix("builtin:") not in BUILTINS:
            raise ChallengeError(
                f"opponent {str(opponent)[:40]!r} is not a bot you may challenge "
                f"(one of: {', '.join(self.opponents())})"
            )
        name = opponent.removeprefix("builtin:")
        bot = name if name != player else f"{name}-bot"
        spec = BotSpec(bot, f"builtin:{name}")
        return self._start(player, spec, lambda: None, shown=name, pair=pair)

    def _start(
        self,
        player: str,
        spec: BotSpec,
        release: Callable[[], None],
        shown: str = "",
        *,
        pair: bool,
    ) -> Challenge:
        refused = self.refusal(player, shown or spec.name)
        if refused:
            raise ChallengeError(refused)
        if spec.name == player:
            raise ChallengeError(f"the bot {spec.name!r} has the name of its challenger")
        number = self.db.execute(
            "INSERT INTO human_games (player, opponent, folder, started_at, games)"
            " VALUES (?, ?, '', ?, ?)",
            (player, shown or spec.name, time.time(), 2 if pair else 1),
        ).lastrowid
        assert number is not None
        out = self.folder / str(number)
        self.db.execute("UPDATE human_games SET folder = ? WHERE number = ?", (str(out), number))
        try:
            config = load_config(
                None,
                {
                    "games_per_pairing": 2,
                    "seed": secrets.randbelow(2**62),
                    "move_timeout_s": self.bot_move_timeout_s,
                    "out": out,
                    "name": f"human game {number}",
                },
                [f"{player}=", f"{player}-opponent=builtin:random"],  # its place: ``spec``
                external_ok=True,
            )
            config = replace(config, bots=(config.bots[0], spec))
            config = human_config(config, player, self.human_move_timeout_s)
        except (ConfigError, ValueError) as error:
            self.db.execute("DELETE FROM human_games WHERE number = ?", (number,))
            raise ChallengeError(str(error)) from None
        challenge = Challenge(
            secrets.token_urlsafe(18), number, player, shown or spec.name, out,
            Relay(player, spec.name, games=2 if pair else 1),
        )  # fmt: skip
        self.by_key[challenge.key] = challenge
        self._forget_old()
        self.spawn(self._play(challenge, config, release, pair))
        return challenge

    async def _play(
        self, challenge: Challenge, config: Any, release: Callable[[], None], pair: bool
    ) -> None:
        try:
            match = await run_match(config, challenge.relay, pair=pair)
            self._record(challenge, match)
        except Exception as error:  # its bot did not start (a hosted version's doing), a disk
            # The task is the arena's (``spawn``): raised, it was an unretrieved exception's
            # traceback in the log and a row "in play" for ever; the page says no more than
            # ``run_match``'s notice (the bot's own lines are its owner's, not the person's).
            log.warning(
                "person's game %d (%s against %s) not played: %s",
                challenge.number, challenge.player, challenge.opponent, printable(str(error)),
            )  # fmt: skip
            self.db.execute(
                "UPDATE human_games SET reason = ? WHERE number = ? AND result = ''",
                (NOT_PLAYED, challenge.number),
            )
        finally:
            challenge.done = True
            release()

    def _record(self, challenge: Challenge, match: HumanMatch) -> None:
        if not match.results:
            return
        twin = row_of(match.results[1], challenge.player)[0] if len(match.results) > 1 else ""
        self.db.execute(
            "UPDATE human_games SET result = ?, reason = ?, rounds = ?, seat = ?,"
            " twin_result = ?, pair_points = ? WHERE number = ?",
            (*row_of(match.results[0], challenge.player), twin, match.pair_points,
             challenge.number),
        )  # fmt: skip

    def _forget_old(self) -> None:
        finished = [key for key, c in self.by_key.items() if c.done]
        for key in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self.by_key[key]

    def get(self, key: str) -> Challenge | None:
        """The challenge whose page has ``key``."""
        return self.by_key.get(key)

    def history(self, player: str | None = None) -> list[dict[str, Any]]:
        """The person's games, newest first (every player's, or ``player``'s), unrated: the
        last ``HISTORY_ROWS`` of them, as a player who plays game after game (a script
        answering at once) would otherwise make its public page and the API list without end."""
        keys = ("number", "player", "opponent", "started_at", "result", "reason", "rounds",
                "seat", "games", "twin_result", "pair_points")  # fmt: skip
        where, args = ("WHERE player = ?", (player,)) if player is not None else ("", ())
        rows = self.db.execute(
            f"SELECT {', '.join(keys)} FROM human_games {where} ORDER BY number DESC LIMIT ?",
            (*args, HISTORY_ROWS),
        )
        return [dict(zip(keys, row, strict=True)) for row in rows]


def row_of(result: GameResult, player: str) -> tuple[str, str, int, int]:
    """The table's ``result, reason, rounds, seat`` of ``player``'s game ``result``: what the
    history shows, and what ``verify_games`` re-derives from the game's record."""
    seat = result.seats.index(player)
    return SeatResult.of(result, seat).value, result.reason.value, result.rounds, seat


def verify_games(folder: Path) -> tuple[list[Problem], str]:
    """H1 of an arena's person's games (``DIR/human/``): every game's folder verifies as a
    match's (``verify_run_folder``), every finished row of ``human_games`` is its folder's
    game (the player seated, the result, reason, rounds and seat the record gives, and the
    twin game's result, of a pair), and
    every game folder has its row.  A row still in play (an arena stopped mid-game) is
    checked as far as its folder went, its result not."""
    problems: list[Problem] = []

    def problem(number: object, message: str) -> None:
        problems.append(Problem(f"human/{number}", None, "H1", message))

    try:
        db = sqlite3.connect(f"{(folder / 'games.sqlite').resolve().as_uri()}?mode=ro", uri=True)
        rows = db.execute(
            "SELECT number, player, result, reason, rounds, seat, games, twin_result"
            " FROM human_games"
        ).fetchall()
        db.close()
    except sqlite3.Error as error:
        return [Problem("human", None, "H1", f"{folder}/games.sqlite unreadable: {error}")], ""
    numbers = {str(row[0]) for row in rows}
    for extra in sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name not in numbers):
        problem(extra, f"a folder of {folder} with no row in games.sqlite")
    checked = 0
    for number, player, result, reason, rounds, seat, games, twin in rows:
        game = folder / str(number)
        if not (game / "results.json").is_file():
            if result:
                problem(number, f"the row says {result} but {game} holds no finished game")
            continue
        verified = verify_run_folder(game)
        checked += 1
        problems.extend(
            Problem(f"human/{number}/{p.game_id}", p.round, p.rule, p.message)
            for p in verified.problems
        )
        if verified.unchecked:
            problem(number, f"its folder is not checked: {verified.unchecked}")
        results = [result_of(entry) for entry in verified.entries]
        if not 1 <= len(results) <= games or any(player not in r.seats for r in results):
            problem(number, f"its folder holds not the {games} game(s) of {player!r} it says")
            continue
        derived = (
            *row_of(results[0], player),
            row_of(results[1], player)[0] if results[1:] else "",
        )
        if result and derived != (result, reason, rounds, seat, twin):
            problem(
                number,
                f"the row says {(result, reason, rounds, seat, twin)} but its record {derived}",
            )
    return problems, f"{checked} game(s) played by hand in {folder} verified against their table"
