"""Quasi-equivariant metanetwork (QE-NFN): Tran, Nguyen, Guérand, Vo & Nguyen,
"Quasi-Equivariant Metanetworks", ICLR 2026 (OpenReview XMiDpi2mWY, arXiv 2604.23720).

Definition (paper §2.2): F is quasi-equivariant if for every g ∈ G and θ there is
g' = g'(g, θ) ∈ G with F(gθ) = g' F(θ); with G maximal (Def. 2.2) this is necessary and
sufficient for F to preserve functional identity.  Construction (§4.1): F(θ) = α(θ) · β(θ),
β strictly G-equivariant (here a :class:`~optzoo.metanet.monomial_nfn.MonomialLinear` layer)
and α: Θ → G, so F(gθ) = [α(gθ) g α(θ)^{-1}] F(θ) for *any* α.  By the connectedness argument
(Remark 4.1) a continuous α takes values in the identity component of G: for ReLU networks the
positive per-neuron scalings of hidden layers.  α(θ)_l = 1 + ε sin(γ(s(θ)))_l (§4.2–4.3,
positive for ε < 1; exp is avoided), γ a small MLP ("scale network") reading statistics s(θ)
of the input weights.

Why the literal reading is a no-op for invariant tasks (a fact, checked by a test): if one
element α(θ) ∈ G acts on every channel of the features and everything after it is
G-equivariant, then β'(α x) = α β'(x) for every later layer and the G-invariant head removes α:
the network equals its backbone for every value of every parameter, whatever α reads.  More
generally, F(θ) = α(θ)β(θ) lies in the G-orbit of β(θ), and a G-invariant readout only sees the
orbit.  So for the paper's invariant tasks the quasi part can only act if α's values do *not*
all commute with the later layers.  The paper's appendix B.1 (its exact MLP construction,
"quite involved" per a reviewer) could not be retrieved with the ``search`` tool (only the
abstract and introduction of arXiv 2604.23720 and third-party summaries: "a learnable
quasi-action on continuous symmetries, parameterised via dedicated scale networks applied to
weight statistics", < 6 % extra parameters).

Our reading (:class:`QuasiEquivariantNFN`), chosen so that the layer is quasi-equivariant and
acts: block k is [β_k → α_k → ReLU] with, for channel c and hidden neuron j of layer l,

    α_k(θ)_{c, l, j} = a_k(θ)_{l, j} · κ_k(θ)_{c, l, j},
    a_k(θ) = 1 + ε sin γ_k(s(θ))          (the paper's α: one element of G, all channels),
    κ_k(θ)_{c, l, j} = 1 + ε sin φ_k(u_{l, j}(β_k(θ)))_c   (a channel-wise scaling),

acting with G's own action W_l ← α_l W_l α_{l-1}^{-1}, b_l ← α_l b_l on hidden neurons, channel
by channel.  u_{l, j} are G-invariant, permutation-equivariant descriptors of hidden neuron j:
the means of the channel-normalised β-features of its incoming row (W_l), of its outgoing
column (W_{l+1}) and its normalised bias (x / ‖x‖ over channels cancels the factor d_i / d_j an
entry gets from a scaling).  Hence κ_k(gθ) = P κ_k(θ) P^{-1}, the diagonal κ commutes with g,
and F_k(gθ) = g' F_k(θ) with the *same* g' = a_k(gθ) g a_k(θ)^{-1} ∈ G on every channel (the
paper's relation, tested); κ differs between channels, so the next layer's channel mixing does
not commute with it and the block changes the network's output (tested).  With
``channel_scaling=False`` only a_k is used: the literal reading, equal to the backbone.
Deviation from the paper: κ is our addition (the only way we found for an α of this form to
act before an exactly invariant head); it is conjugation-equivariant where the paper's α need
not be equivariant.  ε = 0.1 by default, for both factors (α stays in [(1−ε)², (1+ε)²]).

s(θ): per layer, for W_l and b_l, mean / std / quantiles (0, 0.25, 0.5, 0.75, 1) of
log(|x| + 1e-12) and the fraction of positive entries — log-space as the brief advises so that
scales up to 1e4 do not destabilise float statistics.  Only the ``scale`` group (ReLU zoos).
"""

