"""TI-DPO: Token-Importance guided DPO (Yang et al., ICLR 2026, OpenReview ``cMEnMVvMw9``,
arXiv 2505.19653).

DPO scores a whole response; TI-DPO weights each token's log-ratio by a hybrid importance and
adds a triplet term on the policy's own samples.  The pieces, with the paper's equations and the
readings this module makes (the brief ``ti-dpo.md`` lists its sources: the paper's text as far
as it was reachable, its hyperparameter table B12, and a public fork of the official trainer):

1. **Gradient attribution** (Eq. 5–6), :func:`token_importance`: for each sequence (prompt +
   response) the target is the maximum logit at its final (last attended) position; the
   importance of token i is ``I_i = ‖∂target/∂e_i‖₁`` over the embedding dimensions of its input
   embedding, with the CURRENT policy, detached.  ``torch.autograd.grad`` with respect to the
   embeddings alone leaves the parameters' ``.grad`` untouched (the fork zeroes them instead).
2. **Gaussian positional prior** (App. B.6), :func:`gaussian_prior`:
   ``P(t) = exp(−½((t − μ)/σ)²)``, μ = (T − 1)/2, σ = T/``sigma_div`` over the T response
   tokens.  The paper's σ = T/4 is the default; the fork's code uses T/8 (``sigma_div=8``).
3. **Hybrid weight** (Eq. 7), :func:`hybrid_weights`: ``w_t = λ·Ĩ_t + (1 − λ)·P̃_t`` with λ =
   0.7 (Table B12).  Normalisation (``weight_norm``; the paper's exact normalisation was not
   reachable, the fork's is the default): ``"sum_to_T"`` — I clamped ≥ 0 and divided by its sum
   over the response, P likewise, the mixture renormalised to sum 1 and multiplied by T (mean
   weight 1, so the margin keeps the scale of the unweighted sum); ``"sum_to_1"`` — the same
   without the factor T (the effective β shrinks by ~T); ``"minmax"`` — I and P min–max
   scaled to [0, 1] before mixing.  Prompt and padding tokens get weight 0.
4. **Weighted TDPO2 term** (Eq. 10–11), :func:`ti_dpo_loss`: with ρ_t = log π_θ − log π_ref,
   ``z = Σ_t w^w_t ρ_t(y_w) − Σ_t w^l_t ρ_t(y_l) − α·(SeqKL(x, y_l) − sg(SeqKL(x, y_w)))``,
   ``L_DPO-w = −log σ(β z)``; the weights multiply only the log-ratio sums, the sequential KL
   stays unweighted (the fork's code; :mod:`optzoo.preference.tdpo`).
5. **Triplet term** (Eq. 4 / 14): an anchor y ~ π_θ(· | x) sampled from the prompt and
   re-scored with gradients; distances in per-token log-ratio space position by position over
   the common length, ``d(a, b) = Σ_{t ≤ min(|a|, |b|)} (ρ_t(a) − ρ_t(b))²``;
   ``L_triplet = mean_b max(0, d(y, y_w) − d(y, y_l) + α_trp)``.  ``distance="scalar_reward_sq"``
   (``(Σρ(a) − Σρ(b))²``) is kept only as an ablation.
6. **Total**: ``L = mean_b(L_DPO-w) + γ·L_triplet`` with β = 0.1, α = 0.5, γ = 0.1 (Table B12)
   and α_trp = 0.01 (the run script; the paper does not fix it).

With w ≡ 1, α = 0 and γ = 0 the loss equals DPO's sigmoid loss (``tests/preference``: against
TRL's ``DPOTrainer``).  Tensor conventions: per-token tensors are RESPONSE-ALIGNED ``(B, T)`` —
column t is response token t, right-padded, ``mask`` 1 on response tokens;
:func:`align_completions` turns TRL's full-sequence tensors (prompt + completion with a
``completion_mask``) into this form.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from optzoo.checks import check_real
from optzoo.preference.dpo import _check_pairs, pair_metrics
from optzoo.preference.tdpo import per_token_logratios, sequential_kl

__all__ = ["DISTANCES", "WEIGHT_NORMS", "align_completions", "gaussian_prior", "hybrid_weights",
           "logratio_distance", "response_terms", "response_weights", "ti_dpo_loss",
           "token_importance"]

WEIGHT_NORMS = ("sum_to_T", "sum_to_1", "minmax")
DISTANCES = ("logratio_seq_sq", "scalar_reward_sq")


def _check_mask(name: str, mask: Tensor, like: Tensor | None = None) -> Tensor:
    if not isinstance(mask, Tensor) or mask.dim() != 2:
        raise ValueError(f"{name}: expected a (B, T) tensor, got "
                         f"{getattr(mask, 'shape', type(mask).__name__)}")
    if like is not None and mask.shape != like.shape:
        raise ValueError(f"{name}: expected shape {tuple(like.shape)}, got {tuple(mask.shape)}")
    return mask.bool()


def _check_tokens(name: str, t: Tensor, mask: Tensor) -> None:
    if not isinstance(t, Tensor) or not t.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point (B, T) tensor, got "
                        f"{type(t).__name__}" + (f" of dtype {t.dtype}"
                                                 if isinstance(t, Tensor) else ""))
    if t.shape != mask.shape:
        raise ValueError(f"{name}: expected the shape of its mask {tuple(mask.shape)}, got "
                         f"{tuple(t.shape)}")
    if not bool(torch.isfinite(t[mask.bool()]).all()):
        raise ValueError(f"{name}: contains NaN or infinite values on response tokens")


def align_completions(values: Tensor, completion_mask: Tensor) -> tuple[Tensor, Tensor]:
    """Move each row's completion positions (``completion_mask`` 1) to the front, in order:
    ``(B, L) → (B, T)`` with T the longest completion, and the response-aligned mask.

    Example:
        >>> import torch
        >>> from optzoo.preference import align_completions
        >>> v = torch.tensor([[9., 9., 1., 2.], [9., 3., 0., 0.]])
        >>> m = torch.tensor([[0, 0, 1, 1], [0, 1, 0, 0]])
        >>> align_completions(v, m)[0].tolist()
        [[1.0, 2.0], [3.0, 0.0]]
    """
    keep = _check_mask("completion_mask", completion_mask, values)
    lengths = keep.sum(1)
    t = int(lengths.max()) if lengths.numel() else 0
    # a stable sort puts the kept positions first, in their original order
    order = torch.sort((~keep).to(torch.int8), dim=1, stable=True).indices[:, :t]
    out = values.gather(1, order)
    mask = torch.arange(t, device=values.device).unsqueeze(0) < lengths.unsqueeze(1)
    return torch.where(mask, out, torch.zeros_like(out)), mask.to(completion_mask.dtype)


def token_importance(model, input_ids: Tensor, attention_mask: Tensor | None = None) -> Tensor:
    """Gradient attribution ``I_i = ‖∂ max_v logit_{final}(v) / ∂e_i‖₁`` (TI-DPO Eq. 5–6) for
    every input position, ``(B, L)``, detached; ``final`` is each row's last attended position.

    ``model`` is a Hugging Face causal LM (anything with ``get_input_embeddings()`` and an
    ``inputs_embeds`` forward).  The sequences of a batch do not interact, so one backward of the
    summed targets gives every row's gradient.  Parameters' ``.grad`` are left as they were.

    Example:
        >>> import torch
        >>> from optzoo.llm import tiny_llama
        >>> from optzoo.preference import token_importance
        >>> model = tiny_llama(11, hidden_size=16, intermediate_size=32, num_layers=2,
        ...                    num_heads=2)
        >>> ids = torch.tensor([[3, 4, 5, 6, 0, 0], [7, 8, 9, 2, 3, 4]])  # prompt + response
        >>> att = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
        >>> imp = token_importance(model, ids, att)
        >>> imp.shape, bool((imp[0, 4:] == 0).all()), imp.requires_grad  # padding: 0
        (torch.Size([2, 6]), True, False)
    """
    if not isinstance(input_ids, Tensor) or input_ids.dim() != 2:
        raise ValueError(f"input_ids: expected a (B, L) tensor, got "
                         f"{getattr(input_ids, 'shape', type(input_ids).__name__)}")
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    elif not isinstance(attention_mask, Tensor) or attention_mask.shape != input_ids.shape:
        raise ValueError(f"attention_mask: expected shape {tuple(input_ids.shape)}, got "
                         f"{getattr(attention_mask, 'shape', type(attention_mask).__name__)}")
    if not bool((attention_mask.sum(1) > 0).all()):
        raise ValueError("attention_mask: every row needs at least one attended token")
    with torch.enable_grad():
        embeds = model.get_input_embeddings()(input_ids).detach().requires_grad_(True)
        logits = model(inputs_embeds=embeds, attention_mask=attention_mask,
                       use_cache=False).logits
        # the last attended position of each row (right or left padding alike)
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        last = torch.where(attention_mask.bool(), pos, torch.full_like(pos, -1)).max(1).values
        target = logits[torch.arange(logits.shape[0]), last].max(-1).values.sum()
        (grad,) = torch.autograd.grad(target, embeds)
    importance = grad.abs().sum(-1)
    return torch.where(attention_mask.bool(), importance, torch.zeros_like(importance)).detach()


def gaussian_prior(mask: Tensor, *, sigma_div: float = 4.0) -> Tensor:
    """``P(t) = exp(−½((t − μ)/σ)²)`` over each row's response tokens (TI-DPO App. B.6),
    μ = (T − 1)/2, σ = T/``sigma_div``; 0 outside the response.  ``mask`` is response-aligned
    ``(B, T)``."""
    keep = _check_mask("mask", mask)
    check_real("sigma_div", sigma_div, low=0, low_open=True)
    n = keep.sum(1, keepdim=True).to(torch.float64)
    t = torch.arange(keep.shape[1], dtype=torch.float64, device=mask.device).unsqueeze(0)
    mu, sigma = (n - 1) / 2, (n / sigma_div).clamp_min(1e-12)
    prior = torch.exp(-0.5 * ((t - mu) / sigma) ** 2)
    return torch.where(keep, prior, torch.zeros_like(prior))


def _sum_normalise(x: Tensor, keep: Tensor) -> Tensor:
    x = torch.where(keep, x.clamp_min(0), torch.zeros_like(x))
    total = x.sum(1, keepdim=True)
    # an all-zero importance row (possible only for a dead network) falls back to uniform
    uniform = keep.to(x.dtype) / keep.sum(1, keepdim=True).clamp_min(1)
    return torch.where(total > 0, x / total.clamp_min(torch.finfo(x.dtype).tiny), uniform)


def _minmax(x: Tensor, keep: Tensor) -> Tensor:
    big = torch.finfo(x.dtype).max
    lo = torch.where(keep, x, torch.full_like(x, big)).min(1, keepdim=True).values
    hi = torch.where(keep, x, torch.full_like(x, -big)).max(1, keepdim=True).values
    span = hi - lo
    out = torch.where(span > 0, (x - lo) / span.clamp_min(torch.finfo(x.dtype).tiny),
                      torch.ones_like(x))
    return torch.where(keep, out, torch.zeros_like(out))


def hybrid_weights(importance: Tensor, prior: Tensor, mask: Tensor, *, lam: float = 0.7,
                   weight_norm: str = "sum_to_T") -> Tensor:
    """``w_t = λ·Ĩ_t + (1 − λ)·P̃_t`` (TI-DPO Eq. 7) on response-aligned ``(B, T)`` tensors,
    detached, 0 outside the response; see the module docstring for ``weight_norm``.

    Example:
        >>> import torch
        >>> from optzoo.preference import gaussian_prior, hybrid_weights
        >>> m = torch.ones(1, 4)
        >>> w = hybrid_weights(torch.tensor([[0., 0., 4., 0.]]), gaussian_prior(m), m)
        >>> round(float(w.sum()), 6), int(w.argmax())  # mean weight 1; the important token
        (4.0, 2)
    """
    keep = _check_mask("mask", mask)
    _check_tokens("importance", importance, mask)
    _check_tokens("prior", prior, mask)
    check_real("lam", lam, low=0, high=1)
    if weight_norm not in WEIGHT_NORMS:
        raise ValueError(f"weight_norm: expected one of {WEIGHT_NORMS}, got {weight_norm!r}")
    imp, pri = importance.detach().double(), prior.detach().double()
    if weight_norm == "minmax":
        w = lam * _minmax(imp, keep) + (1 - lam) * _minmax(pri, keep)
    else:
        w = _sum_normalise(lam * _sum_normalise(imp, keep) + (1 - lam) * _sum_normalise(pri, keep),
                           keep)
        if weight_norm == "sum_to_T":
            w = w * keep.sum(1, keepdim=True)
    return torch.where(keep, w, torch.zeros_like(w)).to(importance.dtype)


def response_terms(logits: Tensor, ref_logits: Tensor, input_ids: Tensor,
                   completion_mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """From the policy's and the reference's next-token logits ``(B, L, V)`` on TRL's layout
    (prompt + completion, ``completion_mask`` 1 on the completion): the response-aligned ρ_t
    ``(B, T)``, their mask, and SeqKL per row ``(B,)`` — the inputs of :func:`ti_dpo_loss`."""
    shifted = completion_mask[:, 1:]  # position t predicts token t + 1
    logits, ref_logits = logits[:, :-1], ref_logits[:, :-1]
    rho = per_token_logratios(logits, ref_logits, input_ids[:, 1:], shifted)
    kl = sequential_kl(logits, ref_logits, shifted)
    aligned, mask = align_completions(rho, shifted)
    return aligned, mask, kl


def response_weights(model, input_ids: Tensor, attention_mask: Tensor, completion_mask: Tensor,
                     *, lam: float = 0.7, sigma_div: float = 4.0,
                     weight_norm: str = "sum_to_T") -> Tensor:
    """TI-DPO's hybrid weights of the response tokens, response-aligned ``(B, T)`` as
    :func:`response_terms` lists them: the attribution of each token sits at the token itself,
    so aligning it by the unshifted ``completion_mask`` gives the same tokens in the same
    order."""
    importance = token_importance(model, input_ids, attention_mask)
    imp, mask = align_completions(importance, completion_mask)
    prior = gaussian_prior(mask, sigma_div=sigma_div).to(imp.dtype)
    return hybrid_weights(imp, prior, mask, lam=lam, weight_norm=weight_norm)


def logratio_distance(a: Tensor, a_mask: Tensor, b: Tensor, b_mask: Tensor, *,
                      distance: str = "logratio_seq_sq") -> Tensor:
    """``d(a, b)`` per row, ``(B,)``: ``Σ_{t < min(|a|, |b|)} (ρ_t(a) − ρ_t(b))²`` on
    response-aligned log-ratios (``"logratio_seq_sq"``), or ``(Σρ(a) − Σρ(b))²``
    (``"scalar_reward_sq"``, the ablation).  Tensors may differ in padded length T."""
    if distance not in DISTANCES:
        raise ValueError(f"distance: expected one of {DISTANCES}, got {distance!r}")
    ka, kb = _check_mask("a_mask", a_mask, a), _check_mask("b_mask", b_mask, b)
    a = torch.where(ka, a, torch.zeros_like(a))
    b = torch.where(kb, b, torch.zeros_like(b))
    if distance == "scalar_reward_sq":
        return (a.sum(1) - b.sum(1)) ** 2
    t = min(a.shape[1], b.shape[1])
    both = ka[:, :t] & kb[:, :t]
    diff = a[:, :t] - b[:, :t]
    return torch.where(both, diff * diff, torch.zeros_like(diff)).sum(1)


def ti_dpo_loss(chosen_logratios: Tensor, rejected_logratios: Tensor, chosen_mask: Tensor,
                rejected_mask: Tensor, chosen_weights: Tensor, rejected_weights: Tensor,
                chosen_kl: Tensor, rejected_kl: Tensor, *,
                anchor_logratios: Tensor | None = None, anchor_mask: Tensor | None = None,
                beta: float = 0.1, alpha: float = 0.5, gamma: float = 0.1,
                triplet_margin: float = 0.01, distance: str = "logratio_seq_sq",
                ) -> tuple[Tensor, dict[str, Tensor]]:
    """TI-DPO's loss ``mean(L_DPO-w) + γ·L_triplet`` (module docstring, items 4–6).

    Args:
        chosen_logratios, rejected_logratios: response-aligned per-token ρ_t ``(B, T_w)``,
            ``(B, T_l)`` (:func:`optzoo.preference.tdpo.per_token_logratios`).
        chosen_mask, rejected_mask: their response masks.
        chosen_weights, rejected_weights: w_t (:func:`hybrid_weights`; detached here).
        chosen_kl, rejected_kl: SeqKL per pair ``(B,)`` (unweighted).
        anchor_logratios, anchor_mask: ρ_t of the anchor sampled from π_θ (``(B, T_a)``);
            required when ``gamma > 0``.
        beta, alpha, gamma, triplet_margin: β, α (TDPO2 KL weight), γ, α_trp.
        distance: the triplet distance (``"logratio_seq_sq"``, the paper's).

    Example:
        >>> import torch
        >>> from optzoo.preference import gaussian_prior, hybrid_weights, ti_dpo_loss
        >>> rho_w = torch.tensor([[0.2, 0.1, 0.0], [0.3, -0.1, 0.2]], requires_grad=True)
        >>> rho_l = torch.tensor([[-0.2, 0.0, 0.1], [0.0, -0.3, 0.0]], requires_grad=True)
        >>> mask_w, mask_l = torch.tensor([[1, 1, 0], [1, 1, 1]]), torch.ones(2, 3)
        >>> imp = torch.tensor([[1.0, 3.0, 0.0], [2.0, 1.0, 1.0]])  # e.g. token_importance
        >>> w_w = hybrid_weights(imp, gaussian_prior(mask_w), mask_w)
        >>> w_l = hybrid_weights(torch.ones(2, 3), gaussian_prior(mask_l), mask_l)
        >>> kl = torch.zeros(2)  # SeqKL per pair (sequential_kl)
        >>> anchor = torch.zeros(2, 3)  # ρ_t of a response sampled from π_θ
        >>> loss, m = ti_dpo_loss(rho_w, rho_l, mask_w, mask_l, w_w, w_l, kl, kl,
        ...                       anchor_logratios=anchor, anchor_mask=mask_l)
        >>> loss.backward()
        >>> round(float(m["loss/dpo_w"]), 4), round(float(m["loss/triplet"]), 4)
        (0.6653, 0.035)
    """
    for name, r, m in (("chosen_logratios", chosen_logratios, chosen_mask),
                       ("rejected_logratios", rejected_logratios, rejected_mask)):
        _check_mask(name.replace("logratios", "mask"), m)
        _check_tokens(name, r, m)  # a shape mismatch names the log-ratios, not the mask
    _check_tokens("chosen_weights", chosen_weights, chosen_mask)
    _check_tokens("rejected_weights", rejected_weights, rejected_mask)
    b = _check_pairs(chosen_kl=chosen_kl, rejected_kl=rejected_kl)
    if chosen_logratios.shape[0] != b or rejected_logratios.shape[0] != b:
        raise ValueError(f"chosen_logratios, rejected_logratios: expected {b} rows (the "
                         f"batch of chosen_kl), got {chosen_logratios.shape[0]} and "
                         f"{rejected_logratios.shape[0]}")
    check_real("beta", beta, low=0, low_open=True)
    check_real("alpha", alpha, low=0)
    check_real("gamma", gamma, low=0)
    check_real("triplet_margin", triplet_margin, low=0)
    kw, kl_ = chosen_mask.bool(), rejected_mask.bool()
    zero = torch.zeros((), dtype=chosen_logratios.dtype)
    sw = torch.where(kw, chosen_weights.detach() * chosen_logratios, zero).sum(1)
    sl = torch.where(kl_, rejected_weights.detach() * rejected_logratios, zero).sum(1)
    z = sw - sl - alpha * (rejected_kl - chosen_kl.detach())
    dpo = -F.logsigmoid(beta * z).mean()
    metrics = pair_metrics(beta * sw, beta * sl)
    metrics["loss/dpo_w"] = dpo.detach()
    if gamma > 0:
        if anchor_logratios is None or anchor_mask is None:
            raise ValueError("anchor_logratios, anchor_mask: the triplet term (gamma > 0) needs "
                             "the anchor sampled from the policy; pass gamma=0 to drop it")
        _check_tokens("anchor_logratios", anchor_logratios, anchor_mask)
        if anchor_logratios.shape[0] != b:
            raise ValueError(f"anchor_logratios: expected {b} rows, got "
                             f"{anchor_logratios.shape[0]}")
        d_pos = logratio_distance(anchor_logratios, anchor_mask, chosen_logratios, chosen_mask,
                                  distance=distance)
        d_neg = logratio_distance(anchor_logratios, anchor_mask, rejected_logratios,
                                  rejected_mask, distance=distance)
        triplet = torch.relu(d_pos - d_neg + triplet_margin).mean()
        metrics["loss/triplet"] = triplet.detach()
        return dpo + gamma * triplet, metrics
    return dpo, metrics
