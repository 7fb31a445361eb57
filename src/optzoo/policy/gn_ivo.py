"""GN-IVO: Choi, Jang, Oh, Jeong, Hwang & Kim, "Group-Normalized Implicit Value Optimization
for Language Models" (ICLR 2026 poster, OpenReview ``eFXmrCun0c``).  No arXiv version and no
official code; read through the brief (a section-by-section note and the four public reviews,
which quote the loss).

Theory: relative to the sampler π_old the KL-regularised optimum is π* ∝ π_old·exp(R/α); the
prefix soft value V(x, y_<t) = log E_{π_old}[exp(R/α) | y_<t] satisfies
π*(y_<t|x) = π_old(y_<t|x)·exp(V(x, y_<t))/Z(x) with one Z for every t (Theorem 3.1).  Over a
group of K responses to one prompt, the group softmax of V cancels Z (Theorem 3.2), and the
value model is replaced by the policy's implicit value (a DPO-style substitution)

    g_i(t) = log π_θ(y^(i)_<t | x) − log π_old(y^(i)_<t | x)   (SUM of the prefix's log-ratios,
                                                              no coefficient on g).

Loss (paper Eq. 9), per prompt and sampled step t:

    L = −Σ_i w_i · log softmax_j(g_j(t))_i,   w = softmax_i(R_i/α)  (the experiments, "for
    stability")  or  w_i = exp(R_i/α)  (the theory; ``normalize_weights=False``).

Gradient: ∂L/∂g_i = q_i·Σ_j w_j − w_i with q = softmax(g), i.e. q_i − w_i for normalised w.  At
π_θ = π_old, q is uniform, so the first step is REINFORCE on the prefix tokens with advantage
w_i − 1/K: prefix-level credit only appears once π_θ has moved (several inner steps per batch).

Readings (the brief's *inferred* steps; the paper's PDF could not be read):

* Steps: a step is a token (text tasks) by default; ``step_ids`` ``(B, T)`` gives each token's
  step index (e.g. reasoning lines; :func:`step_ids_from_boundaries`); all-zero ``step_ids``
  make the whole response one step ("one-step GN-IVO", whole-sequence softmax matching).
* prefix(t) = the first t steps, t ∈ {1..T}; the t = T prefix is the whole response
  (V = R/α there, as in the paper's indexing); the empty prefix (g ≡ 0, no gradient) is never
  used.
* One t per group (the softmax compares members at the same t), drawn uniformly from
  {1..max_i T_i}; a response shorter than t contributes its whole response (a finished response
  stays finished).  :func:`sample_prefix_steps` draws ``num_t`` such t per group (Eq. 9: one);
  ``prefix_steps=None`` averages over every t ∈ {1..max_i T_i} (the paper's "all T" ablation).
  The loss averages over the sampled t of a group, then over groups that have any step.
* KL to the initial model: the paper keeps a penalty with coefficient β whose form is not in the
  material read.  ``kl_reduction="token_mean"``: β times TRL's k3 estimator averaged over all
  active tokens (``ref_logp``), the baselines' scale; ``"response_sum"``: β times the mean over
  responses of the per-response SUM of k3, the scale of g (a sum of log-ratios over the prefix's
  tokens) — with a token mean the same β restrains GN-IVO roughly T times less than a
  token-aggregated baseline (issue 22 measured final KL 0.08 vs 0.03–0.04).  The brief suggests
  β = 0.04 for the reproduction; the function's default is 0.
* Steps from text (:func:`step_ends_from_text`): a step ends at the token that completes a
  separator in the decoded text, so a separator merged into a larger token (BPE ``"7;"``) or
  split over two tokens (``"\n\n"``) is still found; a separator inside a token ends the step
  with that token (the token cannot be split).
* π_old's log-probs are detached (only π_old is described as frozen); nothing else is.
* Unnormalised weights exp(R/α) overflow for R/α beyond ~88 (float32) / ~709 (float64); the
  function raises ``ValueError`` naming ``rewards`` then, rather than return ``inf``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from optzoo.policy.advantages import grouped
from optzoo.policy.grpo import check_token_inputs, k3_kl, masked_mean

KL_REDUCTIONS = ("token_mean", "response_sum")

__all__ = ["KL_REDUCTIONS", "gn_ivo_loss", "response_step_counts", "sample_prefix_steps",
           "step_ends_from_text", "step_ids_from_boundaries"]


def step_ids_from_boundaries(step_end: Tensor, mask: Tensor) -> Tensor:
    """``(B, T)`` step index of every token from a mask ``step_end`` marking the LAST token of
    each step (e.g. the ``;`` or newline token): the number of step ends strictly before it."""
    if step_end.shape != mask.shape:
        raise ValueError(f"step_end must have the shape of mask {tuple(mask.shape)}, got "
                         f"{tuple(step_end.shape)}")
    ends = ((step_end != 0) & (mask > 0)).long()
    return torch.cumsum(ends, -1) - ends


def step_ends_from_text(tokenizer, completion_ids: Tensor, mask: Tensor,
                        separator: str = ";") -> Tensor:
    """``(B, T)`` bool: the tokens whose decoding completes an occurrence of ``separator``.

    Row by row the completion is decoded prefix by prefix (``tokenizer.decode(ids[:t + 1],
    skip_special_tokens=True)``); token t ends a step when its prefix holds more (non-
    overlapping) occurrences of ``separator`` than the prefix before it.  This does not assume
    that the separator is one token of the vocabulary."""
    if not isinstance(separator, str) or not separator:
        raise ValueError(f"separator: expected a non-empty string, got {separator!r}")
    if completion_ids.shape != mask.shape:
        raise ValueError(f"completion_ids must have the shape of mask {tuple(mask.shape)}, got "
                         f"{tuple(completion_ids.shape)}")
    ends = torch.zeros(mask.shape, dtype=torch.bool)
    ids_cpu, active = completion_ids.cpu(), (mask > 0).cpu()
    rows = [(ids_cpu[b][active[b]].tolist(), active[b].nonzero().flatten().tolist())
            for b in range(ids_cpu.shape[0])]
    prefixes = [ids[:j + 1] for ids, _ in rows for j in range(len(ids))]
    # one batched call (a fast tokenizer decodes the whole batch natively) instead of one
    # Python call per prefix: this runs on every GN-IVO update
    batch = getattr(tokenizer, "batch_decode", None)
    texts = (batch(prefixes, skip_special_tokens=True) if batch is not None
             else [tokenizer.decode(p, skip_special_tokens=True) for p in prefixes])
    counts = iter(t.count(separator) for t in texts)
    for b, (_, positions) in enumerate(rows):
        before = 0
        for pos in positions:
            count = next(counts)
            if count > before:
                ends[b, pos] = True
            before = count
    return ends.to(mask.device)


def response_step_counts(step_ids: Tensor | None, mask: Tensor) -> Tensor:
    """``(B,)`` number of steps T_i of each response (0 for an empty one); ``step_ids=None``
    means one step per token."""
    active = mask > 0
    if step_ids is None:
        return active.sum(-1)
    return torch.where(active, step_ids.long() + 1, 0).amax(-1)


def sample_prefix_steps(step_counts: Tensor, group_size: int, num_t: int = 1,
                        generator: torch.Generator | None = None) -> Tensor:
    """``(B // group_size, num_t)`` prefix lengths t drawn uniformly from {1..max_i T_i} per group
    (0 for a group whose responses are all empty, which the loss skips)."""
    if not isinstance(num_t, int) or num_t < 1:
        raise ValueError(f"num_t must be a positive int, got {num_t!r}")
    tmax = grouped(step_counts.to(torch.float64), group_size).amax(1)
    device = generator.device if generator is not None else torch.device("cpu")
    u = torch.rand(tmax.shape[0], num_t, generator=generator, dtype=torch.float64,
                   device=device).to(tmax.device)
    t = torch.floor(u * tmax.unsqueeze(1)).long() + 1
    return torch.where(tmax.unsqueeze(1) > 0, t.clamp(max=tmax.long().clamp(min=1).unsqueeze(1)),
                       0)


def gn_ivo_loss(logp: Tensor, old_logp: Tensor, rewards: Tensor, mask: Tensor, group_size: int,
                *, alpha: float = 0.2, step_ids: Tensor | None = None,
                prefix_steps: Tensor | None = None, normalize_weights: bool = True,
                ref_logp: Tensor | None = None, beta: float = 0.0,
                kl_reduction: str = "token_mean",
                ) -> tuple[Tensor, dict[str, Tensor]]:
    """GN-IVO loss (paper Eq. 9, to minimise).

    Args:
        logp: ``(B, T)`` per-token log-probs under π_θ (with grad).
        old_logp: ``(B, T)`` per-token log-probs under the sampler π_old.
        rewards: ``(B,)`` rewards, groups of ``group_size`` consecutive responses to one prompt.
        mask: ``(B, T)`` completion mask.
        group_size: K, responses per prompt.
        alpha: temperature α of the target exp(R/α) (paper default 0.2).
        step_ids: ``(B, T)`` integer step index of each token (``None``: a step per token).
        prefix_steps: ``(B // K, n)`` prefix lengths t ≥ 1 per group (0 = skip), e.g. from
            :func:`sample_prefix_steps`; ``None``: every t ∈ {1..max_i T_i} of each group.
        normalize_weights: w = softmax(R/α) (the paper's experiments) or exp(R/α) (its theory).
        ref_logp, beta: k3 KL penalty to the initial model.
        kl_reduction: ``"token_mean"`` (β · mean over active tokens) or ``"response_sum"``
            (β · mean over responses of the sum over their tokens: g's scale).

    Returns:
        ``(loss, metrics)`` with detached scalars ``ivo_loss``, ``kl`` (when ``ref_logp`` is
        given), ``implicit_value_abs`` (mean |g| over the prefixes used) and ``groups_used``.

    Example:
        >>> import torch
        >>> from optzoo.policy import gn_ivo_loss
        >>> logp = (-torch.rand(4, 5, generator=torch.Generator().manual_seed(0))).requires_grad_()
        >>> rewards = torch.tensor([1.0, 0.0, 1.0, 1.0])  # 2 prompts x K = 2 responses
        >>> loss, metrics = gn_ivo_loss(logp, logp.detach(), rewards, torch.ones(4, 5), 2)
        >>> loss.backward()
        >>> round(loss.item(), 4), int(metrics["groups_used"]), logp.grad.shape  # log 2 at θ_old
        (0.6931, 2, torch.Size([4, 5]))
    """
    check_token_inputs(mask, logp=logp, old_logp=old_logp, ref_logp=ref_logp)
    batch, width = mask.shape
    g_rewards = grouped(rewards, group_size)
    if rewards.numel() != batch:
        raise ValueError(f"rewards has {rewards.numel()} entries for {batch} responses")
    if not torch.all(torch.isfinite(rewards)):
        raise ValueError("rewards must be finite")
    if alpha <= 0.0:
        raise ValueError(f"alpha must be > 0, got {alpha}")
    if beta < 0.0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if beta != 0.0 and ref_logp is None:
        raise ValueError("ref_logp is required when beta != 0")
    if kl_reduction not in KL_REDUCTIONS:
        raise ValueError(f"kl_reduction must be one of {KL_REDUCTIONS}, got {kl_reduction!r}")
    groups = g_rewards.shape[0]

    active = mask > 0
    m = mask.to(logp.dtype)
    zero = logp.new_zeros(())
    lp = torch.where(active, logp, zero)
    log_ratio = lp - torch.where(active, old_logp.detach(), zero)

    if step_ids is None:
        ids = torch.arange(width, device=mask.device).expand(batch, width)
        n_steps = width
    else:
        if step_ids.shape != mask.shape or step_ids.is_floating_point():
            raise ValueError(f"step_ids must be an integer tensor of shape {tuple(mask.shape)}")
        ids = torch.where(active, step_ids.long(), 0)
        if torch.any(ids < 0):
            raise ValueError("step_ids must be >= 0 on active tokens")
        n_steps = int(ids.max()) + 1 if ids.numel() else 0
    if n_steps == 0 or groups == 0:
        loss = lp.sum() * 0.0
        return loss, {"ivo_loss": loss.detach(), "implicit_value_abs": zero.detach(),
                      "groups_used": zero.detach()}

    per_step = log_ratio.new_zeros(batch, n_steps).scatter_add(1, ids, log_ratio)
    # Padding adds 0 to its step, so prefix sums past a response's end stay at the whole
    # response: t > T_i is automatically clamped to T_i.
    prefix = per_step.cumsum(1).view(groups, group_size, n_steps)
    tmax = response_step_counts(step_ids, mask).view(groups, group_size).amax(1)
    if prefix_steps is None:
        valid = torch.arange(n_steps, device=mask.device).unsqueeze(0) < tmax.unsqueeze(1)
        values = prefix
    else:
        if prefix_steps.dim() != 2 or prefix_steps.shape[0] != groups or \
                prefix_steps.is_floating_point():
            raise ValueError(f"prefix_steps must be an integer tensor of shape ({groups}, n), got "
                             f"{tuple(prefix_steps.shape)} {prefix_steps.dtype}")
        if torch.any(prefix_steps < 0):
            raise ValueError("prefix_steps must be >= 0 (0 skips a group)")
        prefix_steps = prefix_steps.to(mask.device)
        valid = (prefix_steps >= 1) & (tmax.unsqueeze(1) >= 1)
        index = (prefix_steps.long().clamp(1, n_steps) - 1).unsqueeze(1)
        values = prefix.gather(2, index.expand(groups, group_size, index.shape[2]))

    scaled = (g_rewards / alpha).to(logp.dtype)
    if normalize_weights:
        weights = torch.softmax(scaled, dim=1)
    else:
        weights = torch.exp(scaled)
        if not torch.all(torch.isfinite(weights)):
            raise ValueError(f"rewards / alpha overflows exp in {logp.dtype}: use "
                             "normalize_weights=True or smaller rewards")
    cross_entropy = -(weights.unsqueeze(2) * torch.log_softmax(values, dim=1)).sum(1)
    validf = valid.to(logp.dtype)
    per_group = (cross_entropy * validf).sum(1) / validf.sum(1).clamp(min=1.0)
    used = (validf.sum(1) > 0).to(logp.dtype)
    ivo = (per_group * used).sum() / used.sum().clamp(min=1.0)

    per_token_kl = None if ref_logp is None else k3_kl(
        lp, torch.where(active, ref_logp.detach(), zero))
    if beta == 0.0:
        loss = ivo
    elif kl_reduction == "token_mean":
        loss = ivo + beta * masked_mean(per_token_kl, m)
    else:
        loss = ivo + beta * (per_token_kl * m).sum(-1).mean()

    with torch.no_grad():
        counted = validf.unsqueeze(1).expand_as(values)
        metrics = {
            "ivo_loss": ivo.detach(),
            "implicit_value_abs": (values.abs() * counted).sum() / counted.sum().clamp(min=1.0),
            "groups_used": used.sum(),
        }
        if per_token_kl is not None:
            metrics["kl"] = masked_mean(per_token_kl, m)
            metrics["kl_response_sum"] = (per_token_kl * m).sum(-1).mean()
    return loss, metrics
