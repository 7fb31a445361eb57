"""Tests of the graphs area: WSPD invariants, (1 ± ε) quadratic forms, unbiasedness of L_H,
dynamic = fresh build, kernel-graph references, the reproduction's smoke preset and the benchmark
rows."""

from __future__ import annotations

import importlib.util
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.graphs import (
    DenseSparsifierWarning,
    DynamicSpectralSparsifier,
    GaussianKernel,
    InversePolynomialKernel,
    SpectralSparsifier,
    gaussian_mixture,
    kernel_laplacian,
    kernel_laplacian_matvec,
    move_stream,
    padded_bounds,
    relative_spectral_error,
    uniform_edge_sample,
)
from tests.conftest import REPO

KERNEL = InversePolynomialKernel(sigma=2.0)


def _points(n, d=2, seed=0):
    return gaussian_mixture(n, d, seed=seed)


# -- kernel graph references -------------------------------------------------------------------

def test_kernel_laplacian_matches_the_double_loop_and_blocked_matvec():
    x = np.random.default_rng(0).normal(size=(30, 3))
    k = InversePolynomialKernel(sigma=1.3, q=2.0)
    w = np.zeros((30, 30))
    for i, j in itertools.product(range(30), repeat=2):
        if i != j:
            w[i, j] = (1 + np.sum((x[i] - x[j]) ** 2) / 1.3**2) ** -2
    lap = np.diag(w.sum(1)) - w
    np.testing.assert_allclose(kernel_laplacian(x, k), lap, atol=1e-12)
    v = np.random.default_rng(1).normal(size=(30, 4))
    np.testing.assert_allclose(kernel_laplacian_matvec(x, k, v, block=7), lap @ v, atol=1e-10)
    g = GaussianKernel(sigma=0.7)
    assert g(x[:1], x[1:2])[0] == pytest.approx(np.exp(-np.sum((x[0] - x[1]) ** 2) / 0.49))


def test_kernel_ratio_bounds_the_weights_over_a_distance_range():
    k = InversePolynomialKernel(sigma=1.0, q=2.0)
    d = np.linspace(0.5, 2.0, 50)
    w = k.profile(d**2)
    assert w.max() / w.min() == pytest.approx(k.ratio(0.5, 2.0))


# -- the WSPD ----------------------------------------------------------------------------------

@given(n=st.integers(2, 60), d=st.integers(1, 3), s=st.sampled_from([1.0, 2.0, 4.0]),
       leaf=st.sampled_from([1, 3, 16]), seed=st.integers(0, 10_000))
