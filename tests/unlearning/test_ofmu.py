"""OFMU (Asif & Amiri, ICLR 2026): the gradients of Φ and F_ρ against explicit-Hessian /
finite-difference references on a tiny float64 model, sign conventions, the two-loop schedule,
and a causal-LM-shaped module through the same API."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from optzoo.unlearning import (
    capped,
    classification_ce,
    cosine_similarity,
    npo,
    ofmu,
    ofmu_gradients,
    token_cross_entropy,
)

BETA, RHO, EPS = 0.7, 0.3, 1e-3


def _tiny(seed: int = 0) -> tuple[nn.Module, tuple, tuple]:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3)).double()
    xf, yf = torch.randn(5, 3, dtype=torch.float64), torch.randint(0, 3, (5,))
    xr, yr = torch.randn(7, 3, dtype=torch.float64), torch.randint(0, 3, (7,))
    return model, (xf, yf), (xr, yr)


def _flat_losses(model: nn.Module, forget, retain):
    """L_f, L_r as functions of one flat parameter vector (for explicit Hessians)."""
    names = [(n, p.shape, p.numel()) for n, p in model.named_parameters()]

    def make(batch):
        def f(theta):
            parts = theta.split([k for _, _, k in names])
            params = {n: t.view(s) for (n, s, _), t in zip(names, parts, strict=True)}
            return F.cross_entropy(torch.func.functional_call(model, params, (batch[0],)),
                                   batch[1])
        return f

    theta = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    return make(forget), make(retain), theta


def _grad_phi_closed_form(lf, lr_, theta, beta, eps):
    """∇Φ = g_f − β (H_f a_f + H_r a_r), a_f = (u_r − c u_f)/‖g_f‖_ε, with explicit Hessians."""
    gf = torch.func.grad(lf)(theta)
    gr = torch.func.grad(lr_)(theta)
    hf = torch.func.hessian(lf)(theta)
    hr = torch.func.hessian(lr_)(theta)
    nf = torch.sqrt(gf @ gf + eps**2)
    nr = torch.sqrt(gr @ gr + eps**2)
    c = gf @ gr / (nf * nr)
    a_f = (gr / nr - c * gf / nf) / nf
    a_r = (gf / nf - c * gr / nr) / nr
    return gf - beta * (hf @ a_f + hr @ a_r), gr, hf, c


def _flat(gs):
    return torch.cat([g.reshape(-1) for g in gs])


def test_cosine_similarity_matches_torch_on_flattened_vectors():
    torch.manual_seed(1)
    a = [torch.randn(3, 4, dtype=torch.float64), torch.randn(5, dtype=torch.float64)]
    b = [torch.randn(3, 4, dtype=torch.float64), torch.randn(5, dtype=torch.float64)]
    ref = F.cosine_similarity(_flat(a), _flat(b), dim=0)
    assert torch.allclose(cosine_similarity(a, b, eps=1e-12), ref, atol=1e-12)
    assert torch.allclose(cosine_similarity(a, [-t for t in a], eps=1e-12),
                          torch.tensor(-1.0, dtype=torch.float64))


def test_grad_phi_matches_the_explicit_hessian_formula():
    model, forget, retain = _tiny()
    lf, lr_, theta = _flat_losses(model, forget, retain)
    ref, _, _, c = _grad_phi_closed_form(lf, lr_, theta, BETA, EPS)
    g = ofmu_gradients(model, classification_ce, classification_ce, forget, retain, beta=BETA,
                       eps=EPS)
    assert torch.allclose(_flat(g.grad_phi), ref, rtol=1e-8, atol=1e-10)
    assert g.sim == pytest.approx(float(c), abs=1e-10)


def test_exact_penalty_gradient_matches_finite_differences_of_grad_phi():
    """∇F_ρ = ∇L_r + 2ρ ∇²Φ ∇Φ, with ∇²Φ∇Φ by central differences of the closed-form ∇Φ."""
    model, forget, retain = _tiny(2)
    lf, lr_, theta = _flat_losses(model, forget, retain)
    v, gr, _, _ = _grad_phi_closed_form(lf, lr_, theta, BETA, EPS)
    h = 1e-5
    plus = _grad_phi_closed_form(lf, lr_, theta + h * v, BETA, EPS)[0]
    minus = _grad_phi_closed_form(lf, lr_, theta - h * v, BETA, EPS)[0]
    ref = gr + 2 * RHO * (plus - minus) / (2 * h)
    g = ofmu_gradients(model, classification_ce, classification_ce, forget, retain, beta=BETA,
                       rho=RHO, variant="exact", eps=EPS)
    assert torch.allclose(_flat(g.grad_penalty), ref, rtol=1e-5, atol=1e-8)


def test_first_order_penalty_gradient_is_grad_lr_plus_2rho_hf_grad_phi():
    model, forget, retain = _tiny(3)
    lf, lr_, theta = _flat_losses(model, forget, retain)
    v, gr, hf, _ = _grad_phi_closed_form(lf, lr_, theta, BETA, EPS)
    g = ofmu_gradients(model, classification_ce, classification_ce, forget, retain, beta=BETA,
                       rho=RHO, variant="first_order", eps=EPS)
    assert torch.allclose(_flat(g.grad_penalty), gr + 2 * RHO * hf @ v, rtol=1e-8, atol=1e-10)


def test_variants_agree_when_beta_is_zero_up_to_the_lr_curvature():
    """With β = 0, ∇²Φ = H_f exactly, so both variants give ∇L_r + 2ρ H_f ∇L_f."""
    model, forget, retain = _tiny(4)
    kw = {"beta": 0.0, "rho": RHO, "eps": EPS}
    a = ofmu_gradients(model, classification_ce, classification_ce, forget, retain,
                       variant="exact", **kw)
    b = ofmu_gradients(model, classification_ce, classification_ce, forget, retain,
                       variant="first_order", **kw)
    assert torch.allclose(_flat(a.grad_penalty), _flat(b.grad_penalty), atol=1e-12)


def test_inner_ascent_raises_forget_loss_and_lowers_similarity():
    """Sign conventions: Φ is maximised; with β > 0 the step lowers Sim, with β = 0 it does
    not try to (its Sim change is much smaller)."""
    model, forget, retain = _tiny(5)
    base = ofmu_gradients(model, classification_ce, classification_ce, forget, retain,
                          beta=0.0, eps=EPS)
    changes = {}
    for beta in (0.0, 5.0):
        m = _tiny(5)[0]
        res = ofmu(m, classification_ce, classification_ce, forget, retain, rounds=1,
                   inner_steps=10, lr=1e-2, lr_outer=1e-12, beta=beta, rho=1e-6, eps=EPS)
        inner = [h for h in res.history if h["phase"] == "inner"]
        after = ofmu_gradients(m, classification_ce, classification_ce, forget, retain,
                               beta=0.0, eps=EPS)
        assert after.forget_loss > base.forget_loss
        assert inner[0]["forget_loss"] == pytest.approx(base.forget_loss)
        changes[beta] = after.sim - base.sim
    assert changes[5.0] < 0
    assert changes[5.0] < changes[0.0]


def test_penalty_schedule_and_history():
    model, forget, retain = _tiny(6)
    calls = []
    res = ofmu(model, capped(1.0), classification_ce, forget, retain, rounds=6, inner_steps=2,
               lr=1e-2, rho=0.5, gamma=2.0, rho_max=5.0, callback=calls.append,
               monitor=lambda m: {"acc": 0.5}, monitor_every=3)
    outer = [h for h in res.history if h["phase"] == "outer"]
    assert [h["rho"] for h in outer] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert [h["phase"] for h in res.history[1:4]] == ["inner", "inner", "outer"]
    assert len(calls) == len(res.history) == 1 + 6 * 3
    assert res.series("acc") == [0.5] * 7  # at step 0 and every 3rd of the 18 updates


def test_ofmu_decreases_penalised_objective_for_small_steps():
    """One outer step along −∇F_ρ lowers F_ρ = L_r + ρ‖∇Φ‖² (exact variant: a true gradient)."""
    model, forget, retain = _tiny(7)

    def big_f(m):
        g = ofmu_gradients(m, classification_ce, classification_ce, forget, retain,
                           beta=BETA, eps=EPS)
        return g.retain_loss + RHO * float(sum((t**2).sum() for t in g.grad_phi))

    g = ofmu_gradients(model, classification_ce, classification_ce, forget, retain, beta=BETA,
                       rho=RHO, variant="exact", eps=EPS)
    before = big_f(model)
    with torch.no_grad():
        for p, d in zip(model.parameters(), g.grad_penalty, strict=True):
            p.sub_(1e-4 * d)
    assert big_f(model) < before


def _params(m: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in m.parameters()]


@pytest.mark.parametrize("outer_at", ["inner", "anchor"])
def test_outer_step_starts_where_the_reading_says(outer_at):
    """One round by hand: T inner ascent steps θ' ← θ' + η∇Φ(θ') from θ_0, then
    θ_1 = θ'_T − η∇F_ρ(θ'_T) (chained) or θ_1 = θ_0 − η∇F_ρ(θ'_T) (anchored at θ_k)."""
    lr, t = 0.05, 3
    ref, forget, retain = _tiny(8)
    theta0 = _params(ref)
    for _ in range(t):
        g = ofmu_gradients(ref, classification_ce, classification_ce, forget, retain,
                           beta=BETA, eps=EPS)
        with torch.no_grad():
            for p, d in zip(ref.parameters(), g.grad_phi, strict=True):
                p.add_(lr * d)
    g = ofmu_gradients(ref, classification_ce, classification_ce, forget, retain, beta=BETA,
                       rho=RHO, variant="exact", eps=EPS)
    start = _params(ref) if outer_at == "inner" else theta0
    expected = [a - lr * d for a, d in zip(start, g.grad_penalty, strict=True)]
    model = _tiny(8)[0]
    ofmu(model, classification_ce, classification_ce, forget, retain, rounds=1, inner_steps=t,
         lr=lr, beta=BETA, rho=RHO, gamma=1.0, rho_max=RHO, variant="exact", eps=EPS,
         outer_at=outer_at)
    for a, b in zip(_params(model), expected, strict=True):
        assert torch.allclose(a, b, atol=1e-12)


def test_smoothed_cosine_is_an_inner_product_over_eps_squared_below_eps():
    """The issue-21 diagnosis: with ‖g_f‖, ‖g_r‖ ≪ ε the "cosine" ⟨a, b⟩/(‖a‖_ε ‖b‖_ε) is
    ⟨a, b⟩/ε² to first order, not a cosine (and with ε ≪ ‖g‖ it is the cosine)."""
    torch.manual_seed(2)
    a, b = [1e-4 * torch.randn(20, dtype=torch.float64)], [1e-4 * torch.randn(20,
                                                                            dtype=torch.float64)]
    dot = float((a[0] * b[0]).sum())
    assert float(cosine_similarity(a, b, eps=0.1)) == pytest.approx(dot / 0.01, rel=1e-3)
    cos = float(F.cosine_similarity(a[0], b[0], dim=0))
    assert float(cosine_similarity(a, b, eps=1e-8)) == pytest.approx(cos, rel=1e-6)


class TinyCausalLM(nn.Module):
    """Embedding → GRU-free causal mixer → logits (B, T, V); causal by a cumulative mean."""

    def __init__(self, vocab: int = 11, dim: int = 8) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.emb(tokens)
        steps = torch.arange(1, tokens.shape[1] + 1, dtype=h.dtype).view(1, -1, 1)
        h = torch.tanh(self.mix(h.cumsum(1) / steps))
        return self.out(h)


@pytest.mark.parametrize("variant", ["first_order", "exact"])
def test_causal_lm_module_runs_through_ofmu(variant):
    torch.manual_seed(0)
    lm = TinyCausalLM().double()
    forget = torch.randint(0, 11, (4, 6))
    # an iterable of batches (cycled): a DataLoader over a token tensor yields (4, 6) tensors
    retain = torch.utils.data.DataLoader(torch.randint(0, 11, (12, 6)), batch_size=4)
    start = token_cross_entropy(lm, forget).item()
    res = ofmu(lm, capped(math.log(11)), token_cross_entropy, forget, retain, rounds=5,
               inner_steps=2, lr=0.5, beta=0.5, rho=0.01, variant=variant)
    assert token_cross_entropy(lm, forget).item() > start
    assert all(math.isfinite(h["retain_loss"]) for h in res.history)
    # the LM mask path and NPO on sequences go through the same losses
    mask = torch.ones_like(forget)
    assert token_cross_entropy(lm, (forget, mask)).item() == pytest.approx(
        token_cross_entropy(lm, forget).item())
    npo(lm, forget, steps=2, lr=0.01)


def test_token_cross_entropy_matches_a_direct_computation():
    torch.manual_seed(1)
    lm = TinyCausalLM()
    tok = torch.randint(0, 11, (3, 5))
    logits = lm(tok)
    ref = F.cross_entropy(logits[:, :-1].reshape(-1, 11), tok[:, 1:].reshape(-1))
    assert token_cross_entropy(lm, tok).item() == pytest.approx(ref.item(), rel=1e-6)


def test_bad_arguments_are_named():
    model, forget, retain = _tiny()
    with pytest.raises(ValueError, match="variant"):
        ofmu(model, classification_ce, classification_ce, forget, retain, variant="third")
    with pytest.raises(ValueError, match="gamma"):
        ofmu(model, classification_ce, classification_ce, forget, retain, gamma=0.5)
    with pytest.raises(ValueError, match="outer_at"):
        ofmu(model, classification_ce, classification_ce, forget, retain, outer_at="theta_k")
    with pytest.raises(ValueError, match="beta"):
        ofmu(model, classification_ce, classification_ce, forget, retain, beta=-1.0)
    with pytest.raises(ValueError, match="rho_max"):
        ofmu(model, classification_ce, classification_ce, forget, retain, rho=1.0, rho_max=0.5)
    with pytest.raises(ValueError, match="forget_data"):
        ofmu(model, classification_ce, classification_ce, None, retain)
    with pytest.raises(ValueError, match="batch"):
        ofmu(model, classification_ce, classification_ce, forget[0], retain, rounds=1)
    with pytest.raises(ValueError, match="cap"):
        capped(0.0)
