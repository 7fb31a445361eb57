"""NAS-Bench-201 / NATS-Bench topology cell spaces with exact parameter and FLOP counts.

The networks follow xautodl's ``TinyNetwork`` / ``InferCell`` (Dong & Yang, "NAS-Bench-201",
ICLR 2020; Dong et al., "NATS-Bench", TPAMI 2021), which ConNAS (ICLR 2026, OpenReview
fcKMFIiNFQ) searches in its topology experiments:

* stem ``Conv3x3(in → C, no bias) + BN``;
* ``stages`` stages of ``cells_per_stage`` cells at ``C·2^s`` channels, separated by a ResNet
  basic block with stride 2 (``ReLU-Conv3x3-BN`` twice, shortcut ``AvgPool2x2 + Conv1x1``);
* ``BN + ReLU``, global average pooling, ``Linear(C_last → classes)``.

A cell has ``n_nodes`` nodes; node ``i`` is the sum over ``j < i`` of ``op_{i←j}(node_j)``, the
output is the last node.  The ops are NATS-Bench's five: ``none`` (zero), ``skip_connect``,
``nor_conv_1x1`` / ``nor_conv_3x3`` (``ReLU-Conv-BN``, conv without bias since BN is affine) and
``avg_pool_3x3`` (``count_include_pad=False``).  ``none`` is a valid choice (NATS-Bench keeps it;
DARTS drops it at derivation) and is kept in search, ground truth and costs alike.

Two spaces are predefined:

* :data:`NATS_TOPOLOGY` -- the real one: 4 nodes (6 edges), C = 16, 5 cells per stage, 3
  stages, 32×32×3 inputs: 5^6 = 15,625 architectures;
* :data:`MINI_TOPOLOGY` -- the brief's "mini-201": 3 nodes (3 edges), C = 8, 1 cell per stage,
  2 stages, 8×8×1 inputs (scikit-learn digits): 5^3 = 125 architectures.

Costs (per image):

* ``params`` -- every parameter of the instantiated inference network (conv, BN affine,
  linear), as ``sum(p.numel())``; NATS-Bench reports it divided by 1e6 ("MB").
* ``flops`` -- xautodl's ``get_model_infos`` count: multiply-accumulates of every ``Conv2d``
  (``k²·C_in·C_out/groups·H_out·W_out`` plus ``C_out·H_out·W_out`` for a bias) and ``Linear``
  (``in·out`` plus ``out`` for a bias); pooling, BN, ReLU and additions count 0 (xautodl hooks
  pools but leaves them out of the total).  NATS-Bench reports it divided by 1e6.

Both are additive over edges: ``cost(A) = c_0 + Σ_l d_l(A_l)`` because every cell of every
stage uses the same genotype; :meth:`CellSpace.edge_costs` gives the ``d_l(j)``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

OPS: tuple[str, ...] = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
COSTS = ("params", "flops")

Arch = tuple[int, ...]


@dataclass(frozen=True)
class CellSpace:
    """A NATS-Bench-style topology space.

    Args:
        n_nodes: nodes per cell (the input node included); edges = n_nodes·(n_nodes−1)/2.
        channels: C, the channels of the first stage (doubled at each reduction).
        cells_per_stage: N, cells per stage.
        stages: number of stages (stages − 1 stride-2 residual reductions).
        in_channels: image channels.
        image_size: input height = width; must stay even through every reduction.
        num_classes: classifier outputs.
        ops: the candidate ops (names from :data:`OPS`).

    Example:
        The mini space of the reproduction (3 nodes, 3 edges, 5 ops: 125 cells on 8 x 8
        digits); an architecture is one op index per edge:

        >>> import torch
        >>> from optzoo.nas import CellSpace
        >>> space = CellSpace(n_nodes=3, channels=8, cells_per_stage=1, stages=2,
        ...                   in_channels=1, image_size=8, num_classes=10)
        >>> space.size, space.n_edges, space.ops[:3]
        (125, 3, ('none', 'skip_connect', 'nor_conv_1x1'))
        >>> arch = space.from_str("|skip_connect~0|+|nor_conv_1x1~0|skip_connect~1|")
        >>> arch, space.costs(arch)                  # exact counts, no training
        ((1, 2, 1), {'params': 4306, 'flops': 70314})
        >>> space.build(arch)(torch.rand(2, 1, 8, 8)).shape   # a trainable nn.Module
        torch.Size([2, 10])
    """

    n_nodes: int = 4
    channels: int = 16
    cells_per_stage: int = 5
    stages: int = 3
    in_channels: int = 3
    image_size: int = 32
    num_classes: int = 10
    ops: tuple[str, ...] = OPS

    def __post_init__(self) -> None:
        for name in ("channels", "cells_per_stage", "stages", "in_channels", "num_classes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.n_nodes < 2:
            raise ValueError(f"n_nodes: expected >= 2, got {self.n_nodes}")
        bad = [o for o in self.ops if o not in OPS]
        if bad or len(set(self.ops)) != len(self.ops) or not self.ops:
            raise ValueError(f"ops: expected distinct names from {OPS}, got {self.ops}")
        if self.image_size % (2 ** (self.stages - 1)) or self.image_size < 2 ** (self.stages - 1):
            raise ValueError(f"image_size: expected a multiple of 2^(stages-1) = "
                             f"{2 ** (self.stages - 1)}, got {self.image_size}")

    # -- encoding ---------------------------------------------------------------------------
    @property
    def edges(self) -> list[tuple[int, int]]:
        """(to, from) node pairs in NATS-Bench's string order: 1←0, 2←0, 2←1, 3←0, ..."""
        return [(i, j) for i in range(1, self.n_nodes) for j in range(i)]

    @property
    def n_edges(self) -> int:
        return self.n_nodes * (self.n_nodes - 1) // 2

    @property
    def n_ops(self) -> int:
        return len(self.ops)

    @property
    def size(self) -> int:
        return self.n_ops ** self.n_edges

    def check(self, arch: Sequence[int]) -> Arch:
        """``arch`` as a tuple of op indices, or a ValueError naming what is wrong."""
        a = tuple(int(x) for x in arch)
        if len(a) != self.n_edges or any(not 0 <= x < self.n_ops for x in a):
            raise ValueError(f"arch: expected {self.n_edges} op indices in [0, {self.n_ops}), "
                             f"got {tuple(arch)}")
        return a

    def index(self, arch: Sequence[int]) -> int:
        """Mixed-radix index (edge 0 most significant); not NATS-Bench's file index."""
        idx = 0
        for x in self.check(arch):
            idx = idx * self.n_ops + x
        return idx

    def arch(self, index: int) -> Arch:
        if not 0 <= index < self.size:
            raise ValueError(f"index: expected 0 <= index < {self.size}, got {index}")
        out = []
        for _ in range(self.n_edges):
            index, r = divmod(index, self.n_ops)
            out.append(r)
        return tuple(reversed(out))

    def all_archs(self) -> Iterator[Arch]:
        return itertools.product(range(self.n_ops), repeat=self.n_edges)

    def to_str(self, arch: Sequence[int]) -> str:
        """NATS-Bench string, e.g. ``|nor_conv_3x3~0|+|none~0|skip_connect~1|``."""
        a = self.check(arch)
        nodes, k = [], 0
        for i in range(1, self.n_nodes):
            nodes.append("|" + "|".join(f"{self.ops[a[k + j]]}~{j}" for j in range(i)) + "|")
            k += i
        return "+".join(nodes)

    def from_str(self, text: str) -> Arch:
        nodes = text.split("+")
        if len(nodes) != self.n_nodes - 1:
            raise ValueError(f"text: expected {self.n_nodes - 1} '+'-separated nodes, "
                             f"got {text!r}")
        out = []
        for i, node in enumerate(nodes, start=1):
            items = [s for s in node.split("|") if s]
            if len(items) != i:
                raise ValueError(f"text: node {i} needs {i} inputs, got {node!r}")
            for j, item in enumerate(items):
                op, _, src = item.partition("~")
                if op not in self.ops or src != str(j):
                    raise ValueError(f"text: bad edge {item!r} in {text!r} (ops {self.ops})")
                out.append(self.ops.index(op))
        return tuple(out)

    # -- exact costs ------------------------------------------------------------------------
    def _stage(self, s: int) -> tuple[int, int]:
        """(channels, spatial side) of stage s."""
        return self.channels * 2 ** s, self.image_size // 2 ** s

    def _op_cost(self, op: str, c: int, h: int) -> tuple[int, int]:
        """(params, flops) of one op at c channels and side h (stride 1, C_in = C_out)."""
        if op == "nor_conv_1x1":
            return c * c + 2 * c, c * c * h * h
        if op == "nor_conv_3x3":
            return 9 * c * c + 2 * c, 9 * c * c * h * h
        return 0, 0  # none, skip, avg pool: no parameters, no conv/linear MACs

    def base_costs(self) -> dict[str, int]:
        """c_0: stem, reductions, last BN and classifier (cells with every edge ``none``)."""
        c0, h0 = self._stage(0)
        params = 9 * self.in_channels * c0 + 2 * c0
        flops = 9 * self.in_channels * c0 * h0 * h0
        for s in range(self.stages - 1):
            c, h = self._stage(s)
            c2, h2 = 2 * c, h // 2
            # conv_a (3x3, stride 2) + BN, conv_b (3x3) + BN, shortcut AvgPool2 + Conv1x1
            params += 9 * c * c2 + 2 * c2 + 9 * c2 * c2 + 2 * c2 + c * c2
            flops += (9 * c * c2 + 9 * c2 * c2 + c * c2) * h2 * h2
        cl = self._stage(self.stages - 1)[0]
        params += 2 * cl + cl * self.num_classes + self.num_classes
        flops += cl * self.num_classes + self.num_classes
        return {"params": params, "flops": flops}

    def edge_costs(self) -> dict[str, list[list[int]]]:
        """d_l(j): what op j on edge l adds to each cost (all cells of all stages)."""
        out: dict[str, list[list[int]]] = {k: [] for k in COSTS}
        for _ in range(self.n_edges):
            rows = {k: [] for k in COSTS}
            for op in self.ops:
                p = f = 0
                for s in range(self.stages):
                    dp, df = self._op_cost(op, *self._stage(s))
                    p += self.cells_per_stage * dp
                    f += self.cells_per_stage * df
                rows["params"].append(p)
                rows["flops"].append(f)
            for k in COSTS:
                out[k].append(rows[k])
        return out

    def costs(self, arch: Sequence[int]) -> dict[str, int]:
        """Exact ``params`` and ``flops`` of the inference network of ``arch``."""
        a = self.check(arch)
        base, edges = _cost_tables(self)
        return {k: base[k] + sum(edges[k][e][j] for e, j in enumerate(a)) for k in COSTS}

    def params(self, arch: Sequence[int]) -> int:
        return self.costs(arch)["params"]

    def flops(self, arch: Sequence[int]) -> int:
        return self.costs(arch)["flops"]

    # -- networks ---------------------------------------------------------------------------
    def build(self, arch: Sequence[int]) -> nn.Module:
        """The inference network of ``arch`` (xautodl ``TinyNetwork`` with ``InferCell``s)."""
        return TinyNetwork(self, cell=lambda c: InferCell(self, self.check(arch), c))


