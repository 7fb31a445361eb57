"""StepORLM: a policy and a generative process reward model that co-evolve on operations-research
modelling problems, aligned by weighted DPO (Zhou, Xu, Lin & Ge, "StepORLM: A Self-Evolving
Framework With Generative Process Supervision For Operations Research Language Models",
ICLR 2026, arXiv 2509.22558, OpenReview ``ZrgxU8WMmG``).

One co-evolution iteration (:func:`coevolve_iteration`, the paper's Phase 2 / Algorithm 1 as the
brief ``steporlm.md`` reconstructs it):

1. the policy samples ``k`` trajectories per problem (statements of
   :mod:`~optzoo.preference.or_modelling`'s language, one per step);
2. dual feedback — the *outcome* (the model compiles, HiGHS proves optimality and the objective
   equals the gold optimum, :func:`~optzoo.preference.or_modelling.verify`) and the *process*
   score r(τ) = fraction of steps the GenPRM judges correct
   (:class:`~optzoo.preference.genprm.GenPRM`);
3. pairs, solver first (:func:`build_pairs`): of two trajectories of a problem, if exactly one
   is solver-correct it wins with weight w = 1; if both share the outcome, the higher r wins
   with w = |r₊ − r₋|; pairs with w = 0 (identical scores, e.g. identical texts) are dropped
   and at most ``max_pairs`` pairs per problem are kept (drawn at random: the paper's count
   was not recovered, *inferred*);
4. W-DPO on the pairs (:func:`~optzoo.preference.wdpo.wdpo_loss`, sequence log-probs summed
   over the completion and its EOS; reference = the policy at the start of the iteration by
   default, the initial SFT policy or none as options — the printed loss shows no reference,
   see :mod:`~optzoo.preference.wdpo`);
5. GenPRM self-refinement: SFT of the GenPRM on its own critiques of this iteration's
   trajectories, keeping the *solver-consistent* ones (all steps judged correct ⇔ the solver
   says correct).

Baselines on the same samples: outcome-only DPO (``rule="outcome"``: only pairs that differ
in outcome, w = 1) and unweighted DPO on the dual-feedback pairs (``rule="dual_unweighted"``).
Inference: :func:`best_of_n` (the GenPRM picks the trajectory with the highest r) and
:func:`majority_vote` (the most frequent optimal objective among the compiled samples).

Readings (the paper's Algorithm 1 text and hyperparameters were not reachable): the GenPRM
of the paper writes a chain of thought before its step verdicts; a tiny model cannot, so here it
generates the verdicts directly (one ``GOOD``/``BAD`` token per step, each conditioned on the
whole trajectory and the verdicts before it — still generative and holistic, not a per-step
classifier).  Ties in best-of-N go to the earliest sample.

Example:
    >>> from optzoo.preference.steporlm import build_pairs
    >>> outcomes = [True, False, False, True]
    >>> scores = [0.75, 0.5, 0.25, 0.75]
    >>> build_pairs(outcomes, scores, rule="dual")  # (winner, loser, weight)
    [(0, 1, 1.0), (0, 2, 1.0), (1, 2, 0.25), (3, 1, 1.0), (3, 2, 1.0)]
    >>> build_pairs(outcomes, scores, rule="outcome")
    [(0, 1, 1.0), (0, 2, 1.0), (3, 1, 1.0), (3, 2, 1.0)]
"""

from __future__ import annotations

import copy
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from optzoo.preference.or_modelling import Outcome, verify
from optzoo.preference.wdpo import wdpo_loss

__all__ = ["PAIR_RULES", "REFERENCES", "IterationStats", "StepORLMConfig", "best_of_n",
           "build_pairs", "check_round_trip", "coevolve_iteration", "completion_logps", "encode",
           "majority_vote", "sample_trajectories", "sft", "train_wdpo"]

PAIR_RULES = ("dual", "dual_unweighted", "outcome")
REFERENCES = ("policy_start", "initial_sft", None)


