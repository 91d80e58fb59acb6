"""``serve --host 0.0.0.0`` prints addresses a person can open, never 0.0.0.0 itself."""

from __future__ import annotations

import signal
import socket
import urllib.request
from pathlib import Path

import pytest
from arena_support import start_arena

from tacocat_arena.cli.addresses import describe, reachable_hosts


def test_a_wildcard_becomes_this_machines_addresses_and_name() -> None:
    hosts = reachable_hosts("0.0.0.0")
    assert hosts and "0.0.0.0" not in hosts
    assert socket.gethostname() in hosts or hosts == ["127.0.0.1"]
    first, note = describe("0.0.0.0", 8080, "http://")
    assert first.startswith("http://") and "0.0.0.0" not in first + note
    assert "listening on every interface" in note


def test_a_named_host_is_printed_as_given() -> None:
    assert describe("127.0.0.1", 8080, "http://") == ("http://127.0.0.1:8080/", "")
    assert reachable_hosts("teacher.example") == ["teacher.example"]


@pytest.mark.slow
def test_serve_on_every_interface_prints_urls_that_open(tmp_path: Path) -> None:
    arena = start_arena(tmp_path / "arena", "--host", "0.0.0.0", "--web", "0.0.0.0:0")
    try:
        lines = "\n".join(arena.lines)
        assert "0.0.0.0" not in arena.web and "0.0.0.0" not in arena.address, lines
        assert "listening on every interface" in lines
        with urllib.request.urlopen(arena.web + "/api/status", timeout=10) as response:
            assert response.status == 200
    finally:
        arena.stop(signal.SIGTERM)
