"""Recommender systems: differentiable top-k diversity (DDRO) with MGDA-balanced direct tuning
(DDT) and meta-diversity reweighting (MDR) of Zhou et al. (ICLR 2026, OpenReview cuzWopwoZG),
the smooth-ranking operator, the MMR / DPP / fixed-β / ε-mixing baselines, MF and NeuMF
backbones, MovieLens-100K and synthetic data, and top-k metrics.

Example:
    >>> import torch
    >>> from optzoo.recsys import (DiversitySettings, MatrixFactorization, TrainSet,
    ...                            genre_jaccard, ild, score_all, synthetic_ratings,
    ...                            temporal_split, topk_lists, train)
    >>> data = synthetic_ratings(n_users=50, n_items=100, seed=0)  # or load_movielens_100k()
    >>> train_set = TrainSet.from_ratings(data, ~temporal_split(data))
    >>> similarity = torch.as_tensor(genre_jaccard(data.item_genres))
    >>> model = MatrixFactorization(data.n_users, data.n_items, dim=8)
    >>> settings = DiversitySettings(k=10, pool=50, div_users=16, batch_size=256)
    >>> log = train(model, train_set, similarity, steps=3, method="ddt", settings=settings,
    ...             lr=1e-2, generator=torch.Generator().manual_seed(0))  # DDT: MGDA-balanced
    >>> len(log["beta"]), sorted(log)[:3]  # one MGDA β per step
    (3, ['beta', 'beta_raw', 'cos'])
    >>> with torch.no_grad():
    ...     lists = topk_lists(score_all(model, data.n_users), train_set.seen.numpy(), 10)
    >>> lists.shape, bool(0 < ild(lists, similarity.numpy()).mean() <= 1)  # ILD@10
    ((50, 10), True)
"""

from optzoo.recsys.data import (
    RatingsData,
    genre_jaccard,
    load_movielens_100k,
    load_ratings,
    movielens_100k_dir,
    synthetic_ratings,
    temporal_split,
)
from optzoo.recsys.diversity_topk import (
    Balance,
    DiversitySettings,
    TrainSet,
    balance,
    ddro,
    hard_topk_diversity,
    mdr_meta_gradient,
    mgda_beta,
    pairwise_diversity,
    relevance_loss,
    score_all,
    train,
)
from optzoo.recsys.dpp import dpp_rerank, greedy_map
from optzoo.recsys.fixed_beta import fixed_beta_train
from optzoo.recsys.metrics import (
    catalogue_coverage,
    evaluate,
    exposure_gini,
    genre_coverage,
    gini,
    ild,
    ndcg_at_k,
    recall_at_k,
    relevance_share,
    topk_lists,
)
from optzoo.recsys.mmr import mmr_rerank
from optzoo.recsys.models import MatrixFactorization, NeuMF, make_backbone
from optzoo.recsys.random_mix import epsilon_mix
from optzoo.recsys.soft_rank import (
    hard_rank,
    permutahedron_projection,
    soft_rank,
    soft_topk_indicator,
)

__all__ = [
    "Balance", "DiversitySettings", "MatrixFactorization", "NeuMF", "RatingsData", "TrainSet",
    "balance", "catalogue_coverage", "ddro", "dpp_rerank", "epsilon_mix", "evaluate",
    "exposure_gini", "fixed_beta_train", "genre_coverage", "genre_jaccard", "gini", "greedy_map",
    "hard_rank", "hard_topk_diversity", "ild", "load_movielens_100k", "load_ratings",
    "make_backbone", "mdr_meta_gradient", "mgda_beta", "mmr_rerank", "movielens_100k_dir",
    "ndcg_at_k", "pairwise_diversity", "permutahedron_projection", "recall_at_k", "relevance_loss",
    "relevance_share", "score_all", "soft_rank", "soft_topk_indicator", "synthetic_ratings",
    "temporal_split", "topk_lists", "train",
]
