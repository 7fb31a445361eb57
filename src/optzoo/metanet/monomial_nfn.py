"""Monomial-NFN: a metanetwork equivariant to permutations *and* scalings / sign flips of
hidden neurons (Tran, Vo, Tran-Huu, Nguyen & Nguyen, "Monomial Matrix Group Equivariant Neural
Functional Networks", NeurIPS 2024, code MathematicalAI-NUS/Monomial-NFN), the strict backbone β
and the main baseline of Tran et al., "Quasi-Equivariant Metanetworks" (ICLR 2026, OpenReview
XMiDpi2mWY, §4.1).

Group (``zoo`` module docstring): on hidden layers W_l → D_l P_l W_l P_{l-1}ᵀ D_{l-1}^{-1},
b_l → D_l P_l b_l, D positive (``group="scale"``, ReLU zoos) or ±1 (``group="sign"``, sin zoos).
Features: W_l ``B x C x n_l x n_{l-1}``, b_l ``B x C x n_l``; the group acts identically on
every channel.

Equivariant layer (:class:`MonomialLinear`, our re-derivation of the HNPS layer): an entry may
only be mixed with terms that carry the same scaling, which leaves
* every W_l, b_l: channel mixing ``A W_l`` (entry-wise, the sparsity the QE paper criticises);
* first layer (columns = fixed input neurons, rows scale with D_1): + b_1 1ᵀ and the row mean
  of W_1 broadcast over columns; b_1 also gets the row mean of W_1;
* last layer (rows = fixed output neurons, columns scale with D_{L-1}^{-1}): + the column mean
  of W_L broadcast over rows; b_L (invariant) gets a constant bias.
Between layers a nonlinearity that commutes with the group: ReLU for positive scalings
(positive homogeneity), tanh for sign flips (oddness).

Invariant layer (:func:`monomial_pool`, as ``HNPSPool`` in the Monomial-NFN code): for
``scale``, every entry's channel vector is L2-normalised (x / max(‖x‖, 1e-300): a positive
per-entry factor common to all channels cancels) and passed through a per-channel affine map;
for ``sign``, the absolute value.  Then HNP pooling (means over hidden indices; the output bias
kept as is) and an MLP head.  Without normalisation of the input zoo (it would break
scale-equivariance).
"""

from __future__ import annotations

import torch
from torch import nn

from optzoo.metanet.np_nfn import hnp_pool, mlp_head, pooled_size

GROUPS = ("scale", "sign")
# Monomial-NFN's F.normalize clamps norms at 1e-12; trained zoo nets give hidden features with
# channel norms down to 1e-21, where that clamp breaks scale invariance (measured error 3e-2
# at scales 1e4), so only exact zeros are kept from division here.
NORM_EPS = 1e-300


def _mix(c_in: int, c_out: int) -> nn.Parameter:
    return nn.Parameter(torch.randn(c_out, c_in, dtype=torch.float64) / c_in ** 0.5)


