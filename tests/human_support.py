"""Helpers of the person's-seat tests (``play human`` and the arena's people's games)."""

from __future__ import annotations

import json
from typing import Any

from tacocat_arena.engine import Game, Ruleset, build_view
from tacocat_arena.engine.record import action_from_json
from tacocat_arena.human.relay import view_json

#: Keys of a page's state whose cards are public (RULES-SPEC R4, P7: discards are face up; a
#: defence answers cards attacked face up) or the person's own options, drawn from its own hand
#: (the values it may duel, the attacks it may make): the deck has several cards of each
#: value, so an opponent's dealt hand may read the same there ("duel_values":[5,6,7,11]) and
#: is no leak.  What they hold is checked against the seat's own view instead
#: (test_human_seat compares every request's view with ``build_view``'s).
_OPEN_KEYS = frozenset({"discards", "discarded", "defence", "duel_values", "attacks"})


def first_legal_answer(legal: dict[str, Any]) -> dict[str, Any]:
    """A legal answer built from the options a person's page was sent (``legal``): the
    first duel card, the first attack, no replacement, no defence."""
    kind = legal["kind"]
    if kind == "replace":
        return {"kind": kind, "cards": []}
    if kind == "duel":
        return {"kind": kind, "cards": [legal["duel_values"][0]]}
    if kind == "attack":
        return {"kind": kind, "cards": legal["attacks"][0]}
    return {"kind": kind, "answers": [None] * len(legal["defence"])}


def views_at_own_decisions(record: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The seat's ``build_view`` before each of its attacks and defences (never simultaneous:
    the engine asks one seat alone), by replaying the record, as the page was sent it."""
    game = Game(Ruleset.from_dict(record["ruleset"]), record["seed"])
    views = []
    for entry in record["actions"]:
        if "forfeit" in entry:
            break
        who, action = action_from_json(entry)
        if who == seat and ("attack" in entry or "defend" in entry):
            views.append(json.loads(json.dumps(view_json(build_view(game, seat)))))
        game.apply(who, action)  # no substitution: the policy forfeits
    return views


def hidden_card_leaks(sent: bytes, record: dict[str, Any], seat: int) -> list[str]:
    """What of the opponent's hands and the draw pile the bytes a person's page was sent hold
    (one game's, ``record`` its record and ``seat`` the person's).

    A hand is looked for as its JSON list.  The deck has several cards of each value, so the
    same list may be open where it is seen: the person's own ``"hand"`` when it held the same
    cards itself, the keys of ``_OPEN_KEYS`` in each streamed state, and an opponent's whole
    dealt hand replaced face up.  Those places are taken out; anything else is a leak."""
    found = [f"the key {key.decode()}" for key in (b'"hands"', b'"draw_pile"') if key in sent]
    scanned = _without_open_cards(sent)
    shown = {
        (e["round"], tuple(e["discarded"]))
        for e in record["events"]
        if e["type"] == "replace" and e["seat"] == 1 - seat
    }
    held = {tuple(view["hand"]) for view in views_at_own_decisions(record, seat)} | {
        tuple(e["hands"][seat]) for e in record["events"] if e["type"] == "deal"
    }
    for event in record["events"]:
        if event["type"] != "deal" or (event["round"], tuple(event["hands"][1 - seat])) in shown:
            continue
        hand = json.dumps(event["hands"][1 - seat], separators=(",", ":")).encode()
        rest = scanned
        if tuple(event["hands"][1 - seat]) in held:
            rest = rest.replace(b'"hand":' + hand, b"")
        if hand in rest:
            at = rest.index(hand)
            context = rest[max(0, at - 160) : at + 40].decode(errors="replace")
            found.append(f"round {event['round']}'s opponent hand {hand.decode()} in: {context}")
        pile = event["draw_pile"]
        for start in range(len(pile) - 5):
            window = ",".join(map(str, pile[start : start + 6])).encode()
            if window in scanned:
                found.append(f"round {event['round']}'s draw pile ({window.decode()}...)")
                break
    return found


def _without_open_cards(sent: bytes) -> bytes:
    """``sent`` with each streamed state (a ``data: {...}`` line) written again without the
    keys of ``_OPEN_KEYS``, at any depth; other bytes as they were."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _OPEN_KEYS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    lines = []
    for line in sent.split(b"\n"):
        if line.startswith(b"data: {"):
            try:
                state = json.loads(line[6:])
            except ValueError:
                pass
            else:
                line = b"data: " + json.dumps(strip(state), separators=(",", ":")).encode()
        lines.append(line)
    return b"\n".join(lines)
