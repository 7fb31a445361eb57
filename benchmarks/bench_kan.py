"""KAN convergence (kan area): forward + backward of optzoo's two-layer KAN vs pykan's ``KANLayer``.

Issue 4 asks for the time of one forward + backward pass of our KAN vs ``pykan`` (0.2.8,
import name ``kan``) at the same width and grid.  Both sides build the paper's architecture,
inputs d -> m hidden nodes -> 1 output, with g basis functions on every edge:

* ours: ``TwoLayerKAN(d, m, g)`` -- Gaussian RBFs (the paper's FastKAN-style basis), first
  layer α trained, second layer frozen (β, a buffer);
* pykan: ``KANLayer(d, m, num=g-3, k=3)`` then ``KANLayer(m, 1, num=g-3, k=3)`` -- cubic
  B-splines on g - 3 grid intervals (= g basis functions per edge) plus pykan's SiLU residual
  branch; the second layer's parameters are frozen so both backward passes differentiate the
  first layer only.

Same batch, float32, one thread count (torch's default).  The loss is ½‖f(x) − y‖².
pykan's layer also materialises per-edge activations (n, out, in) for plotting; that cost is part
of its forward and is what a user of pykan pays.
"""

from __future__ import annotations

import time

import torch

N, D, M, G = 256, 16, 256, 8
BLOCKS, STEPS, WARMUP = 5, 10, 3


def _data():
    g = torch.Generator().manual_seed(0)
    return torch.rand(N, D, generator=g), torch.randn(N, generator=g)


def _ours():
    from optzoo.kan.two_layer_kan import TwoLayerKAN

    model = TwoLayerKAN(D, M, G, generator=torch.Generator().manual_seed(0), dtype=torch.float32)
    return model, model


def _pykan():
    from kan import KANLayer

    torch.manual_seed(0)
    first = KANLayer(in_dim=D, out_dim=M, num=G - 3, k=3, grid_range=[0, 1])
    second = KANLayer(in_dim=M, out_dim=1, num=G - 3, k=3, grid_range=[-1, 1])
    for p in second.parameters():
        p.requires_grad_(False)

    def forward(x):
        hidden = first(x)[0]
        return second(hidden)[0].squeeze(-1)

    return forward, torch.nn.ModuleList([first, second])


def _timer(build):
    forward, module = build()
    x, y = _data()

    def one():
        module.zero_grad(set_to_none=True)
        loss = 0.5 * ((forward(x) - y) ** 2).sum()
        loss.backward()

    for _ in range(WARMUP):
        one()

    def block() -> float:
        t0 = time.perf_counter()
        for _ in range(STEPS):
            one()
        return (time.perf_counter() - t0) / STEPS

    return block


def bench_forward_backward() -> dict:
    ours, peer = _timer(_ours), _timer(_pykan)
    t_ours, t_peer = float("inf"), float("inf")
    for _ in range(BLOCKS):
        t_ours = min(t_ours, ours())
        t_peer = min(t_peer, peer())
    return {"name": f"kan.forward_backward.n{N}_d{D}_m{M}_g{G}", "method": "TwoLayerKAN",
            "peer": "pykan KANLayer x2", "method_s": t_ours, "peer_s": t_peer}


BENCHMARKS = [bench_forward_backward]
