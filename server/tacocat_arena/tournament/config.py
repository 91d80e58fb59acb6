"""Tournament configuration: a TOML file, defaults, and command-line overrides.

Every field is checked at load with a message naming it, so a broken config fails before any
bot starts.  See docs/tournaments.md for the file format.
"""

from __future__ import annotations

import enum
import hashlib
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from tacocat_arena.engine import DEFAULT_RULESET, Ruleset, RulesetError
from tacocat_arena.launch.builtins import BUILTINS
from tacocat_arena.launch.sandbox import Limits, SandboxMode, env_refusal
from tacocat_arena.launch.spec import BotSpec, ConfigError
from tacocat_arena.referee.settings import (
    DEFAULT_GRACE_MS,
    ClockSettings,
    FailurePolicy,
    RefereeSettings,
)

#: The suffix of a bot's twin instance (``NAME~B``), which plays the second game of each pair
#: (``tournament.runner``).
TWIN_SUFFIX = "~B"

#: The example bots that ``builtin:NAME`` names, as importable modules (launch/builtins.py
#: holds them with their options).
BUILTIN_BOTS = {name: builtin.module for name, builtin in BUILTINS.items()}


_E = TypeVar("_E", bound=enum.Enum)


class TournamentFormat(enum.Enum):
    """Who plays whom: everyone everyone (round robin), one bot everyone (gauntlet), rounds
    of bots of equal score (Swiss, ``tournament.swiss``), a bracket (``tournament.knockout``)
    or round robins of a field cut stage by stage (finals, ``tournament.finals``)."""

    ROUND_ROBIN = "round_robin"
    GAUNTLET = "gauntlet"
    SWISS = "swiss"
    KNOCKOUT = "knockout"
    FINALS = "finals"


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that defines a tournament.  ``fingerprint`` covers what decides its games,
    so ``--resume`` can refuse to mix two different tournaments in one database."""

    bots: tuple[BotSpec, ...]
    games_per_pairing: int = 10
    seed: int = 1
    concurrency: int = 4
    move_timeout_s: float = 1.0
    time_bank_s: float = 0.0
    grace_ms: int = DEFAULT_GRACE_MS
    failure_policy: FailurePolicy = FailurePolicy.FORFEIT
    ruleset: Ruleset = DEFAULT_RULESET
    out: Path = Path("tacocat-results")
    connect_timeout_s: float = 30.0
    max_restarts: int = 3
    name: str = ""  # the event's name in reports; "" = the output folder's name
    base_dir: Path = field(default_factory=Path.cwd)
    #: Debug mode (``--debug``): the bots' output goes to the terminal, not to their logs.
    debug: bool = False
    format: TournamentFormat = TournamentFormat.ROUND_ROBIN
    #: The bot that plays every other in a gauntlet (None: the first bot listed).
    gauntlet_bot: str | None = None
    #: A Swiss event's rounds (None: ``swiss_rounds``' default, ceil(log2(bots))).
    rounds: int | None = None
    #: A knockout match's extra duplicate pairs at most while it is level (None: 4).
    extra_pairs: int | None = None
    #: Finals (``tournament.finals``): the share of the field dropped after each stage, the
    #: places whose order is to be decided, the confidence that decides it, whether to play
    #: on until it is decided, and the stages at most (None: ``FINALS_DEFAULTS``).
    cut: float | None = None
    top: int | None = None
    confidence: float | None = None
    until_stable: bool = False
    max_stages: int | None = None
    sandbox: SandboxMode = SandboxMode.AUTO
    limits: Limits = field(default_factory=Limits)
    #: Each bot's log is kept to about this size, the oldest part dropped.
    log_limit_kib: int = 1024
    #: Keep each started bot's output of each game, its last this many KiB, in
    #: ``OUT/output/PROCESS/GAME.json`` (``launch.game_output``; 0: not kept).  The arena's
    #: hosted batches keep it for the versions' authors.
    game_output_kib: int = 0
    #: Play the two games of a duplicate deal with two processes of each bot (A and B), so
    #: no process ever holds a hand it will face as its opponent's.
    twins: bool = True
    #: The config file itself (hidden from sandboxed bots), if there is one.
    config_file: Path | None = None
    #: The referee's clock as a caller already holds it (the arena's hosted batches: its
    #: ``ClockSettings``), so it reaches the referee in milliseconds as given, with no trip
    #: through seconds.  When set, ``move_timeout_s``, ``time_bank_s`` and ``grace_ms`` are
    #: its figures (what the records and ``verify`` read), whatever else was passed.
    clock: ClockSettings | None = None

    def __post_init__(self) -> None:
        if self.clock is not None:
            object.__setattr__(self, "move_timeout_s", self.clock.decision_ms / 1000)
            object.__setattr__(self, "time_bank_s", self.clock.bank_ms / 1000)
            object.__setattr__(self, "grace_ms", self.clock.grace_ms)
        if len(self.bots) < 2:
            raise ConfigError(
                "a tournament needs at least two bots: add them under [[bots]] in the config "
                "or with --bot NAME=COMMAND",
                key="bots",
            )
        names = [b.name for b in self.bots]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(
                f"bot names must be unique; repeated: {', '.join(duplicates)}", key="bots"
            )
        seen: dict[str, tuple[str, str]] = {}  # game ids join the seats' names with '-'
        for pair in ((a, b) for a in names for b in names if a != b):
            other = seen.setdefault("-".join(pair), pair)
            if other != pair:  # e.g. "a-b" + "c" and "a" + "b-c"
                raise ConfigError(
                    f"bots {pair[0]!r} and {pair[1]!r} would share game ids with {other[0]!r} "
                    f"and {other[1]!r} (ids join the names with '-'): rename one of them",
                    key="bots",
                )
        if self.games_per_pairing < 2 or self.games_per_pairing % 2:
            raise ConfigError(
                f"games: must be an even number >= 2 (each deal is played twice, seats "
                f"swapped); got {self.games_per_pairing}",
                key="games",
            )
        if not 0 <= self.seed < 2**63:
            raise ConfigError(
                f"seed: must be an integer in [0, 2**63), got {self.seed}", key="seed"
            )
        if self.concurrency < 1:
            raise ConfigError(
                f"concurrency: must be >= 1, got {self.concurrency}", key="concurrency"
            )
        if not 0 <= self.move_timeout_s <= 3600:
            raise ConfigError(
                f"move_timeout: must be in [0, 3600] seconds (0 = no limit, for debugging), "
                f"got {self.move_timeout_s}",
                key="move_timeout",
            )
        for bot in self.bots:
            if bot.move_timeout_s is not None and not 0 <= bot.move_timeout_s <= 3600:
                raise ConfigError(
                    f"bot {bot.name!r}: its move_timeout must be in [0, 3600] seconds, got "
                    f"{bot.move_timeout_s}",
                    key="bots",
                )
        if self.time_bank_s < 0:
            raise ConfigError(
                f"time_bank: must be >= 0 seconds, got {self.time_bank_s}", key="time_bank"
            )
        if self.grace_ms < 0:
            raise ConfigError(
                f"grace_ms: must be >= 0 milliseconds, got {self.grace_ms}", key="grace_ms"
            )
        if self.max_restarts < 0:
            raise ConfigError(
                f"max_restarts: must be >= 0, got {self.max_restarts}", key="max_restarts"
            )
        if self.log_limit_kib < 4:
            raise ConfigError(
                f"log_limit_kib: must be >= 4, got {self.log_limit_kib}", key="log_limit_kib"
            )
        self._check_format(names)

    def _check_format(self, names: Sequence[str]) -> None:
        if self.gauntlet_bot is not None and self.format is not TournamentFormat.GAUNTLET:
            raise ConfigError(
                f'gauntlet_bot {self.gauntlet_bot!r} is set, but format is not "gauntlet"',
                key="gauntlet_bot",
            )
        if self.rounds is not None and self.format is not TournamentFormat.SWISS:
            raise ConfigError(
                f'rounds {self.rounds} is set, but format is not "swiss"', key="rounds"
            )
        if self.extra_pairs is not None and self.format is not TournamentFormat.KNOCKOUT:
            raise ConfigError(
                f'extra_pairs {self.extra_pairs} is set, but format is not "knockout"',
                key="extra_pairs",
            )
        if not 0 <= self.knockout_extra_pairs <= 1000:
            raise ConfigError(
                f"extra_pairs: must be in [0, 1000], got {self.extra_pairs}", key="extra_pairs"
            )
        self._check_finals(names)
        if self.format is TournamentFormat.SWISS:
            # A bye each for an odd field, else no two bots meeting twice (tournament.swiss).
            most = swiss_max_rounds(len(names))
            if not 1 <= self.swiss_rounds <= most:
                raise ConfigError(
                    f"rounds: a Swiss of {len(names)} bots plays 1 to {most} rounds (no two "
                    f"bots meet twice), got {self.swiss_rounds}",
                    key="rounds",
                )
        if self.gauntlet_bot is not None and self.gauntlet_bot not in names:
            raise ConfigError(
                f"gauntlet_bot: {self.gauntlet_bot!r} is not one of the bots ({', '.join(names)})",
                key="gauntlet_bot",
            )

    def _check_finals(self, names: Sequence[str]) -> None:
        given = {
            key: value
            for key, value in (
                ("cut", self.cut),
                ("top", self.top),
                ("confidence", self.confidence),
                ("max_stages", self.max_stages),
                ("until_stable", self.until_stable or None),
            )
            if value is not None
        }
        if given and self.format is not TournamentFormat.FINALS:
            key = next(iter(given))
            raise ConfigError(f'{key} is set, but format is not "finals"', key=key)
        if self.format is not TournamentFormat.FINALS:
            return
        settings = self.finals
        if not 0 < settings.cut < 1:
            raise ConfigError(
                f"cut: the share of the field dropped after a stage, in (0, 1), got "
                f"{settings.cut:g}",
                key="cut",
            )
        if not 1 <= settings.top <= len(names):
            raise ConfigError(
                f"top: the places whose order the finals decide, 1 to {len(names)} (the bots), "
                f"got {settings.top}",
                key="top",
            )
        if not 0.5 <= settings.confidence < 1:
            raise ConfigError(
                f"confidence: a likelihood of superiority in [0.5, 1), got {settings.confidence:g}",
                key="confidence",
            )
        if not 1 <= settings.max_stages <= 100:
            raise ConfigError(f"max_stages: 1 to 100, got {settings.max_stages}", key="max_stages")

    @property
    def finals(self) -> FinalsSettings:
        """The finals' settings, defaults filled in."""
        return FinalsSettings(
            cut=FINALS_DEFAULTS.cut if self.cut is None else float(self.cut),
            top=min(FINALS_DEFAULTS.top, len(self.bots)) if self.top is None else self.top,
            confidence=(
                FINALS_DEFAULTS.confidence if self.confidence is None else float(self.confidence)
            ),
            until_stable=self.until_stable,
            max_stages=FINALS_DEFAULTS.max_stages if self.max_stages is None else self.max_stages,
        )

    @property
    def gauntlet_name(self) -> str:
        """The bot that plays everyone in a gauntlet: ``gauntlet_bot`` or the first bot."""
        return self.gauntlet_bot or self.bots[0].name

    @property
    def swiss_rounds(self) -> int:
        """A Swiss event's rounds: ``rounds``, or ceil(log2(bots)), enough for one bot to be
        left unbeaten."""
        if self.rounds is not None:
            return self.rounds
        return max(1, (len(self.bots) - 1).bit_length())

    @property
    def knockout_extra_pairs(self) -> int:
        """A knockout match's extra pairs at most while level: ``extra_pairs``, or 4."""
        return 4 if self.extra_pairs is None else self.extra_pairs

    @property
    def referee_settings(self) -> RefereeSettings:
        """The referee settings these options describe."""
        return RefereeSettings(
            clock=self.clock
            or ClockSettings.from_seconds(
                self.move_timeout_s, self.time_bank_s, grace_ms=self.grace_ms
            ),
            failure_policy=self.failure_policy,
            # A bot's own clock holds for its twin instance too (runner.TWIN_SUFFIX).
            allowances=tuple(
                (ident, round(bot.move_timeout_s * 1000))
                for bot in self.bots
                if bot.move_timeout_s is not None
                for ident in (bot.name, bot.name + TWIN_SUFFIX)
            ),
        )

    def _own_clocks(self) -> dict[str, float]:
        """The bots with an allowance of their own (``BotSpec.move_timeout_s``), in seconds."""
        return {b.name: b.move_timeout_s for b in self.bots if b.move_timeout_s is not None}

    @property
    def event_name(self) -> str:
        """The name reports give the event: ``name``, or else the output folder's name."""
        return self.name or self.out.name

    def fingerprint(self) -> str:
        """A hash of what decides the games: bots, games, seed, clocks, policy, ruleset."""
        data = {
            "bots": [[b.name, b.command, *b.args] for b in self.bots],
            "games": self.games_per_pairing,
            "seed": self.seed,
            "move_timeout": self.move_timeout_s,
            "time_bank": self.time_bank_s,
            "failure_policy": self.failure_policy.value,
            "ruleset": self.ruleset.to_dict(),
        }
        if self.format is TournamentFormat.GAUNTLET:  # absent for a round robin, as before
            data["gauntlet"] = self.gauntlet_name
        if own := self._own_clocks():  # absent when no bot has its own, as before
            data["bot_move_timeout"] = own
        if self.format is TournamentFormat.SWISS:
            data["swiss_rounds"] = self.swiss_rounds
        if self.format is TournamentFormat.KNOCKOUT:
            data["knockout_extra_pairs"] = self.knockout_extra_pairs
        if self.format is TournamentFormat.FINALS:
            data["finals"] = asdict(self.finals)
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        """Metadata for reports (the seed is revealed there: the tournament is over)."""
        return {
            "bots": {b.name: b.command for b in self.bots},
            # With the commands, what the fingerprint hashes: ``verify`` re-derives it.
            **(
                {"bot_args": {b.name: list(b.args) for b in self.bots if b.args}}
                if any(b.args for b in self.bots)
                else {}
            ),
            **({"bot_move_timeout_s": own} if (own := self._own_clocks()) else {}),
            "games_per_pairing": self.games_per_pairing,
            "seed": self.seed,
            "concurrency": self.concurrency,
            "move_timeout_s": self.move_timeout_s,
            "time_bank_s": self.time_bank_s,
            "grace_ms": self.grace_ms,
            "failure_policy": self.failure_policy.value,
            "ruleset": self.ruleset.to_dict(),
            "fingerprint": self.fingerprint(),
            "name": self.event_name,
            **(
                {"format": self.format.value, "gauntlet_bot": self.gauntlet_name}
                if self.format is TournamentFormat.GAUNTLET
                else {}
            ),
            **(
                {"format": self.format.value, "rounds": self.swiss_rounds}
                if self.format is TournamentFormat.SWISS
                else {}
            ),
            **(
                {"format": self.format.value, "extra_pairs": self.knockout_extra_pairs}
                if self.format is TournamentFormat.KNOCKOUT
                else {}
            ),
            **(
                {"format": self.format.value, **asdict(self.finals)}
                if self.format is TournamentFormat.FINALS
                else {}
            ),
        }


