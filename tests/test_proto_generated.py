"""The committed Python code of the protocol matches ``proto/`` and works.

Run with ``PYTHONPATH=server``. When the first test fails, regenerate with
``python proto/generate.py`` and commit the result.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SERVER_DIR = REPO_ROOT / "server"
GENERATE_SCRIPT = REPO_ROOT / "proto" / "generate.py"


def _load_generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tacocat_proto_generate", GENERATE_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


generate_script = _load_generate()


@pytest.mark.slow
def test_committed_code_matches_fresh_generation(tmp_path: Path) -> None:
    fresh = generate_script.generate(tmp_path)
    relative = sorted(path.relative_to(tmp_path) for path in fresh)
    assert Path("tacocat/v1/arena_pb2.py") in relative
    assert Path("tacocat/v1/arena_pb2.pyi") in relative
    assert Path("tacocat/v1/arena_pb2_grpc.py") in relative
    stale = []
    for rel in relative:
        committed = SERVER_DIR / rel
        if not committed.is_file():
            stale.append(f"{committed} is missing")
        elif committed.read_bytes() != (tmp_path / rel).read_bytes():
            stale.append(f"{committed} differs from a fresh generation")
    assert not stale, "; ".join(stale) + " -- run: python proto/generate.py"
    for package in ("tacocat", "tacocat/v1"):
        assert (SERVER_DIR / package / "__init__.py").is_file()
        assert (tmp_path / package / "__init__.py").is_file()


@pytest.mark.slow
def test_no_generated_files_without_proto() -> None:
    assert generate_script.stale_files(SERVER_DIR) == []


def test_generated_modules_import() -> None:
    from tacocat.v1 import arena_pb2, arena_pb2_grpc

    assert arena_pb2.DESCRIPTOR.package == "tacocat.v1"
    assert arena_pb2.DESCRIPTOR.name == "tacocat/v1/arena.proto"
    service = arena_pb2.DESCRIPTOR.services_by_name["Arena"]
    play = service.methods_by_name["Play"]
    assert play.client_streaming and play.server_streaming
    assert play.input_type.full_name == "tacocat.v1.BotMessage"
    assert play.output_type.full_name == "tacocat.v1.RefereeMessage"
    assert hasattr(arena_pb2_grpc, "ArenaStub")
    assert hasattr(arena_pb2_grpc, "ArenaServicer")
    assert hasattr(arena_pb2_grpc, "add_ArenaServicer_to_server")


def test_enums_start_with_unspecified() -> None:
    from tacocat.v1 import arena_pb2

    for enum in arena_pb2.DESCRIPTOR.enum_types_by_name.values():
        zero = enum.values_by_number[0]
        assert zero.name.endswith("_UNSPECIFIED"), enum.name


def test_bot_message_round_trip() -> None:
    from tacocat.v1 import arena_pb2 as pb

    hello = pb.BotMessage(
        hello=pb.Hello(protocol_version=1, bot_name="mybot", token="s3cret", client_info="py/3.11")
    )
    back = pb.BotMessage.FromString(hello.SerializeToString())
    assert back == hello
    assert back.WhichOneof("message") == "hello"
    assert back.hello.max_concurrent_games == 0

    action = pb.BotMessage(
        action=pb.Action(
            game_id="g1",
            request_id=2**40,
            defend=pb.Defend(
                answers=[pb.DefenceChoice(defend_with=9), pb.DefenceChoice(sacrifice=True)]
            ),
        )
    )
    back = pb.BotMessage.FromString(action.SerializeToString())
    assert back == action
    assert back.action.WhichOneof("action") == "defend"
    answers = back.action.defend.answers
    assert [a.WhichOneof("choice") for a in answers] == ["defend_with", "sacrifice"]
    assert answers[0].defend_with == 9

    for case, message in (
        ("replace", pb.Action(replace=pb.Replace(discard=[3, 3, 12]))),
        ("duel", pb.Action(duel=pb.Duel(card=0))),  # 0 is still a set oneof case
        ("attack", pb.Action(attack=pb.Attack(cards=[4, 5, 6]))),
    ):
        back = pb.Action.FromString(message.SerializeToString())
        assert back.WhichOneof("action") == case


def _sample_request(pb: ModuleType) -> object:
    board = pb.Board(
        tacocat=4,
        covered=[False] * 7,
        hand_sizes=[4, 5, 6, 7, 6, 5, 4],
        arrows=[pb.SpaceArrows(seats=s) for s in ([1], [1], [1], [0, 1], [0], [0], [0])],
    )
    view = pb.SeatView(
        seat=0,
        round=1,
        hand=[2, 5, 5, 9, 11],
        opponent_hand_size=5,
        draw_pile_size=24,
        board=board,
        discards=[1, 7],
        events=[
            pb.PublicEvent(deal=pb.Deal(round=1, space=4, hand_size=7)),
            pb.PublicEvent(replaced=pb.Replaced(seat=0, cards=[], count=0)),
            pb.PublicEvent(duel_revealed=pb.DuelRevealed(cards=[7, 1], winner_seat=0)),
            pb.PublicEvent(attacked=pb.Attacked(seat=0, cards=[8])),
            pb.PublicEvent(
                defended=pb.Defended(
                    seat=1,
                    answers=[pb.DefenceAnswer(attack_card=8, sacrificed=True, card=3)],
                    trick_winner=0,
                )
            ),
        ],
        attacker=0,
    )
    return pb.RefereeMessage(
        decision_request=pb.DecisionRequest(
            game_id="g1",
            request_id=7,
            kind=pb.DECISION_KIND_ATTACK,
            view=view,
            legal=pb.LegalOptions(
                attack=pb.AttackOptions(
                    attacks=[pb.Attack(cards=c) for c in ([2], [5], [9], [11], [5, 5])]
                )
            ),
            time_left_ms=2000,
            time_bank_left_ms=0,
        )
    )


def test_referee_message_round_trip() -> None:
    from tacocat.v1 import arena_pb2 as pb

    request = _sample_request(pb)
    back = pb.RefereeMessage.FromString(request.SerializeToString())
    assert back == request
    assert back.WhichOneof("message") == "decision_request"
    view = back.decision_request.view
    assert back.decision_request.legal.WhichOneof("options") == "attack"
    assert [e.WhichOneof("event") for e in view.events] == [
        "deal",
        "replaced",
        "duel_revealed",
        "attacked",
        "defended",
    ]
    # Seat 0 is a real value of optional fields: presence, not truthiness, tells.
    assert view.HasField("attacker") and view.attacker == 0
    assert view.events[2].duel_revealed.HasField("winner_seat")
    assert not pb.SeatView().HasField("attacker")

    end = pb.RefereeMessage(
        game_end=pb.GameEnd(
            game_id="g1",
            result=pb.GAME_RESULT_WIN,
            winner_seat=0,
            reason=pb.END_REASON_GOAL,
            rounds=5,
            board=pb.Board(tacocat=0, covered=[True, True, True, True, False, False, False]),
            last_round_events=[
                pb.PublicEvent(showdown=pb.Showdown(cards=[2, 6], winner_seat=0)),
                pb.PublicEvent(
                    round_ended=pb.RoundEnded(
                        round=5, winner_seat=0, tacocat_from=1, tacocat_to=0, covered_space=1
                    )
                ),
            ],
            past_rounds=[pb.RoundSummary(round=1, tie=True, showdown_cards=[4, 4])],
        )
    )
    back = pb.RefereeMessage.FromString(end.SerializeToString())
    assert back == end
    assert back.game_end.HasField("winner_seat")
    assert not back.game_end.past_rounds[0].HasField("winner_seat")

    for message in (
        pb.RefereeMessage(
            welcome=pb.Welcome(protocol_version=1, session_id="s1", decision_timeout_ms=2000)
        ),
        pb.RefereeMessage(
            game_start=pb.GameStart(
                game_id="g1",
                seat=1,
                ruleset=pb.Ruleset(
                    deck=[pb.CardCount(value=1, count=2)],
                    tie_rule=pb.TIE_RULE_REPLAY_ROUND,
                    max_rounds=50,
                ),
                failure_policy=pb.FAILURE_POLICY_FORFEIT,
            )
        ),
        pb.RefereeMessage(
            error=pb.Error(
                game_id="g1",
                request_id=7,
                code=pb.ERROR_CODE_ILLEGAL_ACTION,
                rule_id="P6",
                outcome=pb.ERROR_OUTCOME_FORFEIT,
            )
        ),
        pb.RefereeMessage(session_end=pb.SessionEnd(reason=pb.SESSION_END_REASON_TOURNAMENT_OVER)),
    ):
        assert pb.RefereeMessage.FromString(message.SerializeToString()) == message


def test_stream_over_grpc_aio() -> None:
    """The generated stub and servicer talk over a real (local) bidirectional stream."""
    import grpc

    from tacocat.v1 import arena_pb2 as pb
    from tacocat.v1 import arena_pb2_grpc as pb_grpc

    class EchoReferee(pb_grpc.ArenaServicer):
        async def Play(self, request_iterator, context):
            async for message in request_iterator:
                if message.WhichOneof("message") == "hello":
                    yield pb.RefereeMessage(welcome=pb.Welcome(protocol_version=1, session_id="s1"))
                    yield _sample_request(pb)
                else:
                    yield pb.RefereeMessage(
                        error=pb.Error(
                            game_id=message.action.game_id,
                            request_id=message.action.request_id,
                            code=pb.ERROR_CODE_UNKNOWN_REQUEST,
                            outcome=pb.ERROR_OUTCOME_IGNORED,
                        )
                    )
                    return

    async def scenario() -> list[str]:
        server = grpc.aio.server()
        pb_grpc.add_ArenaServicer_to_server(EchoReferee(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = pb_grpc.ArenaStub(channel).Play()
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name="b")))
                seen = []
                async for message in call:
                    seen.append(message.WhichOneof("message"))
                    if message.WhichOneof("message") == "decision_request":
                        request = message.decision_request
                        await call.write(
                            pb.BotMessage(
                                action=pb.Action(
                                    game_id=request.game_id,
                                    request_id=request.request_id,
                                    attack=request.legal.attack.attacks[0],
                                )
                            )
                        )
                        await call.done_writing()
                assert await call.code() == grpc.StatusCode.OK
                return seen
        finally:
            await server.stop(None)

    seen = asyncio.run(asyncio.wait_for(scenario(), timeout=30))
    assert seen == ["welcome", "decision_request", "error"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_the_examples_hold_copies_of_the_proto_not_links() -> None:
    """example_bots/node and example_bots/cpp copied elsewhere (``cp -r``) still find
    arena.proto: a real copy, kept equal to proto/ by ``python proto/generate.py``."""
    assert generate_script.stale_copies() == []
