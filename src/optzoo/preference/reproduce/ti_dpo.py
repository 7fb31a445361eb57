"""Reproduction ``ti-dpo``: token-importance guided DPO on decisive-token preferences (Yang et
al., ICLR 2026, OpenReview ``cMEnMVvMw9``; brief ``ti-dpo.md``, small-scale section).

A tiny word-level Llama is fine-tuned (SFT) on a 50/50 mix of responses so that the reference
policy is indifferent; then each method trains on preference pairs from the same base:

* prompt ``Q t_k`` (topic k); a response is 12–16 filler words with ONE decisive token at a
  random position in the middle 60 % — from a GOOD set in y_w and a BAD set in y_l (fillers
  resampled independently, so they carry no preference);
* label noise η: each training pair's chosen / rejected are swapped with probability η
  (evaluation pairs are clean).

Methods (one trial per seed runs all of them from the same base and on the same batches, so
comparisons are paired): DPO (:func:`~optzoo.preference.dpo_loss`, equal to TRL's), TDPO2,
TI-DPO (:func:`~optzoo.preference.ti_dpo_loss` with gradient attribution, the Gaussian prior,
the hybrid weights and anchors sampled from the policy each step) and its three ablations — no
triplet (γ = 0), uniform weights (w ≡ 1), no prior (λ = 1).  Every method runs at the same
learning rate (one value, no method tuned: equal budgets) for the same steps.

Metrics: held-out pair accuracy of the learned implicit reward (the UNWEIGHTED log-ratio margin
of the policy, the same measure for every method — a deviation from the brief's weighted margin,
chosen so that the methods are judged by what their policies learned); the share of sampled
responses that contain a GOOD token; for TI-DPO, the share of held-out chosen responses whose
decisive token gets a weight above the response's median weight (the attribution check); and
the exact DPO-reduction check on a real batch.  Paper hyperparameters (Table B12): β = 0.1,
α = 0.5, γ = 0.1, λ = 0.7, σ = T/4, weights ``sum_to_T``, α_trp = 0.01.

Positional control (the brief: "a control where the decisive token sits at the first/last
position: the Gaussian prior should then hurt"): trials with ``position="edge"`` put the decisive
token of every response at its first or its last word (50/50; the EOS follows), SFT and
evaluation included, at the headline noise level, and train only TI-DPO (Gaussian prior) and two
priorless variants from the same base on the same batches: ``tidpo_flat_prior`` (the same λ =
0.7 with a FLAT prior, P̃ ≡ 1/T — it differs from TI-DPO only in the prior's shape, so it is the
claim's comparator) and ``tidpo_no_prior`` (λ = 1, the ablation above; reported beside it).  The
claim is held if the Gaussian prior lowers the held-out pair accuracy there; it is evidence FOR
the prior's assumption that decisive content sits mid-response, not a failure of TI-DPO.  Before
comparing, the control checks that the prior acts: on held-out chosen responses the decisive
token's weight under the Gaussian prior must lie at least ``min_prior_shift`` (relative) below
its weight under the flat prior, with the same attribution (the trained TI-DPO policy's).  The
middle-position trials keep their trial keys (``position`` is absent from their parameters)
and their metrics (the same RNG streams; the prior check adds ``decisive_weight_*`` only);
the edge trials are new keys.  Run in full (5 seeds, η = 0.2) only: with the control quick
took 331 CPU-s on one thread against ≈ 140 CPU-s without it (one edge trial ≈ 64 CPU-s), and at
3 seeds it was inconclusive (pair accuracy 0.937 Gaussian vs 0.973 flat, +0.037 [−0.176,
0.249]; the prior acted: decisive-token weight 0.767 → 0.580); ``--set positions=middle,edge``
adds it to quick.

Not run: the η = 0 / 0.4 noise levels in quick (full runs all three levels and decides the
robustness claim).

Verdict margins (fixed before results were seen):
* ``min_accuracy = 0.02``: two points of pair accuracy or GOOD-rate is the smallest gain
  that counts.
* ``min_ablation = 0.01``: an ablation "lowers the score" by at least one point.
* ``min_above_median = 0.6``: the decisive token is "above median" when that holds in at
  least 60 % of responses (half would be chance).
* ``min_prior_harm = 0.02``: at the first/last position the Gaussian prior "hurts" when it
  costs at least two points of held-out pair accuracy against the flat prior (the same smallest
  effect as ``min_accuracy``).
* ``min_prior_shift = 0.1``: the prior "acts" at the edge when it lowers the decisive token's
  mean weight by at least 10 % relative to the flat prior; below that the control is
  inconclusive (a no-op cannot pass).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

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
    fmt_ci,
    mean_ci,
)
from optzoo.experiment.core import NotEvaluated, split_claims
from optzoo.experiment.verdicts import (
    all_of,
    bound_holds,
    by_seed,
    not_acting,
    superior,
    within,
)
from optzoo.preference.problems import pad_right, trl_layout, word_llama
from optzoo.report.figures import category_panel, grid, save

TOPICS = tuple(f"t{k}" for k in range(5))
FILLERS = tuple(f"w{k}" for k in range(20))
GOOD = ("g0", "g1", "g2")
BAD = ("b0", "b1", "b2")
VOCAB = ("<pad>", "<bos>", "<eos>", "Q", *TOPICS, *FILLERS, *GOOD, *BAD)
INDEX = {w: i for i, w in enumerate(VOCAB)}
PAD, BOS, EOS = 0, 1, 2
GOOD_IDS = torch.tensor([INDEX[w] for w in GOOD])
BAD_IDS = torch.tensor([INDEX[w] for w in BAD])
METHODS = ("dpo", "tdpo2", "tidpo", "tidpo_no_triplet", "tidpo_uniform", "tidpo_no_prior")
ABLATIONS = ("tidpo_no_triplet", "tidpo_uniform", "tidpo_no_prior")
POSITIONS = ("middle", "edge")
CONTROL_METHODS = ("tidpo", "tidpo_flat_prior", "tidpo_no_prior")  # the edge trials' methods
PRIORS = ("gauss", "flat", "none")  # the weightings of the prior check (TI-DPO, flat, λ = 1)


@dataclass(frozen=True)
class TIDPOConfig(Preset):
    seeds: int = 3
    noise_levels: tuple[float, ...] = (0.2,)
    hidden: int = 64
    layers: int = 2
    sft_steps: int = 200
    steps: int = 150
    batch: int = 16
    lr: float = 1e-3
    beta: float = 0.1
    alpha: float = 0.5
    gamma: float = 0.1
    lam: float = 0.7
    n_eval: int = 200
    n_samples: int = 64
    min_accuracy: float = 0.02
    min_ablation: float = 0.01
    min_above_median: float = 0.6
    positions: tuple[str, ...] = POSITIONS
    min_prior_harm: float = 0.02
    min_prior_shift: float = 0.1

    def validate(self) -> None:
        super().validate()
        if not self.noise_levels or any(not 0 <= e < 0.5 for e in self.noise_levels):
            raise ConfigError("noise_levels: expected label-noise rates in [0, 0.5)")
        if not self.positions or any(q not in POSITIONS for q in self.positions) \
                or len(set(self.positions)) != len(self.positions):
            raise ConfigError(f"positions: expected distinct values of {POSITIONS}, got "
                              f"{self.positions}")
        for name in ("hidden", "layers", "sft_steps", "steps", "batch", "n_eval", "n_samples"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")


PRESETS = {
    "smoke": TIDPOConfig(seeds=1, hidden=32, layers=1, sft_steps=10, steps=3, batch=4,
                         n_eval=16, n_samples=8),
    # the positional control doubles quick's cost (≈ 140 -> 330 CPU-s): full only
    "quick": TIDPOConfig(positions=("middle",)),
    "full": TIDPOConfig(seeds=5, noise_levels=(0.0, 0.2, 0.4), steps=600, sft_steps=400),
}

_MARGINS = {"seeds", "noise_levels", "min_accuracy", "min_ablation", "min_above_median",
            "positions", "min_prior_harm", "min_prior_shift"}


def _headline_eta(cfg: TIDPOConfig) -> float:
    return 0.2 if 0.2 in cfg.noise_levels else cfg.noise_levels[0]


def trials(cfg: TIDPOConfig) -> list[Trial]:
    params = {k: v for k, v in cfg.to_dict().items() if k not in _MARGINS}
    out = []
    if "middle" in cfg.positions:  # the original trials; "position" absent keeps their keys
        out += [Trial("all", "decisive-token", s, {**params, "eta": eta})
                for eta in cfg.noise_levels for s in range(cfg.seeds)]
    if "edge" in cfg.positions:  # the positional control, at the headline noise level
        out += [Trial("all", "decisive-token", s,
                      {**params, "eta": _headline_eta(cfg), "position": "edge"})
                for s in range(cfg.seeds)]
    return out


# -- data ----------------------------------------------------------------------------------------

def _response(rng: np.random.Generator, decisive: str,
              position: str = "middle") -> tuple[list[str], int]:
    """12–16 filler words with ``decisive`` in the middle 60 % (``"middle"``) or at the first
    or the last word, 50/50 (``"edge"``); returns the words and the decisive index."""
    n = int(rng.integers(12, 17))
    words = list(rng.choice(FILLERS, size=n))
    if position == "middle":
        pos = int(rng.integers(int(0.2 * n), int(math.ceil(0.8 * n))))
    elif position == "edge":
        pos = 0 if rng.random() < 0.5 else n - 1
    else:
        raise ValueError(f"position: expected one of {POSITIONS}, got {position!r}")
    words[pos] = decisive
    return words, pos


def _pair(rng: np.random.Generator, position: str = "middle") -> dict[str, Any]:
    topic = str(rng.choice(TOPICS))
    good, pg = _response(rng, str(rng.choice(GOOD)), position)
    bad, pb = _response(rng, str(rng.choice(BAD)), position)
    return {"prompt": [BOS, INDEX["Q"], INDEX[topic]], "chosen": [INDEX[w] for w in good],
            "rejected": [INDEX[w] for w in bad], "pos_chosen": pg, "pos_rejected": pb}


def _batch(pairs: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
    """TRL's layout: rows [chosen; rejected] of prompt + response + EOS, right-padded."""
    prompts = [p["prompt"] for p in pairs] * 2
    completions = [p[key] + [EOS] for key in ("chosen", "rejected") for p in pairs]
    return trl_layout(prompts, completions, PAD)


