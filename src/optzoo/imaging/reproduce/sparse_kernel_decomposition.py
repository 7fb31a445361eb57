"""Reproduction ``sparse-kernel-decomposition``: Wu, Cao & Huo, "DISK: Differentiable Sparse Kernel
Complex for Efficient Spatially-Variant Convolution" (ICLR 2026, OpenReview ``bbuxDoRD2D``,
arXiv 2512.04556).  No official code.

Small-scale version of the paper's §5 on CPU, following the brief:

1. **Kernel fitting.**  Analytic targets (:mod:`optzoo.imaging.problems`: Gaussians σ = 5…11,
   disc, ring, square, hexagon, heart, four-pointed star, coma PSF, linear motion) at a tap
   budget ``N×L`` (12×4 = 48 taps per pixel).  Methods: DISK with the paper's SS+IR
   initialisation (``disk_ss``), the init ablation (``disk_ir``, ``disk_random``; paper Fig. 6),
   and the PST-style sparse search (``sa_ss``: parallel tempering + annealing, 10 chains × 100
   proposals = DISK's 1000 loss evaluations, same SS start, same loss).  Both are renormalised to
   the target's mass after the search (``keep_mass``; issue 23: the raw fits lost 2–5 % of the
   mass, which cost 10–15 dB of image PSNR).  Each fit is scored in the kernel domain
   (relative L2 error, PSNR against the peak) and in the image domain (PSNR of the filtered
   photos ``camera``, ``astronaut``, ``chelsea``, ``coffee`` against dense FFT convolution,
   reflect borders everywhere).
   ``disk_ir`` is deterministic (IR has no randomness): it runs once (seed 0) and is paired with
   every seed.  Low rank (SVD, ranks 1…``max_rank``) is deterministic too: one trial per target.
2. **Spatially varying defocus.**  ``motorcycle_left`` with a defocus radius map from its
   disparity (focal plane at a seed-drawn disparity quantile in [0.3, 0.7]); reference: a blend of
   dense disc blurs at ``sv_radii`` radii (per pixel linear between the two nearest radii).  DISK
   complexes fitted at every one of those radii ("fitted per radius") vs complexes fitted only at
   every ``sv_anchor_every``-th radius and interpolated in filter space (paper §4.3).  Two ways of
   fitting the bases: ``independent`` (the paper's: each from the IR init) and ``warm`` (each
   warm-started from the previous radius, offsets scaled; the brief's recommendation).
3. **2-D interpolation (rotational bokeh; radial blur in full).**  A photo whose per-pixel
   kernel is the four-pointed star turned by the pixel's polar angle (mod π/2), or a motion line
   along that angle (mod π), grown with the pixel's distance from the centre; complexes fitted at
   every point of a size × angle grid vs fitted at every ``sv2d_anchor_every``-th point per axis
   and interpolated bilinearly over that anchor grid
   (:func:`~optzoo.imaging.sparse_kernel_decomposition.grid_weights`).  One deterministic trial
   per effect.

Claims ("non-convex" = ring, heart, star4).  Each is decided by a named test of
:mod:`optzoo.experiment.verdicts`; the thresholds of the paper's brief (3×, 1 dB) were fixed before
any run, the margins below were added in issue 18 without looking at results:

* (a) DISK reaches a lower kernel relative-L2 error than the annealing baseline on every
  non-convex target, at equal loss evaluations (``sa_chains × sa_steps = steps``, enforced by the
  config; an annealing evaluation is a loss, DISK's a loss and its gradient), in no more wall
  time.  Per target ``superior`` on the per-seed log error
  ratio (DISK and annealing share the seed and hence the SS start: paired), direction lower,
  ``min_effect = min_effect_log_err``; the time half is ``ratio_bound`` (at most
  ``time_ratio_max``) on the ``timing`` trial, which times the two fits of the first non-convex
  target interleaved in one process (:func:`~optzoo.experiment.verdicts.interleaved`, DISK ``steps``
  Adam steps vs annealing ``sa_chains`` × ``sa_steps``, ``timing_pairs`` pairs after one warm-up
  call of each); all cells combine with ``all_of``.
* (b) "Matches low rank at several times fewer multiply-adds": per target, r_< is the largest
  rank whose cost 2·r·M is below ``cost_ratio_level`` × DISK's N·L taps; the target's cell is
  ``superior`` of DISK's per-seed image PSNR over the (deterministic) rank-r_< PSNR by
  ``min_effect_psnr_db`` (then low rank needs ≥ ``cost_ratio_level`` × DISK's cost to match
  it).  If even rank 1 costs that much the cell is an exact ``bound_holds`` on the cost ratio;
  if r_< exceeds ``max_rank`` the cell is inconclusive (``not_acting``: the ranks run cannot
  show it).  The median over targets of the old rule is ``at_least`` ⌈m/2⌉ of the m cells.
* (c) Initialisation order SS < IR < random in kernel error on non-convex targets: ``superior``
  on the log error ratios pooled over (target, seed) pairs (IR is deterministic: its one fit is
  paired with every seed), err(SS) < err(IR) and err(IR) < err(random), each by
  ``min_effect_log_err``; ``all_of`` the two.
* (d) Interpolated complexes stay within 1 dB of complexes fitted per radius (``independent``
  bases): ``within(−inf, sv_gap_db)`` on the per-seed kernel-domain gap (mean over the
  non-anchor radii) and on the per-seed image-domain gap; ``all_of`` the two.
* (e) The same on the 2-D anchor grid (each effect of ``sv2d_effects``): ``within(−inf,
  sv_gap_db)`` on the kernel gap (mean over the non-anchor grid points) and on the image gap of
  each effect's one deterministic trial (exact values: IR init, fixed photo and map); ``all_of``
  the cells.

Changed in issue 23: the fits keep the kernel's mass; the random-init ablation draws its taps
over the target's support (not inside the small IR squares); claim (a) compares at equal loss
evaluations (it gave the annealing 10× DISK's before); claim (e) is new.

Rules changed in issue 18 (the old ones were lenient):

* (a) compared means without a CI (a tie in the error was not possible, but a difference far
  inside seed noise passed), and decided the time half from the runner's wall times of trials
  that ran concurrently on a loaded machine; now paired CIs with a minimal effect, and the time
  half comes from the new interleaved ``timing`` trial (one new trial key; every other key is
  unchanged).
* (b) compared DISK's *mean* PSNR with low rank's, with no CI and no minimal effect; now a paired
  CI that must clear ``min_effect_psnr_db``.
* (c) pooled CIs below 0 with no minimal effect in absolute error units; now log ratios with a
  minimal effect (a tie or a negligible gain cannot pass).
* (d) compared mean gaps with 1 dB without a CI; now the CI of the mean gap must lie below it.

Verdict margins (preset fields, the same for every preset):

* ``min_effect_log_err = 0.05``: a 5 % lower kernel error (≈ 0.45 dB kernel PSNR) is the smallest
  improvement that counts; the paper's gaps are several dB.
* ``min_effect_psnr_db = 0.5``: half a dB of image PSNR, the smallest difference in filtered
  photos that we call a quality difference (the paper's DISK vs low-rank gaps are 5–15 dB).
* ``cost_ratio_level = 3``: "several times fewer multiply-adds" (the brief's reading).
* ``sv_gap_db = 1``: the paper's "within about 1 dB".
* ``time_ratio_max = 1``: "equal or less wall time" (the brief).

Read top to bottom: config and presets, trial expansion, one trial, summary with claims.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_ci, mean_ci
from optzoo.experiment.stats import metric_values as _vals
from optzoo.experiment.verdicts import (
    all_of,
    at_least,
    bound_holds,
    interleaved,
    not_acting,
    ratio_bound_from_metrics,
    superior,
    undecided,
    within,
)
from optzoo.imaging.dense_convolution import dense_filter
from optzoo.imaging.low_rank import apply_low_rank, low_rank_decomposition
from optzoo.imaging.problems import (
    NON_CONVEX,
    PHOTOS,
    disc_kernel,
    motion_kernel,
    motorcycle_defocus,
    photo,
    shape_kernel,
    target_kernel,
    target_names,
)
from optzoo.imaging.simulated_annealing import anneal_sparse_kernel
from optzoo.imaging.sparse_kernel_decomposition import (
    ETA_REL,
    SparseKernelComplex,
    apply_sparse,
    apply_spatially_varying,
    fit_sparse_kernel,
    grid_weights,
    interpolate_complex,
    interpolation_weights,
    kernel_errors,
)
from optzoo.report.figures import category_panel, grid, line_panel, save

SLUG = "sparse-kernel-decomposition"
FIT_METHODS = ("disk_ss", "disk_ir", "disk_random", "sa_ss")
SV_VARIANTS = ("independent", "warm")
SV2D_EFFECTS = ("rotational_bokeh", "radial_blur")


# -- configuration ---------------------------------------------------------------------------

def _budget(text: str) -> tuple[int, int]:
    try:
        n, l_ = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ConfigError(f"budgets: expected 'NxL' strings such as '12x4', got {text!r}") from None
    if n < 1 or l_ < 1:
        raise ConfigError(f"budgets: expected positive N and L, got {text!r}")
    return n, l_


@dataclass(frozen=True)
class DiskConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds of the random methods (SS, random init, annealing, focal plane).
        radius: circumradius R of the shape targets (grid 2R+1); Gaussians use max(R, ⌈4σ⌉).
        targets: target names (:func:`optzoo.imaging.problems.target_names`).
        budgets: tap budgets "NxL" (N taps per layer, L layers).
        steps: DISK's Adam steps (lr 1e-3 → 1e-4 linear).
        sa_steps: annealing steps per chain; sa_chains: its parallel chains; claim (a) compares
            at equal loss evaluations, so ``sa_chains × sa_steps`` must equal ``steps``.
        photos: scikit-image photos of the image-domain test; photo_size: central crop side
            (0 = whole photo).
        max_rank: low-rank ranks 1..max_rank.
        sv_radii: radii of the spatially varying reference (dense blend) and per-radius fits.
        sv_anchor_every: the interpolated set keeps every k-th of those radii (ends included).
        sv_r_min / sv_r_max: defocus radius range (px).
        sv_downscale: block-average factor of the motorcycle image; sv_steps: Adam steps per
            basis; sv_budget: "NxL" of the bases.
        sv2d_sizes / sv2d_angles: the 2-D grid (bokeh size × rotation angle in [0, π/2]) of
            the rotational-bokeh test, fitted at every point; sv2d_anchor_every: the
            interpolated set keeps every k-th point along each axis (ends included);
            sv2d_r_min / sv2d_r_max: the star's circumradius / the motion line's half-length
            range (px); sv2d_effects: ``rotational_bokeh`` and/or ``radial_blur``.
        timing_pairs: interleaved (DISK, annealing) fit pairs of the ``timing`` trial.
        min_effect_log_err, min_effect_psnr_db, cost_ratio_level, sv_gap_db, time_ratio_max:
            the claims' minimal effects and thresholds ("Verdict margins" in the module
            docstring); they are not trial parameters.
    """

    seeds: int = 3
    radius: int = 16
    targets: tuple[str, ...] = ("gauss5", "disc", "ring", "heart", "star4", "coma")
    budgets: tuple[str, ...] = ("12x4",)
    steps: int = 1000
    sa_steps: int = 100
    sa_chains: int = 10
    photos: tuple[str, ...] = PHOTOS
    photo_size: int = 128
    max_rank: int = 8
    sv_radii: int = 10
    sv_anchor_every: int = 3
    sv_r_min: float = 1.5
    sv_r_max: float = 8.0
    sv_downscale: int = 4
    sv_steps: int = 500
    sv_budget: str = "12x4"
    sv2d_sizes: int = 3
    sv2d_angles: int = 5
    sv2d_anchor_every: int = 2
    sv2d_r_min: float = 3.0
    sv2d_r_max: float = 7.0
    sv2d_effects: tuple[str, ...] = ("rotational_bokeh",)
    timing_pairs: int = 6
    min_effect_log_err: float = 0.05
    min_effect_psnr_db: float = 0.5
    cost_ratio_level: float = 3.0
    sv_gap_db: float = 1.0
    time_ratio_max: float = 1.0

    def validate(self) -> None:
        super().validate()
        if self.radius < 4:
            raise ConfigError(f"radius: expected >= 4, got {self.radius}")
        known = target_names(self.radius)
        bad = [t for t in self.targets if t not in known]
        if bad or not self.targets:
            raise ConfigError(f"targets: expected names from {known}, got {self.targets}")
        if not self.budgets:
            raise ConfigError("budgets: expected at least one 'NxL'")
        for b in (*self.budgets, self.sv_budget):
            _budget(b)
        bad = [p for p in self.photos if p not in PHOTOS]
        if bad or not self.photos:
            raise ConfigError(f"photos: expected names from {PHOTOS}, got {self.photos}")
        if self.photo_size != 0 and not 32 <= self.photo_size <= 300:
            raise ConfigError(f"photo_size: expected 0 or 32..300, got {self.photo_size}")
        for name in ("steps", "sa_steps", "sa_chains", "max_rank", "sv_steps", "sv_downscale"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.sv_radii < 3 or self.sv_anchor_every < 2:
            raise ConfigError(f"sv_radii, sv_anchor_every: expected >= 3 and >= 2, got "
                              f"{self.sv_radii}, {self.sv_anchor_every}")
        if (self.sv_radii - 1) % self.sv_anchor_every:
            raise ConfigError(f"sv_anchor_every: expected a divisor of sv_radii - 1 = "
                              f"{self.sv_radii - 1} (so the last radius is an anchor), got "
                              f"{self.sv_anchor_every}")
        if self.sa_chains * self.sa_steps != self.steps:
            raise ConfigError(f"sa_steps, sa_chains: claim (a) compares at equal loss "
                              f"evaluations, so sa_chains × sa_steps must equal steps = "
                              f"{self.steps}, got {self.sa_chains} × {self.sa_steps}")
        for name in ("sv2d_sizes", "sv2d_angles"):
            n = getattr(self, name)
            if n < 3 or (n - 1) % self.sv2d_anchor_every:
                raise ConfigError(f"{name}, sv2d_anchor_every: expected >= 3 grid points with "
                                  f"sv2d_anchor_every dividing {name} - 1, got {n}, "
                                  f"{self.sv2d_anchor_every}")
        if self.sv2d_anchor_every < 2:
            raise ConfigError(f"sv2d_anchor_every: expected >= 2, got {self.sv2d_anchor_every}")
        if not 1.0 <= self.sv2d_r_min < self.sv2d_r_max:
            raise ConfigError(f"sv2d_r_min, sv2d_r_max: expected 1 <= r_min < r_max, got "
                              f"{self.sv2d_r_min}, {self.sv2d_r_max}")
        bad = [e for e in self.sv2d_effects if e not in SV2D_EFFECTS]
        if bad:
            raise ConfigError(f"sv2d_effects: expected names from {SV2D_EFFECTS}, got "
                              f"{self.sv2d_effects}")
        if self.timing_pairs < 2:
            raise ConfigError(f"timing_pairs: expected >= 2, got {self.timing_pairs}")
        for name in ("min_effect_log_err", "min_effect_psnr_db", "cost_ratio_level",
                     "sv_gap_db", "time_ratio_max"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")
        if not 1.0 <= self.sv_r_min < self.sv_r_max:
            raise ConfigError(f"sv_r_min, sv_r_max: expected 1 <= r_min < r_max, got "
                              f"{self.sv_r_min}, {self.sv_r_max}")


PRESETS = {
    "smoke": DiskConfig(seeds=1, radius=6, targets=("disc", "heart"), steps=30, sa_steps=10,
                        sa_chains=3, photos=("camera",), photo_size=48, max_rank=3, sv_radii=4,
                        sv_anchor_every=3, sv_r_min=1.5, sv_r_max=3.0, sv_downscale=10,
                        sv_steps=20, sv_budget="6x2", sv2d_angles=3, sv2d_r_min=2.0,
                        sv2d_r_max=3.0),
    "quick": DiskConfig(),
    # full: the paper's grid also has 8x6 and 32x4 (``--set budgets=8x6,12x4,24x4,32x4``); two
    # budgets keep the full run near 20 CPU minutes on 2 cores
    "full": DiskConfig(seeds=5, radius=24, targets=target_names(24),
                       budgets=("12x4", "24x4"), photo_size=0, sv_radii=16,
                       sv_anchor_every=5, sv_r_min=2.0, sv_r_max=12.0, sv_downscale=2,
                       sv_steps=1000, sv2d_angles=9, sv2d_r_max=10.0,
                       sv2d_effects=("rotational_bokeh", "radial_blur")),
}


def trials(cfg: DiskConfig) -> list[Trial]:
    common = {"radius": cfg.radius, "photos": list(cfg.photos), "photo_size": cfg.photo_size}
    out = []
    for budget in cfg.budgets:
        for target in cfg.targets:
            p = {**common, "target": target, "budget": budget, "steps": cfg.steps}
            out.append(Trial("disk_ir", target, 0, p))
            for s in range(cfg.seeds):
                out.append(Trial("disk_ss", target, s, p))
                out.append(Trial("disk_random", target, s, p))
                out.append(Trial("sa_ss", target, s, {**p, "sa_steps": cfg.sa_steps,
                                                      "sa_chains": cfg.sa_chains}))
    for target in cfg.targets:
        out.append(Trial("lowrank", target, 0, {**common, "target": target,
                                                "max_rank": cfg.max_rank}))
    sv = {k: getattr(cfg, k) for k in ("sv_radii", "sv_anchor_every", "sv_r_min", "sv_r_max",
                                       "sv_downscale", "sv_steps", "sv_budget")}
    for variant in SV_VARIANTS:
        out += [Trial(f"sv_{variant}", "motorcycle", s, sv) for s in range(cfg.seeds)]
    # the 2-D grid tests are deterministic (IR init, fixed photo): one trial per effect
    out += [Trial("sv2d_independent", effect, 0, {
        **{k: getattr(cfg, k) for k in ("sv2d_sizes", "sv2d_angles", "sv2d_anchor_every",
                                        "sv2d_r_min", "sv2d_r_max", "sv_steps", "sv_budget",
                                        "photo_size")}, "photo": cfg.photos[0]})
            for effect in cfg.sv2d_effects]
    nc = _non_convex(cfg)
    if nc:  # claim (a)'s wall-time half: both fits timed interleaved in one process
        out.append(Trial("timing", nc[0], 0, {
            "radius": cfg.radius, "target": nc[0], "budget": cfg.budgets[0], "steps": cfg.steps,
            "sa_steps": cfg.sa_steps, "sa_chains": cfg.sa_chains, "pairs": cfg.timing_pairs}))
    return out


# -- one trial ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _target(name: str, radius: int) -> np.ndarray:
    return target_kernel(name, radius)


@functools.lru_cache(maxsize=8)
def _photo(name: str, size: int) -> np.ndarray:
    return photo(name, size or None)


@functools.lru_cache(maxsize=64)
def _reference(target: str, radius: int, name: str, size: int) -> np.ndarray:
    return dense_filter(_photo(name, size), _target(target, radius))


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR in dB of images in [0, 1] (peak 1)."""
    mse = float(np.mean((np.asarray(a) - np.asarray(b)) ** 2))
    return 10 * math.log10(1.0 / max(mse, 1e-300))


def _image_psnr(p: dict, filt) -> float:
    vals = [psnr(filt(_photo(n, int(p["photo_size"]))),
                 _reference(p["target"], int(p["radius"]), n, int(p["photo_size"])))
            for n in p["photos"]]
    return float(np.mean(vals))


def _run_fit(trial: Trial) -> dict:
    p = trial.params
    target = _target(p["target"], int(p["radius"]))
    n, n_layers = _budget(p["budget"])
    seed = 1000 + trial.seed
    if trial.method == "sa_ss":
        res = anneal_sparse_kernel(target, n, n_layers, "ss", steps=int(p["sa_steps"]),
                                   chains=int(p["sa_chains"]), seed=seed)
        cplx, extra = res.complex, {"acceptance": res.acceptance, "evaluations": res.evaluations,
                                    "final_loss": res.loss,
                                    "raw_mass": res.raw_mass}
    else:
        init = trial.method.removeprefix("disk_")
        res = fit_sparse_kernel(target, n, n_layers, init=init, steps=int(p["steps"]), seed=seed)
        cplx, extra = res.complex, {"evaluations": int(p["steps"]), "final_loss": res.losses[-1],
                                    "raw_mass": res.raw_mass}
    with torch.no_grad():
        k = cplx.kernel().numpy()
        err = kernel_errors(k, target)
        layers = cplx.numpy_layers()
        img = _image_psnr(p, lambda im: apply_sparse(im, layers))
    return {"rel_l2": err["rel_l2"], "kernel_psnr": err["psnr"], "image_psnr": img,
            "taps": cplx.taps, "kernel_side": int(target.shape[0]), **extra}


def _run_lowrank(trial: Trial) -> dict:
    p = trial.params
    target = _target(p["target"], int(p["radius"]))
    out: dict = {"kernel_side": int(target.shape[0])}
    for r in range(1, int(p["max_rank"]) + 1):
        lr = low_rank_decomposition(target, r)
        err = kernel_errors(lr.kernel(), target)
        out[f"kernel_psnr_r{r}"] = err["psnr"]
        out[f"rel_l2_r{r}"] = err["rel_l2"]
        out[f"image_psnr_r{r}"] = _image_psnr(p, lambda im, lr=lr: apply_low_rank(im, lr))
        out[f"taps_r{r}"] = lr.taps
    return out


def _sv_radii(p: dict) -> np.ndarray:
    return np.linspace(float(p["sv_r_min"]), float(p["sv_r_max"]), int(p["sv_radii"]))


def _fit_chain(radii, n: int, n_layers: int, steps: int, warm: bool) -> list[SparseKernelComplex]:
    """Complexes for the disc radii in order: from IR each (independent) or each warm-started
    from the previous one with its offsets scaled by the radius ratio (warm)."""
    out: list[SparseKernelComplex] = []
    for i, r in enumerate(radii):
        target = disc_kernel(float(r))
        init: str | SparseKernelComplex = "ir"
        if warm and out:
            ratio = r / radii[i - 1]
            o, w = zip(*out[-1].numpy_layers(), strict=True)
            init = SparseKernelComplex([x * ratio for x in o], list(w),
                                       scale=out[-1].scale * ratio)
        out.append(fit_sparse_kernel(target, n, n_layers, init=init, steps=steps).complex)
    return out


def _blend(layers: list[np.ndarray], rmap: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Per pixel, linear blend of the images filtered at the two nearest radii."""
    stack = np.stack(layers)
    k, t = (v.numpy() for v in interpolation_weights(rmap, radii))
    hi = np.minimum(k + 1, len(radii) - 1)
    yy, xx = np.indices(rmap.shape)
    return (1 - t)[..., None] * stack[k, yy, xx] + t[..., None] * stack[hi, yy, xx]


def _run_sv(trial: Trial) -> dict:
    p = trial.params
    warm = trial.method == "sv_warm"
    n, n_layers = _budget(p["sv_budget"])
    steps, every = int(p["sv_steps"]), int(p["sv_anchor_every"])
    radii = _sv_radii(p)
    anchor_idx = list(range(0, len(radii), every))
    fitted = _fit_chain(radii, n, n_layers, steps, warm)
    anchors = [fitted[i] for i in anchor_idx] if not warm else \
        _fit_chain(radii[anchor_idx], n, n_layers, steps, warm=True)
    out: dict = {"taps": fitted[0].taps}
    gaps = []
    for i, r in enumerate(radii):
        target = disc_kernel(float(r))
        with torch.no_grad():
            e_fit = kernel_errors(fitted[i].kernel(), target)["psnr"]
            e_int = kernel_errors(interpolate_complex(anchors, radii[anchor_idx], r).kernel(),
                                  target)["psnr"]
        out[f"fit_psnr_{i:02d}"], out[f"interp_psnr_{i:02d}"] = e_fit, e_int
        if i not in anchor_idx:
            gaps.append(e_fit - e_int)
    out["kernel_gap"] = float(np.mean(gaps))
    focus = 0.3 + 0.4 * float(np.random.default_rng(2000 + trial.seed).random())
    img, rmap = motorcycle_defocus(float(p["sv_r_min"]), float(p["sv_r_max"]), focus,
                                   int(p["sv_downscale"]))
    ref = _blend([dense_filter(img, disc_kernel(float(r))) for r in radii], rmap, radii)
    with torch.no_grad():
        sv_fit = apply_spatially_varying(img, fitted, radii, rmap)
        sv_int = apply_spatially_varying(img, anchors, radii[anchor_idx], rmap)
    out.update({"focus_quantile": focus, "image_psnr_fitted": psnr(sv_fit, ref),
                "image_psnr_interp": psnr(sv_int, ref)})
    out["image_gap"] = out["image_psnr_fitted"] - out["image_psnr_interp"]
    # baseline of the brief: the same blend with rank-2 separable layers instead of dense ones
    lr_img = _blend([apply_low_rank(img, low_rank_decomposition(disc_kernel(float(r)), 2))
                     for r in radii], rmap, radii)
    out["image_psnr_lowrank2_blend"] = psnr(lr_img, ref)
    out["taps_lowrank2_blend"] = int(sum(4 * disc_kernel(float(r)).shape[0] for r in radii))
    out["taps_dense_blend"] = int(sum(disc_kernel(float(r)).size for r in radii))
    return out


# the period of each effect's kernel in its angle: the four-pointed star repeats every quarter
# turn, a motion line every half turn
SV2D_PERIOD = {"rotational_bokeh": math.pi / 2, "radial_blur": math.pi}


def _sv2d_axes(p: dict, effect: str) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.linspace(float(p["sv2d_r_min"]), float(p["sv2d_r_max"]), int(p["sv2d_sizes"]))
    return sizes, np.linspace(0.0, SV2D_PERIOD[effect], int(p["sv2d_angles"]))


def _run_sv2d(trial: Trial) -> dict:
    """The paper's 2-D spatially varying effects (§4.3, Fig. 5), each pixel's kernel set by its
    polar angle about the image centre (mod the kernel's period) and a size growing linearly
    with its distance from the centre: ``rotational_bokeh`` (the four-pointed star turned by the
    angle, circumradius = size) and ``radial_blur`` (a motion line along the angle, half-length
    = size).  Complexes fitted (each from IR, as the paper: independently) at every point of a
    size × angle grid, vs only at every ``sv2d_anchor_every``-th point along each axis and
    interpolated bilinearly over that anchor grid.  Reference: the per-pixel bilinear blend over
    the full grid of dense blurs."""
    p = trial.params
    effect = trial.problem
    n, n_layers = _budget(p["sv_budget"])
    steps, every = int(p["sv_steps"]), int(p["sv2d_anchor_every"])
    sizes, angles = _sv2d_axes(p, effect)
    grid = math.ceil(sizes[-1]) + 1

    def star(sz, ang):
        if effect == "radial_blur":
            return motion_kernel(2 * float(sz), float(ang), grid)
        return shape_kernel("star4", grid, angle=float(ang), size=float(sz))

    fitted = [[fit_sparse_kernel(star(sz, a), n, n_layers, init="ir", steps=steps).complex
               for a in angles] for sz in sizes]
    ia, ja = list(range(0, len(sizes), every)), list(range(0, len(angles), every))
    anchors = [[fitted[i][j] for j in ja] for i in ia]
    anchor_axes = (sizes[ia], angles[ja])
    out: dict = {"taps": fitted[0][0].taps, "grid_points": len(sizes) * len(angles),
                 "anchor_points": len(ia) * len(ja)}
    gaps = []
    for i, sz in enumerate(sizes):
        for j, a in enumerate(angles):
            target = star(sz, a)
            with torch.no_grad():
                e_fit = kernel_errors(fitted[i][j].kernel(), target)["psnr"]
                e_int = kernel_errors(interpolate_complex(anchors, anchor_axes, (sz, a)).kernel(),
                                      target)["psnr"]
            out[f"fit_psnr_{i}_{j}"], out[f"interp_psnr_{i}_{j}"] = e_fit, e_int
            if not (i in ia and j in ja):
                gaps.append(e_fit - e_int)
    out["kernel_gap"] = float(np.mean(gaps))
    img = _photo(p["photo"], int(p["photo_size"]))
    h, w = img.shape[:2]
    yy, xx = np.indices((h, w), dtype=float)
    dy, dx = yy - (h - 1) / 2, xx - (w - 1) / 2
    rho = np.hypot(dy, dx) / np.hypot((h - 1) / 2, (w - 1) / 2)
    pmap = np.stack([sizes[0] + (sizes[-1] - sizes[0]) * rho,
                     np.mod(np.arctan2(dy, dx), SV2D_PERIOD[effect])])
    idx, alpha = (v.numpy() for v in grid_weights(pmap, (sizes, angles)))
    dense = np.stack([dense_filter(img, star(sz, a)) for sz in sizes for a in angles])
    corner = np.stack([dense[idx[c], yy.astype(int), xx.astype(int)] for c in range(len(idx))])
    alpha = alpha.reshape(alpha.shape + (1,) * (corner.ndim - alpha.ndim))
    ref = (alpha * corner).sum(axis=0)
    with torch.no_grad():
        sv_fit = apply_spatially_varying(img, fitted, (sizes, angles), pmap)
        sv_int = apply_spatially_varying(img, anchors, anchor_axes, pmap)
    out.update({"image_psnr_fitted": psnr(sv_fit, ref), "image_psnr_interp": psnr(sv_int, ref)})
    out["image_gap"] = out["image_psnr_fitted"] - out["image_psnr_interp"]
    out["taps_dense_blend"] = int(len(sizes) * len(angles) * (2 * grid + 1) ** 2)
    return out


def _run_timing(trial: Trial) -> dict:
    """DISK's fit vs the annealing search on one target, timed as interleaved pairs (A B, B A,
    …) in this process, so that the load of the machine falls on both alike."""
    p = trial.params
    target = _target(p["target"], int(p["radius"]))
    n, n_layers = _budget(p["budget"])
    seed = 1000 + trial.seed

    def disk():
        fit_sparse_kernel(target, n, n_layers, init="ss", steps=int(p["steps"]), seed=seed)

    def anneal():
        anneal_sparse_kernel(target, n, n_layers, "ss", steps=int(p["sa_steps"]),
                             chains=int(p["sa_chains"]), seed=seed)

    return interleaved(disk, anneal, pairs=int(p["pairs"]), warmup=1).metrics("fit")


def run_trial(trial: Trial, device: str) -> dict:
    """One trial on the CPU (``device`` is ignored: fits are small, single-threaded)."""
    del device
    torch.set_num_threads(1)
    if trial.method in FIT_METHODS:
        return _run_fit(trial)
    if trial.method == "lowrank":
        return _run_lowrank(trial)
    if trial.method.startswith("sv_"):
        return _run_sv(trial)
    if trial.method == "sv2d_independent":
        return _run_sv2d(trial)
    if trial.method == "timing":
        return _run_timing(trial)
    raise ConfigError(f"trial.method: unknown {trial.method!r}")


# -- summary -----------------------------------------------------------------------------------

def _fmt(vals: list[float], digits: int = 4) -> str:
    return fmt_ci(*mean_ci(vals), digits=digits) if vals else "—"


def _by(results: list[Result], method: str, target: str, budget: str | None = None):
    return sorted((r for r in results if r.trial.method == method and r.trial.problem == target
                   and (budget is None or r.trial.params.get("budget") == budget)),
                  key=lambda r: r.trial.seed)


def _seconds(rs: list[Result]) -> list[float]:
    return [float(r.meta["seconds"]) for r in rs if "seconds" in r.meta]


def _cost_ratio(results, cfg, target, budget) -> tuple[float, str]:
    lr = _by(results, "lowrank", target)
    disk = _vals(_by(results, "disk_ss", target, budget), "image_psnr")
    if not lr or not disk:
        return math.nan, "—"
    n, n_layers = _budget(budget)
    m = int(lr[0].metrics["kernel_side"])
    level = float(np.mean(disk))
    for r in range(1, cfg.max_rank + 1):
        if float(lr[0].metrics[f"image_psnr_r{r}"]) >= level:
            return 2 * r * m / (n * n_layers), f"r*={r}"
    return 2 * cfg.max_rank * m / (n * n_layers), f"r*>{cfg.max_rank}"


def summarize(results: list[Result], cfg: DiskConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables, claims = [], []
    budget = cfg.budgets[0]
    for b in cfg.budgets:
        rows = []
        for target in cfg.targets:
            for m in FIT_METHODS:
                rs = _by(results, m, target, b)
                if rs:
                    rows.append([target, m, _fmt(_vals(rs, "rel_l2")),
                                 _fmt(_vals(rs, "kernel_psnr")), _fmt(_vals(rs, "image_psnr")),
                                 int(rs[0].metrics["taps"]), _fmt(_seconds(rs), 3), len(rs)])
        tables.append(Table(
            title=f"Kernel fits at budget {b} (N×L): kernel relative L2, kernel PSNR (dB vs "
                  f"peak), image PSNR (dB, mean over {len(cfg.photos)} photos vs dense FFT), "
                  "taps per pixel, trial seconds (runner wall time of trials that ran "
                  "concurrently: orientation only, claim (a) uses the interleaved timing); "
                  "mean ± 95% CI over seeds",
            columns=["target", "method", "rel L2", "kernel PSNR", "image PSNR", "taps",
                     "seconds", "n"], rows=rows))
    lr_rows = []
    for target in cfg.targets:
        lr = _by(results, "lowrank", target)
        if lr:
            met = lr[0].metrics
            ratio, rstar = _cost_ratio(results, cfg, target, budget)
            lr_rows.append([target, int(met["kernel_side"])]
                           + [f"{float(met[f'image_psnr_r{r}']):.2f}"
                              for r in range(1, cfg.max_rank + 1)]
                           + [_fmt(_vals(_by(results, "disk_ss", target, budget), "image_psnr")),
                              rstar, f"{ratio:.2f}"])
    tables.append(Table(
        title=f"Low rank (SVD, 2·r·M taps) vs DISK {budget} image PSNR (dB); r* = smallest rank "
              "reaching DISK's PSNR; cost ratio = 2·r*·M / (N·L)",
        columns=["target", "M", *[f"r={r}" for r in range(1, cfg.max_rank + 1)],
                 f"DISK {budget}", "r*", "cost ratio"], rows=lr_rows))
    sv_rows = []
    for v in SV_VARIANTS:
        rs = sorted((r for r in results if r.trial.method == f"sv_{v}"),
                    key=lambda r: r.trial.seed)
        if rs:
            sv_rows.append([v, _fmt(_vals(rs, "kernel_gap")), _fmt(_vals(rs, "image_psnr_fitted")),
                            _fmt(_vals(rs, "image_psnr_interp")), _fmt(_vals(rs, "image_gap")),
                            _fmt(_vals(rs, "image_psnr_lowrank2_blend")),
                            int(rs[0].metrics["taps"]),
                            int(rs[0].metrics["taps_lowrank2_blend"]),
                            int(rs[0].metrics["taps_dense_blend"]), len(rs)])
    tables.append(Table(
        title=f"Spatially varying defocus on motorcycle_left (1/{cfg.sv_downscale} scale), "
              f"{cfg.sv_radii} radii in [{cfg.sv_r_min}, {cfg.sv_r_max}] px, anchors every "
              f"{cfg.sv_anchor_every}-th radius; gaps = fitted − interpolated (dB); PSNR vs the "
              "dense blend; taps per pixel (DISK, rank-2 blend of all radii, dense blend)",
        columns=["bases", "kernel gap", "image PSNR fitted", "image PSNR interp", "image gap",
                 "rank-2 blend PSNR", "DISK taps", "rank-2 blend taps", "dense blend taps", "n"],
        rows=sv_rows))
    timing = [r for r in results if r.trial.method == "timing"]
    if timing:
        m = timing[0].metrics
        tables.append(Table(
            title=f"Fit wall time, DISK ({cfg.steps} Adam steps) vs annealing ({cfg.sa_chains} "
                  f"chains × {cfg.sa_steps} steps) on {timing[0].trial.problem} at {budget}, "
                  "timed as interleaved pairs in one process",
            columns=["pairs", "DISK median s", "annealing median s",
                     "geometric-mean ratio DISK / annealing"],
            rows=[[int(m["fit_pairs"]), f"{m['fit_a_s']:.3g}", f"{m['fit_b_s']:.3g}",
                   f"{m['fit_ratio']:.3g}"]]))
    sv2d = [r for r in results if r.trial.method == "sv2d_independent"]
    if sv2d:
        tables.append(Table(
            title="2-D interpolation over a size × angle anchor grid: rotational bokeh "
                  "(four-pointed star, circumradius = size, angle 0–π/2) and radial blur (motion "
                  f"line, half-length = size, angle 0–π); size {cfg.sv2d_r_min:g}–"
                  f"{cfg.sv2d_r_max:g} px, {cfg.sv2d_sizes}×{cfg.sv2d_angles} fitted grid vs "
                  f"anchors every {cfg.sv2d_anchor_every}-th point; gaps = fitted − interpolated "
                  "(dB)",
            columns=["effect", "grid points", "anchors", "kernel gap", "image PSNR fitted",
                     "image PSNR interp", "image gap", "DISK taps", "dense blend taps"],
            rows=[[r.trial.problem, int(m["grid_points"]), int(m["anchor_points"]),
                   f"{m['kernel_gap']:.3f}", f"{m['image_psnr_fitted']:.2f}",
                   f"{m['image_psnr_interp']:.2f}", f"{m['image_gap']:.3f}", int(m["taps"]),
                   int(m["taps_dense_blend"])] for r in sv2d for m in [r.metrics]]))
    claims = [_claim_a(results, cfg, budget), _claim_b(results, cfg, budget),
              _claim_c(results, cfg, budget), _claim_d(results, cfg), _claim_e(results, cfg)]
    figures = [_plot_fits(results, cfg, budget, outdir / "kernel_fits.png"),
               _plot_sv(results, cfg, outdir / "interpolation.png")]
    return Summary(tables=tables, figures=figures, claims=claims, notes=_notes(cfg))


def _non_convex(cfg: DiskConfig) -> list[str]:
    return [t for t in cfg.targets if t in NON_CONVEX]


def _no_data(why: str):
    """An inconclusive verdict for a configuration that lacks the trials a claim needs (a
    ``--set`` that drops every non-convex target, say): nothing was measured to decide it."""
    return undecided(why)


def _err_by_seed(results, method, target, budget) -> dict:
    return {r.trial.seed: float(r.metrics["rel_l2"]) for r in _by(results, method, target, budget)}


def _timing(results) -> list[dict]:
    return [r.metrics for r in results if r.trial.method == "timing"]


def _claim_a(results, cfg, budget) -> Claim:
    nc = _non_convex(cfg)
    parts, cells = [], {}
    for t in cfg.targets:
        d, s = _err_by_seed(results, "disk_ss", t, budget), _err_by_seed(results, "sa_ss", t,
                                                                            budget)
        if d and s:
            parts.append(f"{t}: {np.mean(list(d.values())):.3g} vs {np.mean(list(s.values())):.3g}")
            if t in nc:
                cells[f"{t} error"] = superior(d, s, min_effect=cfg.min_effect_log_err,
                                               direction="less", log_ratio=True)
    timing = _timing(results)
    if timing:
        m = timing[0]
        cells["wall time"] = ratio_bound_from_metrics(timing, "fit", at_most=cfg.time_ratio_max)
        time_note = (f"interleaved in one process ({int(m['fit_pairs'])} pairs): median fit "
                     f"DISK {m['fit_a_s']:.3g} s vs annealing {m['fit_b_s']:.3g} s, "
                     f"geometric-mean ratio {m['fit_ratio']:.3g}")
    else:
        time_note = "no interleaved timing trial in this run"
    if not cells:
        verdict = _no_data("no non-convex target was fitted by both "
                             "DISK and the annealing search")
    else:
        verdict = all_of(cells)
        if not timing:
            verdict = not_acting(verdict, "the wall-time half needs the interleaved timing "
                                 "trial, which this run lacks")
    return Claim(
        text=f"(a) At equal taps ({budget}) and equal loss evaluations ({cfg.steps}: DISK's "
             f"{cfg.steps} Adam steps, each a loss and its gradient, vs {cfg.sa_chains} annealing "
             f"chains × {cfg.sa_steps} proposals, each a loss; same SS start, loss and mass "
             "renormalisation), our DISK reaches a lower kernel error than our PST-style "
             "annealing search on every non-convex target, in no more wall time (our two "
             "implementations timed interleaved in one process, not the paper's GPU/phone "
             "timings).",
        evidence=f"mean rel-L2 DISK vs annealing — {'; '.join(parts)}; {time_note}; "
                 f"non-convex: {nc}; per-seed error ratios paired by seed, minimal effect "
                 f"{cfg.min_effect_log_err:g} in log error",
        verdict=verdict)


def _rank_below(cfg, m: int, budget: str) -> int:
    """The largest rank whose 2·r·M taps stay below ``cost_ratio_level`` × DISK's N·L."""
    n, n_layers = _budget(budget)
    return math.ceil(cfg.cost_ratio_level * n * n_layers / (2 * m) - 1e-12) - 1


def _claim_b(results, cfg, budget) -> Claim:
    ratios = {t: _cost_ratio(results, cfg, t, budget) for t in cfg.targets}
    n, n_layers = _budget(budget)
    cells, tested = {}, []
    for t in cfg.targets:
        lr = _by(results, "lowrank", t)
        disk = {r.trial.seed: float(r.metrics["image_psnr"])
                for r in _by(results, "disk_ss", t, budget)}
        if not lr or not disk:
            continue
        m = int(lr[0].metrics["kernel_side"])
        r_lt = _rank_below(cfg, m, budget)
        if r_lt < 1:
            cells[t] = bound_holds([2 * m / (n * n_layers)], cfg.cost_ratio_level, side="ge")
            tested.append(f"{t}: rank 1 already costs {2 * m / (n * n_layers):.2f}×")
            continue
        r = min(r_lt, cfg.max_rank)
        lr_psnr = float(lr[0].metrics[f"image_psnr_r{r}"])
        v = superior(disk, {s: lr_psnr for s in disk}, min_effect=cfg.min_effect_psnr_db,
                     direction="greater")
        if r_lt > cfg.max_rank:
            v = not_acting(v, f"{t}: ranks up to max_rank = {cfg.max_rank} all cost less than "
                           f"{cfg.cost_ratio_level:g}× DISK's taps")
        cells[t] = v
        tested.append(f"{t}: DISK {np.mean(list(disk.values())):.2f} dB vs rank {r} "
                      f"({2 * r * m / (n * n_layers):.2f}× the taps) {lr_psnr:.2f} dB")
    if cells:
        verdict = at_least(cells, math.ceil(len(cells) / 2))
    else:
        verdict = _no_data("no target has both DISK and low-rank "
                             "trials")
    vals = [v for v, _ in ratios.values() if math.isfinite(v)]
    med = float(np.median(vals)) if vals else math.nan
    ev = "; ".join(f"{t}: {v:.2f} ({r})" for t, (v, r) in ratios.items())
    return Claim(
        text=f"(b) DISK matches low-rank image quality at several times fewer multiply-adds: on "
             f"at least half the targets, every low rank costing less than "
             f"{cfg.cost_ratio_level:g}× DISK's taps has an image PSNR at least "
             f"{cfg.min_effect_psnr_db:g} dB below DISK's.",
        evidence=f"tested — {'; '.join(tested)}; cost ratio 2·r*·M/(N·L) at the rank r* that "
                 f"reaches DISK's mean PSNR: median {med:.2f}, per target {ev}",
        verdict=verdict)


def _claim_c(results, cfg, budget) -> Claim:
    ss, ir, rnd = {}, {}, {}
    for t in _non_convex(cfg):
        ir_rs = _by(results, "disk_ir", t, budget)
        if not ir_rs:
            continue
        ir0 = float(ir_rs[0].metrics["rel_l2"])
        for seed, v in _err_by_seed(results, "disk_ss", t, budget).items():
            ss[(t, seed)] = v
        for seed, v in _err_by_seed(results, "disk_random", t, budget).items():
            rnd[(t, seed)] = v
        for seed in {s for (tt, s) in [*ss, *rnd] if tt == t}:
            ir[(t, seed)] = ir0
    if ss and rnd:
        v_ss = superior(ss, {k: ir[k] for k in ss}, min_effect=cfg.min_effect_log_err,
                        direction="less", log_ratio=True)
        v_rnd = superior({k: ir[k] for k in rnd}, rnd, min_effect=cfg.min_effect_log_err,
                         direction="less", log_ratio=True)
        verdict = all_of({"SS < IR": v_ss, "IR < random": v_rnd})
        ev = (f"log err(SS)/err(IR) = {-v_ss.effect:+.3g} (95% CI {-v_ss.ci[1]:+.3g}, "
              f"{-v_ss.ci[0]:+.3g}); log err(IR)/err(random) = {-v_rnd.effect:+.3g} "
              f"(95% CI {-v_rnd.ci[1]:+.3g}, {-v_rnd.ci[0]:+.3g}); n = {len(ss)} and "
              f"{len(rnd)} (target, seed) pairs")
    else:
        verdict = _no_data("no non-convex target has SS, IR and "
                             "random fits")
        ev = "no non-convex fits"
    diffs = [ss[k] - ir[k] for k in ss], [ir[k] - rnd[k] for k in rnd]
    return Claim(
        text="(c) On non-convex targets the SS initialisation beats IR, which beats random "
             f"(paper Fig. 6): paired kernel errors err(SS) < err(IR) < err(random), each by "
             f"more than {cfg.min_effect_log_err:g} in log error.",
        evidence=f"{ev}; absolute err(SS) − err(IR) = {_fmt(diffs[0])}, err(IR) − err(random) "
                 f"= {_fmt(diffs[1])}",
        verdict=verdict)


def _claim_d(results, cfg) -> Claim:
    parts, verdict = [], None
    for v in SV_VARIANTS:
        rs = sorted((r for r in results if r.trial.method == f"sv_{v}"),
                    key=lambda r: r.trial.seed)
        kg, ig = _vals(rs, "kernel_gap"), _vals(rs, "image_gap")
        if kg:
            parts.append(f"{v}: kernel gap {_fmt(kg)} dB, image gap {_fmt(ig)} dB")
            if v == "independent":
                verdict = all_of({"kernel gap": within(kg, -math.inf, cfg.sv_gap_db),
                                  "image gap": within(ig, -math.inf, cfg.sv_gap_db)})
    if verdict is None:
        verdict = _no_data("no spatially varying trials with "
                             "independent bases")
    return Claim(
        text="(d) Complexes interpolated in filter space stay within about 1 dB of complexes "
             "fitted per radius (bases fitted independently from IR, as in the paper): the 95% "
             f"CIs of the mean kernel-domain and image-domain PSNR gaps lie below "
             f"{cfg.sv_gap_db:g} dB.",
        evidence="; ".join(parts) or "no spatially varying trials",
        verdict=verdict)


def _claim_e(results, cfg) -> Claim:
    rs = [r for r in results if r.trial.method == "sv2d_independent"]
    if rs:
        cells, parts = {}, []
        for r in rs:
            m, e = r.metrics, r.trial.problem
            kg, ig = float(m["kernel_gap"]), float(m["image_gap"])
            # one deterministic trial per effect (IR init, fixed photo and map): exact numbers
            cells[f"{e} kernel gap"] = within(kg, -math.inf, cfg.sv_gap_db)
            cells[f"{e} image gap"] = within(ig, -math.inf, cfg.sv_gap_db)
            parts.append(f"{e}: kernel gap {kg:.3f} dB (mean over the {int(m['grid_points'])} − "
                         f"{int(m['anchor_points'])} non-anchor grid points), image gap "
                         f"{ig:.3f} dB (fitted {m['image_psnr_fitted']:.2f} vs interpolated "
                         f"{m['image_psnr_interp']:.2f} dB against the dense blend)")
        verdict = all_of(cells)
        ev = "; ".join(parts) + "; deterministic (IR init, no seed), so exact"
    else:
        verdict = _no_data("no 2-D spatially varying trial")
        ev = "no 2-D spatially varying trial"
    return Claim(
        text="(e) Interpolating complexes bilinearly over a 2-D anchor grid (size × angle: "
             f"{', '.join(cfg.sv2d_effects)}; paper §4.3 and Fig. 5) stays within about "
             f"{cfg.sv_gap_db:g} dB of complexes fitted at every grid point, in the kernel and "
             "the image domain (bases fitted independently from IR, as in the paper).",
        evidence=ev, verdict=verdict)


FIT_LABELS = {"disk_ss": "DISK, SS+IR init", "disk_ir": "DISK, IR init (deterministic)",
              "disk_random": "DISK, random init", "sa_ss": "annealing, SS start"}


def _plot_fits(results, cfg, budget, path: Path) -> Figure:
    fig, ax = grid(2, ncols=1, panel=(10.0, 3.8))
    for a, key, name in ((ax[0], "kernel_psnr", "kernel PSNR (dB)"),
                         (ax[1], "image_psnr", "image PSNR (dB)")):
        series = {FIT_LABELS[m]: {t: _vals(_by(results, m, t, budget), key)
                                  for t in cfg.targets if _by(results, m, t, budget)}
                  for m in FIT_METHODS}
        if key == "image_psnr":  # deterministic: one value per target, no interval
            for r in range(1, min(3, cfg.max_rank) + 1):
                series[f"low rank r = {r} (deterministic)"] = {
                    t: [float(_by(results, "lowrank", t)[0].metrics[f"image_psnr_r{r}"])]
                    for t in cfg.targets if _by(results, "lowrank", t)}
        category_panel(a, {k: v for k, v in series.items() if v}, kind="point", ylabel=name,
                       xlabel="target", title=f"{name.split(' (')[0]} at budget {budget}")
        a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the points
    return save(fig, path, f"Kernel-domain and image-domain PSNR per target at {budget} "
                "(mean ± 95 % CI over seeds; DISK with IR init and low rank (ranks 1–3, image "
                "panel) are deterministic: one run, no interval)")


def _plot_sv(results, cfg, path: Path) -> Figure:
    radii = np.linspace(cfg.sv_r_min, cfg.sv_r_max, cfg.sv_radii)
    series = {}
    for v in SV_VARIANTS:
        rs = [r for r in results if r.trial.method == f"sv_{v}"]
        if not rs:
            continue
        for key, name in (("fit_psnr_", "fitted per radius"), ("interp_psnr_", "interpolated")):
            series[f"{v} bases, {name}"] = {float(radius): _vals(rs, f"{key}{i:02d}")
                                            for i, radius in enumerate(radii)}
    fig, (ax,) = grid(1, panel=(6.5, 4.2))
    line_panel(ax, series, xlabel="disc radius (px)", ylabel="kernel PSNR (dB)",
               title="Spatially varying defocus: fitted vs interpolated complexes",
               xlog=False, ylog=False)
    return save(fig, path, "Kernel PSNR of complexes fitted at every radius vs interpolated "
                f"between anchors (every {cfg.sv_anchor_every}-th radius), mean ± 95 % CI over "
                "seeds")


def _notes(cfg: DiskConfig) -> list[str]:
    return [
        f"Setting: shapes of circumradius {cfg.radius} px (grid {2 * cfg.radius + 1}), budgets "
        f"{list(cfg.budgets)}, {cfg.steps} Adam steps (lr 1e-3 → 1e-4 linear, offsets learned in "
        f"units of the target's support radius), Charbonnier η = {ETA_REL:g}·max K; photos "
        f"{list(cfg.photos)} "
        + (f"cropped to {cfg.photo_size}² px" if cfg.photo_size else "at full size")
        + f"; {cfg.seeds} seed(s). The paper: 49–151 px kernels, 1000 steps, LPIPS/FLIP and "
        "phone latency (not measured here; CPU time per megapixel is in benchmarks/"
        "bench_imaging.py).",
        f"Annealing baseline: parallel tempering + geometric cooling, {cfg.sa_chains} chains × "
        f"{cfg.sa_steps} steps from the same SS start, i.e. DISK's {cfg.steps} loss evaluations "
        "(the paper gives PST 10 chains × 10,000 "
        "iterations, 100× DISK's steps).",
        "Readings of the paper (module docstring of optzoo.imaging.sparse_kernel_decomposition): "
        "bilinear taps, SS = Poisson-disk samples with spacing sqrt(S/(Nπ)) for layer 1 plus IR "
        "layers of that radius, Δr = 2R/(L(L+1)), α linear between neighbouring radii (1-D) "
        "and bilinear over the anchor grid (2-D); random init uniform over the target's "
        "support; every fit (DISK and annealing) rescaled to the target's mass afterwards "
        "(the paper's loss has no mass constraint).",
        "Taps count a bilinear fetch as one (the paper's count); low rank costs 2·r·M; the SV "
        "blends cost the sum over their radii.",
        f"Spatially varying: motorcycle_left at 1/{cfg.sv_downscale} scale, invalid disparities "
        "filled from the nearest valid pixel, radius linear in |disparity − focal disparity|; "
        f"{cfg.sv_radii} radii (the brief: 16) with {cfg.sv_steps} steps per basis.",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Wu, Cao & Huo (ICLR 2026) at CPU scale: analytic kernels (Gaussians, bokeh shapes, "
        "heart, star, coma, motion) decomposed into 12×4 sparse taps by DISK (SS/IR/random "
        "init) vs a PST-style parallel-tempering search and SVD low rank, scored in the kernel "
        "domain and on scikit-image photos against dense FFT convolution; spatially varying "
        "defocus on motorcycle_left from its disparity with filter-space interpolation of "
        "complexes. Trials run on the CPU whatever --device says."),
)
