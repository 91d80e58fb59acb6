"""Secrets derived from a secret: the one procedure the arena's deals and the grader use.

A derived secret is published where its games are (a ladder pair's, a round-robin event's, a
grade tier's) so that anyone can re-derive those games' seeds, and it must tell nothing of
the secret it came from nor of any other derived secret.  Two schemes exist because two
rooms wrote one each before they met here, and **both stay**: every stored arena and every
grading root re-derives its seeds (``tacocat-arena verify``) by the scheme it was dealt with,
so moving one to the other would make each existing store fail its own verification.  New
uses take ``Scheme.HMAC``, the textbook construction for keyed derivation.
"""

from __future__ import annotations

import enum
import hashlib
import hmac


class Scheme(enum.Enum):
    """How a secret is derived, by version (the value is written nowhere: each caller's
    scheme is fixed by what its stores were dealt with)."""

    #: v1, the arena's deals (``arena.deals``) and a grade's public secret id: SHA-256 of
    #: ``DOMAIN:SECRET:LABEL:...``.
    JOIN = 1
    #: v2, a grade's tiers (``grade.grader``): HMAC-SHA-256 keyed by the secret over
    #: ``DOMAIN:LABEL:...``.
    HMAC = 2


def derive_secret(
    scheme: Scheme, secret: str, domain: str, *labels: object, length: int = 32
) -> str:
    """The first ``length`` hex digits of ``secret``'s derivation for ``domain`` and
    ``labels`` (each as its text) by ``scheme``."""
    words = [domain, *map(str, labels)]
    if scheme is Scheme.JOIN:
        digest = hashlib.sha256(":".join([domain, secret, *words[1:]]).encode()).hexdigest()
    else:
        digest = hmac.new(secret.encode(), ":".join(words).encode(), hashlib.sha256).hexdigest()
    return digest[:length]
