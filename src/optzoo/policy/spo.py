"""SPO: Xu & Ding, "Single-stream Policy Optimization" (ICLR 2026, OpenReview ``b61UW62K7W``,
arXiv 2509.13232).  Official code: ``verl-project/verl-recipe``, ``spo/spo_ray_trainer.py``
(read for every step below; the equations are the paper's, the constants the code's).

One response per prompt; the baseline comes from a persistent per-prompt estimate instead of
the group:

1. **Tracker** (:class:`SPOValueTracker`): a Beta(a, b) posterior of the prompt's success rate,
   v̂ = a/(a + b), N_eff = a + b.
2. **KL-adaptive forgetting**: before absorbing reward r,
   a ← ρ·a + r,  b ← ρ·b + (1 − r),  ρ = clip(2^(−D/D_half), ρ_min, ρ_max)
   (:func:`kl_adaptive_rho`), D the mean over the tokens of the prompt's previously stored
   response of |log π_then − log π_now| (:func:`kl_divergence_proxy`); D_half = 0.06 and
   ρ_max = 0.96 are hard-coded in the code, ρ_min is its ``rho.clip_lower``; a constant-ρ mode
   exists (``rho_mode="constant"``, not clipped, as in the code).
   Equivalently v̂ ← v̂ + η(r − v̂) with η = 1/(ρ·N_eff + 1) (tested as a property).
3. **Initialisation** from n0 offline samples with s successes: N_0 = 1/(1 − ρ_min),
   a0 = N_0(s + ½)/(n0 + 1), b0 = N_0(n0 − s + ½)/(n0 + 1); with n0 = 0, a0 = b0 = ½ (the code's
   special case, not N_0/2).  Prompts never initialised start at a = b = ½.
4. **Advantage** (:func:`spo_advantages`): A = r − v̂ with the tracker value from BEFORE this
   reward, then global normalisation over the batch, (A − mean)/(std + 1e-8), std Bessel-corrected
   (``torch.std``, as the code); broadcast to every token and fed to the PPO-clip loss
   (:func:`optzoo.policy.grpo_loss`, e.g. ``loss_type="bnpo"``: verl's token mean).
5. **Prioritised sampling** (:func:`spo_sampling_weights`, :func:`sample_prompts`):
   w ∝ sqrt(v̂(1 − v̂))/N_eff^γ + 0.05; the code uses γ = 0 (our default; the paper's γ ∈ [0, 1] is
   an argument) and draws the batch from the candidates with these probabilities, with
   replacement only when more are needed than there are candidates.

Order per iteration in the code (the trainer's job; this module only holds the state):
weights → sample prompts → one response each → rewards → advantages from the tracker as it is
→ PPO update → D and ρ: for each prompt, D is measured on its stored response (log-probs stored
at its last visit vs the policy now, after this update); a prompt without a stored response gets
D = 0, hence ρ = ρ_max → store this batch's responses with their log-probs under the updated
policy → a, b update.  (So the "policy then" is the policy after the update of the prompt's
previous visit, which is what the code stores.)

Readings and deviations:

* ρ_min has no default in the material read; 0.875 (the brief's choice; N_0 = 8).
* Rewards must lie in [0, 1] (binary in the paper): the pseudo-count update is then a valid Beta
  update and the EMA identity holds; other reward ranges must be rescaled by the caller.
* A prompt drawn twice in one batch (possible only when sampling with replacement) is updated
  once per occurrence, in batch order; the code overwrites, keeping the last occurrence only.
* The brief's "keep the 1e-8 and clip" on the global normalisation: the code does not clip and
  neither do we; the statistics are taken in float64 so that a batch of identical advantages
  gives |Ã| ≲ 1e-8 (rounding noise ~1e-17 over std + 1e-8), not float32 noise ~1e-8 over
  ~1e-8, which is O(1).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import torch
from torch import Tensor

from optzoo.checks import check_real, check_tensor

RHO_MODES = ("kl", "constant")

__all__ = [
    "RHO_MODES", "SPOValueTracker", "kl_adaptive_rho", "kl_divergence_proxy", "sample_prompts",
    "spo_advantages", "spo_sampling_weights",
]


def kl_divergence_proxy(stored_logp: Tensor, current_logp: Tensor, mask: Tensor) -> Tensor:
    """``(B,)`` divergence proxy D: the mean over the active tokens of ``mask`` of
    |stored_logp − current_logp| (0 for an empty response)."""
    if stored_logp.shape != current_logp.shape or stored_logp.shape != mask.shape:
        raise ValueError(f"stored_logp {tuple(stored_logp.shape)}, current_logp "
                         f"{tuple(current_logp.shape)} and mask {tuple(mask.shape)} must match")
    active = mask > 0
    diff = torch.where(active, (stored_logp - current_logp).abs(), stored_logp.new_zeros(()))
    return diff.sum(-1) / active.sum(-1).clamp(min=1).to(diff.dtype)


def kl_adaptive_rho(divergence: Tensor, d_half: float = 0.06, rho_min: float = 0.875,
                    rho_max: float = 0.96) -> Tensor:
    """ρ = clip(2^(−D/D_half), ρ_min, ρ_max): the tracker forgets half its evidence per D_half
    of policy change."""
    if d_half <= 0.0:
        raise ValueError(f"d_half must be > 0, got {d_half}")
    if not 0.0 <= rho_min <= rho_max <= 1.0:
        raise ValueError(f"need 0 <= rho_min <= rho_max <= 1, got {rho_min}, {rho_max}")
    return torch.pow(2.0, -divergence / d_half).clamp(rho_min, rho_max)


def spo_advantages(rewards: Tensor, values: Tensor, eps: float = 1e-8) -> Tensor:
    """Globally normalised SPO advantages ``(B,)``: A = r − v̂ (v̂ from before this reward), then
    (A − mean_B)/(std_B + ``eps``) over the batch; a batch of one gives 0.

    Example:
        >>> import torch
        >>> from optzoo.policy import SPOValueTracker, spo_advantages
        >>> tracker = SPOValueTracker()
        >>> keys = ["p0", "p1", "p2"]  # one response per prompt: a single stream
        >>> rewards = torch.tensor([1.0, 0.0, 1.0])
        >>> spo_advantages(rewards, tracker.values(keys))  # v̂ before this reward
        tensor([ 0.5774, -1.1547,  0.5774])
    """
    check_tensor("rewards", rewards)
    check_tensor("values", values)
    check_real("eps", eps, low=0.0)
    if rewards.dim() != 1 or values.shape != rewards.shape:
        raise ValueError(f"rewards and values must be matching 1-D tensors, got "
                         f"{tuple(rewards.shape)} and {tuple(values.shape)}")
    adv = rewards.to(torch.float64) - values.to(device=rewards.device, dtype=torch.float64)
    if adv.numel() < 2:
        return torch.zeros_like(rewards)
    centred = adv - adv.mean()
    return (centred / (adv.std() + eps)).to(rewards.dtype)


def spo_sampling_weights(values: Tensor, n_eff: Tensor | None = None, gamma: float = 0.0,
                         eps: float = 0.05) -> Tensor:
    """Unnormalised priorities sqrt(v̂(1 − v̂))/N_eff^γ + ε (the code: γ = 0, ε = 0.05)."""
    if gamma != 0.0 and n_eff is None:
        raise ValueError("n_eff is required when gamma != 0")
    spread = (values * (1.0 - values)).clamp(min=0.0).sqrt()
    if gamma != 0.0:
        spread = spread / n_eff.to(values.dtype).pow(gamma)
    return spread + eps


def sample_prompts(weights: Tensor, batch_size: int,
                   generator: torch.Generator | None = None) -> Tensor:
    """Indices of ``batch_size`` candidates drawn with probabilities ∝ ``weights``; without
    replacement unless ``batch_size`` exceeds the number of candidates (as the code)."""
    if weights.dim() != 1 or weights.numel() == 0:
        raise ValueError(f"weights must be a non-empty 1-D tensor, got {tuple(weights.shape)}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if torch.any(weights < 0) or not torch.all(torch.isfinite(weights)):
        raise ValueError("weights must be finite and non-negative")
    w = weights.to(torch.float64)
    probs = w / w.sum() if w.sum() > 0 else torch.full_like(w, 1.0 / w.numel())
    replace = batch_size > w.numel()
    return torch.multinomial(probs, batch_size, replacement=replace, generator=generator)


class SPOValueTracker:
    """Per-prompt KL-adaptive Beta value tracker (SPO §3; ``spo_ray_trainer.py``).

    Args:
        rho_min, rho_max: clip range of ρ (ρ_max = 0.96 in the code; ρ_min its ``clip_lower``).
        d_half: divergence that halves the evidence (0.06 in the code).
        rho_mode: ``"kl"`` (ρ from the divergence) or ``"constant"`` (ρ = ``rho_constant``).
        rho_constant: ρ of the constant mode.

    Keys are any hashable prompt identifiers.  The tracker also keeps, per prompt, the last
    response and its log-probs (:meth:`store_response`) from which the trainer measures D.

    Example:
        >>> import torch
        >>> from optzoo.policy import SPOValueTracker
        >>> tracker = SPOValueTracker()
        >>> keys = ["p0", "p1", "p2"]
        >>> tracker.values(keys)  # the uninformed prior Beta(0.5, 0.5)
        tensor([0.5000, 0.5000, 0.5000], dtype=torch.float64)
        >>> rho = tracker.rho(torch.tensor([0.0, 0.0, 0.5]))  # from the policy's divergence D
        >>> tracker.update(keys, [1.0, 0.0, 1.0], rho=rho)
        >>> tracker.values(keys), tracker.visits("p0")
        (tensor([0.7551, 0.2449, 0.7667], dtype=torch.float64), 1)
        >>> tracker.sampling_weights(keys).shape  # priorities for prompt sampling
        torch.Size([3])
    """

    def __init__(self, *, rho_min: float = 0.875, rho_max: float = 0.96, d_half: float = 0.06,
                 rho_mode: str = "kl", rho_constant: float = 0.9) -> None:
        if not 0.0 <= rho_min <= rho_max < 1.0:
            raise ValueError(f"need 0 <= rho_min <= rho_max < 1, got {rho_min}, {rho_max}")
        if d_half <= 0.0:
            raise ValueError(f"d_half must be > 0, got {d_half}")
        if rho_mode not in RHO_MODES:
            raise ValueError(f"rho_mode must be one of {RHO_MODES}, got {rho_mode!r}")
        if not 0.0 <= rho_constant <= 1.0:
            raise ValueError(f"rho_constant must be in [0, 1], got {rho_constant}")
        self.rho_min, self.rho_max, self.d_half = rho_min, rho_max, d_half
        self.rho_mode, self.rho_constant = rho_mode, rho_constant
        self._a: dict[Hashable, float] = {}
        self._b: dict[Hashable, float] = {}
        self._visits: dict[Hashable, int] = {}
        self._responses: dict[Hashable, Any] = {}

    @property
    def n_init(self) -> float:
        """N_0 = 1/(1 − ρ_min), the equilibrium N_eff under maximal forgetting."""
        return 1.0 / (1.0 - self.rho_min)

    def __len__(self) -> int:
        return len(self._a)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._a

    def initialize(self, key: Hashable, successes: float = 0.0, trials: int = 0) -> None:
        """Set the prior of ``key`` from ``successes`` out of ``trials`` offline samples."""
        if not isinstance(trials, int) or trials < 0 or not 0 <= successes <= trials:
            raise ValueError(f"need an int trials >= 0 and 0 <= successes <= trials, got "
                             f"{successes}, {trials}")
        if trials == 0:
            self._a[key], self._b[key] = 0.5, 0.5
        else:
            self._a[key] = self.n_init * (successes + 0.5) / (trials + 1)
            self._b[key] = self.n_init * (trials - successes + 0.5) / (trials + 1)
        self._visits.setdefault(key, 0)

    def _ensure(self, key: Hashable) -> None:
        if key not in self._a:
            self.initialize(key)

    def alpha_beta(self, key: Hashable) -> tuple[float, float]:
        """(a, b) of ``key``."""
        self._ensure(key)
        return self._a[key], self._b[key]

    def visits(self, key: Hashable) -> int:
        """Number of rewards absorbed for ``key``."""
        return self._visits.get(key, 0)

    def values(self, keys: Sequence[Hashable]) -> Tensor:
        """``(len(keys),)`` float64 success-rate estimates v̂ = a/(a + b)."""
        for k in keys:
            self._ensure(k)
        return torch.tensor([self._a[k] / (self._a[k] + self._b[k]) for k in keys],
                            dtype=torch.float64)

    def n_eff(self, keys: Sequence[Hashable]) -> Tensor:
        """``(len(keys),)`` float64 effective sample sizes a + b."""
        for k in keys:
            self._ensure(k)
        return torch.tensor([self._a[k] + self._b[k] for k in keys], dtype=torch.float64)

    def rho(self, divergence: Tensor) -> Tensor:
        """Forgetting factors for divergences D (the constant in ``"constant"`` mode)."""
        if self.rho_mode == "constant":
            return torch.full_like(divergence, self.rho_constant)
        return kl_adaptive_rho(divergence, self.d_half, self.rho_min, self.rho_max)

    def update(self, keys: Sequence[Hashable], rewards: Tensor | Sequence[float],
               rho: Tensor | Sequence[float] | float) -> None:
        """Absorb one reward per key: a ← ρa + r, b ← ρb + (1 − r), in batch order."""
        r = torch.as_tensor(rewards, dtype=torch.float64).reshape(-1).tolist()
        if len(r) != len(keys):
            raise ValueError(f"rewards has {len(r)} entries for {len(keys)} keys")
        if any(not 0.0 <= x <= 1.0 for x in r):
            raise ValueError("rewards must lie in [0, 1] (rescale them: SPO's tracker is a Beta "
                             "posterior of a success rate)")
        rhos = torch.as_tensor(rho, dtype=torch.float64).reshape(-1)
        rhos = rhos.expand(len(keys)) if rhos.numel() == 1 else rhos
        if rhos.numel() != len(keys) or torch.any((rhos < 0) | (rhos > 1)):
            raise ValueError("rho must be a scalar or one value per key, each in [0, 1]")
        for key, x, p in zip(keys, r, rhos.tolist(), strict=True):
            self._ensure(key)
            self._a[key] = p * self._a[key] + x
            self._b[key] = p * self._b[key] + (1.0 - x)
            self._visits[key] = self._visits.get(key, 0) + 1

    def sampling_weights(self, keys: Sequence[Hashable], gamma: float = 0.0,
                         eps: float = 0.05) -> Tensor:
        """:func:`spo_sampling_weights` of the tracked values of ``keys``."""
        return spo_sampling_weights(self.values(keys), self.n_eff(keys), gamma=gamma, eps=eps)

    def store_response(self, key: Hashable, response: Any) -> None:
        """Keep ``response`` (e.g. ``(completion_ids, logp)`` of this visit, log-probs under the
        policy after this step's update) as the one D is measured on at the next visit."""
        self._responses[key] = response

    def stored_response(self, key: Hashable) -> Any | None:
        """The response stored at the last visit of ``key``, or ``None``."""
        return self._responses.get(key)

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume (``torch.save``-able when keys and responses are)."""
        return {"a": dict(self._a), "b": dict(self._b), "visits": dict(self._visits),
                "responses": dict(self._responses),
                "config": {"rho_min": self.rho_min, "rho_max": self.rho_max,
                           "d_half": self.d_half, "rho_mode": self.rho_mode,
                           "rho_constant": self.rho_constant}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (its config must equal this tracker's)."""
        config = {"rho_min": self.rho_min, "rho_max": self.rho_max, "d_half": self.d_half,
                  "rho_mode": self.rho_mode, "rho_constant": self.rho_constant}
        if state.get("config") != config:
            raise ValueError(f"state's config {state.get('config')} differs from {config}")
        self._a, self._b = dict(state["a"]), dict(state["b"])
        self._visits, self._responses = dict(state["visits"]), dict(state["responses"])
