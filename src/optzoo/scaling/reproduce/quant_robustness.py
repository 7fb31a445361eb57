"""Reproduction ``quant-robustness``: Catalan-Tatjer, Ajroldi & Geiping, "Training Dynamics
Impact Post-Training Quantization Robustness" (ICLR 2026, OpenReview ``ZXr3Xx7Z1O``).

Setting (the brief's small-scale reproduction, CPU): a ``transformers.LlamaForCausalLM`` from a
config (width ``hidden``, ``layers`` blocks, SwiGLU MLP ``intermediate``, random init) trained
from scratch on the random order-``order`` Zipfian Markov language of
:class:`~optzoo.scaling.zipf_ngram.ZipfNGram` (fresh batches every step: sub-epoch training, the
loss keeps falling), AdamW β = (0.9, 0.95), weight decay ``weight_decay``, gradient clip 1,
linear warm-up over ``warmup_frac`` of the run.  Every checkpoint is quantized weight-only
(transformer-block linears only; embeddings and LM head in full precision) by RTN and by GPTQ
(:mod:`optzoo.scaling.gptq`, gptqmodel's defaults: symmetric grid, act-order, damping 0.05) at
``bits`` bits, group ``group_size``, calibrated on ``calib_size`` sequences of a generator seed
the validation set (``eval_size`` sequences) never uses.  Metric: ΔCE = CE(quantized) − CE(full
precision) on the validation set (primary; the relative gap is in the tables).

Runs per seed (the same batches in every run of a seed,
:class:`~optzoo.scaling.trajectory.Trainer`):

* ``base`` trial — a constant-lr trunk at ``peak_lr`` for T = ``steps`` steps, checkpointed
  every T / ``checkpoints``; WSD cooldowns branch off it at 0.8 · b · T and decay linearly to 0
  at b · T for every budget fraction b in ``budgets`` (20 % cooldown of each budget: the
  paper's "same schedule shape scaled to each budget"); LAWA: the uniform average of the last
  ``lawa_window`` trunk checkpoints, spaced ``lawa_spacing`` · T, ending at T (averaging in the
  stable phase *instead of* the decay, same tokens);
* ``high-lr`` trial — the same WSD run (budget 1) at ``high_lr_factor`` × ``peak_lr``;
* ``cosine`` trial — cosine decay to 0 over T at ``peak_lr``.

Claims (at ``primary_bits`` bits, once for each PTQ method of ``claim_methods``: GPTQ, the
paper's main method, and RTN, the analogue of its bitsandbytes appendix; each by a named test
of :mod:`optzoo.experiment.verdicts`, paired by seed):

(1) LR decay, not tokens, raises the quantization error: at equal tokens T, ΔCE of the WSD
    model exceeds ΔCE of the constant-lr model by more than ``min_effect_dce`` while its FP
    loss is lower by more than ``min_effect_ce`` ("validation loss and quantization error
    diverge") — ``superior`` twice, all of;
(2) token count is not the driver: the post-cooldown ΔCE of the budgets b·T (smallest vs
    largest) are ``equivalent`` within ``min_effect_dce``; inconclusive (``not_acting``) when
    claim (1)'s decay jump is absent (there is nothing for the budgets to reproduce);
(3) a higher peak lr with the same decay quantizes better at (no worse) FP loss: ΔCE lower by
    more than ``min_effect_dce`` (``superior``) and FP loss ``noninferior`` within
    ``margin_ce``;
(4) LAWA in the stable phase instead of the decay: its ΔCE is lower than the decayed model's
    by more than ``min_effect_dce`` (``superior``) and its quantized loss is no worse
    (``noninferior`` within ``margin_ce``), although its FP loss is higher (reported);
    inconclusive if the average does not move the weights (``not_acting``: relative distance to
    the last checkpoint below 1e-4);
(5) cosine decay to 0 hurts more than WSD: ΔCE(cosine, T) − ΔCE(WSD, T) > ``min_effect_dce``
    (``superior``);
(6) the Hessian trace tracks the quantization error: Spearman ρ between the Hutchinson trace
    (:mod:`optzoo.scaling.hessian_trace`, ``hessian_probes`` Rademacher probes on the first
    ``hessian_batch`` validation sequences, all parameters) and ΔCE over every checkpoint of
    the base trials (trunk and cooldowns, pooled over seeds) above ``min_rho`` (``trend``;
    bootstrap CI over checkpoints).

Every claim is inconclusive (``not_acting``) if quantization does not act at this scale:
ΔCE of the decayed WSD model not above ``min_effect_dce`` (``superior`` against 0).

Verdict margins (fixed before any run): ``min_effect_dce`` = 0.002 nats — twice the standard
error of a paired ΔCE difference on ~8 k validation tokens (per-token CE differences between two
checkpoints have a spread of ~0.1 nat), the smallest quantization-error change that is not
evaluation noise; ``min_effect_ce`` = 0.005 nats — an FP loss change smaller than that is a tie
on this validation set; ``min_rho`` = 0.5 — the brief's threshold for "tracks";
``margin_ce`` = 0.01 nats — "equal FP loss" in the paper's sense (≈ 0.5 %
of the loss at the end of training here).

Scale (issue 28; preset chosen from a probe of the guard on seed 0; claims not looked at).  The
paper's effect needs weights that quantization actually hurts: models trained long relative to
their size (its controlled runs see 60–600 tokens per parameter) at a bit width where the grid
is coarse.  The earlier quick (width 128, 2 blocks, 300 steps: 0.5 tokens per parameter) had a
GPTQ 3-bit ΔCE of 0.0008 ± 0.0010 nats on the decayed model — below ``min_effect_dce``, every
claim inconclusive.  A probe measured only the guard quantity (ΔCE of the WSD-decayed model at
T, seed 0, validation 192 sequences, calibration 64; RTN / GPTQ, 3 bits, group 32):

==========================  ==========  ==================  =============  ==============
model, steps                parameters  tokens / parameter  RTN 3-bit ΔCE  GPTQ 3-bit ΔCE
==========================  ==========  ==================  =============  ==============
width 128, 2 blocks, 300    332 k       0.5                 0.0067         0.0011
width 64, 1 block, 600      43 k        7                   0.0163         0.0034
width 32, 2 blocks, 600     22 k        14                  0.0305         0.0164
width 32, 1 block, 400      11 k        18                  0.0275         0.0138
width 32, 1 block, 600      11 k        27                  0.0378         0.0182
width 32, 1 block, 1500     11 k        68                  0.0477         0.0266
==========================  ==========  ==================  =============  ==============

(width 32: GPTQ 2-bit 0.05–0.16, 4-bit 0.001–0.005; group 8 / 16 / 128 within ±20 % of group 32;
a lower-entropy language, Zipf exponent 2.5, gave 0.023 at width 32, 600 steps; vocabulary 32
left the model far from its floor, FP CE 3.22 vs 2.21.)  ΔCE grows with tokens per parameter,
as the paper's mechanism says.  Chosen: ``quick`` = width 32, 1 block, 600 steps (27 tokens per
parameter, the largest that fits the time budget), 3 bits; ``full`` = width 32, 2 blocks, 2000
steps (~47 tokens per parameter), 3 and 4 bits.  Group 32 (the brief's) = the whole input row of
the attention projections and half a row of ``down_proj``: the paper's groups hold 128 weights,
and a grid fitted over fewer weights is finer (smaller max |w|), so the largest group the width
allows is the closest analogue.  The probes ran before the last change of the sampler's draw
order (same language, other draws).

Deviations from the paper: synthetic Markov language instead of web text; 11–22 k parameter
Llamas (width 32) instead of 70 M–160 M Pythia models and public trajectories; group 32 is at
most one group per input row (the paper's models are ≥ 768 wide, several groups of 128 per
row); GPTQ is optzoo's own CPU implementation with gptqmodel's defaults (the library needs
CUDA here); no downstream benchmarks; no loss-landscape (PCA-plane) probes; no weight-decay
sweep or model soups; budgets are fractions of one trunk; the Hessian trace's estimator
settings are the brief's (the paper's were not found).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.core import NotEvaluated, split_claims
from optzoo.experiment.stats import fmt_values
from optzoo.experiment.verdicts import (
    all_of,
    by_seed,
    common_seeds,
    equivalent,
    noninferior,
    not_acting,
    superior,
    trend,
)
from optzoo.report.figures import grid as panels
from optzoo.report.figures import line_panel, save

SLUG = "quant-robustness"
FAMILIES = ("base", "high-lr", "cosine")
VERDICT_FIELDS = ("min_effect_dce", "min_effect_ce", "margin_ce", "min_rho")


@dataclass(frozen=True)
class QuantRobustnessRepro(Preset):
    """Settings of the reproduction (see the module docstring)."""

    seeds: int = 3
    vocab_size: int = 16
    order: int = 3
    seq_len: int = 32
    zipf_exponent: float = 1.5
    hidden: int = 128
    intermediate: int = 256
    layers: int = 2
    heads: int = 4
    batch: int = 16
    steps: int = 400
    warmup_frac: float = 0.05
    cooldown_frac: float = 0.2
    peak_lr: float = 3e-3
    high_lr_factor: float = 3.0
    weight_decay: float = 0.1
    budgets: tuple[float, ...] = (0.5, 1.0)
    checkpoints: int = 8
    cooldown_checkpoints: int = 2
    lawa_window: int = 3
    lawa_spacing: float = 0.02
    methods: tuple[str, ...] = ("rtn", "gptq")
    claim_methods: tuple[str, ...] = ("gptq", "rtn")
    bits: tuple[int, ...] = (3, 4)
    primary_bits: int = 3
    group_size: int = 128
    calib_size: int = 64
    eval_size: int = 256
    hessian_probes: int = 20
    hessian_batch: int = 32
    min_rho: float = 0.5
    min_effect_dce: float = 0.002
    min_effect_ce: float = 0.005
    margin_ce: float = 0.01

    def validate(self) -> None:
        super().validate()
        from optzoo.scaling.quantization import METHODS

        for name in ("vocab_size", "order", "seq_len", "hidden", "intermediate", "layers",
                     "heads", "batch", "steps", "checkpoints", "cooldown_checkpoints",
                     "lawa_window", "group_size", "calib_size", "eval_size", "hessian_batch"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")
        if self.hidden % self.heads:
            raise ConfigError(f"hidden: expected a multiple of heads={self.heads}")
        if not self.budgets or any(not 0 < b <= 1 for b in self.budgets) or list(
                self.budgets) != sorted(set(self.budgets)) or self.budgets[-1] != 1.0:
            raise ConfigError(f"budgets: expected increasing fractions in (0, 1] ending at 1, "
                              f"got {self.budgets}")
        for name in ("warmup_frac", "cooldown_frac", "lawa_spacing"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise ConfigError(f"{name}: expected a fraction in (0, 1), got {v}")
        if self.warmup_frac >= self.budgets[0] * (1 - self.cooldown_frac):
            raise ConfigError("budgets: the smallest budget's cooldown must start after the "
                              "warm-up")
        if not set(self.methods) <= set(METHODS) or "gptq" not in self.methods:
            raise ConfigError(f"methods: expected names from {METHODS} including 'gptq', got "
                              f"{self.methods}")
        if not self.claim_methods or not set(self.claim_methods) <= set(self.methods):
            raise ConfigError(f"claim_methods: expected a non-empty subset of methods="
                              f"{self.methods}, got {self.claim_methods}")
        if not self.bits or any(not 1 <= b <= 8 for b in self.bits) or (
                self.primary_bits not in self.bits):
            raise ConfigError(f"bits: expected bit widths in 1..8 including primary_bits="
                              f"{self.primary_bits}, got {self.bits}")
        if self.lawa_window * round(self.lawa_spacing * self.steps) >= self.steps * (
                1 - self.cooldown_frac):
            raise ConfigError("lawa_window: the LAWA window must fit in the stable phase")
        for name in ("peak_lr", "high_lr_factor", *VERDICT_FIELDS):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ConfigError(f"{name}: expected a finite number > 0, got {v}")
        if self.hessian_probes < 0:
            raise ConfigError(f"hessian_probes: expected an integer >= 0 (0: off), got "
                              f"{self.hessian_probes}")
        if self.min_rho >= 1:
            raise ConfigError(f"min_rho: expected a correlation below 1, got {self.min_rho}")
        if self.high_lr_factor <= 1:
            raise ConfigError(f"high_lr_factor: expected > 1, got {self.high_lr_factor}")


PRESETS = {
    # every code path in seconds: a 1-block width-32 model, 40 steps; verdicts mean nothing
    "smoke": QuantRobustnessRepro(seeds=2, hidden=32, intermediate=64, layers=1, heads=2,
                                  batch=4, seq_len=16, steps=40, checkpoints=2,
                                  cooldown_checkpoints=1, lawa_window=2, lawa_spacing=0.05,
                                  bits=(3,), group_size=32, calib_size=8, eval_size=16,
                                  hessian_probes=2, hessian_batch=4),
    # 3 seeds, width 32 (group 32), 1 block (~11 k parameters), 600 steps of 16 × 32 tokens
    # (~27 tokens per parameter), 3 bits only; width and steps from the guard probe (module
    # docstring)
    "quick": QuantRobustnessRepro(hidden=32, intermediate=64, layers=1, heads=2, steps=600,
                                  checkpoints=6, bits=(3,), group_size=32, eval_size=192,
                                  hessian_batch=16),
    # 5 seeds, width 32, 2 blocks (~22 k parameters), 2000 steps (~47 tokens per parameter),
    # budgets ¼, ½, 1, 3 and 4 bits, denser checkpoints
    "full": QuantRobustnessRepro(seeds=5, hidden=32, intermediate=64, layers=2, heads=2,
                                 steps=2000, budgets=(0.25, 0.5, 1.0), checkpoints=20,
                                 cooldown_checkpoints=4, group_size=32, eval_size=512,
                                 calib_size=128),
}


def trials(cfg: QuantRobustnessRepro) -> list[Trial]:
    keys = ("vocab_size", "order", "seq_len", "zipf_exponent", "hidden", "intermediate",
            "layers", "heads", "batch", "steps", "warmup_frac", "cooldown_frac",
            "weight_decay", "checkpoints", "cooldown_checkpoints", "methods", "bits",
            "group_size", "calib_size", "eval_size", "hessian_probes", "hessian_batch")
    common = {k: v for k, v in cfg.to_dict().items() if k in keys}
    out = []
    for s in range(cfg.seeds):
        out.append(Trial("base", "zipf-ngram", s, {
            **common, "peak_lr": cfg.peak_lr, "budgets": list(cfg.budgets),
            "lawa_window": cfg.lawa_window, "lawa_spacing": cfg.lawa_spacing}))
        out.append(Trial("high-lr", "zipf-ngram", s, {
            **common, "peak_lr": cfg.peak_lr * cfg.high_lr_factor, "budgets": [1.0]}))
        out.append(Trial("cosine", "zipf-ngram", s, {**common, "peak_lr": cfg.peak_lr}))
    return out


# -- one trial ---------------------------------------------------------------------------------

def _evaluator(p: dict, corpus, seed: int):
    """``evaluate(tag, model) -> metrics`` for the trial's quantizers on fixed data."""
    import numpy as np
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from optzoo.scaling.hessian_trace import hutchinson_trace
    from optzoo.scaling.quantization import cross_entropy, quantization_error, quantize_model

    val = corpus.sample(int(p["eval_size"]), np.random.default_rng([seed, 101]))
    calib = corpus.sample(int(p["calib_size"]), np.random.default_rng([seed, 202]))

    hb = val[:int(p["hessian_batch"])]

    def evaluate(tag: str, model) -> dict:
        fp = cross_entropy(model, val)
        out = {f"{tag}:ce_fp": fp}
        if int(p["hessian_probes"]) > 0:
            # the math attention kernel has a double backward (CPU flash attention has none)
            with sdpa_kernel(SDPBackend.MATH):
                est = hutchinson_trace(lambda: model(input_ids=hb, labels=hb).loss,
                                       [q for q in model.parameters() if q.requires_grad],
                                       probes=int(p["hessian_probes"]), seed=seed)
            out[f"{tag}:hessian_trace"] = est.trace
        for method in p["methods"]:
            for bits in p["bits"]:
                q = quantize_model(model, method, int(bits), int(p["group_size"]),
                                   calibration=calib, batch_size=64)
                e = quantization_error(model, q, val, ce_fp=fp)
                for k in ("dce", "rel", "ce_q"):
                    out[f"{tag}:{method}{bits}_{k}"] = e[k]
        return out

    return evaluate


