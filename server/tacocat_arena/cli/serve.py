"""The ``serve`` and ``players`` commands: parse, delegate, turn domain errors into
``click.ClickException``.  The work is in ``arena_service`` (start-up), ``arena/players``
and ``arena/store``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tacocat_arena.cli import options

if TYPE_CHECKING:
    from tacocat_arena.arena.store import ArenaStore
    from tacocat_arena.arena.submissions import Submissions, Version

# The arena's modules are imported in the commands, not here: `tacocat-arena --help` stays
# cheap (issue 37).

DIR_OPTION = click.option(
    "--dir",
    "folder",
    default="arena",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The arena's folder: its database, logs and organizer token.",
)


def _address(text: str, what: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise click.BadParameter(f"expected HOST:PORT, got {text!r}", param_hint=what)
    return host.strip("[]"), int(port)


@click.command()
@DIR_OPTION
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The referee's address (0.0.0.0 for bots on other machines).",
)
@click.option("--port", default=50051, show_default=True, help="The referee's port (0 = any).")
@click.option(
    "--web",
    default="127.0.0.1:8080",
    show_default=True,
    metavar="HOST:PORT",
    help="The web page's address.",
)
@click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='TOML file of players (name = "token") to register, for scripted set-ups.',
)
@click.option("--concurrency", default=8, show_default=True, help="Games at the same time.")
@click.option("--per-bot", default=2, show_default=True, help="Games at once per bot.")
@click.option(
    "--games-per-bot",
    default=0,
    show_default=True,
    help="Stop pairing a bot after this many games (0 = no limit).",
)
@options.move_timeout_option("Time per decision.", default=1.0)
@options.time_bank_option("Extra time per game.", default=0.0)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="PEM certificate chain: bots connect with TLS (with --tls-key).",
)
@click.option(
    "--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="PEM key."
)
@click.option(
    "--round-robin",
    "round_robin",
    is_flag=True,
    help="Play one round-robin event among the bots present instead of the ladder, then stop "
    "(as --event round_robin).",
)
@click.option(
    "--event",
    "event_format",
    type=click.Choice(["round_robin", "swiss"]),
    help="Play one event of this format among the bots present instead of the ladder, then "
    "stop; swiss: rounds paired by score, as run --format swiss.",
)
@options.swiss_rounds_option("Event: a Swiss's rounds (default: ceil(log2(entrants))).")
@options.notify_option(
    "Event: POST a JSON summary to this http(s) URL when it is over; retried, never fails "
    "the event."
)
@click.option("--games", default=2, show_default=True, help="Event: games per pairing (even).")
@click.option(
    "--event-name",
    help="Event: its name (its page is /event/NAME).  [default: the format's, round-robin or "
    "swiss]",
)
@click.option(
    "--start-after",
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="Event: the bots connected this long after start-up are the entrants.",
)
@click.option(
    "--start-with",
    type=int,
    metavar="BOTS",
    help="Event: start as soon as this many bots are connected, before --start-after.",
)
@click.option(
    "--late-joiners/--no-late-joiners",
    default=True,
    show_default=True,
    help="Event: add bots that connect later to the remaining schedule.",
)
@click.option(
    "--wait",
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="Event: how long the last games wait for absent bots before they are forfeited.",
)
@options.workers_option("Hosted bots: local worker processes playing their batches.", default=1)
@options.cluster_option(
    "Hosted bots: play their batches on this Dask cluster instead of local workers."
)
@options.sandbox_option(
    "Hosted bots' sandbox: bwrap where it works (auto), or required, or none.", default="auto"
)
@click.option(
    "--build-timeout",
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="Hosted bots: how long a package's build may take.",
)
@click.option(
    "--gates",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="Hosted bots: versions built and checked at once (one per player).",
)
@click.option(
    "--uploads-per-hour",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="Hosted bots: uploads a player may make in any hour (then 429).",
)
@click.option(
    "--upload-mib-per-hour",
    default=256,
    show_default=True,
    type=click.IntRange(min=1),
    help="Hosted bots: MiB of archives a player may upload in any hour (then 429).",
)
@click.option(
    "--pairs-per-batch",
    default=None,
    type=click.IntRange(min=1),
    metavar="DEALS",
    help="Hosted bots: duplicate deals two versions play per batch (each batch starts their "
    "four processes once; default HostedSettings.pairs_per_batch, 8).",
)
@click.option(
    "--probation",
    default=20,
    show_default=True,
    type=click.IntRange(min=0),
    metavar="GAMES",
    help="Hosted bots: games a new version plays beside its player's active one before it "
    "replaces it (0 = at once).",
)
@click.option(
    "--independent-deals/--duplicate-deals",
    default=True,
    show_default=True,
    help="A pairing with a connected bot plays two independent deals, not one deal twice "
    "(a connected bot would remember the first).",
)
def serve(
    folder: Path,
    host: str,
    port: int,
    web: str,
    tokens_file: Path | None,
    concurrency: int,
    per_bot: int,
    games_per_bot: int,
    move_timeout: float,
    time_bank: float,
    tls_cert: Path | None,
    tls_key: Path | None,
    round_robin: bool,
    event_format: str | None,
    rounds: int | None,
    notify: str | None,
    games: int,
    event_name: str | None,
    start_after: float,
    start_with: int | None,
    late_joiners: bool,
    wait: float,
    workers: int,
    cluster: str | None,
    sandbox: str,
    build_timeout: float,
    gates: int,
    uploads_per_hour: int,
    upload_mib_per_hour: int,
    probation: int,
    independent_deals: bool,
    pairs_per_batch: int | None,
) -> None:
    """A long-running arena: bots connect with their token whenever they like and the ladder
    keeps pairing them; a live leaderboard is on the web page.  Ctrl-C stops it; started again
    on the same --dir it carries on, hosted bots included.

    Players may also submit bots (`tacocat-arena submit`): the arena checks each version and
    plays the active ones itself, sandboxed, in --workers processes or on a --cluster."""
    from tacocat_arena.arena.events import EventSettings
    from tacocat_arena.arena.gates import GateSettings
    from tacocat_arena.arena.hosted import HostedSettings
    from tacocat_arena.arena.ladder import LadderSettings
    from tacocat_arena.arena.players import load_tokens_file
    from tacocat_arena.arena.store import ArenaError
    from tacocat_arena.arena.submissions import UploadQuota
    from tacocat_arena.cli.arena_service import ServeOptions, serve_arena
    from tacocat_arena.launch.build import BuildSettings
    from tacocat_arena.launch.sandbox import SandboxError, SandboxMode
    from tacocat_arena.referee import ClockSettings, RefereeSettings
    from tacocat_arena.referee.stopping import Stopped, run_until_signalled
    from tacocat_arena.tournament.config import ConfigError, TournamentFormat
    from tacocat_arena.tournament.executors import ExecutorError
    from tacocat_arena.tournament.notify import check_url

    web_host, web_port = _address(web, "--web")
    if round_robin and event_format not in (None, "round_robin"):
        raise click.UsageError(f"--round-robin and --event {event_format} exclude each other")
    kind = TournamentFormat(event_format or "round_robin")
    # A Swiss named 'round-robin' (one default for both) misnamed its page and its lines.
    event_name = event_name or kind.value.replace("_", "-")
    is_event = round_robin or event_format is not None
    if is_event:
        from tacocat_arena.arena.events import event_name_problem

        if problem := event_name_problem(event_name):
            raise click.UsageError(problem)
    for flag, value in (("--rounds", rounds), ("--notify", notify), ("--start-with", start_with)):
        if value is not None and not is_event:
            raise click.UsageError(f"{flag} is for an event: add --event round_robin or swiss")
    try:
        if notify is not None:
            check_url(notify)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    try:
        tokens = load_tokens_file(tokens_file) if tokens_file else None
        referee = RefereeSettings(clock=ClockSettings.from_seconds(move_timeout, time_bank))
        ladder = LadderSettings(
            concurrency=concurrency,
            per_bot=per_bot,
            games_per_bot=games_per_bot,
            referee=referee,
            ladder=not is_event,
            independent_deals=independent_deals,
        )
        event = (
            EventSettings(
                event_name, games, late_joiners, start_after, wait, kind, rounds, notify, start_with
            )
            if is_event
            else None
        )
        tls = (tls_key.read_bytes(), tls_cert.read_bytes()) if tls_cert and tls_key else None
    except (ArenaError, ValueError, OSError) as error:
        raise click.ClickException(str(error)) from None
    if workers < 1:
        raise click.BadParameter("must be >= 1", param_hint="--workers")
    if build_timeout <= 0:
        raise click.BadParameter("must be > 0", param_hint="--build-timeout")
    hosted = HostedSettings(
        sandbox=SandboxMode(sandbox),
        build=BuildSettings(timeout_s=build_timeout),
        quota=UploadQuota(uploads_per_hour, upload_mib_per_hour * 2**20),
        gates=GateSettings(gates),
        probation_games=probation,
    )
    if pairs_per_batch is not None:
        hosted = dataclasses.replace(hosted, pairs_per_batch=pairs_per_batch)
    served = ServeOptions(
        folder, host, port, web_host, web_port, ladder, tokens, tls, event, hosted, workers, cluster
    )
    try:
        # serve_arena stops on SIGINT/SIGTERM itself (exit 0: a stop is how an arena ends);
        # run_until_signalled then ends whatever task is left with the loop still alive.
        run_until_signalled(serve_arena(served, say=lambda line: click.echo(line)))
    except (ArenaError, OSError, SandboxError, ExecutorError) as error:
        raise click.ClickException(str(error)) from None
    except Stopped as stop:  # during start-up, before the arena took the signals itself
        click.echo(f"stopped ({stop.name}) while starting; nothing was played")
        raise SystemExit(stop.exit_code) from None


@click.group()
def players() -> None:
    """Add, list and revoke the arena's players (works while `serve` runs)."""