from __future__ import annotations

import torch
from torch import nn

from optzoo.metanet.monomial_nfn import MonomialNFN, monomial_pool, unit_channels

QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)
STATS_PER_TENSOR = 3 + len(QUANTILES)


def weight_statistics(weights, biases) -> torch.Tensor:
    """s(θ): ``B x (2 L · 8)`` log-space statistics of every W_l and b_l (module docstring)."""
    out = []
    for t in [x for pair in zip(weights, biases, strict=True) for x in pair]:
        flat = t.flatten(1)
        logs = torch.log(flat.abs() + 1e-12)
        out += [logs.mean(1, keepdim=True), logs.std(1, keepdim=True),
                (flat > 0).to(flat.dtype).mean(1, keepdim=True),
                torch.quantile(logs, torch.tensor(QUANTILES, dtype=logs.dtype), dim=1).T]
    return torch.cat(out, 1)


def neuron_descriptors(weights, biases) -> list[torch.Tensor]:
    """u: per hidden layer, ``B x n_l x 3C`` G-invariant descriptors of each hidden neuron of
    the weight-space features (means of the normalised incoming row and outgoing column, and
    the normalised bias); they permute with the neurons."""
    out = []
    for i in range(len(weights) - 1):  # hidden layer i+1: rows of W_i, columns of W_{i+1}
        inc = unit_channels(weights[i]).mean(-1)
        outg = unit_channels(weights[i + 1]).mean(-2)
        bias = unit_channels(biases[i])
        out.append(torch.cat([inc, outg, bias], 1).transpose(1, 2))
    return out


def apply_hidden_scaling(weights, biases, scales):
    """W_l ← α_l W_l α_{l-1}^{-1}, b_l ← α_l b_l with ``scales[l]`` of shape ``B x n_l`` (one
    element for all channels) or ``B x C x n_l`` (one per channel); no permutation."""
    last = len(weights) - 1
    out_w, out_b = [], []
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        if i < last:  # rows / bias entries are hidden neurons of layer i+1
            s = scales[i] if scales[i].dim() == 3 else scales[i][:, None, :]
            w, b = w * s[..., None], b * s
        if i > 0:  # columns are hidden neurons of layer i
            s = scales[i - 1] if scales[i - 1].dim() == 3 else scales[i - 1][:, None, :]
            w = w / s[:, :, None, :]
        out_w.append(w)
        out_b.append(b)
    return out_w, out_b


