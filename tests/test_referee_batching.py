"""Batching (arena.proto, "BATCHING"): over real loopback gRPC, the referee sends batches only
to bots whose Hello accepts them, only when messages queue behind a write in flight, and
handles each Action of a bot's ActionBatch exactly as if it had come alone."""

from __future__ import annotations

import asyncio
from typing import Any

import arena_harness as h  # tests/bots (pytest pythonpath)

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import DEFAULT_RULESET, Termination, replay
from tacocat_arena.referee import ClockSettings, RefereeSettings

SETTINGS = RefereeSettings(clock=ClockSettings(decision_ms=5000))
FINISHED = (Termination.GOAL, Termination.ROUND_CAP)


def test_batches_go_only_to_bots_that_accept_them() -> None:
    games = 16

    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port), h.raw_clients(port, 2) as clients:
            batching, plain = clients
            assert (await batching.connect("a", accept_batches=True)).batches
            assert not (await plain.connect("b")).batches
            # Sixteen games start at once: their GameStarts queue behind the first write.
            played = asyncio.gather(
                *(
                    referee.play(f"g{i}", ("a", "b"), seed=i, ruleset=DEFAULT_RULESET)
                    for i in range(games)
                )
            )
            await asyncio.gather(
                h.play_raw(batching, games=games, seed=1), h.play_raw(plain, games=games, seed=2)
            )
            for report in await played:
                assert report.outcome.termination in FINISHED, report
                replay(report.record)
            assert batching.batches > 0
            assert len(batching.envelopes) < len(batching.log)
            for envelope in batching.envelopes:
                for inner in envelope.batch.messages:
                    assert not inner.HasField("batch"), "a batch element is never a batch"
            assert plain.batches == 0
            assert len(plain.envelopes) == len(plain.log)

    h.run_async(scenario(), 60)


def test_each_action_of_an_action_batch_is_handled_as_if_alone() -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port), h.raw_clients(port, 2) as clients:
            client_a = clients[0]
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            first: list[pb.DecisionRequest] = []

            async def batch_answer(request: pb.DecisionRequest) -> Any:
                if first:
                    return None
                first.append(request)
                junk = pb.Action(game_id=request.game_id, request_id=987_654, replace=pb.Replace())
                good = pb.Action(
                    game_id=request.game_id, request_id=request.request_id, replace=pb.Replace()
                )
                batch = pb.ActionBatch(actions=[junk, good, good])
                await client_a.send(pb.BotMessage(actions=batch))
                return False

            game = asyncio.create_task(
                referee.play("batch", ("a", "b"), seed=8, ruleset=DEFAULT_RULESET)
            )
            log_a, _ = await asyncio.gather(
                h.play_raw(client_a, hook=batch_answer), h.play_raw(clients[1], seed=1)
            )
            report = await game
            assert report.outcome.termination in FINISHED, report
            first_action = report.record["actions"][0]
            assert (first_action["seat"], first_action["replace"]) == (0, [])
            assert "substituted" not in first_action
            rid = first[0].request_id
            got = [(e.code, e.request_id) for e in log_a.errors]
            assert got == [
                (pb.ERROR_CODE_UNKNOWN_REQUEST, 987_654),
                (pb.ERROR_CODE_DUPLICATE_REPLY, rid),
            ]

    h.run_async(scenario(), 30)