def _grid(p: dict, until: int) -> list[int]:
    every = max(1, int(p["steps"]) // int(p["checkpoints"]))
    return [s for s in range(every, until + 1, every)]


def run_trial(trial: Trial, device: str = "cpu") -> dict:
    import torch

    from optzoo.llm import TinyLlama
    from optzoo.scaling.lawa import LAWA
    from optzoo.scaling.lr_schedules import Schedule
    from optzoo.scaling.trajectory import Trainer
    from optzoo.scaling.zipf_ngram import ZipfNGram

    torch.set_num_threads(1)  # small matmuls: threads cost more than they give
    p = trial.params
    corpus = ZipfNGram(vocab_size=int(p["vocab_size"]), order=int(p["order"]),
                       seq_len=int(p["seq_len"]), zipf_exponent=float(p["zipf_exponent"]))
    shape = TinyLlama(hidden_size=int(p["hidden"]), intermediate_size=int(p["intermediate"]),
                      num_layers=int(p["layers"]), num_heads=int(p["heads"]))
    T = int(p["steps"])
    warm = max(1, round(float(p["warmup_frac"]) * T))
    evaluate = _evaluator(p, corpus, trial.seed)
    out: dict = {"entropy_rate": corpus.entropy_rate()}
    trainer = Trainer(corpus, shape, peak_lr=float(p["peak_lr"]), seed=trial.seed,
                      batch_size=int(p["batch"]), weight_decay=float(p["weight_decay"]))
    grid = _grid(p, T)

    def record(tag):
        return lambda step, model: out.update(evaluate(f"{tag}@{step}", model))

    if trial.method == "cosine":
        trainer.run(Schedule("cosine", T, warm), T, checkpoints=grid, callback=record("cosine"))
        out["cosine:steps"] = T
        return out
    trunk = Schedule("constant", T, warm)
    frac = float(p["cooldown_frac"])
    budgets = [float(b) for b in p["budgets"]]
    branches = {b: round(b * T * (1 - frac)) for b in budgets}
    lawa_steps: list[int] = []
    if trial.method == "base":
        spacing = max(1, round(float(p["lawa_spacing"]) * T))
        lawa_steps = [T - k * spacing for k in range(int(p["lawa_window"]))][::-1]
    lawa = LAWA(max(1, len(lawa_steps)))
    trunk_until = T if trial.method == "base" else branches[1.0]
    stops = sorted(set(branches.values()) | {trunk_until})
    def on_trunk(step, model):
        if step in grid:
            out.update(evaluate(f"const@{step}", model))
        if step in lawa_steps:
            lawa.update(model, step)

    for stop in stops:
        if stop > trunk_until:
            break
        marks = [s for s in sorted(set(grid) | set(lawa_steps)) if trainer.step < s <= stop]
        trainer.run(trunk, stop, checkpoints=marks, callback=on_trunk)
        for b, start in branches.items():
            if start != stop:
                continue
            end = round(b * T)
            n = int(p["cooldown_checkpoints"])
            marks = sorted({start + round((end - start) * (k + 1) / n) for k in range(n)})
            branch = trainer.fork()
            branch.run(Schedule.wsd_from(trunk, start, end - start), end, checkpoints=marks,
                       callback=record(f"wsd{b:g}"))
            out[f"wsd{b:g}:start"], out[f"wsd{b:g}:end"] = start, end
    if trial.method == "base":
        avg = lawa.averaged(trainer.model)
        out.update(evaluate(f"lawa@{T}", avg))
        num = sum(float((a - m).detach().pow(2).sum()) for a, m in
                  zip(avg.parameters(), trainer.model.parameters(), strict=True))
        den = sum(float(m.detach().pow(2).sum()) for m in trainer.model.parameters())
        out["lawa:relative_distance"] = math.sqrt(num / den)
    return out


# -- summary -----------------------------------------------------------------------------------

def _rs(results, family: str) -> list[Result]:
    return [r for r in results if r.trial.method == family]


def _metric(results, family: str, key: str) -> dict:
    rs = [r for r in _rs(results, family) if key in r.metrics]
    return by_seed(rs, key)


def _key(cfg, method: str, tag: str, what: str = "dce") -> str:
    if what == "ce_fp":
        return f"{tag}:ce_fp"
    return f"{tag}:{method}{cfg.primary_bits}_{what}"


def _paired(results, cfg, m: str, a: str, b: str, what: str = "dce", *,
            family_a: str = "base", family_b: str = "base") -> tuple[dict, dict]:
    """The metric ``what`` of endpoints ``a`` and ``b`` on the seeds both have."""
    return common_seeds(_metric(results, family_a, _key(cfg, m, a, what)),
                        _metric(results, family_b, _key(cfg, m, b, what)))


def _end(cfg) -> dict[str, str]:
    """Tag of each run's endpoint at T steps."""
    T = cfg.steps
    return {"const": f"const@{T}", "wsd": f"wsd1@{T}", "lawa": f"lawa@{T}", "cosine": f"cosine@{T}"}


def _acting(results, cfg, m: str):
    """The guard of every claim: quantization measurably hurts the decayed WSD model."""
    d = _metric(results, "base", _key(cfg, m, _end(cfg)["wsd"]))
    return superior(d, dict.fromkeys(d, 0.0), min_effect=cfg.min_effect_dce)


def _guarded(verdict, acting, m: str):
    if acting.verdict != "held":
        return not_acting(verdict, f"{m.upper()} ΔCE of the decayed model is not above the minimal "
                                   "effect: quantization does not act at this scale")
    return verdict


def _claim_decay(results, cfg, acting, m: str) -> Claim | NotEvaluated:
    text = (f"(1, {m.upper()}) At equal tokens ({cfg.steps} steps) the WSD-decayed model's "
            f"{m.upper()} {cfg.primary_bits}-bit ΔCE exceeds the constant-lr model's by more than "
            f"{cfg.min_effect_dce:g} nats while its full-precision loss is lower by more than "
            f"{cfg.min_effect_ce:g}: loss and quantization error diverge when the lr decays.")
    e = _end(cfg)
    wsd, const = _paired(results, cfg, m, e["wsd"], e["const"])
    fw, fc = _paired(results, cfg, m, e["wsd"], e["const"], "ce_fp")
    if not wsd:
        return NotEvaluated(text, "no base trial finished")
    verdict = all_of({"ΔCE higher after decay": superior(wsd, const,
                                                         min_effect=cfg.min_effect_dce),
                      "FP loss lower after decay": superior(fw, fc, min_effect=cfg.min_effect_ce,
                                                            direction="less")})
    return Claim(text, f"ΔCE WSD {fmt_values(list(wsd.values()), 4)} vs constant "
                       f"{fmt_values(list(const.values()), 4)}; FP CE WSD "
                       f"{fmt_values(list(fw.values()), 4)} vs constant "
                       f"{fmt_values(list(fc.values()), 4)}", _guarded(verdict, acting, m))


def _claim_budgets(results, cfg, acting, m: str) -> Claim | NotEvaluated:
    lo, hi = cfg.budgets[0], cfg.budgets[-1]
    T = cfg.steps
    text = (f"(2, {m.upper()}) Token count is not the driver: after a 20 % cooldown the "
            f"{m.upper()} {cfg.primary_bits}-bit ΔCE of the {lo:g}·T and {hi:g}·T budgets are "
            f"equal within ±{cfg.min_effect_dce:g} nats.")
    if len(cfg.budgets) < 2:
        return NotEvaluated(text, "one budget only")
    a, b = _paired(results, cfg, m, f"wsd{lo:g}@{round(lo * T)}", f"wsd{hi:g}@{round(hi * T)}")
    if not a:
        return NotEvaluated(text, "no base trial finished")
    e = _end(cfg)
    wsd, const = _paired(results, cfg, m, e["wsd"], e["const"])
    jump = superior(wsd, const, min_effect=cfg.min_effect_dce)
    verdict = equivalent(a, b, margin=cfg.min_effect_dce)
    if jump.verdict != "held":
        verdict = not_acting(verdict, "no decay-induced ΔCE jump (claim 1's first part) for the "
                                      "budgets to reproduce")
    return Claim(text, f"ΔCE after the cooldown: {lo:g}·T {fmt_values(list(a.values()), 4)}, "
                       f"{hi:g}·T {fmt_values(list(b.values()), 4)}", _guarded(verdict, acting, m))


def _claim_high_lr(results, cfg, acting, m: str) -> Claim | NotEvaluated:
    text = (f"(3, {m.upper()}) With the same WSD decay, peak lr {cfg.high_lr_factor:g}× higher "
            f"gives a {m.upper()} {cfg.primary_bits}-bit ΔCE lower by more than "
            f"{cfg.min_effect_dce:g} nats at a full-precision loss no worse than "
            f"{cfg.margin_ce:g}.")
    tag = _end(cfg)["wsd"]
    hi, base = _paired(results, cfg, m, tag, tag, family_a="high-lr")
    fh, fb = _paired(results, cfg, m, tag, tag, "ce_fp", family_a="high-lr")
    if not hi:
        return NotEvaluated(text, "no high-lr trial finished")
    verdict = all_of({"ΔCE lower": superior(hi, base, min_effect=cfg.min_effect_dce,
                                            direction="less"),
                      "FP loss no worse": noninferior(fh, fb, margin=cfg.margin_ce,
                                                      direction="less")})
    return Claim(text, f"ΔCE high lr {fmt_values(list(hi.values()), 4)} vs base "
                       f"{fmt_values(list(base.values()), 4)}; FP CE high lr "
                       f"{fmt_values(list(fh.values()), 4)} vs base "
                       f"{fmt_values(list(fb.values()), 4)}", _guarded(verdict, acting, m))


def _claim_lawa(results, cfg, acting, m: str) -> Claim | NotEvaluated:
    text = (f"(4, {m.upper()}) LAWA (uniform average of the last {cfg.lawa_window} "
            f"stable-phase checkpoints, no decay) has a {m.upper()} {cfg.primary_bits}-bit ΔCE "
            f"lower than the WSD-decayed model's by more than {cfg.min_effect_dce:g} nats and a "
            f"quantized loss no worse than {cfg.margin_ce:g}, at equal tokens.")
    e = _end(cfg)
    la, wsd = _paired(results, cfg, m, e["lawa"], e["wsd"])
    qa, qw = _paired(results, cfg, m, e["lawa"], e["wsd"], "ce_q")
    fa, fw = _paired(results, cfg, m, e["lawa"], e["wsd"], "ce_fp")
    if not la:
        return NotEvaluated(text, "no base trial finished")
    verdict = all_of({"ΔCE lower": superior(la, wsd, min_effect=cfg.min_effect_dce,
                                            direction="less"),
                      "quantized loss no worse": noninferior(qa, qw, margin=cfg.margin_ce,
                                                             direction="less")})
    dist = _metric(results, "base", "lawa:relative_distance")
    if not dist or max(dist.values()) < 1e-4:
        verdict = not_acting(verdict, "the LAWA average does not move the weights")
    return Claim(text, f"ΔCE LAWA {fmt_values(list(la.values()), 4)} vs WSD "
                       f"{fmt_values(list(wsd.values()), 4)}; quantized CE LAWA "
                       f"{fmt_values(list(qa.values()), 4)} vs WSD "
                       f"{fmt_values(list(qw.values()), 4)}; FP CE LAWA "
                       f"{fmt_values(list(fa.values()), 4)} vs WSD "
                       f"{fmt_values(list(fw.values()), 4)}; relative weight distance to the "
                       f"last checkpoint {fmt_values(list(dist.values()), 4)}",
                 _guarded(verdict, acting, m))


def _claim_cosine(results, cfg, acting, m: str) -> Claim | NotEvaluated:
    text = (f"(5, {m.upper()}) Cosine decay to 0 hurts more than WSD: at {cfg.steps} steps "
            f"the cosine model's {m.upper()} {cfg.primary_bits}-bit ΔCE exceeds the WSD model's "
            f"by more than {cfg.min_effect_dce:g} nats.")
    e = _end(cfg)
    cos = _metric(results, "cosine", _key(cfg, m, e["cosine"]))
    wsd = _metric(results, "base", _key(cfg, m, e["wsd"]))
    cos, wsd = common_seeds(cos, wsd)
    if not cos:
        return NotEvaluated(text, "no cosine trial finished")
    verdict = superior(cos, wsd, min_effect=cfg.min_effect_dce)
    return Claim(text, f"ΔCE cosine {fmt_values(list(cos.values()), 4)} vs WSD "
                       f"{fmt_values(list(wsd.values()), 4)}", _guarded(verdict, acting, m))


def _claim_trace(results, cfg, acting, m: str) -> Claim | NotEvaluated:
    text = (f"(6, {m.upper()}) Along training (every checkpoint of the constant trunk and the "
            f"WSD cooldowns) the Hutchinson Hessian trace tracks the {m.upper()} "
            f"{cfg.primary_bits}-bit ΔCE: Spearman ρ above {cfg.min_rho:g}.")
    if cfg.hessian_probes == 0:
        return NotEvaluated(text, "hessian_probes = 0")
    xs, ys = [], []
    for r in _rs(results, "base"):
        for k, v in r.metrics.items():
            if k.endswith(":hessian_trace") and not k.startswith("lawa"):
                tag = k[:-len(":hessian_trace")]
                d = r.metrics.get(_key(cfg, m, tag))
                if d is not None and math.isfinite(float(v)) and math.isfinite(float(d)):
                    xs.append(float(v))
                    ys.append(float(d))
    if len(xs) < 3:
        return NotEvaluated(text, "fewer than 3 checkpoints with a Hessian trace")
    verdict = trend(xs, ys, direction="increasing", min_rho=cfg.min_rho)
    return Claim(text, f"{len(xs)} checkpoints pooled over seeds; trace range "
                       f"[{min(xs):.3g}, {max(xs):.3g}], ΔCE range [{min(ys):.3g}, "
                       f"{max(ys):.3g}]", _guarded(verdict, acting, m))


def _curves(results, family: str, prefix: str, key_of) -> dict[int, list[float]]:
    """``{step: per-seed values}`` of every ``prefix@step`` metric of a family."""
    cells: dict[int, list[float]] = {}
    for r in _rs(results, family):
        for k, v in r.metrics.items():
            head, _, rest = k.partition("@")
            if head != prefix or ":" not in rest:
                continue
            step, _, what = rest.partition(":")
            if what == key_of:
                cells.setdefault(int(step), []).append(float(v))
    return cells


def _series(results, cfg, what: str) -> dict[str, dict[int, list[float]]]:
    s = {"constant": _curves(results, "base", "const", what)}
    for b in cfg.budgets:
        s[f"WSD {b:g}·T"] = _curves(results, "base", f"wsd{b:g}", what)
    s["WSD, high lr"] = _curves(results, "high-lr", "wsd1", what)
    s["cosine"] = _curves(results, "cosine", "cosine", what)
    s["LAWA"] = _curves(results, "base", "lawa", what)
    return {k: v for k, v in s.items() if v}


def summarize(results: list[Result], cfg: QuantRobustnessRepro, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    T = cfg.steps
    rows = []
    ends = [("constant", "base", f"const@{T}"), *[
        (f"WSD {b:g}·T", "base", f"wsd{b:g}@{round(b * T)}") for b in cfg.budgets],
        ("LAWA", "base", f"lawa@{T}"), ("WSD, high lr", "high-lr", f"wsd1@{T}"),
        ("cosine", "cosine", f"cosine@{T}")]
    for label, family, tag in ends:
        fp = list(_metric(results, family, f"{tag}:ce_fp").values())
        if not fp:
            continue
        row = [label, fmt_values(fp, 4)]
        for m in cfg.methods:
            for b in cfg.bits:
                row.append(fmt_values(list(_metric(results, family,
                                                   f"{tag}:{m}{b}_dce").values()), 4))
                row.append(fmt_values(list(_metric(results, family,
                                                   f"{tag}:{m}{b}_rel").values()), 4))
        rows.append(row)
    cols = ["run (endpoint)", "FP CE"] + [f"{m} {b}-bit {x}" for m in cfg.methods
                                          for b in cfg.bits for x in ("ΔCE", "rel")]
    ent = [float(r.metrics["entropy_rate"]) for r in results if "entropy_rate" in r.metrics]
    tables = [Table("Endpoints: full-precision validation CE and quantization error (ΔCE = "
                    "CE_q − CE_fp, rel = CE_q / CE_fp − 1), mean ± 95 % CI over seeds", cols,
                    rows)]
    items = []
    for m in cfg.claim_methods:
        acting = _acting(results, cfg, m)
        items += [f(results, cfg, acting, m) for f in (_claim_decay, _claim_budgets,
                                                       _claim_high_lr, _claim_lawa,
                                                       _claim_cosine, _claim_trace)]
    claims, notes = split_claims(items)
    notes += [
        f"Language: order-{cfg.order} Zipfian Markov chain over {cfg.vocab_size} tokens "
        f"(exponent {cfg.zipf_exponent:g}), Bayes-optimal CE "
        f"{(sum(ent) / len(ent)) if ent else float('nan'):.3f} nats; model: Llama width "
        f"{cfg.hidden}, {cfg.layers} blocks, MLP {cfg.intermediate}; {cfg.batch} × "
        f"{cfg.seq_len} tokens per step, {T} steps, peak lr {cfg.peak_lr:g} (high lr "
        f"{cfg.peak_lr * cfg.high_lr_factor:g}), warm-up {cfg.warmup_frac:g}, WSD cooldown "
        f"{cfg.cooldown_frac:g} linear to 0.",
        f"Quantization: block linears only, {cfg.bits} bits, group {cfg.group_size} "
        f"(per output channel where in_features ≤ {cfg.group_size}), symmetric grid for RTN "
        "and GPTQ; GPTQ with act-order and damping 0.05 (gptqmodel defaults), calibration on "
        f"{cfg.calib_size} sequences from a separate generator seed.",
        "Deviations: see the module docstring (synthetic language, tiny models, no landscape "
        "probes, no weight-decay sweep, no model soups).",
    ]
    figures = [_figure(results, cfg, outdir)] if results else []
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


def _figure(results, cfg, outdir: Path) -> Figure:
    trace = _series(results, cfg, "hessian_trace")
    fig, axes = panels(3 if trace else 2, panel=(5.0, 3.6))
    what = f"gptq{cfg.primary_bits}_dce"
    line_panel(axes[0], _series(results, cfg, what), xlabel="step",
               ylabel=f"GPTQ {cfg.primary_bits}-bit ΔCE (nats)", title="quantization error",
               xlog=False, ylog=False, legend=False)
    line_panel(axes[1], _series(results, cfg, "ce_fp"), xlabel="step",
               ylabel="full-precision validation CE", title="FP loss", xlog=False, ylog=False,
               legend="outside" if not trace else False)
    if trace:
        line_panel(axes[2], trace, xlabel="step", ylabel="Hutchinson tr(H)",
                   title="Hessian trace", xlog=False, ylog=False, legend="outside")
    return save(fig, outdir / "dce_vs_training.png",
                f"GPTQ {cfg.primary_bits}-bit ΔCE, FP validation CE and (when probed) the "
                "Hessian trace along training per schedule (mean ± 95 % CI over seeds); WSD "
                "cooldowns branch off the constant trunk.")


REPRODUCTION = Reproduction(
    slug=SLUG, presets=PRESETS, trials=trials, run_trial=run_trial, summarize=summarize,
    description=("Post-training quantization error (RTN, GPTQ at 3/4 bits) of tiny Llamas along "
                 "constant / WSD / cosine trajectories on a synthetic Markov language, and the "
                 "interventions: higher peak lr, LAWA."))
