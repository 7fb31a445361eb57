"""Decomposition PPO and Pareto-front inference of Smit et al., "Neural Multi-Objective
Combinatorial Optimization for Flexible Job Shop Scheduling Problems" (ICLR 2026, OpenReview
YAgOaYedLQ, §4.2 and §5).

Training objective (paper): max_θ E_{λ∼Λ, s_0∼S}[Σ_t γ^t λᵀ r_t], with the vector step rewards
r_t = (H(s_t) − H(s_{t+1})) / scales of :class:`~optzoo.scheduling.env.FJSPEnv`.  The
weighted sum is the decomposition: Σ_t λᵀ r_t = λᵀ(H(s_0) − f(x)) / scales, so maximising the
return minimises g(x | λ) = Σ_i λ_i f_i(x) / s_i.  PPO (Schulman et al. 2017) with clipping
and GAE on the scalarised reward; the critic outputs one value per objective, trained on the
per-objective GAE targets with the losses summed (the paper), and the scalar value is λᵀ v.
Because GAE is linear in rewards and values, the scalar advantage is exactly λᵀ A_vec with
A_vec the per-objective GAE (:func:`gae`).

Every episode draws a NEW λ ∼ Dirichlet(1) for each environment; a batch is
``n_instances`` instances × ``n_preferences`` environments each, and the instances are
replaced every ``reset_every`` updates (N_B; DAN's ``reset_env_timestep``).

PPO details follow DAN's ``model/PPO.py`` (wrqccc/FJSP-DRL): the episode's terminal step has
δ = r − V; advantages are normalised per environment over its episode; ``epochs`` passes over
the rollout in sequential minibatches of ``minibatch_size`` states; loss =
−mean(min(ρA, clip(ρ, 1 ± ε)A)) + c_v · Σ_i MSE(v_i, target_i) − c_e · mean entropy; Adam.

*Inferred* defaults (DAN's params.py; the paper's were not retrieved): lr 3e-4, γ = 1,
GAE λ 0.98, clip 0.2, 4 epochs, c_v = 0.5, c_e = 0.01, minibatch 1024, 20 environments
(5 instances × 4 preferences here), N_B = 20.

Inference (paper §5): for a set of preferences (101 for 2 objectives), greedy decoding (argmax
pair) or sampling k solutions per preference; the non-dominated set of all solutions is the
front (:func:`solve_front`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch

from optzoo.scheduling.dcan import DCANPolicy
from optzoo.scheduling.env import FJSPEnv, FJSPFeatures, batch_features
from optzoo.scheduling.instance import FJSPInstance
from optzoo.scheduling.metrics import FrontResult
from optzoo.scheduling.schedule import check_objectives


@dataclass(frozen=True)
class PPOConfig:
    """Hyperparameters of decomposition PPO (see the module docstring for their sources).

    Args:
        n_instances: training instances per batch.
        n_preferences: environments (each with its own λ) per instance.
        reset_every: N_B, updates between replacing the training instances.
        lr: Adam learning rate.
        gamma: discount γ.
        gae_lambda: GAE λ.
        clip: PPO ε.
        epochs: passes over each rollout.
        value_coef: c_v.
        entropy_coef: c_e.
        minibatch_size: states per gradient step.
        dirichlet_alpha: λ ∼ Dirichlet(α, …, α).
        max_grad_norm: gradient-norm clip (``None``: none, as DAN).
    """

    n_instances: int = 5
    n_preferences: int = 4
    reset_every: int = 20
    lr: float = 3e-4
    gamma: float = 1.0
    gae_lambda: float = 0.98
    clip: float = 0.2
    epochs: int = 4
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    minibatch_size: int = 1024
    dirichlet_alpha: float = 1.0
    max_grad_norm: float | None = None

    def __post_init__(self):
        for name in ("n_instances", "n_preferences", "reset_every", "epochs", "minibatch_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive int, got {v!r}")
        for name in ("lr", "dirichlet_alpha"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected > 0, got {getattr(self, name)}")
        for name in ("gamma", "gae_lambda"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name}: expected a value in [0, 1], got {getattr(self, name)}")
        for name in ("clip", "value_coef", "entropy_coef"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name}: expected >= 0, got {getattr(self, name)}")
        if self.max_grad_norm is not None and not self.max_grad_norm > 0:
            raise ValueError(f"max_grad_norm: expected > 0 or None, got {self.max_grad_norm}")


# -- the two pieces of PPO the paper specifies -----------------------------------------------

def gae(rewards: torch.Tensor, values: torch.Tensor, gamma: float, lam: float
        ) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates of complete episodes (terminal after the last step).

    Args:
        rewards, values: T x ... (any trailing shape, e.g. B x n_obj), time first.

    Returns:
        advantages A_t = Σ_l (γλ)^l δ_{t+l} with δ_t = r_t + γ V_{t+1} − V_t (V_T = 0), and the
        value targets A_t + V_t; both shaped like ``rewards``.
    """
    if rewards.shape != values.shape or rewards.ndim < 1:
        raise ValueError(f"rewards, values: expected equal shapes T x ..., got "
                         f"{tuple(rewards.shape)}, {tuple(values.shape)}")
    adv = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[0])
    for t in reversed(range(rewards.shape[0])):
        nxt = values[t + 1] if t + 1 < rewards.shape[0] else torch.zeros_like(values[t])
        delta = rewards[t] + gamma * nxt - values[t]
        running = delta + gamma * lam * running
        adv[t] = running
    return adv, adv + values


