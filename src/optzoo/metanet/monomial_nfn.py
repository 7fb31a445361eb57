"""Monomial-NFN: a metanetwork equivariant to permutations *and* scalings / sign flips of
hidden neurons (Tran, Vo, Tran-Huu, Nguyen & Nguyen, "Monomial Matrix Group Equivariant Neural
Functional Networks", NeurIPS 2024, code MathematicalAI-NUS/Monomial-NFN), the strict backbone β
and the main baseline of Tran et al., "Quasi-Equivariant Metanetworks" (ICLR 2026, OpenReview
XMiDpi2mWY, §4.1).

Group (``zoo`` module docstring): on hidden layers W_l → D_l P_l W_l P_{l-1}ᵀ D_{l-1}^{-1},
b_l → D_l P_l b_l, D positive (``group="scale"``, ReLU zoos) or ±1 (``group="sign"``, sin zoos).
Features: W_l ``B x C x n_l x n_{l-1}``, b_l ``B x C x n_l``; the group acts identically on
every channel.

Equivariant layer (:class:`MonomialLinear`, the HNPS layer of the Monomial-NFN code,
``nfn/layers/layers.py``, re-derived here): an entry may only be mixed with terms that carry the
same scaling, which leaves
* hidden W_l, b_l (1 < l < L): channel mixing ``A W_l``, ``A' b_l`` only (entry-wise, the
  sparsity the QE paper criticises);
* first layer (columns = the fixed input neurons, rows scale with D_1): every entry (j, k) mixes
  the whole row j of W_1 over the input neurons with its own weights, W'_1[j, k] =
  Σ_{c, q} A[k, q] W_1[j, q] + Σ_c B[k] b_1[j]; b'_1[j] = Σ_{c, q} C[q] W_1[j, q] + D b_1[j];
* last layer (rows = the fixed output neurons, columns scale with D_{L-1}^{-1}): every entry
  (j, k) mixes the whole column k of W_L over the output neurons, W'_L[j, k] =
  Σ_{c, p} A[j, p] W_L[p, k]; b_L (invariant) gets b'_L[j] = Σ_{c, p} C[j, p] b_L[p] + τ[j],
  a constant per output neuron.
(Every coefficient is also a c_out x c_in channel matrix.)  No constant term anywhere else: a
constant added to a hidden-neuron entry would not scale with it.
Between layers a nonlinearity that commutes with the group: ReLU for positive scalings
(positive homogeneity), tanh for sign flips (oddness).

Invariant layer (:func:`monomial_pool`, as ``HNPSPool`` in the Monomial-NFN code): for
``scale``, every entry's channel vector is L2-normalised (x / sqrt(max(‖x‖², 1e-300)): a
positive per-entry factor common to all channels cancels) and passed through a per-channel
affine map; for ``sign``, the absolute value.  Then HNP pooling (means over hidden indices; the
output bias kept as is), a batch norm of the pooled features and an MLP head.  Without
normalisation of the input zoo (it would break scale-equivariance).
"""

from __future__ import annotations

import torch
from torch import nn

from optzoo.metanet.np_nfn import hnp_pool, mlp_head, pooled_size

GROUPS = ("scale", "sign")
# Monomial-NFN's F.normalize clamps norms at 1e-12; trained zoo nets give hidden features with
# channel norms down to 1e-21, where that clamp breaks scale invariance (measured error 3e-2
# at scales 1e4), so only exact zeros are kept from division here.
NORM_EPS = 1e-300  # clamp of the squared norm: channel norms down to 1e-150 stay exact


def _mix(c_in: int, c_out: int) -> nn.Parameter:
    return nn.Parameter(torch.randn(c_out, c_in, dtype=torch.float64) / c_in ** 0.5)


def _param(*shape: int, fan_in: int) -> nn.Parameter:
    return nn.Parameter(torch.randn(*shape, dtype=torch.float64) / fan_in ** 0.5)


