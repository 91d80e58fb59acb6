""" "Why did my bot lose?": ``replay --bot`` and ``analyze``'s printing (docs/why-lose.md).

The work lives in ``check/replay.py`` and ``play/analysis.py``; this module finds the game,
the seat and the options, prints, and turns their errors into sentences.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import click

from tacocat_arena.arena.submissions import parse_identity
from tacocat_arena.check.launched import LaunchError
from tacocat_arena.check.replay import Replayed, ReplayReport, Verdict, replay_bot
from tacocat_arena.cli.run import load_game_entry
from tacocat_arena.engine.record import RecordError
from tacocat_arena.engine.types import Seat
from tacocat_arena.launch.sandbox import SandboxError, SandboxMode
from tacocat_arena.play.analysis import (
    HINDSIGHT_LABEL,
    DecisionAnalysis,
    GameAnalysis,
    Mark,
    Reference,
    ReferenceSpecError,
    analyze_record,
)
from tacocat_arena.referee.settings import ClockSettings
from tacocat_arena.report import render_replay
from tacocat_arena.tournament.verify import GameEntry


def pick_seat(entry: GameEntry, seat: str | None) -> Seat:
    """The seat asked for (0, 1, a bot's name, or the player whose hosted version sat there:
    ``newt`` for ``newt@v1``); by default the seat that lost (seat 0 in a draw or an
    unfinished game)."""
    names = entry.seat_names
    owners = [(parse_identity(name) or (name, 0))[0] for name in names]
    if seat is not None and seat not in names and seat in owners:
        seat = names[owners.index(seat)]
    if seat is None:
        winner = entry.record.get("winner")
        return 1 - winner if winner in (0, 1) else 0
    if seat in ("0", "1"):
        return int(seat)
    if seat in names:
        if names[0] == names[1]:
            raise click.ClickException(f"both seats are named {seat!r}: give --seat 0 or 1")
        return names.index(seat)
    raise click.ClickException(
        f"--seat {seat!r} is neither 0, 1 nor a player of game {entry.game_id} "
        f"({names[0]} vs {names[1]})"
    )


def playable_entry(file: Path, game_id: str | None) -> GameEntry:
    """The game of FILE (``--game``), refused when it was never played."""
    entry = load_game_entry(file, game_id)
    if entry.record.get("unplayed"):
        raise click.ClickException(
            f"game {entry.game_id} was not played: {entry.record['unplayed']}"
        )
    return entry


_SHOWN = {
    Verdict.DIFFERENT: "differs",
    Verdict.FALLBACK: "RAISED",
    Verdict.ILLEGAL: "ILLEGAL",
    Verdict.MALFORMED: "MALFORMED",
    Verdict.TIMEOUT: "TIMEOUT",
    Verdict.GONE: "CRASHED",
}


def replayed_lines(replayed: Replayed) -> list[str]:
    """A decision's lines, when it is worth a line: where the answer is not the record's."""
    label = _SHOWN.get(replayed.verdict)
    if label is None:
        return []
    head = f"#{replayed.index:<3} round {replayed.round:<2} {replayed.kind:<7} {label:<9}"
    lines = [f"{head} recorded: {replayed.recorded}"]
    if replayed.answer:
        lines.append(f"{'':31}now: {replayed.answer}" + _ms(replayed.ms))
    if replayed.detail:
        lines.append(f"{'':31}{replayed.detail}")
    return lines


def _ms(ms: float | None) -> str:
    return "" if ms is None else f"  ({ms:.0f} ms)"


def replay_summary(report: ReplayReport) -> list[str]:
    """The closing lines: the counts, and the bot's last output after a failure."""
    if report.not_connected:
        lines = [f"replay: the bot never got a request: {report.not_connected}"]
    else:
        counts = ", ".join(
            f"{report.count(v)} {v.value}"
            for v in Verdict
            if report.count(v) or v in (Verdict.SAME, Verdict.DIFFERENT)
        )
        lines = [f"replay: {len(report.decisions)} decisions of seat {report.seat} asked: {counts}"]
    if report.failed and report.log_tail:
        lines.append("last lines of the bot's output:")
        lines.extend(f"  {line}" for line in report.log_tail.splitlines())
    if report.exit_code not in (None, 0):
        lines.append(f"the bot's process exited with code {report.exit_code}")
    return lines