@functools.lru_cache(maxsize=16)
def _cost_tables(space: CellSpace) -> tuple[dict[str, int], dict[str, list[list[int]]]]:
    return space.base_costs(), space.edge_costs()


NATS_TOPOLOGY = CellSpace()
MINI_TOPOLOGY = CellSpace(n_nodes=3, channels=8, cells_per_stage=1, stages=2, in_channels=1,
                          image_size=8, num_classes=10)


# -- modules (xautodl cell_operations, affine BN for inference, affine=False in search) --------

class ReLUConvBN(nn.Sequential):
    def __init__(self, c_in: int, c_out: int, k: int, stride: int, affine: bool = True):
        super().__init__(nn.ReLU(inplace=False),
                         nn.Conv2d(c_in, c_out, k, stride=stride, padding=k // 2,
                                   bias=not affine),
                         nn.BatchNorm2d(c_out, affine=affine))


class Zero(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mul(0.0)


def make_op(name: str, c: int, affine: bool = True) -> nn.Module:
    """A stride-1, c → c candidate op of the cell."""
    if name == "none":
        return Zero()
    if name == "skip_connect":
        return nn.Identity()
    if name == "nor_conv_1x1":
        return ReLUConvBN(c, c, 1, 1, affine)
    if name == "nor_conv_3x3":
        return ReLUConvBN(c, c, 3, 1, affine)
    if name == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
    raise ValueError(f"name: unknown op {name!r}; expected one of {OPS}")


class ResNetBasicBlock(nn.Module):
    """xautodl's stride-2 reduction: conv_a, conv_b and an AvgPool2 + Conv1x1 shortcut."""

    def __init__(self, c_in: int, c_out: int, affine: bool = True):
        super().__init__()
        self.conv_a = ReLUConvBN(c_in, c_out, 3, 2, affine)
        self.conv_b = ReLUConvBN(c_out, c_out, 3, 1, affine)
        self.downsample = nn.Sequential(nn.AvgPool2d(2, 2, 0),
                                        nn.Conv2d(c_in, c_out, 1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.downsample(x) + self.conv_b(self.conv_a(x))


class InferCell(nn.Module):
    """A discrete cell: one op per edge."""

    def __init__(self, space: CellSpace, arch: Arch, c: int):
        super().__init__()
        self.n_nodes = space.n_nodes
        self.layers = nn.ModuleList(make_op(space.ops[j], c) for j in arch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nodes, k = [x], 0
        for i in range(1, self.n_nodes):
            s = 0
            for j in range(i):  # edges in NATS order: node i sums op(node j), j < i
                s = s + self.layers[k](nodes[j])
                k += 1
            nodes.append(s)
        return nodes[-1]


class TinyNetwork(nn.Module):
    """Stem, stages of cells separated by residual reductions, BN-ReLU, pooling, linear.

    Args:
        space: the macro settings.
        cell: builds the cell at a given channel count (a discrete or a search cell).
        affine: BN affine flag of stem/reductions/last BN (True for inference networks).
    """

    def __init__(self, space: CellSpace, cell, affine: bool = True):
        super().__init__()
        c = space.channels
        self.stem = nn.Sequential(nn.Conv2d(space.in_channels, c, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(c))
        layers: list[nn.Module] = []
        for s in range(space.stages):
            if s > 0:
                layers.append(ResNetBasicBlock(c, 2 * c))
                c *= 2
            layers += [cell(c) for _ in range(space.cells_per_stage)]
        self.cells = nn.ModuleList(layers)
        self.lastact = nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(inplace=False))
        self.classifier = nn.Linear(c, space.num_classes)

    def forward(self, x: torch.Tensor, *args) -> torch.Tensor:
        h = self.stem(x)
        for layer in self.cells:
            h = layer(h, *args) if args and not isinstance(layer, ResNetBasicBlock) else layer(h)
        h = self.lastact(h).mean(dim=(2, 3))
        return self.classifier(h)
