"""The agent trained by examples/train_agent.py, as an SDK bot for a real tournament.

    tacocat-arena run --bot trained="python examples/trained_bot.py" \\
        --bot random=builtin:random --bot greedy=builtin:greedy --games 20

It loads ``agent.npz`` beside this file (or the path given as its argument) and builds each
decision the way it was trained to: one flat action id at a time, the most likely legal id
each time, with the same features and action codec as the environments
(``tacocat_arena.envs.features`` and ``codec``, which need no learning library).
"""

import sys
from pathlib import Path

import numpy as np

from tacocat_arena.envs.codec import ActionCodec
from tacocat_arena.envs.features import Features
from tacocat_bot import Bot, run


class TrainedBot(Bot):
    name = "trained"

    def __init__(self, weights: Path) -> None:
        with np.load(weights) as data:
            self.params = {key: data[key] for key in data.files}

    def act(self, view):
        codec, features = ActionCodec.of(view.ruleset), Features.of(view.ruleset)
        p = self.params
        chosen = ()
        while True:
            x = np.asarray(features.encode(view, chosen), np.float32)
            logits = np.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
            legal = list(codec.legal_ids(view, chosen))
            best = max(legal, key=lambda action_id: logits[action_id])
            chosen, action = codec.step(view, chosen, best)
            if action is not None:
                return action


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("agent.npz")
    run(TrainedBot(path))