def replay_bot_command(
    file: Path,
    game_id: str | None,
    command: str,
    *,
    seat: str | None,
    as_json: bool,
    move_timeout_s: float | None,
    sandbox: SandboxMode,
    log: Path | None,
) -> None:
    """``replay GAME --bot COMMAND``: print where the bot's answers differ; exit 1 when it
    failed a request (raised, illegal, malformed, timed out, crashed) or never connected."""
    entry = playable_entry(file, game_id)
    chosen = pick_seat(entry, seat)
    allowance = None
    if move_timeout_s is not None:
        allowance = ClockSettings.from_seconds(move_timeout_s).decision_ms
    names = entry.seat_names
    if not as_json:
        click.echo(
            f"game {entry.game_id}: {names[0]} (seat 0) vs {names[1]} (seat 1); asking "
            f"{command!r} every decision of seat {chosen} ({names[chosen]})"
        )

    def show(replayed: Replayed) -> None:
        for line in replayed_lines(replayed):
            click.echo(line)

    try:
        report = asyncio.run(
            replay_bot(
                entry.record,
                command,
                seat=chosen,
                game_id=entry.game_id,
                names=names,
                allowance_ms=allowance,
                sandbox=sandbox,
                log_path=log,
                progress=None if as_json else show,
            )
        )
    except RecordError as error:
        raise click.ClickException(f"the record of game {entry.game_id}: {error}") from None
    except (LaunchError, SandboxError) as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        for notice in report.notices:
            click.echo(f"warning: {notice}", err=True)
        for line in replay_summary(report):
            click.echo(line)
    if report.failed:
        raise SystemExit(1)


def analysis_line(analysed: DecisionAnalysis) -> str:
    """One decision's line: what was played, the reference's best, the loss and its mark."""
    played = "forfeit" if analysed.played is None else str(analysed.played)
    head = f"#{analysed.index:<3} round {analysed.round:<2} {analysed.kind:<7} {played:<22}"
    if analysed.forced:
        return f"{head} (forced)"
    mark = analysed.mark.value if analysed.mark is not None else ""
    line = (
        f"{head} best {str(analysed.best):<22} win {analysed.win_played:5.1f}%  "
        f"loss {analysed.loss:5.1f} ± {analysed.loss_se:4.1f}  {mark}"
    ).rstrip()
    seen = analysed.hindsight
    if seen is not None:
        line += (
            f"\n{'':<44}{HINDSIGHT_LABEL}: best {seen.best}, "
            f"loss {seen.loss:.1f} ± {seen.loss_se:.1f}"
        )
    return line


def analysis_summary(analysis: GameAnalysis) -> list[str]:
    """The closing lines: marks, accuracy, the costliest decisions, the time taken."""
    accuracy = analysis.accuracy
    chosen = sum(not d.forced for d in analysis.decisions)
    marks = ", ".join(f"{analysis.count(mark)} {mark.value}" for mark in Mark)
    lines = [
        f"accuracy {'-' if accuracy is None else f'{accuracy:.1f}%'} over {chosen} decisions "
        f"with a choice ({len(analysis.decisions) - chosen} forced); marks: {marks}",
    ]
    costliest = analysis.costliest()
    if costliest:
        lines.append(
            "the costliest: "
            + "; ".join(
                f"#{d.index} {d.kind} {'forfeit' if d.played is None else d.played} "
                f"(-{d.loss:.1f} points{' ' + d.mark.value if d.mark else ''}, best {d.best})"
                for d in costliest
            )
        )
    if analysis.has_hindsight:
        seen = analysis.hindsight_summary()
        lines.append(
            f"{seen['label']}: its moves lost {seen['loss_total']:.1f} points in all "
            f"({seen['loss_mean']:.2f} a decision) against the best move for the cards as they "
            f"were; {seen['other_best']} of {seen['decisions']} differ from it (luck, not a "
            "mark: the seat could not know)"
        )
    lines.extend(analysis.notes)
    lines.append(f"analysed in {analysis.seconds:.1f} s")
    return lines


