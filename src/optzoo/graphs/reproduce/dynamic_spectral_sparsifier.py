"""Reproduction ``dynamic-spectral-sparsifier``: Cao, Jin, Li, Song, Sun & Weinstein, "Dynamic
Kernel Graph Sparsifiers" (ICLR 2026; arXiv 2211.14825; OpenReview DjtJV3ke1j).  No official code;
the paper is theory only (no experiments), so the claims are its asymptotic statements measured
at CPU scale with :class:`optzoo.graphs.DynamicSpectralSparsifier`.

Setting: points from a 5-blob Gaussian mixture in d = 2 (``blobs2``), scikit-learn's swiss roll
(``swissroll3``) or blobs in d = 5 (``blobs5``); kernel f(t) = (1 + t/σ²)^{-2}, σ = 2; WSPD
separation s = 2; target ε = 0.5; sample sizes m_AB = ⌈c·ρ·(|A| + |B|)·ln n/ε²⌉ with c = 0.05;
quadtree leaves of at most 16 points (the library's defaults since issue 23).
c was set once from the edge counts of one build (n = 1000, blobs2) before these presets were
fixed: with c = 1 the formula keeps every edge of every pair at n ≤ 4 000 (|E(H)| = n(n−1)/2),
so nothing would be measured.  Even at c = 0.05, H keeps ~75 % of the pairs at n = 400 and
~45 % at n = 3 000: the sparse regime starts at a few thousand points, which is where the cost
trials start (quick: n = 2 500 … 10⁴; full: … 3.2·10⁴).  n = 10⁵ (the issue's target) needs
~2.8·10⁸ draws at these constants (~7 GB before L_H is assembled): not on this 2-core
machine.  Move streams mix the brief's three kinds (jitter, teleport
across clusters, moves into the densest cell), chosen from the points only (oblivious).

Trials:
* ``stream`` (one per problem × seed): build at n = ``stream_n``, apply ``stream_moves`` moves,
  and every ``check_every`` moves compute the exact ε̂ of the generalised eigenproblem
  (L_H + J/n) v = λ (L_G + J/n) v.  At the end: ε̂ of a fresh static build and of uniform edge
  sampling with the same number of draws, and whether the dynamic WSPD equals the fresh one.
* ``cost`` (one per n × seed, blobs2): build (= one static rebuild: its wall time and kernel
  evaluations), then ``cost_moves`` moves: mean pairs touched, kernel evaluations, draws changed
  and wall time per move; |E(H)|.
* ``quadform`` (full only, one per n in ``probe_ns`` × seed): quadratic-form ratios
  vᵀL_H v / vᵀL_G v on 60 probes (Gaussian, cut indicators, smooth) after ``cost_moves`` moves,
  and CG iterations on L_G + λI (λ = 1e-3·mean degree) with and without L_H + λI as
  preconditioner.

Claims (thresholds fixed before any run), each decided by a named test of
:mod:`optzoo.experiment.verdicts`:

(1) ε̂ ≤ ε = 0.5 at every checkpoint of every stream (quick: a 300-move stream, full: 2 000
    moves): ``bound_holds`` on each stream trial's largest checkpoint ε̂ (ε̂ is computed exactly
    from the generalised eigenproblem; the guarantee is per stream, so one violation is a
    failure).  Guard: H must sparsify — if the stream trials' H keeps more than
    ``max_edge_fraction`` of the complete graph's n(n−1)/2 edges, ε̂ ≤ ε says little about the
    sampling and the claim is *inconclusive* (``not_acting``).
(2) The log-log slope in n of kernel evaluations per update is below ``update_slope_max`` and
    below ``rebuild_slope_factor`` × that of a static rebuild: ``all_of`` two ``slope`` tests with
    a bootstrap CI over the (n, seed) points — log(update evals) on log n inside (−∞, 0.5), and
    log(update evals / rebuild evals^0.5) on log n inside (−∞, 0) (its slope is the update's
    slope minus half the rebuild's, on the same points).
(3) |E(H)| = O(n polylog n): ``slope`` of log |E(H)| on log n inside (−∞, ``edge_slope_max``]
    (the local slope of n·ln²n at these n is ≈ 1.25–1.3).

The slopes are of kernel-evaluation and edge *counts*, which are deterministic given the seed:
that the cost trials of different n ran concurrently on a loaded machine cannot change them.  The
wall-time slopes of the table (build and per-move seconds, each measured inside its trial) are
orientation only and decide nothing.  With fewer than three distinct n (smoke) a slope has no CI:
the cells then fall back to ``within`` on the per-seed two-point slopes (inconclusive with one
seed).

Rules changed in issue 23: claims (2) and (3) got the sparsity guard of (1) — a slope over
sizes at which H keeps more than ``max_edge_fraction`` of the pairs is a slope of the exact
regime, so the claim is *inconclusive* (``not_acting``); (1) is decided per point cloud
(``all_of`` over clouds; its guard downgrades only a *held* cell, since ε̂ > ε is a failure
whether H is dense or not — the 3-D swiss roll keeps ~97 % of the pairs at n = 3 000, so the
full preset's claim (1) can be held only if that cell is, which at this n it cannot be);
the cost sizes moved from 250…2 000
(H kept 51–78 % of the pairs) to 2 500…10⁴ / 3.2·10⁴; the full stream runs at n = 3 000
(ε̂ exact) instead of 1 500 (where H kept 96 % of the pairs); quadtree leaves hold up to 16
points (``leaf_size``).

Rules changed in issue 18: (2) and (3) compared pooled point estimates of the slopes with their
thresholds, with no CI (lenient: a slope just under the line on one draw of points passed); now
the bootstrap CI must lie inside the band.  (1) had no sparsity guard, so an H that keeps every
edge (ε̂ = 0) passed; the ``max_edge_fraction`` guard was added.

Verdict margins (preset fields, the same for every preset):

* ``update_slope_max = 0.5``: "close to 0 (polylog growth)" in the brief; 0.5 is the slope of
  √n, far below a rebuild's ≈ 1 + o(1).
* ``rebuild_slope_factor = 0.5``: "far slower than a rebuild" = less than half its exponent.
* ``edge_slope_max = 1.3``: the local log-log slope of n·ln²n at n = 250…8 000 (fixed in
  issue 18; at the issue-23 sizes 2 500…3.2·10⁴ that slope is 1.19–1.26, so 1.3 is lenient).
* ``max_edge_fraction = 0.5``: an H that keeps more than half the complete graph's edges has not
  sparsified it (guard of all three claims).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_values as _fmt
from optzoo.experiment.stats import metric_values as _vals
from optzoo.experiment.verdicts import all_of, bound_holds, not_acting, slope, within
from optzoo.graphs import (
    DenseSparsifierWarning,
    DynamicSpectralSparsifier,
    SpectralSparsifier,
    kernel_laplacian,
    make_kernel,
    make_points,
    move_stream,
    padded_bounds,
    pcg_iterations,
    probe_vectors,
    quadratic_form_ratios,
    relative_spectral_error,
    uniform_edge_sample,
)
from optzoo.report.figures import grid, line_panel, save

SLUG = "dynamic-spectral-sparsifier"
PROBLEMS = {"blobs2": ("blobs", 2), "swissroll3": ("swissroll", 3), "blobs5": ("blobs", 5)}


@dataclass(frozen=True)
class SparsifierConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds per cell.
        problems: point clouds of the stream trials (keys of ``PROBLEMS``).
        stream_n / stream_moves / check_every: size, stream length, ε̂ checkpoint spacing.
        cost_ns: sizes of the update-cost trials (blobs2).
        cost_moves: moves per cost trial.
        probe_ns: sizes of the quadratic-form / PCG trials (empty: none).
        eps / separation / oversample / sigma: ε, s, c and σ of the sparsifier and kernel.
        leaf_size: quadtree leaf bucket of the sparsifier (speed; see its module).
        update_slope_max, rebuild_slope_factor, edge_slope_max, max_edge_fraction: the
            claims' thresholds and guard ("Verdict margins" in the module docstring); not
            trial parameters.
    """

    seeds: int = 3
    problems: tuple[str, ...] = ("blobs2",)
    stream_n: int = 400
    stream_moves: int = 300
    check_every: int = 50
    cost_ns: tuple[int, ...] = (250, 500, 1000, 2000)
    cost_moves: int = 20
    probe_ns: tuple[int, ...] = ()
    eps: float = 0.5
    separation: float = 2.0
    oversample: float = 0.05
    sigma: float = 2.0
    update_slope_max: float = 0.5
    rebuild_slope_factor: float = 0.5
    edge_slope_max: float = 1.3
    max_edge_fraction: float = 0.5
    leaf_size: int = 16

    def validate(self) -> None:
        super().validate()
        for p in self.problems:
            if p not in PROBLEMS:
                raise ConfigError(f"problems: unknown {p!r}; allowed: {sorted(PROBLEMS)}")
        if not 20 <= self.stream_n <= 3000:
            raise ConfigError(f"stream_n: expected 20..3000 (dense ε̂), got {self.stream_n}")
        if self.check_every < 1 or self.stream_moves < self.check_every:
            raise ConfigError("check_every: expected 1 <= check_every <= stream_moves")
        if len(self.cost_ns) < 2 or min(self.cost_ns) < 20:
            raise ConfigError(f"cost_ns: expected >= 2 sizes >= 20, got {self.cost_ns}")
        if self.cost_moves < 1:
            raise ConfigError(f"cost_moves: expected >= 1, got {self.cost_moves}")
        if not 0 < self.eps < 1:
            raise ConfigError(f"eps: expected 0 < eps < 1, got {self.eps}")
        if isinstance(self.leaf_size, bool) or not isinstance(self.leaf_size, int) \
                or self.leaf_size < 1:
            raise ConfigError(f"leaf_size: expected an integer >= 1, got {self.leaf_size!r}")
        if not 0 < self.max_edge_fraction <= 1:
            raise ConfigError(f"max_edge_fraction: expected in (0, 1], got "
                              f"{self.max_edge_fraction}")
        for name in ("separation", "oversample", "sigma", "rebuild_slope_factor"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")


PRESETS = {
    "smoke": SparsifierConfig(seeds=1, stream_n=120, stream_moves=20, check_every=10,
                              cost_ns=(80, 160), cost_moves=4),
    # the cost trials start where H keeps under half of the pairs (n ≈ 2 500 at these
    # constants); the dense ε̂ stream cannot reach that regime in a minute (n = 400 keeps ~75 %),
    # so claim (1) is decided by the full preset only
    "quick": SparsifierConfig(cost_ns=(2500, 5000, 10000), cost_moves=15),
    "full": SparsifierConfig(seeds=5, problems=("blobs2", "swissroll3"), stream_n=3000,
                             stream_moves=2000, check_every=400,
                             cost_ns=(2500, 5000, 10000, 20000, 32000), cost_moves=50,
                             probe_ns=(4000, 8000)),
}

SPARSIFIER_KEYS = ("eps", "separation", "oversample", "sigma", "leaf_size")


def trials(cfg: SparsifierConfig) -> list[Trial]:
    base = {k: getattr(cfg, k) for k in SPARSIFIER_KEYS}
    # cost trials first: in a run stopped early they decide two of the three claims
    out = [Trial(method="cost", problem="blobs2", seed=s,
                 params={**base, "n": n, "moves": cfg.cost_moves})
           for n in cfg.cost_ns for s in range(cfg.seeds)]
    out += [Trial(method="stream", problem=p, seed=s,
                  params={**base, "n": cfg.stream_n, "moves": cfg.stream_moves,
                          "check_every": cfg.check_every})
            for p in cfg.problems for s in range(cfg.seeds)]
    out += [Trial(method="quadform", problem="blobs2", seed=s,
                  params={**base, "n": n, "moves": cfg.cost_moves})
            for n in cfg.probe_ns for s in range(cfg.seeds)]
    return out


# -- one trial ---------------------------------------------------------------------------------

def _setup(trial: Trial):
    p = trial.params
    name, d = PROBLEMS[trial.problem]
    x = make_points(name, int(p["n"]), d, seed=1000 + trial.seed)
    kernel = make_kernel("invpoly", float(p["sigma"]))
    bounds = padded_bounds(x)
    kw = {"eps": float(p["eps"]), "separation": float(p["separation"]),
          "oversample": float(p["oversample"]), "bounds": bounds,
          "leaf_size": int(p.get("leaf_size", 1))}
    return x, kernel, bounds, kw


def _run_stream(trial: Trial) -> dict:
    p = trial.params
    x, kernel, bounds, kw = _setup(trial)
    h = DynamicSpectralSparsifier(x, kernel, seed=2000 + trial.seed, **kw)
    every = int(p["check_every"])
    out: dict = {"eps_hat_00": relative_spectral_error(h.laplacian(),
                                                       kernel_laplacian(h.x, kernel))}
    evals, pairs = [], []
    stream = move_stream(x, int(p["moves"]), "mixed", seed=3000 + trial.seed, bounds=bounds)
    for t, (i, new) in enumerate(stream, start=1):
        st = h.move(i, new)
        evals.append(st.kernel_evals)
        pairs.append(st.pairs_touched)
        if t % every == 0:
            out[f"eps_hat_{t // every:02d}"] = relative_spectral_error(
                h.laplacian(), kernel_laplacian(h.x, kernel))
    checks = [v for k, v in out.items() if k.startswith("eps_hat_")]
    lap_g = kernel_laplacian(h.x, kernel)
    fresh = SpectralSparsifier(h.x, kernel, seed=4000 + trial.seed, **kw)
    samples = h.num_samples()
    out.update({
        "eps_hat_max": max(checks), "eps_hat_first": checks[0], "eps_hat_last": checks[-1],
        "eps_static": relative_spectral_error(fresh.laplacian(), lap_g),
        "eps_uniform": relative_spectral_error(
            uniform_edge_sample(h.x, kernel, samples, seed=5000 + trial.seed), lap_g),
        "same_pairs": float(set(fresh.pairs) == set(h.pairs) and all(
            fresh.pairs[k].ia.size == h.pairs[k].ia.size for k in fresh.pairs)),
        "edges": h.num_edges(), "samples": samples,
        "dense_edges": h.n * (h.n - 1) // 2,
        "update_kernel_evals": float(np.mean(evals)), "update_pairs": float(np.mean(pairs)),
    })
    return out


def _run_cost(trial: Trial, moves_only: bool = False) -> dict:
    p = trial.params
    x, kernel, bounds, kw = _setup(trial)
    t0 = time.perf_counter()
    h = DynamicSpectralSparsifier(x, kernel, seed=2000 + trial.seed, **kw)
    build_s = time.perf_counter() - t0
    stats = [h.move(i, new) for i, new in move_stream(x, int(p["moves"]), "mixed",
                                                      seed=3000 + trial.seed, bounds=bounds)]
    n = int(p["n"])
    out = {"n": n, "edges": h.num_edges(), "samples": h.num_samples(),
           "dense_edges": n * (n - 1) // 2,
           "pairs": len(h.pairs), "rebuild_kernel_evals": h.build_stats.kernel_evals,
           "rebuild_wall_s": build_s}
    for name in ("pairs_touched", "kernel_evals", "edges_changed", "calls"):
        out[f"update_{name}"] = float(np.mean([getattr(s, name) for s in stats]))
    out["update_wall_s"] = float(np.mean([s.seconds for s in stats]))
    if moves_only:
        return out, h, kernel
    return out


def _run_quadform(trial: Trial) -> dict:
    out, h, kernel = _run_cost(trial, moves_only=True)
    lap = h.laplacian()
    probes = probe_vectors(h.x, 60, seed=6000 + trial.seed)
    r = quadratic_form_ratios(lap, h.x, kernel, probes)
    shift = 1e-3 * float(lap.diagonal().mean())
    plain, pre = pcg_iterations(lap, h.x, kernel, shift, seed=7000 + trial.seed)
    out.update({"qf_min": float(r.min()), "qf_max": float(r.max()),
                "qf_dev": float(np.max(np.abs(r - 1.0))), "cg_plain": plain, "cg_pre": pre})
    return out


def run_trial(trial: Trial, device: str) -> dict:
    """One trial on the CPU (``device`` is ignored: the method is NumPy/SciPy).

    Metrics ending in ``_wall_s`` are wall-clock times, the only non-deterministic metrics.
    A dense H is not an error here: every trial records |E(H)| / n(n−1)/2, and the claims'
    guards use it, so the sparsifier's :class:`DenseSparsifierWarning` is silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DenseSparsifierWarning)
        return _run_trial(trial)


def _run_trial(trial: Trial) -> dict:
    if trial.method == "stream":
        return _run_stream(trial)
    if trial.method == "cost":
        return _run_cost(trial)
    if trial.method == "quadform":
        return _run_quadform(trial)
    raise ConfigError(f"trial.method: unknown {trial.method!r}")


# -- summary -----------------------------------------------------------------------------------

def _slope(ns: list[float], ys: list[float]) -> float:
    return float(np.polyfit(np.log(ns), np.log(np.maximum(ys, 1e-300)), 1)[0])


def _slope_ci(cost: list[Result], key: str) -> tuple[float, list[float]]:
    """Slope over all (n, seed) points, and one slope per seed (for a CI)."""
    ns, ys = _vals(cost, "n"), _vals(cost, key)
    per_seed = []
    for s in sorted({r.trial.seed for r in cost}):
        rs = [r for r in cost if r.trial.seed == s]
        if len(rs) >= 2:
            per_seed.append(_slope(_vals(rs, "n"), _vals(rs, key)))
    return _slope(ns, ys), per_seed


def summarize(results: list[Result], cfg: SparsifierConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    stream = sorted((r for r in results if r.trial.method == "stream"),
                    key=lambda r: (r.trial.problem, r.trial.seed))
    cost = sorted((r for r in results if r.trial.method == "cost"),
                  key=lambda r: (r.trial.params["n"], r.trial.seed))
    quad = [r for r in results if r.trial.method == "quadform"]
    tables, claims = [], []

    rows = []
    for prob in dict.fromkeys(r.trial.problem for r in stream):
        rs = [r for r in stream if r.trial.problem == prob]
        rows.append([prob, _fmt(_vals(rs, "eps_hat_first")), _fmt(_vals(rs, "eps_hat_last")),
                     _fmt(_vals(rs, "eps_hat_max")), _fmt(_vals(rs, "eps_static")),
                     _fmt(_vals(rs, "eps_uniform")),
                     _fmt([e / d for e, d in zip(_vals(rs, "edges"), _vals(rs, "dense_edges"),
                                                 strict=True)]),
                     f"{sum(_vals(rs, 'same_pairs')):.0f}/{len(rs)}", len(rs)])
    tables.append(Table(
        title=f"Relative spectral error ε̂ over a {cfg.stream_moves}-move mixed stream at "
              f"n = {cfg.stream_n} (target ε = {cfg.eps}; mean ± 95% CI over seeds); static = "
              "fresh build on the final points, uniform = uniform edge sampling with the same "
              "number of draws",
        columns=["points", "ε̂ start", "ε̂ end", "ε̂ max", "ε̂ static", "ε̂ uniform",
                 "|E(H)| / n(n−1)/2", "WSPD = fresh", "n seeds"], rows=rows))

    ns = sorted({int(r.trial.params["n"]) for r in cost})
    crow = []
    for n in ns:
        rs = [r for r in cost if int(r.trial.params["n"]) == n]
        crow.append([n, _fmt(_vals(rs, "update_pairs_touched")),
                     _fmt(_vals(rs, "update_kernel_evals")),
                     _fmt(_vals(rs, "update_edges_changed")),
                     _fmt([1e3 * v for v in _vals(rs, "update_wall_s")]),
                     _fmt(_vals(rs, "rebuild_kernel_evals")),
                     _fmt(_vals(rs, "rebuild_wall_s")),
                     _fmt([e / n for e in _vals(rs, "edges")]),
                     _fmt([e / (n * (n - 1) / 2) for e in _vals(rs, "edges")]), len(rs)])
    tables.append(Table(
        title="Cost of one move vs a static rebuild (blobs2; mean ± 95% CI over seeds)",
        columns=["n", "pairs touched", "kernel evals / move", "draws changed / move",
                 "ms / move", "kernel evals / rebuild", "s / rebuild", "|E(H)| / n",
                 "|E(H)| / n(n−1)/2", "n seeds"], rows=crow))
    slopes = {k: _slope_ci(cost, k) for k in ("update_kernel_evals", "rebuild_kernel_evals",
                                              "update_wall_s", "rebuild_wall_s", "edges",
                                              "update_pairs_touched")}
    tables.append(Table(
        title="Log-log slopes in n (pooled fit; mean ± 95% CI of per-seed fits)",
        columns=["quantity", "pooled slope", "per-seed slopes"],
        rows=[[k, f"{v[0]:.3f}", _fmt(v[1])] for k, v in slopes.items()]))
    if quad:
        qrows = []
        for n in sorted({int(r.trial.params["n"]) for r in quad}):
            rs = [r for r in quad if int(r.trial.params["n"]) == n]
            qrows.append([n, _fmt(_vals(rs, "qf_min")), _fmt(_vals(rs, "qf_max")),
                          _fmt(_vals(rs, "cg_plain")), _fmt(_vals(rs, "cg_pre")), len(rs)])
        tables.append(Table(
            title="Larger n: quadratic-form ratios vᵀL_H v / vᵀL_G v on 60 probes and CG "
                  "iterations on L_G + λI (plain vs preconditioned by L_H + λI)",
            columns=["n", "min ratio", "max ratio", "CG plain", "CG preconditioned",
                     "n seeds"], rows=qrows))

    claims = [_claim_eps(stream, cfg), _claim_update(cost, cfg, slopes),
              _claim_edges(cost, cfg)]
    figures = [_plot(stream, cost, cfg, outdir / "sparsifier.png")]
    return Summary(tables=tables, figures=figures, claims=claims, notes=_notes(cfg))


def _claim_eps(stream: list[Result], cfg: SparsifierConfig) -> Claim:
    eps_max = _vals(stream, "eps_hat_max")
    drift = [a - b for a, b in zip(_vals(stream, "eps_hat_last"), _vals(stream, "eps_hat_first"),
                                   strict=True)]
    frac = [e / d for e, d in zip(_vals(stream, "edges"), _vals(stream, "dense_edges"),
                                  strict=True)]
    text = (f"(1) The dynamic sparsifier stays a (1 ± ε) spectral sparsifier, ε = {cfg.eps}: "
            f"exact ε̂ ≤ ε at every checkpoint (every {cfg.check_every} moves) of a "
            f"{cfg.stream_moves}-move stream in every trial"
            + (" (shorter than the brief's 2 000 moves)" if cfg.stream_moves < 2000 else "")
            + f", while H keeps at most {cfg.max_edge_fraction:.0%} of the complete graph's "
            "edges.")
    if not eps_max:
        return Claim(text=text, evidence="no stream trials",
                     verdict=not_acting(bound_holds([0.0], 0.0), "no stream trials"))
    cells = {}
    for prob in dict.fromkeys(r.trial.problem for r in stream):
        rs = [r for r in stream if r.trial.problem == prob]
        f = max(e / d for e, d in zip(_vals(rs, "edges"), _vals(rs, "dense_edges"),
                                      strict=True))
        cell = bound_holds(_vals(rs, "eps_hat_max"), cfg.eps)
        if f > cfg.max_edge_fraction and cell.held:  # a violation is one, dense or not
            cell = not_acting(cell, f"H keeps up to {f:.0%} of the n(n−1)/2 edges "
                              f"(> {cfg.max_edge_fraction:.0%}) on {prob} at n = {cfg.stream_n}: "
                              "it barely sparsifies, so a small ε̂ says little about the "
                              "sampling")
        cells[prob] = cell
    # one cell per point cloud (issue 23): a cloud on which H stays dense at the largest n of
    # an exact ε̂ (the 3-D swiss roll keeps ~97 % of the pairs at n = 3 000) cannot decide
    # the claim, and every cloud must hold
    verdict = next(iter(cells.values())) if len(cells) == 1 else all_of(cells)
    return Claim(
        text=text,
        evidence=f"max ε̂ over checkpoints and trials {max(eps_max):.4g} (per trial "
                 f"{_fmt(eps_max)}); uniform sampling with the same draws "
                 f"{_fmt(_vals(stream, 'eps_uniform'))}; drift ε̂ end − start {_fmt(drift)}; "
                 f"|E(H)| / n(n−1)/2 = {_fmt(frac)}; n = {cfg.stream_n}",
        verdict=verdict)


def _slope_verdict(cost: list[Result], ys: list[float], band: tuple[float, float]):
    """``slope`` of log ys on log n over the (n, seed) points; with fewer than three distinct
    n, ``within`` on the per-seed two-point slopes (no bootstrap over two x values)."""
    ns = _vals(cost, "n")
    if len(set(ns)) >= 3:
        return slope(ns, ys, band=band, log=True)
    per_seed = []
    for s in sorted({r.trial.seed for r in cost}):
        idx = [i for i, r in enumerate(cost) if r.trial.seed == s]
        if len({ns[i] for i in idx}) >= 2:
            per_seed.append(_slope([ns[i] for i in idx], [ys[i] for i in idx]))
    return within(per_seed, *band)


def _cost_fractions(cost: list[Result]) -> dict[int, float]:
    """The largest |E(H)| / n(n−1)/2 over seeds at each n of the cost trials."""
    out: dict[int, float] = {}
    for r in cost:
        n = int(r.metrics["n"])
        out[n] = max(out.get(n, 0.0), float(r.metrics["edges"]) / (n * (n - 1) / 2))
    return out


def _sparse_guard(verdict, cost: list[Result], cfg: SparsifierConfig):
    """A slope over sizes at which H keeps most pairs measures the exact (all-edges) regime,
    not the sampling: such a claim is inconclusive (``not_acting``)."""
    dense = {n: f for n, f in _cost_fractions(cost).items() if f > cfg.max_edge_fraction}
    if not dense:
        return verdict
    return not_acting(verdict, "H keeps more than " f"{cfg.max_edge_fraction:.0%} of the pairs at "
                      + ", ".join(f"n = {n} ({f:.0%})" for n, f in sorted(dense.items()))
                      + ": the slope there is that of the exact regime")


def _claim_update(cost: list[Result], cfg: SparsifierConfig, slopes: dict) -> Claim:
    ns = sorted({int(r.trial.params["n"]) for r in cost})
    upd, reb = _vals(cost, "update_kernel_evals"), _vals(cost, "rebuild_kernel_evals")
    text = (f"(2) Update cost grows far slower than a rebuild: the log-log slope in n of "
            f"kernel evaluations per move is below {cfg.update_slope_max:g} and below "
            f"{cfg.rebuild_slope_factor:g} × the rebuild's slope (n ∈ {ns}).")
    su, sr = slopes["update_kernel_evals"][0], slopes["rebuild_kernel_evals"][0]
    evidence = (f"pooled slopes: update {su:.3f}, rebuild {sr:.3f}; wall time per move "
                f"{slopes['update_wall_s'][0]:.3f} vs rebuild {slopes['rebuild_wall_s'][0]:.3f} "
                "(wall times of trials that ran concurrently: orientation only, the verdict "
                "uses the deterministic counts)")
    if min(upd + reb, default=0.0) <= 0:
        return Claim(text=text, evidence=evidence, verdict=not_acting(
            bound_holds([0.0], 0.0), "some n has no kernel evaluation per move or rebuild: "
            "no log-log slope"))
    ratio = [u / r ** cfg.rebuild_slope_factor for u, r in zip(upd, reb, strict=True)]
    v_u = _slope_verdict(cost, upd, (-np.inf, cfg.update_slope_max))
    v_r = _slope_verdict(cost, ratio, (-np.inf, 0.0))
    verdict = _sparse_guard(
        all_of({f"update slope < {cfg.update_slope_max:g}": v_u,
                f"update slope − {cfg.rebuild_slope_factor:g} × rebuild slope < 0": v_r}),
        cost, cfg)
    return Claim(text=text, evidence=f"{evidence}; {v_u.describe()}; update − "
                 f"{cfg.rebuild_slope_factor:g}·rebuild: {v_r.describe()}", verdict=verdict)


def _claim_edges(cost: list[Result], cfg: SparsifierConfig) -> Claim:
    ns = sorted({int(r.trial.params["n"]) for r in cost})
    edges = _vals(cost, "edges")
    v = _sparse_guard(_slope_verdict(cost, edges, (-np.inf, cfg.edge_slope_max)), cost, cfg)
    fracs = _cost_fractions(cost)
    last = [e / ns[-1] for e in _vals([r for r in cost if int(r.trial.params["n"]) == ns[-1]],
                                      "edges")]
    return Claim(
        text=f"(3) The sparsifier has O(n polylog n) edges: log-log slope of |E(H)| in n ≤ "
             f"{cfg.edge_slope_max:g}.",
        evidence=f"{v.describe()}; |E(H)|/n at n = {ns[-1]}: {_fmt(last)} (complete graph: "
                 f"{(ns[-1] - 1) / 2:g}); largest |E(H)| / n(n−1)/2 per n: "
                 + ", ".join(f"{n}: {f:.3f}" for n, f in sorted(fracs.items())),
        verdict=v)


def _notes(cfg: SparsifierConfig) -> list[str]:
    return [
        "The paper is theory: n^{o(1)} hides 2^{O(d)} and polylog factors.  Here: a quadtree "
        "(not a compressed one) over a fixed root box, WSPD by the Callahan–Kosaraju recursion "
        "with cell geometry, sample sizes m_AB = ⌈c·ρ·(|A|+|B|)·ln n/ε²⌉ with ρ computed per "
        "pair from its distance range (the brief's inferred formula), c = "
        f"{cfg.oversample} (c = 1 keeps every edge at these n); quadtree leaves of at most "
        f"{cfg.leaf_size} points, pairs of unseparated leaves kept exactly.",
        "Sparse regime: each claim is inconclusive where H keeps more than "
        f"{cfg.max_edge_fraction:.0%} of the n(n−1)/2 pairs (the cost tables give the fraction "
        "per n); n = 10⁵ needs ~2.8·10⁸ draws at these constants and is not run here.",
        "Resampling reads E.5/E.6 as: redraw only the draws that used a point that left a side, "
        "let a point entering a side take over each draw with probability 1/|A'|, resize m_AB, "
        "keep one lazy scale per pair.  Draws touching p are found by a vectorised scan of the "
        "pair's arrays (no per-point index), so wall time has an O(m_AB) term per touched pair; "
        "kernel evaluations and draws changed are counted exactly.",
        "Not run: the JL projection (implemented, jl_dim; tested, not in this experiment), the "
        "adaptive-adversary net (App. I), the L·v / L^†b sketches (App. F/G), the "
        "Spielman–Srivastava and kNN baselines; the failure-probability (δ) dependence is not "
        "separable here because sample sizes use ln n only.",
        f"Kernel (1 + t/σ²)^-2 with σ = {cfg.sigma}; WSPD separation s = {cfg.separation}; "
        "moves are clipped into the root box (the points' box widened by 25 %).",
        "Metrics ending in _wall_s are wall-clock times (not deterministic); all counts are.",
    ]


def _plot(stream: list[Result], cost: list[Result], cfg: SparsifierConfig, path: Path) -> Figure:
    fig, ax = grid(3)
    eps_curves: dict[str, dict[int, list[float]]] = {}
    for r in stream:
        cells = eps_curves.setdefault(r.trial.problem, {})
        for k in (k for k in r.metrics if k.startswith("eps_hat_") and k[8:].isdigit()):
            cells.setdefault(int(k[8:]) * cfg.check_every, []).append(float(r.metrics[k]))
    last = max((x for c in eps_curves.values() for x in c), default=cfg.check_every)
    line_panel(ax[0], eps_curves, xlabel="moves", ylabel="relative spectral error ε̂",
               title=f"ε̂ along the move stream (n = {cfg.stream_n})", xlog=False, ylog=False,
               reference={f"target ε = {cfg.eps:g}": ([0, last], [cfg.eps, cfg.eps])})

    def per_n(key: str, scale: float = 1.0) -> dict[int, list[float]]:
        out: dict[int, list[float]] = {}
        for r in cost:
            out.setdefault(int(r.trial.params["n"]), []).append(scale * float(r.metrics[key]))
        return out

    ns = sorted({int(r.trial.params["n"]) for r in cost})
    line_panel(ax[1], {"kernel evals / move": per_n("update_kernel_evals"),
                       "kernel evals / rebuild": per_n("rebuild_kernel_evals"),
                       "|E(H)|": per_n("edges")},
               xlabel="n", ylabel="count", title="Update vs rebuild cost and |E(H)| (blobs2)",
               xlog=True, ylog=True,
               reference={"n(n−1)/2 (complete graph)": (ns, [n * (n - 1) / 2 for n in ns])})
    line_panel(ax[2], {"s / move": per_n("update_wall_s"),
                       "s / rebuild": per_n("rebuild_wall_s")},
               xlabel="n", ylabel="wall time (s)", title="Wall time (orientation only)",
               xlog=True, ylog=True)
    for a in ax[1:]:  # tick the measured sizes only (log axes over few n)
        a.set_xticks(ns, [f"{n:g}" for n in ns])
        a.set_xticks([], minor=True)
    return save(fig, path, "Left: ε̂ at the stream checkpoints per point cloud; middle: kernel "
                "evaluations per move vs per rebuild and |E(H)| against n (log-log; dashed: "
                "the complete graph's n(n−1)/2 edges); right: wall time per move and per "
                "rebuild (log-log; concurrent trials, orientation only); mean ± 95 % CI over "
                "seeds")


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Cao et al. (ICLR 2026) DynamicGeoSpar at CPU scale: a quadtree WSPD spectral "
        "sparsifier of the inverse-polynomial kernel graph, updated under oblivious point-move "
        "streams; exact relative spectral error from the generalised eigenproblem along the "
        "stream, update cost (pairs touched, kernel evaluations, wall time) vs n against a "
        "static rebuild, and |E(H)| vs n.  NumPy/SciPy on the CPU whatever --device says."),
)