def ppo_loss(log_probs: torch.Tensor, old_log_probs: torch.Tensor, advantages: torch.Tensor,
             values: torch.Tensor, targets: torch.Tensor, entropy: torch.Tensor, *,
             clip: float = 0.2, value_coef: float = 0.5, entropy_coef: float = 0.01
             ) -> tuple[torch.Tensor, dict[str, float]]:
    """The clipped PPO loss with a vector critic.

    Args:
        log_probs, old_log_probs, advantages, entropy: S (one per state-action).
        values, targets: S x n_obj (per-objective value heads and GAE targets).

    Returns:
        −mean(min(ρA, clip(ρ, 1−ε, 1+ε)A)) + c_v Σ_i mean((v_i − target_i)²) − c_e mean(H), and
        its parts as floats.
    """
    ratio = torch.exp(log_probs - old_log_probs)
    surr = torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - clip, 1 + clip) * advantages)
    policy_loss = -surr.mean()
    value_loss = ((values - targets) ** 2).mean(0).sum()
    ent = entropy.mean()
    loss = policy_loss + value_coef * value_loss - entropy_coef * ent
    return loss, {"policy_loss": float(policy_loss.detach()),
                  "value_loss": float(value_loss.detach()),
                  "entropy": float(ent.detach())}


# -- episodes ----------------------------------------------------------------------------------

def _run_episodes(policy: DCANPolicy, envs: list[FJSPEnv], prefs: np.ndarray, *, greedy: bool,
                  generator: torch.Generator | None, device, record: bool):
    """Run the environments to the end, batched; returns the per-step records when
    ``record`` (states, actions, log-probs, values, rewards)."""
    lam = torch.as_tensor(prefs, dtype=torch.float32, device=device)
    steps: list[dict] = []
    live = list(range(len(envs)))
    while live:
        feats = batch_features([envs[i] for i in live])
        m_pad = feats.legal.shape[2]
        t = feats.to_torch(device)
        with torch.no_grad():
            out = policy(t, lam[live])
        if greedy:
            act = out.logits.argmax(-1).cpu()
        else:
            act = torch.multinomial(out.probs.cpu(), 1, generator=generator).squeeze(-1)
        rewards = []
        for i, a in zip(live, act.tolist(), strict=True):
            j, k = divmod(int(a), m_pad)
            rewards.append(envs[i].step((j, k)))
        if record:
            steps.append({"feats": t, "action": act.to(device),
                          "log_prob": out.log_probs.gather(1, act.to(device)[:, None])[:, 0],
                          "value": out.values,
                          "reward": torch.as_tensor(np.array(rewards), dtype=torch.float32,
                                                    device=device),
                          "live": list(live)})
        live = [i for i in live if not envs[i].done]
        if record and steps and len(live) not in (0, len(steps[-1]["live"])):
            raise ValueError("instances: every instance of a training batch must have the same "
                             "number of operations (episodes of equal length)")
    return steps


