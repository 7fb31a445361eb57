"""ConNAS: constraint-guided hardware-aware NAS through gradient modification.

Paper: "Constraint-guided Hardware-aware NAS through Gradient Modification", ICLR 2026
(poster), OpenReview ``fcKMFIiNFQ`` (KU Leuven; code on KU Leuven GitLab,
distrinet_public/connas, not inspected).  It moves CGGD (Van Baelen & Karsmakers 2023) from
model outputs to the architecture weights of a DARTS-style supernet.

Update of the architecture weights of edge l (§3, Alg. 1)::

    α_l ← α_l − η_α · ( ∇_{α_l} L_task + R · dir_C(α_l) · max(‖∇_{α_l} L_task‖, ε) )

with R > 1 (paper: 1.2) and ε a small floor.  The loss carries no hardware term; the magnitude
of the push is the task gradient's, only its direction comes from the constraints.  dir_C is
built only when the discrete architecture A = argmax α violates a budget c_k(A) ≤ b_k.  For
every violated constraint k and edge l, the candidates A_{l,j} (all other edges at their
argmax, op j on edge l) are costed and the edge gets

* all A_{l,j} feasible → 0;
* feasible set F and violating set V non-empty → Σ_{j∈F, m∈V} (e_j − e_m)/√2, normalised;
* all violating → Σ over pairs with c_k(A_{l,j}) < c_k(A_{l,m}) of (e_j − e_m)/√2, normalised.

The vectors of all violated constraints are summed and normalised again.

Readings (the brief marks what the sources did not settle; the OpenReview page and the public
paper summary found by search show only the abstract and the opening of the summary, which
confirm the method and the 0.14 % headline but not the items below):

* **Sign.**  The vectors above point toward feasibility (they raise feasible / cheaper ops).
  CGGD adds +1 for a violated upper bound and then descends.  Here ``v`` denotes the
  toward-feasibility vector and the gradient handed to the optimiser is
  ``∇L − R · v · max(‖∇L‖, ε)``, so a descent step raises the feasible ops' α
  (``dir_C = −v`` in the paper's formula).  With R > 1 the step's component along v is at least
  (R − 1)‖∇L‖ > 0 whatever the task gradient is.
* **Normalisation scope.**  ``scope="edge"`` (default): v_l is a unit vector per edge and the
  norm is ‖∇_{α_l} L‖ of that edge; ``scope="global"``: the summed direction is normalised over
  all edges jointly and multiplied by the norm of the whole ∇_α L.  In both scopes each
  constraint's per-edge vector is first normalised per edge (step 2 of the direction).
* **Ties.** In the all-violating case, pairs of equal cost give no term; an edge whose
  candidates all cost the same gets 0.
* **Optimiser.** The update equation is a plain step α ← α − η_α·g', so α is stepped by SGD
  without momentum (the brief's *inferred* DARTS Adam is an option of
  :class:`~optzoo.nas.darts.SearchConfig`; Adam's per-coordinate normalisation can cancel the
  push when the task gradient sits on the costly op -- a test shows it).  ε = 1e-6
  (*inferred*).
* **Selection.** Among the argmax architectures at the end of the last third of the epochs,
  the feasible one with the lowest search-validation loss (shared weights, one-hot op weights).

Costs only need to be evaluable: any ``cost_fn(arch) -> {name: value}`` (a lookup table, an
analytic count, a regressor).  Cost: Σ_l |O_l| evaluations per violated step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from optzoo.checks import check_finite_array, check_real
from optzoo.nas.darts import SearchConfig, SearchResult, argmax_arch, search
from optzoo.nas.search_space import Arch, CellSpace

CostFn = Callable[[Arch], Mapping[str, float]]
SQRT2 = math.sqrt(2.0)


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def edge_direction(costs: Sequence[float], budget: float) -> np.ndarray:
    """The toward-feasibility unit vector of one edge for one constraint.

    Args:
        costs: c_k(A_{l,j}) for every candidate op j of the edge.
        budget: b_k.

    Returns:
        A vector over the ops: 0 when every candidate is feasible, else a unit vector.

    Example::

        >>> edge_direction([1.0, 3.0], budget=2.0).round(4)
        array([ 0.7071, -0.7071])
    """
    c = check_finite_array("costs", costs, ndim=1)
    check_real("budget", budget)
    n = c.size
    feas = c <= budget
    v = np.zeros(n)
    if feas.all():
        return v
    if feas.any():
        for j in np.flatnonzero(feas):
            for m in np.flatnonzero(~feas):
                v[j] += 1 / SQRT2
                v[m] -= 1 / SQRT2
    else:
        for j in range(n):
            for m in range(n):
                if c[j] < c[m]:
                    v[j] += 1 / SQRT2
                    v[m] -= 1 / SQRT2
    return _unit(v)


def constraint_direction(arch: Sequence[int], n_ops: int, cost_fn: CostFn,
                         budgets: Mapping[str, float], scope: str = "edge") -> np.ndarray:
    """v (``n_edges x n_ops``): the summed toward-feasibility directions of the violated
    constraints at ``arch``, normalised per edge (``scope="edge"``) or jointly
    (``scope="global"``); all zeros when ``arch`` is feasible."""
    if scope not in ("edge", "global"):
        raise ValueError(f"scope: expected 'edge' or 'global', got {scope!r}")
    arch = tuple(int(a) for a in arch)
    here = cost_fn(arch)
    missing = [k for k in budgets if k not in here]
    if missing:
        raise ValueError(f"budgets: cost_fn returns no {missing}; it returns {sorted(here)}")
    violated = [k for k, b in budgets.items() if here[k] > b]
    v = np.zeros((len(arch), n_ops))
    if not violated:
        return v
    for e in range(len(arch)):
        cand = [cost_fn(arch[:e] + (j,) + arch[e + 1:]) for j in range(n_ops)]
        for k in violated:
            v[e] += edge_direction([c[k] for c in cand], budgets[k])
    if scope == "edge":
        return np.stack([_unit(row) for row in v])
    return _unit(v)


def connas_gradient(grad: torch.Tensor, direction: torch.Tensor, rescale: float = 1.2,
                    eps: float = 1e-6, scope: str = "edge") -> torch.Tensor:
    """The modified α gradient ``∇L − R · v · max(‖∇L‖, ε)``.

    Args:
        grad: ∇_α L_task, ``n_edges x n_ops``.
        direction: v from :func:`constraint_direction` (toward feasibility), same shape.
        rescale: R (> 1 for the guarantee that the step moves toward feasibility).
        eps: ε, the floor of the norm.
        scope: "edge" (norm per row of ``grad``) or "global" (norm of the whole ``grad``).
    """
    if grad.shape != direction.shape:
        raise ValueError(f"direction: expected shape {tuple(grad.shape)}, got "
                         f"{tuple(direction.shape)}")
    check_real("rescale", rescale, low=0.0, low_open=True)
    check_real("eps", eps, low=0.0, low_open=True)
    direction = direction.to(grad)
    if scope == "edge":
        norm = grad.norm(dim=1, keepdim=True).clamp_min(eps)
    elif scope == "global":
        norm = grad.norm().clamp_min(eps)
    else:
        raise ValueError(f"scope: expected 'edge' or 'global', got {scope!r}")
    return grad - rescale * direction * norm


@dataclass
class ConNAS:
    """ConNAS's α-gradient modification, usable as the ``alpha_grad`` hook of a DARTS search.

    Args:
        n_ops: candidate ops per edge.
        cost_fn: ``arch -> {name: cost}`` (only evaluations, no gradients, are needed).
        budgets: ``{name: b_k}`` upper bounds c_k(A) ≤ b_k.
        rescale: R (paper: 1.2).
        eps: ε (*inferred*: 1e-6).
        scope: normalisation scope, "edge" (default) or "global".

    Example:
        The hook modifies ∇_α while the argmax cell violates a budget, and its ``feasible``
        test drives the selection: ``search(space, train, valid, config, seed,
        alpha_grad=hook, feasible=hook.feasible)``, which :func:`connas_search` wires up.

        >>> import torch
        >>> from optzoo.nas import MINI_TOPOLOGY as space
        >>> from optzoo.nas import ConNAS
        >>> hook = ConNAS(space.n_ops, space.costs, {"flops": 70_314})
        >>> hook.feasible((1, 2, 1)), hook.feasible((3, 3, 3))   # skip/1x1 conv vs all 3x3
        (True, False)
        >>> alpha = torch.zeros(space.n_edges, space.n_ops)
        >>> alpha[:, 3] = 1.0                        # argmax: a 3x3 conv on every edge
        >>> grad = 0.01 * torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
        >>> new = hook(alpha, grad)                  # ∇L − R·v·‖∇L‖ per edge
        >>> bool((new[:, 3] > 0).all()), hook.violated_calls   # a descent step lowers α_3x3
        (True, 1)
        >>> torch.equal(hook(torch.eye(3, 5), grad), grad)   # a feasible argmax: unchanged
        True
    """

    n_ops: int
    cost_fn: CostFn
    budgets: Mapping[str, float]
    rescale: float = 1.2
    eps: float = 1e-6
    scope: str = "edge"

    def __post_init__(self) -> None:
        if not self.budgets:
            raise ValueError("budgets: expected at least one constraint")
        check_real("rescale", self.rescale, low=0.0, low_open=True)
        check_real("eps", self.eps, low=0.0, low_open=True)
        for k, b in self.budgets.items():
            check_real(f"budgets[{k!r}]", b, finite=False)
        if not self.rescale > 0:
            raise ValueError(f"rescale: expected > 0 (paper: R > 1), got {self.rescale}")
        if not self.eps > 0:
            raise ValueError(f"eps: expected > 0, got {self.eps}")
        if self.scope not in ("edge", "global"):
            raise ValueError(f"scope: expected 'edge' or 'global', got {self.scope!r}")
        self.calls = 0
        self.violated_calls = 0

    def feasible(self, arch: Sequence[int]) -> bool:
        c = self.cost_fn(tuple(arch))
        return all(c[k] <= b for k, b in self.budgets.items())

    def __call__(self, alpha: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        arch = argmax_arch(alpha)
        self.calls += 1
        v = constraint_direction(arch, self.n_ops, self.cost_fn, self.budgets, self.scope)
        if not v.any():
            return grad
        self.violated_calls += 1
        return connas_gradient(grad, torch.as_tensor(v), self.rescale, self.eps, self.scope)


def connas_search(space: CellSpace, train, valid, budgets: Mapping[str, float],
                  config: SearchConfig, seed: int, cost_fn: CostFn | None = None,
                  rescale: float = 1.2, eps: float = 1e-6, scope: str = "edge") -> SearchResult:
    """ConNAS on ``space``: DARTS/Gumbel search with the gradient modification and the
    feasible-selection rule.  ``cost_fn`` defaults to the space's exact params/FLOPs.

    Example:
        Plain DARTS picks a cell over the FLOPs budget; ConNAS, from the same seed, one within:

        >>> from optzoo.nas import MINI_TOPOLOGY as space
        >>> from optzoo.nas import SearchConfig, connas_search, digits_split, search
        >>> data = digits_split()                    # scikit-learn digits, N x 1 x 8 x 8
        >>> train = tuple(t[:128] for t in data["train"])
        >>> valid = tuple(t[:64] for t in data["val"])
        >>> config = SearchConfig(epochs=2, batch_size=64)   # the reproduction: 30 epochs
        >>> darts = search(space, train, valid, config, seed=0)
        >>> connas = connas_search(space, train, valid, {"flops": 70_314}, config, seed=0)
        >>> space.flops(darts.arch), space.flops(connas.arch)
        (144042, 70314)
        >>> sorted(connas.info)                      # e.g. the share of steps it modified
        ['checkpoints', 'feasible_checkpoints', 'violated_step_frac']
    """
    hook = ConNAS(space.n_ops, cost_fn or space.costs, budgets, rescale, eps, scope)
    res = search(space, train, valid, config, seed, alpha_grad=hook, feasible=hook.feasible)
    res.info["violated_step_frac"] = hook.violated_calls / max(1, hook.calls)
    return res