@dataclass(frozen=True)
class FinalsSettings:
    """A finals event's settings (``tournament.finals`` says what each does)."""

    cut: float
    top: int
    confidence: float
    until_stable: bool
    max_stages: int


#: The finals' defaults: drop half the field a stage, decide a podium (of a field of three
#: bots or more) at 95%, 10 stages.
FINALS_DEFAULTS = FinalsSettings(cut=0.5, top=3, confidence=0.95, until_stable=False, max_stages=10)


def swiss_max_rounds(bots: int) -> int:
    """The most rounds a Swiss of ``bots`` plays: as many as let no two bots meet twice (an
    odd field has a bye each round, at most one per bot)."""
    return bots - 1 if bots % 2 == 0 else bots


@dataclass(frozen=True)
class _Key:
    """A top-level config key read as a plain value: its TOML name, the field it sets, the
    TOML types it takes and the command-line option that overrides it, if any."""

    toml: str
    field: str
    kind: type | tuple[type, ...]
    option: str | None = None


_NUMBER = (int, float)

#: The one table of config keys: the plain ones here (their defaults are the fields'
#: defaults), the others read by ``load_config`` each in its own way.
_PLAIN_KEYS = (
    _Key("games", "games_per_pairing", int, "--games"),
    _Key("seed", "seed", int, "--seed"),
    _Key("concurrency", "concurrency", int, "--concurrency"),
    _Key("move_timeout", "move_timeout_s", _NUMBER, "--move-timeout"),
    _Key("time_bank", "time_bank_s", _NUMBER, "--time-bank"),
    _Key("grace_ms", "grace_ms", int),
    _Key("connect_timeout", "connect_timeout_s", _NUMBER),
    _Key("max_restarts", "max_restarts", int),
    _Key("name", "name", str),
    _Key("log_limit_kib", "log_limit_kib", int),
    _Key("twins", "twins", bool),
    _Key("out", "out", str),
    _Key("sandbox", "sandbox", str),
    _Key("failure_policy", "failure_policy", str),
    _Key("format", "format", str),
    _Key("gauntlet_bot", "gauntlet_bot", str, "--gauntlet"),
    _Key("rounds", "rounds", int, "--rounds"),
    _Key("extra_pairs", "extra_pairs", int),
    _Key("cut", "cut", _NUMBER, "--cut"),
    _Key("top", "top", int, "--top"),
    _Key("confidence", "confidence", _NUMBER, "--confidence"),
    _Key("until_stable", "until_stable", bool, "--until-stable"),
    _Key("max_stages", "max_stages", int, "--max-stages"),
)
_KEYS = {key.toml for key in _PLAIN_KEYS} | {"bots", "ruleset", "limits"}
#: Config keys that a command-line option can set: the option and the field it overrides.
_OPTIONS = {key.toml: (key.option, key.field) for key in _PLAIN_KEYS if key.option}


