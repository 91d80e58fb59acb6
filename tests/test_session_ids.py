"""Session ids are unique across restarts (issue 37, point 6): a user quotes one
(Welcome.session_id, "quote it when reporting problems"); a restarted arena's first session
was ``s1`` again."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tacocat_arena.referee.session import next_session_id


def test_ids_of_one_process_count_up_with_its_tag() -> None:
    first, second = next_session_id(), next_session_id()
    one, two = (re.fullmatch(r"s(\d+)-([0-9a-f]{8})", i) for i in (first, second))
    assert one and two, (first, second)
    assert int(two[1]) == int(one[1]) + 1 and one[2] == two[2]


@pytest.mark.slow
def test_two_processes_never_give_the_same_first_id() -> None:
    code = "from tacocat_arena.referee.session import next_session_id; print(next_session_id())"
    ids = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(3)
    ]
    assert all(i.startswith("s1-") for i in ids), ids
    assert len(set(ids)) == 3, ids
