"""A rubric: what a grade is made of, read from TOML and checked key by key.

A rubric lists, in order, a ``[conformance]`` item (``tacocat-arena check`` passes), one
``[[tiers]]`` item per baseline (an opponent spec, a score threshold, and how sure the
grade must be: a sequential test on duplicate pairs, ``method = "sprt"``, as ``play --sprt``
runs it, or ``method = "pairs"``, a fixed number of pairs whose 95% interval must clear the
threshold), and the optional ``[decision_time]`` and ``[no_forfeits]`` items.  The default
rubric ships as package data (``data/default_rubric.toml``, docs/grading.md).

The rubric holds no secret: students may read it.  The deals are decided by the grading
run's secret (``grader.new_secret``, kept in ``secret.txt``), which stays in the teacher's
output.

Every key is checked when the rubric loads; an unknown key or a bad value is a
``RubricError`` naming it (``tiers[2].margin``), so a typo fails before any bot starts.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from tacocat_arena.launch.builtins import BuiltinError, is_builtin, parse_builtin
from tacocat_arena.launch.sandbox import SandboxMode
from tacocat_arena.referee.settings import ClockSettings
from tacocat_arena.stats.pairs import score_to_elo
from tacocat_arena.stats.sprt import Sprt

#: The file of the default rubric in the package's data.
DEFAULT_RUBRIC = "default_rubric.toml"


@dataclass(frozen=True)
class _Number:
    """A number a rubric's table may set: its key, the field of ``Rubric`` or ``Tier`` it
    fills (whose default is the key's default: written once, on the field) and its range."""

    key: str
    field: str
    low: float
    high: float
    integer: bool = False


#: The top level's numbers.
_TOP_NUMBERS = (
    _Number("move_timeout", "move_timeout_s", 0.001, 60.0),
    _Number("concurrency", "concurrency", 1, 64, integer=True),
    _Number("seed", "seed", 0, 2**63 - 1, integer=True),
    _Number("build_timeout", "build_timeout_s", 1.0, 3600.0),
)
#: A ``[[tiers]]`` table's numbers for an SPRT tier (``pairs`` is the pairs method's).
_SPRT_NUMBERS = (
    _Number("margin", "margin", 1.0, 2000.0),
    _Number("alpha", "alpha", 1e-6, 0.5),
    _Number("beta", "beta", 1e-6, 0.5),
    _Number("max_games", "max_games", 2, 100_000, integer=True),
)
_PAIRS = _Number("pairs", "pairs", 1, 10_000, integer=True)
_TOP_KEYS = ("name", "sandbox", *(number.key for number in _TOP_NUMBERS))
_SECTIONS = ("conformance", "tiers", "decision_time", "no_forfeits")
_TIER_KEYS = (
    "name",
    "opponent",
    "points",
    "threshold",
    "method",
    _PAIRS.key,
    *(number.key for number in _SPRT_NUMBERS),
    "visibility",
)
#: Gradescope's visibility values: when a student sees an item's result (its "Autograder
#: Specifications": visible, hidden, after_due_date, after_published).
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
_SLUG = re.compile(r"[^a-z0-9]+")


class RubricError(ValueError):
    """A rubric is invalid; the message names the key and says what it must be."""


class Method(enum.Enum):
    """How sure a tier's verdict is: a sequential test, or a fixed number of pairs."""

    SPRT = "sprt"
    PAIRS = "pairs"


@dataclass(frozen=True)
class Tier:
    """Beat (or hold) one baseline: ``threshold`` is the score per game asked for."""

    name: str
    opponent: str
    points: float
    threshold: float
    method: Method
    #: SPRT: H1 is ``Elo(threshold) + margin``, H0 ``Elo(threshold)``.
    margin: float = 150.0
    alpha: float = 0.05
    beta: float = 0.05
    #: Pairs method: how many duplicate pairs are played.
    pairs: int = 0
    #: The cap on games of this tier (SPRT: undecided at the cap, the LLR's sign decides).
    max_games: int = 40

    @property
    def slug(self) -> str:
        """The tier's folder name and its bot name as opponent (``beats-random``)."""
        return _SLUG.sub("-", self.name.lower()).strip("-") or "tier"

    @property
    def sprt(self) -> Sprt:
        """The sequential test of an SPRT tier."""
        elo0 = score_to_elo(self.threshold)
        return Sprt(elo0, elo0 + self.margin, self.alpha, self.beta)

    @property
    def games(self) -> int:
        """Games planned: the pairs method's pairs, or the SPRT's cap."""
        return 2 * self.pairs if self.method is Method.PAIRS else self.max_games

    def describe(self) -> str:
        """How the tier decides, in one line."""
        if self.method is Method.PAIRS:
            return (
                f"score >= {self.threshold:g} with 95% confidence over {self.pairs} duplicate pairs"
            )
        test = self.sprt
        return (
            f"SPRT H0 Elo {round(test.elo0):+d} / H1 Elo {round(test.elo1):+d} "
            f"(score {self.threshold:g}), "
            f"alpha {self.alpha:g}, beta {self.beta:g}, at most {self.max_games} games"
        )


@dataclass(frozen=True)
class Rubric:
    """A whole rubric, in grading order: conformance, the tiers, then the optional items."""

    name: str
    conformance_points: float
    tiers: tuple[Tier, ...]
    move_timeout_s: float = 1.0
    concurrency: int = 2
    seed: int = 1
    sandbox: SandboxMode = SandboxMode.AUTO
    #: Seconds a package's build may take (then it is killed and conformance fails).
    build_timeout_s: float = 300.0
    #: ``[decision_time]``: points, and the limit on the mean ms per decision (None: absent).
    decision_time: tuple[float, float] | None = None
    #: ``[no_forfeits]``: points (None: absent).
    no_forfeits_points: float | None = None
    #: Each item's Gradescope visibility by item name (``visibility = "..."`` in its
    #: table), for the items that set one; the others are "visible".
    visibility: Mapping[str, str] = field(default_factory=dict)

    @property
    def clock(self) -> ClockSettings:
        """The clock of the check and of every game: ``move_timeout`` (seconds, as a rubric
        writes it) made the protocol's milliseconds once, here."""
        return ClockSettings.from_seconds(self.move_timeout_s)

    @property
    def max_points(self) -> float:
        """What a perfect bot scores."""
        total = self.conformance_points + sum(tier.points for tier in self.tiers)
        if self.decision_time is not None:
            total += self.decision_time[0]
        return total + (self.no_forfeits_points or 0.0)

    @property
    def max_games(self) -> int:
        """The most games a grade can take (every tier to its cap)."""
        return sum(tier.games for tier in self.tiers)


def load_rubric(path: Path | None) -> Rubric:
    """The rubric in ``path``, or the default one; RubricError naming the key at fault."""
    if path is None:
        text = resources.files("tacocat_arena.data").joinpath(DEFAULT_RUBRIC).read_text("utf-8")
        where = f"the default rubric ({DEFAULT_RUBRIC})"
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise RubricError(f"rubric {path}: cannot read it: {error}") from None
        where = f"rubric {path}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RubricError(f"{where}: not valid TOML: {error}") from None
    try:
        return parse_rubric(data)
    except RubricError as error:
        raise RubricError(f"{where}: {error}") from None


def parse_rubric(data: Mapping[str, Any]) -> Rubric:
    """A ``Rubric`` from a parsed TOML table (``load_rubric``'s second half)."""
    _known(data, (*_TOP_KEYS, *_SECTIONS), "")
    conformance = _table(data, "conformance")
    if conformance is None:
        raise RubricError("[conformance] is required (points = N): grading starts with check")
    _known(conformance, ("points", "visibility"), "conformance.")
    tiers_data = data.get("tiers", [])
    if not isinstance(tiers_data, list) or not all(isinstance(t, dict) for t in tiers_data):
        raise RubricError("tiers: must be an array of tables ([[tiers]])")
    tiers = tuple(_tier(tier, index) for index, tier in enumerate(tiers_data))
    slugs = [tier.slug for tier in tiers]
    for slug in slugs:
        if slugs.count(slug) > 1:
            raise RubricError(f"tiers: two tiers are both named like {slug!r}: rename one")
    decision = _table(data, "decision_time")
    decision_time = None
    if decision is not None:
        _known(decision, ("points", "mean_ms", "visibility"), "decision_time.")
        decision_time = (
            _points(decision, "decision_time."),
            _number(decision, "mean_ms", "decision_time.", low=0.0, required=True),
        )
    forfeits = _table(data, "no_forfeits")
    if forfeits is not None:
        _known(forfeits, ("points", "visibility"), "no_forfeits.")
    name = data.get("name", "grade")
    if not isinstance(name, str) or not name.strip():
        raise RubricError(f"name: must be a non-empty string, got {name!r}")
    sandbox_text = data.get("sandbox", "auto")
    try:
        sandbox = SandboxMode(sandbox_text)
    except ValueError:
        modes = ", ".join(mode.value for mode in SandboxMode)
        raise RubricError(f"sandbox: must be one of {modes}, got {sandbox_text!r}") from None
    return Rubric(
        name=name.strip(),
        conformance_points=_points(conformance, "conformance."),
        tiers=tiers,
        **_numbers(data, _TOP_NUMBERS, Rubric, ""),
        sandbox=sandbox,
        decision_time=decision_time,
        no_forfeits_points=None if forfeits is None else _points(forfeits, "no_forfeits."),
        visibility=_visibilities(conformance, tiers_data, tiers, decision, forfeits),
    )


def _visibilities(
    conformance: Mapping[str, Any],
    tiers_data: list[Mapping[str, Any]],
    tiers: tuple[Tier, ...],
    decision: Mapping[str, Any] | None,
    forfeits: Mapping[str, Any] | None,
) -> dict[str, str]:
    """Item name -> the Gradescope visibility its table sets (items' names as grades name
    them: "conformance", each tier's, "decision time", "no forfeits")."""
    tables: list[tuple[str, str, Mapping[str, Any] | None]] = [
        ("conformance", "conformance.", conformance),
        *(
            (tier.name, f"tiers[{i}].", data)
            for i, (tier, data) in enumerate(zip(tiers, tiers_data, strict=True))
        ),
        ("decision time", "decision_time.", decision),
        ("no forfeits", "no_forfeits.", forfeits),
    ]
    found = {}
    for item, where, table in tables:
        if table is None or "visibility" not in table:
            continue
        value = table["visibility"]
        if value not in VISIBILITIES:
            raise RubricError(
                f"{where}visibility: must be one of {', '.join(VISIBILITIES)} (Gradescope's), "
                f"got {value!r}"
            )
        found[item] = value
    return found


def _tier(data: Mapping[str, Any], index: int) -> Tier:
    where = f"tiers[{index}]."
    _known(data, _TIER_KEYS, where)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RubricError(f'{where}name: required, a non-empty string ("beats random")')
    opponent = data.get("opponent")
    if not isinstance(opponent, str) or not is_builtin(opponent):
        raise RubricError(
            f'{where}opponent: must be a baseline spec such as "builtin:greedy", got {opponent!r}'
        )
    try:
        parse_builtin(opponent)
    except BuiltinError as error:
        raise RubricError(f"{where}opponent: {error}") from None
    method_text = data.get("method", "sprt")
    try:
        method = Method(method_text)
    except ValueError:
        raise RubricError(
            f'{where}method: must be "sprt" or "pairs", got {method_text!r}'
        ) from None
    threshold = _number(data, "threshold", where, low=0.01, high=0.99, required=True)
    if method is Method.PAIRS:
        if "pairs" not in data:
            raise RubricError(f'{where}pairs: required with method = "pairs" (how many pairs)')
        for number in _SPRT_NUMBERS:
            if number.key in data:
                raise RubricError(f'{where}{number.key}: only for method = "sprt"')
        pairs = int(_numbers(data, (_PAIRS,), Tier, where)["pairs"])
        numbers = {"pairs": pairs, "max_games": 2 * pairs}
    else:
        if "pairs" in data:
            raise RubricError(f'{where}pairs: only for method = "pairs" (an SPRT has max_games)')
        numbers = _numbers(data, _SPRT_NUMBERS, Tier, where)
        if numbers["max_games"] % 2:
            raise RubricError(f"{where}max_games: must be even (a duplicate pair is 2 games)")
    tier = Tier(
        name=name.strip(),
        opponent=opponent,
        points=_points(data, where),
        threshold=threshold,
        method=method,
        **numbers,
    )
    if len(tier.slug) > 62:  # it names the tier's bot: BotSpec.checked's 62 characters
        raise RubricError(f"{where}name: at most 62 letters and digits, got {len(tier.slug)}")
    if method is Method.SPRT:
        try:
            tier.sprt  # noqa: B018 -- built once here so a bad test fails at load
        except ValueError as error:
            raise RubricError(f"{where}: {error}") from None
    return tier


def _known(data: Mapping[str, Any], keys: tuple[str, ...], where: str) -> None:
    for key in data:
        if key not in keys:
            raise RubricError(f"{where}{key}: unknown key (known here: {', '.join(keys)})")


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise RubricError(f"{key}: must be a table ([{key}])")
    return value


def _points(data: Mapping[str, Any], where: str) -> float:
    return _number(data, "points", where, low=0.0, high=10_000.0, required=True)


def _numbers(
    data: Mapping[str, Any], numbers: tuple[_Number, ...], cls: type, where: str
) -> dict[str, Any]:
    """The fields ``numbers`` fill, from ``data`` or else the field's default on ``cls``."""
    defaults: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(cls)}
    found: dict[str, Any] = {}
    for n in numbers:
        if n.integer:
            found[n.field] = _integer(
                data, n.key, where, low=int(n.low), high=int(n.high), default=defaults[n.field]
            )
        else:
            found[n.field] = _number(
                data, n.key, where, low=n.low, high=n.high, default=defaults[n.field]
            )
    return found


def _number(
    data: Mapping[str, Any],
    key: str,
    where: str,
    *,
    low: float,
    high: float = math.inf,
    default: float = 0.0,
    required: bool = False,
) -> float:
    if key not in data:
        if required:
            raise RubricError(f"{where}{key}: required")
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RubricError(f"{where}{key}: must be a number, got {value!r}")
    if not low <= value <= high:
        raise RubricError(f"{where}{key}: must be in [{low:g}, {high:g}], got {value!r}")
    return float(value)


def _integer(
    data: Mapping[str, Any], key: str, where: str, *, low: int, high: int, default: int
) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RubricError(f"{where}{key}: must be an integer, got {value!r}")
    if not low <= value <= high:
        raise RubricError(f"{where}{key}: must be in [{low}, {high}], got {value}")
    return value
