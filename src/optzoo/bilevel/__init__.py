"""Bilevel optimization: the problem/oracle interface, solvers and benchmark problems.

Papers: UniBiO (lower-level uniform convexity) and F²SA-p (higher-order finite-difference
first-order methods), with stocBiO / AID as the Hessian-inverse baseline.

Example:
    A problem goes to any solver through a counted oracle:

    >>> from optzoo.bilevel import F2SA, Oracle
    >>> from optzoo.bilevel.problems.quadratic import QuadraticBilevel
    >>> problem = QuadraticBilevel(dim_x=5, dim_y=8, rho=1.0, seed=0)   # closed-form ∇Φ
    >>> solver = F2SA(Oracle(problem), p=2, nu=0.05, lr=0.1, inner_lr=0.4, normalized=False)
    >>> history = solver.run(budget=1_000, every=10,
    ...                      callback=lambda s: {"grad": float(problem.hypergradient(s.x).norm())})
    >>> history[0]["grad"] > 1.0 > 0.2 > history[-1]["grad"], history[-1]["calls"] >= 1_000
    (True, True)
"""

from optzoo.bilevel.base import BilevelSolver
from optzoo.bilevel.f2sa import F2SA
from optzoo.bilevel.ma_soba import MASOBA
from optzoo.bilevel.problem import BilevelProblem, Oracle
from optzoo.bilevel.stocbio import StocBiO
from optzoo.bilevel.ttsa import TTSA
from optzoo.bilevel.unibio import UniBiO

__all__ = ["F2SA", "MASOBA", "TTSA", "BilevelProblem", "BilevelSolver", "Oracle", "StocBiO",
           "UniBiO"]