# -- model, SFT and the methods ------------------------------------------------------------------

def _model(p: dict[str, Any], seed: int):
    return word_llama(len(VOCAB), hidden=int(p["hidden"]), layers=int(p["layers"]),
                      max_positions=32, seed=seed, pad=PAD, bos=BOS, eos=EOS)


def _sft(model, rng: np.random.Generator, steps: int, batch: int, lr: float,
         position: str = "middle") -> None:
    """SFT on a 50/50 GOOD/BAD mix: the reference policy is indifferent between the sets."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    for _ in range(steps):
        seqs = []
        for _ in range(batch):
            pair = _pair(rng, position)
            seqs.append(pair["prompt"] + pair["chosen" if rng.random() < 0.5 else "rejected"]
                        + [EOS])
        ids = pad_right(seqs, PAD)
        att = (ids != PAD).long()
        lab = ids.masked_fill(att == 0, -100)
        lab[:, :3] = -100
        loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()


def _forward_terms(model, ref, b: dict[str, torch.Tensor],
                   ref_logits: torch.Tensor | None = None):
    """ρ, mask and SeqKL of batch ``b``; ``ref_logits``: the frozen reference's logits on
    ``b`` if already computed (the same for every method trained on that batch)."""
    from optzoo.preference import response_terms

    logits = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
    if ref_logits is None:
        ref_logits = _ref_logits(ref, b)
    return response_terms(logits, ref_logits, b["input_ids"], b["completion_mask"])


@torch.no_grad()
def _ref_logits(ref, b: dict[str, torch.Tensor]) -> torch.Tensor:
    return ref(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits


def _weights(model, b: dict[str, torch.Tensor], lam: float, prior: str = "gauss"
             ) -> torch.Tensor:
    """TI-DPO's hybrid weights; ``prior="flat"`` mixes the attribution with a flat prior
    (P̃ ≡ 1/T) instead of the Gaussian, through the same :func:`hybrid_weights`."""
    from optzoo.preference import (
        align_completions,
        hybrid_weights,
        response_weights,
        token_importance,
    )

    if prior == "gauss":
        return response_weights(model, b["input_ids"], b["attention_mask"],
                                b["completion_mask"], lam=lam)
    if prior != "flat":
        raise ValueError(f"prior: expected 'gauss' or 'flat', got {prior!r}")
    imp, mask = align_completions(token_importance(model, b["input_ids"], b["attention_mask"]),
                                  b["completion_mask"])
    return hybrid_weights(imp, mask.to(imp.dtype), mask, lam=lam)


@torch.no_grad()
def _sample(model, prompts: list[list[int]], n_new: int, generator_seed: int) -> torch.Tensor:
    torch.manual_seed(generator_seed)
    ids = torch.tensor(prompts)
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=True,
                         max_new_tokens=n_new, top_k=50, top_p=0.95, temperature=0.8,
                         pad_token_id=PAD, eos_token_id=EOS)
    return out[:, ids.shape[1]:]


def _anchor_terms(model, ref, pairs, seed: int):
    new = _sample(model, [p["prompt"] for p in pairs], 16, seed)
    responses = []
    for row in new.tolist():
        resp = row[:row.index(EOS) + 1] if EOS in row else row
        responses.append([t for t in resp if t != PAD] or [EOS])
    b = trl_layout([p["prompt"] for p in pairs], responses, PAD)
    rho, mask, _ = _forward_terms(model, ref, b)
    return rho, mask


def _loss(method: str, model, ref, pairs, p: dict[str, Any], step_seed: int,
          ref_cache: dict[int, torch.Tensor] | None = None) -> torch.Tensor:
    """The method's loss on ``pairs``; ``ref_cache`` (keyed by ``step_seed``) keeps the
    reference's logits on the batch, which every method of a trial sees alike."""
    from optzoo.preference import dpo_loss, tdpo_loss, ti_dpo_loss

    b = _batch(pairs)
    ref_logits = None if ref_cache is None else ref_cache.get(step_seed)
    if ref_logits is None:
        ref_logits = _ref_logits(ref, b)
        if ref_cache is not None:
            ref_cache[step_seed] = ref_logits
    rho, mask, kl = _forward_terms(model, ref, b, ref_logits)
    (rc, rr), (mc, mr), (kc, kr) = rho.chunk(2), mask.chunk(2), kl.chunk(2)
    beta, alpha = float(p["beta"]), float(p["alpha"])
    zero = torch.zeros_like(kc)
    if method == "dpo":
        return dpo_loss((rc * mc).sum(1), (rr * mr).sum(1), zero, zero, beta=beta)[0]
    if method == "tdpo2":
        return tdpo_loss((rc * mc).sum(1), (rr * mr).sum(1), kc, kr, beta=beta,
                         alpha=alpha)[0]
    lam = 1.0 if method == "tidpo_no_prior" else float(p["lam"])
    if method == "tidpo_uniform":
        w = mask.to(rho.dtype)
    else:
        prior = "flat" if method == "tidpo_flat_prior" else "gauss"
        w = _weights(model, b, lam, prior).to(rho.dtype)
    wc, wr = w.chunk(2)
    gamma = 0.0 if method == "tidpo_no_triplet" else float(p["gamma"])
    anchor = anchor_mask = None
    if gamma > 0:
        anchor, anchor_mask = _anchor_terms(model, ref, pairs, step_seed)
    return ti_dpo_loss(rc, rr, mc, mr, wc, wr, kc, kr, anchor_logratios=anchor,
                       anchor_mask=anchor_mask, beta=beta, alpha=alpha, gamma=gamma)[0]


