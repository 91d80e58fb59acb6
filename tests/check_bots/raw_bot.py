"""A bot written from arena.proto alone (no SDK), with one deliberate flaw chosen by argv[1].

Flaws, each of which `tacocat-arena check` must catch and name:
  none               a correct bot: every check passes
  ignore-errors      never logs the Errors it gets
  wrong-request-id   answers its first request with the wrong request_id (and the later
                     ones right: each wrong one costs its check's whole wait)
  no-jumbo-defence   never answers a defence against more than one card
  exit-on-game-end   exits at its first GameEnd
It plays the first legal option of every decision and sacrifices every defence.
"""

from __future__ import annotations

import os
import queue
import sys

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc

FLAW = sys.argv[1] if len(sys.argv) > 1 else "none"


#: Requests answered so far.
_answered = [0]


def decide(request: pb.DecisionRequest) -> pb.Action | None:
    _answered[0] += 1
    wrong = FLAW == "wrong-request-id" and _answered[0] == 1
    request_id = request.request_id + (1 if wrong else 0)
    action = pb.Action(game_id=request.game_id, request_id=request_id)
    legal = request.legal
    if request.kind == pb.DECISION_KIND_REPLACE:
        action.replace.SetInParent()
    elif request.kind == pb.DECISION_KIND_DUEL:
        action.duel.card = legal.duel.values[0]
    elif request.kind == pb.DECISION_KIND_ATTACK:
        action.attack.cards.extend(legal.attack.attacks[0].cards)
    elif request.kind == pb.DECISION_KIND_DEFEND:
        if FLAW == "no-jumbo-defence" and len(request.view.current_attack) > 1:
            return None
        for _ in request.view.current_attack:
            action.defend.answers.add(sacrifice=True)
    return action


def main() -> int:
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    outbox.put(
        pb.BotMessage(
            hello=pb.Hello(
                protocol_version=1,
                bot_name=os.environ.get("TACOCAT_ARENA_BOT", "raw"),  # unset: its own
                token=os.environ["TACOCAT_ARENA_TOKEN"],
                client_info=f"raw test bot ({FLAW})",
            )
        )
    )
    with grpc.insecure_channel(os.environ["TACOCAT_ARENA_ADDRESS"]) as channel:
        stream = arena_pb2_grpc.ArenaStub(channel).Play(iter(outbox.get, None))
        for message in stream:
            case = message.WhichOneof("message")
            if case == "decision_request":
                action = decide(message.decision_request)
                if action is not None:
                    outbox.put(pb.BotMessage(action=action))
            elif case == "error" and FLAW != "ignore-errors":
                print(f"referee error {message.error.code}: {message.error.message}", flush=True)
            elif case == "game_end" and FLAW == "exit-on-game-end":
                return 0
            elif case == "session_end":
                outbox.put(None)
                return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
