"""RFTHGS: reinforcement fine-tuning of a crossover generator for Hybrid Genetic Search (Zhu,
Zhang & Cao, "Refining Hybrid Genetic Search for CVRP via Reinforcement Learning-Finetuned
LLM", ICLR 2026, OpenReview aITKXFeivk, arXiv 2510.11121; official code ``zaodushi/RFTHGS``).

The learning loop follows the official training setup as the brief reports it:

* **Episode.** One prompt (a *parent* operator from the cache) → one generated operator → one
  scalar reward. The generator here is :class:`SlotPolicy`, a categorical policy over the
  program space of :mod:`optzoo.routing.crossover_dsl` conditioned on the parent's choices (the
  CPU stand-in for the LLM that reads the parent's source), or any module with the same
  ``propose`` / ``token_log_probs`` methods (:class:`optzoo.routing.lm_generator.LMGenerator`
  adapts a Hugging Face causal LM).
* **Multi-tier reward** (:func:`tiered_reward`, ``vrp_evo.py`` of the code):
  no code / compile error −1.0; runtime error, crash or timeout −0.8; AST duplicate of the
  parent −0.9 (training only; functions alpha-renamed, integer literal values ignored); else
  r = max((ḡ_base − ḡ)/ḡ_base, −0.7) with ḡ the operator's mean gap over the group's instances
  and ḡ_base the mean of the precomputed SREX gap table on the same instances; the binary variant
  gives 1 if ḡ < ḡ_base else 0. (The code gives timeouts −1 and filters them; a timeout is
  graded with runtime errors here and counted separately.)
* **Operator cache** (:class:`OperatorCache`): starts with the expert; every operator with
  r > 0 joins it (de-duplicated by source); each epoch's prompts are re-sampled from it with
  replacement, so later prompts ask to improve earlier winners.  The expert is the paper's
  starting operator, SREX: for a code-writing generator
  (:class:`~optzoo.routing.lm_generator.LMGenerator`) the source of the verified SREX port
  (:func:`optzoo.routing.code_corpus.srex_source`, the same child as PyVRP's C++ SREX on the
  same parents and random stream); for :class:`SlotPolicy`, which can only rewrite programs of
  the grammar, the grammar's SREX-like program :data:`~optzoo.routing.crossover_dsl.EXPERT`.
* **GRPO as verl computes it** (:func:`grpo_advantages`, :func:`verl_policy_loss`): a group of
  n completions per prompt shares one instance draw and one HGS seed; advantages
  (r − mean)/(std + ε) within the group, broadcast to every token of the completion; verl's
  ``compute_policy_loss`` per token: ratio ρ_t = exp(log π_θ(y_t | x, y_<t) − log π_old(y_t |
  x, y_<t)) (log-ratio clamped to ±20), ℓ_t = −min(ρ_t A, clip(ρ_t, 1 − ε_low, 1 + ε_high) A)
  with DAPO's clip-higher ε_low = 0.2, ε_high = 0.28, and verl's dual clip for A < 0
  (ℓ_t ≤ −A·c, c = ``clip_ratio_c`` = 10 in the official script; verl's default is 3); no KL
  and no entropy term; ``loss_agg_mode="seq-mean-token-sum"``: ℓ summed over a completion's
  tokens, averaged over completions (verl's ``agg_loss``), and divided by the official fork's
  ``loss_scale_factor`` when it exceeds 1 (500 in the script; 1 here by default: under Adam a
  constant factor changes only the effective ε).  :class:`SlotPolicy` has no text: each of
  its slot decisions is one "token" (one ratio, one clip per slot).

Deviations (CPU scale, recorded): the generator is a slot policy, not a 14B LLM; Python
crossovers run inside PyVRP's GA instead of patched C++; group 8 × 4 prompts per step (paper
8 × 16); learning rate of a small Adam-trained table instead of 1e-6 full fine-tuning; no
gradient-norm clipping (verl clips at 1.0); ``ppo_epochs`` passes over the whole batch (the
official script makes one on-policy update per batch — mini-batch = batch, one PPO epoch —
where every ratio is 1 and the clip never acts; a second pass lets it act).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from optzoo.routing.crossover_dsl import EXPERT, SLOTS, render, validate

FAILURE_TIERS = ("syntax_error", "forbidden", "runtime_error", "timeout")


# -- reward ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RewardConfig:
    """Reward tiers (defaults: the official training script).

    Args:
        compile_error: no code, syntax error or forbidden code.
        runtime_error: raised, crashed or timed out inside HGS.
        duplicate: AST duplicate of the prompt's parent (``use_duplicate`` switches it off).
        floor: lower clip of the relative gap improvement.
        binary: 1 if the operator's mean gap beats the baseline's, else 0.
    """

    compile_error: float = -1.0
    runtime_error: float = -0.8
    duplicate: float = -0.9
    floor: float = -0.7
    binary: bool = False
    use_duplicate: bool = True


class _AlphaRename(ast.NodeTransformer):
    """Rename every function, argument and assigned local to a positional placeholder and set
    every integer literal to 0 (the clang-AST duplicate check of the official code, on Python)."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def _rename(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_FunctionDef(self, node):
        node.name = self._rename(node.name)
        self.generic_visit(node)
        return node

    def visit_arg(self, node):
        node.arg = self._rename(node.arg)
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store) or node.id in self.names:
            node.id = self._rename(node.id)
        return node

    def visit_Constant(self, node):
        if isinstance(node.value, int) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Constant(0), node)
        return node