def analyze_command(
    file: Path,
    game_id: str | None,
    *,
    seat: str | None,
    reference: str | None,
    as_json: bool,
    html_out: Path | None = None,
    hindsight: bool = False,
) -> None:
    """``analyze GAME``: each decision of the seat re-searched, losses and marks printed
    (and the replay page with them, to ``html_out``)."""
    entry = playable_entry(file, game_id)
    chosen = pick_seat(entry, seat)
    try:
        spec = Reference.parse(reference)
    except ReferenceSpecError as error:
        raise click.BadParameter(str(error), param_hint="--reference") from None
    names = entry.seat_names
    if not as_json:
        click.echo(
            f"game {entry.game_id}: {names[0]} (seat 0) vs {names[1]} (seat 1); analysing seat "
            f"{chosen} ({names[chosen]}) with {spec} (losses in the game's win-probability points)"
        )

    def show(analysed: DecisionAnalysis) -> None:
        click.echo(analysis_line(analysed))

    try:
        analysis = analyze_record(
            entry.record, chosen, spec, progress=None if as_json else show, hindsight=hindsight
        )
    except RecordError as error:
        raise click.ClickException(f"the record of game {entry.game_id}: {error}") from None
    if html_out is not None:
        page = render_replay(
            dict(entry.record), list(names), game_id=entry.game_id, analysis=analysis.to_json()
        )
        try:
            html_out.write_text(page, encoding="utf-8")
        except OSError as error:
            raise click.ClickException(f"cannot write {html_out}: {error.strerror}") from None
    if as_json:
        data = {"game": entry.game_id, "players": list(names), **analysis.to_json()}
        click.echo(json.dumps(data, indent=2))
        return
    for line in analysis_summary(analysis):
        click.echo(line)
    if html_out is not None:
        click.echo(f"replay page with the marks written to {html_out} (open it in a browser)")


#: The most bytes read from an arena for one game (a record is tens of kilobytes).
MOST_RECORD_BYTES = 16 * 1024 * 1024


def is_url(source: str) -> bool:
    """Whether GAME is an arena's address rather than a file."""
    return source.startswith(("http://", "https://"))


def api_url(source: str) -> str:
    """The JSON address of a game given by its page or its API address on an arena."""
    head, _, rest = source.partition("://")
    host, _, path = rest.partition("/")
    path = "/" + path.split("?", 1)[0].rstrip("/")
    for prefix in ("/api/games/", "/games/"):
        if path.startswith(prefix) and len(path) > len(prefix):
            return f"{head}://{host}/api/games/{path[len(prefix) :]}"
    raise click.ClickException(
        f"{source} is not a game of an arena: give its page (http://HOST:PORT/games/ID) "
        "or its API address (.../api/games/ID)"
    )


@contextlib.contextmanager
def game_file(source: str, token: str | None) -> Iterator[Path]:
    """GAME as a file: the path given, or an arena's game fetched into a temporary file
    (its id, seats and record, as a games.jsonl line holds them), removed afterwards."""
    if not is_url(source):
        path = Path(source)
        if not path.exists():
            raise click.ClickException(f"{source}: no such file or folder")
        yield path
        return
    url = api_url(source)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
            body = r.read(MOST_RECORD_BYTES + 1)
    except urllib.error.HTTPError as error:
        raise click.ClickException(f"{url}: HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError) as error:
        raise click.ClickException(f"cannot fetch {url}: {error}") from None
    if len(body) > MOST_RECORD_BYTES:
        raise click.ClickException(f"{url}: more than {MOST_RECORD_BYTES} bytes; not a game")
    try:
        data = json.loads(body)
        record = dict(data["record"])
    except (ValueError, KeyError, TypeError):
        raise click.ClickException(f"{url}: not a finished game's JSON (no record)") from None
    game = {"id": str(data.get("id") or url.rsplit("/", 1)[-1]), "record": record}
    seats = data.get("seats")
    if isinstance(seats, list) and len(seats) == 2:
        game["seats"] = [str(name) for name in seats]
    with tempfile.TemporaryDirectory(prefix="tacocat-game-") as folder:
        path = Path(folder) / "game.json"  # as one line of a games.jsonl: id, seats, record
        path.write_text(json.dumps(game), encoding="utf-8")
        yield path
