"""Reproduction ``kan-convergence``: Eshtehardian, Yassaee & Khalaj, "On the Convergence of
Two-Layer Kolmogorov-Arnold Networks with First-Layer Training" (ICLR 2026, OpenReview
buuwRBYfrP; no arXiv version, no official code).

The paper is theory (Thm 4.2: GD on the first layer α of a wide two-layer KAN converges
linearly, L(t+1) ≤ (1 − ηλ₀/2) L(t), with width m = O(d²g⁶n²/λ₀²); Thm 4.6: the residual follows
the KAN-TK spectrum, ‖y − u(t)‖² ≈ Σ_i (1 − ηλ_i)^{2t}(v_iᵀy)²) with small synthetic experiments.
Model: :class:`optzoo.kan.TwoLayerKAN` (Gaussian RBF basis, g centres on [0, 1], s = spacing,
α ~ N(0, σ²) trained by full-batch GD on ½‖y − u‖², β ∈ {±1} frozen, float64).  Three parts:

(1) ``spectral`` (paper Fig. 2 and Fig. 9 / Thm 4.6): x ~ U[0, 1]^d, y ~ N(0, 1), widths
    ``spectral_widths``; one step size per seed, η = lr_c/λ_max(H^∞), H^∞ the Monte-Carlo mean of
    H(0) over ``hinf_draws`` initialisations of width ``hinf_width``.  Measured loss vs the
    linearised prediction ½‖(I − ηH)^t r(0)‖² from H(0) (the finite-width kernel) and from H^∞,
    with r(0) = y − u(0) (the paper's Thm 4.6 writes y: it assumes u(0) ≈ 0); ‖α(T) − α(0)‖_∞.
(2) ``labels`` (paper Fig. 3): 1-D, n points x ~ U[0, 1]; labels structured
    y = sin²(0.7x/2)/sin²(x/2), random N(0, 1), and anti-structured (the bottom eigenvector of
    H^∞), each rescaled to ‖y‖² = n so only the direction differs (the brief asks |y| ≤ 1 for the
    structured one; equal norms make the three losses comparable).  ``symmetric_init`` (f ≡ 0 at
    init: a deviation) so that r(0) = y as in the theorem.  Measured: L(T)/L(0).
(3) ``threshold`` (paper Tables 1–2, Fig. 10): n ∈ ``threshold_ns``, d = ``threshold_d``, widths
    ``threshold_widths``, the KAN vs a two-layer ReLU net f(x) = Σ_r a_r relu(w_rᵀx)/√m (Du et al.
    2019: W ~ N(0, I) trained, a ∈ {±1} fixed, inputs normalised to ‖x‖ = 1); each with
    η = lr_c/λ_max(H(0)) and T = ``threshold_steps`` GD steps.  A width "works" when the loss is
    monotone and the kernel drift max_t ‖H(t) − H(0)‖₂ ≤ λ_min(H(0))/2 (checked every T/10
    steps; issue 20 -- before: ‖H(t) − H(0)‖_F/‖H(0)‖_F < 0.1, still reported); m*(n) = the
    smallest grid width that works for every seed.  Deviation: the brief's "converge to 1e-6"
    is not required (an ill-conditioned H needs far more steps than a CPU preset has);
    L(T)/L(0) is reported instead.
(4) ``layers`` (paper Figs. 11–12): the part-(2) setting (1-D, n = ``labels_n``, width
    ``labels_width``, random N(0, 1) labels rescaled to ‖y‖² = n, ordinary init) trained three
    ways by full-batch GD — first layer α only (the paper's model), second layer β only (β made a
    parameter, α frozen), both — each with η = lr_c/λ_max of its own tangent kernel (the Gram of
    per-sample gradients of the trained parameters).  Claims (fixed before running):
    second-layer-only ends with a higher L(T)/L(0) than first-layer-only in every seed, and
    first-layer-only ends within a factor 10 of full training (max(·, 1e-10) on both) in every
    seed.

σ = sigma_scale/√(d·g) (z_p = O(1) on the RBF grid), not the theorem's much smaller σ; the
theorem's η = O(λ₀/(n³d²g⁶)) is replaced by η = lr_c/λ_max (the brief's choice).

Verdicts (issue 18: every claim is decided by a named test of :mod:`optzoo.experiment.verdicts`;
seeds pair the trials of one comparison, since they share data and initialisation seeds).  Old
rule → new test:

1. Thm 4.2 (monotone, L(T)/L(0) ≤ (1 − ηλ₀/2)^T at every width and seed): unchanged in
   substance, now ``all_of`` two exact ``bound_holds`` (non-monotone runs = 0; ratio to the
   bound ≤ 1) — deterministic runs, so a count of violations is the right check.
2. Lemma 4.3 (α-drift shrinks with m): was "seed-mean drift strictly decreasing"; now
   ``superior`` of the drift at the smallest over the largest width, paired by seed, on log
   ratios, by at least the factor (m_max/m_min)^``min_drift_exponent``.
3. Fig. 2 (faster decay for larger m): was "mean steps to 1e-6 non-increasing in m" — a tie
   passed (lenient); now ``superior`` (fewer steps at the largest width than at the smallest,
   paired by seed) by at least ``min_steps`` GD steps.
4. Thm 4.6 (H^∞ prediction within 10 %): was "every seed ≤ 0.1"; now ``within(−∞, pred_tol)``
   on the per-seed max relative errors (CI of their mean).
5. Fig. 3 (label ordering in every seed): was "ordered in every seed" (ties are impossible for
   floats but differences of 1e-9 passed); now ``all_of`` two paired ``superior`` tests on log
   L(T)/L(0) with a minimal factor ``min_loss_factor``.
6. Tables 1–2 (KAN threshold grows no faster than ReLU's; grid and "works" rule changed by issue
   20, see below) — the defect named in issue 18: the
   old rule log2 m*(n_max)/m*(n_min) ≤ the ReLU's read 0 ≤ 0 on the ×4 width grid and passed by
   a tie.  Now the claim is the paper's (the KAN's threshold grows *more slowly*): each seed's
   m*(n) (smallest grid width that works for that seed) is only known up to its grid bracket
   (previous grid width, m*], so each seed's growth exponent k (m* ∝ n^k between n_min and
   n_max) is an interval.  Held if even the worst case (KAN's largest k against ReLU's smallest)
   gives a KAN exponent smaller by more than ``min_exponent_gap`` (paired ``superior``); not held
   if even the most favourable case fails that test; otherwise inconclusive ("the grid is too
   coarse to decide", recorded with :func:`~optzoo.experiment.verdicts.not_acting`).  The
   all-seed m*(n) of each model and n is a pick on the width grid, recorded with ``tune`` and
   ``guard``: an m*(n) at an end of the grid (or no width working) makes the claim inconclusive
   (grid edge).
7. Fig. 10 (KAN loss drops faster than ReLU's at m = compare_width for every n): was "mean
   KAN < mean ReLU"; now ``all_of`` over n of paired ``superior`` on log L(T)/L(0) (floored at
   ``FLOOR``) with the factor ``min_loss_factor``.
8. Figs. 11–12 (second-layer-only slower than first-layer-only in every seed): now paired
   ``superior`` on log L(T)/L(0) with the factor ``min_loss_factor`` (a 1 % difference passed
   before).
9. Figs. 11–12 (first-layer-only within a factor 10 of full training): now ``noninferior`` on
   log L(T)/L(0) (floored) with the fixed margin log ``close_factor``.

Verdict margins (preset fields, fixed before the converted verdicts were computed; the same for
every preset):

- ``min_loss_factor = 1.25``: a 25 % lower L(T)/L(0) (0.1 decade on the paper's log-scale loss
  plots) is the smallest difference that counts as "fits / drops faster" (claims 5, 7, 8).
- ``close_factor = 10``: "close to full training" = within one decade of L(T)/L(0) (claim 9; the
  old rule's factor).
- ``pred_tol = 0.1``: the brief's "within ~10 %" of the spectral prediction (claim 4).
- ``min_drift_exponent = 0.1``: the α-drift must fall at least like m^−0.1 (13 % per ×4 width);
  lazy training predicts m^−1/2 (claim 2).
- ``min_steps = 1``: a difference of less than one GD step is no difference (claim 3).
- ``min_exponent_gap = 0.5``: half a power of n (n^1.5 vs n²) is the smallest gap in growth
  rate worth calling "slower"; the paper's bounds differ by 4 (n² vs n⁶) (claim 6).

Issue 20 (setups that can show the effect; fixed before the new runs):

- Second-layer basis: with σ = 1/√(d·g) the hidden values are z ~ N(0, ≈0.5²) (measured:
  sd 0.46–0.48 for d = 1…100), but the second layer's centres were the first layer's grid on
  [0, 1]: about half of the z mass sat below the grid, on the tail of a single RBF.  The second
  layer now has its own grid, g centres on [−``hidden_range``, ``hidden_range``] = [−1.5, 1.5]
  (±3 sd), s = its spacing (:class:`~optzoo.kan.TwoLayerKAN` ``hidden_centers``).  Reading: the
  paper shares one basis between the layers; a shared *family* with a grid placed over each
  layer's input range is what FastKAN-style layers do (each layer has its own grid), and the
  theory only needs bounded basis derivatives.  Every part uses it.
- Thm 4.6 (claim 4): H^∞ from ``hinf_draws`` = 50 draws (was 10; full: 100) and the max
  relative error taken over the window where the measured loss is ≥ ``pred_floor`` = 1e-3 of
  L(0) (three decades; was: down to the 1e-10 round-off floor, where the smallest eigenvalues'
  Monte-Carlo error and the finite-width ε of the theorem dominate).  The old-window error is
  reported beside it.
- Claim 6: the width grid is ×√2 from 16 to 16 384 (21 widths; was ×4, 16…4096), and a width
  "works" by the theory's absolute kernel condition instead of a relative one: monotone loss and
  max_t ‖H(t) − H(0)‖₂ ≤ λ_min(H(0))/2 (then λ_min(H(t)) ≥ λ_min(H(0))/2 by Weyl, the
  condition under which the rate of Thm 4.2 / Du et al. 2019 is proved).  Reading of the
  issue's "absolute thresholds": the old rule, ‖H(t) − H(0)‖_F/‖H(0)‖_F < 0.1, scales with
  ‖H(0)‖ ∝ n and so hides the n-dependence that the width bounds are about (both m*(n) came
  out flat); the spectral rule against λ_min is the one the bounds m ∝ n²/λ₀² (KAN) and
  n⁶/λ₀⁴ (ReLU) are derived from.  The old rule's m*(n) stay in the tables.
- Claim 3 (steps to 1e-6·L(0)): a run that does not reach the target within the budget is
  stored at budget + 1, a lower bound; ``censored`` now makes a comparison resting on such runs
  inconclusive instead of reading a tie of censored values as "not held" (with the wider
  second-layer grid no width reaches 1e-6 in the quick preset's 100 steps).

Seeds: the summary reads
seeds from the trials (``--seed-start`` shifts them) and never assumes 0 … seeds − 1.

Read top to bottom: config and presets, one trial per part, summary with claims.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_ci, mean_ci
from optzoo.experiment.verdicts import (
    Tuned,
    all_of,
    bound_holds,
    by_seed,
    censored,
    downgrade,
    guard,
    noninferior,
    superior,
    tune,
    within,
)
from optzoo.kan import (
    TwoLayerKAN,
    gradient_gram,
    infinite_width_kernel,
    kan_tangent_kernel,
    kernel_spectrum,
    predicted_loss_curve,
)
from optzoo.report.figures import color, grid, line_panel, save

SLUG = "kan-convergence"
LABELS = ("structured", "random", "anti")
MODES = ("first", "second", "full")  # part (4): which layer(s) GD trains
DRIFT_MAX = 0.1  # old width-threshold rule: relative Frobenius kernel drift (reported)
SPEC_MAX = 0.5  # width-threshold rule: ‖H(t) − H(0)‖₂ ≤ λ_min(H(0))/2 (the theory's condition)
#: the width-threshold grid: ×√2 steps from 16 to 16 384 (issue 20: ×4 could not resolve m*(n))
SQRT2_WIDTHS = tuple(int(round(16 * 2 ** (k / 2))) for k in range(21))
FLOOR = 1e-10  # losses below FLOOR·L(0) are float64 round-off: excluded from errors/monotonicity


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class KanConvergenceConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per cell.
        g: RBF basis functions per edge.
        sigma_scale: α init std is sigma_scale/√(d·g).
        lr_c: η = lr_c/λ_max of the kernel named in each part.
        spectral_n / spectral_d / spectral_widths / spectral_steps: part (1).
        hidden_range: the second layer's RBF centres are g points evenly on
            [−hidden_range, hidden_range] (s = their spacing); z ~ N(0, ≈0.5²) at init.
        hinf_width / hinf_draws: Monte Carlo H^∞ (draws initialisations of this width).
        pred_floor: Thm 4.6's error window: steps whose measured loss is ≥ pred_floor·L(0).
        labels_n / labels_width / labels_steps: part (2).
        threshold_ns / threshold_d / threshold_widths / threshold_steps: part (3).
        compare_width: the equal width of the KAN-vs-ReLU speed comparison (in threshold_widths).
        min_loss_factor, close_factor, pred_tol, min_drift_exponent, min_steps,
            min_exponent_gap: verdict margins (see "Verdict margins" in the module docstring);
            they are not trial parameters.
    """

    seeds: int = 3
    g: int = 8
    sigma_scale: float = 1.0
    hidden_range: float = 1.5
    lr_c: float = 1.0
    spectral_n: int = 50
    spectral_d: int = 20
    spectral_widths: tuple[int, ...] = (250, 1000, 4000)
    spectral_steps: int = 200
    hinf_width: int = 2000
    hinf_draws: int = 50
    pred_floor: float = 1e-3
    labels_n: int = 50
    labels_width: int = 2000
    labels_steps: int = 200
    threshold_ns: tuple[int, ...] = (10, 20, 40)
    threshold_d: int = 10
    threshold_widths: tuple[int, ...] = SQRT2_WIDTHS
    threshold_steps: int = 100
    compare_width: int = 1024
    min_loss_factor: float = 1.25
    close_factor: float = 10.0
    pred_tol: float = 0.1
    min_drift_exponent: float = 0.1
    min_steps: float = 1.0
    min_exponent_gap: float = 0.5

    def validate(self) -> None:
        super().validate()
        if self.g < 2:
            raise ConfigError(f"g: expected >= 2, got {self.g}")
        if not self.hidden_range > 0:
            raise ConfigError(f"hidden_range: expected > 0, got {self.hidden_range}")
        if not 0 < self.pred_floor < 1:
            raise ConfigError(f"pred_floor: expected in (0, 1), got {self.pred_floor}")
        if not 0 < self.lr_c < 2:
            raise ConfigError(f"lr_c: expected in (0, 2), got {self.lr_c}")
        if self.compare_width not in self.threshold_widths:
            raise ConfigError(f"compare_width: expected one of threshold_widths, got "
                              f"{self.compare_width}")
        if min(self.spectral_steps, self.labels_steps, self.threshold_steps) < 10:
            raise ConfigError("*_steps: expected >= 10")
        for name in ("min_loss_factor", "close_factor"):
            if not getattr(self, name) > 1:
                raise ConfigError(f"{name}: expected a factor > 1, got {getattr(self, name)}")
        for name in ("pred_tol", "min_drift_exponent", "min_steps", "min_exponent_gap"):
            if not getattr(self, name) >= 0:
                raise ConfigError(f"{name}: expected >= 0, got {getattr(self, name)}")