def test_wspd_covers_every_pair_exactly_once_and_pairs_are_well_separated(n, d, s, leaf, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[: n // 4] = x[0]  # coincident points land in one max-depth leaf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DenseSparsifierWarning)  # tiny n: H is dense
        h = SpectralSparsifier(x, KERNEL, separation=s, max_depth=12, seed=seed,
                               leaf_size=leaf)
    # leaves are the nodes of <= leaf_size points (or at max_depth), as in a fresh build
    for node in h.nodes.values():
        assert bool(node.children) == (node.bag.size > leaf and node.depth < 12)
    count = np.zeros((n, n), dtype=int)
    for a, b, kind in h.wspd():
        if kind == "self":
            assert np.array_equal(np.sort(a), np.sort(b))
            for i, j in itertools.combinations(a, 2):
                count[min(i, j), max(i, j)] += 1
            continue
        assert not set(a.tolist()) & set(b.tolist())
        for i, j in itertools.product(a, b):
            count[min(i, j), max(i, j)] += 1
        if kind == "sep":
            pa, pb = h.y[a], h.y[b]
            diam = max(np.ptp(pa, axis=0) @ np.ptp(pa, axis=0),
                       np.ptp(pb, axis=0) @ np.ptp(pb, axis=0)) ** 0.5
            dist = np.min(np.linalg.norm(pa[:, None] - pb[None], axis=-1))
            assert diam <= dist / s + 1e-9
    iu = np.triu_indices(n, 1)
    assert np.all(count[iu] == 1)


def test_pairs_are_exact_below_the_sample_size_and_weighted_otherwise():
    x = _points(600)
    h = SpectralSparsifier(x, KERNEL, eps=0.5, separation=2.0, oversample=0.05, seed=0)
    sampled = [p for p in h.pairs.values() if not p.exact]
    assert sampled, "at n = 600 some pairs must be sampled"
    for p in sampled:
        na, nb = h.nodes[p.key_a].bag.size, h.nodes[p.key_b].bag.size
        assert p.ia.size == h.sample_size(na, nb, p.rho) < na * nb
        assert p.scale == pytest.approx(na * nb / p.ia.size)
    for p in h.pairs.values():
        if p.exact:
            assert p.scale == 1.0
    np.testing.assert_allclose(h.laplacian() @ np.ones(600), 0.0, atol=1e-8)


# -- spectral quality --------------------------------------------------------------------------

def test_quadratic_forms_within_one_plus_minus_eps_over_seeds():
    """Random probes vᵀL_H v / vᵀL_G v within 1 ± ε (ε = 0.5, the sample sizes' target) for
    every seed but at most one of six (the guarantee is w.h.p., not sure)."""
    x = _points(300, seed=3)
    lap_g = kernel_laplacian(x, KERNEL)
    probes = np.random.default_rng(0).normal(size=(300, 30))
    probes -= probes.mean(0)
    qg = np.einsum("ij,ij->j", probes, lap_g @ probes)
    fails = 0
    for seed in range(6):
        h = SpectralSparsifier(x, KERNEL, eps=0.5, separation=2.0, oversample=0.05, seed=seed)
        ratio = np.einsum("ij,ij->j", probes, h.laplacian() @ probes) / qg
        fails += int(np.any(np.abs(ratio - 1) > 0.5))
    assert fails <= 1


def test_relative_spectral_error_matches_a_known_scaling_and_detects_a_cut():
    x = _points(80)
    lap = kernel_laplacian(x, KERNEL)
    assert relative_spectral_error(1.2 * lap, lap) == pytest.approx(0.2, abs=1e-8)
    assert relative_spectral_error(0.7 * lap, lap) == pytest.approx(0.3, abs=1e-8)
    w = -lap.copy()
    w[0, 1:] = w[1:, 0] = 0.0  # cut point 0 off: L_H is singular on a direction L_G is not
    np.fill_diagonal(w, 0.0)
    cut = np.diag(w.sum(1)) - w
    assert relative_spectral_error(cut, lap) > 0.99


def test_sparsifier_beats_uniform_sampling_with_the_same_budget():
    x = _points(300, seed=1)
    lap_g = kernel_laplacian(x, KERNEL)
    h = SpectralSparsifier(x, KERNEL, eps=0.5, separation=2.0, oversample=0.05, seed=0)
    e_h = relative_spectral_error(h.laplacian(), lap_g)
    e_u = relative_spectral_error(uniform_edge_sample(x, KERNEL, h.num_samples(), 0), lap_g)
    assert e_h < 0.5 and e_h < e_u / 3


def _mean_laplacian(make, reps):
    acc = None
    for r in range(reps):
        lap = make(r).laplacian().toarray()
        acc = lap if acc is None else acc + lap
    return acc / reps


def test_laplacian_is_unbiased_for_a_static_build_with_and_without_jl():
    """E[L_H] = L_G: the average of independent builds converges at the Monte-Carlo rate."""
    # a large eps, s = 1 and a small c make most pairs sampled: randomness to average
    # (a 2-dim JL of 4-dim points contracts some distances ~100×, which the sample sizes absorb
    # by oversampling; a flat kernel, q = 0.1, keeps some pairs sampled all the same)
    # (leaf_size = 1: the plain quadtree, whose many small pairs are sampled here)
    kw = {"eps": 0.9, "separation": 1.0, "oversample": 0.01, "leaf_size": 1}
    flat = InversePolynomialKernel(sigma=2.0, q=0.1)
    for x, jl, k in ((gaussian_mixture(100, 2, seed=2), None, KERNEL),
                     (gaussian_mixture(100, 4, seed=2), 2, flat)):
        lap_g = kernel_laplacian(x, k)

        def make(r, x=x, jl=jl, k=k):
            return SpectralSparsifier(x, k, jl_dim=jl, seed=r, **kw)

        assert sum(not p.exact for p in make(0).pairs.values()) > 50
        one = np.abs(make(0).laplacian().toarray() - lap_g).sum()
        mean = np.abs(_mean_laplacian(make, 60) - lap_g).sum()
        assert mean < one / 3  # √60 ≈ 7.7: an unbiased mean shrinks the error ~7.7×


# -- the dynamic structure ---------------------------------------------------------------------

def _dynamic_after_moves(x, moves, seed, **kw):
    bounds = padded_bounds(x)
    h = DynamicSpectralSparsifier(x, KERNEL, bounds=bounds, seed=seed, **kw)
    for i, new in move_stream(x, moves, "mixed", seed=99, bounds=bounds):
        h.move(i, new)
    return h, bounds


@pytest.mark.parametrize(("seed", "leaf"), [(0, 1), (1, 16), (2, 4)])
def test_dynamic_wspd_and_sample_sizes_equal_a_fresh_build(seed, leaf):
    """Moves split full leaves and collapse nodes that fall to <= leaf_size points; the tree,
    the pairs (and their kinds) and the sample sizes equal those of a fresh build."""
    x = _points(300, seed=seed)
    kw = {"eps": 0.5, "separation": 2.0, "oversample": 0.05, "leaf_size": leaf}
    h, bounds = _dynamic_after_moves(x, 60, seed, **kw)
    fresh = SpectralSparsifier(h.x, KERNEL, bounds=bounds, seed=7, **kw)
    assert set(h.pairs) == set(fresh.pairs)
    for key, p in fresh.pairs.items():
        q = h.pairs[key]
        assert (q.exact, q.ia.size, q.kind) == (p.exact, p.ia.size, p.kind)
        assert q.scale == pytest.approx(p.scale)
    # every stored draw lies in its pair and carries the current kernel value
    for p in h.pairs.values():
        a, b = h.nodes[p.key_a].bag, h.nodes[p.key_b].bag
        assert all(i in a for i in p.ia) and all(j in b for j in p.ib)
        np.testing.assert_allclose(p.kv, KERNEL(h.x[p.ia], h.x[p.ib]))
    # the quadtree equals the fresh one node by node
    assert {k: sorted(n.bag.array().tolist()) for k, n in h.nodes.items()} == \
        {k: sorted(n.bag.array().tolist()) for k, n in fresh.nodes.items()}


def test_dynamic_laplacian_is_unbiased_after_moves():
    x = gaussian_mixture(100, 2, seed=4)
    kw = {"eps": 0.9, "separation": 1.0, "oversample": 0.01, "leaf_size": 1}
    runs = [_dynamic_after_moves(x, 8, seed=r, **kw)[0] for r in range(45)]
    lap_g = kernel_laplacian(runs[0].x, KERNEL)
    mean = sum(h.laplacian().toarray() for h in runs) / len(runs)
    one = np.abs(runs[0].laplacian().toarray() - lap_g).sum()
    assert np.abs(mean - lap_g).sum() < one / 2.5  # √45 ≈ 6.7


def test_move_touches_few_pairs_and_rejects_bad_input():
    x = _points(800)
    h = DynamicSpectralSparsifier(x, KERNEL, eps=0.5, separation=2.0, oversample=0.05)
    stats = h.move(5, x[17] + 0.01)
    assert 0 < stats.pairs_touched < len(h.pairs) / 10
    assert stats.kernel_evals < h.build_stats.kernel_evals / 20
    with pytest.raises(ValueError, match="x_new"):
        h.move(0, np.array([1e9, 0.0]))
    with pytest.raises(ValueError, match="x_new"):
        h.move(0, np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="i:"):
        h.move(800, x[0])
    with pytest.raises(TypeError, match="^i:"):
        h.move(2.7, x[0])  # not silently truncated to point 2
    with pytest.raises(TypeError, match="^x_new:"):
        h.move(0, ["a", "b"])


def test_constructor_validates_arguments():
    x = _points(20)
    with pytest.raises(ValueError, match="eps"):
        SpectralSparsifier(x, KERNEL, eps=1.5)
    with pytest.raises(ValueError, match="points"):
        SpectralSparsifier(x[:1], KERNEL)
    with pytest.raises(ValueError, match="sigma"):
        InversePolynomialKernel(sigma=0.0)
    with pytest.raises(ValueError, match="kind"):
        next(move_stream(x, 1, "teleports", 0))


class _Cauchy:
    """A user's kernel: K = 1/(1 + ‖x − y‖²), the protocol's three methods and nothing else."""

    def profile(self, t):
        return 1.0 / (1.0 + np.asarray(t, dtype=float))

    def ratio(self, dmin, dmax):
        return (1.0 + dmax**2) / (1.0 + dmin**2)

    def __call__(self, x, y):
        return self.profile(np.sum((np.asarray(x) - np.asarray(y)) ** 2, axis=1))


class _Negative(_Cauchy):
    def __call__(self, x, y):
        return -super().__call__(x, y)


def test_a_users_point_cloud_and_kernel_are_accepted_and_other_input_is_rejected():
    x = _points(120)
    # a list of lists and a user-defined kernel object work as before; q = 1, σ = 1 is the
    # same kernel, so the same seed gives the same H
    mine = SpectralSparsifier(x.tolist(), _Cauchy(), seed=3)
    ours = SpectralSparsifier(x, InversePolynomialKernel(sigma=1.0, q=1.0), seed=3)
    np.testing.assert_allclose(mine.laplacian().toarray(), ours.laplacian().toarray())
    bad = [
        ({"kernel": lambda a, b: np.ones(len(a))}, TypeError, "kernel"),
        ({"kernel": "invpoly"}, TypeError, "kernel"),
        ({"kernel": kernel_laplacian(x, KERNEL)}, TypeError, "kernel"),
        ({"kernel": _Negative()}, ValueError, "kernel"),
        ({"points": [["a", "b"]] * 5}, TypeError, "points"),
        ({"points": x[:, 0]}, ValueError, "points"),
        ({"points": np.where(np.arange(240).reshape(120, 2) == 7, np.nan, x)}, ValueError,
         "points"),
        ({"eps": float("nan")}, ValueError, "eps"),
        ({"eps": True}, TypeError, "eps"),
        ({"separation": -1.0}, ValueError, "separation"),
        ({"oversample": "0.1"}, TypeError, "oversample"),
        ({"leaf_size": 0}, ValueError, "leaf_size"),
        ({"leaf_size": 2.5}, TypeError, "leaf_size"),
        ({"jl_dim": 1.5}, TypeError, "jl_dim"),
        ({"max_depth": 0}, ValueError, "max_depth"),
    ]
    for change, err, name in bad:
        kw = {"points": x, "kernel": KERNEL, **change}
        with pytest.raises(err, match=f"^{name}:"):
            SpectralSparsifier(**kw)


def test_defaults_sparsify_and_a_dense_graph_is_warned_about():
    """Issue 23: the old defaults (s = 4, c = 1) kept 100 % of the pairs at n = 600 and
    n = 3 000.  The defaults must keep under half of them at n = 3 000 (without a warning),
    and an H with more than 90 % of the pairs must say so."""
    x = _points(3000, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DenseSparsifierWarning)
        h = SpectralSparsifier(x, KERNEL)
    assert h.edge_fraction() < 0.5
    # and the sampled bicliques carry a real share of H's draws (the sampling acts)
    assert sum(p.ia.size for p in h.pairs.values() if not p.exact) > 0.25 * h.num_samples()
    with pytest.warns(DenseSparsifierWarning, match="point pairs"):
        tiny = SpectralSparsifier(_points(60), KERNEL)
    assert tiny.edge_fraction() > 0.9


def test_linear_operator_equals_the_sparse_matrix():
    x = _points(200)
    h = SpectralSparsifier(x, KERNEL, eps=0.5, separation=2.0, oversample=0.05)
    v = np.random.default_rng(0).normal(size=200)
    assert sp.issparse(h.laplacian())
    np.testing.assert_allclose(h.linear_operator() @ v, h.laplacian() @ v)
    np.testing.assert_allclose(h.matvec(v), h.laplacian() @ v)
    # |E(H)| counted pair by pair equals the off-diagonal nonzeros of the assembled L_H
    lap = h.laplacian().toarray()
    assert h.num_edges() == np.count_nonzero(np.triu(lap, 1))
    assert h.edge_fraction() == pytest.approx(h.num_edges() / (200 * 199 / 2))


# -- reproduction and benchmark ----------------------------------------------------------------

def test_reproduction_smoke_runs_and_reports_claims(tmp_path):
    from optzoo.graphs.reproduce.dynamic_spectral_sparsifier import REPRODUCTION

    cfg = REPRODUCTION.presets["smoke"]
    assert REPRODUCTION.presets["quick"].seeds >= 3 and REPRODUCTION.presets["full"].seeds >= 5
    results = [Result(t, REPRODUCTION.run_trial(t, "cpu")) for t in REPRODUCTION.trials(cfg)]
    summary = REPRODUCTION.summarize(results, cfg, tmp_path)
    assert len(summary.claims) == 3 and summary.tables
    assert all(c.evidence for c in summary.claims)
    assert [c.verdict.test for c in summary.claims] == ["bound_holds", "all_of", "within"]
    # smoke: one seed and two sizes give no CI; n = 120 keeps nearly every edge
    assert [c.status for c in summary.claims] == ["inconclusive"] * 3
    assert all(f.path.read_bytes()[:4] == b"\x89PNG" for f in summary.figures)
    stream = [r for r in results if r.trial.method == "stream"]
    assert all(r.metrics["same_pairs"] == 1.0 for r in stream)
    with pytest.raises(ConfigError, match="problems"):
        type(cfg)(problems=("nope",))


def _stream_result(seed, eps_max, edges, dense=79800):
    return Result(Trial("stream", "blobs2", seed, {}),
                  {"eps_hat_max": eps_max, "eps_hat_first": eps_max, "eps_hat_last": eps_max,
                   "eps_uniform": 0.9, "edges": edges, "dense_edges": dense})


def test_claim_eps_is_exact_and_needs_a_sparse_graph():
    from optzoo.graphs.reproduce.dynamic_spectral_sparsifier import SparsifierConfig, _claim_eps

    cfg = SparsifierConfig()
    sparse = [_stream_result(s, 0.3, 20000) for s in range(3)]
    assert _claim_eps(sparse, cfg).status == "held"
    # one violation in one trial is a failure of the guarantee
    bad = sparse[:2] + [_stream_result(2, 0.51, 20000)]
    assert _claim_eps(bad, cfg).status == "not held"
    # H = G (every edge kept, ε̂ = 0) passed the old rule; it does not sparsify
    dense = [_stream_result(s, 0.0, 79800) for s in range(3)]
    assert _claim_eps(dense, cfg).status == "inconclusive"
    # one cell per point cloud: a dense cloud makes the claim inconclusive, a violation on
    # any cloud makes it fail
    roll = [Result(Trial("stream", "swissroll3", r.trial.seed, {}), r.metrics) for r in dense]
    two = _claim_eps(sparse + roll, cfg)
    assert two.verdict.test == "all_of" and two.status == "inconclusive"
    assert dict(two.verdict.cells)["blobs2"].verdict == "held"
    assert _claim_eps(bad + roll, cfg).status == "not held"
    # ε̂ > ε is a failure of the guarantee even where H is dense
    assert _claim_eps(dense[:2] + [_stream_result(2, 0.7, 79800)], cfg).status == "not held"


def _cost_results(update_slope, rebuild_slope, noise=0.0, ns=(250, 500, 1000, 2000)):
    rng = np.random.default_rng(0)
    out = []
    for n in ns:
        for s in range(3):
            jitter = float(np.exp(noise * rng.standard_normal()))
            out.append(Result(Trial("cost", "blobs2", s, {"n": n}), {
                "n": n, "update_kernel_evals": 10.0 * n ** update_slope * jitter,
                "rebuild_kernel_evals": 5.0 * n ** rebuild_slope,
                "edges": 3.0 * n ** 1.2 * jitter, "update_wall_s": 1e-3,
                "rebuild_wall_s": 1e-3 * n, "update_pairs_touched": 5.0}))
    return out


def test_claim_update_slopes_need_their_ci_inside_the_band():
    from optzoo.graphs.reproduce.dynamic_spectral_sparsifier import (
        SparsifierConfig,
        _claim_edges,
        _claim_update,
        _slope_ci,
    )

    cfg = SparsifierConfig()

    def claim(cost):
        slopes = {k: _slope_ci(cost, k) for k in ("update_kernel_evals", "rebuild_kernel_evals",
                                                  "update_wall_s", "rebuild_wall_s")}
        return _claim_update(cost, cfg, slopes)

    assert claim(_cost_results(0.1, 1.1, noise=0.02)).status == "held"
    # below 0.5 but not below half the rebuild's slope 0.6
    assert claim(_cost_results(0.4, 0.6, noise=0.01)).status == "not held"
    # a pooled point estimate under 0.5 (the old rule) with noisy points: the CI crosses 0.5
    noisy = _cost_results(0.45, 1.1, noise=0.6)
    assert _slope_ci(noisy, "update_kernel_evals")[0] < 0.5
    assert claim(noisy).status != "held"
    assert _claim_edges(_cost_results(0.1, 1.1, noise=0.01), cfg).status == "held"
    assert _claim_edges(_cost_results(0.1, 1.1, noise=0.01), type(cfg)(edge_slope_max=1.1)
                        ).status == "not held"


def test_cost_claims_need_a_sparse_graph_at_every_size():
    """Issue 23: slopes over sizes at which H keeps most pairs are slopes of the exact regime;
    the same slopes that hold on a sparse H are inconclusive when one size keeps > 50 %."""
    from optzoo.graphs.reproduce.dynamic_spectral_sparsifier import (
        SparsifierConfig,
        _claim_edges,
        _claim_update,
        _slope_ci,
    )

    cfg = SparsifierConfig()
    cost = _cost_results(0.1, 1.1, noise=0.01)
    keys = ("update_kernel_evals", "rebuild_kernel_evals", "update_wall_s", "rebuild_wall_s")
    slopes = {k: _slope_ci(cost, k) for k in keys}
    assert _claim_update(cost, cfg, slopes).status == "held"
    assert _claim_edges(cost, cfg).status == "held"
    dense = [Result(r.trial, {**r.metrics, "edges": 0.6 * 250 * 249 / 2})
             if r.metrics["n"] == 250 else r for r in cost]
    assert _claim_update(dense, cfg, slopes).status == "inconclusive"
    claim = _claim_edges(dense, cfg)
    assert claim.status == "inconclusive" and "n = 250 (60%)" in claim.verdict.reason


def test_benchmark_rows_at_tiny_size(monkeypatch):
    path = REPO / "benchmarks" / "bench_graphs.py"
    spec = importlib.util.spec_from_file_location("_bench_graphs_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, value in (("N_UPDATE", 150), ("N_MATVEC", 150), ("REPEATS", 1), ("MOVES", 2)):
        monkeypatch.setattr(module, name, value)
    for fn in module.BENCHMARKS:
        row = fn()
        assert {"name", "method", "peer", "method_s", "peer_s"} <= set(row)
        assert row["method_s"] > 0 and row["peer_s"] > 0
