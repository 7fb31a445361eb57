"""AuxDPO: DPO with auxiliary null-space variables (Gopalan, Ray Chowdhury & Banerjee, "Why DPO
is a Misspecified Estimator and How to Fix It", ICLR 2026, arXiv 2510.20413).

With a parametric policy the implicit rewards β·log(π_θ/π_ref) span only a d-dimensional
manifold; a true reward off it makes DPO a misspecified estimator (preference reversal, reward
below the base policy).  The RLHF solution depends on a reward r only through A r (A: the
d × m matrix of score vectors at θ₀), so every r + N(A) gives the same RLHF policy.  AuxDPO adds
δ ∈ N(A) to the implicit reward and optimises (θ, δ) jointly (paper Sec. 4.2).

The practical loss, as the official code (``Debangshu93/AuxDPO``, ``AuxDPOTrainer``) computes it
on a batch of pairs i with dataset indices ``idx_i``:

* δ is ONE trainable vector of 2N entries over the training set (2·idx for the chosen, 2·idx + 1
  for the rejected response), bounded as ``δ = c·tanh(δ_raw)`` with c = ``delta_cap`` = 1 and
  δ_raw ~ N(0, 10⁻⁶) at the start (:class:`AuxDelta`);
* margin ``m_i = (Δ_w,i − Δ_l,i) + δ_2i − δ_2i+1`` with Δ = Σ_t log π_θ − log π_ref over the
  response, ``L_dpo = mean_i −log σ(β m_i)`` — δ sits inside the β factor;
* null-space penalty ``P_null = ‖Σ_i (δ_2i g_w,i + δ_2i+1 g_l,i)‖²`` with g = ∇ log π_ref(y | x)
  of the FROZEN reference, w.r.t. its copies of the trainable parameters, per sample, detached
  (:func:`reference_score_vectors`): ``P_null = ‖A_Bᵀ δ_B‖²`` with one unweighted row per
  response;
* anti-collapse term ``P_amp = −½(mean_i δ_2i² + mean_i δ_2i+1²)`` — negative: it rewards a
  non-zero δ, which the tanh cap bounds;
* ``L = L_dpo + λ_null·P_null + λ_amp·P_amp``; defaults λ_null = 1, λ_amp = 0.01 (the code's
  class defaults; the released run uses 10⁻⁴ and 1).  δ has its own optimiser (lr 5·10⁻³, no
  weight decay) and is discarded after training.

With δ ≡ 0 and both λ = 0 the loss is DPO's sigmoid loss (tested against TRL).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from optzoo.checks import check_int, check_real
from optzoo.preference.dpo import _check_pairs, pair_metrics
from optzoo.preference.tdpo import _wide

__all__ = ["AuxDelta", "auxdpo_loss", "null_space_penalty", "reference_score_vectors"]


class AuxDelta(nn.Module):
    """The auxiliary variables δ = c·tanh(δ_raw) of ``n_pairs`` pairs (2 per pair).

    ``forward(idx)`` returns ``(δ_chosen, δ_rejected)`` of the pairs with dataset indices
    ``idx`` ``(B,)``.
    """

    def __init__(self, n_pairs: int, *, cap: float = 1.0, init_std: float = 1e-3,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        check_int("n_pairs", n_pairs, low=1)
        check_real("cap", cap, low=0, low_open=True)
        check_real("init_std", init_std, low=0)
        self.cap = float(cap)
        self.raw = nn.Parameter(init_std * torch.randn(2 * n_pairs, generator=generator,
                                                       dtype=torch.float64))

    def forward(self, idx: Tensor) -> tuple[Tensor, Tensor]:
        if not isinstance(idx, Tensor) or idx.dim() != 1 or idx.is_floating_point():
            raise ValueError(f"idx: expected a (B,) integer tensor of pair indices, got "
                             f"{getattr(idx, 'shape', type(idx).__name__)}")
        n = self.raw.shape[0] // 2
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= n):
            raise ValueError(f"idx: expected pair indices in [0, {n}), got "
                             f"[{int(idx.min())}, {int(idx.max())}]")
        delta = self.cap * torch.tanh(self.raw)
        return delta[2 * idx], delta[2 * idx + 1]


def null_space_penalty(delta_chosen: Tensor, delta_rejected: Tensor, grads_chosen: Tensor,
                       grads_rejected: Tensor) -> Tensor:
    """``‖Σ_i (δ_w,i g_w,i + δ_l,i g_l,i)‖²`` with per-response reference score vectors
    ``grads_*`` ``(B, d)`` (detached): zero iff δ_B ∈ N(A_Bᵀ)."""
    b = _check_pairs(delta_chosen=delta_chosen, delta_rejected=delta_rejected)
    for name, g in (("grads_chosen", grads_chosen), ("grads_rejected", grads_rejected)):
        if not isinstance(g, Tensor) or g.dim() != 2 or g.shape[0] != b:
            raise ValueError(f"{name}: expected a ({b}, d) tensor of score vectors, got "
                             f"{getattr(g, 'shape', type(g).__name__)}")
        if not bool(torch.isfinite(g).all()):
            raise ValueError(f"{name}: contains NaN or infinite values")
    if grads_chosen.shape != grads_rejected.shape:
        raise ValueError(f"grads_rejected: expected the shape of grads_chosen "
                         f"{tuple(grads_chosen.shape)}, got {tuple(grads_rejected.shape)}")
    dt = delta_chosen.dtype
    v = (delta_chosen.unsqueeze(1) * grads_chosen.detach().to(dt)
         + delta_rejected.unsqueeze(1) * grads_rejected.detach().to(dt)).sum(0)
    return (v * v).sum()


def auxdpo_loss(chosen_logratios: Tensor, rejected_logratios: Tensor, delta_chosen: Tensor,
                delta_rejected: Tensor, *, grads_chosen: Tensor | None = None,
                grads_rejected: Tensor | None = None, beta: float = 0.1,
                lambda_null: float = 1.0, lambda_amp: float = 0.01,
                ) -> tuple[Tensor, dict[str, Tensor]]:
    """AuxDPO's loss (module docstring) on sequence log-ratio sums Δ ``(B,)`` and the pairs' δ.

    ``grads_chosen`` / ``grads_rejected`` (``(B, d)``, :func:`reference_score_vectors`) are
    required when ``lambda_null > 0``.

    Example:
        >>> import torch
        >>> from optzoo.preference import AuxDelta, auxdpo_loss
        >>> z = torch.zeros(2)
        >>> loss, m = auxdpo_loss(z, z, torch.tensor([1.0, 1.0]), z, beta=1.0, lambda_null=0.0,
        ...                       lambda_amp=0.0)
        >>> round(float(loss), 4)  # −log σ(1): δ alone fits the preference
        0.3133

        In training, δ is an :class:`AuxDelta` over the data set and the score vectors come
        from :func:`reference_score_vectors` (random stand-ins here):

        >>> gen = torch.Generator().manual_seed(0)
        >>> delta = AuxDelta(n_pairs=10, generator=gen)
        >>> d_w, d_l = delta(torch.tensor([3, 7]))  # the batch's pairs, by dataset index
        >>> logratio_w = torch.tensor([0.5, -0.2], dtype=torch.float64, requires_grad=True)
        >>> logratio_l = torch.tensor([0.1, 0.3], dtype=torch.float64)
        >>> g_w, g_l = torch.randn(2, 2, 5, generator=gen, dtype=torch.float64)  # (B, d) each
        >>> loss, m = auxdpo_loss(logratio_w, logratio_l, d_w, d_l, grads_chosen=g_w,
        ...                       grads_rejected=g_l)
        >>> loss.backward()
        >>> round(float(m["loss/dpo"]), 4), int((delta.raw.grad != 0).sum())  # 4 δ entries
        (0.6959, 4)
    """
    _check_pairs(chosen_logratios=chosen_logratios, rejected_logratios=rejected_logratios,
                 delta_chosen=delta_chosen, delta_rejected=delta_rejected)
    check_real("beta", beta, low=0, low_open=True)
    check_real("lambda_null", lambda_null, low=0)
    check_real("lambda_amp", lambda_amp, low=0)
    margin = (chosen_logratios - rejected_logratios) + (delta_chosen - delta_rejected).to(
        chosen_logratios.dtype)
    dpo = -F.logsigmoid(beta * margin).mean()
    amp = -0.5 * ((delta_chosen ** 2).mean() + (delta_rejected ** 2).mean())
    loss = dpo + lambda_amp * amp.to(dpo.dtype)
    metrics = pair_metrics(beta * chosen_logratios, beta * rejected_logratios)
    if lambda_null > 0:
        if grads_chosen is None or grads_rejected is None:
            raise ValueError("grads_chosen, grads_rejected: the null-space penalty "
                             "(lambda_null > 0) needs the reference score vectors")
        null = null_space_penalty(delta_chosen, delta_rejected, grads_chosen, grads_rejected)
        loss = loss + lambda_null * null.to(dpo.dtype)
        metrics["aux/null_penalty"] = null.detach()
    d = torch.cat([delta_chosen.detach(), delta_rejected.detach()]).abs()
    metrics.update({"loss/dpo": dpo.detach(), "aux/delta_mean_abs": d.mean(),
                    "aux/delta_max_abs": d.max()})
    return loss, metrics


def reference_score_vectors(ref_model: nn.Module, input_ids: Tensor, attention_mask: Tensor,
                            completion_mask: Tensor, *, params: list[str] | None = None
                            ) -> Tensor:
    """Per-sample ``g = ∇_φ Σ_t log π_ref(y_t | x, y_<t)`` over the completion, ``(N, d)``.

    ``input_ids``, ``attention_mask``, ``completion_mask`` are TRL's ``(N, L)`` tensors (prompt
    + completion, ``completion_mask`` 1 on completion tokens); φ are the reference's parameters
    named in ``params`` — pass the names of the POLICY's trainable parameters (the official code
    takes the reference's copies of exactly those; LoRA names when only adapters train);
    default: every parameter — flattened in order.  One backward per sample, as the official
    code does; the reference's ``.grad`` and ``requires_grad`` flags are left as they were.
    """
    for name, t in (("attention_mask", attention_mask), ("completion_mask", completion_mask)):
        if not isinstance(t, Tensor) or t.shape != input_ids.shape:
            raise ValueError(f"{name}: expected shape {tuple(input_ids.shape)}, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    named = dict(ref_model.named_parameters())
    names = list(named) if params is None else list(params)
    missing = [n for n in names if n not in named]
    if missing or not names:
        raise ValueError(f"params: expected names of the reference's parameters, got "
                         f"{missing or names}")
    chosen = [named[n] for n in names]
    flags = [p.requires_grad for p in chosen]
    for p in chosen:  # a frozen reference: differentiate w.r.t. these copies all the same
        p.requires_grad_(True)
    try:
        rows = _score_rows(ref_model, input_ids, attention_mask, completion_mask, chosen)
    finally:
        for p, flag in zip(chosen, flags, strict=True):
            p.requires_grad_(flag)
    return torch.stack(rows).detach()


def _score_rows(ref_model, input_ids, attention_mask, completion_mask, chosen) -> list[Tensor]:
    rows = []
    with torch.enable_grad():
        for i in range(input_ids.shape[0]):
            logits = ref_model(input_ids=input_ids[i:i + 1],
                               attention_mask=attention_mask[i:i + 1]).logits[0, :-1]
            logp = F.log_softmax(_wide(logits), -1).gather(
                -1, input_ids[i, 1:].unsqueeze(-1)).squeeze(-1)
            seq = (logp * completion_mask[i, 1:].to(logp.dtype)).sum()
            grads = torch.autograd.grad(seq, chosen, allow_unused=True)
            rows.append(torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1)
                                   for g, p in zip(grads, chosen, strict=True)]))
    return rows
