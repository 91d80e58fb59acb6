"""How a version's status changes after its gate: probation, the organizer's suspensions, a
player's roll-back, a revoked player.  One place for these rules; the arena (``hosted``), the
web API (``web/organizer.py``) and the command line (``submissions suspend|reinstate``, run
beside a live arena: it writes the rows, the arena notices within ``PLAYERS_POLL_S``) call it.

The rules (docs/submissions.md says them to players):

- **Probation.**  A version that passes the gate while its player has an ``active`` one is
  ``probation``: it plays on the ladder *beside* the active one (the two never meet:
  ``matchmaking.same_player``) for ``probation_games`` games.  Once it has played them and
  is still in probation, it becomes ``active`` and the old one ``retired``.  Suspended
  meanwhile (its own crashes, or the organizer), it retires nothing: the old one plays on.
  A player with no active version (its first upload, or its active one suspended) gets the
  new one ``active`` at once.  A newer version passing its gate retires one still in
  probation.
- **Suspend** (organizer): an active, probation or retired version is taken off the ladder,
  with the organizer's reason, which the player sees (``reason``).  **Reinstate** gives a
  suspended version back: ``active`` if its player has no active version, else ``retired``
  (the player may activate it).
- **Activate** (the player, or the organizer): any version of the player that passed the
  gate and is not suspended (``retired``, ``probation``, ``active``; ``revoked`` once the
  player is registered again) becomes ``active``; the active one and any version in
  probation are retired.  A suspended version needs the organizer's reinstate first.
- **Revoke** (a player): every version of the player that passed the gate is ``revoked`` and
  stops playing at once; a version still in its gate is revoked when the gate ends.
"""

from __future__ import annotations

from tacocat_arena.arena.store import ArenaError, NotFound
from tacocat_arena.arena.submissions import Status, Submissions, Version, parse_identity

#: Where an organizer's or a player's action on a version may start from.
SUSPENDABLE = frozenset({Status.ACTIVE, Status.PROBATION, Status.RETIRED})
ACTIVATABLE = frozenset({Status.RETIRED, Status.PROBATION, Status.ACTIVE, Status.REVOKED})
#: Statuses ``revoke_versions`` moves to ``revoked`` (never-played versions stay as they are).
REVOCABLE = frozenset({Status.ACTIVE, Status.PROBATION, Status.RETIRED, Status.SUSPENDED})
#: Longest organizer's reason kept (it is shown on the player's page).
REASON_CHARS = 500


class NoSuchVersion(NotFound):
    """The version named does not exist."""


class NotAllowed(ArenaError):
    """The version exists but the action does not apply to it now (a conflict, 409); the
    message says its status and what would."""


def find(submissions: Submissions, player: str, number: int) -> Version:
    """``player``'s version ``number``, or NoSuchVersion."""
    version = submissions.get(player, number)
    if version is None:
        raise NoSuchVersion(f"no version {number} of player {player!r}")
    return version


def parse_ref(text: str) -> tuple[str, int]:
    """``PLAYER@vN`` as ``(player, N)``; ArenaError naming the form otherwise."""
    found = parse_identity(text)
    if found is None or len(text) > 200:
        raise ArenaError(f"expected PLAYER@vN (like alice@v2), got {text[:80]!r}")
    return found


def active_of(submissions: Submissions, player: str) -> Version | None:
    """``player``'s active version, if any."""
    for version in submissions.versions(player):
        if version.status is Status.ACTIVE:
            return version
    return None


def passed_gate(
    submissions: Submissions, version: Version, log: str, probation_games: int
) -> Version:
    """``version`` passed its gate: ``probation`` beside its player's active version, or
    ``active`` when there is none (or ``probation_games`` is 0: the old one retires now)."""
    for older in submissions.versions(version.player):
        if older.status is Status.PROBATION and older.version != version.version:
            submissions.settle(older, Status.RETIRED, f"superseded by v{version.version}")
    current = active_of(submissions, version.player)
    if current is None or probation_games <= 0:
        return submissions.activate(version, log)
    reason = (
        f"passed the gate; on probation for {probation_games} games while "
        f"v{current.version} stays active"
    )
    return submissions.settle(version, Status.PROBATION, reason, log)


def end_probation(submissions: Submissions, version: Version) -> Version:
    """``version`` played its probation and is still in it: ``active``, the old retired."""
    return _make_active(
        submissions, version, "passed its probation", "after its probation", (Status.ACTIVE,)
    )


def suspend(submissions: Submissions, player: str, number: int, reason: str) -> Version:
    """The organizer takes a version off the ladder; ``reason`` is shown to the player."""
    version = find(submissions, player, number)
    if version.status not in SUSPENDABLE:
        raise NotAllowed(
            f"{version.identity} is {version.status}: only an active, probation or retired "
            "version can be suspended"
        )
    reason = " ".join(reason.split())[:REASON_CHARS] or "no reason given"
    return submissions.settle(version, Status.SUSPENDED, f"suspended by the organizer: {reason}")


def reinstate(submissions: Submissions, player: str, number: int) -> Version:
    """The organizer gives a suspended version back (module docstring)."""
    version = find(submissions, player, number)
    if version.status is not Status.SUSPENDED:
        raise NotAllowed(f"{version.identity} is {version.status}, not suspended")
    if active_of(submissions, player) is None:
        return submissions.settle(version, Status.ACTIVE, "reinstated by the organizer")
    return submissions.settle(
        version,
        Status.RETIRED,
        f"reinstated by the organizer; activate it to play (submit --activate {number})",
    )


def choose(submissions: Submissions, player: str, number: int, *, registered: bool) -> Version:
    """The player (or the organizer) makes version ``number`` its active one (a roll-back);
    ``registered``: the player is registered now (a revoked player activates nothing)."""
    version = find(submissions, player, number)
    if not registered:
        raise NotAllowed(f"player {player!r} is revoked: its versions cannot play")
    if version.status is Status.ACTIVE:
        return version
    if version.status not in ACTIVATABLE:
        hint = "; the organizer may reinstate it" if version.status is Status.SUSPENDED else ""
        raise NotAllowed(
            f"{version.identity} is {version.status}: only a version that passed the gate "
            f"and is not suspended can be made active{hint}"
        )
    return _make_active(
        submissions, version, f"made active by {player}", "by the player",
        (Status.ACTIVE, Status.PROBATION),
    )  # fmt: skip


def revoke_versions(submissions: Submissions, player: str) -> list[Version]:
    """``player`` was revoked: its versions that played or could play are ``revoked``."""
    return [
        submissions.settle(v, Status.REVOKED, "its player was revoked by the organizer")
        for v in submissions.versions(player)
        if v.status in REVOCABLE
    ]


def _make_active(
    submissions: Submissions,
    version: Version,
    reason: str,
    why: str,
    retire: tuple[Status, ...],
) -> Version:
    for other in submissions.versions(version.player):
        if other.version != version.version and other.status in retire:
            submissions.settle(other, Status.RETIRED, f"replaced by v{version.version} {why}")
    return submissions.settle(version, Status.ACTIVE, reason)
