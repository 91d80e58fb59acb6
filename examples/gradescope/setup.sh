#!/bin/sh
# Gradescope runs this once, when it builds the autograder's image (Ubuntu, as root).
# It installs what run_autograder needs: Python 3.11+, tacocat-arena, and bubblewrap for
# the sandbox the bots play in (docs/grading.md, "Uploading to Gradescope").
#
# tacocat-arena comes from a wheel in this folder when there is one (dist/*.whl: build it
# with `pip wheel --no-deps -w examples/gradescope/dist .` in the repository), else from
# TACOCAT_ARENA_SPEC (a pip requirement, such as a git URL of your fork).
# AUTOGRADER, PIP and APT are for testing it outside Gradescope.
set -eu
AUTOGRADER="${AUTOGRADER:-/autograder}"
PIP="${PIP:-python3 -m pip}"
APT="${APT:-apt-get}"
source="$AUTOGRADER/source"

if command -v "$APT" >/dev/null 2>&1; then
    $APT update
    $APT install -y python3 python3-pip python3-venv bubblewrap
fi
wheel="$(ls "$source"/dist/*.whl 2>/dev/null | head -n 1 || true)"
if [ -n "$wheel" ]; then
    $PIP install "$wheel"
else
    $PIP install "${TACOCAT_ARENA_SPEC:?set TACOCAT_ARENA_SPEC, or put a wheel in dist/}"
fi
# The secret decides every deal: keep it out of the students' reach (run_autograder reads it
# as root; a student's bot runs as uid 65534 in its sandbox).
chmod 600 "$source/secret.txt"