PRESETS = {
    "smoke": KanConvergenceConfig(
        seeds=1, spectral_n=20, spectral_d=5, spectral_widths=(200, 800), spectral_steps=40,
        hinf_width=400, hinf_draws=3, labels_n=20, labels_width=400, labels_steps=40,
        threshold_ns=(8, 16), threshold_d=5, threshold_widths=(16, 128, 1024),
        compare_width=1024, threshold_steps=30),
    "quick": KanConvergenceConfig(seeds=3, spectral_steps=100, labels_width=1000,
                                  labels_steps=100),
    "full": KanConvergenceConfig(
        seeds=5, spectral_n=100, spectral_d=100, spectral_widths=(500, 2000, 8000),
        spectral_steps=300, hinf_width=4000, hinf_draws=100, labels_steps=1000,
        threshold_ns=(10, 20, 40, 80), threshold_steps=300),
}


def trials(cfg: KanConvergenceConfig) -> list[Trial]:
    common = {"g": cfg.g, "sigma_scale": cfg.sigma_scale, "lr_c": cfg.lr_c,
              "hidden_range": cfg.hidden_range}
    out = []
    for seed in range(cfg.seeds):
        for m in cfg.spectral_widths:
            out.append(Trial("kan", "spectral", seed, {
                **common, "n": cfg.spectral_n, "d": cfg.spectral_d, "width": m,
                "steps": cfg.spectral_steps, "hinf_width": cfg.hinf_width,
                "hinf_draws": cfg.hinf_draws, "pred_floor": cfg.pred_floor}))
        for label in LABELS:
            out.append(Trial("kan", f"labels-{label}", seed, {
                **common, "n": cfg.labels_n, "d": 1, "width": cfg.labels_width,
                "steps": cfg.labels_steps, "hinf_width": cfg.hinf_width,
                "hinf_draws": cfg.hinf_draws}))
        for mode in MODES:
            out.append(Trial("kan", f"layers-{mode}", seed, {
                **common, "n": cfg.labels_n, "d": 1, "width": cfg.labels_width,
                "steps": cfg.labels_steps}))
        for model in ("kan", "relu"):
            for n in cfg.threshold_ns:
                for m in cfg.threshold_widths:
                    out.append(Trial(model, "threshold", seed, {
                        **common, "n": n, "d": cfg.threshold_d, "width": m,
                        "steps": cfg.threshold_steps}))
    return out