@players.command("add")
@click.argument("name")
@DIR_OPTION
def players_add(name: str, folder: Path) -> None:
    """Register NAME and print its new token (shown only this once)."""
    from tacocat_arena.arena.players import add_player
    from tacocat_arena.arena.store import ArenaError

    with _store(folder) as store:
        try:
            token = add_player(store, name)
        except ArenaError as error:
            raise click.ClickException(str(error)) from None
    click.echo(f"player {name} added. Its token (shown only now, give it to its author):")
    click.echo(token)


@players.command("list")
@DIR_OPTION
def players_list(folder: Path) -> None:
    """The players, with when they were added or revoked."""
    with _store(folder) as store:
        found = store.players()
    if not found:
        click.echo("no players yet: tacocat-arena players add NAME")
    for player in found:
        state = "active" if player.is_active else f"revoked {player.revoked_at}"
        click.echo(f"{player.name:<24} added {player.added_at}  {state}")


@players.command("revoke")
@click.argument("name")
@DIR_OPTION
def players_revoke(name: str, folder: Path) -> None:
    """Revoke NAME's token: it can no longer connect (a running server drops it within a
    second); its games stay on the ladder."""
    from tacocat_arena.arena.store import ArenaError

    with _store(folder) as store:
        try:
            store.revoke_player(name)
        except ArenaError as error:
            raise click.ClickException(str(error)) from None
    click.echo(f"player {name} revoked")