@torch.no_grad()
def _evaluate(model, ref, eval_pairs, p: dict[str, Any], seed: int) -> dict[str, float]:
    b = _batch(eval_pairs)
    rho, mask, _ = _forward_terms(model, ref, b)
    margin = (rho * mask).sum(1)
    mc, mr = margin.chunk(2)
    acc = float((mc > mr).double().mean())
    prompts = [eval_pairs[i % len(eval_pairs)]["prompt"] for i in range(int(p["n_samples"]))]
    new = _sample(model, prompts, 16, seed + 7)
    good = torch.isin(new, GOOD_IDS).any(1)
    return {"pair_accuracy": acc, "good_rate": float(good.double().mean())}


def run_trial(trial: Trial, device: str = "cpu") -> dict[str, Any]:
    from optzoo.preference import dpo_loss, ti_dpo_loss

    p, seed = trial.params, trial.seed
    position = str(p.get("position", "middle"))
    methods = METHODS if position == "middle" else CONTROL_METHODS
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    base = _model(p, seed)
    _sft(base, rng, int(p["sft_steps"]), int(p["batch"]), float(p["lr"]), position)
    ref = _model(p, seed)
    ref.load_state_dict(base.state_dict())
    ref.eval()
    eval_rng = np.random.default_rng(10_000 + seed)
    eval_pairs = [_pair(eval_rng, position) for _ in range(int(p["n_eval"]))]
    train_rng = np.random.default_rng(seed + 1)
    steps, bsz, eta = int(p["steps"]), int(p["batch"]), float(p["eta"])
    batches = []
    for _ in range(steps):
        pairs = [_pair(train_rng, position) for _ in range(bsz)]
        for q in pairs:
            if train_rng.random() < eta:  # a flipped label
                q["chosen"], q["rejected"] = q["rejected"], q["chosen"]
                q["pos_chosen"], q["pos_rejected"] = q["pos_rejected"], q["pos_chosen"]
        batches.append(pairs)
    out: dict[str, Any] = {}
    # the reduction check on a real batch: w = 1, α = γ = 0 is DPO
    b = _batch(batches[0])
    with torch.no_grad():
        rho, mask, kl = _forward_terms(base, ref, b)
    (rc, rr), (mc, mr), (kc, kr) = rho.chunk(2), mask.chunk(2), kl.chunk(2)
    z = torch.zeros_like(kc)
    ti = ti_dpo_loss(rc, rr, mc, mr, mc.to(rc.dtype), mr.to(rr.dtype), kc, kr, alpha=0.0,
                     gamma=0.0, beta=float(p["beta"]))[0]
    dp = dpo_loss((rc * mc).sum(1), (rr * mr).sum(1), z, z, beta=float(p["beta"]))[0]
    out["reduction_gap"] = abs(float(ti) - float(dp))
    state = {k: v.clone() for k, v in base.state_dict().items()}
    ref_cache: dict[int, torch.Tensor] = {}  # the frozen reference sees each batch once
    for method in methods:
        model = base
        model.load_state_dict(state)
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=float(p["lr"]))
        for step, pairs in enumerate(batches):
            loss = _loss(method, model, ref, pairs, p, seed * 100_003 + step, ref_cache)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        for k, v in _evaluate(model, ref, eval_pairs, p, seed).items():
            out[f"{k}_{method}"] = v
        if method == "tidpo":
            out["decisive_above_median"] = _attribution_check(model, eval_pairs, p)
            out.update(_prior_check(model, eval_pairs, p))
    return out


