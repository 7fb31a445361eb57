"""Offline datasets and perturbed evaluation on gymnasium control tasks (the DR-SAC protocol).

Cui et al. (ICLR 2026, DR-SAC) train once on data from the nominal environment and evaluate the
fixed policy in perturbed copies of it. The perturbations of the brief for ``Pendulum-v1``:

* ``gravity`` — g multiplied by a factor (``gym.make("Pendulum-v1", g=10 f)``);
* ``length`` / ``mass`` — the pole's l / m multiplied by a factor (set on ``env.unwrapped``);
* ``action_noise`` — Gaussian noise of standard deviation σ·max|a| added to the action, then
  clipped to the bounds;
* ``random_action`` — with probability p the actuator applies a uniformly random action.

For ``MountainCarContinuous-v0`` (the issue's second environment; the brief lists it as
optional): ``power`` multiplies the engine's ``power`` (0.0015) — the analogue of the paper's
LunarLander engine-power perturbation — and the two actuator perturbations apply unchanged
(gymnasium hard-codes its gravity, 0.0025, inside ``step``, so there is no gravity family).

The offline data come from a behaviour policy with ε = 0.1 uniformly random actions (the paper's
ε-greedy generation). The paper's behaviour policy is a trained SAC agent; here, for Pendulum, an
energy-pumping swing-up controller with a PD catch near the top (:func:`pendulum_swingup`; mean
return about −140 on the nominal task against the code's benchmark of −150), which costs no
training and is deterministic given the seed; for MountainCar, :func:`mountaincar_pump`, which
pushes along the velocity (energy pumping) and reaches the goal in about 100–130 steps.

Rewards: the official code trains on (r + 8)/8 for Pendulum (``Reward_adapter``); evaluation
always reports the environment's raw return.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch

from optzoo.rl.dr_sac import OfflineData

PERTURBATIONS = ("nominal", "gravity", "length", "mass", "power", "action_noise",
                 "random_action")
ENVIRONMENTS = ("Pendulum-v1", "MountainCarContinuous-v0")
# the physical perturbations each environment supports, and the attribute they scale
_PHYSICS = {"Pendulum-v1": {"length": "l", "mass": "m"},
            "MountainCarContinuous-v0": {"power": "power"}}


@dataclass(frozen=True)
class Perturbation:
    """One evaluation condition: a kind from ``PERTURBATIONS`` and its level (a factor for the
    physical ones, σ for action noise, p for random actions)."""

    kind: str = "nominal"
    level: float = 1.0

    def __post_init__(self):
        if self.kind not in PERTURBATIONS:
            raise ValueError(f"kind: expected one of {PERTURBATIONS}, got {self.kind!r}")
        if self.kind in ("gravity", "length", "mass", "power") and self.level <= 0:
            raise ValueError(f"level: expected a positive factor for {self.kind}, "
                             f"got {self.level}")
        if self.kind in ("action_noise",) and self.level < 0:
            raise ValueError(f"level: expected sigma >= 0, got {self.level}")
        if self.kind == "random_action" and not 0 <= self.level <= 1:
            raise ValueError(f"level: expected a probability in [0, 1], got {self.level}")

    @property
    def name(self) -> str:
        return "nominal" if self.kind == "nominal" else f"{self.kind}={self.level:g}"


def make_env(env_id: str = "Pendulum-v1", perturbation: Perturbation | None = None):
    """A gymnasium environment with the perturbation applied (wrappers for action noise and
    random actions, attributes of the unwrapped physics for the rest)."""
    p = perturbation or Perturbation()
    if env_id not in ENVIRONMENTS:
        raise ValueError(f"env_id: expected one of {ENVIRONMENTS}, got {env_id!r}")
    kwargs = {}
    if p.kind == "gravity" and env_id == "Pendulum-v1":
        kwargs["g"] = 10.0 * p.level
    env = gym.make(env_id, **kwargs)
    if p.kind in ("length", "mass", "power") or (p.kind == "gravity"
                                                  and env_id != "Pendulum-v1"):
        # gravity is a gym.make argument for Pendulum only
        attr = _PHYSICS[env_id].get(p.kind)
        if attr is None:
            raise ValueError(f"{p.kind} perturbation: not defined for {env_id} (it supports "
                             f"{sorted(_PHYSICS[env_id])}, action_noise and random_action)")
        setattr(env.unwrapped, attr, getattr(env.unwrapped, attr) * p.level)
    if p.kind in ("action_noise", "random_action"):
        env = _ActuatorNoise(env, p.kind, p.level)
    return env


class _ActuatorNoise(gym.ActionWrapper):
    """Gaussian action noise (σ·max|a|) or random actions with probability p, drawn from the
    environment's own RNG so that an episode's seed fixes the noise."""

    def __init__(self, env, kind: str, level: float):
        super().__init__(env)
        self.kind, self.level = kind, float(level)

    def action(self, action):
        low, high = self.action_space.low, self.action_space.high
        rng = self.unwrapped.np_random
        if self.kind == "action_noise":
            noisy = action + self.level * high * rng.standard_normal(np.shape(action))
            return np.clip(noisy, low, high).astype(self.action_space.dtype)
        if rng.random() < self.level:
            return rng.uniform(low, high).astype(self.action_space.dtype)
        return action


def pendulum_swingup(obs: np.ndarray) -> np.ndarray:
    """Energy-pumping swing-up with a PD catch near the top, for ``Pendulum-v1`` (torque in
    [−2, 2]; θ = 0 upright). The free pendulum conserves ω²/2 + (3g/2l) cos θ; at the nominal
    g = 10, l = 1 a third of it is E = ω²/6 + 5 cos θ, with E* = 5 at rest upright. Torque
    pumps E towards E* and a PD law holds the pole once cos θ > 0.85."""
    c, s, w = obs[..., 0], obs[..., 1], obs[..., 2]
    th = np.arctan2(s, c)
    pump = 2.0 * np.sign(w * (5.0 - (w ** 2 / 6.0 + 5.0 * c)))
    pump = np.where(np.abs(w) < 1e-3, 2.0, pump)
    catch = -(12.0 * th + 2.5 * w)
    return np.clip(np.where(c > 0.85, catch, pump), -2.0, 2.0)[..., None]


def mountaincar_pump(obs: np.ndarray) -> np.ndarray:
    """Full throttle along the velocity (forward from rest), for ``MountainCarContinuous-v0``
    (action in [−1, 1]): each swing adds energy until the car clears the right hill."""
    v = obs[..., 1]
    return np.where(v < 0, -1.0, 1.0)[..., None]


BEHAVIOURS = {"Pendulum-v1": pendulum_swingup, "MountainCarContinuous-v0": mountaincar_pump}


def collect_dataset(n: int, seed: int, env_id: str = "Pendulum-v1",
                    behaviour: Callable[[np.ndarray], np.ndarray] | None = None,
                    epsilon: float = 0.1,
                    reward_adapter: Callable[[np.ndarray], np.ndarray] | None = None
                    ) -> tuple[OfflineData, dict]:
    """n transitions from ``behaviour`` with ε-uniform random actions in the nominal env.

    Args:
        n: number of transitions (whole episodes are run; the last is cut at n).
        seed: seeds the episodes' initial states and the ε draws.
        env_id: gymnasium id.
        behaviour: obs → action in env units (default: :data:`BEHAVIOURS` of ``env_id``).
        epsilon: probability of a uniformly random action.
        reward_adapter: applied to the stored rewards (default for Pendulum: (r + 8)/8, the
            official code's; identity otherwise).

    Returns:
        The dataset (actions scaled to [−1, 1]) and stats: episodes, mean behaviour return.
    """
    if n < 1:
        raise ValueError(f"n: expected >= 1, got {n}")
    if not 0 <= epsilon <= 1:
        raise ValueError(f"epsilon: expected in [0, 1], got {epsilon}")
    if behaviour is None:
        if env_id not in BEHAVIOURS:
            raise ValueError(f"behaviour: required for {env_id} (defaults exist for "
                             f"{sorted(BEHAVIOURS)})")
        behaviour = BEHAVIOURS[env_id]
    if reward_adapter is None:
        reward_adapter = (lambda r: (r + 8.0) / 8.0) if env_id == "Pendulum-v1" else (
            lambda r: r)
    env = gym.make(env_id)
    high = env.action_space.high.astype(np.float64)
    rng = np.random.default_rng(seed)
    S, A, R, S2, T = [], [], [], [], []
    returns, ep = [], 0
    while len(S) < n:
        obs, _ = env.reset(seed=int(seed) * 100_003 + ep)
        ep += 1
        total, done = 0.0, False
        while not done and len(S) < n:
            if rng.random() < epsilon:
                act = rng.uniform(-high, high)
            else:
                act = np.asarray(behaviour(obs), dtype=np.float64).reshape(high.shape)
            obs2, r, term, trunc, _ = env.step(act.astype(env.action_space.dtype))
            S.append(obs)
            A.append(act / high)
            R.append(r)
            S2.append(obs2)
            T.append(term)
            total += r
            obs, done = obs2, term or trunc
        if done:
            returns.append(total)
    env.close()
    f = torch.float32
    data = OfflineData(torch.as_tensor(np.array(S), dtype=f), torch.as_tensor(np.array(A),
                                                                              dtype=f),
                       torch.as_tensor(reward_adapter(np.array(R, dtype=np.float64)), dtype=f),
                       torch.as_tensor(np.array(S2), dtype=f),
                       torch.as_tensor(np.array(T), dtype=torch.bool))
    return data, {"episodes": ep, "behaviour_return": float(np.mean(returns)) if returns
                  else float("nan")}


def evaluate(policy: Callable[[np.ndarray], np.ndarray], perturbation: Perturbation | None = None,
             episodes: int = 20, seed: int = 0, env_id: str = "Pendulum-v1") -> np.ndarray:
    """Raw returns of ``policy`` (batch of obs → actions in [−1, 1]) over ``episodes`` episodes
    run in lockstep, episode i seeded ``seed + i`` (common random numbers across methods)."""
    if episodes < 1:
        raise ValueError(f"episodes: expected >= 1, got {episodes}")
    envs = [make_env(env_id, perturbation) for _ in range(episodes)]
    high = envs[0].action_space.high
    # the actuator noise draws from each env's own RNG, which reset seeds
    obs = np.stack([e.reset(seed=int(seed) + i)[0] for i, e in enumerate(envs)])
    totals = np.zeros(episodes)
    alive = np.ones(episodes, dtype=bool)
    while alive.any():
        acts = np.asarray(policy(obs), dtype=np.float64).reshape(episodes, -1) * high
        for i, e in enumerate(envs):
            if not alive[i]:
                continue
            o, r, term, trunc, _ = e.step(acts[i].astype(e.action_space.dtype))
            obs[i] = o
            totals[i] += r
            alive[i] = not (term or trunc)
    for e in envs:
        e.close()
    return totals