@click.group()
def submissions() -> None:
    """Suspend and reinstate hosted versions (works while `serve` runs: it stops or plays
    them again within a second)."""


@submissions.command("suspend")
@click.argument("version", metavar="PLAYER@vN")
@DIR_OPTION
@click.option("--reason", default="", help="Why (shown to the player on its page).")
def submissions_suspend(version: str, folder: Path, reason: str) -> None:
    """Take version PLAYER@vN off the ladder, with --reason shown to its player."""
    from tacocat_arena.arena import moderation

    found = _moderate(folder, lambda subs: moderation.suspend(
        subs, *moderation.parse_ref(version), reason))  # fmt: skip
    click.echo(f"{found.identity}: {found.status} ({found.reason})")


@submissions.command("reinstate")
@click.argument("version", metavar="PLAYER@vN")
@DIR_OPTION
def submissions_reinstate(version: str, folder: Path) -> None:
    """Give suspended version PLAYER@vN back: active if its player has none, else retired
    (the player may activate it)."""
    from tacocat_arena.arena import moderation

    found = _moderate(
        folder, lambda subs: moderation.reinstate(subs, *moderation.parse_ref(version))
    )
    click.echo(f"{found.identity}: {found.status} ({found.reason})")


def _moderate(folder: Path, act: Callable[[Submissions], Version]) -> Version:
    from tacocat_arena.arena.store import ArenaError
    from tacocat_arena.arena.submissions import Submissions

    with _store(folder) as store:
        try:
            return act(Submissions(store, server=False))
        except ArenaError as error:
            raise click.ClickException(str(error)) from None