def _chosen_batch(eval_pairs) -> dict[str, torch.Tensor]:
    b = _batch(eval_pairs)
    n = len(eval_pairs)
    return {k: v[:n] for k, v in b.items()}


def _attribution_check(model, eval_pairs, p: dict[str, Any]) -> float:
    """Share of held-out chosen responses whose decisive token's TI-DPO weight exceeds the
    response's median weight."""
    w = _weights(model, _chosen_batch(eval_pairs), float(p["lam"]))
    above = []
    for i, q in enumerate(eval_pairs):
        t = len(q["chosen"]) + 1  # with the EOS
        row = w[i, :t]
        above.append(float(row[q["pos_chosen"]] > row.median()))
    return float(np.mean(above))


def _prior_check(model, eval_pairs, p: dict[str, Any]) -> dict[str, float]:
    """The decisive token's mean weight on held-out chosen responses under the Gaussian prior
    (TI-DPO), the flat prior (same λ) and no prior (λ = 1), from the same attribution (the
    trained TI-DPO policy's): does the prior act at this position?"""
    from optzoo.preference import align_completions, hybrid_weights, token_importance

    b = _chosen_batch(eval_pairs)
    lam = float(p["lam"])
    imp, mask = align_completions(token_importance(model, b["input_ids"], b["attention_mask"]),
                                  b["completion_mask"])
    ws = {"gauss": _weights(model, b, lam, "gauss"), "flat": _weights(model, b, lam, "flat"),
          "none": hybrid_weights(imp, mask.to(imp.dtype), mask, lam=1.0)}
    rows = torch.arange(len(eval_pairs))
    pos = torch.tensor([q["pos_chosen"] for q in eval_pairs])
    return {f"decisive_weight_{k}": float(w[rows, pos].double().mean()) for k, w in ws.items()}