def _apply(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.einsum("oc,bc...->bo...", a, x)


class MonomialLinear(nn.Module):
    """One monomial-equivariant linear layer (module docstring), ``c_in`` → ``c_out``.

    Args:
        n_layers: L, the number of weight matrices of the networks read (>= 2).
        c_in, c_out: channels.
        n_in, n_out: input and output widths n_0, n_L of the networks read (the first and
            last layers mix fully over these fixed neurons).
    """

    def __init__(self, n_layers: int, c_in: int, c_out: int, n_in: int, n_out: int) -> None:
        super().__init__()
        if n_layers < 2:
            raise ValueError(f"n_layers: expected >= 2 (at least one hidden layer), got "
                             f"{n_layers}")
        if min(c_in, c_out, n_in, n_out) < 1:
            raise ValueError(f"c_in, c_out, n_in, n_out: expected >= 1, got {c_in}, {c_out}, "
                             f"{n_in}, {n_out}")
        self.n_layers = n_layers
        fan0 = c_in * (n_in + 1)
        # first layer: out[m, j, k] = Σ_{n,q} w0[m, n, q, k] W[n, j, q] + Σ_n b0[m, n, k] b[n, j]
        self.w0_w = _param(c_out, c_in, n_in, n_in, fan_in=fan0)
        self.w0_b = _param(c_out, c_in, n_in, fan_in=fan0)
        self.b0_w = _param(c_out, c_in, n_in, fan_in=fan0)
        self.b0_b = _param(c_out, c_in, fan_in=fan0)
        # last layer: out[m, j, k] = Σ_{n,p} wl[m, n, p, j] W[n, p, k]; likewise for b_L
        self.wl_w = _param(c_out, c_in, n_out, n_out, fan_in=c_in * n_out)
        self.bl_b = _param(c_out, c_in, n_out, n_out, fan_in=c_in * n_out)
        self.out_bias = nn.Parameter(torch.zeros(c_out, n_out, dtype=torch.float64))
        # hidden layers: channel mixing only
        self.w_mix = nn.ParameterList(_mix(c_in, c_out) for _ in range(n_layers - 2))
        self.b_mix = nn.ParameterList(_mix(c_in, c_out) for _ in range(n_layers - 2))

    def forward(self, weights, biases):
        last = self.n_layers - 1
        out_w, out_b = [], []
        for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
            if i == 0:
                ow = (torch.einsum("mnqk,bnjq->bmjk", self.w0_w, w)
                      + torch.einsum("mnk,bnj->bmjk", self.w0_b, b))
                ob = (torch.einsum("mnq,bnjq->bmj", self.b0_w, w)
                      + torch.einsum("mn,bnj->bmj", self.b0_b, b))
            elif i == last:
                ow = torch.einsum("mnpj,bnpk->bmjk", self.wl_w, w)
                ob = torch.einsum("mnpj,bnp->bmj", self.bl_b, b) + self.out_bias
            else:
                ow, ob = _apply(self.w_mix[i - 1], w), _apply(self.b_mix[i - 1], b)
            out_w.append(ow)
            out_b.append(ob)
        return out_w, out_b


def activation(group: str):
    """The pointwise nonlinearity that commutes with ``group``: ReLU (scale) or tanh (sign)."""
    if group not in GROUPS:
        raise ValueError(f"group: expected one of {GROUPS}, got {group!r}")
    return torch.relu if group == "scale" else torch.tanh


def unit_channels(x: torch.Tensor) -> torch.Tensor:
    """x / ‖x‖ over the channel dim (dim 1) per entry; a squared norm below
    :data:`NORM_EPS` (only exact zeros in practice) is clamped.  The rsqrt of a sum of squares
    is three times faster on the CPU than ``x.norm(dim=1)`` (a strided reduction)."""
    return x * (x * x).sum(1, keepdim=True).clamp_min(NORM_EPS).rsqrt()


class ChannelNormalize(nn.Module):
    """x / ‖x‖_channels per entry (:func:`unit_channels`), then a per-channel affine map
    (HNPS pooling)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, dtype=torch.float64))
        self.bias = nn.Parameter(torch.randn(channels, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = unit_channels(x)
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

    Example:
        Invariant to permuting hidden neurons and rescaling them by positive factors
        (``group="scale"``, ReLU networks):

        >>> import torch
        >>> from optzoo.metanet import MonomialNFN, apply_symmetry, random_symmetry, relu_mlp_zoo
        >>> zoo = relu_mlp_zoo(8, seed=0, hidden=8, max_epochs=1, cache=False)
        >>> weights, biases = zoo.tensors()
        >>> _ = torch.manual_seed(0)
        >>> meta = MonomialNFN(zoo.widths, out_dim=1, group="scale", channels=(4, 4),
        ...                    head_hidden=16).eval()
        >>> g = random_symmetry(zoo.widths, len(zoo), "scale", torch.Generator().manual_seed(0))
        >>> with torch.no_grad():
        ...     out, out_g = meta(weights, biases), meta(*apply_symmetry(weights, biases, *g))
        >>> out.shape, bool((out - out_g).abs().max() < 1e-8)
        (torch.Size([8, 1]), True)
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
        self.layers = nn.ModuleList(MonomialLinear(L, a, b, widths[0], widths[-1])
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