class QuasiEquivariantNFN(MonomialNFN):
    """QE-NFN: Monomial-NFN blocks [β → α(θ) → ReLU] (module docstring), then Monomial-NFN's
    invariant pooling and an MLP head.

    Args:
        widths: (n_0, ..., n_L) of the ReLU networks read (L >= 2).
        out_dim: outputs.
        channels: channels of the equivariant layers.
        head_hidden: width of the head's hidden layers.
        eps: ε of 1 + ε sin(·), in (0, 1) so that α stays positive.
        scale_hidden: width of the scale networks γ_k and φ_k (one pair per block).
        channel_scaling: use the channel-wise factor κ (default); ``False`` is the literal
            reading α = a(θ) ∈ G, which the invariant head removes.

    Example:
        Train on a zoo's weights to predict accuracy; the prediction is unchanged when the
        hidden neurons of every network are permuted and rescaled (the same functions):

        >>> import torch
        >>> from optzoo.metanet import (QuasiEquivariantNFN, apply_symmetry, random_symmetry,
        ...                             relu_mlp_zoo)
        >>> zoo = relu_mlp_zoo(8, seed=0, hidden=8, max_epochs=1, cache=False)
        >>> weights, biases = zoo.tensors()
        >>> accuracy = torch.as_tensor(zoo.targets)  # each network's test accuracy
        >>> _ = torch.manual_seed(0)
        >>> meta = QuasiEquivariantNFN(zoo.widths, channels=(4, 4), head_hidden=16)
        >>> opt = torch.optim.Adam(meta.parameters(), lr=1e-3)
        >>> for _ in range(5):
        ...     opt.zero_grad()
        ...     loss = torch.nn.functional.mse_loss(meta(weights, biases).squeeze(-1), accuracy)
        ...     loss.backward()
        ...     opt.step()
        >>> g = random_symmetry(zoo.widths, len(zoo), "scale", torch.Generator().manual_seed(0))
        >>> w2, b2 = apply_symmetry(weights, biases, *g)
        >>> _ = meta.eval()                          # the head's batch norm: running statistics
        >>> with torch.no_grad():
        ...     gap = (meta(weights, biases) - meta(w2, b2)).abs().max()
        >>> bool(gap < 1e-8)
        True
    """

    def __init__(self, widths, out_dim: int = 1, channels=(16, 16), head_hidden: int = 128,
                 eps: float = 0.1, scale_hidden: int = 32, channel_scaling: bool = True) -> None:
        super().__init__(widths, out_dim, "scale", channels, head_hidden)
        if not 0 < eps < 1:
            raise ValueError(f"eps: expected 0 < eps < 1 (α must stay positive), got {eps}")
        if scale_hidden < 1:
            raise ValueError(f"scale_hidden: expected >= 1, got {scale_hidden}")
        L = len(widths) - 1
        self.eps = eps
        self.channel_scaling = bool(channel_scaling)
        self.hidden_widths = tuple(widths[1:-1])
        d_in = 2 * L * STATS_PER_TENSOR
        self.gammas = nn.ModuleList(
            nn.Sequential(nn.Linear(d_in, scale_hidden), nn.ReLU(),
                          nn.Linear(scale_hidden, sum(self.hidden_widths))).double()
            for _ in channels)
        self.phis = nn.ModuleList(
            nn.Sequential(nn.Linear(3 * c, scale_hidden), nn.ReLU(),
                          nn.Linear(scale_hidden, c)).double()
            for c in channels) if self.channel_scaling else None

    def group_alpha(self, k: int, weights, biases, stats=None) -> list[torch.Tensor]:
        """a_k(θ) ∈ G: per hidden layer, ``B x n_l`` scalings 1 + ε sin γ_k(s(θ)) (``stats``:
        s(θ) if already computed)."""
        if stats is None:
            stats = weight_statistics(weights, biases)
        g = 1.0 + self.eps * torch.sin(self.gammas[k](stats))
        return list(torch.split(g, self.hidden_widths, dim=1))

    def channel_alpha(self, k: int, feats) -> list[torch.Tensor]:
        """κ_k: per hidden layer, ``B x C x n_l`` scalings 1 + ε sin φ_k(u) of the β-features."""
        return [(1.0 + self.eps * torch.sin(self.phis[k](u))).transpose(1, 2)
                for u in neuron_descriptors(*feats)]

    def alpha(self, k: int, theta, feats, stats=None) -> list[torch.Tensor]:
        """α_k: a_k(θ) (``B x 1 x n_l``) times κ_k (``B x C x n_l``) when channel_scaling."""
        a = [x[:, None, :] for x in self.group_alpha(k, *theta, stats=stats)]
        if not self.channel_scaling:
            return a
        return [x * c for x, c in zip(a, self.channel_alpha(k, feats), strict=True)]

    def _act_alpha(self, k, theta, feats, stats=None):
        return apply_hidden_scaling(*feats, self.alpha(k, theta, feats, stats))

    def forward(self, weights, biases) -> torch.Tensor:
        stats = weight_statistics(weights, biases)  # s(θ) once for every block
        w, b = self.features(weights, biases,
                             block=lambda k, theta, feats: self._act_alpha(k, theta, feats,
                                                                           stats))
        return self.head(monomial_pool(w, b, "scale", self.norms_w, self.norms_b))
