"""KVDA-UCT (mcts area): time per search iteration of KVDA-UCT vs plain UCT.

There is no peer library with ASAP/OGA abstractions (``mctx`` and ``open-spiel`` have none), so
the peer is optzoo's own plain UCT with the same skeleton (transposition DAG, dynamic-σ UCB,
random rollouts) on the same domain, seed and budget: the ratio is the price of building and
maintaining the abstraction.  One decision from the start state of Sailing Wind 6×6
(horizon 15); best of ``BLOCKS`` searches.
"""

from __future__ import annotations

import time

ITERATIONS, BLOCKS = 500, 3


def _per_iteration(agent_cls) -> float:
    from optzoo.mcts import SailingWind

    env = SailingWind()
    best = float("inf")
    for b in range(BLOCKS):
        agent = agent_cls(env, iterations=ITERATIONS, c=1.0, seed=b)
        t0 = time.perf_counter()
        agent.search(env.initial_state())
        best = min(best, (time.perf_counter() - t0) / ITERATIONS)
    return best


def bench_kvda_vs_uct_iteration() -> dict:
    from optzoo.mcts import KVDAUCT, UCT

    return {"name": f"mcts.iteration.sailing6_h15_it{ITERATIONS}", "method": "KVDAUCT",
            "peer": "optzoo UCT (same skeleton)", "method_s": _per_iteration(KVDAUCT),
            "peer_s": _per_iteration(UCT)}


BENCHMARKS = [bench_kvda_vs_uct_iteration]
