"""DDRO, MGDA's closed form against a brute-force min-norm search, training and MDR steps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from optzoo.recsys import (
    DiversitySettings,
    MatrixFactorization,
    NeuMF,
    TrainSet,
    ddro,
    fixed_beta_train,
    genre_jaccard,
    hard_topk_diversity,
    mgda_beta,
    pairwise_diversity,
    score_all,
    synthetic_ratings,
    temporal_split,
    train,
)


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