# -- training ------------------------------------------------------------------------------------

InstanceSampler = Callable[[np.random.Generator, int], Sequence[FJSPInstance]]


class DecompositionPPO:
    """Decomposition-based PPO for a preference-conditioned policy (see module docstring).

    Args:
        policy: a :class:`~optzoo.scheduling.dcan.DCANPolicy` (any mode).
        sampler: ``sampler(rng, n)`` returns ``n`` training instances (equal operation counts).
        objectives: the objectives, in the order of λ.
        config: :class:`PPOConfig`.
        seed: seeds the λ draws, the action sampling and the instance sampler.
        device: torch device of the policy.
        candidates: the environment's action set.
    """

    def __init__(self, policy: DCANPolicy, sampler: InstanceSampler,
                 objectives: Sequence[str] = ("makespan", "cost"), *,
                 config: PPOConfig | None = None, seed: int = 0, device="cpu",
                 candidates: str = "all"):
        self.objectives = check_objectives(objectives)
        if policy.n_obj != len(self.objectives):
            raise ValueError(f"policy: has {policy.n_obj} objectives, objectives "
                             f"{len(self.objectives)}")
        self.policy = policy.to(device)
        self.sampler = sampler
        self.config = config or PPOConfig()
        self.device = torch.device(device)
        self.candidates = candidates
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator().manual_seed(int(seed))
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=self.config.lr)
        self.instances: list[FJSPInstance] = []
        self.updates_done = 0

    def _preferences(self, n: int) -> np.ndarray:
        k = len(self.objectives)
        return self.rng.dirichlet(np.full(k, self.config.dirichlet_alpha), size=n)

    def update(self) -> dict[str, float]:
        """One rollout on the current instances (replaced every ``reset_every`` updates) with
        fresh preferences, and the PPO epochs.  Returns statistics of the update."""
        cfg = self.config
        if self.updates_done % cfg.reset_every == 0 or not self.instances:
            self.instances = list(self.sampler(self.rng, cfg.n_instances))
            if len(self.instances) != cfg.n_instances:
                raise ValueError(f"sampler: returned {len(self.instances)} instances, expected "
                                 f"{cfg.n_instances}")
        envs, prefs = [], self._preferences(cfg.n_instances * cfg.n_preferences)
        for inst in self.instances:
            for _ in range(cfg.n_preferences):
                env = FJSPEnv(self.objectives, candidates=self.candidates)
                env.reset(inst)
                envs.append(env)
        self.policy.eval()
        steps = _run_episodes(self.policy, envs, prefs, greedy=False,
                              generator=self.generator, device=self.device, record=True)
        self.policy.train()
        stats = self._learn(steps, prefs)
        f = np.array([e.objective_values() / e.scales for e in envs])
        stats["weighted_objective"] = float(np.mean((f * prefs).sum(1)))
        for i, name in enumerate(self.objectives):
            stats[f"{name}_normalised"] = float(f[:, i].mean())
        self.updates_done += 1
        return stats

    def _learn(self, steps: list[dict], prefs: np.ndarray) -> dict[str, float]:
        cfg = self.config
        lam = torch.as_tensor(prefs, dtype=torch.float32, device=self.device)
        rewards = torch.stack([s["reward"] for s in steps])          # T x B x K
        values = torch.stack([s["value"] for s in steps])            # T x B x K
        adv_vec, targets = gae(rewards, values, cfg.gamma, cfg.gae_lambda)
        adv = (adv_vec * lam).sum(-1)                                  # T x B: λᵀ A_vec
        n_t, n_b = adv.shape
        # DAN normalises each environment's advantages over its episode
        std = adv.std(0, keepdim=True) if n_t > 1 else torch.ones_like(adv)
        adv = (adv - adv.mean(0, keepdim=True)) / (std + 1e-8)
        keys = [f.name for f in fields(FJSPFeatures)]
        feats = {k: torch.cat([s["feats"][k] for s in steps]) for k in keys}
        actions = torch.cat([s["action"] for s in steps])
        old_logp = torch.cat([s["log_prob"] for s in steps])
        lam_all = lam.repeat(n_t, 1)
        adv, targets = adv.reshape(-1), targets.reshape(n_t * n_b, -1)
        total = n_t * n_b
        log: dict[str, list[float]] = {"loss": [], "policy_loss": [], "value_loss": [],
                                       "entropy": []}
        for _ in range(cfg.epochs):
            for lo in range(0, total, cfg.minibatch_size):
                sl = slice(lo, min(lo + cfg.minibatch_size, total))
                out = self.policy({k: v[sl] for k, v in feats.items()}, lam_all[sl])
                logp = out.log_probs.gather(1, actions[sl, None])[:, 0]
                loss, parts = ppo_loss(logp, old_logp[sl], adv[sl], out.values, targets[sl],
                                       out.entropy(), clip=cfg.clip, value_coef=cfg.value_coef,
                                       entropy_coef=cfg.entropy_coef)
                self.optimizer.zero_grad()
                loss.backward()
                if cfg.max_grad_norm is not None:
                    torch.nn.utils.clip_grad_norm_(self.policy.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                log["loss"].append(float(loss.detach()))
                for k, v in parts.items():
                    log[k].append(v)
        return {k: float(np.mean(v)) for k, v in log.items()}

    def train(self, updates: int, callback: Callable[[int, dict], None] | None = None
              ) -> list[dict[str, float]]:
        """Run ``updates`` updates; ``callback(update, stats)`` after each."""
        if not isinstance(updates, int) or updates < 0:
            raise ValueError(f"updates: expected a non-negative int, got {updates!r}")
        history = []
        for _ in range(updates):
            stats = self.update()
            history.append(stats)
            if callback is not None:
                callback(self.updates_done, stats)
        return history


# -- inference -----------------------------------------------------------------------------------

def solve_front(policy: DCANPolicy, instance: FJSPInstance, preferences,
                objectives: Sequence[str] = ("makespan", "cost"), *, samples: int = 0,
                seed: int = 0, device="cpu", candidates: str = "all",
                batch_size: int = 512, method: str = "") -> FrontResult:
    """The policy's front on ``instance``: one greedy episode per preference (``samples =
    0``) or ``samples`` sampled episodes per preference, non-dominated set of all.

    Args:
        preferences: ``P x n_obj`` weight vectors.
        samples: 0 for greedy decoding, else solutions sampled per preference.
        seed: seeds the sampling (the draws also depend on ``batch_size``).
        batch_size: environments run together.
        method: the label of the result.

    Returns:
        :class:`~optzoo.scheduling.metrics.FrontResult` with the schedules, the wall time and
        ``evaluations`` = episodes run.
    """
    objs = check_objectives(objectives, instance)
    prefs = np.asarray(preferences, dtype=float)
    if prefs.ndim != 2 or prefs.shape[1] != len(objs) or prefs.shape[0] == 0:
        raise ValueError(f"preferences: expected a (P, {len(objs)}) array, got {prefs.shape}")
    if not isinstance(samples, int) or samples < 0:
        raise ValueError(f"samples: expected a non-negative int, got {samples!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size: expected a positive int, got {batch_size!r}")
    greedy = samples == 0
    lam = prefs if greedy else np.repeat(prefs, samples, axis=0)
    gen = torch.Generator().manual_seed(int(seed))
    policy = policy.to(device)
    was_training = policy.training
    policy.eval()
    t0 = time.perf_counter()
    values, scheds = [], []
    for lo in range(0, lam.shape[0], batch_size):
        chunk = lam[lo:lo + batch_size]
        envs = []
        for _ in range(chunk.shape[0]):
            env = FJSPEnv(objs, candidates=candidates)
            env.reset(instance)
            envs.append(env)
        _run_episodes(policy, envs, chunk, greedy=greedy, generator=gen, device=device,
                      record=False)
        for env in envs:
            scheds.append(env.schedule())
            values.append(env.objective_values())
    wall = time.perf_counter() - t0
    policy.train(was_training)
    label = method or f"{policy.mode}-{'greedy' if greedy else f'sample{samples}'}"
    return FrontResult.from_candidates(np.array(values), scheds, wall_time=wall,
                                       evaluations=len(values), method=label)
