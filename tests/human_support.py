"""Helpers of the person's-seat tests (``play human`` and the arena's people's games)."""

from __future__ import annotations

from typing import Any


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
