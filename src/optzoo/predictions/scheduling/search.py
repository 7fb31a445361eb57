"""Adversarial search for bad instances: random restarts + hill climbing under a predicate.

Empirical counterpart of a smoothness bound (Zhao & Zomaya, ICLR 2026, Def. 3.1): maximise
``ALG/OPT`` over instances with error ``η(I) ≤ η`` that satisfy the instance predicate
(:func:`~optzoo.predictions.scheduling.error.informative` by default, or ``unrestricted``).
Search space: ``x = log p*`` (clipped to ``[0, log_span]``; ratios are scale-free) and ``u``
with ``p = p* · exp(u)``, ``|u_j| ≤ ln η``. Each restart draws ``x`` uniform (``p*``
log-uniform) and ``u`` uniform, resampling until the predicate holds; each step perturbs one or
two coordinates (Gaussian, step size shrinking over the run; or ``u_j`` jumps to ``±ln η``) and
keeps the move if it satisfies the predicate and does not lower the ratio. The best ratio found
is a LOWER bound on the true supremum.

Seeding (issue 21): a random start almost never lands near the worst cases the paper builds by
hand (Thm 4.1's two-size instances with one shared prediction plus a tiny exact job; at ``η =
1.41``, ``n = 8`` unseeded restarts found SPJF at 1.167 while the construction gives 1.343 and
its best static vertex 1.349). ``seeds`` are explicit instances (the paper's constructions,
realised as static instances): each is evaluated first, half of the restarts (rounded up) then
climb from them -- the first from the best seed itself, the others from Gaussian perturbations
of the seeds in ``(log p*, u)`` (``jitter`` in ``log p*``, ``jitter · ln η`` in ``u``) -- and
the rest start at random as before. The result is therefore never below the best seed.

Deterministic given the :class:`numpy.random.Generator`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from optzoo.predictions.scheduling.error import InstancePredicate, eta, informative


@dataclass(frozen=True)
class SearchResult:
    """Best instance found.

    Attributes:
        ratio: best ``ALG/OPT`` found.
        true: its true sizes; ``pred``: its predictions.
        eta: its error ``η(I)`` (``≤`` the searched ``η``).
        evaluations: number of ratio evaluations made.
        accepted: number of predicate-satisfying candidates evaluated.
        seed_ratio: best ratio among the ``seeds`` (``nan`` without seeds).
    """

    ratio: float
    true: np.ndarray
    pred: np.ndarray
    eta: float
    evaluations: int
    accepted: int
    seed_ratio: float = math.nan


def _check_seeds(seeds: Sequence[tuple[object, object]], n: int, eta_max: float,
                 predicate: InstancePredicate, log_span: float
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for i, pair in enumerate(seeds):
        try:
            true, pred = pair
        except (TypeError, ValueError):
            raise ValueError(f"seeds: expected (true, pred) pairs, got {pair!r} at {i}") from None
        t = np.asarray(true, dtype=float)
        q = np.asarray(pred, dtype=float)
        if t.shape != (n,) or q.shape != (n,):
            raise ValueError(f"seeds: expected arrays of shape ({n},), got {t.shape} and "
                             f"{q.shape} at {i}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q)) and t.min() > 0
                and q.min() > 0):
            raise ValueError(f"seeds: expected finite positive sizes at {i}")
        if eta(t, q) > eta_max * (1.0 + 1e-12):
            raise ValueError(f"seeds: instance {i} has error {eta(t, q)} > eta_max = {eta_max}")
        if not predicate(t, q):
            raise ValueError(f"seeds: instance {i} does not satisfy the predicate")
        lt = np.log(t)
        if lt.min() < -1e-9 or lt.max() > log_span + 1e-9:
            raise ValueError(f"seeds: instance {i} has log sizes outside [0, {log_span:.4g}] "
                             f"(got [{lt.min():.4g}, {lt.max():.4g}]); rescale it")
        out.append((t, q))
    return out


def adversarial_search(ratio: Callable[[np.ndarray, np.ndarray], float], n: int, eta_max: float,
                       rng: np.random.Generator, steps: int = 200, restarts: int = 4,
                       predicate: InstancePredicate = informative,
                       log_span: float = math.log(1e4),
                       init_log_span: float = math.log(100.0),
                       max_resample: int = 1000,
                       seeds: Sequence[tuple[object, object]] = (),
                       jitter: float = 0.1) -> SearchResult:
    """Maximise ``ratio(true, pred)`` over instances of ``n`` jobs with ``η(I) ≤ eta_max``.

    Args:
        ratio: ALG/OPT of the algorithm under test, called as ``ratio(true, pred)``.
        n: number of jobs.
        eta_max: largest error allowed (``> 1``).
        rng: the source of randomness (the search is deterministic given it).
        steps: total ratio evaluations, split evenly among the restarts.
        restarts: number of random starting points.
        predicate: which instances count (default :func:`informative`).
        log_span: ``log p*`` is kept in ``[0, log_span]``.
        init_log_span: starting points draw ``p*`` log-uniform in ``[1, e^init_log_span]``.
        max_resample: draws allowed to find a starting point satisfying the predicate.
        seeds: explicit ``(true, pred)`` instances to evaluate first and to climb from (each of
            shape ``(n,)``, error ``≤ eta_max``, satisfying ``predicate``, ``log p*`` in
            ``[0, log_span]``); they count towards ``steps``.
        jitter: standard deviation of the perturbations of a seed (``log p*`` units).

    Raises:
        ValueError: bad arguments (naming them), or no starting point satisfies the predicate.
    """
    if n < 2:
        raise ValueError(f"n: expected at least 2 jobs, got {n}")
    if not (math.isfinite(eta_max) and eta_max > 1.0):
        raise ValueError(f"eta_max: expected an error > 1, got {eta_max}")
    if steps < 1:
        raise ValueError(f"steps: expected >= 1, got {steps}")
    if restarts < 1:
        raise ValueError(f"restarts: expected >= 1, got {restarts}")
    if not (0 < init_log_span <= log_span):
        raise ValueError(f"init_log_span: expected in (0, log_span={log_span}], "
                         f"got {init_log_span}")
    if not (math.isfinite(jitter) and jitter >= 0):
        raise ValueError(f"jitter: expected a finite value >= 0, got {jitter}")
    ln_eta = math.log(eta_max)
    seeded = _check_seeds(seeds, n, eta_max, predicate, log_span)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    evaluations = accepted = 0
    ranked: list[tuple[float, np.ndarray, np.ndarray]] = []
    for t, q in seeded:  # the constructions themselves, exactly as given (ties included)
        ranked.append((float(ratio(t, q)), t, q))
        evaluations += 1
        accepted += 1
    ranked.sort(key=lambda item: -item[0])
    if ranked:
        best = ranked[0]
    seed_ratio = ranked[0][0] if ranked else math.nan
    per = max(1, (steps - len(ranked)) // restarts)
    from_seeds = -(-restarts // 2) if ranked else 0

    def feasible(x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        true = np.exp(x)
        pred = true * np.exp(u)
        return (true, pred) if predicate(true, pred) else None

    def seeded_start(k: int) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        _, t, q = ranked[k % len(ranked)]
        x0 = np.log(t)
        u0 = np.clip(np.log(q) - x0, -ln_eta, ln_eta)
        if k > 0 and jitter > 0:  # a perturbation of the construction
            for _ in range(20):
                x = np.clip(x0 + rng.normal(0.0, jitter, n), 0.0, log_span)
                u = np.clip(u0 + rng.normal(0.0, jitter * ln_eta, n), -ln_eta, ln_eta)
                start = feasible(x, u)
                if start is not None:
                    return x, u, start
        x, u = np.clip(x0, 0.0, log_span), u0
        start = feasible(x, u)
        return x, u, start if start is not None else (t, q)

    for restart in range(restarts):
        start = None
        if restart < from_seeds:
            x, u, start = seeded_start(restart)
        for _ in range(max_resample if start is None else 0):
            x = rng.uniform(0.0, init_log_span, n)
            u = rng.uniform(-ln_eta, ln_eta, n)
            start = feasible(x, u)
            if start is not None:
                break
        if start is None:
            raise ValueError(f"predicate: no instance with eta <= {eta_max} among "
                             f"{max_resample} random draws satisfies it")
        cur = ratio(*start)
        evaluations += 1
        accepted += 1
        if best is None or cur > best[0]:
            best = (cur, *start)
        for t in range(per - 1):
            scale = 0.5 * (1.0 - t / per) + 0.02  # anneal the step size
            x2, u2 = x.copy(), u.copy()
            for j in rng.choice(n, size=min(n, 1 + int(rng.integers(2))), replace=False):
                move = rng.random()
                if move < 0.45:
                    x2[j] = np.clip(x2[j] + rng.normal(0.0, scale * 2.0), 0.0, log_span)
                elif move < 0.85:
                    u2[j] = np.clip(u2[j] + rng.normal(0.0, scale * ln_eta), -ln_eta, ln_eta)
                else:  # jump to an extreme error: worst cases sit at vertices (Thm 4.1's LFP)
                    u2[j] = ln_eta if rng.random() < 0.5 else -ln_eta
            cand = feasible(x2, u2)
            if cand is None:
                continue
            r = ratio(*cand)
            evaluations += 1
            accepted += 1
            if r >= cur:
                x, u, cur = x2, u2, r
                if r > best[0]:
                    best = (r, *cand)
    assert best is not None
    return SearchResult(ratio=float(best[0]), true=best[1], pred=best[2],
                        eta=eta(best[1], best[2]), evaluations=evaluations, accepted=accepted,
                        seed_ratio=float(seed_ratio))