# -- claims --------------------------------------------------------------------------------------

def _at(results: list[Result], eta: float, position: str = "middle") -> list[Result]:
    return [r for r in results if float(r.trial.params["eta"]) == eta
            and r.trial.params.get("position", "middle") == position]


def _mean(d: dict) -> float:
    return float(np.mean(list(d.values()))) if d else math.nan


def _claim_control(results: list[Result], cfg: TIDPOConfig) -> Claim | NotEvaluated:
    text = ("With the decisive token at the first or last position, TI-DPO's Gaussian prior "
            "lowers its held-out pair accuracy against the same hybrid weight with a flat "
            "prior (evidence for the prior's mid-response assumption, not a failure).")
    if "edge" not in cfg.positions:
        return NotEvaluated(text, "the positional control is not in this preset's positions")
    eta = _headline_eta(cfg)
    rs = _at(results, eta, "edge")
    if not rs:
        return NotEvaluated(text, "no first/last-position trial finished")
    acc = {m: by_seed(rs, f"pair_accuracy_{m}") for m in CONTROL_METHODS}
    good = {m: by_seed(rs, f"good_rate_{m}") for m in CONTROL_METHODS}
    w = {k: by_seed(rs, f"decisive_weight_{k}") for k in PRIORS}
    verdict = superior(acc["tidpo_flat_prior"], acc["tidpo"], min_effect=cfg.min_prior_harm)
    shift = {s: 1.0 - w["gauss"][s] / w["flat"][s] for s in w["gauss"]
             if s in w["flat"] and w["flat"][s] > 0}
    middle = _at(results, eta)
    mid = ""
    if middle:
        mid = (f"; mid-response trials for comparison: TI-DPO "
               f"{_mean(by_seed(middle, 'pair_accuracy_tidpo')):.3f}, no prior "
               f"{_mean(by_seed(middle, 'pair_accuracy_tidpo_no_prior')):.3f}")
        if by_seed(middle, "decisive_weight_gauss"):
            mid += (f", decisive-token weight Gaussian "
                    f"{_mean(by_seed(middle, 'decisive_weight_gauss')):.3f} vs flat "
                    f"{_mean(by_seed(middle, 'decisive_weight_flat')):.3f}")
    ev = (f"η = {eta:g}, {len(acc['tidpo'])} seeds, pair accuracy: Gaussian prior (TI-DPO) "
          f"{_mean(acc['tidpo']):.3f}, flat prior {_mean(acc['tidpo_flat_prior']):.3f}, no "
          f"prior (λ = 1) {_mean(acc['tidpo_no_prior']):.3f}; GOOD-rate "
          + ", ".join(f"{_mean(good[m]):.3f}" for m in CONTROL_METHODS)
          + "; the decisive token's mean weight (Gaussian / flat / none) "
          + " / ".join(f"{_mean(w[k]):.3f}" for k in PRIORS)
          + f", relative shift {_mean(shift):.3f}" + mid)
    if not shift or min(shift.values()) < cfg.min_prior_shift:
        verdict = not_acting(verdict, f"the Gaussian prior lowers the decisive token's weight "
                                      f"by only {min(shift.values(), default=0.0):.3f} "
                                      f"(relative) on some seed, under the "
                                      f"{cfg.min_prior_shift:g} that counts")
    return Claim(text, ev, verdict)


