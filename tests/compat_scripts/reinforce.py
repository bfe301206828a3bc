"""REINFORCE written for PyTorch: a softmax policy (``torch.distributions.Categorical``) learns to walk right
along a corridor simulated in numpy. Eight episodes run side by side; the loss is -log pi(a|s) times the
return-to-go minus a mean baseline, less an entropy bonus.

With ``--same-actions 1`` the actions are drawn by inverting the policy's CDF at numpy's uniforms (instead of
``Categorical.sample``), so that a PyTorch run and a lucid run take the same actions."""
import numpy as np
import torch
import torch.distributions as D
from torch import nn

from _common import options, report, start_from

LENGTH, HORIZON, EPISODES = 6, 12, 8


class Corridor:
    """Cells 0..LENGTH-1, start at 1; action 0 steps left (a wall at 0), 1 steps right; reaching the right end
    pays 1 and ends the episode; every step costs 0.05."""

    def __init__(self, n: int):
        self.pos = np.ones(n, dtype=np.int64)
        self.done = np.zeros(n, dtype=bool)

    def observe(self) -> np.ndarray:
        return np.eye(LENGTH, dtype=np.float32)[self.pos]

    def step(self, action: np.ndarray) -> np.ndarray:
        active = ~self.done
        self.pos = np.where(active, np.clip(self.pos + 2 * action - 1, 0, LENGTH - 1), self.pos)
        arrived = active & (self.pos == LENGTH - 1)
        reward = np.where(active, -0.05 + arrived.astype(np.float64), 0.0)
        self.done |= arrived
        return reward


def main():
    args = options(steps=15, same_actions=0)
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(LENGTH, 16), nn.Tanh(), nn.Linear(16, 2))
    start_from(args, policy)
    opt = torch.optim.Adam(policy.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    losses, returns = [], []
    for _ in range(args.steps):
        env = Corridor(EPISODES)
        log_probs, entropies, rewards, alive = [], [], [], []
        for _ in range(HORIZON):
            alive.append(torch.from_numpy((~env.done).astype(np.float32)))
            dist = D.Categorical(logits=policy(torch.from_numpy(env.observe())))
            if args.same_actions:
                u = rng.uniform(size=(EPISODES, 1))
                action = torch.from_numpy((np.cumsum(dist.probs.detach().numpy(), -1) < u).sum(-1).clip(0, 1))
            else:
                action = dist.sample()
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            rewards.append(env.step(action.numpy()))
        to_go = np.flip(np.cumsum(np.flip(np.stack(rewards), 0), 0), 0).copy()  # return from each step on
        advantage = torch.from_numpy((to_go - to_go.mean(1, keepdims=True)).astype(np.float32))
        mask = torch.stack(alive)
        loss = -(torch.stack(log_probs) * advantage * mask).sum() / EPISODES \
            - 0.01 * (torch.stack(entropies) * mask).sum() / EPISODES
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        returns.append(float(to_go[0].mean()))
    with torch.no_grad():
        right = D.Categorical(logits=policy(torch.eye(LENGTH))).probs[:, 1].tolist()
    print(f"mean return {returns[0]:.2f} -> {returns[-1]:.2f}; P(right) by cell {np.round(right, 2).tolist()}")
    report(args, losses=losses, returns=returns, p_right=right)


if __name__ == "__main__":
    main()
