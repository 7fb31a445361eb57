"""BoGrape (bo): seconds per BO iteration — GP fit plus the acquisition MIP (SCIP) — against graph
size N, with the brute-force acquisition over the enumerated space as the peer.

Setting: connected graphs with exactly N nodes and 2 labels, ``TRAIN`` random feasible training
graphs with the reproduction's synthetic GCN objective, kernel ``KIND``, β = 2, no-good cuts on
the training graphs (as in the BO loop); times are means over ``REPEATS`` instances (seeds), and
every instance checks that the MIP's optimum equals the brute-force one.

``method_s`` = GP fit (BoTorch, marginal likelihood) + the MIP (model build + SCIP solve, one
node count); ``peer_s`` = the same GP fit + the LCB of every graph of the space (NumPy, features
pre-computed: the one-off enumeration, which grows as (#connected graphs on N nodes)·2^N, is
reported as ``enumerate_s``).  The row's extra fields say where the time goes: ``fit_s``,
``build_s``, ``solve_s`` (``solve_max_s`` the slowest instance), ``nodes`` (SCIP's
branch-and-bound nodes) and ``vars`` (variables of the model).  Ratios above 1 are expected:
enumeration is only possible on these tiny spaces, which is what the MIP is for.
"""

from __future__ import annotations

import time

import numpy as np

SIZES = (4, 5, 6, 7)
TRAIN = 15
KIND = "SSP"
BETA = 2.0
REPEATS = 3


def _instance(n: int, seed: int, graphs, feats) -> dict:
    from optzoo.bo.graphs import GraphSpace, RandomGCN, build_acquisition, fit_graph_gp
    from optzoo.bo.graphs import graph_features as features
    from optzoo.bo.graphs.kernels import path_dim, scale_targets

    space = GraphSpace(n, n, 2)
    rng = np.random.default_rng(seed)
    train = space.sample_distinct(TRAIN, rng)
    f = RandomGCN(2, n, seed=seed)
    y, _, _ = scale_targets(np.array([f.value(g) for g in train]))
    t0 = time.perf_counter()
    x = features(train, space, KIND)
    _, post = fit_graph_gp(x, y, KIND, path_dim(KIND, n, 2))
    t1 = time.perf_counter()
    mip = build_acquisition(space, n, post, BETA, exclude=train)
    t2 = time.perf_counter()
    mip.model.setParam("limits/time", 600)
    mip.model.optimize()
    t3 = time.perf_counter()
    lcb = post.lcb(feats, BETA)
    banned = {tuple(np.round(r, 10)) for r in x}
    lcb = np.where([tuple(np.round(r, 10)) in banned for r in feats], np.inf, lcb)
    t4 = time.perf_counter()
    if abs(mip.model.getObjVal() - lcb.min()) > 1e-4:
        raise AssertionError(f"N={n}, seed {seed}: MIP {mip.model.getObjVal()} != brute force "
                             f"{lcb.min()}")
    return {"fit": t1 - t0, "build": t2 - t1, "solve": t3 - t2, "brute": t4 - t3,
            "nodes": mip.model.getNNodes(), "vars": mip.model.getNVars()}


def _row(n: int) -> dict:
    import torch

    from optzoo.bo.graphs import GraphSpace, enumerate_graphs, fit_graph_gp, graph_features

    torch.set_num_threads(1)
    torch.manual_seed(0)
    space = GraphSpace(n, n, 2)
    # warm-up: the first GP fit of a process pays one-off costs
    warm = space.sample_distinct(4, np.random.default_rng(99))
    fit_graph_gp(graph_features(warm, space, KIND), np.linspace(0, 1, 4), KIND, n)
    t0 = time.perf_counter()
    graphs = list(enumerate_graphs(space))
    feats = graph_features(graphs, space, KIND)
    enum_s = time.perf_counter() - t0
    runs = [_instance(n, seed, graphs, feats) for seed in range(REPEATS)]
    mean = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
    return {"name": f"bo.bogrape_iteration.{KIND}.N{n}", "method": "fit + MIP (SCIP)",
            "peer": "fit + brute-force LCB", "method_s": mean["fit"] + mean["build"] +
            mean["solve"], "peer_s": mean["fit"] + mean["brute"], "fit_s": mean["fit"],
            "build_s": mean["build"], "solve_s": mean["solve"],
            "solve_max_s": float(max(r["solve"] for r in runs)), "nodes": mean["nodes"],
            "vars": int(mean["vars"]), "graphs": len(graphs), "enumerate_s": enum_s}


def bench_iteration_n4() -> dict:
    return _row(SIZES[0])


def bench_iteration_n5() -> dict:
    return _row(SIZES[1])


def bench_iteration_n6() -> dict:
    return _row(SIZES[2])


def bench_iteration_n7() -> dict:
    return _row(SIZES[3])


BENCHMARKS = [bench_iteration_n4, bench_iteration_n5, bench_iteration_n6, bench_iteration_n7]
