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

Not run: the first/last-position control of the prior and the η = 0 / 0.4 noise levels in
quick (full runs all three levels and decides the robustness claim).

Verdict margins (fixed before results were seen):
* ``min_accuracy = 0.02``: two points of pair accuracy or GOOD-rate is the smallest gain
  that counts.
* ``min_ablation = 0.01``: an ablation "lowers the score" by at least one point.
* ``min_above_median = 0.6``: the decisive token is "above median" when that holds in at
  least 60 % of responses (half would be chance).
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
from optzoo.experiment.verdicts import all_of, bound_holds, by_seed, superior, within
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

    def validate(self) -> None:
        super().validate()
        if not self.noise_levels or any(not 0 <= e < 0.5 for e in self.noise_levels):
            raise ConfigError("noise_levels: expected label-noise rates in [0, 0.5)")
        for name in ("hidden", "layers", "sft_steps", "steps", "batch", "n_eval", "n_samples"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")


PRESETS = {
    "smoke": TIDPOConfig(seeds=1, hidden=32, layers=1, sft_steps=10, steps=3, batch=4,
                         n_eval=16, n_samples=8),
    "quick": TIDPOConfig(),
    "full": TIDPOConfig(seeds=5, noise_levels=(0.0, 0.2, 0.4), steps=600, sft_steps=400),
}

_MARGINS = {"seeds", "noise_levels", "min_accuracy", "min_ablation", "min_above_median"}


def trials(cfg: TIDPOConfig) -> list[Trial]:
    params = {k: v for k, v in cfg.to_dict().items() if k not in _MARGINS}
    return [Trial("all", "decisive-token", s, {**params, "eta": eta})
            for eta in cfg.noise_levels for s in range(cfg.seeds)]


# -- data ----------------------------------------------------------------------------------------

def _response(rng: np.random.Generator, decisive: str) -> tuple[list[str], int]:
    n = int(rng.integers(12, 17))
    words = list(rng.choice(FILLERS, size=n))
    pos = int(rng.integers(int(0.2 * n), int(math.ceil(0.8 * n))))
    words[pos] = decisive
    return words, pos


def _pair(rng: np.random.Generator) -> dict[str, Any]:
    topic = str(rng.choice(TOPICS))
    good, pg = _response(rng, str(rng.choice(GOOD)))
    bad, pb = _response(rng, str(rng.choice(BAD)))
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


def _sft(model, rng: np.random.Generator, steps: int, batch: int, lr: float) -> None:
    """SFT on a 50/50 GOOD/BAD mix: the reference policy is indifferent between the sets."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    for _ in range(steps):
        seqs = []
        for _ in range(batch):
            pair = _pair(rng)
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


def _forward_terms(model, ref, b: dict[str, torch.Tensor]):
    from optzoo.preference import response_terms

    logits = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
    with torch.no_grad():
        ref_logits = ref(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
    return response_terms(logits, ref_logits, b["input_ids"], b["completion_mask"])


def _weights(model, b: dict[str, torch.Tensor], lam: float) -> torch.Tensor:
    from optzoo.preference import response_weights

    return response_weights(model, b["input_ids"], b["attention_mask"], b["completion_mask"],
                            lam=lam)


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


def _loss(method: str, model, ref, pairs, p: dict[str, Any], step_seed: int) -> torch.Tensor:
    from optzoo.preference import dpo_loss, tdpo_loss, ti_dpo_loss

    b = _batch(pairs)
    rho, mask, kl = _forward_terms(model, ref, b)
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
        w = _weights(model, b, lam).to(rho.dtype)
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
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    base = _model(p, seed)
    _sft(base, rng, int(p["sft_steps"]), int(p["batch"]), float(p["lr"]))
    ref = _model(p, seed)
    ref.load_state_dict(base.state_dict())
    ref.eval()
    eval_rng = np.random.default_rng(10_000 + seed)
    eval_pairs = [_pair(eval_rng) for _ in range(int(p["n_eval"]))]
    train_rng = np.random.default_rng(seed + 1)
    steps, bsz, eta = int(p["steps"]), int(p["batch"]), float(p["eta"])
    batches = []
    for _ in range(steps):
        pairs = [_pair(train_rng) for _ in range(bsz)]
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
    for method in METHODS:
        model = base
        model.load_state_dict(state)
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=float(p["lr"]))
        for step, pairs in enumerate(batches):
            loss = _loss(method, model, ref, pairs, p, seed * 100_003 + step)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        for k, v in _evaluate(model, ref, eval_pairs, p, seed).items():
            out[f"{k}_{method}"] = v
        if method == "tidpo":
            out["decisive_above_median"] = _attribution_check(model, eval_pairs, p)
    return out


def _attribution_check(model, eval_pairs, p: dict[str, Any]) -> float:
    """Share of held-out chosen responses whose decisive token's TI-DPO weight exceeds the
    response's median weight."""
    b = _batch(eval_pairs)
    n = len(eval_pairs)
    chosen = {k: v[:n] for k, v in b.items()}
    w = _weights(model, chosen, float(p["lam"]))
    above = []
    for i, q in enumerate(eval_pairs):
        t = len(q["chosen"]) + 1  # with the EOS
        row = w[i, :t]
        above.append(float(row[q["pos_chosen"]] > row.median()))
    return float(np.mean(above))


# -- claims --------------------------------------------------------------------------------------

def _at(results: list[Result], eta: float) -> list[Result]:
    return [r for r in results if float(r.trial.params["eta"]) == eta]


def _mean(d: dict) -> float:
    return float(np.mean(list(d.values()))) if d else math.nan


def _claims(results: list[Result], cfg: TIDPOConfig) -> list[Claim | NotEvaluated]:
    eta = 0.2 if 0.2 in cfg.noise_levels else cfg.noise_levels[0]
    rs = _at(results, eta)
    items: list[Claim | NotEvaluated] = []
    if not rs:
        return [NotEvaluated("TI-DPO beats DPO", "no trial ran")]
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
    return items


def summarize(results: list[Result], cfg: TIDPOConfig, outdir: Path) -> Summary:
    rows = []
    for eta in cfg.noise_levels:
        rs = _at(results, eta)
        for m in METHODS:
            cells = [fmt_ci(*mean_ci(list(by_seed(rs, f"{k}_{m}").values())))
                     if by_seed(rs, f"{k}_{m}") else "–" for k in ("pair_accuracy", "good_rate")]
            rows.append([f"{eta:g}", m, *cells])
    tables = [Table("Held-out pair accuracy and GOOD-rate (mean ± 95% CI over seeds)",
                    ["η", "method", "pair accuracy", "GOOD-rate"], rows)]
    figures = [_figure(results, cfg, outdir)] if results else []
    claims, notes = split_claims(_claims(results, cfg))
    notes += ["Every method at one learning rate (no method tuned; equal budgets).",
              "Pair accuracy uses the unweighted log-ratio margin for every method."]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


def _figure(results: list[Result], cfg: TIDPOConfig, outdir: Path) -> Figure:
    fig, axes = grid(2, panel=(5.0, 3.6))
    eta = 0.2 if 0.2 in cfg.noise_levels else cfg.noise_levels[0]
    rs = _at(results, eta)
    for ax, key, label in ((axes[0], "pair_accuracy", "held-out pair accuracy"),
                           (axes[1], "good_rate", "GOOD-rate of samples")):
        category_panel(ax, {m: list(by_seed(rs, f"{key}_{m}").values()) for m in METHODS},
                       ylabel=label, title=f"η = {eta:g}", ylog=False)
    return save(fig, outdir / "ti_dpo.png",
                f"Pair accuracy and GOOD-rate of each method at the headline noise η = {eta:g} "
                "(mean ± 95 % CI over seeds).")


REPRODUCTION = Reproduction(
    slug="ti-dpo",
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Decisive-token preference pairs on a tiny word-level Llama (one GOOD or BAD token in "
        "filler responses, label noise): DPO, TDPO2, TI-DPO and its three ablations from the "
        "same SFT base; held-out pair accuracy, GOOD-rate of samples, the attribution check "
        "and the DPO-reduction check."),
)
