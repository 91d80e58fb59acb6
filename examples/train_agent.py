"""Train a Tacocat agent through the Gymnasium environment with plain numpy, then save it.

    pip install -e '.[gymnasium]'
    python examples/train_agent.py --minutes 6          # writes examples/agent.npz
    tacocat-arena run --bot trained="python examples/trained_bot.py" \\
        --bot random=builtin:random --bot greedy=builtin:greedy --games 20

The agent is a small neural network (features -> 64 tanh units -> one logit per flat action
id) whose illegal ids are masked out, trained by REINFORCE with a learned baseline
(policy gradient, Williams 1992) and Adam.  Each episode is one game against an opponent
drawn from ``--opponents`` (by default the random and the epsilon-greedy built-ins), in a
random seat.  The return of a step is the game's result plus a small bonus for every round
won after it (the game's reward alone comes too rarely for so short a training).  It stops
after ``--minutes`` of wall time or ``--episodes`` games and prints its score against the
random and the greedy built-ins (in process, on fresh deals).  2 cores, no GPU needed.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import gymnasium
import numpy as np

import tacocat_arena.envs.gymnasium  # noqa: F401  (registers tacocat_arena/Tacocat-v0)
from tacocat_arena.envs.gymnasium import ENV_ID

HERE = Path(__file__).resolve().parent
ROUND_BONUS = 0.3


class Network:
    """features -> tanh hidden layer -> logits over the action ids, plus a value head."""

    def __init__(self, inputs: int, actions: int, hidden: int, rng: np.random.Generator):
        scale = 1.0 / np.sqrt(inputs)
        self.params = {
            "w1": rng.normal(0, scale, (inputs, hidden)),
            "b1": np.zeros(hidden),
            "w2": rng.normal(0, 0.1 / np.sqrt(hidden), (hidden, actions)),
            "b2": np.zeros(actions),
            "v": np.zeros(hidden),
            "vb": np.zeros(1),
        }
        self.moments = {k: (np.zeros_like(p), np.zeros_like(p)) for k, p in self.params.items()}
        self.updates = 0

    def forward(self, x: np.ndarray, mask: np.ndarray):
        p = self.params
        h = np.tanh(x @ p["w1"] + p["b1"])
        logits = h @ p["w2"] + p["b2"]
        logits = np.where(mask, logits, -1e9)
        logits -= logits.max(axis=-1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=-1, keepdims=True)
        value = h @ p["v"] + p["vb"][0]
        return h, probs, value

    def update(self, xs, masks, actions, returns, lr: float) -> None:
        """One policy-gradient step on a batch of (state, mask, action, return)."""
        p = self.params
        h, probs, values = self.forward(xs, masks)
        advantage = returns - values
        n = len(actions)
        grad_logits = probs.copy()
        grad_logits[np.arange(n), actions] -= 1.0  # d(-log pi)/d logits
        grad_logits *= advantage[:, None] / n
        grad_value = -(advantage) / n  # d(0.5 * advantage^2)/d value
        grads = {
            "w2": h.T @ grad_logits,
            "b2": grad_logits.sum(0),
            "v": h.T @ grad_value * 0.5,
            "vb": np.array([grad_value.sum() * 0.5]),
        }
        grad_h = grad_logits @ p["w2"].T + np.outer(grad_value * 0.5, p["v"])
        grad_pre = grad_h * (1 - h**2)
        grads["w1"] = xs.T @ grad_pre
        grads["b1"] = grad_pre.sum(0)
        self.updates += 1
        for key, grad in grads.items():  # Adam
            m, v = self.moments[key]
            m[:] = 0.9 * m + 0.1 * grad
            v[:] = 0.999 * v + 0.001 * grad**2
            m_hat = m / (1 - 0.9**self.updates)
            v_hat = v / (1 - 0.999**self.updates)
            p[key] -= lr * m_hat / (np.sqrt(v_hat) + 1e-8)

    def save(self, path: Path) -> None:
        np.savez(path, **{k: v for k, v in self.params.items() if k in ("w1", "b1", "w2", "b2")})


def play_episode(env, net: Network, rng: np.random.Generator, greedy: bool = False):
    """One game; returns the agent's (features, mask, action, return) steps and the result."""
    observation, info = env.reset(seed=int(rng.integers(2**62)))
    steps, rounds_before = [], []
    reward, terminated = 0.0, False
    while not terminated:
        mask = info["action_mask"].astype(bool)
        _, probs, _ = net.forward(observation[None, :], mask[None, :])
        action = int(probs[0].argmax()) if greedy else int(rng.choice(len(mask), p=probs[0]))
        game = env.unwrapped.game.game
        rounds_before.append(len(game.round_results))
        steps.append((observation, mask, action))
        observation, reward, terminated, _, info = env.step(action)
    seat = env.unwrapped.seat
    results = env.unwrapped.game.game.round_results
    won = [0.0] * (len(results) + 1)  # won[i]: round bonus earned from round i on
    for index in range(len(results) - 1, -1, -1):
        winner = results[index].winner
        bonus = 0.0 if winner is None else (ROUND_BONUS if winner == seat else -ROUND_BONUS)
        won[index] = won[index + 1] + bonus
    returns = [reward + won[min(done, len(results))] for done in rounds_before]
    return steps, returns, reward


def evaluate(net: Network, opponent: str, games: int, seed: int) -> float:
    env = gymnasium.make(ENV_ID, opponent=opponent, seat=None).unwrapped
    rng = np.random.default_rng(seed)
    points = 0.0
    for _ in range(games):
        _, _, reward = play_episode(env, net, rng, greedy=True)
        points += (reward + 1) / 2
    return points / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=6.0, help="wall-time budget")
    parser.add_argument("--episodes", type=int, default=100_000, help="games at most")
    parser.add_argument("--batch", type=int, default=32, help="games per update")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--opponents", default="random,greedy?epsilon=0.5", help="built-ins to train against"
    )
    parser.add_argument("--out", type=Path, default=HERE / "agent.npz")
    parser.add_argument("--evaluate", type=int, default=200, help="games per final score")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    envs = [
        gymnasium.make(ENV_ID, opponent=o, seat=None).unwrapped for o in args.opponents.split(",")
    ]
    probe = envs[0]
    net = Network(probe.observation_space.shape[0], probe.action_space.n, 64, rng)
    deadline = time.monotonic() + 60 * args.minutes
    episodes, recent = 0, []
    random.seed(args.seed)
    while episodes < args.episodes and time.monotonic() < deadline:
        xs, masks, actions, returns = [], [], [], []
        for _ in range(args.batch):
            steps, rets, reward = play_episode(envs[episodes % len(envs)], net, rng)
            for (x, mask, action), ret in zip(steps, rets, strict=True):
                xs.append(x)
                masks.append(mask)
                actions.append(action)
                returns.append(ret)
            recent.append((reward + 1) / 2)
            episodes += 1
        net.update(np.array(xs), np.array(masks), np.array(actions), np.array(returns), args.lr)
        if episodes % (args.batch * 25) == 0:
            print(f"{episodes} games, training score {np.mean(recent):.3f}", flush=True)
            recent = []
    net.save(args.out)
    print(f"trained on {episodes} games; saved {args.out}")
    for opponent in ("random", "greedy"):
        print(
            f"score against {opponent}: {evaluate(net, opponent, args.evaluate, args.seed + 7):.3f}"
        )


if __name__ == "__main__":
    main()