# -- one trial ---------------------------------------------------------------------------------

def _checkpoints(steps: int) -> list[int]:
    return sorted({0, steps, *(int(round(t)) for t in np.geomspace(1, steps, 10))})


def _data(p: dict, seed: int, salt: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1000 * salt + seed)
    x = torch.rand(p["n"], p["d"], generator=gen, dtype=torch.float64)
    y = torch.randn(p["n"], generator=gen, dtype=torch.float64)
    return x, y


def _hidden_centers(p: dict) -> torch.Tensor:
    """Second-layer RBF centres: g points on [−hidden_range, hidden_range] (issue 20: a grid on
    [0, 1] left the lower half of z ~ N(0, 0.5²) on the tail of one RBF)."""
    r = float(p["hidden_range"])
    return torch.linspace(-r, r, p["g"], dtype=torch.float64)


def _kan(p: dict, seed: int, **kw) -> TwoLayerKAN:
    return TwoLayerKAN(p["d"], p["width"], p["g"], sigma_scale=p["sigma_scale"],
                       hidden_centers=_hidden_centers(p),
                       generator=torch.Generator().manual_seed(7919 * seed + p["width"]), **kw)


def _hinf(p: dict, x: torch.Tensor, seed: int) -> torch.Tensor:
    return infinite_width_kernel(x, d=p["d"], g=p["g"], width=p["hinf_width"],
                                 draws=p["hinf_draws"], seed=50_000 + seed,
                                 sigma_scale=p["sigma_scale"],
                                 hidden_centers=_hidden_centers(p))