def _claims(results: list[Result], cfg: TIDPOConfig) -> list[Claim | NotEvaluated]:
    eta = _headline_eta(cfg)
    rs = _at(results, eta)
    items: list[Claim | NotEvaluated] = []
    if not rs:
        return [NotEvaluated("TI-DPO beats DPO", "no trial ran"), _claim_control(results, cfg)]
    for metric, what in (("pair_accuracy", "held-out pair accuracy"),
                         ("good_rate", "share of sampled responses with a GOOD token")):
        a, b = by_seed(rs, f"{metric}_tidpo"), by_seed(rs, f"{metric}_dpo")
        items.append(Claim(f"At label noise η = {eta:g}, TI-DPO's {what} beats DPO's.",
                           f"TI-DPO {_mean(a):.3f} vs DPO {_mean(b):.3f}, TDPO2 "
                           f"{_mean(by_seed(rs, f'{metric}_tdpo2')):.3f} over {len(a)} seeds",
                           superior(a, b, min_effect=cfg.min_accuracy)))
    above = by_seed(rs, "decisive_above_median")
    items.append(Claim("TI-DPO's hybrid weight puts the decisive token above the response's "
                       "median weight.",
                       f"share of held-out chosen responses: {_mean(above):.3f} (chance 0.5)",
                       within(list(above.values()), cfg.min_above_median, 1.0)))
    cells = {}
    for abl in ABLATIONS:
        cells[abl] = superior(by_seed(rs, "good_rate_tidpo"), by_seed(rs, f"good_rate_{abl}"),
                              min_effect=cfg.min_ablation)
    items.append(Claim("Each ablation (no triplet, uniform weights, no prior) lowers TI-DPO's "
                       "GOOD-rate.",
                       "; ".join(f"{a}: {_mean(by_seed(rs, f'good_rate_{a}')):.3f}"
                                 for a in ABLATIONS)
                       + f" vs full {_mean(by_seed(rs, 'good_rate_tidpo')):.3f}",
                       all_of(cells)))
    gaps = [r.metrics["reduction_gap"] for r in results]
    items.append(Claim("With w ≡ 1, α = 0 and γ = 0, TI-DPO's loss equals DPO's (on a real "
                       "batch of every trial).", f"largest |difference| {max(gaps):.2e}",
                       bound_holds(gaps, 1e-6)))
    text = ("TI-DPO loses less pair accuracy than DPO as the label noise grows from 0 to 0.4.")
    if not ({0.0, 0.4} <= set(cfg.noise_levels)):
        items.append(NotEvaluated(text, "needs the noise levels 0 and 0.4 (full preset)"))
    else:
        drops = {}
        for m in ("tidpo", "dpo"):
            lo, hi = by_seed(_at(results, 0.0), f"pair_accuracy_{m}"), \
                by_seed(_at(results, 0.4), f"pair_accuracy_{m}")
            drops[m] = {s: lo[s] - hi[s] for s in lo if s in hi}
        items.append(Claim(text, f"drop TI-DPO {_mean(drops['tidpo']):.3f} vs DPO "
                                 f"{_mean(drops['dpo']):.3f}",
                           superior(drops["dpo"], drops["tidpo"],
                                    min_effect=cfg.min_accuracy)))
    items.append(_claim_control(results, cfg))
    return items


