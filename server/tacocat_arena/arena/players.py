"""Players and their tokens: a token is shown once, only its SHA-256 is stored.

Tokens are 192 random bits (``secrets``), so a plain SHA-256 suffices: a slow password hash
protects guessable secrets, and these are not guessable.  Comparison is constant-time.  A
tokens file (TOML, ``name = "token"``) still works for scripted set-ups: ``serve --tokens``
stores its tokens' hashes the same way.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import tomllib
from pathlib import Path

from tacocat_arena.arena.store import ArenaError, ArenaStore

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""Player names: they appear in URLs and file names, so letters, digits, ``_ . -``."""
MIN_TOKEN_LENGTH = 8
TOKEN_PREFIX = "tca_"


def hash_token(token: str) -> str:
    """The stored form of a token."""
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str, stored_hash: str | None) -> bool:
    """True if ``token`` hashes to ``stored_hash`` (constant-time)."""
    return stored_hash is not None and hmac.compare_digest(hash_token(token), stored_hash)


def player_for_token(store: ArenaStore, token: str) -> str | None:
    """The active player whose token this is, or None.  Tokens are 192 random bits, so
    looking one up by its SHA-256 leaks nothing worth a constant-time scan."""
    return store.player_with_hash(hash_token(token))


def new_token() -> str:
    """A fresh random token."""
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def check_name(name: str) -> str:
    """``name`` if it is a valid player name, else ArenaError saying what is allowed."""
    if not NAME_PATTERN.fullmatch(name):
        raise ArenaError(
            f"invalid player name {name!r}: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


def add_player(store: ArenaStore, name: str) -> str:
    """Register a player and return its new token (the only time it is seen)."""
    token = new_token()
    store.add_player(check_name(name), hash_token(token))
    return token


def load_tokens_file(path: Path) -> dict[str, str]:
    """Read a TOML tokens file (``name = "token"`` lines); ArenaError on any problem."""
    try:
        with open(path, "rb") as handle:
            tokens = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ArenaError(f"cannot read tokens file {path}: {error}") from None
    for name, token in tokens.items():
        check_name(name)
        if not isinstance(token, str) or len(token) < MIN_TOKEN_LENGTH:
            raise ArenaError(
                f"{path}: the token of {name!r} must be a string of at least "
                f"{MIN_TOKEN_LENGTH} characters"
            )
    return tokens


def import_tokens(store: ArenaStore, tokens: dict[str, str]) -> None:
    """Register (or update) every player of a tokens file, storing only the hashes."""
    for name, token in tokens.items():
        store.add_player(name, hash_token(token), replace=True)


def organizer_token(store: ArenaStore) -> str | None:
    """Make the organizer's token on first use; return it then (None once it exists).

    The token is written to ``organizer.token`` in the arena's folder (mode 0600), and only its
    hash to the database: web actions that change the arena need it as a bearer token.
    """
    if store.meta("organizer_token_hash") is not None:
        return None
    token = new_token()
    path = store.folder / "organizer.token"
    path.touch(mode=0o600)
    path.write_text(token + "\n", encoding="utf-8")
    store.set_meta("organizer_token_hash", hash_token(token))
    return token
