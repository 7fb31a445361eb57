"""Reproduction ``auxdpo``: DPO is a misspecified estimator, and AuxDPO fixes it — on exact
population optima of the paper's didactic bandits (Gopalan, Ray Chowdhury & Banerjee,
ICLR 2026, arXiv 2510.20413; brief ``auxdpo.md``).

Bandit A (paper Prop. 3): one state, three actions, π_θ = softmax([θ, −θ, 0]), r* = [1, 2, 0]
(true order a₂ ≻ a₁ ≻ a₃), pair counts n₁₂ = n₂₃ = 1 and n₃₁ = ``ratio``; base reward 1.0.
Every method's POPULATION optimum is computed exactly (:mod:`optzoo.preference.bandits`): DPO,
IPO, DPO-Positive (λ = 50), AuxDPO with δ ∈ N(A) exactly, exact RLHF and the local
(natural-gradient) RLHF step θ* = θ₀ + (1/β)F⁺Ar*.  Bandit B (the brief's scale-up): S = 20
states, 10 actions, d-dimensional random features, r* ~ N(0, 1) off the feature span,
Gamma(0.3) pair counts (skewed); one random instance per seed, all methods on the same
instance (paired).

Readings and deviations (fixed before any result was seen):
* The paper's exact pair weights for its 0.895 / 0.969 / 1.199 numbers were not recovered; the
  brief's n₃₁ = 20 at β = 1 is the headline cell and the report shows the sweep over
  ``ratios`` × ``betas``.
* AuxDPO's margin is β·(log-ratio margin) + δ(a) − δ(a') (the paper's form; the official
  code puts δ inside β, equivalent up to rescaling δ by β), δ = Γc with Γ an orthonormal basis
  of N(A) (exact; the code's soft penalty is :func:`optzoo.preference.auxdpo_loss`).
* Bandit B's feature and count distributions are ours (the paper's generator was not
  recovered); they are fixed in :func:`optzoo.preference.bandits.random_bandit`.
* "Order" is the order of the LEARNED reward — DPO's implicit β·log(π/π₀), AuxDPO's
  β·log(π/π₀) + δ — as the paper's orders must be: with logits [θ, −θ, 0] no policy ranks
  a₂ ≻ a₁ ≻ a₃ (a₂ above a₁ needs θ < 0, a₁ above a₃ needs θ > 0), so the "correct order" the
  paper reports for AuxDPO is its reward's.  (Read so after a first smoke run ranked the
  policy instead; the policies' own probabilities are kept in the metrics.)
* Regret is normalised by the RLHF gain of the instance, (J_RLHF − J_m)/(J_RLHF − J₀), so that
  instances of different reward scales weigh alike.

Bandit C (the brief's tiny LM; ``full`` only, 5 seeds; a tiny version in ``smoke``).  It is
not an experiment of the paper: the paper's didactic results are bandits like A and B, and the
official code (``Debangshu93/AuxDPO``: dataset, training and evaluation notebooks) has no
bandit code.  It is the brief's small analogue of the paper's low-capacity LLM setting (LoRA
r = 4 / last-layer tuning, where AuxDPO's gains are reported largest), run with the practical
soft-penalty loss of the official trainer rather than the exact null-space parameterisation of
A and B.  A randomly initialised :func:`optzoo.llm.tiny_llama` over a word vocabulary
(``lm_prompts`` prompt tokens, ``lm_answers`` answer tokens) answers ``[BOS, P_x]`` with two
answer tokens.  It is SFT'd in-process (every weight) on a random base distribution
(y₁ ~ softmax(0.5·z₁(x)), y₂ ~ softmax(0.5·z₂(x, y₁)), z ~ N(0, 1)), which becomes π_ref.
True reward r*(x, y) ~ N(0, 1) per answer (off any span by construction); ``lm_pairs``
preference pairs are drawn with Gamma(0.3) weights over the unordered answer pairs of all
prompts (skewed, as in Bandit B) and labelled from BTL(r*).  Then, from the same SFT base and
on the same data, full-batch Adam trains ONLY the output head (``lm_head.weight``, h × V; the
body frozen) with DPO, with AuxDPO's practical soft-penalty loss
(:func:`~optzoo.preference.auxdpo_loss`: one δ = c·tanh(δ_raw) per response of each pair,
:class:`~optzoo.preference.AuxDelta`, its own Adam at the official ``aux_lr``; the null-space
penalty from :func:`~optzoo.preference.reference_score_vectors` of the frozen reference w.r.t.
``lm_head.weight``), and with exact KL-regularised RLHF (the oracle, on the
enumerated answers).  Metric: the exact expected true reward E_x E_{y~π}[r*] over all K²
answers of every prompt.  Readings and deviations:
* "Last-layer-only tuning" is read as the output layer: the official notebook's (commented)
  LoRA sits on the last decoder block, but at this scale a decoder block (~50 k weights) has
  more parameters than there are answers, so the policy class would be tabular and nothing
  misspecified; the head over frozen features is the low-capacity analogue (a linear-softmax
  policy in the body's features, like Bandit B).  The body is therefore ~0.13 M parameters
  (hidden 64, 2 layers) rather than the brief's ≈ 0.5 M: its size does not set the capacity,
  the head's width does.  Because the body is frozen, its final hidden states on the m = S·K²
  enumerated answers are computed once and the head applied to them (identical to the full
  forward; tested).
* The penalty: the official code sums δ·g over a batch of 4 pairs; with a batch of 4 and d ≫ 8
  the batch's null space is trivial, so here the batch is the whole data set (full batch, the
  paper's δ ∈ N(A)) and the penalty is taken on the batch MEAN of δ·g (the official form with
  λ_null/B², so that it keeps the DPO term's per-pair scale).  λ_null = 1, λ_amp = 0.01 (the
  code's class defaults), c = 1 and aux_lr = 5·10⁻³ (the official values), β = 1 (as Bandit A/B;
  r* has unit scale).
* An answer that is not two answer tokens (probability leaking to other tokens) is worth the
  prompt's worst answer; the RLHF oracle's KL is over the answers plus that one "other" bucket.
* Check that the effect is present: the share of r* (per prompt centred) outside the span of the
  reference's score vectors (the implicit rewards' tangent space at θ₀, plus per-prompt
  constants) must be at least ``min_offspan``; otherwise the policy class is well specified
  here and the claim is inconclusive.  AuxDPO must also act: its mean |δ| at least
  ``min_delta``.
* Seen in the first full run (5 seeds; reported, nothing changed for it): on 4 of 5 seeds DPO
  and AuxDPO alike move almost all probability off the two-answer-token answers (the head
  can raise non-answer tokens; both push the rejected answers down), so their expected
  reward falls to near the worst answer; the claim's evidence gives the answer mass.

Verdict margins (fixed before results were seen):
* ``min_reward_change = 0.01``: a change in expected true reward smaller than 1 % of the base
  policy's (1.0) is no change — a method that stays at the base neither "lowers" nor
  "raises" the reward.
  The same 0.01 separates two actions in a learned reward's ranking (a tie is no ranking).
* ``theta_tol = 1e-4``: AuxDPO "lands at the local-RLHF θ*" within 10⁻⁴ (an optimiser's
  tolerance; the claim is an identity at the population optimum).
* ``min_share = 0.05``: a difference of five instances in a hundred in the share of instances
  whose reward falls below the base is the smallest that counts.
* ``min_regret = 0.05``: five points of the RLHF gain is the smallest regret difference that
  counts.
* ``min_rho = 0.2``: the smallest rank correlation that counts as a trend over d (full only).
* ``min_gain_c = 0.02``: Bandit C's "AuxDPO's true reward above DPO's" needs at least 0.02 in
  r* units (r* has unit variance; 2 % of one standard deviation, a few per cent of the RLHF
  gain).
* ``min_offspan = 0.05``: r* counts as misspecified when at least 5 % of its (centred) squared
  norm lies off the score vectors' span.
* ``min_delta = 0.01``: AuxDPO "acts" when its mean |δ| is at least 1 % of the cap.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import (
    Claim,
    Figure,
    Preset,
    Reproduction,
    Result,
    Summary,
    Table,
    Trial,
    aggregate,
)
from optzoo.experiment.core import NotEvaluated, split_claims
from optzoo.experiment.verdicts import (
    all_of,
    bound_holds,
    by_seed,
    not_acting,
    superior,
    trend,
)
from optzoo.preference.bandits import paper_bandit, random_bandit
from optzoo.report.figures import grid, line_panel, save

METHODS_A = ("dpo", "ipo", "dpop", "auxdpo", "rlhf")
METHODS_B = ("dpo", "ipo", "auxdpo", "rlhf")
METHODS_C = ("dpo", "auxdpo", "rlhf")
BASELINES = ("dpo", "ipo", "dpop")
HEADLINE = (20.0, 1.0)  # (ratio, beta) of the paper's example as the brief sets it


@dataclass(frozen=True)
class AuxDPOConfig(Preset):
    """Bandit A's sweep, Bandit B's instances (``seeds`` = instances per dimension) and Bandit
    C's tiny-LM runs (``lm_seeds`` of them; 0 = not run)."""

    ratios: tuple[float, ...] = (1.0, 5.0, 20.0, 100.0)
    betas: tuple[float, ...] = (0.5, 1.0, 2.0)
    dims: tuple[int, ...] = (8,)
    beta_b: float = 1.0
    states: int = 20
    actions: int = 10
    dpop_lambda: float = 50.0
    seeds: int = 20
    min_reward_change: float = 0.01
    theta_tol: float = 1e-4
    min_share: float = 0.05
    min_regret: float = 0.05
    min_rho: float = 0.2
    lm_seeds: int = 0
    lm_prompts: int = 16
    lm_answers: int = 8
    lm_hidden: int = 64
    lm_layers: int = 2
    lm_sft_steps: int = 300
    lm_sft_lr: float = 3e-3
    lm_pairs: int = 2048
    lm_steps: int = 500
    lm_lr: float = 1e-2
    lm_beta: float = 1.0
    lambda_null: float = 1.0
    lambda_amp: float = 0.01
    delta_cap: float = 1.0
    aux_lr: float = 5e-3
    min_gain_c: float = 0.02
    min_offspan: float = 0.05
    min_delta: float = 0.01

    def validate(self) -> None:
        super().validate()
        if self.lm_seeds < 0:
            raise ConfigError(f"lm_seeds: expected an integer >= 0, got {self.lm_seeds}")
        for name in ("lm_prompts", "lm_hidden", "lm_layers", "lm_sft_steps", "lm_pairs",
                     "lm_steps"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")
        if self.lm_answers < 2 or self.lm_hidden % 2:
            raise ConfigError("lm_answers, lm_hidden: expected >= 2 answer tokens and an even "
                              "width (2 heads)")
        for name in ("lm_sft_lr", "lm_lr", "lm_beta", "delta_cap", "aux_lr"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected a positive value, got {getattr(self, name)}")
        if self.lambda_null < 0 or self.lambda_amp < 0:
            raise ConfigError("lambda_null, lambda_amp: expected values >= 0")
        if HEADLINE[0] not in self.ratios or HEADLINE[1] not in self.betas:
            raise ConfigError(f"ratios, betas: the headline cell ratio={HEADLINE[0]:g}, "
                              f"beta={HEADLINE[1]:g} must be in the sweep")
        if any(r <= 0 for r in self.ratios) or any(b <= 0 for b in self.betas):
            raise ConfigError("ratios, betas: expected positive values")
        if any(d < 1 for d in self.dims) or self.states < 1 or self.actions < 2:
            raise ConfigError("dims, states, actions: expected d >= 1, states >= 1, "
                              "actions >= 2")


PRESETS = {
    "smoke": AuxDPOConfig(ratios=(1.0, 20.0), betas=(1.0,), seeds=3, states=4, actions=4,
                          lm_seeds=1, lm_prompts=2, lm_answers=3, lm_hidden=16, lm_layers=1,
                          lm_sft_steps=20, lm_pairs=32, lm_steps=10),
    "quick": AuxDPOConfig(),
    "full": AuxDPOConfig(dims=(2, 4, 8, 16, 32), seeds=200, lm_seeds=5),
}
_LM_PARAMS = ("lm_prompts", "lm_answers", "lm_hidden", "lm_layers", "lm_sft_steps", "lm_sft_lr",
              "lm_pairs", "lm_steps", "lm_lr", "lm_beta", "lambda_null", "lambda_amp",
              "delta_cap", "aux_lr")


def trials(cfg: AuxDPOConfig) -> list[Trial]:
    out = [Trial("all", "bandit-a", 0, {"ratio": r, "beta": b, "dpop_lambda": cfg.dpop_lambda})
           for r in cfg.ratios for b in cfg.betas]
    out += [Trial("all", "bandit-b", s, {"dim": d, "beta": cfg.beta_b, "states": cfg.states,
                                         "actions": cfg.actions})
            for d in cfg.dims for s in range(cfg.seeds)]
    out += [Trial("all", "bandit-c", s, {k: getattr(cfg, k) for k in _LM_PARAMS})
            for s in range(cfg.lm_seeds)]
    return out


def _order(pi: np.ndarray) -> str:
    return "".join(str(i + 1) for i in np.argsort(-pi, kind="stable"))


def run_trial(trial: Trial, device: str = "cpu") -> dict[str, Any]:
    p = trial.params
    if trial.problem == "bandit-c":
        return _run_lm(trial)
    beta = float(p["beta"])
    if trial.problem == "bandit-a":
        bandit = paper_bandit(float(p["ratio"]))
        aux_theta, aux_delta = bandit.fit_auxdpo(beta)
        thetas = {"dpo": bandit.fit_dpo(beta), "ipo": bandit.fit_ipo(beta),
                  "dpop": bandit.fit_dpop(beta, float(p["dpop_lambda"])),
                  "auxdpo": aux_theta, "rlhf": bandit.fit_rlhf(beta)}
        local = bandit.local_rlhf(beta)
        log0 = bandit.log_policy(np.zeros(1))[0]
        out: dict[str, Any] = {"theta_local": float(local[0])}
        for m, th in thetas.items():
            pi = bandit.policy(th)[0]
            # the learned reward: DPO's implicit β·log(π/π₀), plus δ for AuxDPO
            learned = beta * (bandit.log_policy(th)[0] - log0)
            if m == "auxdpo":
                learned = learned + aux_delta[0]
            out[f"theta_{m}"] = float(th[0])
            out[f"reward_{m}"] = bandit.expected_reward(th)
            out[f"order_{m}"] = _order(learned)
            for i in range(3):
                out[f"pi{i + 1}_{m}"] = float(pi[i])
                out[f"r{i + 1}_{m}"] = float(learned[i] - learned[2])
        out["aux_gap_to_local"] = abs(out["theta_auxdpo"] - float(local[0]))
        return out
    bandit = random_bandit(trial.seed, states=int(p["states"]), actions=int(p["actions"]),
                           dim=int(p["dim"]))
    base = bandit.expected_reward(np.zeros(bandit.dim))
    rewards = {"dpo": bandit.expected_reward(bandit.fit_dpo(beta)),
               "ipo": bandit.expected_reward(bandit.fit_ipo(beta)),
               "auxdpo": bandit.expected_reward(bandit.fit_auxdpo(beta)[0]),
               "rlhf": bandit.expected_reward(bandit.fit_rlhf(beta))}
    gain = rewards["rlhf"] - base
    out = {"base_reward": base, "rlhf_gain": gain}
    for m, j in rewards.items():
        out[f"gain_{m}"] = j - base
        out[f"below_base_{m}"] = float(j < base)
        out[f"regret_{m}"] = (rewards["rlhf"] - j) / gain if gain > 0 else float("nan")
    return out


# -- Bandit C: the tiny LM -------------------------------------------------------------------------

PAD, BOS, EOS = 0, 1, 2


@dataclass(frozen=True)
class LMTask:
    """Bandit C's answer space: every ``[BOS, P_x, A_i, A_j]`` (``ids`` ``(m, 4)``, prompt-major,
    m = S·K²), the true reward of each (``reward`` ``(m,)``), the base distribution's logits
    ``z1`` ``(S, K)`` and ``z2`` ``(S, K, K)``, and the vocabulary size."""

    prompts: int
    answers: int
    ids: Any
    reward: np.ndarray
    z1: np.ndarray
    z2: np.ndarray

    @property
    def vocab(self) -> int:
        return 3 + self.prompts + self.answers

    @property
    def worst(self) -> np.ndarray:
        return self.reward.reshape(self.prompts, -1).min(1)


def lm_task(seed: int, prompts: int, answers: int) -> LMTask:
    import torch

    rng = np.random.default_rng(seed)
    s, k = prompts, answers
    x, a, b = np.meshgrid(np.arange(s), np.arange(k), np.arange(k), indexing="ij")
    ids = np.stack([np.full(x.size, BOS), 3 + x.ravel(), 3 + s + a.ravel(), 3 + s + b.ravel()],
                   1)
    return LMTask(s, k, torch.tensor(ids, dtype=torch.long), rng.normal(0.0, 1.0, s * k * k),
                  rng.normal(0.0, 1.0, (s, k)), rng.normal(0.0, 1.0, (s, k, k)))


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _lm_sft(model, task: LMTask, rng: np.random.Generator, steps: int, lr: float,
            batch: int = 64) -> None:
    """SFT of every weight on answers drawn from the base distribution (0.5-tempered z)."""
    import torch

    s, k = task.prompts, task.answers
    p1, p2 = _softmax(0.5 * task.z1), _softmax(0.5 * task.z2)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    for _ in range(steps):
        x = rng.integers(0, s, batch)
        y1 = np.array([rng.choice(k, p=p1[i]) for i in x])
        y2 = np.array([rng.choice(k, p=p2[i, j]) for i, j in zip(x, y1, strict=True)])
        ids = torch.tensor(np.stack([np.full(batch, BOS), 3 + x, 3 + s + y1, 3 + s + y2], 1))
        labels = ids.clone()
        labels[:, :2] = -100
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()


def lm_features(model, task: LMTask):
    """The frozen body's final hidden states at the two answer-predicting positions, ``(m, 2,
    h)``: the head applied to them gives the model's logits there."""
    import torch

    with torch.no_grad():
        h = model.model(input_ids=task.ids, attention_mask=torch.ones_like(task.ids),
                        use_cache=False).last_hidden_state
    return h[:, 1:3].detach()


def lm_logps(head, feats, task: LMTask):
    """log π(y | x) of every enumerated answer, ``(m,)`` float64, from the head and the
    features."""
    import torch

    logp = torch.log_softmax(head(feats).double(), -1)
    return logp.gather(-1, task.ids[:, 2:4].unsqueeze(-1)).squeeze(-1).sum(1)


def lm_expected_reward(logps, task: LMTask) -> float:
    """E_x E_{y~π}[r*] with π from ``logps`` ``(m,)``; leaked mass gets the worst answer."""
    pi = np.exp(np.asarray(logps, dtype=np.float64)).reshape(task.prompts, -1)
    r = task.reward.reshape(task.prompts, -1)
    return float(np.mean((pi * r).sum(1) + (1.0 - pi.sum(1)) * task.worst))


def _rlhf_objective(logps, ref_logps, task: LMTask, beta: float):
    import torch

    n = task.prompts
    lp, rl = logps.view(n, -1), ref_logps.view(n, -1)
    pi = lp.exp()
    r = torch.as_tensor(task.reward, dtype=lp.dtype).view(n, -1)
    worst = torch.as_tensor(task.worst, dtype=lp.dtype)
    other = (1 - pi.sum(1)).clamp_min(1e-300)
    ref_other = (1 - rl.exp().sum(1)).clamp_min(1e-300)
    kl = (pi * (lp - rl)).sum(1) + other * (other.log() - ref_other.log())
    return ((pi * r).sum(1) + other * worst - beta * kl).mean()


def offspan_share(scores: np.ndarray, task: LMTask) -> tuple[float, int]:
    """The share of the per-prompt centred r* outside span(score vectors, prompt indicators),
    and the rank of the score vectors."""
    g = np.asarray(scores, dtype=np.float64)
    ind = np.kron(np.eye(task.prompts), np.ones((task.answers ** 2, 1)))
    u, sv, _ = np.linalg.svd(np.hstack([g, ind]), full_matrices=False)
    q = u[:, sv > sv[0] * 1e-9]
    r = task.reward - (ind @ (ind.T @ task.reward)) / task.answers ** 2
    off = r - q @ (q.T @ r)
    return float(off @ off / (r @ r)), int(np.linalg.matrix_rank(g))


def _lm_pairs(task: LMTask, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` labelled pairs (chosen, rejected answer indices): unordered pairs of one prompt
    drawn with Gamma(0.3) weights, labels from BTL(r*)."""
    per = task.answers ** 2
    i, j = np.triu_indices(per, 1)
    a = (np.arange(task.prompts)[:, None] * per + i[None]).ravel()
    b = (np.arange(task.prompts)[:, None] * per + j[None]).ravel()
    w = rng.gamma(0.3, 1.0, a.size)
    pick = rng.choice(a.size, size=n, p=w / w.sum())
    a, b = a[pick], b[pick]
    p = 1.0 / (1.0 + np.exp(-(task.reward[a] - task.reward[b])))
    first = rng.random(n) < p
    return np.where(first, a, b), np.where(first, b, a)


def _run_lm(trial: Trial) -> dict[str, Any]:
    import torch

    from optzoo.llm import tiny_llama
    from optzoo.preference import AuxDelta, auxdpo_loss, dpo_loss, reference_score_vectors

    p, seed = trial.params, trial.seed
    torch.set_num_threads(1)
    task = lm_task(seed, int(p["lm_prompts"]), int(p["lm_answers"]))
    h = int(p["lm_hidden"])
    model = tiny_llama(task.vocab, hidden_size=h, intermediate_size=4 * h,
                       num_layers=int(p["lm_layers"]), num_heads=2, max_position_embeddings=8,
                       pad_token_id=PAD, bos_token_id=BOS, eos_token_id=EOS, seed=seed)
    rng = np.random.default_rng(seed + 1)
    _lm_sft(model, task, rng, int(p["lm_sft_steps"]), float(p["lm_sft_lr"]))
    for q in model.parameters():
        q.requires_grad_(False)
    ref = copy.deepcopy(model)
    feats = lm_features(ref, task)
    with torch.no_grad():
        ref_lp = lm_logps(ref.lm_head, feats, task)
    cm = torch.zeros_like(task.ids)
    cm[:, 2:] = 1
    scores = reference_score_vectors(ref, task.ids, torch.ones_like(task.ids), cm,
                                     params=["lm_head.weight"])
    off, rank = offspan_share(scores.numpy(), task)
    iw, il = _lm_pairs(task, int(p["lm_pairs"]), rng)
    iw_t, il_t = torch.as_tensor(iw), torch.as_tensor(il)
    n = len(iw)
    beta, steps, lr = float(p["lm_beta"]), int(p["lm_steps"]), float(p["lm_lr"])
    # the penalty on the batch mean of δ·g: the score vectors scaled by 1/B (module docstring)
    g_w, g_l = scores[iw_t] / n, scores[il_t] / n
    out: dict[str, Any] = {"offspan_share": off, "score_rank": rank,
                           "answers": int(task.ids.shape[0]),
                           "head_params": int(ref.lm_head.weight.numel()),
                           "reward_base": lm_expected_reward(ref_lp.numpy(), task)}
    for method in METHODS_C:
        head = copy.deepcopy(ref.lm_head)
        head.weight.requires_grad_(True)
        opt = torch.optim.Adam(head.parameters(), lr=lr)
        delta = aux_opt = None
        if method == "auxdpo":
            delta = AuxDelta(n, cap=float(p["delta_cap"]),
                             generator=torch.Generator().manual_seed(seed))
            aux_opt = torch.optim.Adam(delta.parameters(), lr=float(p["aux_lr"]))
        for _ in range(steps):
            lp = lm_logps(head, feats, task)
            if method == "dpo":
                loss = dpo_loss(lp[iw_t], lp[il_t], ref_lp[iw_t], ref_lp[il_t], beta=beta)[0]
            elif method == "auxdpo":
                d_w, d_l = delta(torch.arange(n))
                loss, metrics = auxdpo_loss(lp[iw_t] - ref_lp[iw_t], lp[il_t] - ref_lp[il_t],
                                            d_w, d_l, grads_chosen=g_w, grads_rejected=g_l,
                                            beta=beta, lambda_null=float(p["lambda_null"]),
                                            lambda_amp=float(p["lambda_amp"]))
            else:
                loss = -_rlhf_objective(lp, ref_lp, task, beta)
            opt.zero_grad(set_to_none=True)
            if aux_opt is not None:
                aux_opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if aux_opt is not None:
                aux_opt.step()
        with torch.no_grad():
            lp = lm_logps(head, feats, task)
        out[f"reward_{method}"] = lm_expected_reward(lp.numpy(), task)
        out[f"gain_{method}"] = out[f"reward_{method}"] - out["reward_base"]
        out[f"answer_mass_{method}"] = float(
            lp.exp().view(task.prompts, -1).sum(1).mean())
        if method == "auxdpo":
            with torch.no_grad():
                d_w, d_l = delta(torch.arange(n))
                d = torch.cat([d_w, d_l]).abs()
                v = (d_w.unsqueeze(1) * scores[iw_t].double()
                     + d_l.unsqueeze(1) * scores[il_t].double()).sum(0)
                scale = (d_w.abs().unsqueeze(1) * scores[iw_t].double().norm(dim=1, keepdim=True)
                         + d_l.abs().unsqueeze(1) * scores[il_t].double().norm(
                             dim=1, keepdim=True)).sum()
            out["delta_mean_abs"] = float(d.mean())
            out["delta_max_abs"] = float(d.max())
            # ‖Σ δ g‖ / Σ |δ|‖g‖: 0 when δ lies in N(A), 1 when every δ·g adds up coherently
            out["delta_rowspace_ratio"] = float(v.norm() / scale) if scale > 0 else 0.0
    gain = out["gain_rlhf"]
    for method in METHODS_C:
        out[f"regret_{method}"] = ((out["reward_rlhf"] - out[f"reward_{method}"]) / gain
                                   if gain > 0 else float("nan"))
    return out


# -- claims --------------------------------------------------------------------------------------

def _cell(results: list[Result], ratio: float, beta: float) -> Result | None:
    return next((r for r in results if r.trial.problem == "bandit-a"
                 and float(r.trial.params["ratio"]) == ratio
                 and float(r.trial.params["beta"]) == beta), None)


def _claim_reversal(results: list[Result], cfg: AuxDPOConfig) -> Claim | NotEvaluated:
    text = ("At the paper's imbalance (n₃₁ = 20, β = 1) the population optima of DPO, IPO and "
            "DPO-Positive lower the true reward below the base policy's 1.0 and rank a₁ above "
            "a₂ (a preference reversal).")
    r = _cell(results, *HEADLINE)
    if r is None:
        return NotEvaluated(text, "the headline cell did not run")
    m = r.metrics
    cells = {}
    for meth in BASELINES:
        cells[f"{meth}: reward"] = bound_holds([m[f"reward_{meth}"]],
                                               1.0 - cfg.min_reward_change)
        cells[f"{meth}: a1 above a2"] = bound_holds([m[f"r1_{meth}"] - m[f"r2_{meth}"]],
                                                    cfg.min_reward_change, side="ge")
    ev = "; ".join(f"{meth}: θ = {m[f'theta_{meth}']:.3f}, E[r*] = {m[f'reward_{meth}']:.3f}, "
                   f"order {m[f'order_{meth}']}" for meth in BASELINES)
    return Claim(text, ev + " (paper: DPO 0.895, IPO and DPOP 0.969, all reversed)",
                 all_of(cells))


def _claim_auxdpo(results: list[Result], cfg: AuxDPOConfig) -> Claim | NotEvaluated:
    text = ("AuxDPO's population optimum raises the true reward above the base with the true "
            "order a₂ ≻ a₁ ≻ a₃, at the local-RLHF parameter θ* = θ₀ + F⁺Ar*/β.")
    r = _cell(results, *HEADLINE)
    if r is None:
        return NotEvaluated(text, "the headline cell did not run")
    m = r.metrics
    cells = {"reward": bound_holds([m["reward_auxdpo"]], 1.0 + cfg.min_reward_change,
                                   side="ge"),
             "a2 above a1": bound_holds([m["r2_auxdpo"] - m["r1_auxdpo"]],
                                        cfg.min_reward_change, side="ge"),
             "a1 above a3": bound_holds([m["r1_auxdpo"] - m["r3_auxdpo"]],
                                        cfg.min_reward_change, side="ge"),
             "θ at local RLHF": bound_holds([m["aux_gap_to_local"]], cfg.theta_tol)}
    ev = (f"AuxDPO θ = {m['theta_auxdpo']:.4f} (local RLHF {m['theta_local']:.4f}, exact "
          f"RLHF {m['theta_rlhf']:.4f}), E[r*] = {m['reward_auxdpo']:.3f}, order "
          f"{m['order_auxdpo']} (paper: 1.199)")
    return Claim(text, ev, all_of(cells))


def _claim_counts(results: list[Result], cfg: AuxDPOConfig) -> Claim | NotEvaluated:
    text = ("DPO's solution depends on how the pairs are distributed (Prop. 1) — across the "
            "imbalance sweep its reward crosses the base — while AuxDPO's does not move.")
    betas = [b for b in cfg.betas if all(_cell(results, r, b) for r in cfg.ratios)]
    if len(cfg.ratios) < 2 or not betas:
        return NotEvaluated(text, "needs at least two imbalance ratios")
    cells = {}
    parts = []
    for b in betas:
        cs = [_cell(results, r, b).metrics for r in cfg.ratios]
        dpo = [c["reward_dpo"] for c in cs]
        aux = [c["theta_auxdpo"] for c in cs]
        # crossing: the best and the worst imbalance lie on both sides of the base by the
        # minimal change
        cells[f"β={b:g}: DPO above base somewhere"] = bound_holds(
            [max(dpo)], 1.0 + cfg.min_reward_change, side="ge")
        cells[f"β={b:g}: DPO below base somewhere"] = bound_holds(
            [min(dpo)], 1.0 - cfg.min_reward_change)
        cells[f"β={b:g}: AuxDPO unchanged"] = bound_holds([max(aux) - min(aux)], cfg.theta_tol)
        parts.append(f"β={b:g}: DPO E[r*] {min(dpo):.3f}…{max(dpo):.3f}, AuxDPO θ spread "
                     f"{max(aux) - min(aux):.1e}")
    return Claim(text, "; ".join(parts) + f" over ratios {list(cfg.ratios)}", all_of(cells))


def _b(results: list[Result], dim: int) -> list[Result]:
    return [r for r in results if r.trial.problem == "bandit-b"
            and int(r.trial.params["dim"]) == dim]


def _claim_b(results: list[Result], cfg: AuxDPOConfig, metric: str, min_effect: float,
             text: str, label: str) -> Claim | NotEvaluated:
    """DPO's ``metric`` above AuxDPO's on the Bandit B instances (paired by instance)."""
    d = 8 if 8 in cfg.dims else cfg.dims[0]
    rs = _b(results, d)
    if not rs:
        return NotEvaluated(text.format(d=d), "no Bandit B instance ran")
    finite = lambda r: all(np.isfinite(r.metrics[f"{metric}_{m}"]) for m in METHODS_B)  # noqa
    vals = {m: by_seed(rs, f"{metric}_{m}", where=finite) for m in ("dpo", "ipo", "auxdpo")}
    ev = (f"{label} over {len(vals['dpo'])} instances: " + ", ".join(
        f"{m.upper() if m != 'auxdpo' else 'AuxDPO'} {np.mean(list(v.values())):.3f}"
        for m, v in vals.items()))
    return Claim(text.format(d=d), ev,
                 superior(vals["dpo"], vals["auxdpo"], min_effect=min_effect))


def _claim_degrade(results: list[Result], cfg: AuxDPOConfig) -> Claim | NotEvaluated:
    return _claim_b(results, cfg, "below_base", cfg.min_share,
                    "On random misspecified bandits (d = {d}, S = " + f"{cfg.states}, |A| = "
                    f"{cfg.actions}) DPO lowers the true reward below the base policy on a "
                    "larger share of instances than AuxDPO does.", "share below base")


def _claim_regret(results: list[Result], cfg: AuxDPOConfig) -> Claim | NotEvaluated:
    return _claim_b(results, cfg, "regret", cfg.min_regret,
                    "AuxDPO's regret to exact RLHF is lower than DPO's (d = {d}; regret as a "
                    "share of the RLHF gain).", "regret")


def _claim_dim(results: list[Result], cfg: AuxDPOConfig) -> Claim | NotEvaluated:
    text = ("AuxDPO's advantage over DPO (regret difference) grows as the policy class "
            "shrinks (smaller d).")
    if len(cfg.dims) < 3:
        return NotEvaluated(text, "needs at least three feature dimensions (full preset)")
    xs, ys = [], []
    for d in cfg.dims:
        rs = _b(results, d)
        for r in rs:
            if np.isfinite(r.metrics["regret_dpo"]) and np.isfinite(r.metrics["regret_auxdpo"]):
                xs.append(d)
                ys.append(r.metrics["regret_dpo"] - r.metrics["regret_auxdpo"])
    if len(set(xs)) < 3:
        return NotEvaluated(text, "fewer than three dimensions finished")
    means = {d: np.mean([y for x, y in zip(xs, ys, strict=True) if x == d]) for d in cfg.dims}
    return Claim(text, "mean regret difference by d: " + ", ".join(
        f"{d}: {v:.3f}" for d, v in means.items()),
        trend(xs, ys, direction="decreasing", min_rho=cfg.min_rho))


def _claim_lm(results: list[Result], cfg: AuxDPOConfig) -> Claim | NotEvaluated:
    text = ("On a tiny LM with only its output layer trained (low capacity), AuxDPO's (soft "
            "null-space penalty) policy has a higher expected true reward than DPO's, from the "
            "same SFT base and preference data.")
    rs = [r for r in results if r.trial.problem == "bandit-c"]
    if cfg.lm_seeds == 0:
        return NotEvaluated(text, "Bandit C (the tiny LM) runs in the full preset only")
    if not rs:
        return NotEvaluated(text, "no Bandit C run finished")
    aux, dpo = by_seed(rs, "reward_auxdpo"), by_seed(rs, "reward_dpo")
    mean = lambda k: float(np.mean([r.metrics[k] for r in rs]))  # noqa: E731
    ev = (f"E[r*] over {len(rs)} seeds: base {mean('reward_base'):.3f}, DPO "
          f"{mean('reward_dpo'):.3f}, AuxDPO {mean('reward_auxdpo'):.3f}, RLHF (oracle) "
          f"{mean('reward_rlhf'):.3f}; regret to RLHF DPO {mean('regret_dpo'):.3f}, AuxDPO "
          f"{mean('regret_auxdpo'):.3f}; r* off the score span {mean('offspan_share'):.3f}, "
          f"score rank {mean('score_rank'):.0f} of {mean('answers'):.0f} answers "
          f"({mean('head_params'):.0f} head weights); AuxDPO mean |δ| "
          f"{mean('delta_mean_abs'):.3f} (max {mean('delta_max_abs'):.3f}), row-space ratio "
          f"{mean('delta_rowspace_ratio'):.3f}; probability on two-answer-token answers "
          f"(the rest leaks to other tokens, worth the worst answer): DPO "
          f"{mean('answer_mass_dpo'):.3f}, AuxDPO {mean('answer_mass_auxdpo'):.3f}, RLHF "
          f"{mean('answer_mass_rlhf'):.3f}; seeds where DPO keeps under half of it: "
          f"{sum(r.metrics['answer_mass_dpo'] < 0.5 for r in rs)} of {len(rs)}")
    verdict = superior(aux, dpo, min_effect=cfg.min_gain_c)
    off = min(r.metrics["offspan_share"] for r in rs)
    acts = min(r.metrics["delta_mean_abs"] for r in rs)
    if off < cfg.min_offspan:
        verdict = not_acting(verdict, f"r* is within the policy class here (off-span share "
                                      f"{off:.3f} < {cfg.min_offspan:g} on some seed): DPO is "
                                      "not misspecified")
    elif acts < cfg.min_delta:
        verdict = not_acting(verdict, f"AuxDPO's δ stays at 0 (mean |δ| {acts:.3g} < "
                                      f"{cfg.min_delta:g} on some seed)")
    return Claim(text, ev, verdict)


def summarize(results: list[Result], cfg: AuxDPOConfig, outdir: Path) -> Summary:
    a = [r for r in results if r.trial.problem == "bandit-a"]
    rows = []
    for r in sorted(a, key=lambda r: (r.trial.params["beta"], r.trial.params["ratio"])):
        m = r.metrics
        rows.append([f"{r.trial.params['ratio']:g}", f"{r.trial.params['beta']:g}",
                     *(f"{m[f'reward_{k}']:.3f} ({m[f'order_{k}']})" for k in METHODS_A),
                     f"{m['theta_local']:.3f}"])
    tables = [Table("Bandit A: expected true reward (order of the learned reward) of each "
                    "population optimum",
                    ["n₃₁/n₁₂", "β", *METHODS_A, "local-RLHF θ*"], rows)]
    b = [r for r in results if r.trial.problem == "bandit-b"]
    if b:
        tables.append(aggregate(b, by=["dim"], metrics=[f"regret_{m}" for m in METHODS_B]
                                + [f"below_base_{m}" for m in METHODS_B[:3]],
                                title="Bandit B: regret to RLHF (share of the RLHF gain) and "
                                      "share of instances below the base reward"))
    c = [r for r in results if r.trial.problem == "bandit-c"]
    if c:
        tables.append(aggregate(c, by=["problem"], metrics=["reward_base"]
                                + [f"reward_{m}" for m in METHODS_C]
                                + [f"regret_{m}" for m in METHODS_C[:2]]
                                + [f"answer_mass_{m}" for m in METHODS_C]
                                + ["offspan_share", "delta_mean_abs", "delta_rowspace_ratio"],
                                title="Bandit C (tiny LM, output layer only): exact expected "
                                      "true reward, regret to RLHF, misspecification and δ"))
    figures = [_figure(a, cfg, outdir)] if a else []
    claims, notes = split_claims([
        _claim_reversal(results, cfg), _claim_auxdpo(results, cfg), _claim_counts(results, cfg),
        _claim_degrade(results, cfg), _claim_regret(results, cfg), _claim_dim(results, cfg),
        _claim_lm(results, cfg)])
    notes += ["Population optima computed exactly (no sampling): L-BFGS on analytic "
              "gradients, IPO by least squares.",
              f"DPO-Positive at λ = {cfg.dpop_lambda:g} (the DPOP paper's value; AuxDPO's "
              "paper does not give its λ)."]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


def _figure(a: list[Result], cfg: AuxDPOConfig, outdir: Path) -> Figure:
    fig, axes = grid(len(cfg.betas), panel=(4.2, 3.4))
    for ax, beta in zip(axes, cfg.betas, strict=True):
        rs = [r for r in a if float(r.trial.params["beta"]) == beta]
        line_panel(ax, {m: {float(r.trial.params["ratio"]): [r.metrics[f"reward_{m}"]]
                            for r in rs} for m in METHODS_A},
                   reference={"base policy": ([min(cfg.ratios), max(cfg.ratios)], [1.0, 1.0])},
                   xlabel="n₃₁ / n₁₂ (pair imbalance)", ylabel="expected true reward",
                   title=f"β = {beta:g}", xlog=True, legend=beta == cfg.betas[-1])
    return save(fig, outdir / "auxdpo.png",
                "Bandit A: expected true reward of each method's exact population optimum "
                "against the pair imbalance (deterministic: one value per cell, no CI; dashed: "
                "the base policy).")


REPRODUCTION = Reproduction(
    slug="auxdpo",
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Exact population optima of DPO, IPO, DPO-Positive, AuxDPO (δ in the null space of A) "
        "and KL-regularised RLHF on the paper's 3-action bandit (pair-imbalance and β sweep), "
        "on random misspecified linear-softmax bandits (20 states, 10 actions), and (full) on "
        "a tiny LM tuned in its output layer only (DPO vs soft-penalty AuxDPO vs RLHF)."),
)