def _apply(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.einsum("oc,bc...->bo...", a, x)


class MonomialLinear(nn.Module):
    """One monomial-equivariant linear layer (module docstring), ``c_in`` → ``c_out``."""

    def __init__(self, n_layers: int, c_in: int, c_out: int) -> None:
        super().__init__()
        if n_layers < 2:
            raise ValueError(f"n_layers: expected >= 2 (at least one hidden layer), got "
                             f"{n_layers}")
        self.n_layers = n_layers
        self.w_mix = nn.ParameterList()
        self.b_mix = nn.ParameterList()
        for i in range(n_layers):
            self.w_mix.append(_mix(c_in * (3 if i == 0 else 2 if i == n_layers - 1 else 1),
                                   c_out))
            self.b_mix.append(_mix(c_in * (2 if i == 0 else 1), c_out))
        self.out_bias = nn.Parameter(torch.zeros(c_out, dtype=torch.float64))

    def forward(self, weights, biases):
        out_w, out_b = [], []
        last = self.n_layers - 1
        for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
            tw, tb = [w], [b]
            if i == 0:
                tw += [b.unsqueeze(-1).expand_as(w), w.mean(-1, keepdim=True).expand_as(w)]
                tb.append(w.mean(-1))
            if i == last:
                tw.append(w.mean(-2, keepdim=True).expand_as(w))
            ow = _apply(self.w_mix[i], torch.cat(tw, 1))
            ob = _apply(self.b_mix[i], torch.cat(tb, 1))
            if i == last:
                ob = ob + self.out_bias[None, :, None]
            out_w.append(ow)
            out_b.append(ob)
        return out_w, out_b


def activation(group: str):
    """The pointwise nonlinearity that commutes with ``group``: ReLU (scale) or tanh (sign)."""
    if group not in GROUPS:
        raise ValueError(f"group: expected one of {GROUPS}, got {group!r}")
    return torch.relu if group == "scale" else torch.tanh


class ChannelNormalize(nn.Module):
    """x / max(‖x‖_channels, eps) per entry, then a per-channel affine map (HNPS pooling)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, dtype=torch.float64))
        self.bias = nn.Parameter(torch.randn(channels, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x / x.norm(dim=1, keepdim=True).clamp_min(NORM_EPS)
        shape = (1, -1) + (1,) * (x.dim() - 2)
        return x * self.weight.view(shape) + self.bias.view(shape)


def monomial_pool(weights, biases, group: str, norms_w=None, norms_b=None) -> torch.Tensor:
    """Invariant pooling (module docstring): ``B x features``."""
    last = len(weights) - 1
    if group == "scale":
        weights = [n(w) for n, w in zip(norms_w, weights, strict=True)]
        biases = [b if i == last else n(b)
                  for i, (n, b) in enumerate(zip(norms_b, biases, strict=True))]
    elif group == "sign":
        weights = [w.abs() for w in weights]
        biases = [b if i == last else b.abs() for i, b in enumerate(biases)]
    else:
        raise ValueError(f"group: expected one of {GROUPS}, got {group!r}")
    return hnp_pool(weights, biases)


class MonomialNFN(nn.Module):
    """Monomial-NFN: equivariant layers + nonlinearity, invariant pooling, MLP head.

    Args:
        widths: (n_0, ..., n_L) of the networks read (L >= 2).
        out_dim: outputs.
        group: ``"scale"`` (ReLU zoos) or ``"sign"`` (sin zoos).
        channels: channels of the equivariant layers.
        head_hidden: width of the head's hidden layers.
    """

    def __init__(self, widths, out_dim: int = 1, group: str = "scale", channels=(16, 16),
                 head_hidden: int = 128) -> None:
        super().__init__()
        if group not in GROUPS:
            raise ValueError(f"group: expected one of {GROUPS}, got {group!r}")
        if len(widths) < 3 or not channels or min(channels) < 1:
            raise ValueError(f"widths, channels: expected >= 3 widths (a hidden layer) and "
                             f"positive channels, got {widths}, {channels}")
        L = len(widths) - 1
        self.group = group
        dims = (1, *channels)
        self.layers = nn.ModuleList(MonomialLinear(L, a, b)
                                    for a, b in zip(dims[:-1], dims[1:], strict=True))
        self.norms_w = nn.ModuleList(ChannelNormalize(channels[-1]) for _ in range(L))
        self.norms_b = nn.ModuleList(ChannelNormalize(channels[-1]) for _ in range(L))
        self.head = mlp_head(pooled_size(widths, channels[-1]), head_hidden, out_dim)

    def features(self, weights, biases, block=None):
        """Weight-space features after the equivariant layers; ``block(k, θ, (w, b))``, if
        given, transforms the output of layer k before its nonlinearity (QE's α hook)."""
        act = activation(self.group)
        theta = (weights, biases)
        w = [x.unsqueeze(1) for x in weights]
        b = [x.unsqueeze(1) for x in biases]
        for k, layer in enumerate(self.layers):
            w, b = layer(w, b)
            if block is not None:
                w, b = block(k, theta, (w, b))
            w, b = [act(x) for x in w], [act(x) for x in b]
        return w, b

    def forward(self, weights, biases) -> torch.Tensor:
        w, b = self.features(weights, biases)
        return self.head(monomial_pool(w, b, self.group, self.norms_w, self.norms_b))
