"""Typed errors of the engine (RULES-SPEC rule IDs in every message).

Following python-chess, malformed input (``InvalidActionError``: wrong kind of action, not a
seat's turn) is told apart from well-formed input the rules forbid (``IllegalActionError``).
Both are ``ValueError``s; both messages start with the rule ID, so the same text can reach a bot.
"""

from __future__ import annotations


class ActionError(ValueError):
    """An action was refused; the game state is unchanged."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.reason = message


class IllegalActionError(ActionError):
    """A well-formed action that a rule forbids; ``rule`` is the RULES-SPEC ID."""


class InvalidActionError(ActionError):
    """An action of the wrong kind, by a seat with no pending decision, or after the end."""