def build_pairs(outcomes: Sequence[bool], scores: Sequence[float], *, rule: str = "dual",
                max_pairs: int | None = None,
                rng: np.random.Generator | None = None) -> list[tuple[int, int, float]]:
    """Algorithm 1's preference pairs among the ``k`` trajectories of one problem.

    Args:
        outcomes: solver verdict per trajectory (True = correct).
        scores: GenPRM process score r(τ) ∈ [0, 1] per trajectory.
        rule: ``"dual"`` (W-DPO: solver first, then r with w = |Δr|), ``"dual_unweighted"``
            (the same pairs, w = 1: plain DPO), ``"outcome"`` (only outcome-differing pairs).
        max_pairs: keep at most this many (uniformly at random with ``rng``; None: all).
        rng: generator of that draw (needed when ``max_pairs`` cuts).

    Returns:
        ``(winner, loser, weight)`` with weight > 0, in (i, j) order of i < j.
    """
    if len(outcomes) != len(scores):
        raise ValueError(f"scores: expected {len(outcomes)} (one per trajectory), got "
                         f"{len(scores)}")
    if rule not in PAIR_RULES:
        raise ValueError(f"rule: expected one of {PAIR_RULES}, got {rule!r}")
    r = [float(s) for s in scores]
    if any(not 0.0 <= s <= 1.0 for s in r):
        raise ValueError("scores: expected process scores in [0, 1]")
    if max_pairs is not None and (isinstance(max_pairs, bool) or not isinstance(max_pairs, int)
                                  or max_pairs < 1):
        raise ValueError(f"max_pairs: expected an integer >= 1 or None, got {max_pairs!r}")
    pairs = []
    for i in range(len(r)):
        for j in range(i + 1, len(r)):
            if bool(outcomes[i]) != bool(outcomes[j]):
                pairs.append((i, j, 1.0) if outcomes[i] else (j, i, 1.0))
            elif rule != "outcome" and r[i] != r[j]:
                w = abs(r[i] - r[j]) if rule == "dual" else 1.0
                pairs.append((i, j, w) if r[i] > r[j] else (j, i, w))
    if max_pairs is not None and len(pairs) > max_pairs:
        if rng is None:
            raise ValueError("rng: needed to subsample pairs when max_pairs cuts")
        keep = sorted(rng.choice(len(pairs), size=max_pairs, replace=False).tolist())
        pairs = [pairs[t] for t in keep]
    return pairs


# -- tensors -------------------------------------------------------------------------------------

_IDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _token_ids(tokenizer, texts: Sequence[str], special: bool) -> list[list[int]]:
    """Token ids of ``texts``, memoised per tokenizer (training re-encodes the same prompts
    and completions at every step; the tokenizer call dominated the tiny models' step)."""
    memo = _IDS.setdefault(tokenizer, {})
    missing = list(dict.fromkeys(t for t in texts if (t, special) not in memo))
    if missing:
        for t, ids in zip(missing, tokenizer(missing, add_special_tokens=special).input_ids,
                          strict=True):
            memo[t, special] = list(ids)
    return [memo[t, special] for t in texts]


def _pad(rows: list[list[int]], value: int, left: bool) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), value, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, r in enumerate(rows):
        sl = slice(width - len(r), width) if left else slice(0, len(r))
        ids[i, sl] = torch.tensor(r, dtype=torch.long)
        mask[i, sl] = 1
    return ids, mask


def check_round_trip(tokenizer, texts: Sequence[str]) -> None:
    """Raise unless every text survives ``decode(encode(text))`` up to whitespace.

    The loop works on texts: sampled token ids are decoded, parsed and verified, and every
    training batch re-encodes its prompts and completions with the tokenizer (so a subword
    tokenizer's canonical split is what is trained, whatever split was sampled).  That needs
    the modelling language and the problems to round-trip through the user's tokenizer; an
    unknown symbol (``<=``, ``;``, a digit) would silently become ``<unk>`` and every model
    would fail to parse.
    """
    for t in texts:
        ids = tokenizer(t, add_special_tokens=False).input_ids
        back = tokenizer.decode(ids, skip_special_tokens=True)
        if back.split() != t.split():
            raise ValueError(f"tokenizer: {t!r} does not round-trip (decodes to {back!r}); the "
                             f"modelling language needs a tokenizer that can spell it")


