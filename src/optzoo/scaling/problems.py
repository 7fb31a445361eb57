"""Models and tasks of the scaling reproductions: the brief's pre-LN residual MLP, built by a
:class:`~optzoo.scaling.complete_p.Parameterisation`, and a Gaussian-mixture classification
task with fresh batches (ample data: no sample is seen twice, so the loss measures optimisation,
not overfitting).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from optzoo.scaling.complete_p import Parameterisation

__all__ = ["GaussianMixture", "ResidualMLP"]


class ResidualMLP(nn.Module):
    """x ↦ head(α_out/m_N · LN(h_L)), h_0 = W_in x, h_l = h_(l−1) + m_L^(−α)·f_l(LN(h_(l−1))),
    f_l = Linear(N, 4N) → GELU → Linear(4N, N) (the brief's block), initialised and multiplied as
    ``param`` says (its width and depth are the model's)."""

    def __init__(self, d_in: int, d_out: int, param: Parameterisation, expansion: int = 4):
        super().__init__()
        for name, v in (("d_in", d_in), ("d_out", d_out), ("expansion", expansion)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
        if not isinstance(param, Parameterisation):
            raise TypeError(f"param: expected a Parameterisation, got {type(param).__name__}")
        self.param = param
        n, e = param.width, expansion
        self.input = nn.Linear(d_in, n)
        self.blocks = nn.ModuleList()
        for _ in range(param.depth):
            block = nn.Module()
            block.norm = nn.LayerNorm(n)
            block.fc_in = nn.Linear(n, e * n)
            block.fc_out = nn.Linear(e * n, n)
            self.blocks.append(block)
        self.final_norm = nn.LayerNorm(n)
        self.head = nn.Linear(n, d_out)
        self.branch = param.branch_multiplier()
        self.out_scale = param.output_scale()
        self._init(d_in, e)

    @torch.no_grad()
    def _init(self, d_in: int, e: int) -> None:
        p, bw = self.param, self.param.base_width
        nn.init.normal_(self.input.weight, std=p.init_std("input", d_in))
        nn.init.zeros_(self.input.bias)
        for block in self.blocks:
            nn.init.normal_(block.fc_in.weight, std=p.init_std("hidden", p.width, bw))
            nn.init.normal_(block.fc_out.weight, std=p.init_std("hidden", e * p.width, e * bw))
            nn.init.zeros_(block.fc_in.bias)
            nn.init.zeros_(block.fc_out.bias)
        nn.init.normal_(self.head.weight, std=p.init_std("output", p.width))
        nn.init.zeros_(self.head.bias)

    @staticmethod
    def kind_of(name: str) -> str:
        """The :data:`~optzoo.scaling.complete_p.KINDS` entry of a parameter name."""
        if name.startswith("input."):
            return "input"
        if name.startswith("final_norm."):
            return "final_norm"
        if name.startswith("head."):
            return "output"
        if ".norm." in name:
            return "hidden_norm"
        if name.endswith(".bias"):
            return "hidden_bias"
        if name.startswith("blocks."):
            return "hidden"
        raise ValueError(f"name: unknown parameter {name!r}")

    def forward(self, x: Tensor, return_hidden: bool = False):
        h = self.input(x)
        hidden = []
        for block in self.blocks:
            h = h + self.branch * block.fc_out(F.gelu(block.fc_in(block.norm(h))))
            hidden.append(h)
        out = self.head(self.out_scale * self.final_norm(h))
        return (out, hidden) if return_hidden else out


class GaussianMixture:
    """``classes`` Gaussian classes in ``dim`` dimensions: means drawn once from N(0, I) by
    ``seed``, samples x = μ_y + ``noise``·N(0, I) with y uniform; :meth:`batch` draws fresh
    samples (the task's data are unlimited), :meth:`eval_set` a fixed held-out set."""

    def __init__(self, dim: int = 32, classes: int = 20, noise: float = 1.0, seed: int = 0):
        for name, v in (("dim", dim), ("classes", classes)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 2:
                raise ValueError(f"{name}: expected an integer >= 2, got {v!r}")
        if not (isinstance(noise, int | float) and math.isfinite(noise) and noise > 0):
            raise ValueError(f"noise: expected a finite number > 0, got {noise!r}")
        self.dim, self.classes, self.noise = dim, classes, float(noise)
        gen = torch.Generator().manual_seed(int(seed))
        self.means = torch.randn(classes, dim, generator=gen)

    def batch(self, size: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"size: expected an integer >= 1, got {size!r}")
        y = torch.randint(self.classes, (size,), generator=generator)
        x = self.means[y] + self.noise * torch.randn(size, self.dim, generator=generator)
        return x, y

    def eval_set(self, size: int = 4096, seed: int = 12345) -> tuple[Tensor, Tensor]:
        return self.batch(size, torch.Generator().manual_seed(seed))