@functools.lru_cache(maxsize=4096)
def ast_fingerprint(source: str) -> str | None:
    """Canonical AST dump (alpha-renamed, integer literals erased); None if it does not parse.

    The renaming and ``ast.dump`` recurse, so a source nested deeper than the sandbox accepts
    (:data:`optzoo.routing.sandbox.MAX_AST_DEPTH`; 700 nested unary operators parse fine) is
    fingerprinted by its exact text instead: such a source is ``forbidden`` anyway, and the
    parent must never crash on what a generator wrote."""
    from optzoo.routing.sandbox import MAX_AST_DEPTH, ast_depth

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    if ast_depth(tree)[0] > MAX_AST_DEPTH:
        return "deep:" + hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    tree = _AlphaRename().visit(tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def is_duplicate(source: str, parent_source: str) -> bool:
    """True if ``source`` equals the parent up to renaming and integer literal values."""
    a, b = ast_fingerprint(source), ast_fingerprint(parent_source)
    return a is not None and a == b


def tiered_reward(outcome: dict, parent_source: str | None, base_gaps: Sequence[float],
                  cfg: RewardConfig = RewardConfig()) -> tuple[float, str]:
    """The RFTHGS reward of one evaluated operator and its tier.

    Args:
        outcome: {"status": "ok" | "syntax_error" | "forbidden" | "runtime_error" | "timeout",
            "source": str, "gaps": per-instance gaps in % when ok}.
        parent_source: the prompt's parent (None: no duplicate check, e.g. at test time).
        base_gaps: the SREX baseline gaps of the same instances (same order).
        cfg: tiers.

    Returns:
        (reward, tier) with tier in "compile", "runtime", "duplicate", "scored".
    """
    status = outcome["status"]
    if status in ("syntax_error", "forbidden"):
        return cfg.compile_error, "compile"
    if status in ("runtime_error", "timeout"):
        return cfg.runtime_error, "runtime"
    if status != "ok":
        raise ValueError(f"outcome['status']: unknown status {status!r}")
    if cfg.use_duplicate and parent_source is not None and is_duplicate(
            outcome["source"], parent_source):
        return cfg.duplicate, "duplicate"
    gaps = np.asarray(outcome["gaps"], dtype=float)
    base = float(np.mean(base_gaps))
    if len(gaps) != len(base_gaps):
        raise ValueError(f"outcome['gaps']: expected {len(base_gaps)} gaps, got {len(gaps)}")
    if not np.all(np.isfinite(gaps)):  # no feasible solution found on some instance
        return cfg.floor if not cfg.binary else 0.0, "scored"
    mean = float(gaps.mean())
    if cfg.binary:
        return float(mean < base), "scored"
    # ḡ_base ≈ 0 makes the ratio explode (the brief's pitfall): guard the denominator
    rel = (base - mean) / max(base, 1e-6)
    return max(rel, cfg.floor), "scored"


# -- operator cache --------------------------------------------------------------------------


@dataclass
class CacheEntry:
    """A parent operator: its program (None when it came from a free-form generator), source,
    mean gap when it was scored, and its reward."""

    program: dict[str, str] | None
    source: str
    gap: float
    reward: float


@dataclass
class OperatorCache:
    """The pool of parent operators, initialised with the expert (gap = its baseline gap)."""

    entries: list[CacheEntry] = field(default_factory=list)

    @classmethod
    def with_expert(cls, base_gap: float, expert: dict[str, str] | str | None = None
                    ) -> OperatorCache:
        """A pool holding only the expert, with gap ``base_gap`` (the SREX baseline's).

        Args:
            base_gap: mean gap of the expert (the precomputed SREX table's mean).
            expert: a grammar program (default :data:`~optzoo.routing.crossover_dsl.EXPERT`)
                or an operator's source text, e.g. the SREX port
                :func:`optzoo.routing.code_corpus.srex_source` (its entry then has no
                program).  A source must define ``crossover`` with four arguments and pass
                the sandbox's static check: a broken expert would poison every prompt.
        """
        if isinstance(expert, str):
            from optzoo.routing.sandbox import check_source

            verdict = check_source(expert, arity=4)
            if not verdict.ok:
                raise ValueError(f"expert: the source fails the static check ({verdict.status}"
                                 f", line {verdict.lineno}): {verdict.reason}")
            return cls([CacheEntry(None, expert, float(base_gap), 0.0)])
        if expert is not None and not isinstance(expert, dict):
            raise ValueError(f"expert: expected a grammar program (dict), a source text or "
                             f"None, got {type(expert).__name__}")
        prog = validate(expert or EXPERT)
        return cls([CacheEntry(prog, render(prog), float(base_gap), 0.0)])

    def add(self, program: dict[str, str] | None, source: str, gap: float,
            reward: float) -> bool:
        """Add an operator with positive reward, unless its source is already in the pool."""
        if reward <= 0 or any(e.source == source for e in self.entries):
            return False
        self.entries.append(CacheEntry(None if program is None else dict(program), source,
                                       float(gap), float(reward)))
        return True

    def sample(self, k: int, rng: random.Random) -> list[CacheEntry]:
        """k prompts drawn with replacement."""
        return [self.entries[rng.randrange(len(self.entries))] for _ in range(k)]

    def best(self) -> CacheEntry:
        return min(self.entries, key=lambda e: e.gap)

    def __len__(self) -> int:
        return len(self.entries)


# -- the generator ---------------------------------------------------------------------------


class SlotPolicy(torch.nn.Module):
    """Categorical policy over the crossover program space, conditioned on the parent program:
    for each slot, logits[parent's choice of that slot] over the slot's choices.

    Initialised uniform: the untrained generator draws every slot uniformly, so most programs
    carry at least one defect (the analogue of a base model's many broken completions).
    """

    def __init__(self):
        super().__init__()
        self.slots = list(SLOTS)
        # keys prefixed: a slot named like a Module attribute ("children") would clash
        self.table = torch.nn.ParameterDict({
            f"slot_{s}": torch.nn.Parameter(torch.zeros(len(SLOTS[s]), len(SLOTS[s])))
            for s in self.slots})

    def logits(self, slot: str) -> torch.Tensor:
        """The (parent choice × choice) logit table of ``slot``."""
        return self.table[f"slot_{slot}"]

    def propose(self, parent: CacheEntry, n: int, generator: torch.Generator
                ) -> list[tuple[dict[str, str], str]]:
        """The generator protocol of :func:`train`: n (program, source) children of a prompt."""
        if parent.program is None:
            raise ValueError("parent: SlotPolicy rewrites grammar programs only; this cache "
                             "entry is free-form source (start the cache from a grammar "
                             "program, e.g. crossover_dsl.EXPERT)")
        return [(p, render(p)) for p in self.sample(parent.program, n, generator)]

    def token_log_probs(self, parents: Sequence[CacheEntry],
                        children: Sequence[dict[str, str]]
                        ) -> tuple[torch.Tensor, torch.Tensor]:
        """The generator protocol of :func:`train`: per-"token" log-probs and their mask.

        A program has no text here: each slot decision is one token, so the result is
        ``(len(children), len(SLOTS))`` log π(choice_s | parent's choice_s) with an all-ones
        mask (every program makes every decision)."""
        logp = torch.stack(self._slot_log_probs([p.program for p in parents], children), -1)
        return logp, torch.ones_like(logp)

    def sequence_log_probs(self, parents: Sequence[CacheEntry],
                           children: Sequence[dict[str, str]]) -> torch.Tensor:
        """Token-sum log-probs of the children (the sum of :meth:`token_log_probs`)."""
        return self.log_probs([p.program for p in parents], children)

    @torch.no_grad()
    def sample(self, parent: dict[str, str], n: int, generator: torch.Generator
               ) -> list[dict[str, str]]:
        """n programs drawn independently given the parent."""
        draws = {}
        for s in self.slots:
            probs = torch.softmax(self.logits(s)[SLOTS[s].index(parent[s])], -1)
            draws[s] = torch.multinomial(probs, n, replacement=True, generator=generator)
        return [{s: SLOTS[s][int(draws[s][i])] for s in self.slots} for i in range(n)]

    def log_prob(self, parent: dict[str, str], program: dict[str, str]) -> torch.Tensor:
        """Σ over slots of log π(choice | parent) (the program's token-sum log-prob)."""
        return self.log_probs([parent], [program])[0]

    def log_probs(self, parents: Sequence[dict[str, str]],
                  programs: Sequence[dict[str, str]]) -> torch.Tensor:
        """Batched :meth:`log_prob`, shape (len(programs),)."""
        total = torch.zeros(len(programs))
        for lp in self._slot_log_probs(parents, programs):
            total = total + lp
        return total

    def _slot_log_probs(self, parents: Sequence[dict[str, str]],
                        programs: Sequence[dict[str, str]]) -> list[torch.Tensor]:
        # one (len(programs),) tensor per slot, in self.slots order
        out = []
        for s in self.slots:
            rows = torch.tensor([SLOTS[s].index(p[s]) for p in parents])
            cols = torch.tensor([SLOTS[s].index(c[s]) for c in programs])
            out.append(torch.log_softmax(self.logits(s), -1)[rows, cols])
        return out


def grpo_advantages(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Group-normalised advantages (r − mean)/(std + ε) over the last axis (one group per row).
    A group whose rewards are all equal gets zero advantages."""
    mean = rewards.mean(-1, keepdim=True)
    std = rewards.std(-1, keepdim=True, unbiased=True) if rewards.shape[-1] > 1 else (
        torch.zeros_like(mean))
    return (rewards - mean) / (std + eps)


def verl_policy_loss(logp: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor,
                     mask: torch.Tensor, clip_low: float = 0.2, clip_high: float = 0.28,
                     clip_ratio_c: float = 10.0, loss_scale_factor: float = 1.0
                     ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The policy loss RFTHGS trains with: verl's ``compute_policy_loss`` (PPO surrogate per
    token, clip-higher, dual clip) aggregated by ``agg_loss(..., "seq-mean-token-sum")``.

    Per token, with ρ = exp(clamp(logp − logp_old, ±20)) and A the completion's advantage::

        ℓ = max(−Aρ, −A·clip(ρ, 1 − clip_low, 1 + clip_high))       (A ≥ 0)
        ℓ = min(max(−Aρ, −A·clip(ρ, 1 − clip_low, 1 + clip_high)), −A·c)   (A < 0)

    loss = mean over completions of Σ over the completion's tokens of ℓ, divided by
    ``loss_scale_factor`` when it exceeds 1 (the official fork's ``agg_loss``).

    Computed by :func:`optzoo.policy.grpo_loss`: its ``delta`` caps ρ in the unclipped branch,
    which equals verl's dual clip whenever c > 1 + clip_high (for A < 0 both give
    −A·min(max(ρ, clip(ρ)), c); for A > 0 the cap sits above the clipped branch and never
    binds), and ``loss_type="dr_grpo"`` with ``max_completion_length=1`` divides the token
    sum by the number of completions, i.e. "seq-mean-token-sum".  Tested against a loop over
    verl's formula.

    Args:
        logp: ``(B, T)`` token log-probs under the current policy (with grad).
        logp_old: ``(B, T)`` token log-probs under the sampling policy.
        adv: ``(B,)`` advantages, one per completion.
        mask: ``(B, T)`` 1 on completion tokens, 0 on padding.
        clip_low, clip_high: ε_low, ε_high (paper 0.2 / 0.28).
        clip_ratio_c: the dual-clip bound c, > 1 + clip_high (official script 10).
        loss_scale_factor: divisor applied when > 1 (official script 500).

    Returns:
        (loss, metrics) as :func:`optzoo.policy.grpo_loss` returns them.
    """
    from optzoo.policy import grpo_loss

    if not clip_ratio_c > 1.0 + clip_high:
        raise ValueError(f"clip_ratio_c: expected > 1 + clip_high = {1 + clip_high}, got "
                         f"{clip_ratio_c}")
    if not loss_scale_factor > 0:
        raise ValueError(f"loss_scale_factor: expected > 0, got {loss_scale_factor}")
    loss, metrics = grpo_loss(logp, logp_old, adv, mask, epsilon_low=clip_low,
                              epsilon_high=clip_high, loss_type="dr_grpo",
                              max_completion_length=1, delta=clip_ratio_c)
    if loss_scale_factor > 1.0:
        loss = loss / loss_scale_factor
    return loss, metrics


# -- the trainer -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RFTConfig:
    """Settings of the learning loop.

    Args:
        steps: GRPO steps ("epochs" of the code: one batch each).
        prompts: prompts per step (paper 16).
        group: completions per prompt (paper 8).
        instances_per_reward: instances drawn per group (paper 5).
        lr: Adam learning rate of the generator.
        ppo_epochs: passes over each batch (the first is on-policy: ratio 1).
        clip_low, clip_high: asymmetric clip range.
        clip_ratio_c: verl's dual-clip bound for negative advantages (official script 10).
        loss_scale_factor: the official fork's loss divisor (its script: 500; 1: none).
        use_cache: re-sample prompts from the operator cache (False: always the expert).
        reward: the reward tiers.
    """

    steps: int = 20
    prompts: int = 4
    group: int = 8
    instances_per_reward: int = 5
    lr: float = 0.1
    ppo_epochs: int = 2
    clip_low: float = 0.2
    clip_high: float = 0.28
    clip_ratio_c: float = 10.0
    loss_scale_factor: float = 1.0
    use_cache: bool = True
    reward: RewardConfig = RewardConfig()

    def __post_init__(self):
        for name in ("steps", "prompts", "group", "instances_per_reward", "ppo_epochs"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.group < 2:
            raise ValueError(f"group: expected >= 2 (group-normalised advantages), got "
                             f"{self.group}")
        if not self.lr > 0 or not 0 < self.clip_low < 1 or not self.clip_high > 0:
            raise ValueError("lr > 0, 0 < clip_low < 1 and clip_high > 0 expected")
        if not self.clip_ratio_c > 1 + self.clip_high:
            raise ValueError(f"clip_ratio_c: expected > 1 + clip_high, got {self.clip_ratio_c}")
        if not self.loss_scale_factor > 0:
            raise ValueError(f"loss_scale_factor: expected > 0, got {self.loss_scale_factor}")


Evaluator = Callable[[str, Sequence[int], int], dict]
"""(source, instance indices, hgs seed) -> {"status", "source", "gaps"} (see tiered_reward)."""


def default_expert(policy) -> dict[str, str] | str:
    """The starting operator of the cache for ``policy``: the grammar's SREX-like program for
    a :class:`SlotPolicy` (it can only rewrite grammar programs), else the source of the
    verified SREX port (:func:`optzoo.routing.code_corpus.srex_source`), the paper's expert."""
    if isinstance(policy, SlotPolicy):
        return dict(EXPERT)
    from optzoo.routing.code_corpus import srex_source

    return srex_source()


def train(evaluator: Evaluator, base_gaps: Sequence[float], cfg: RFTConfig, seed: int = 0,
          policy=None,
          progress: Callable[[int, dict], None] | None = None,
          expert: dict[str, str] | str | None = None) -> dict:
    """Run the RFTHGS loop.

    Args:
        evaluator: scores an operator's source on instances (indices into the training set)
            with one HGS seed; results are memoised on (source, instances, seed).
        base_gaps: SREX gap of each training instance (the precomputed baseline table).
        cfg: loop settings.
        seed: seeds prompts, instance draws, HGS seeds and sampling.
        policy: the generator (default: a fresh uniform :class:`SlotPolicy`): any torch module
            with ``propose(parent_entry, n, generator) -> [(child, source or None)]`` and
            ``token_log_probs(parent_entries, children) -> (logp, mask)``, both ``(B, T)``
            padded per-token log-probs of the children (e.g.
            :class:`optzoo.routing.lm_generator.LMGenerator`). A None source (no code in the
            completion) gets the compile tier without evaluation.
        progress: called after each step with (step, metrics).
        expert: the cache's starting operator (default :func:`default_expert`: the SREX
            port's source, or the grammar's program for a :class:`SlotPolicy`).

    Returns:
        {"history": per-step metrics, "policy": the generator, "cache": the operator cache}.
    """
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    policy = policy or SlotPolicy()
    if not callable(getattr(policy, "token_log_probs", None)):
        raise ValueError("policy: expected a generator with token_log_probs(parents, "
                         "children) -> (logp, mask) (per-token log-probs for verl's loss)")
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr)
    base_gaps = np.asarray(base_gaps, dtype=float)
    n_inst = len(base_gaps)
    k_inst = min(cfg.instances_per_reward, n_inst)
    cache = OperatorCache.with_expert(float(base_gaps.mean()),
                                      default_expert(policy) if expert is None else expert)
    memo: dict = {}
    history = []
    for step in range(cfg.steps):
        prompts = cache.sample(cfg.prompts, rng) if cfg.use_cache else [cache.entries[0]] * (
            cfg.prompts)
        batch_parents, batch_children, rewards, tiers = [], [], [], []
        for parent in prompts:
            instances = sorted(rng.sample(range(n_inst), k_inst))
            hgs_seed = rng.randrange(2 ** 31)
            children = policy.propose(parent, cfg.group, gen)
            group_r = []
            for child, src in children:
                if src is None:
                    out = {"status": "syntax_error", "source": ""}
                else:
                    key = (src, tuple(instances), hgs_seed)
                    if key not in memo:
                        memo[key] = evaluator(src, instances, hgs_seed)
                    out = memo[key]
                r, tier = tiered_reward(out, parent.source, base_gaps[instances], cfg.reward)
                group_r.append(r)
                tiers.append(tier)
                g = float(np.mean(out["gaps"])) if out["status"] == "ok" else math.nan
                if cfg.use_cache and tier == "scored":
                    cache.add(child if isinstance(child, dict) else None, src, g, r)
                batch_parents.append(parent)
                batch_children.append(child)
            rewards.append(group_r)
        r_t = torch.tensor(rewards, dtype=torch.float32)
        adv = grpo_advantages(r_t).flatten()
        with torch.no_grad():
            logp_old, mask = policy.token_log_probs(batch_parents, batch_children)
        for _ in range(cfg.ppo_epochs):
            logp, _ = policy.token_log_probs(batch_parents, batch_children)
            loss, _ = verl_policy_loss(logp, logp_old, adv.to(logp), mask,
                                       cfg.clip_low, cfg.clip_high, cfg.clip_ratio_c,
                                       cfg.loss_scale_factor)
            opt.zero_grad()
            loss.backward()
            opt.step()
        n = len(tiers)
        m = {"step": step + 1, "reward": float(r_t.mean()),
             "compile_frac": tiers.count("compile") / n,
             "runtime_frac": tiers.count("runtime") / n,
             "failure_frac": (tiers.count("compile") + tiers.count("runtime")) / n,
             "duplicate_frac": tiers.count("duplicate") / n,
             "positive_frac": float((r_t > 0).float().mean()),
             "degenerate_groups": float((r_t.std(-1) == 0).float().mean()),
             "cache_size": len(cache), "best_gap": cache.best().gap,
             "evaluations": len(memo)}
        history.append(m)
        if progress is not None:
            progress(step + 1, m)
    return {"history": history, "policy": policy, "cache": cache}


def evolutionary_search(evaluator: Evaluator, base_gaps: Sequence[float], budget: int,
                        seed: int = 0, instances_per_reward: int = 5,
                        mutation_slots: int = 2) -> dict:
    """The EoH/ReEvo analogue over the same program space: a (1+1) search from the expert that
    mutates ``mutation_slots`` random slots per candidate and keeps a candidate whose mean gap
    on a fresh instance draw beats the incumbent's on the same draw; ``budget`` evaluations."""
    rng = random.Random(seed)
    base_gaps = np.asarray(base_gaps, dtype=float)
    n_inst = len(base_gaps)
    k = min(instances_per_reward, n_inst)
    best = dict(EXPERT)
    failures = 0
    used = 0
    while used + 2 <= budget:
        cand = dict(best)
        for s in rng.sample(list(SLOTS), mutation_slots):
            cand[s] = rng.choice(SLOTS[s])
        inst = sorted(rng.sample(range(n_inst), k))
        hgs_seed = rng.randrange(2 ** 31)
        out_c = evaluator(render(cand), inst, hgs_seed)
        out_b = evaluator(render(best), inst, hgs_seed)
        used += 2
        if out_c["status"] != "ok":
            failures += 1
            continue
        if out_b["status"] != "ok" or np.mean(out_c["gaps"]) < np.mean(out_b["gaps"]):
            best = cand
    return {"program": best, "source": render(best), "failures": failures, "evaluations": used}


# -- the sandboxed evaluator -----------------------------------------------------------------


class SandboxEvaluator:
    """Scores an operator's source as the paper's reward evaluator does: HGS with the operator
    for ``iterations`` on the chosen training instances and one seed, per-instance gap to the
    reference cost.

    The operator runs only in the sandbox (static check, separate limited process in the
    operating-system jail): through one :class:`optzoo.routing.forkserver.Forkserver` per
    evaluator where a jail can be built (a fresh confined child per operator without a new
    interpreter: about 0.05 s instead of 0.5 s of start-up per evaluation), else through
    :func:`optzoo.routing.sandbox.run_untrusted`, which refuses to run without a jail unless
    ``insecure``.  The child returns the best routes and the parent rebuilds and
    scores them against its own data (:func:`optzoo.routing.hgs.score_routes`), so a child
    cannot forge its cost. An instance where the run ends with no feasible solution has an
    infinite gap (the reward then takes the floor).

    Args:
        specs: the training instances (indices in calls refer to this list).
        references: reference cost per spec (BKS or a long SREX run), computed by the caller.
        iterations: HGS iterations per run.
        limits: sandbox limits (default: 60 s wall, 60 s CPU, 1 GiB).
        insecure: evaluate even where no operating-system jail can be built (see
            :func:`optzoo.routing.sandbox.run_untrusted`); default False: refuse.
    """

    def __init__(self, specs, references: Sequence[float], iterations: int, limits=None,
                 insecure: bool = False):
        from optzoo.routing.sandbox import Limits

        if len(specs) != len(references):
            raise ValueError(f"references: expected {len(specs)} values, got "
                             f"{len(references)}")
        self.specs = list(specs)
        self.references = [float(r) for r in references]
        self.iterations = int(iterations)
        self.limits = limits or Limits(wall_s=60, cpu_s=60, memory_mb=1024)
        self.insecure = bool(insecure)
        self._data = {}
        self._server = None

    def _forkserver(self):
        """The evaluator's fork server; None where jobs fork or no jail can be built."""
        from optzoo.routing import jail
        from optzoo.routing.forkserver import Forkserver

        if self.limits.allow_fork or jail.probe()[0] is None:
            return None
        if self._server is None:
            self._server = Forkserver("optzoo.routing.hgs:best_routes")
        return self._server

    def close(self) -> None:
        """End the evaluator's fork server (it also ends with this process)."""
        if self._server is not None:
            self._server.close()

    def _load(self, i: int):
        if i not in self._data:
            self._data[i] = self.specs[i].load()
        return self._data[i]

    def __call__(self, source: str, instances: Sequence[int], seed: int) -> dict:
        from optzoo.routing.hgs import score_routes
        from optzoo.routing.sandbox import run_untrusted

        specs = [self.specs[i] for i in instances]
        # the child gets a scrubbed environment (no OPTZOO_DATA), so X files are located here
        root = None
        if any(s.is_x for s in specs):
            from optzoo.routing.instances import data_root

            root = str(data_root())
        # best_routes.sandbox_prepare loads the instances in this process: the child gets data.
        args = (specs, self.iterations, int(seed), root)
        server = self._forkserver()
        if server is not None:
            out = server.run(source, args=args, limits=self.limits)
        else:
            extra = {"insecure": True} if self.insecure else {}
            out = run_untrusted(source, job="optzoo.routing.hgs:best_routes", args=args,
                                limits=self.limits, **extra)
        if not out.ok:
            return {"status": out.status, "source": source, "reason": out.reason}
        gaps = []
        for i, row in zip(instances, out.value, strict=True):
            cost = score_routes(self._load(i), row["routes"])
            ref = self.references[i]
            gaps.append(math.inf if cost is None else 100.0 * (cost - ref) / ref)
        return {"status": "ok", "source": source, "gaps": gaps}
