"""First-order DARTS with a Gumbel-softmax relaxation: the supernet and search loop that ConNAS
and its baselines share.

DARTS: Liu, Simonyan & Yang, "DARTS: Differentiable Architecture Search", ICLR 2019 (first-order
variant: the α gradient is taken at the current w, no unrolled step).  Relaxation as in ConNAS
(ICLR 2026, OpenReview fcKMFIiNFQ, §3 / Alg. 1): each edge mixes its candidate ops with
Gumbel-softmax weights ``softmax((α_l + g)/τ)``, τ annealed linearly from ``tau_start`` to
``tau_end`` over the first ``anneal_frac`` of the epochs, then held.

Per batch (Alg. 1): one SGD step on w with the task loss on a training batch (α fixed), then the
task-loss gradient ∇_α L on a batch of the search-validation split, passed through an optional
``alpha_grad`` hook (ConNAS's gradient modification, or a penalty's gradient) before the step
on α (plain SGD by default, as in ConNAS's update equation; Adam as an option).  The derived
architecture is ``argmax α`` per edge, never a Gumbel sample (a sample
flickers near the constraint boundary).

Selection: with ``feasible`` given (ConNAS), the architecture returned is, among the argmax
architectures at the checkpoints of the last ``select_frac`` of the search, the feasible one
with the lowest search-validation loss, measured with the shared weights and that
architecture's one-hot weights; without it (plain DARTS, penalty baselines) the final argmax.
The paper's checkpoints are the 50 epoch ends of its last 50 of 150 epochs; here the window's
``select_points`` (default 50) checkpoints are spread evenly over its α steps (at most one per
step).  At the paper's scale they fall on epoch ends; in a 10-epoch mini search a window of 3
epoch ends would give 3 candidates where the paper has 50, so the checkpoints fall within
epochs (every α step of the window when it has fewer than 50).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from optzoo.checks import check_int, check_real
from optzoo.nas.search_space import Arch, CellSpace, TinyNetwork, make_op

AlphaHook = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class SearchConfig:
    """Settings of a supernet search.

    Args:
        epochs: search epochs (paper: 150; the mini reproduction: 30).
        batch_size: batch size of both the w and the α batches.
        w_lr, w_momentum, w_weight_decay: SGD on w, lr cosine-annealed to 0 (*inferred*: the
            DARTS/GDAS values 0.025, 0.9, 3e-4).
        alpha_optimizer: "sgd" (default) -- the plain step α ← α − η_α·g of ConNAS's update
            equation -- or "adam" (DARTS's choice, betas ``alpha_betas``, weight decay
            ``alpha_weight_decay``; the brief's *inferred* reading).  Adam's per-coordinate
            normalisation can cancel the constraint push: with a task gradient concentrated on
            the costly op, g'·v < 0 still holds but Adam's step moves every op of the edge by
            about the same amount, so the argmax need not change (see the tests).
        alpha_lr: η_α.
        tau_start, tau_end, anneal_frac: Gumbel temperature 10 → 0.1 over the first 2/3 of the
            epochs (paper: over 100 of 150).
        select_frac: the selection window, the last 1/3 of the search (paper: 50 of 150
            epochs).
        select_points: checkpoints in the window (paper: its 50 epoch ends), spread evenly
            over the window's α steps, at most one per step.
    """

    epochs: int = 30
    batch_size: int = 64
    w_lr: float = 0.025
    w_momentum: float = 0.9
    w_weight_decay: float = 3e-4
    alpha_optimizer: str = "sgd"
    alpha_lr: float = 1.0
    alpha_betas: tuple[float, float] = (0.5, 0.999)
    alpha_weight_decay: float = 1e-3
    tau_start: float = 10.0
    tau_end: float = 0.1
    anneal_frac: float = 2 / 3
    select_frac: float = 1 / 3
    select_points: int = 50

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "select_points"):
            check_int(name, getattr(self, name))
        for name in ("w_lr", "alpha_lr", "tau_start", "tau_end"):
            check_real(name, getattr(self, name), low=0.0, low_open=True)
        check_real("w_momentum", self.w_momentum, low=0.0, high=1.0, high_open=True)
        for name in ("w_weight_decay", "alpha_weight_decay"):
            check_real(name, getattr(self, name), low=0.0)
        for name in ("epochs", "batch_size", "select_points"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected >= 1, got {getattr(self, name)}")
        for name in ("w_lr", "alpha_lr", "tau_start", "tau_end"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected > 0, got {getattr(self, name)}")
        if self.alpha_optimizer not in ("sgd", "adam"):
            raise ValueError(f"alpha_optimizer: expected 'sgd' or 'adam', got "
                             f"{self.alpha_optimizer!r}")
        for name in ("anneal_frac", "select_frac"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name}: expected in (0, 1], got {getattr(self, name)}")

    def tau(self, epoch: int) -> float:
        """Temperature of ``epoch`` (0-based): linear from tau_start to tau_end, then held."""
        span = max(1, round(self.anneal_frac * self.epochs))
        f = min(1.0, epoch / span)
        return self.tau_start + f * (self.tau_end - self.tau_start)

    def checkpoints(self, total_steps: int) -> set[int]:
        """The α steps (1-based counts) after which the selection evaluates the argmax: up to
        ``select_points`` spread evenly over the last ``select_frac`` of ``total_steps``, the
        last step always among them."""
        window = max(1, round(self.select_frac * total_steps))
        n = min(self.select_points, window)
        return {total_steps - int(round(i * window / n)) for i in range(n)}


class MixedOp(nn.Module):
    """All candidate ops of one edge; output ``Σ_j w_j op_j(x)`` (ops with w_j = 0 skipped)."""

    def __init__(self, space: CellSpace, c: int):
        super().__init__()
        self.ops = nn.ModuleList(make_op(o, c, affine=False) for o in space.ops)

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        out = 0
        for j, op in enumerate(self.ops):
            if w[j].item() != 0.0 or w.requires_grad:
                out = out + w[j] * op(x)
        return out


class SearchCell(nn.Module):
    def __init__(self, space: CellSpace, c: int):
        super().__init__()
        self.n_nodes = space.n_nodes
        self.edges = nn.ModuleList(MixedOp(space, c) for _ in range(space.n_edges))

    def forward(self, x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        nodes, k = [x], 0
        for i in range(1, self.n_nodes):
            s = 0
            for j in range(i):
                s = s + self.edges[k](nodes[j], weights[k])
                k += 1
            nodes.append(s)
        return nodes[-1]


class SuperNet(nn.Module):
    """The weight-sharing supernet of ``space``; ``forward(x, weights)`` with weights of shape
    ``n_edges x n_ops`` (shared by all cells, as in NATS-Bench's one-genotype networks)."""

    def __init__(self, space: CellSpace):
        super().__init__()
        self.space = space
        self.net = TinyNetwork(space, cell=lambda c: SearchCell(space, c))

    def forward(self, x: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        return self.net(x, weights)


def one_hot(space: CellSpace, arch: Arch) -> torch.Tensor:
    w = torch.zeros(space.n_edges, space.n_ops)
    w[torch.arange(space.n_edges), torch.as_tensor(arch)] = 1.0
    return w


def argmax_arch(alpha: torch.Tensor) -> Arch:
    return tuple(int(i) for i in alpha.detach().argmax(dim=1))


@dataclass
class SearchResult:
    """Outcome of a search.

    Attributes:
        arch: the derived architecture.
        final_arch: argmax α at the end.
        alpha: final architecture weights (``n_edges x n_ops``).
        history: argmax architecture at the end of every epoch.
        feasible_history: per epoch, whether that argmax was feasible (None without constraints).
        selected_feasible: False when no feasible argmax occurred in the window (the final
            argmax is returned then); None without constraints.
        seconds: wall time of the search.
        steps: α steps taken.
        info: extra per-method counters (e.g. the fraction of steps with a violated constraint).
    """

    arch: Arch
    final_arch: Arch
    alpha: torch.Tensor
    history: list[Arch]
    feasible_history: list[bool] | None
    selected_feasible: bool | None
    seconds: float
    steps: int
    info: dict = field(default_factory=dict)


def _batches(n: int, bs: int, g: torch.Generator) -> list[torch.Tensor]:
    perm = torch.randperm(n, generator=g)
    return [perm[i:i + bs] for i in range(0, n, bs)]


def search(space: CellSpace, train: tuple[torch.Tensor, torch.Tensor],
           valid: tuple[torch.Tensor, torch.Tensor], config: SearchConfig, seed: int,
           alpha_grad: AlphaHook | None = None,
           feasible: Callable[[Arch], bool] | None = None) -> SearchResult:
    """Run one first-order DARTS / Gumbel search.

    Args:
        space: the cell space.
        train: (images ``N x C x H x W``, labels ``N``) for the w steps.
        valid: the search-validation split for the α steps and the selection.
        config: schedule and optimisers.
        seed: seeds the supernet init, α init, batch order and Gumbel noise.
        alpha_grad: ``hook(alpha, grad) -> grad`` applied to ∇_α L before the Adam step.
        feasible: the constraint test of a discrete architecture (enables ConNAS selection).
    """
    for name, (x, y) in (("train", train), ("valid", valid)):
        if x.ndim != 4 or x.shape[1:] != (space.in_channels, space.image_size, space.image_size):
            raise ValueError(f"{name}: expected images N x {space.in_channels} x "
                             f"{space.image_size} x {space.image_size}, got {tuple(x.shape)}")
        if y.shape != (x.shape[0],):
            raise ValueError(f"{name}: labels must have shape ({x.shape[0]},), got "
                             f"{tuple(y.shape)}")
    t0 = time.perf_counter()
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = SuperNet(space)
    alpha = (1e-3 * torch.randn(space.n_edges, space.n_ops, generator=g)).requires_grad_()
    steps_per_epoch = math.ceil(train[0].shape[0] / config.batch_size)
    w_opt = torch.optim.SGD(model.parameters(), lr=config.w_lr, momentum=config.w_momentum,
                            weight_decay=config.w_weight_decay)
    w_sched = torch.optim.lr_scheduler.CosineAnnealingLR(
        w_opt, T_max=config.epochs * steps_per_epoch)
    if config.alpha_optimizer == "sgd":
        a_opt = torch.optim.SGD([alpha], lr=config.alpha_lr)
    else:
        a_opt = torch.optim.Adam([alpha], lr=config.alpha_lr, betas=config.alpha_betas,
                                 weight_decay=config.alpha_weight_decay)
    checkpoints = config.checkpoints(config.epochs * steps_per_epoch)
    history: list[Arch] = []
    feas_hist: list[bool] | None = [] if feasible is not None else None
    candidates: list[tuple[float, int, Arch]] = []
    steps = 0
    for epoch in range(config.epochs):
        tau = config.tau(epoch)
        model.train()
        w_batches = _batches(train[0].shape[0], config.batch_size, g)
        a_batches = _batches(valid[0].shape[0], config.batch_size, g)
        for b, idx in enumerate(w_batches):
            # w step on the task loss, α held at a Gumbel sample
            weights = F.gumbel_softmax(alpha.detach(), tau=tau, dim=-1)
            w_opt.zero_grad()
            F.cross_entropy(model(train[0][idx], weights), train[1][idx]).backward()
            w_opt.step()
            w_sched.step()
            # α step on the search-validation loss (first order: at the current w)
            vidx = a_batches[b % len(a_batches)]
            weights = F.gumbel_softmax(alpha, tau=tau, dim=-1)
            loss = F.cross_entropy(model(valid[0][vidx], weights), valid[1][vidx])
            (grad,) = torch.autograd.grad(loss, alpha)
            if not torch.isfinite(grad).all():
                raise FloatingPointError(f"search: non-finite α gradient at epoch {epoch}")
            if alpha_grad is not None:
                grad = alpha_grad(alpha.detach(), grad)
            a_opt.zero_grad()
            alpha.grad = grad
            a_opt.step()
            steps += 1
            if feasible is not None and steps in checkpoints:
                arch = argmax_arch(alpha)
                if feasible(arch):
                    candidates.append((_eval_loss(model, space, arch, valid), steps, arch))
        arch = argmax_arch(alpha)
        history.append(arch)
        if feasible is not None:
            feas_hist.append(bool(feasible(arch)))
    final = argmax_arch(alpha)
    if feasible is None:
        chosen, sel = final, None
    elif candidates:
        chosen, sel = min(candidates)[2], True
    else:
        chosen, sel = final, False
    info = {} if feasible is None else {"checkpoints": len(checkpoints),
                                        "feasible_checkpoints": len(candidates)}
    return SearchResult(arch=chosen, final_arch=final, alpha=alpha.detach().clone(),
                        history=history, feasible_history=feas_hist, selected_feasible=sel,
                        seconds=time.perf_counter() - t0, steps=steps, info=info)


@torch.no_grad()
def _eval_loss(model: SuperNet, space: CellSpace, arch: Arch,
               data: tuple[torch.Tensor, torch.Tensor]) -> float:
    # batch statistics (train-mode BN): the search BN layers track no useful running stats
    return float(F.cross_entropy(model(data[0], one_hot(space, arch)), data[1]))


def supernet_flops(space: CellSpace) -> int:
    """Conv/linear MACs of one supernet forward pass (every op of every edge computed)."""
    base, edges = space.base_costs()["flops"], space.edge_costs()["flops"]
    return base + sum(sum(row) for row in edges)