def _gd(model: torch.nn.Module, param: torch.Tensor | list[torch.Tensor], x, y, lr: float,
        steps: int, kernel=None) -> tuple[list[float], tuple[float, float]]:
    """Full-batch GD on ½‖y − f(x)‖²; returns the loss at every step and the max kernel drift
    (checked every steps/10 steps when ``kernel`` is given) in two units: relative,
    ‖H(t) − H(0)‖_F/‖H(0)‖_F, and spectral, ‖H(t) − H(0)‖₂/λ_min(H(0)) (the theory's unit)."""
    losses, drift, spec = [], 0.0, 0.0
    k0 = kernel() if kernel else None
    lam0 = float(torch.linalg.eigvalsh(k0)[0]) if kernel else 1.0
    every = max(1, steps // 10)
    for t in range(steps + 1):
        loss = 0.5 * ((y - model(x)) ** 2).sum()
        losses.append(loss.item())
        if kernel and (t % every == 0 or t == steps):
            dk = kernel() - k0
            drift = max(drift, float(dk.norm() / k0.norm()))
            spec = max(spec, float(torch.linalg.matrix_norm(dk, ord=2)) / lam0
                       if lam0 > 0 else math.inf)
        if t == steps:
            break
        params = param if isinstance(param, list) else [param]
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for q, grad in zip(params, grads, strict=True):
                q -= lr * grad
    return losses, (drift, spec)


def _monotone(losses: np.ndarray) -> bool:
    """L(t+1) ≤ L(t) at every step whose loss is still above the round-off floor."""
    live = losses[:-1] > FLOOR * losses[0]
    return bool(np.all((np.diff(losses) <= 1e-12 * losses[:-1])[live]))


def _run_spectral(trial: Trial) -> dict:
    p = dict(trial.params)
    x, y = _data(p, trial.seed, salt=1)
    hinf = _hinf(p, x, trial.seed)
    lr = p["lr_c"] / float(kernel_spectrum(hinf)[0][0])
    model = _kan(p, trial.seed)
    h0 = kan_tangent_kernel(model, x)
    with torch.no_grad():
        r0 = y - model(x)
    alpha0 = model.alpha.detach().clone()
    losses, _ = _gd(model, model.alpha, x, y, lr, p["steps"])
    pred0 = predicted_loss_curve(h0, r0, lr, p["steps"]).numpy()
    predinf = predicted_loss_curve(hinf, r0, lr, p["steps"]).numpy()
    meas = np.asarray(losses)
    ev0, evinf = kernel_spectrum(h0)[0], kernel_spectrum(hinf)[0]
    above = meas > FLOOR * meas[0]
    window = meas >= p["pred_floor"] * meas[0]  # Thm 4.6's window (issue 20): 3 decades
    out = {
        "lr": lr, "lam_min_h0": float(ev0[-1]), "lam_max_h0": float(ev0[0]),
        "lam_min_hinf": float(evinf[-1]), "lam_max_hinf": float(evinf[0]),
        "loss_ratio": float(meas[-1] / meas[0]),
        "err_h0": float(np.max((np.abs(pred0 - meas) / meas)[window])),
        "err_hinf": float(np.max((np.abs(predinf - meas) / meas)[window])),
        "err_hinf_to_floor": float(np.max((np.abs(predinf - meas) / meas)[above])),
        "steps_in_window": int(window.sum()),
        "steps_above_floor": int(above.sum()),
        "alpha_drift_inf": float((model.alpha.detach() - alpha0).abs().max()),
        "monotone": _monotone(meas),
        # Thm 4.2's per-step contraction, compounded: L(T)/L(0) ≤ (1 − ηλ₀/2)^T, λ₀ = λ_min(H^∞)
        "thm42_bound": float((1 - lr * float(evinf[-1]) / 2) ** p["steps"]),
        "steps_to_1e-6": int(np.argmax(meas <= 1e-6 * meas[0])) if meas[-1] <= 1e-6 * meas[0]
        else p["steps"] + 1,
    }
    for t in _checkpoints(p["steps"]):
        out[f"loss@{t}"], out[f"pred_h0@{t}"] = float(meas[t]), float(pred0[t])
        out[f"pred_hinf@{t}"] = float(predinf[t])
    return out


def _run_labels(trial: Trial) -> dict:
    p = dict(trial.params)
    x, y_rand = _data(p, trial.seed, salt=2)
    hinf = _hinf(p, x, trial.seed)
    evals, evecs = kernel_spectrum(hinf)
    label = trial.problem.removeprefix("labels-")
    xs = x[:, 0]
    if label == "structured":
        y = torch.sin(0.7 * xs / 2) ** 2 / torch.sin(xs / 2) ** 2
    elif label == "random":
        y = y_rand
    else:
        y = evecs[:, -1].clone()
    y = y * math.sqrt(p["n"]) / y.norm()
    lr = p["lr_c"] / float(evals[0])
    model = _kan(p, trial.seed, symmetric_init=True)
    losses, _ = _gd(model, model.alpha, x, y, lr, p["steps"])
    pred = predicted_loss_curve(hinf, y, lr, p["steps"]).numpy()
    proj = (evecs.T @ y) ** 2 / p["n"]
    top = max(1, p["n"] // 10)
    out = {"loss_ratio": losses[-1] / losses[0], "pred_ratio": float(pred[-1] / pred[0]),
           "top_energy": float(proj[:top].sum()), "lam_min_hinf": float(evals[-1])}
    for t in _checkpoints(p["steps"]):
        out[f"loss@{t}"] = losses[t] / losses[0]
    return out


def _run_threshold(trial: Trial) -> dict:
    p = dict(trial.params)
    x, y = _data(p, trial.seed, salt=3)
    m = p["width"]
    if trial.method == "kan":
        model = _kan(p, trial.seed)
        param = model.alpha

        def kernel():
            return kan_tangent_kernel(model, x)
    else:
        x = x / x.norm(dim=1, keepdim=True)
        gen = torch.Generator().manual_seed(7919 * trial.seed + m)
        w = torch.randn(m, p["d"], generator=gen, dtype=torch.float64).requires_grad_(True)
        a = (torch.randint(0, 2, (m,), generator=gen) * 2 - 1).to(torch.float64)
        param = w

        def model(xx):
            return torch.relu(xx @ w.T) @ a / math.sqrt(m)

        def kernel():
            with torch.no_grad():
                act = (x @ w.T > 0).to(torch.float64)
                return (act @ act.T) / m * (x @ x.T)
    lr = p["lr_c"] / float(torch.linalg.eigvalsh(kernel()).max())
    losses, (drift, spec) = _gd(model, param, x, y, lr, p["steps"], kernel)
    meas = np.asarray(losses)
    monotone = _monotone(meas)
    # "works" (issue 20): the theory's absolute kernel condition -- H(t) stays within
    # λ_min(H(0))/2 of H(0) in spectral norm, so λ_min(H(t)) ≥ λ_min(H(0))/2 (Weyl) and the
    # rate of Thm 4.2 / Du et al. 2019 applies; the old relative-Frobenius rule is kept beside
    return {"loss_ratio": float(meas[-1] / meas[0]), "drift": drift, "drift_spec": spec,
            "monotone": monotone, "works": bool(monotone and spec <= SPEC_MAX),
            "works_rel": bool(monotone and drift < DRIFT_MAX)}


def _run_layers(trial: Trial) -> dict:
    p = dict(trial.params)
    x, y = _data(p, trial.seed, salt=4)
    y = y * math.sqrt(p["n"]) / y.norm()
    model = _kan(p, trial.seed)
    mode = trial.problem.removeprefix("layers-")
    beta = model.beta
    del model._buffers["beta"]  # β becomes a parameter so GD (and the Gram) can see it
    model.beta = torch.nn.Parameter(beta, requires_grad=mode in ("second", "full"))
    model.alpha.requires_grad_(mode in ("first", "full"))
    params = [q for q in (model.alpha, model.beta) if q.requires_grad]
    lr = p["lr_c"] / float(torch.linalg.eigvalsh(gradient_gram(model, x)).max())
    losses, _ = _gd(model, params, x, y, lr, p["steps"])
    meas = np.asarray(losses)
    out = {"loss_ratio": float(meas[-1] / meas[0]), "lr": lr, "monotone": _monotone(meas)}
    for t in _checkpoints(p["steps"]):
        out[f"loss@{t}"] = float(meas[t] / meas[0])
    return out


def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    if trial.problem == "spectral":
        return _run_spectral(trial)
    if trial.problem.startswith("labels-"):
        return _run_labels(trial)
    if trial.problem.startswith("layers-"):
        return _run_layers(trial)
    return _run_threshold(trial)


# -- summary -------------------------------------------------------------------------------------

def _cell(results: list[Result], **match) -> list[Result]:
    return [r for r in results
            if all((r.trial.params.get(k) if k not in ("method", "problem") else
                    getattr(r.trial, k)) == v for k, v in match.items())]


def _ci(values) -> str:
    return fmt_ci(*mean_ci(list(values)), digits=3)


def _threshold(results: list[Result], method: str, n: int, widths: tuple[int, ...],
               rule: str = "works") -> float:
    """m*(n): smallest grid width that works for every seed (2·max grid when none does)."""
    for m in sorted(widths):
        rs = _cell(results, problem="threshold", method=method, n=n, width=m)
        if rs and all(r.metrics[rule] for r in rs):
            return float(m)
    return 2.0 * max(widths)


def summarize(results: list[Result], cfg: KanConvergenceConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    widths = sorted(cfg.spectral_widths)
    spec = {m: _cell(results, problem="spectral", width=m) for m in widths}
    spec_rows = [[m, _ci(r.metrics["lam_min_h0"] for r in rs),
                  _ci(r.metrics["lam_min_hinf"] for r in rs),
                  _ci(r.metrics["err_h0"] for r in rs), _ci(r.metrics["err_hinf"] for r in rs),
                  _ci(r.metrics["steps_to_1e-6"] for r in rs),
                  _ci(r.metrics["alpha_drift_inf"] for r in rs),
                  f"{sum(r.metrics['monotone'] for r in rs)}/{len(rs)}", len(rs)]
                 for m, rs in spec.items()]
    t_spec = Table(
        title=f"(1) n = {cfg.spectral_n}, d = {cfg.spectral_d}, g = {cfg.g}, T = "
              f"{cfg.spectral_steps}, η = {cfg.lr_c}/λ_max(H^∞): mean ± 95% CI over seeds; "
              f"max relative error of the linearised loss prediction (loss above {FLOOR:g}·L(0))",
        columns=["m", "λ_min H(0)", "λ_min H^∞", "err pred H(0)", "err pred H^∞",
                 "steps to 1e-6", "‖α(T)−α(0)‖_∞", "monotone", "seeds"], rows=spec_rows)

    lab = {lb: _cell(results, problem=f"labels-{lb}") for lb in LABELS}
    t_lab = Table(
        title=f"(2) 1-D label structure, n = {cfg.labels_n}, m = {cfg.labels_width}, T = "
              f"{cfg.labels_steps}: L(T)/L(0) measured and predicted from H^∞; energy of y on "
              "the top 10% eigenvectors of H^∞",
        columns=["labels", "L(T)/L(0)", "predicted (H^∞)", "top-10% energy", "seeds"],
        rows=[[lb, _ci(r.metrics["loss_ratio"] for r in rs),
               _ci(r.metrics["pred_ratio"] for r in rs),
               _ci(r.metrics["top_energy"] for r in rs), len(rs)] for lb, rs in lab.items()])

    ns = list(cfg.threshold_ns)
    mstar = {meth: [_threshold(results, meth, n, cfg.threshold_widths) for n in ns]
             for meth in ("kan", "relu")}
    th_rows = []
    for meth in ("kan", "relu"):
        for n in ns:
            for m in sorted(cfg.threshold_widths):
                rs = _cell(results, problem="threshold", method=meth, n=n, width=m)
                th_rows.append([meth, n, m, _ci(r.metrics["drift_spec"] for r in rs),
                                _ci(r.metrics["drift"] for r in rs),
                                f"{sum(r.metrics['monotone'] for r in rs)}/{len(rs)}",
                                _ci(r.metrics["loss_ratio"] for r in rs),
                                f"{sum(r.metrics['works'] for r in rs)}/{len(rs)}",
                                f"{sum(r.metrics['works_rel'] for r in rs)}/{len(rs)}"])
    t_th = Table(
        title=f"(3) width threshold, d = {cfg.threshold_d}, T = {cfg.threshold_steps}, "
              f"η = {cfg.lr_c}/λ_max(H(0)): max kernel drift ‖H(t) − H(0)‖₂/λ_min(H(0)) and "
              f"‖H(t) − H(0)‖_F/‖H(0)‖_F, monotone loss, L(T)/L(0); 'works' = monotone and "
              f"spectral drift ≤ {SPEC_MAX} (the claim's rule); 'works (rel)' = monotone and "
              f"relative drift < {DRIFT_MAX} (the old rule)",
        columns=["model", "n", "m", "drift ‖·‖₂/λ_min", "drift ‖·‖_F rel", "monotone",
                 "L(T)/L(0)", "works", "works (rel)"],
        rows=th_rows)
    mstar_rel = {meth: [_threshold(results, meth, n, cfg.threshold_widths, "works_rel")
                        for n in ns] for meth in ("kan", "relu")}
    t_mstar = Table(title="(3) empirical m*(n), smallest grid width that works for every seed "
                          "(2·max grid = none works); 'rel' = the old relative-drift rule",
                    columns=["model", *[f"n={n}" for n in ns]],
                    rows=[[meth, *[f"{v:g}" for v in mstar[meth]]] for meth in mstar]
                    + [[f"{meth} (rel)", *[f"{v:g}" for v in mstar_rel[meth]]]
                       for meth in mstar_rel])

    lay = {md: _cell(results, problem=f"layers-{md}") for md in MODES}
    t_lay = Table(
        title=f"(4) which layer is trained (1-D, n = {cfg.labels_n}, m = {cfg.labels_width}, "
              f"random labels, T = {cfg.labels_steps}, η = {cfg.lr_c}/λ_max of each mode's "
              "tangent kernel)",
        columns=["trained", "L(T)/L(0)", "η", "monotone", "seeds"],
        rows=[[md, _ci(r.metrics["loss_ratio"] for r in rs), _ci(r.metrics["lr"] for r in rs),
               f"{sum(r.metrics['monotone'] for r in rs)}/{len(rs)}", len(rs)]
              for md, rs in lay.items() if rs])
    figures = [_plot(results, cfg, ns, mstar, outdir / "kan_convergence.png")]
    claims = _claims(results, cfg, spec, lab, ns, mstar)
    tables_extra = []
    if all(lay.values()):
        claims += _layer_claims(lay, cfg)
        tables_extra.append(t_lay)
    notes = [
        "Theory paper with small experiments; no official code.  H^∞ is a Monte-Carlo mean over "
        f"{cfg.hinf_draws} initialisations of width {cfg.hinf_width}; predictions use "
        "r(0) = y − u(0) (Thm 4.6 writes y, assuming u(0) ≈ 0).",
        "σ = sigma_scale/√(d·g) and η = lr_c/λ_max replace the theorem's much smaller σ and η "
        "(which would make training take ~n³d²g⁶/λ₀² steps).",
        "Label part uses a symmetric (doubled) init so that u(0) = 0; all labels rescaled to "
        "‖y‖² = n.  Width threshold: 'converges to 1e-6' is not required (see docstring).",
        "The O(n²) vs O(n⁶) widths are sufficient bounds; the measured m*(n) are far smaller "
        "for both models and only their growth is compared.",
    ]
    notes.append("Part (4): β is made trainable only for the second-layer-only and full runs; "
                 "each mode's η comes from its own tangent kernel, so per-step speed is compared "
                 "at each mode's largest stable step (the paper's Figs. 11–12 step sizes were "
                 "not retrieved).")
    return Summary(tables=[t_spec, t_lab, t_th, t_mstar, *tables_extra], figures=figures,
                   claims=claims, notes=notes)


def _floored(results: list[Result]) -> dict[int, float]:
    """``{seed: max(L(T)/L(0), FLOOR)}``: losses below FLOOR·L(0) are float64 round-off."""
    return {s: max(v, FLOOR) for s, v in by_seed(results, "loss_ratio").items()}


def _layer_claims(lay: dict[str, list[Result]], cfg: KanConvergenceConfig) -> list[Claim]:
    first, second, full = (_floored(lay[md]) for md in MODES)
    ev = ", ".join(f"{md}: {_ci(r.metrics['loss_ratio'] for r in rs)}" for md, rs in lay.items())
    slower = superior(second, first, min_effect=math.log(cfg.min_loss_factor),
                      direction="greater", log_ratio=True)
    close = noninferior(first, full, margin=math.log(cfg.close_factor), direction="less",
                        log_ratio=True)
    return [
        Claim(text="Figs. 11–12: training only the second layer is much slower than training only "
                   f"the first: higher L(T)/L(0), by a factor > {cfg.min_loss_factor:g} "
                   "(paired by seed, log ratio)",
              evidence=f"log(second/first) {slower.describe()}; {ev}", verdict=slower),
        Claim(text=f"Figs. 11–12: first-layer-only training is close to full training: L(T)/L(0) "
                   f"no more than a factor {cfg.close_factor:g} above full training's (floored "
                   f"at {FLOOR:g}; paired by seed, log ratio)",
              evidence=f"log(full/first) {close.describe()}; {ev}", verdict=close),
    ]


def _bracket(results: list[Result], method: str, n: int,
             widths: list[int]) -> dict[int, tuple[float, float]]:
    """Per seed, the grid bracket (lo, hi] of its width threshold: hi = the smallest grid width
    that works for this seed, lo = the grid width below it (1 below the grid's first; a seed
    with no working width gets (max, 2·max], which the grid-edge guard then flags)."""
    works: dict[int, dict[int, bool]] = {}
    for r in _cell(results, problem="threshold", method=method, n=n):
        works.setdefault(r.trial.seed, {})[int(r.trial.params["width"])] = bool(
            r.metrics["works"])
    out = {}
    for seed, w in works.items():
        ok = [m for m in widths if w.get(m)]
        if ok:
            i = widths.index(ok[0])
            out[seed] = (float(widths[i - 1]) if i else 1.0, float(ok[0]))
        else:
            out[seed] = (float(widths[-1]), 2.0 * widths[-1])
    return out


def _tune_threshold(results: list[Result], method: str, n: int, widths: list[int]) -> Tuned:
    """m*(n) as a pick on the width grid: a width scores its value if it works for every seed,
    ∞ otherwise, so the best is the smallest width that works for every seed."""
    scores = {}
    for m in widths:
        rs = _cell(results, problem="threshold", method=method, n=n, width=m)
        scores[m] = [float(m) if r.metrics["works"] else math.inf for r in rs] or [math.inf]
    return tune(f"{method} m*(n={n})", scores, minimize=True)


def _growth_claim(results, cfg, ns, mstar) -> Claim:
    widths = sorted(cfg.threshold_widths)
    n0, n1 = min(ns), max(ns)
    span = math.log(n1 / n0)
    k = {}  # (method, "lo"/"hi") -> {seed: exponent bound}
    for meth in ("kan", "relu"):
        b0, b1 = (_bracket(results, meth, n, widths) for n in (n0, n1))
        seeds = sorted(set(b0) & set(b1))
        k[meth, "lo"] = {s: math.log(b1[s][0] / b0[s][1]) / span for s in seeds}
        k[meth, "hi"] = {s: math.log(b1[s][1] / b0[s][0]) / span for s in seeds}
    gap = cfg.min_exponent_gap
    worst = superior(k["kan", "hi"], k["relu", "lo"], min_effect=gap, direction="less")
    best = superior(k["kan", "lo"], k["relu", "hi"], min_effect=gap, direction="less")
    if worst.held:
        verdict = worst
    elif best.verdict == "not held":
        verdict = best  # even the most favourable reading of the brackets fails
    elif worst.verdict == "inconclusive":
        verdict = worst
    else:
        verdict = downgrade(worst, f"the ×{widths[1] / widths[0]:g} width grid is too coarse "
                                    f"to decide: the worst case fails but the most favourable "
                                    f"reading of the brackets does not ({best.describe()})")
    tuned = [_tune_threshold(results, meth, n, widths) for meth in ("kan", "relu")
             for n in ns]
    verdict = guard(verdict, *tuned)

    def fmt(meth: str) -> str:
        return "; ".join(f"[{k[meth, 'lo'][s]:.2g}, {k[meth, 'hi'][s]:.2g}]"
                         for s in sorted(k[meth, "lo"]))

    return Claim(
        text=f"Tables 1–2: the empirical KAN width threshold m*(n) grows more slowly than the "
             f"ReLU net's over n = {n0}..{n1}: its exponent k (m* ∝ n^k, m* = the smallest "
             f"width whose kernel stays within λ_min(H(0))/2 of H(0) in spectral norm with a "
             f"monotone loss) is smaller by more than {gap:g}, even in the worst case of the "
             f"×√2 width grid's brackets",
        evidence=f"KAN m* = {mstar['kan']}, ReLU m* = {mstar['relu']}; per-seed exponent "
                 f"intervals KAN {fmt('kan')}, ReLU {fmt('relu')}; worst case (ReLU's lowest − "
                 f"KAN's highest) {worst.describe()}; most favourable {best.describe()}",
        verdict=verdict)


def _censored(rs: list[Result], steps: int) -> bool:
    """Some run never reached 1e-6·L(0) (its steps_to_1e-6 is the budget + 1)."""
    return any(r.metrics["steps_to_1e-6"] > steps for r in rs)


def _speed_claim(spec: dict[int, list[Result]], cfg: KanConvergenceConfig) -> Claim:
    """Fig. 2: fewer GD steps to 1e-6·L(0) at the largest width than at the smallest."""
    widths = sorted(spec)
    lo_m, hi_m = widths[0], widths[-1]
    steps = [mean_ci([r.metrics["steps_to_1e-6"] for r in spec[m]])[0] for m in widths]
    v = superior(by_seed(spec[hi_m], "steps_to_1e-6"), by_seed(spec[lo_m], "steps_to_1e-6"),
                 min_effect=cfg.min_steps, direction="less")
    # a run that never reaches 1e-6 is stored at steps + 1: a lower bound of its cost, so a
    # censored baseline cannot support "not held" (nor a censored method "held")
    v = censored(v, a_censored=_censored(spec[hi_m], cfg.spectral_steps),
                 b_censored=_censored(spec[lo_m], cfg.spectral_steps),
                 why=f"a run did not reach 1e-6·L(0) within {cfg.spectral_steps} steps")
    return Claim(
        text=f"Fig. 2: the training loss decays faster for larger m: fewer GD steps to L ≤ "
             f"1e-6·L(0) at m = {hi_m} than at m = {lo_m} (same η for all widths, paired by "
             f"seed), by more than {cfg.min_steps:g} step",
        evidence=", ".join(f"m={m}: {s:.3g}" for m, s in zip(widths, steps, strict=True))
        + f"; steps saved (m={lo_m} − m={hi_m}): {v.describe()}",
        verdict=v)


def _claims(results, cfg, spec, lab, ns, mstar) -> list[Claim]:
    claims = []
    allspec = [r for rs in spec.values() for r in rs]
    mono = bound_holds([0.0 if r.metrics["monotone"] else 1.0 for r in allspec], 0.0)
    ratio = bound_holds([max(r.metrics["loss_ratio"], 0.0) / r.metrics["thm42_bound"]
                         for r in allspec], 1.0)
    claims.append(Claim(
        text="Thm 4.2: GD on the first layer converges linearly: the loss is monotone and "
             "L(T)/L(0) ≤ (1 − ηλ₀/2)^T with λ₀ = λ_min(H^∞), at every width and seed",
        evidence=f"non-monotone runs: {mono.describe()}; L(T)/L(0) / bound: {ratio.describe()};"
                 f" L(T)/L(0) = {_ci(r.metrics['loss_ratio'] for r in allspec)} vs bound "
                 f"{_ci(r.metrics['thm42_bound'] for r in allspec)}",
        verdict=all_of({"monotone": mono, "below the bound": ratio})))

    widths = sorted(spec)
    lo_m, hi_m = widths[0], widths[-1]
    drift = [mean_ci([r.metrics["alpha_drift_inf"] for r in spec[m]])[0] for m in widths]
    factor = (hi_m / lo_m) ** cfg.min_drift_exponent
    v = superior(by_seed(spec[lo_m], "alpha_drift_inf"), by_seed(spec[hi_m], "alpha_drift_inf"),
                 min_effect=math.log(factor), direction="greater", log_ratio=True)
    claims.append(Claim(
        text=f"Lemma 4.3 / Fig. 2: ‖α(T) − α(0)‖_∞ shrinks as the width m grows (lazy training):"
             f" smaller at m = {hi_m} than at m = {lo_m} by more than the factor "
             f"(m ratio)^{cfg.min_drift_exponent:g} = {factor:.3g} (paired by seed)",
        evidence=", ".join(f"m={m}: {d:.3g}" for m, d in zip(widths, drift, strict=True))
        + f"; log(drift m={lo_m} / m={hi_m}) {v.describe()}",
        verdict=v))

    claims.append(_speed_claim(spec, cfg))

    big = spec[hi_m]
    err = [r.metrics["err_hinf"] for r in big]
    v = within(err, -math.inf, cfg.pred_tol)
    claims.append(Claim(
        text=f"Thm 4.6: at the largest width (m = {hi_m}) the measured loss follows the "
             "H^∞-spectrum prediction Σ(1 − ηλ_i)^{2t}(v_iᵀr(0))²/2 within "
             f"{cfg.pred_tol * 100:g}% at every step while the loss is above "
             f"{cfg.pred_floor:g}·L(0) (H^∞ from {cfg.hinf_draws} draws of width "
             f"{cfg.hinf_width}): the seeds' max relative error is at most {cfg.pred_tol:g}",
        evidence=f"max relative error {_ci(err)} (per seed: "
                 f"{', '.join(f'{e:.3g}' for e in err)}) over "
                 f"{_ci(r.metrics['steps_in_window'] for r in big)} steps; {v.describe()}; "
                 f"with H(0) instead: {_ci(r.metrics['err_h0'] for r in big)}; over the whole "
                 f"run down to {FLOOR:g}·L(0) (the old window): "
                 f"{_ci(r.metrics['err_hinf_to_floor'] for r in big)}",
        verdict=v))

    ls = {lb: _floored(rs) for lb, rs in lab.items()}
    me = math.log(cfg.min_loss_factor)
    cells = {"structured < random": superior(ls["structured"], ls["random"], min_effect=me,
                                             direction="less", log_ratio=True),
             "random < anti": superior(ls["random"], ls["anti"], min_effect=me,
                                       direction="less", log_ratio=True)}
    claims.append(Claim(
        text="Fig. 3: structured labels fit fastest, random in between, anti-structured (bottom "
             "eigenvector of H^∞) slowest: L(T)/L(0) ordered, each step by a factor > "
             f"{cfg.min_loss_factor:g} (paired by seed, log ratios)",
        evidence=", ".join(f"{lb}: {_ci(r.metrics['loss_ratio'] for r in rs)}"
                           for lb, rs in lab.items())
        + "; " + "; ".join(f"{c}: {cv.describe()}" for c, cv in cells.items()),
        verdict=all_of(cells)))

    claims.append(_growth_claim(results, cfg, ns, mstar))

    cw = cfg.compare_width
    pairs, cells = [], {}
    for n in ns:
        kan = _floored(_cell(results, problem="threshold", method="kan", n=n, width=cw))
        relu = _floored(_cell(results, problem="threshold", method="relu", n=n, width=cw))
        cells[f"n={n}"] = superior(kan, relu, min_effect=me, direction="less", log_ratio=True)
        pairs.append((n, float(np.mean(list(kan.values()))), float(np.mean(list(relu.values())))))
    claims.append(Claim(
        text=f"Fig. 10: at equal width m = {cw} the KAN's loss drops faster than the ReLU net's "
             f"(lower L(T)/L(0) after T = {cfg.threshold_steps} steps, each with η = "
             f"{cfg.lr_c}/λ_max(H(0)), by a factor > {cfg.min_loss_factor:g}; floored at "
             f"{FLOOR:g}, paired by seed) for every n",
        evidence=", ".join(f"n={n}: KAN {k:.3g} vs ReLU {u:.3g} (floored means)"
                           for n, k, u in pairs)
        + "; " + "; ".join(f"{c}: {cv.describe()}" for c, cv in cells.items()),
        verdict=all_of(cells)))
    return claims


LABEL_NAMES = {"structured": "structured labels", "random": "random labels",
               "anti": "anti-structured labels"}
MODEL_NAMES = {"kan": "KAN", "relu": "ReLU net"}


def _plot(results, cfg, ns, mstar, path: Path) -> Figure:
    fig, ax = grid(3, panel=(5.2, 4.2))
    ts = _checkpoints(cfg.spectral_steps)
    series, colors = {}, {}
    for i, m in enumerate(sorted(cfg.spectral_widths)):
        rs = _cell(results, problem="spectral", width=m)
        if not rs:
            continue
        for key, name in (("loss", f"measured, m = {m}"),
                          ("pred_hinf", f"H^∞ prediction, m = {m}")):
            series[name] = {t: [float(r.metrics[f"{key}@{t}"]) for r in rs] for t in ts}
            colors[name] = color(i)
    line_panel(ax[0], series, colors=colors, xlabel="GD step t", ylabel="½‖y − u(t)‖²",
               title="(1) measured vs KAN-TK prediction", xlog=False, ylog=True)
    for line in ax[0].get_lines():  # predictions dashed, in the colour of their width
        if "prediction" in str(line.get_label()):
            line.set_linestyle("--")
    if series:
        ax[0].legend(fontsize=7)
    tl = _checkpoints(cfg.labels_steps)
    line_panel(ax[1], {LABEL_NAMES[lb]: {t: [float(r.metrics[f"loss@{t}"]) for r in rs]
                                         for t in tl}
                       for lb in LABELS for rs in [_cell(results, problem=f"labels-{lb}")] if rs},
               xlabel="GD step t", ylabel="L(t)/L(0)", title="(2) label structure (1-D)",
               xlog=False, ylog=True)
    seeds = sorted({r.trial.seed for r in results if r.trial.problem == "threshold"})
    thr = {}
    for meth, v in mstar.items():
        thr[f"{MODEL_NAMES[meth]}: m*(n), all seeds"] = {n: [x] for n, x in zip(ns, v,
                                                                              strict=True)}
        thr[f"{MODEL_NAMES[meth]}: per-seed m*(n)"] = {
            n: [_threshold([r for r in results if r.trial.seed == s], meth, n,
                           cfg.threshold_widths) for s in seeds] for n in ns}
    colors = {k: color(0 if k.startswith("KAN") else 1) for k in thr}
    line_panel(ax[2], thr, colors=colors, xlabel="n", ylabel="empirical width threshold m*(n)",
               title="(3) width threshold", xlog=True, ylog=True,
               reference={f"none works (2 × {max(cfg.threshold_widths)})":
                          ([min(ns), max(ns)], [2 * max(cfg.threshold_widths)] * 2)})
    for line in ax[2].get_lines():
        if "per-seed" in str(line.get_label()):
            line.set_linestyle(":")
    ax[2].legend(fontsize=7)
    ax[2].set_xticks(ns, [str(n) for n in ns])
    ax[2].set_xticks([], minor=True)
    return save(fig, path, "(1) measured loss (solid) vs the H^∞-spectrum prediction (dashed) "
                "per width; (2) normalised loss by label structure; (3) empirical width "
                "thresholds m*(n): solid = the smallest grid width that works for every seed "
                "(one number per n, the claims' m*), dotted = per-seed thresholds; a value of "
                f"2 × {max(cfg.threshold_widths)} means no grid width works.  Mean ± 95 % CI "
                "over seeds (bands).")


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Two-layer RBF-KAN with only the first layer trained (Eshtehardian et al., ICLR 2026): "
        "measured GD loss vs the KAN tangent kernel's spectral prediction across widths, the "
        "label-structure experiment (structured / random / anti-structured labels), and "
        "empirical width thresholds m*(n) of the KAN vs a two-layer ReLU net (Du et al. 2019)."
        " Trials are CPU-sized (single-threaded) and run on the CPU whatever --device says."),
)
