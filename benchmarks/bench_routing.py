"""Routing (rfthgs): HGS with a Python crossover callable vs ``pyvrp.solve`` on X instances.

* ``run_hgs(data, srex)`` -- HGS assembled by optzoo with SREX passed as a Python callable --
  against ``pyvrp.solve(data, stop=MaxIterations(k), seed=s)`` at equal iterations and seeds,
  one row per instance; the best costs must be equal (asserted), so the time ratio is the cost
  of building the GA by hand with a pluggable crossover (target <= 1.1, issue 10).  The row
  also carries the gap to the BKS, mean over seeds, beside PyVRP's own reference at 800
  iterations (~0.005 %, ~0.7 %, ~0.7 % on X-n101-k25, X-n148-k46, X-n200-k36);
* ``run_hgs(data, python_srex)`` -- SREX rewritten in plain Python, the form generated
  operators take -- against ``pyvrp.solve`` (equal costs asserted; no target);
* the RFTHGS evaluator on quick's workload (the grammar's SREX-like expert, 100 HGS iterations
  on three generated instances of 30-50 clients, one evaluation per seed) through its fork
  server against one jail and interpreter per operator (``run_untrusted``), interleaved; equal
  gaps asserted.  The difference is the interpreter start-up the server saves.

After a short warm-up of both, runs of ours and of the peer alternate seed by seed (and which
side goes first alternates), so machine noise hits both alike.
Default: a small setting that runs in seconds; ``python benchmarks/bench_routing.py --full``
runs the issue's setting (800 iterations, seeds 0-2, three instances).
"""

from __future__ import annotations

import statistics
import sys
import time

import pyvrp
from pyvrp.stop import MaxIterations

from optzoo.routing.hgs import run_hgs
from optzoo.routing.instances import best_known_cost, gap, load_x_instance
from optzoo.routing.operators import python_srex, srex

INSTANCES = ("X-n101-k25",)
ITERATIONS, SEEDS = 100, (0,)
FULL = {"INSTANCES": ("X-n101-k25", "X-n148-k46", "X-n200-k36"), "ITERATIONS": 800,
        "SEEDS": (0, 1, 2)}
PYVRP_REFERENCE_GAP = {"X-n101-k25": 0.005, "X-n148-k46": 0.7, "X-n200-k36": 0.7}


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _compare(name: str, op, label: str, target: float | None) -> dict:
    data = load_x_instance(name)
    bks = best_known_cost(name)
    ours_s = peer_s = 0.0
    gaps = []
    # warm-up (imports, neighbour lists, caches), then runs alternating which side goes first
    run_hgs(data, op, iterations=5, seed=0)
    pyvrp.solve(data, stop=MaxIterations(5), seed=0)
    for i, seed in enumerate(SEEDS):
        def ours_fn(s=seed):
            return _timed(lambda: run_hgs(data, op, iterations=ITERATIONS, seed=s))

        def peer_fn(s=seed):
            return _timed(lambda: pyvrp.solve(data, stop=MaxIterations(ITERATIONS), seed=s))

        if i % 2 == 0:
            (ours, t_ours), (peer, t_peer) = ours_fn(), peer_fn()
        else:
            (peer, t_peer), (ours, t_ours) = peer_fn(), ours_fn()
        assert ours.cost() == peer.cost() and ours.best == peer.best, (name, seed)
        ours_s, peer_s = ours_s + t_ours, peer_s + t_peer
        gaps.append(gap(ours.cost(), bks))
    row = {"name": f"routing: HGS {name} {ITERATIONS} it x{len(SEEDS)} seeds",
           "method": f"optzoo run_hgs({label})", "peer": "pyvrp.solve (built-in SREX)",
           "method_s": ours_s, "peer_s": peer_s, "instance": name, "iterations": ITERATIONS,
           "seeds": list(SEEDS), "bks": bks, "gaps_pct": gaps,
           "mean_gap_pct": statistics.fmean(gaps),
           "pyvrp_reference_gap_pct": PYVRP_REFERENCE_GAP.get(name)}
    if target is not None:
        row["target_ratio"] = target
    return row


def _srex_callable_rows() -> list[dict]:
    return [_compare(name, srex, "srex callable", 1.1) for name in INSTANCES]


def bench_hgs_srex_callable_vs_solve() -> dict:
    """One row for all instances (sums of seconds); per-instance gaps in ``per_instance``."""
    rows = _srex_callable_rows()
    out = dict(rows[0]) if len(rows) == 1 else {
        "name": f"routing: HGS {'+'.join(r['instance'] for r in rows)} {ITERATIONS} it "
                f"x{len(SEEDS)} seeds",
        "method": rows[0]["method"], "peer": rows[0]["peer"], "target_ratio": 1.1,
        "method_s": sum(r["method_s"] for r in rows), "peer_s": sum(r["peer_s"] for r in rows)}
    out["per_instance"] = [{k: r[k] for k in ("instance", "method_s", "peer_s", "gaps_pct",
                                              "mean_gap_pct", "pyvrp_reference_gap_pct")}
                           for r in rows]
    return out


def bench_hgs_python_srex_vs_solve() -> dict:
    return _compare(INSTANCES[0], python_srex, "python_srex", None)


def bench_evaluator_forkserver_vs_one_jail_per_operator() -> dict:
    from optzoo.routing.crossover_dsl import EXPERT, render
    from optzoo.routing.reproduce.rfthgs import instance_specs
    from optzoo.routing.rfthgs import SandboxEvaluator

    specs = instance_specs(3, (30, 50), 1000, 200)
    source = render(EXPERT)
    server = SandboxEvaluator(specs, [1.0] * 3, 100)
    alone = SandboxEvaluator(specs, [1.0] * 3, 100)
    alone._forkserver = lambda: None
    server(source, [0, 1, 2], 0)  # warm-up: the server starts, instances load
    alone(source, [0, 1, 2], 0)
    times = {"server": 0.0, "alone": 0.0}
    seeds = range(6)
    try:
        for seed in seeds:
            order = (("server", server), ("alone", alone))
            gaps = []
            for name, ev in order if seed % 2 == 0 else order[::-1]:
                out, dt = _timed(lambda ev=ev, seed=seed: ev(source, [0, 1, 2], seed))
                assert out["status"] == "ok", out
                times[name] += dt
                gaps.append(out["gaps"])
            assert gaps[0] == gaps[1], (seed, gaps)
    finally:
        server.close()
    return {"name": f"routing: RFTHGS evaluation x{len(seeds)} (quick's workload)",
            "method": "SandboxEvaluator (fork server)", "peer": "run_untrusted per operator",
            "method_s": times["server"], "peer_s": times["alone"]}


BENCHMARKS = [bench_hgs_srex_callable_vs_solve, bench_hgs_python_srex_vs_solve,
              bench_evaluator_forkserver_vs_one_jail_per_operator]


if __name__ == "__main__":
    if "--full" in sys.argv[1:]:
        globals().update(FULL)
    for fn in BENCHMARKS:
        row = fn()
        print(f"{row['name']:<50} {row['method']:<32} {row['method_s']:8.2f} s vs "
              f"{row['peer_s']:8.2f} s  ratio {row['method_s'] / row['peer_s']:.3f}")
        for r in row.get("per_instance", [row] if "instance" in row else []):
            print(f"    {r['instance']}: ratio {r['method_s'] / r['peer_s']:.3f}, gap to BKS "
                  f"{r['mean_gap_pct']:.3f} % (seeds {[round(g, 3) for g in r['gaps_pct']]}; "
                  f"PyVRP reference ~{r['pyvrp_reference_gap_pct']} %)")
