"""LES (bo area): seconds per BO iteration (fit + acquisition) of Local Entropy Search vs LogEI.

Issue 6 asks for the cost of one BO iteration of LES relative to BoTorch's LogEI, and where the
time goes.  Both sides do the same work a loop iteration does (:func:`optzoo.bo.les.run_les`,
:func:`optzoo.bo.local_baselines.run_logei`) on identical data -- n = 30 points in [0, 1]^10 of a
smooth function, standardised:

* fit: :func:`optzoo.bo.les.make_gp` (zero-mean SE-ARD GP, box prior, fixed noise; L-BFGS
  marginal likelihood) -- the same for both;
* LES: :class:`~optzoo.bo.les.LocalEntropySearch` (pathwise samples, Adam on every sample,
  arc-length points, Schur-complement entropies) + :func:`optimize_acqf_discrete` over the S·M
  trace points;
* LogEI: BoTorch's analytic :class:`LogExpectedImprovement` + :func:`optimize_acqf` with the LES
  authors' settings (10 restarts, 512 raw samples).

Rows: the brief's CPU setting (S = 64, M = 8, 200 Adam steps) and the paper's (S = 250, M = 8,
500 steps).  One thread (as the reproductions), float64, best of ``BLOCKS`` iterations.  Each row
also carries the LES breakdown (``les_fit_s``, ``les_paths_s`` -- drawing the Matheron paths
and discretising --, ``les_descent_s`` -- the optimiser on the sample paths --, ``les_alpha_s``
-- covariances, Cholesky factors and α on the candidates) and LogEI's (``logei_fit_s``,
``logei_acq_s``).
"""

from __future__ import annotations

import math
import time

import torch

N, D = 30, 10
BLOCKS = 3
LOGEI_RESTARTS, LOGEI_RAW = 10, 512
SETTINGS = {"cpu": (64, 8, 200, 0.005), "paper": (250, 8, 500, 0.002)}


def _data():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(N, D, generator=g, dtype=torch.float64)
    y = torch.sin(5 * X).sum(-1) + 0.3 * (X ** 2).sum(-1)
    return X, ((y - y.mean()) / y.std()).unsqueeze(-1)


class _TimedDescent:
    """Wraps a descent optimiser to record its own seconds."""

    def __init__(self, inner) -> None:
        self.inner, self.seconds = inner, 0.0

    def __call__(self, fn, x0, bounds):
        t0 = time.perf_counter()
        out = self.inner(fn, x0, bounds)
        self.seconds += time.perf_counter() - t0
        return out


def _les_iteration(S: int, M: int, steps: int, lr: float) -> dict:
    from botorch.optim import optimize_acqf_discrete

    from optzoo.bo.les import LocalEntropySearch, adam_descent, draw_descent_sequences, make_gp

    X, Y = _data()
    unit = torch.stack([torch.zeros(D), torch.ones(D)]).to(X)
    t0 = time.perf_counter()
    model = make_gp(X, Y)
    t1 = time.perf_counter()
    descent = _TimedDescent(adam_descent(lr, steps))
    seq = draw_descent_sequences(model, X[Y.argmin()], unit, S, M, descent)
    t2 = time.perf_counter()
    acqf = LocalEntropySearch(model, sequences=seq)
    optimize_acqf_discrete(acqf, q=1, choices=acqf.candidates)
    t3 = time.perf_counter()
    return {"total": t3 - t0, "fit": t1 - t0, "paths": t2 - t1 - descent.seconds,
            "descent": descent.seconds, "alpha": t3 - t2}


def _logei_iteration(restarts: int, raw: int) -> dict:
    from botorch.acquisition.analytic import LogExpectedImprovement
    from botorch.optim import optimize_acqf

    from optzoo.bo.les import make_gp

    X, Y = _data()
    unit = torch.stack([torch.zeros(D), torch.ones(D)]).to(X)
    t0 = time.perf_counter()
    model = make_gp(X, Y)
    t1 = time.perf_counter()
    acqf = LogExpectedImprovement(model, best_f=Y.min(), maximize=False)
    optimize_acqf(acqf, bounds=unit, q=1, num_restarts=restarts, raw_samples=raw)
    t2 = time.perf_counter()
    return {"total": t2 - t0, "fit": t1 - t0, "acq": t2 - t1}


def _best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["total"])


def _row(setting: str) -> dict:
    S, M, steps, lr = SETTINGS[setting]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        _les_iteration(4, 2, 2, lr)  # warm-up: first calls of gpytorch / BoTorch code paths
        _logei_iteration(1, 8)
        les = _best([_les_iteration(S, M, steps, lr) for _ in range(BLOCKS)])
        logei = _best([_logei_iteration(LOGEI_RESTARTS, LOGEI_RAW) for _ in range(BLOCKS)])
    finally:
        torch.set_num_threads(threads)
    assert math.isfinite(les["total"]) and math.isfinite(logei["total"])
    return {"name": f"les.bo_iteration.{setting}.n{N}_d{D}_S{S}_M{M}_T{steps}",
            "method": f"LES S={S} T={steps}",
            "peer": f"BoTorch LogEI ({LOGEI_RESTARTS}x{LOGEI_RAW})",
            "method_s": les["total"], "peer_s": logei["total"],
            **{f"les_{k}_s": v for k, v in les.items() if k != "total"},
            **{f"logei_{k}_s": v for k, v in logei.items() if k != "total"}}


def bench_bo_iteration_cpu_setting() -> dict:
    return _row("cpu")


def bench_bo_iteration_paper_setting() -> dict:
    return _row("paper")


BENCHMARKS = [bench_bo_iteration_cpu_setting, bench_bo_iteration_paper_setting]