def encode(tokenizer, prompts: Sequence[str], completions: Sequence[str],
           device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """Left-padded prompts and right-padded completions + EOS (the layout of
    :func:`optzoo.llm.token_logprobs`)."""
    if len(prompts) != len(completions) or not prompts:
        raise ValueError(f"completions: expected {len(prompts)} (one per prompt, at least one), "
                         f"got {len(completions)}")
    p_ids, p_mask = _pad(_token_ids(tokenizer, prompts, True), tokenizer.pad_token_id, True)
    comp = [ids + [tokenizer.eos_token_id] for ids in
            _token_ids(tokenizer, completions, False)]
    ids, mask = _pad(comp, tokenizer.pad_token_id, False)
    return {"prompt_ids": p_ids.to(device), "prompt_mask": p_mask.to(device),
            "completion_ids": ids.to(device), "completion_mask": mask.to(device)}


def completion_logps(model, tokenizer, prompts: Sequence[str], completions: Sequence[str],
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token log-probs ``(N, C)`` of the completions (+ EOS) and their mask."""
    from optzoo.llm.sampling import token_logprobs

    device = next(model.parameters()).device
    b = encode(tokenizer, prompts, completions, device)
    lp = token_logprobs(model, b["prompt_ids"], b["prompt_mask"], b["completion_ids"],
                        b["completion_mask"])
    return lp, b["completion_mask"]


def sft(model, tokenizer, prompts: Sequence[str], completions: Sequence[str], *, steps: int,
        batch_size: int = 32, lr: float = 1e-3, seed: int = 0,
        weight_decay: float = 0.0) -> list[float]:
    """Supervised fine-tuning: token-mean cross-entropy on the completions (+ EOS), ``steps``
    AdamW steps on minibatches drawn with ``seed``.  Returns the losses."""
    if len(prompts) != len(completions) or not prompts:
        raise ValueError("prompts, completions: expected equally many, at least one")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps: expected an integer >= 0, got {steps!r}")
    rng = np.random.default_rng(seed)
    # foreach: the multi-tensor AdamW, the same updates bit for bit (checked), fewer kernel calls
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, foreach=True)
    model.train()
    losses = []
    for _ in range(steps):
        idx = rng.choice(len(prompts), size=min(batch_size, len(prompts)), replace=False)
        lp, mask = completion_logps(model, tokenizer, [prompts[i] for i in idx],
                                    [completions[i] for i in idx])
        loss = -(lp * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def sample_trajectories(model, tokenizer, prompts: Sequence[str], *, k: int, seed: int,
                        max_new_tokens: int = 72, temperature: float = 1.0,
                        greedy: bool = False) -> list[list[str]]:
    """``k`` sampled completions per prompt (:func:`optzoo.llm.rollout`), grouped by prompt."""
    from optzoo.llm.sampling import rollout

    r = rollout(model, tokenizer, list(prompts), num_samples=k, max_new_tokens=max_new_tokens,
                temperature=temperature, greedy=greedy, seed=seed)
    return [r.completions[i * k:(i + 1) * k] for i in range(len(prompts))]


def train_wdpo(policy, reference, tokenizer, prompts: Sequence[str], chosen: Sequence[str],
               rejected: Sequence[str], weights: Sequence[float], *, steps: int,
               batch_size: int = 16, lr: float = 5e-4, beta: float = 0.1, seed: int = 0,
               ) -> list[float]:
    """W-DPO on ``(prompt, chosen, rejected, weight)`` pairs: ``steps`` AdamW steps on
    minibatches, :func:`~optzoo.preference.wdpo.wdpo_loss` with ``normalize="mean"``;
    ``reference=None`` is the reference-free printed form.  Returns the losses."""
    n = len(prompts)
    if not (n == len(chosen) == len(rejected) == len(weights)) or n == 0:
        raise ValueError("prompts, chosen, rejected, weights: expected equally many, at least one")
    w_all = torch.tensor([float(w) for w in weights])
    with torch.no_grad():
        ref_c = ref_r = None
        if reference is not None:
            lp, m = completion_logps(reference, tokenizer, prompts, chosen)
            ref_c = (lp * m).sum(-1)
            lp, m = completion_logps(reference, tokenizer, prompts, rejected)
            ref_r = (lp * m).sum(-1)
    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(policy.parameters(), lr=lr, foreach=True)
    policy.train()
    losses = []
    for _ in range(steps):
        idx = rng.choice(n, size=min(batch_size, n), replace=False)
        ps = [prompts[i] for i in idx]
        lp, m = completion_logps(policy, tokenizer, ps + ps, [chosen[i] for i in idx]
                                 + [rejected[i] for i in idx])
        seq = (lp * m).sum(-1)
        c, r = seq[:len(idx)], seq[len(idx):]
        t = torch.as_tensor(idx)
        loss, _ = wdpo_loss(c, r, w_all[t].to(c.device),
                            None if ref_c is None else ref_c[t].to(c.device),
                            None if ref_r is None else ref_r[t].to(c.device), beta=beta)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
    policy.eval()
    return losses


# -- the loop ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StepORLMConfig:
    """Knobs of one co-evolution iteration.

    Args:
        k: trajectories sampled per problem.
        rule: pair rule of :func:`build_pairs` (``"dual"`` is StepORLM's W-DPO).
        max_pairs: pairs kept per problem.
        beta, lr, steps, batch_size: W-DPO's β, AdamW learning rate, steps and pairs per step.
        reference: ``"policy_start"`` (default), ``"initial_sft"`` or None (reference-free).
        update_prm: refine the GenPRM on its solver-consistent critiques (False: frozen).
        prm_steps, prm_lr: GenPRM refinement SFT steps and learning rate.
        temperature, max_new_tokens: sampling.
    """

    k: int = 4
    rule: str = "dual"
    max_pairs: int = 4
    beta: float = 0.1
    lr: float = 5e-4
    steps: int = 60
    batch_size: int = 16
    reference: str | None = "policy_start"
    update_prm: bool = True
    prm_steps: int = 40
    prm_lr: float = 5e-4
    temperature: float = 1.0
    max_new_tokens: int = 72

    def __post_init__(self):
        if self.rule not in PAIR_RULES:
            raise ValueError(f"rule: expected one of {PAIR_RULES}, got {self.rule!r}")
        if self.reference not in REFERENCES:
            raise ValueError(f"reference: expected one of {REFERENCES}, got {self.reference!r}")
        for name in ("k", "max_pairs", "batch_size", "max_new_tokens"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
        if self.k < 2:
            raise ValueError(f"k: expected at least 2 trajectories per problem, got {self.k}")
        for name in ("steps", "prm_steps"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name}: expected an integer >= 0, got {v!r}")
        for name in ("beta", "lr", "prm_lr", "temperature"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected a positive number, got {getattr(self, name)!r}")


@dataclass
class IterationStats:
    """What one iteration saw: trajectories, solver accuracy of the samples, pairs, mean weight,
    GenPRM critiques kept for refinement, W-DPO losses."""

    trajectories: int
    sample_accuracy: float
    pairs: int
    outcome_pairs: int
    mean_weight: float
    prm_kept: int
    losses: list[float]


def coevolve_iteration(policy, prm, tokenizer, problems: Sequence, cfg: StepORLMConfig, *,
                       seed: int = 0, initial_policy=None,
                       verifier: Callable[[str, float], Outcome] = verify,
                       groups: Sequence[Sequence[str]] | None = None,
                       verdicts: Callable[[], list[list[bool]]] | None = None,
                       ) -> IterationStats:
    """One iteration of Algorithm 1 on ``problems`` (objects with ``prompt`` and ``optimum``),
    updating ``policy`` (W-DPO) and, with ``cfg.update_prm``, ``prm`` in place.

    Args:
        policy: the causal LM being aligned.
        prm: a :class:`~optzoo.preference.genprm.GenPRM` (ignored by ``rule="outcome"`` except
            for refinement, which that rule does not do).
        tokenizer: the policy's tokenizer.
        problems: the hard subset of this iteration.
        cfg: :class:`StepORLMConfig`.
        seed: seed of sampling, pair subsampling and minibatches.
        initial_policy: the SFT policy (needed for ``reference="initial_sft"``).
        verifier: ``verifier(text, gold) -> Outcome`` (e.g. a cached :func:`verify`).
        groups: this iteration's samples, when the caller already drew them with the same
            policy weights, ``k``, ``seed``, temperature and length (arms that start from
            the same policy share their first iteration's samples; None: sample here).
        verdicts: returns ``prm``'s verdicts on those samples, for a caller that has them
            from a GenPRM with the same weights (None: judge here).
    """
    if not problems:
        raise ValueError("problems: expected at least one problem")
    if cfg.reference == "initial_sft" and initial_policy is None:
        raise ValueError("initial_policy: needed for reference='initial_sft'")
    prompts = [p.prompt for p in problems]
    if groups is None:
        groups = sample_trajectories(policy, tokenizer, prompts, k=cfg.k, seed=seed,
                                     temperature=cfg.temperature,
                                     max_new_tokens=cfg.max_new_tokens)
    if len(groups) != len(problems) or any(len(g) != cfg.k for g in groups):
        raise ValueError(f"groups: expected {len(problems)} groups of k = {cfg.k} samples")
    flat_p = [p for p, g in zip(prompts, groups, strict=True) for _ in g]
    flat_t = [t for g in groups for t in g]
    outcomes = [verifier(t, p.optimum).correct
                for p, g in zip(problems, groups, strict=True) for t in g]
    use_prm = cfg.rule != "outcome"
    judge = verdicts if verdicts is not None else (lambda: prm.judge(flat_p, flat_t))
    verdicts = judge() if use_prm or cfg.update_prm else None
    scores = [sum(v) / len(v) if v else 0.0 for v in verdicts] if verdicts else [0.0] * len(flat_t)
    rng = np.random.default_rng([seed, 7])
    ps, cs, rs, ws, n_outcome = [], [], [], [], 0
    for g in range(len(problems)):
        lo = g * cfg.k
        for i, j, w in build_pairs(outcomes[lo:lo + cfg.k], scores[lo:lo + cfg.k],
                                   rule=cfg.rule, max_pairs=cfg.max_pairs, rng=rng):
            ps.append(prompts[g])
            cs.append(flat_t[lo + i])
            rs.append(flat_t[lo + j])
            ws.append(w)
            n_outcome += outcomes[lo + i] != outcomes[lo + j]
    losses: list[float] = []
    if ps and cfg.steps:
        if cfg.reference == "policy_start":
            ref = copy.deepcopy(policy).eval()
        elif cfg.reference == "initial_sft":
            ref = initial_policy
        else:
            ref = None
        losses = train_wdpo(policy, ref, tokenizer, ps, cs, rs, ws, steps=cfg.steps,
                            batch_size=cfg.batch_size, lr=cfg.lr, beta=cfg.beta, seed=seed)
    kept = 0
    if cfg.update_prm and verdicts is not None:
        keep = [i for i, v in enumerate(verdicts) if v and all(v) == bool(outcomes[i])]
        kept = len(keep)
        if keep and cfg.prm_steps:
            prm.train([flat_p[i] for i in keep], [flat_t[i] for i in keep],
                      [verdicts[i] for i in keep], steps=cfg.prm_steps, lr=cfg.prm_lr,
                      seed=seed)
    return IterationStats(len(flat_t), float(np.mean(outcomes)), len(ps), int(n_outcome),
                          float(np.mean(ws)) if ws else 0.0, kept, losses)


# -- inference -----------------------------------------------------------------------------------

def best_of_n(scores: Sequence[float]) -> int:
    """Index of the trajectory the verifier picks (highest score; ties: the earliest)."""
    if not len(scores):
        raise ValueError("scores: expected at least one score")
    return int(np.argmax(np.asarray(scores, dtype=float)))


def majority_vote(objectives: Sequence[float | None], *, decimals: int = 6) -> float | None:
    """The most frequent objective value among the samples that solved (None entries are
    samples that did not compile or solve); ties: the value seen first.  None when none
    solved."""
    vals = [round(float(o), decimals) for o in objectives if o is not None]
    if not vals:
        return None
    counts = Counter(vals)
    top = max(counts.values())
    return next(v for v in vals if counts[v] == top)
