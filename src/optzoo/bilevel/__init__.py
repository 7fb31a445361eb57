"""Bilevel optimization: the problem/oracle interface, solvers and benchmark problems.

Papers: UniBiO (lower-level uniform convexity) and F²SA-p (higher-order finite-difference
first-order methods), with stocBiO / AID as the Hessian-inverse baseline.
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