class _store:  # noqa: N801 (used as a context manager, like open)
    def __init__(self, folder: Path) -> None:
        from tacocat_arena.arena.store import ArenaStore

        try:
            self.store = ArenaStore(folder)
        except Exception as error:
            raise click.ClickException(f"cannot open the arena in {folder}: {error}") from None

    def __enter__(self) -> ArenaStore:
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path), required=False)
@click.option("--arena", "arena_url", required=True, metavar="URL", help="The arena's web page.")
@click.option("--token", required=True, envvar="TACOCAT_ARENA_TOKEN", help="Your player's token.")
@click.option("--wait", is_flag=True, help="Follow the new version until it is active or not.")
@click.option(
    "--timeout",
    default=900.0,
    show_default=True,
    metavar="SECONDS",
    help="--wait: give up after this long.",
)
@click.option(
    "--activate",
    "activate",
    type=click.IntRange(min=1),
    metavar="N",
    help="Instead of uploading: make your version N the active one (a roll-back to a version "
    "that passed the gate).",
)
def submit(
    path: Path | None, arena_url: str, token: str, wait: bool, timeout: float,
    activate: int | None,
) -> None:  # fmt: skip
    """Upload the bot package PATH (a folder with bot.toml, or a .zip/.tar.gz of one) as your
    next version.  With --wait, exit 0 once it passed the gate (active, or on probation beside
    your active version), 1 if it is rejected or suspended (printing why).  With --activate N
    (and no PATH), make your version N the active one instead."""
    from tacocat_arena.arena import uploader
    from tacocat_arena.arena.store import ArenaError
    from tacocat_arena.arena.uploader import follow, package_warnings, upload
    from tacocat_arena.launch.package import PackageError

    if activate is not None:
        if path is not None:
            raise click.UsageError("give either PATH (an upload) or --activate N, not both")
        try:
            chosen = uploader.activate(arena_url, token, activate)
        except ArenaError as error:
            raise click.ClickException(str(error)) from None
        click.echo(f"{chosen['player']} v{chosen['version']}: {chosen['status']}")
        return
    if path is None:
        raise click.UsageError("give the package PATH to upload (or --activate N)")
    for warning in package_warnings(path):
        click.echo(f"warning: {warning}", err=True)
    try:
        version = upload(path, arena_url, token)
        name = f"{version['player']} v{version['version']}"
        click.echo(f"uploaded {name} (sha256 {version['sha256'][:12]}, {version['size']} bytes)")
        for earlier in version.get("suspended", []):
            number, why = earlier["version"], earlier["reason"]
            click.echo(f"{version['player']} v{number} was suspended: {why}")
        if wait:
            version = follow(
                arena_url,
                version,
                token=token,
                timeout=timeout,
                on_status=lambda v: click.echo(f"{name}: {v['status']}"),
            )
    except (ArenaError, PackageError, OSError) as error:
        raise click.ClickException(str(error)) from None
    if version["status"] in ("rejected", "suspended", "retired"):
        click.echo(f"{name} is {version['status']}: {version['reason']}")
        if version.get("log"):
            click.echo(version["log"])
        raise SystemExit(1)
    if not wait:
        click.echo(f"{name}: {version['status']} (follow it with --wait, or GET /api/submissions)")
    elif version["status"] == "probation":
        click.echo(f"{name}: {version['reason']}")
