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

Readings (the paper's appendix B.1 was not available; checked with the ``search`` tool: the
arXiv 2604.23720 HTML and third-party summaries confirm "a learnable quasi-action on
continuous symmetries, parameterized via dedicated scale networks applied to weight
statistics" and < 6 % extra parameters; nothing more detailed could be retrieved):
* s(θ): per layer, for W_l and b_l, mean / std / quantiles (0, 0.25, 0.5, 0.75, 1) of
  log(|x| + 1e-12) and the fraction of positive entries — log-space as the brief advises so
  that scales up to 1e4 do not destabilise float statistics;
* γ outputs one value per hidden neuron of every hidden layer (the neuron's index, not its
  identity: α need not be equivariant);
* α acts on the β-features with G's own action, identically on every channel:
  W_l ← D_l W_l D_{l-1}^{-1}, b_l ← D_l b_l on hidden layers; blocks are [β → α → ReLU] and
  the head is Monomial-NFN's invariant pooling; ε = 0.1 by default.
* Only the ``scale`` group (ReLU zoos): for sin zoos the group's identity component is
  trivial, so α is constant (Remark 4.1) and QE reduces to the strict Monomial-NFN.

A consequence of these readings, worth knowing before reading any result: ReLU commutes with
positive scalings and β, the pooling and therefore the whole rest of the network are
G-equivariant / G-invariant, so α(θ) ∈ G can be moved through every later layer and is removed
by the invariant pooling.  In exact arithmetic the QE-NFN's output equals that of its backbone
with the same β weights (α = identity); :meth:`QuasiEquivariantNFN.forward` computes α anyway
(and the tests check this cancellation to 1e-10).  The paper's reported gains therefore need
something this reading does not contain (e.g. a nonlinearity that does not commute with the
scalings, such as the tanh of the Monomial-NFN ``hnps_inv_tanh`` config, or channel-dependent
scalings).
"""

from __future__ import annotations

import torch
from torch import nn

from optzoo.metanet.monomial_nfn import MonomialNFN, monomial_pool

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


class QuasiEquivariantNFN(MonomialNFN):
    """QE-NFN: Monomial-NFN blocks [β → α(θ) → ReLU] with α(θ) = 1 + ε sin γ(s(θ)).

    Args:
        widths: (n_0, ..., n_L) of the ReLU networks read (L >= 2).
        out_dim: outputs.
        channels: channels of the equivariant layers.
        head_hidden: width of the head's hidden layers.
        eps: ε of α = 1 + ε sin(γ), in (0, 1) so that α stays positive.
        scale_hidden: width of the scale network γ (one γ per block).
    """

    def __init__(self, widths, out_dim: int = 1, channels=(16, 16), head_hidden: int = 128,
                 eps: float = 0.1, scale_hidden: int = 32) -> None:
        super().__init__(widths, out_dim, "scale", channels, head_hidden)
        if not 0 < eps < 1:
            raise ValueError(f"eps: expected 0 < eps < 1 (α must stay positive), got {eps}")
        L = len(widths) - 1
        self.eps = eps
        self.hidden_widths = tuple(widths[1:-1])
        d_in = 2 * L * STATS_PER_TENSOR
        self.gammas = nn.ModuleList(
            nn.Sequential(nn.Linear(d_in, scale_hidden), nn.ReLU(),
                          nn.Linear(scale_hidden, sum(self.hidden_widths))).double()
            for _ in channels)

    def alpha(self, k: int, weights, biases) -> list[torch.Tensor]:
        """α_k(θ): per hidden layer, ``B x n_l`` positive scalings 1 + ε sin γ_k(s(θ))."""
        g = 1.0 + self.eps * torch.sin(self.gammas[k](weight_statistics(weights, biases)))
        return list(torch.split(g, self.hidden_widths, dim=1))

    def _act_alpha(self, k, theta, feats):
        a = self.alpha(k, *theta)
        w, b = feats
        last = len(w) - 1
        out_w, out_b = [], []
        for i, (wi, bi) in enumerate(zip(w, b, strict=True)):
            if i < last:  # rows / bias entries are hidden neurons of layer i+1
                wi = wi * a[i][:, None, :, None]
                bi = bi * a[i][:, None, :]
            if i > 0:  # columns are hidden neurons of layer i
                wi = wi / a[i - 1][:, None, None, :]
            out_w.append(wi)
            out_b.append(bi)
        return out_w, out_b

    def forward(self, weights, biases) -> torch.Tensor:
        w, b = self.features(weights, biases, block=self._act_alpha)
        return self.head(monomial_pool(w, b, "scale", self.norms_w, self.norms_b))