def summarize(results: list[Result], cfg: TIDPOConfig, outdir: Path) -> Summary:
    rows = []
    cases = [(eta, "middle", METHODS) for eta in cfg.noise_levels if "middle" in cfg.positions]
    if "edge" in cfg.positions:
        cases.append((_headline_eta(cfg), "edge", CONTROL_METHODS))
    for eta, position, methods in cases:
        rs = _at(results, eta, position)
        for m in methods:
            cells = [fmt_ci(*mean_ci(list(by_seed(rs, f"{k}_{m}").values())))
                     if by_seed(rs, f"{k}_{m}") else "–" for k in ("pair_accuracy", "good_rate")]
            rows.append([f"{eta:g}", "middle 60 %" if position == "middle" else "first/last",
                         m, *cells])
    tables = [Table("Held-out pair accuracy and GOOD-rate (mean ± 95% CI over seeds)",
                    ["η", "decisive token", "method", "pair accuracy", "GOOD-rate"], rows)]
    figures = [_figure(results, cfg, outdir)] if results else []
    claims, notes = split_claims(_claims(results, cfg))
    notes += ["Every method at one learning rate (no method tuned; equal budgets).",
              "Pair accuracy uses the unweighted log-ratio margin for every method."]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


def _figure(results: list[Result], cfg: TIDPOConfig, outdir: Path) -> Figure:
    eta = _headline_eta(cfg)
    edge = _at(results, eta, "edge")
    fig, axes = grid(3 if edge else 2, panel=(5.0, 3.6))
    rs = _at(results, eta)
    for ax, key, label in ((axes[0], "pair_accuracy", "held-out pair accuracy"),
                           (axes[1], "good_rate", "GOOD-rate of samples")):
        category_panel(ax, {m: list(by_seed(rs, f"{key}_{m}").values()) for m in METHODS},
                       ylabel=label, title=f"η = {eta:g}, decisive token mid-response",
                       ylog=False)
    caption = (f"Pair accuracy and GOOD-rate of each method at the headline noise η = {eta:g} "
               "(mean ± 95 % CI over seeds)")
    if edge:
        category_panel(axes[2], {m: list(by_seed(edge, f"pair_accuracy_{m}").values())
                                 for m in CONTROL_METHODS},
                       ylabel="held-out pair accuracy",
                       title=f"η = {eta:g}, decisive token first/last", ylog=False)
        caption += ("; right: the positional control (decisive token at the first or last "
                    "word), Gaussian prior vs flat prior vs no prior")
    return save(fig, outdir / "ti_dpo.png", caption + ".")


REPRODUCTION = Reproduction(
    slug="ti-dpo",
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Decisive-token preference pairs on a tiny word-level Llama (one GOOD or BAD token in "
        "filler responses, label noise): DPO, TDPO2, TI-DPO and its three ablations from the "
        "same SFT base; held-out pair accuracy, GOOD-rate of samples, the attribution check, "
        "the DPO-reduction check, and the first/last-position control of the Gaussian prior."),
)
