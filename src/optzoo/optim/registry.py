"""One table of every optimizer in :mod:`optzoo.optim` (the optax ``_common_test`` habit).

Each :class:`OptimizerCase` names a class and the hyperparameters with which it must solve the
generic problems of ``tests/optim/test_contract.py`` (a mildly conditioned quadratic over a
matrix and a vector parameter, and 2-D Rosenbrock), and what the contract tests may vary.  A new
optimizer is registered here and from then on passes the same tests as every other: convergence,
foreach == for-loop in float64, bit-identical ``state_dict`` continuation, closure, per-group
hyperparameters, ``maximize``, low-precision parameters, sparse-gradient and bad-hyperparameter
errors, and CUDA parity where a GPU exists.  ``benchmarks/bench_optim.py`` reads the same table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["OptimizerCase", "CASES", "case"]


@dataclass(frozen=True)
class OptimizerCase:
    """How the generic tests drive one optimizer.

    Args:
        name: test id (unique).
        cls: the optimizer class.
        kwargs: constructor hyperparameters for the quadratic problem.
        quadratic_steps: step budget on the quadratic; the loss at :meth:`output` must fall
            below ``quadratic_tol`` times its initial value.
        rosenbrock_kwargs: hyperparameters for Rosenbrock (default: ``kwargs``).
        rosenbrock_steps: step budget on Rosenbrock from (-1.5, 2); the output must end within
            ``rosenbrock_tol`` (Euclidean) of the minimiser (1, 1).
        foreach: the class has a ``foreach`` argument with a multi-tensor path.
        group_key: a hyperparameter the per-group test sets differently in two groups.
        invalid: ``(argument, value)`` pairs that must raise ``ValueError`` naming the argument.
        matrix: uses matrix-shaped preconditioners (benchmark target 3x Adam, not 1.5x).
        needs_closure: ``step`` must be given a closure (e.g. two gradient queries per step).
        benchmark: include in ``benchmarks/bench_optim.py``.
    """

    name: str
    cls: type[torch.optim.Optimizer]
    kwargs: dict[str, Any]
    quadratic_steps: int = 300
    quadratic_tol: float = 1e-3
    rosenbrock_kwargs: dict[str, Any] | None = None
    rosenbrock_steps: int = 3000
    rosenbrock_tol: float = 0.05
    foreach: bool = True
    group_key: str = "lr"
    invalid: tuple[tuple[str, Any], ...] = (("lr", -1.0),)
    matrix: bool = False
    needs_closure: bool = False
    benchmark: bool = True
    notes: str = field(default="", compare=False)

    def make(self, params, problem: str = "quadratic", **overrides) -> torch.optim.Optimizer:
        kw = dict(self.rosenbrock_kwargs or self.kwargs) if problem == "rosenbrock" \
            else dict(self.kwargs)
        kw.update(overrides)
        return self.cls(params, **kw)


# Each family appends its cases below; keep names unique.
CASES: list[OptimizerCase] = []

# -- optim.steepest_descent (steepest-mirror-flows) ------------------------------------------
# (section: steepest)
from optzoo.optim.steepest_descent import SignSGD, SteepestDescent  # noqa: E402

_SIGN_ROSENBROCK = (
    "Fixed-lr sign descent moves every coordinate by ±lr and crawls along Rosenbrock's curved "
    "valley (0.59 from (1, 1) after 10,000 steps at lr 1e-3, 0.21 after 20,000 at 2e-4), so "
    "Rosenbrock runs Signum (momentum 0.9, lr 1e-3, 5,000 steps); the quadratic uses plain "
    "sign descent with lr 0.02, whose ±lr oscillation floor is far below the tolerance.")
CASES += [
    OptimizerCase("sign_sgd", SignSGD, dict(lr=0.02), quadratic_steps=300,
                  rosenbrock_kwargs=dict(lr=1e-3, momentum=0.9), rosenbrock_steps=5000,
                  invalid=(("lr", -1.0), ("momentum", 1.0), ("weight_decay", -0.1),
                           ("coupled_weight_decay", -0.1)),
                  notes=_SIGN_ROSENBROCK),
    OptimizerCase("signum", SignSGD, dict(lr=0.02, momentum=0.9), quadratic_steps=300,
                  rosenbrock_kwargs=dict(lr=1e-3, momentum=0.9), rosenbrock_steps=5000,
                  group_key="momentum", invalid=(("momentum", -0.5), ("lr", -1.0)),
                  notes=_SIGN_ROSENBROCK),
    OptimizerCase("sign_sgd_decoupled_wd", SignSGD, dict(lr=0.02, weight_decay=0.01),
                  rosenbrock_kwargs=dict(lr=1e-3, momentum=0.9, weight_decay=1e-3),
                  rosenbrock_steps=5000, group_key="weight_decay",
                  invalid=(("weight_decay", -0.1),),
                  notes="AdamW-like decay; sign descent + decoupled WD α keeps "
                        "‖w‖_∞ ≤ 1/α, inactive here. " + _SIGN_ROSENBROCK),
    OptimizerCase("sign_sgd_coupled_wd", SignSGD, dict(lr=0.02, coupled_weight_decay=1e-3),
                  rosenbrock_kwargs=dict(lr=1e-3, momentum=0.9, coupled_weight_decay=1e-5),
                  rosenbrock_steps=5000, group_key="coupled_weight_decay",
                  invalid=(("coupled_weight_decay", -0.1),),
                  notes="Adam + L2-like decay; the tiny decay moves the minimiser by O(α). "
                        + _SIGN_ROSENBROCK),
    OptimizerCase("steepest_l2", SteepestDescent, dict(lr=0.2, norm="l2"),
                  rosenbrock_kwargs=dict(lr=1.8e-3, norm="l2"), rosenbrock_steps=5000,
                  invalid=(("lr", -1.0), ("norm", "l3"), ("q", 1.5)),
                  notes="q = 2: plain gradient descent (equals torch.optim.SGD)."),
    OptimizerCase("steepest_lp15", SteepestDescent, dict(lr=0.05, norm="lp", q=1.5),
                  rosenbrock_kwargs=dict(lr=3e-3, norm="lp", q=1.5), rosenbrock_steps=6000,
                  invalid=(("q", 2.5), ("q", 0.5), ("lr", -1.0)),
                  notes="L_3 steepest descent (q = 1.5), elementwise form of the paper."),
    OptimizerCase("steepest_lp15_normalized", SteepestDescent,
                  dict(lr=0.05, norm="lp", q=1.5, normalized=True),
                  rosenbrock_kwargs=dict(lr=2e-3, norm="lp", q=1.5, normalized=True,
                                         momentum=0.9), rosenbrock_steps=5000,
                  invalid=(("normalized", "yes"), ("q", 3.0)),
                  notes="True steepest descent w.r.t. each tensor's ‖·‖_3 (‖g‖_1.5^0.5 scale)."),
]

# -- optim.adaptive_preconditioning (adagrad-nesterov) ---------------------------------------
# (section: adaptive)
from optzoo.optim.adagrad import DiagAdaGrad  # noqa: E402
from optzoo.optim.adagrad_norm import AdaGradNorm  # noqa: E402
from optzoo.optim.asgo import ASGO  # noqa: E402
from optzoo.optim.dasgo import DASGO  # noqa: E402
from optzoo.optim.scion import Scion  # noqa: E402

# Algorithm 1's output is the iterate average (quadratic: default average=True).  Rosenbrock is
# nonconvex, outside the paper: the average still carries the early path from (-1.5, 2), so
# there the last iterate is checked (average=False) with a longer budget (AdaGrad steps decay).
_ALG1_ROSEN = dict(rosenbrock_kwargs=dict(lr=1.0, average=False), rosenbrock_steps=8000)
CASES += [
    OptimizerCase("adagrad_norm", AdaGradNorm, dict(lr=1.0), **_ALG1_ROSEN,
                  invalid=(("lr", -1.0), ("eps", 0.0)),
                  notes="Kovalev 2026 Alg. 1, scalar H; lr = eta is a distance"),
    OptimizerCase("diag_adagrad", DiagAdaGrad, dict(lr=1.0), **_ALG1_ROSEN,
                  invalid=(("lr", -1.0), ("eps", -1e-8)),
                  notes="Kovalev 2026 Alg. 1, diagonal H (AdaGrad, delta inside the root)"),
    OptimizerCase("asgo", ASGO, dict(lr=1.0), **_ALG1_ROSEN, matrix=True,
                  invalid=(("lr", 0.0), ("side", "top"), ("precision", "half")),
                  notes="ASGO / one-sided Shampoo, left side, eigh in float64"),
    OptimizerCase("dasgo", DASGO, dict(lr=1.0), **_ALG1_ROSEN, matrix=True,
                  invalid=(("lr", -1.0), ("eps", 0.0)),
                  notes="DASGO, row-wise AdaGrad-Norm (1/n factor)"),
    OptimizerCase("adagrad_norm_nesterov", AdaGradNorm, dict(lr=2.0, nesterov=True),
                  invalid=(("lr", -1.0), ("nesterov", 1)),
                  notes="Kovalev 2026 Alg. 2 (eta = 2R), output x-bar"),
    OptimizerCase("diag_adagrad_nesterov", DiagAdaGrad, dict(lr=2.0, nesterov=True),
                  invalid=(("lr", -1.0), ("nesterov", "yes")),
                  notes="Kovalev 2026 Alg. 2 with diagonal H"),
    OptimizerCase("dasgo_nesterov", DASGO, dict(lr=2.0, nesterov=True), matrix=True,
                  invalid=(("lr", -1.0), ("eps", 0.0)),
                  notes="Kovalev 2026 Alg. 2 with DASGO's row-diagonal H"),
    OptimizerCase("scion", Scion, dict(lr=0.05, momentum=0.1, norm="row", unconstrained=True),
                  rosenbrock_kwargs=dict(lr=0.02, momentum=0.1, norm="row",
                                         unconstrained=True),
                  matrix=True,
                  invalid=(("lr", -1.0), ("momentum", 0.0), ("norm", "frobenius"),
                           ("scale", 0.0)),
                  notes="uScion, row-normalized LMO (constant step: converges to step scale)"),
]

CASES += [
    OptimizerCase("asgo_smaller_float32", ASGO,
                  dict(lr=1.0, side="smaller", precision="float32"), **_ALG1_ROSEN,
                  matrix=True, invalid=(("side", "both"),),
                  notes="ASGO's cheapest setting within the paper: the smaller side of each "
                        "matrix, eigh in float32"),
]

# -- optim.o2nc (o2nc-doubly-optimistic) -----------------------------------------------------
# (section: o2nc)
from optzoo.optim.normalized_sgd import NormalizedSGD  # noqa: E402
from optzoo.optim.o2nc import O2NC  # noqa: E402

# O2NC queries gradients at points it moves the parameters to, so it needs a closure.  Rosenbrock
# (L₁ ≈ 2000 at the start) needs η ≈ 1e-3 and a small ball; the quadratic (L₁ ≤ 2) takes η = 0.5.
_O2NC_BAD = (("lr", -1.0), ("D", 0.0), ("T", 0), ("hint", "bogus"), ("inner_steps", -1))
CASES += [
    OptimizerCase(
        "o2nc_odog", O2NC, dict(lr=0.5, D=0.3, T=10, hint="extrapolated"),
        rosenbrock_kwargs=dict(lr=1e-3, D=0.01, T=10, hint="extrapolated"),
        rosenbrock_steps=3000, needs_closure=True, invalid=_O2NC_BAD,
        notes="ODOG (Patitucci, Jiang & Mokhtari, ICLR 2026): extrapolated hint, 2 queries/step"),
    OptimizerCase(
        "o2nc_adaptive", O2NC, dict(adaptive=True, gamma=1.0, alpha=1.0, D=0.3, T=10),
        rosenbrock_kwargs=dict(adaptive=True, gamma=1.0, alpha=1.0, D=0.02, T=10),
        rosenbrock_steps=3000, needs_closure=True, group_key="gamma",
        invalid=(("gamma", 0.0), ("alpha", -1.0), ("D", -1.0)),
        notes="ODOG with the §4 adaptive step, accumulator reset every episode"),
    OptimizerCase(
        "o2nc_naive_hint", O2NC, dict(lr=0.5, D=0.3, T=10, hint="previous"),
        rosenbrock_kwargs=dict(lr=1e-3, D=0.005, T=10, hint="previous"),
        rosenbrock_steps=4000, needs_closure=True, invalid=_O2NC_BAD,
        notes="O2NC with the naive optimistic hint h_{n+1} = g_n"),
    OptimizerCase(
        "o2nc_ogd", O2NC, dict(lr=0.5, D=0.1, T=30, hint="none"),
        rosenbrock_kwargs=dict(lr=2e-3, D=0.005, T=10, hint="none"),
        rosenbrock_steps=4000, needs_closure=True, invalid=_O2NC_BAD,
        notes="O2NC with plain projected OGD (CMO23's stochastic learner)"),
    OptimizerCase(
        "o2nc_fixed_point", O2NC, dict(lr=0.5, D=0.3, T=10, hint="fixed_point", inner_steps=2),
        rosenbrock_kwargs=dict(lr=2e-3, D=0.01, T=10, hint="fixed_point", inner_steps=2),
        rosenbrock_steps=3000, needs_closure=True, invalid=_O2NC_BAD,
        notes="CMO23 deterministic double loop (fixed-point hint, optimistic mirror descent)"),
    OptimizerCase(
        "normalized_sgd", NormalizedSGD, dict(lr=0.05, momentum=0.9),
        rosenbrock_kwargs=dict(lr=1e-3, momentum=0.9), rosenbrock_steps=6000,
        invalid=(("lr", -1.0), ("momentum", 1.0)),
        notes="Cutkosky & Mehta 2020, normalized SGD with momentum (ODOG baseline)"),
]


# -- optim.accelegrad (adagrad-nesterov baseline) --
from optzoo.optim.accelegrad import AcceleGrad  # noqa: E402

# lr is the diameter D = 2‖x0 − x*‖₂ (the reproduction's rule): the quadratic starts 5.42 from
# its solution (D = 11), Rosenbrock 2.69 from (1, 1) (D = 5.4).  Output: the α-weighted ȳ.
# Unconstrained on (nonconvex) Rosenbrock, z makes long excursions at D = 5.4 (ȳ is 0.55 from
# (1, 1) after 3000 steps, 0.054 after 10,000), so that case runs D = 2 (0.028 after 3000); with
# the projection D = 5.4 ends 0.002 away.
CASES += [
    OptimizerCase("accelegrad", AcceleGrad, dict(lr=11.0, G=1e-8),
                  rosenbrock_kwargs=dict(lr=2.0, G=1e-8),
                  invalid=(("lr", -1.0), ("G", 0.0), ("project", "yes")),
                  notes="AcceleGrad (Levy, Yurtsever & Cevher 2018), unconstrained"),
    OptimizerCase("accelegrad_projected", AcceleGrad, dict(lr=11.0, G=1e-8, project=True),
                  rosenbrock_kwargs=dict(lr=5.4, G=1e-8, project=True),
                  invalid=(("lr", 0.0),),
                  notes="AcceleGrad with z projected onto the ball of diameter D around x0"),
]

# -- optim.ham (ham) --
from optzoo.optim.ham import HAM  # noqa: E402

# HAM over Adam and over SGD, α·lr ≈ 0.2 (official: α = 200 at Adam lr 1e-3; the brief's pitfall:
# retune α·lr with the lr), so lr 0.1 runs α = 2.
CASES += [
    OptimizerCase("ham_adam", HAM, dict(lr=0.1, alpha=2.0, beta=1e-3),
                  rosenbrock_kwargs=dict(lr=0.02, alpha=10.0, beta=1e-3),
                  group_key="alpha",
                  invalid=(("alpha", -1.0), ("beta", -1.0), ("max_weight_norm", 0.0)),
                  notes="HAM mirror step after Adam (Jacobs et al., ICLR 2026)"),
    OptimizerCase("ham_sgd", HAM, dict(base="sgd", lr=0.1, momentum=0.9, alpha=2.0, beta=1e-3),
                  rosenbrock_kwargs=dict(base="sgd", lr=1e-3, momentum=0.9,
                                         alpha=2.0, beta=0.0),
                  group_key="alpha", invalid=(("alpha", -1.0), ("beta", float("nan"))),
                  notes="HAM mirror step after SGD with momentum"),
]


def case(name: str) -> OptimizerCase:
    for c in CASES:
        if c.name == name:
            return c
    raise KeyError(f"no optimizer case named {name!r}; known: {[c.name for c in CASES]}")
