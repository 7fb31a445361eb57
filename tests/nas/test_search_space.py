"""Exact parameter and FLOP counts of the cell spaces, checked against the instantiated
networks (``sum(p.numel())`` and an independent forward-hook FLOP counter) and against the
published NAS-Bench-201 ranges."""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn

from optzoo.nas.search_space import MINI_TOPOLOGY, NATS_TOPOLOGY, OPS, CellSpace


def hook_flops(model: nn.Module, shape) -> int:
    """xautodl's rule, written independently: MACs of Conv2d / Linear (+ bias), nothing else."""
    total = [0]

    def conv(m, inp, out):
        k = m.kernel_size[0] * m.kernel_size[1]
        total[0] += (k * m.in_channels * m.out_channels // m.groups + (m.bias is not None)
                     * m.out_channels) * out.shape[2] * out.shape[3]

    def lin(m, inp, out):
        total[0] += m.in_features * m.out_features + (m.bias is not None) * m.out_features

    hs = [m.register_forward_hook(conv if isinstance(m, nn.Conv2d) else lin)
          for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        model.eval()(torch.zeros(1, *shape))
    for h in hs:
        h.remove()
    return total[0]


def _shape(space):
    return (space.in_channels, space.image_size, space.image_size)


def test_mini_counts_match_instantiated_networks_for_every_architecture():
    assert MINI_TOPOLOGY.size == 125 and MINI_TOPOLOGY.n_edges == 3
    for arch in MINI_TOPOLOGY.all_archs():
        net = MINI_TOPOLOGY.build(arch)
        c = MINI_TOPOLOGY.costs(arch)
        assert c["params"] == sum(p.numel() for p in net.parameters()), arch
        assert c["flops"] == hook_flops(net, _shape(MINI_TOPOLOGY)), arch


def test_nats_counts_match_instantiated_networks():
    rng = random.Random(0)
    archs = [(0,) * 6, (3,) * 6, (2,) * 6, (4,) * 6]
    archs += [tuple(rng.randrange(5) for _ in range(6)) for _ in range(2)]
    for arch in archs:
        net = NATS_TOPOLOGY.build(arch)
        c = NATS_TOPOLOGY.costs(arch)
        assert c["params"] == sum(p.numel() for p in net.parameters()), arch
        assert c["flops"] == hook_flops(net, _shape(NATS_TOPOLOGY)), arch


def test_nats_extremes_match_published_nas_bench_201_ranges():
    # NAS-Bench-201 / NATS-Bench (CIFAR-10) as usually quoted: params 0.07–1.53 MB,
    # FLOPs 7.78–220.11 M; agreement to within one unit of the quoted last digit
    lo, hi = NATS_TOPOLOGY.costs((0,) * 6), NATS_TOPOLOGY.costs((3,) * 6)
    assert abs(lo["params"] / 1e6 - 0.07) < 0.01 and abs(hi["params"] / 1e6 - 1.53) < 0.01
    assert abs(lo["flops"] / 1e6 - 7.78) < 0.01 and abs(hi["flops"] / 1e6 - 220.11) < 0.01
    assert NATS_TOPOLOGY.size == 15625


def test_hand_count_of_the_mini_all_none_network():
    # stem 3x3 1→8 + BN; reduction 8→16: conv_a 3x3, conv_b 3x3 (+2 BNs), 1x1 shortcut;
    # last BN(16); linear 16→10
    params = 9 * 8 + 16 + (9 * 8 * 16 + 32) + (9 * 16 * 16 + 32) + 8 * 16 + 32 + 16 * 10 + 10
    flops = 9 * 8 * 64 + (9 * 8 * 16 + 9 * 16 * 16 + 8 * 16) * 16 + 16 * 10 + 10
    assert MINI_TOPOLOGY.costs((0, 0, 0)) == {"params": params, "flops": flops}


def test_encoding_round_trips():
    s = "|nor_conv_3x3~0|+|none~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_1x1~1|none~2|"
    a = NATS_TOPOLOGY.from_str(s)
    assert a == (3, 0, 1, 4, 2, 0) and NATS_TOPOLOGY.to_str(a) == s
    for i in (0, 1, 77, 124):
        assert MINI_TOPOLOGY.index(MINI_TOPOLOGY.arch(i)) == i
    assert list(MINI_TOPOLOGY.all_archs())[77] == MINI_TOPOLOGY.arch(77)
    assert MINI_TOPOLOGY.ops == OPS


def test_cell_wiring_node_sums():
    # a single skip edge 1←0 and 2←1 with 2←0 none: the cell is the identity
    space = CellSpace(n_nodes=3, channels=4, cells_per_stage=1, stages=1, in_channels=1,
                      image_size=4)
    from optzoo.nas.search_space import InferCell

    x = torch.randn(2, 4, 4, 4)
    assert torch.equal(InferCell(space, (1, 0, 1), 4)(x), x)
    assert torch.equal(InferCell(space, (1, 1, 1), 4)(x), 2 * x)


@pytest.mark.parametrize("bad", [(0, 0), (0, 0, 5), (0, -1, 0)])
def test_bad_arch_is_rejected(bad):
    with pytest.raises(ValueError, match="arch"):
        MINI_TOPOLOGY.costs(bad)


def test_bad_space_is_rejected():
    with pytest.raises(ValueError, match="image_size"):
        CellSpace(image_size=30)
    with pytest.raises(ValueError, match="ops"):
        CellSpace(ops=("none", "conv_7x7"))
    with pytest.raises(ValueError, match="text"):
        MINI_TOPOLOGY.from_str("|none~0|+|none~0|")