def _defaults() -> dict[str, Any]:
    """Each plain key's default, as TOML would write it (from TournamentConfig's fields)."""
    values = {f.name: f.default for f in fields(TournamentConfig)}
    plain = {
        key.toml: values[key.field].value
        if isinstance(values[key.field], enum.Enum)
        else values[key.field]
        for key in _PLAIN_KEYS
    }
    plain["out"] = str(plain["out"])
    return plain


def load_config(
    path: Path | None,
    overrides: Mapping[str, Any],
    extra_bots: Sequence[str],
    *,
    external_ok: bool = False,
) -> TournamentConfig:
    """Read ``path`` (or the demo config shipped with the package when None), then apply the
    command-line ``overrides`` (non-None values win) and ``--bot`` flags (they replace the
    file's bots).  ``external_ok`` admits bots without a command (they connect by
    themselves, as under ``tacocat-arena serve``)."""
    if path is None:
        text = resources.files("tacocat_arena").joinpath("data/demo.toml").read_text()
        source, base_dir = "the built-in demo config", Path.cwd()
    else:
        try:
            text = path.read_text()
        except OSError as error:
            raise ConfigError(f"cannot read config {path}: {error.strerror}") from None
        source, base_dir = str(path), path.resolve().parent
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source} is not valid TOML: {error}") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{source}: unknown key {unknown[0]!r}; known keys are {', '.join(sorted(_KEYS))}"
        )
    limits = _limits(data.get("limits", {}), Limits(), f"{source} [limits]")
    entries = data.get("bots", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{source}: bots must be a list of [[bots]] tables")
    bots = [
        _bot_from_toml(entry, index, source, external_ok, base_dir, limits)
        for index, entry in enumerate(entries)
    ]
    if extra_bots:
        bots = [BotSpec.parse(text, external_ok=external_ok) for text in extra_bots]
    if not isinstance(data.get("ruleset", {}), Mapping):
        raise ConfigError(f"{source}: ruleset must be a table ([ruleset] with its fields)")
    try:
        # from_dict, not DEFAULT_RULESET.with_overrides: hand_sizes alone gets default arrows.
        ruleset = Ruleset.from_dict(data.get("ruleset", {}))
    except RulesetError as error:
        raise ConfigError(f"{source} [ruleset] {error}") from None
    defaults = _defaults()
    plain = {
        key.field: _typed(data, key.toml, key.kind, defaults[key.toml], source)
        for key in _PLAIN_KEYS
        if key.toml in data or defaults[key.toml] is not None
    }
    for number in ("move_timeout_s", "time_bank_s", "connect_timeout_s"):
        plain[number] = float(plain[number])
    values: dict[str, Any] = {
        **plain,
        "bots": tuple(bots),
        "ruleset": ruleset,
        "out": Path(plain["out"]),
        "base_dir": base_dir,
        "sandbox": _sandbox(plain["sandbox"], source),
        "limits": limits,
        "config_file": path.resolve() if path is not None else None,
        "failure_policy": _choice(FailurePolicy, plain["failure_policy"], "failure_policy", source),
        "format": _choice(TournamentFormat, plain["format"], "format", source),
    }
    if path is not None and not values["out"].is_absolute():
        values["out"] = base_dir / values["out"]  # like the bots' commands: the config's folder
    for key, value in overrides.items():
        if value is not None:
            values[key] = value
    try:
        return TournamentConfig(**values)
    except ConfigError as error:
        raise ConfigError(
            _where(error, source, overrides, bool(extra_bots)), key=error.key
        ) from None


def _where(
    error: ConfigError, source: str, overrides: Mapping[str, Any], bots_from_flags: bool
) -> str:
    """``error``'s message with where the bad value came from: an option, or the file."""
    option, field_name = _OPTIONS.get(error.key or "", ("", ""))
    if option and overrides.get(field_name) is not None:
        return f"{error} (from {option})"
    if error.key == "bots" and bots_from_flags:
        return f"{error} (from --bot)"
    return f"{source}: {error}"


_CHOICES_TEXT = {
    "failure_policy": "'forfeit' or 'default_action'",
    "format": "'round_robin', 'gauntlet', 'swiss', 'knockout' or 'finals'",
}


def _choice(kind: type[_E], value: str, key: str, source: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        raise ConfigError(
            f"{source}: {key} {value!r} must be {_CHOICES_TEXT[key]}", key=key
        ) from None


def with_out(config: TournamentConfig, out: Path) -> TournamentConfig:
    """A copy writing to ``out``."""
    return replace(config, out=out)


def _typed(data: Mapping[str, Any], key: str, kind: Any, default: Any, source: str) -> Any:
    value = data.get(key, default)
    if kind is bool and isinstance(value, bool):
        return value
    if isinstance(value, bool) or not isinstance(value, kind):
        if kind is int and isinstance(value, float):
            # TOML tells 2 from 2.0; a user who wrote the latter meant the former.
            hint = f"{key} = {int(value)}" if value.is_integer() else f"{key} = 10"
            raise ConfigError(
                f"{source}: {key} must be a whole number written without a decimal point "
                f"(e.g. {hint}), got {value!r}"
            )
        expected = {int: "an integer", str: "a string"}.get(kind, "a number")
        raise ConfigError(f"{source}: {key} must be {expected}, got {value!r}")
    return value


#: The keys of a ``[[bots]]`` entry: the two it must have, then its options.
_BOT_KEYS = ("name", "command")
_BOT_OPTIONS = ("dir", "env", "args", "sandbox", "limits", "writable_dir")


def _sandbox(text: str, source: str) -> SandboxMode:
    try:
        return SandboxMode(text)
    except ValueError:
        raise ConfigError(f"{source}: sandbox {text!r} must be 'auto', 'bwrap' or 'none'") from None


def _limits(data: Any, base: Limits, source: str) -> Limits:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: limits must be a table (memory_mib, processes, open_files)")
    unknown = sorted(set(data) - {"memory_mib", "processes", "open_files"})
    if unknown:
        raise ConfigError(
            f"{source}: unknown limit {unknown[0]!r}; the limits are memory_mib, processes "
            "and open_files"
        )
    try:
        return replace(base, **data)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{source}: {error}") from None


def _bot_from_toml(
    entry: Any, index: int, source: str, external_ok: bool, base_dir: Path, limits: Limits
) -> BotSpec:
    """The ``index``-th ``[[bots]]`` entry (from 0), every error naming the file and entry;
    options default to the tournament's (``limits`` are the tournament's limits)."""
    if not isinstance(entry, Mapping):
        raise ConfigError(
            f'{source}: bots[{index}] must be a [[bots]] table with name = "..." and '
            'command = "..."'
        )
    label = f"[[bots]] entry {entry['name']!r}" if "name" in entry else f"bots[{index}]"
    unknown = sorted(set(entry) - set(_BOT_KEYS) - set(_BOT_OPTIONS))
    if unknown:
        raise ConfigError(
            f"{source}: {label}: unknown key {unknown[0]!r}; a bot has {' and '.join(_BOT_KEYS)}"
            f", and optionally {', '.join(_BOT_OPTIONS)}"
        )
    for key in _BOT_KEYS:
        if not isinstance(entry.get(key, ""), str):
            raise ConfigError(f"{source}: {label}: {key} must be a string, got {entry[key]!r}")
    try:
        spec = BotSpec.checked(
            entry.get("name", ""), entry.get("command", ""), external_ok=external_ok
        )
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    where = f"{source}: {label}"
    env = entry.get("env", {})
    if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
        raise ConfigError(f'{where}: env must be a table of strings, e.g. env = {{ LEVEL = "3" }}')
    for name, value in env.items():  # the rule of bot.toml's [env] (launch.sandbox)
        if why := env_refusal(name, value):
            raise ConfigError(f"{where}: {why}")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f'{where}: args must be a list of strings, e.g. args = ["--level", "3"]')
    folder = None
    if "dir" in entry:
        folder = (base_dir / _typed(entry, "dir", str, ".", where)).resolve()
        if not folder.is_dir():
            raise ConfigError(f"{where}: dir {folder} is not a folder")
    bot_limits = None
    if "limits" in entry:
        bot_limits = _limits(entry["limits"], limits, f"{where}: limits")
    sandbox = None
    if "sandbox" in entry:
        sandbox = _sandbox(_typed(entry, "sandbox", str, "auto", where), where)
    return replace(
        spec,
        dir=folder,
        env=tuple(sorted(env.items())),
        args=tuple(args),
        sandbox=sandbox,
        limits=bot_limits,
        writable_dir=_typed(entry, "writable_dir", bool, False, where),
    )
