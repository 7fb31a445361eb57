"""DDRO, MGDA's closed form against a brute-force min-norm search, training and MDR steps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from torch.func import functional_call

from optzoo.recsys import (
    DiversitySettings,
    MatrixFactorization,
    NeuMF,
    TrainSet,
    balance,
    ddro,
    fixed_beta_train,
    genre_jaccard,
    hard_topk_diversity,
    mdr_meta_gradient,
    mgda_beta,
    pairwise_diversity,
    score_all,
    synthetic_ratings,
    temporal_split,
    train,
)
from optzoo.recsys import diversity_topk as dt


@pytest.mark.parametrize("seed", range(6))
def test_mgda_beta_is_the_brute_force_min_norm_point(seed):
    g = torch.Generator().manual_seed(seed)
    g1 = torch.randn(7, generator=g, dtype=torch.float64)
    g2 = torch.randn(7, generator=g, dtype=torch.float64) * (0.1 + seed)
    if seed == 5:
        g2 = 3.0 * g1  # aligned: the min-norm point is the shorter vector (β = 1)
    betas = np.linspace(0, 1, 200_001)
    norms = [float((b * g1 + (1 - b) * g2).norm()) for b in betas[::50]]
    coarse = betas[::50][int(np.argmin(norms))]
    fine = betas[(betas > coarse - 1e-3) & (betas < coarse + 1e-3)]
    best = fine[int(np.argmin([float((b * g1 + (1 - b) * g2).norm()) for b in fine]))]
    got = mgda_beta(g1, g2)
    assert got == pytest.approx(best, abs=2e-5)
    # the paper's form b(b − aρ)/(a² + b² − 2abρ) where it is inside [0, 1]
    a, b = float(g1.norm()), float(g2.norm())
    rho = float(g1 @ g2) / (a * b)
    paper = b * (b - a * rho) / (a * a + b * b - 2 * a * b * rho)
    assert got == pytest.approx(min(1.0, max(0.0, paper)), abs=1e-12)
    if 0 < got < 1:  # interior: both first-order decreases are equal (paper, Lemma 3)
        d = got * g1 + (1 - got) * g2
        assert float(d @ g1) == pytest.approx(float(d @ g2), rel=1e-9, abs=1e-12)


def test_mgda_beta_edge_cases():
    g = torch.tensor([1.0, 2.0])
    assert mgda_beta(g, g) == 0.5
    with pytest.raises(ValueError, match="g_rel"):
        mgda_beta(torch.tensor([float("nan"), 0.0]), g)


def test_pairwise_diversity_matches_the_pair_sum():
    g = torch.Generator().manual_seed(0)
    s = torch.rand(6, 6, generator=g, dtype=torch.float64)
    s = (s + s.T) / 2
    s.fill_diagonal_(1.0)
    lt = torch.rand(2, 6, generator=g, dtype=torch.float64)
    k = 3
    want = [2 / (k * (k - 1)) * sum(lt[u, i] * lt[u, j] * (1 - s[i, j])
                                     for i, j in itertools.combinations(range(6), 2))
            for u in range(2)]
    np.testing.assert_allclose(pairwise_diversity(lt, 1 - s, k).numpy(), want)


def _small(seed=0):
    d = synthetic_ratings(n_users=60, n_items=80, n_genres=6, seed=seed)
    tr = TrainSet.from_ratings(d, ~temporal_split(d))
    return d, tr, torch.as_tensor(genre_jaccard(d.item_genres), dtype=torch.float32)


def test_ddro_tends_to_the_hard_diversity_with_sharp_ranks():
    d, tr, sim = _small()
    torch.manual_seed(0)
    m = MatrixFactorization(d.n_users, d.n_items, 8, init_std=1.0)
    users = torch.arange(20)
    with torch.no_grad():
        sc = m(users).double()
    seen = tr.seen[users]
    hard = float(hard_topk_diversity(sc, seen, sim, 5))
    # with near-hard ranks and a sharp τ, σ_τ(k − z̃) is 1 on ranks < k, 1/2 on rank k (σ(0))
    # and 0 beyond: DDRO = the k − 1 inner items' pairs plus half of the k-th item's pairs
    s = DiversitySettings(k=5, pool=30, eps_times_n=1e-6, tau=1e-3)
    soft = float(ddro(sc, seen, sim, s))
    hard4 = float(hard_topk_diversity(sc, seen, sim, 4)) * (4 * 3) / (5 * 4)
    assert soft == pytest.approx(hard4 + _boundary_term(sc, seen, sim, 5), abs=1e-6)
    assert 0 < soft < hard + 1e-9


def _boundary_term(sc, seen, sim, k):
    """The k-th item enters with weight 1/2 (σ(0)): its pairs with the first k − 1 items."""
    idx = torch.topk(sc.masked_fill(seen, -torch.inf), k, 1).indices
    tot = 0.0
    for row in idx:
        tot += sum(0.5 * (1 - float(sim[row[-1], row[j]])) for j in range(k - 1))
    return 2 / (k * (k - 1)) * tot / idx.shape[0]


@pytest.mark.parametrize("model_cls", [MatrixFactorization, NeuMF])
def test_diversity_only_training_raises_hard_ild(model_cls):
    d, tr, sim = _small(1)
    torch.manual_seed(0)
    m = model_cls(d.n_users, d.n_items, 8)
    s = DiversitySettings(k=5, pool=20, div_users=30, batch_size=128)
    train(m, tr, sim, 60, method="relevance", settings=s, lr=1e-2)
    before = float(hard_topk_diversity(score_all(m, d.n_users), tr.seen, sim, 5))
    h = fixed_beta_train(m, tr, sim, 40, 0.0, settings=s, lr=1e-2)
    after = float(hard_topk_diversity(score_all(m, d.n_users), tr.seen, sim, 5))
    assert after > before + 0.02
    assert all(b == 0.0 for b in h["beta"])


def test_ddt_and_mdr_steps_are_finite_and_deterministic():
    d, tr, sim = _small(2)
    s = DiversitySettings(k=5, pool=20, div_users=16, batch_size=64)
    outs = []
    for _ in range(2):
        torch.manual_seed(3)
        m = MatrixFactorization(d.n_users, d.n_items, 8)
        h1 = train(m, tr, sim, 5, method="ddt", settings=s, generator=torch.Generator()
                   .manual_seed(0))
        h2 = train(m, tr, sim, 3, method="mdr", settings=s, generator=torch.Generator()
                   .manual_seed(1))
        assert all(0.0 <= b <= 1.0 for b in h1["beta"] + h2["beta"])
        assert all(math.isfinite(v) for v in h1["rel"] + h1["div"] + h2["div"])
        outs.append(score_all(m, d.n_users))
    assert torch.equal(outs[0], outs[1])


def test_relevance_training_learns_the_ranking():
    d, tr, sim = _small(3)
    torch.manual_seed(0)
    m = MatrixFactorization(d.n_users, d.n_items, 8)
    s = DiversitySettings(k=5, pool=20, batch_size=128)
    h = train(m, tr, sim, 150, method="relevance", settings=s, lr=1e-2)
    assert np.mean(h["rel"][-20:]) < 0.5 * np.mean(h["rel"][:5])


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="pool"):
        DiversitySettings(k=10, pool=5)
    with pytest.raises(ValueError, match="tau"):
        DiversitySettings(tau=0.0)
    d, tr, sim = _small()
    m = MatrixFactorization(d.n_users, d.n_items, 4)
    with pytest.raises(ValueError, match="method"):
        train(m, tr, sim, 1, method="dgrec")
    with pytest.raises(ValueError, match="beta"):
        train(m, tr, sim, 1, beta=1.5)


# -- gradient scale (issue 23) and MDR's meta-gradient --------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_normalised_mgda_is_the_bisector_of_the_unit_gradients(seed):
    g = torch.Generator().manual_seed(seed)
    g1 = torch.randn(9, generator=g, dtype=torch.float64)
    g2 = 233.0 * torch.randn(9, generator=g, dtype=torch.float64)  # issue 23's scale gap
    raw = balance(g1, g2, "none")
    # raw MGDA: the min-norm point sits next to the short vector, β* = b(b − aρ)/(a²+b²−2abρ)
    a, b = float(g1.norm()), float(g2.norm())
    rho = float(g1 @ g2) / (a * b)
    want = min(1.0, max(0.0, b * (b - a * rho) / (a * a + b * b - 2 * a * b * rho)))
    assert raw.beta == pytest.approx(want, abs=1e-12) and raw.beta > 0.99
    assert raw.div_share == pytest.approx((1 - want) * b / (want * a), rel=1e-9)
    nb = balance(g1, g2, "l2")
    assert nb.beta == pytest.approx(0.5, abs=1e-12) and nb.beta_raw == raw.beta
    assert nb.w_rel == pytest.approx(0.5 / a) and nb.w_div == pytest.approx(0.5 / b)
    assert nb.div_share == pytest.approx(1.0)
    assert nb.ratio == pytest.approx(b / a) and nb.cos == pytest.approx(rho)
    d = nb.w_rel * g1 + nb.w_div * g2  # equal first-order decrease of both normalised losses
    assert float(d @ g1) / a == pytest.approx(float(d @ g2) / b, rel=1e-9)
    assert float(d @ g1) > 0  # a common descent direction (ρ > −1)
    fixed = balance(g1, g2, "l2", beta=0.2)
    assert fixed.w_rel == pytest.approx(0.2 / a) and fixed.w_div == pytest.approx(0.8 / b)
    assert fixed.div_share == pytest.approx(4.0)


def test_balance_edge_cases_and_bad_input():
    g = torch.tensor([1.0, -2.0, 0.5])
    zero = balance(g, torch.zeros(3), "l2")  # no soft-rank tie: the relevance step alone
    assert zero.beta == 1.0 and zero.w_div == 0.0 and zero.div_share == 0.0
    assert balance(torch.zeros(3), g, "l2").beta == 0.0
    tiny = balance(g, 1e-12 * torch.tensor([0.3, 1.0, -2.0]), "l2")  # round-off, not a direction
    assert tiny.beta == 1.0 and tiny.w_div == 0.0 and tiny.div_share == 0.0
    with pytest.raises(ValueError, match="normalize"):
        balance(g, g, "max")
    with pytest.raises(ValueError, match="normalize"):
        DiversitySettings(normalize="unit")
    with pytest.raises(ValueError, match="g_div"):
        balance(g, torch.ones(4))


def test_ddt_steps_record_the_normalised_balance():
    d, tr, sim = _small(4)
    torch.manual_seed(0)
    m = MatrixFactorization(d.n_users, d.n_items, 8)
    s = DiversitySettings(k=5, pool=20, div_users=16, batch_size=64)
    h = train(m, tr, sim, 6, method="ddt", settings=s)
    assert set(h) >= {"beta", "beta_raw", "grad_ratio", "cos", "div_share"}
    assert all(len(v) == 6 for v in h.values())
    for b, share, ratio in zip(h["beta"], h["div_share"], h["grad_ratio"], strict=True):
        if 0 < ratio < math.inf:  # both gradients non-zero: β* = 1/2, equal parts
            assert b == pytest.approx(0.5) and share == pytest.approx(1.0)
    raw = train(MatrixFactorization(d.n_users, d.n_items, 8), tr, sim, 3, method="ddt",
                settings=DiversitySettings(k=5, pool=20, div_users=16, batch_size=64,
                                           normalize="none"))
    assert raw["beta"] == raw["beta_raw"]


def _meta_setup(seed=5):
    d, tr, sim = _small(seed)
    torch.manual_seed(seed)
    # factors of std 0.5: score gaps near rank k of the order of ε (std 0.1 merges the whole pool
    # into one soft-rank block and the indicator's gradient vanishes)
    m = MatrixFactorization(d.n_users, d.n_items, 6, init_std=0.5).double()
    s = DiversitySettings(k=5, pool=20, div_users=6, batch_size=12, mdr_eta=0.5)
    g = torch.Generator().manual_seed(seed)
    batch = dt._relevance_batch(tr, s, g)
    meta = dt._relevance_batch(tr, s, g)
    users = dt._diversity_users(tr, s, g)
    batch = (batch[0], batch[1], batch[2].double())
    meta = (meta[0], meta[1], meta[2].double())
    return m, tr, sim.double(), s, batch, meta, users


def test_mdr_meta_gradient_matches_finite_differences():
    m, tr, sim, s, (u, i, t), (u2, i2, t2), users = _meta_setup()
    params = list(m.parameters())
    names = [n for n, _ in m.named_parameters()]

    def losses(theta):
        rel = ((functional_call(m, theta, (u2, i2)) - t2) ** 2).mean()
        return rel, -ddro(functional_call(m, theta, (users,)), tr.seen[users], sim, s)

    # the weights, recomputed here: unit-normalised MGDA of two gradients is β = 1/2
    at = dict(zip(names, params, strict=True))
    rel0, div0 = losses(at)
    a = float(torch.cat([x.reshape(-1) for x in torch.autograd.grad(rel0, params)]).norm())
    b = float(torch.cat([x.reshape(-1) for x in torch.autograd.grad(div0, params)]).norm())
    assert b > 0.1 * a  # the diversity term has a real gradient here: the test covers it

    def joint(eps, w_rel, w_div):
        per = (m(u, i) - t) ** 2
        grads = torch.autograd.grad((eps * per).sum(), params)
        theta = {n: p.detach() - s.mdr_eta * gr for n, p, gr in zip(names, params, grads,
                                                                     strict=True)}
        rel, div = losses(theta)
        return float(w_rel * rel + w_div * div)

    for beta, w_rel, w_div in ((None, 0.5 / a, 0.5 / b), (0.0, 0.0, 1.0 / b)):
        geps, bal, _ = mdr_meta_gradient(m, (u, i, t), (u2, i2, t2), users, tr.seen, sim, s,
                                         beta=beta)
        assert bal.w_rel == pytest.approx(w_rel, rel=1e-9)
        assert bal.w_div == pytest.approx(w_div, rel=1e-9)
        h = 1e-6
        fd = []
        for j in range(u.numel()):
            e = torch.zeros(u.numel(), dtype=torch.float64)
            e[j] = h
            fd.append((joint(e, w_rel, w_div) - joint(-e, w_rel, w_div)) / (2 * h))
        fd = torch.tensor(fd, dtype=torch.float64)
        assert float(fd.abs().max()) > 1e-6  # not a comparison of two zero vectors
        torch.testing.assert_close(geps, fd, rtol=1e-4, atol=1e-7)
