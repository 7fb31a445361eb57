"""Registry-driven bad-input test (issue 19, "Inputs checked everywhere").

One table, ``ENTRIES``, lists public entry points of every area with a factory of a VALID call.
Each entry names the arguments to corrupt and their kind; every kind has a set of corruptions
(NaN, ±inf, negative, zero, wrong shape, wrong dtype, wrong type).  For each corruption the call
must raise ``ValueError`` or ``TypeError`` whose message names the argument — never return a
silent wrong answer.  The valid call itself must succeed and return a finite result, so a
corruption that raises is known to raise because of the corruption.  Hypothesis draws the
negative magnitudes and picks among the corruptions of each kind.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NAN, INF = float("nan"), float("inf")


# -- corruptions per kind --------------------------------------------------------------------
# each takes the valid value and a hypothesis-drawn positive magnitude, returns the bad value

def _neg(v, m):
    return -m


def _t_nan(v, m):
    out = v.clone()
    out.view(-1)[0] = NAN
    return out


def _t_inf(v, m):
    out = v.clone()
    out.view(-1)[-1] = INF
    return out


def _a_nan(v, m):
    out = np.array(v, dtype=float, copy=True)
    out.reshape(-1)[0] = NAN
    return out


def _a_inf(v, m):
    out = np.array(v, dtype=float, copy=True)
    out.reshape(-1)[-1] = -INF
    return out


KINDS: dict[str, dict[str, Callable[[Any, float], Any]]] = {
    # a finite real > 0
    "pos": {"nan": lambda v, m: NAN, "inf": lambda v, m: INF, "-inf": lambda v, m: -INF,
            "zero": lambda v, m: 0.0, "negative": _neg, "str": lambda v, m: "1"},
    # a finite real >= 0
    "nonneg": {"nan": lambda v, m: NAN, "inf": lambda v, m: INF, "-inf": lambda v, m: -INF,
               "negative": _neg, "str": lambda v, m: "1"},
    # any finite real
    "real": {"nan": lambda v, m: NAN, "inf": lambda v, m: INF, "-inf": lambda v, m: -INF},
    # a finite real >= 1 (a count or a cap on a ratio)
    "ge1": {"nan": lambda v, m: NAN, "inf": lambda v, m: INF, "zero": lambda v, m: 0.0,
            "negative": _neg, "half": lambda v, m: 0.5},
    # an integer >= 1
    "posint": {"zero": lambda v, m: 0, "negative": lambda v, m: -1 - int(m),
               "float": lambda v, m: 2.5, "nan": lambda v, m: NAN},
    # a numpy Generator
    "rng": {"seed": lambda v, m: 42, "none": lambda v, m: None},
    # a floating-point tensor
    "tensor": {"nan": _t_nan, "inf": _t_inf, "int": lambda v, m: v.to(torch.int64),
               "shape": lambda v, m: v.unsqueeze(0).expand(2, *v.shape).clone()},
    # a floating-point tensor where only NaN is the concern (±inf handled downstream)
    "tensor_nan": {"nan": _t_nan, "int": lambda v, m: v.to(torch.int64),
                   "shape": lambda v, m: v.unsqueeze(0).expand(2, *v.shape).clone()},
    # a tensor whose shape / dtype is the contract, its values free
    "tensor_shape": {"int": lambda v, m: v.to(torch.int64),
                     "shape": lambda v, m: v[..., :-1].clone(), "list": lambda v, m: v.tolist()},
    # a float numpy array
    "array": {"nan": _a_nan, "inf": _a_inf,
              "shape": lambda v, m: np.asarray(v, float)[None]},
    "array_shape": {"shape": lambda v, m: np.asarray(v, float)[..., :-1]},
    # a float numpy array of any shape
    "array_values": {"nan": _a_nan, "inf": _a_inf},
    # a level in [0, 1)
    "level": {"nan": lambda v, m: NAN, "inf": lambda v, m: INF, "negative": _neg,
              "one": lambda v, m: 1.0, "above": lambda v, m: 1.0 + m},
    # parameters of an optimizer
    "params": {"int64": lambda v, m: [torch.zeros(3, dtype=torch.int64)],
               "int32": lambda v, m: [torch.zeros(2, 2, dtype=torch.int32)]},
    # a gradient fed to a sign-based optimizer step
    "grad": {"nan": _t_nan},
    "grad_finite": {"nan": _t_nan, "inf": _t_inf},
    # a mapping of constraint name to budget
    "budgets": {"nan": lambda v, m: {"f": NAN}, "str": lambda v, m: {"f": "1"}},
    # a probability in (0, 1]
    "prob": {"nan": lambda v, m: NAN, "zero": lambda v, m: 0.0, "negative": _neg,
             "above": lambda v, m: 1.0 + m},
    # a sequence of non-negative weights
    "object_seq": {"nan": lambda v, m: tuple(NAN for _ in v), "negative": lambda v, m: (-m, *v[1:]),
                   "length": lambda v, m: (*v, 1.0), "zero": lambda v, m: tuple(0.0 for _ in v)},
    # anything: None is not a valid value
    "object": {"none": lambda v, m: None},
}


@dataclass
class Entry:
    """A public entry point: ``call(**valid())`` is a valid call; ``args`` maps the arguments to
    corrupt to their kind; ``names`` gives, per argument, the word the message must contain
    (default: the argument's name)."""

    name: str
    call: Callable[..., Any]
    valid: Callable[[], dict[str, Any]]
    args: dict[str, str]
    names: dict[str, str | tuple[str, ...]] = field(default_factory=dict)
    skip: tuple[tuple[str, str], ...] = ()  # (arg, corruption) pairs that are valid here


# -- valid-call factories ----------------------------------------------------------------------

def _optimizer_call(cls, **fixed):
    def call(params, lr, **kw):
        return cls(params, lr=lr, **fixed, **kw)

    return call


def _optimizer_step(cls, **fixed):
    def call(grad, **kw):
        w = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
        opt = cls([w], **fixed, **kw)
        w.grad = grad
        opt.step()
        return w.detach()

    return call


def _params():
    return [torch.zeros(3, 2, dtype=torch.float64, requires_grad=True)]


def _optimizer_entries():
    from optzoo.optim import (
        ASGO,
        DASGO,
        HAM,
        O2NC,
        AcceleGrad,
        AdaGradNorm,
        DiagAdaGrad,
        NormalizedSGD,
        Scion,
        SignSGD,
        SteepestDescent,
    )

    out = []
    for cls, lr, kind, fixed in ((ASGO, 1.0, "pos", {}), (DASGO, 1.0, "pos", {}),
                                 (AdaGradNorm, 1.0, "pos", {}), (DiagAdaGrad, 1.0, "pos", {}),
                                 (AcceleGrad, 1.0, "pos", {}), (O2NC, 0.1, "pos", {}),
                                 (Scion, 0.1, "pos", {}), (NormalizedSGD, 0.1, "nonneg", {}),
                                 (SignSGD, 0.1, "nonneg", {}), (SteepestDescent, 0.1, "nonneg", {}),
                                 (HAM, 1e-3, "nonneg", {})):
        out.append(Entry(f"optim.{cls.__name__}", _optimizer_call(cls, **fixed),
                         lambda lr=lr: dict(params=_params(), lr=lr),
                         {"lr": kind, "params": "params"},
                         # HAM's base (torch Adam) words its own check this way
                         names={"lr": ("lr", "learning rate")}))
    for cls, fixed in ((SignSGD, dict(lr=0.1)), (SteepestDescent, dict(lr=0.1)),
                       (SteepestDescent, dict(lr=0.1, momentum=0.9)),
                       (Scion, dict(lr=0.1, norm="sign"))):
        out.append(Entry(f"optim.{cls.__name__}.step{sorted(fixed)}", _optimizer_step(cls, **fixed),
                         lambda: dict(grad=torch.full((3, 2), 0.5, dtype=torch.float64)),
                         {"grad": "grad"}, names={"grad": "gradient"}))
    out.append(Entry("optim.ASGO.step", _optimizer_step(ASGO, lr=1.0),
                     lambda: dict(grad=torch.full((3, 2), 0.5, dtype=torch.float64)),
                     {"grad": "grad_finite"}, names={"grad": "gradient"}))
    return out


def _policy_entries():
    from optzoo.policy import grpo_advantages, grpo_loss

    def loss_valid():
        return dict(logp=torch.zeros(2, 3), old_logp=None, advantages=torch.tensor([1.0, -1.0]),
                    mask=torch.ones(2, 3), delta=1.5, num_items_in_batch=6.0, beta=0.0,
                    epsilon_low=0.2, loss_type="dapo")

    def grpo_loss_call(**kw):
        return grpo_loss(kw.pop("logp"), kw.pop("old_logp"), kw.pop("advantages"),
                         kw.pop("mask"), **kw)[0]

    return [
        Entry("policy.grpo_advantages", grpo_advantages,
              lambda: dict(rewards=torch.tensor([1.0, 0.0, 0.5, 0.0]), group_size=2, eps=1e-4),
              {"rewards": "tensor", "eps": "nonneg", "group_size": "posint"}),
        Entry("policy.grpo_loss", grpo_loss_call, loss_valid,
              {"delta": "ge1", "num_items_in_batch": "ge1", "beta": "nonneg",
               "epsilon_low": "nonneg", "mask": "tensor_shape"},
              skip=(("mask", "int"),)),  # an integer 0/1 mask is documented as valid
    ]


def _rl_entries():
    from optzoo.rl import PDPOConfig, random_linear_cmdp, switching_losses
    from optzoo.rl.dr_sac import kl_dro_dual

    return [
        Entry("rl.PDPOConfig", PDPOConfig,
              lambda: dict(budget=0.5, alpha=0.1, eta=0.1, theta=0.1, period=3, bonus_scale=0.01),
              {"budget": "real", "alpha": "nonneg", "eta": "nonneg", "theta": "nonneg",
               "period": "posint", "bonus_scale": "nonneg"}),
        Entry("rl.kl_dro_dual", kl_dro_dual,
              lambda: dict(values=torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64), beta=1.0,
                           delta=0.1),
              {"beta": "pos", "delta": "nonneg"}),
        Entry("rl.random_linear_cmdp", random_linear_cmdp,
              lambda: dict(S=3, A=2, d=2, H=3, rng=np.random.default_rng(0)),
              {"S": "posint", "A": "posint", "d": "posint", "H": "posint", "rng": "rng"}),
        Entry("rl.switching_losses", switching_losses,
              lambda: dict(K=5, H=3, d=2, rng=np.random.default_rng(0)),
              {"K": "posint", "H": "posint", "d": "posint", "rng": "rng"}),
    ]


def _transport_entries():
    from optzoo.transport import (
        bures_wasserstein_squared,
        energy_distance,
        energy_distance_np,
        gaussian_map,
        hamiltonian,
    )

    def gauss():
        return dict(m1=np.zeros(2), S1=np.eye(2), m2=np.ones(2), S2=np.diag([4.0, 1.0]))

    non_pd = {"nonpd": lambda v, m: -m * np.eye(2), "asym": lambda v, m: np.array([[1.0, m],
                                                                                   [0.0, 1.0]])}
    KINDS["covariance"] = {**KINDS["array"], **non_pd}
    return [
        Entry("transport.bures_wasserstein_squared", bures_wasserstein_squared, gauss,
              {"m1": "array", "S1": "covariance", "m2": "array_shape", "S2": "covariance"}),
        Entry("transport.gaussian_map", lambda **kw: gaussian_map(**kw)[0], gauss,
              {"m1": "array", "S1": "covariance", "S2": "covariance"}),
        Entry("transport.energy_distance", energy_distance,
              lambda: dict(x=torch.randn(4, 2, generator=torch.Generator().manual_seed(0)),
                           y=torch.randn(5, 2, generator=torch.Generator().manual_seed(1))),
              {"x": "tensor_shape", "y": "tensor_shape"}, names={"x": "x", "y": "y"}),
        Entry("transport.energy_distance_np", energy_distance_np,
              lambda: dict(x=np.arange(8.0).reshape(4, 2), y=np.ones((3, 2))),
              {"x": "array", "y": "array_shape"}),
        Entry("transport.hamiltonian", hamiltonian,
              lambda: dict(p=torch.ones(3, 2), cost_power=1.5),
              {"cost_power": "pos"}, skip=(("cost_power", "str"),)),
    ]


def _mcts_entries():
    from optzoo.mcts import UCT, SysAdmin, play_episode

    env = SysAdmin(n=3, horizon=3)
    return [
        Entry("mcts.play_episode", play_episode,
              lambda: dict(agent=UCT(env, iterations=5), env=env), {"agent": "object"}),
        Entry("mcts.UCT", lambda **kw: UCT(env, **kw).iterations,
              lambda: dict(iterations=5, c=1.0), {"c": "pos", "iterations": "posint"}),
    ]


def _imaging_entries():
    from optzoo.imaging import poisson_disk_samples

    return [
        Entry("imaging.poisson_disk_samples", lambda **kw: poisson_disk_samples(**kw)[0],
              lambda: dict(mask=np.ones((9, 9), bool), n=4, rng=np.random.default_rng(0)),
              {"n": "posint", "rng": "rng"}),
    ]


def _breadth_entries():
    """One or more cheap entry points of each remaining area."""
    from optzoo.bo import TurboState
    from optzoo.graphs import (
        GaussianKernel,
        InversePolynomialKernel,
        gaussian_mixture,
        padded_bounds,
        probe_vectors,
        swiss_roll,
    )
    from optzoo.imaging import SparseKernelComplex, charbonnier, radial_init, random_init
    from optzoo.kan import TwoLayerKAN, predicted_loss_curve, rbf
    from optzoo.landscape import linear_path
    from optzoo.metanet import random_symmetry, split_indices
    from optzoo.nas import ConNAS, connas_gradient, edge_direction
    from optzoo.policy import rloo_advantages, spo_advantages, whitened_advantages
    from optzoo.predictions import ContractScheduling, OneMaxSearch, SkiRental, cvar
    from optzoo.recsys import gini, soft_rank, soft_topk_indicator, topk_lists
    from optzoo.scheduling import dirichlet_preferences, hypervolume
    from optzoo.transport import l2_uvp
    from optzoo.unlearning import cosine_similarity, kl_divergence, mia_auc, npo_loss

    r4 = lambda: torch.tensor([1.0, 0.0, 0.5, 0.0])  # noqa: E731
    h = lambda: torch.eye(3, dtype=torch.float64)  # noqa: E731
    return [
        Entry("predictions.SkiRental", SkiRental, lambda: dict(b=10.0, r=5.0),
              {"b": "pos", "r": "pos"}),
        Entry("predictions.OneMaxSearch", OneMaxSearch, lambda: dict(M=100.0, r=10.0),
              {"M": "pos", "r": "pos"}),
        Entry("predictions.ContractScheduling", ContractScheduling, lambda: dict(r=4.0),
              {"r": "pos"}),
        Entry("predictions.cvar", cvar, lambda: dict(values=np.arange(5.0), alpha=0.5),
              {"values": "array_values", "alpha": "level"}),
        Entry("kan.TwoLayerKAN", lambda **kw: TwoLayerKAN(**kw).m,
              lambda: dict(d=2, width=3, g=4, sigma_scale=1.0),
              {"d": "posint", "width": "posint", "g": "posint", "sigma_scale": "pos"}),
        Entry("kan.rbf", rbf, lambda: dict(x=torch.zeros(3, 2), centers=torch.zeros(4),
                                           width=0.5), {"width": "pos"}),
        Entry("kan.predicted_loss_curve", predicted_loss_curve,
              lambda: dict(h=h(), r0=torch.ones(3, dtype=torch.float64), lr=0.1, steps=4),
              {"h": "tensor", "r0": "tensor", "lr": "pos", "steps": "posint"}),
        Entry("graphs.GaussianKernel", GaussianKernel, lambda: dict(sigma=1.0), {"sigma": "pos"}),
        Entry("graphs.InversePolynomialKernel", InversePolynomialKernel,
              lambda: dict(sigma=1.0, q=2.0), {"sigma": "pos", "q": "pos"}),
        Entry("graphs.gaussian_mixture", gaussian_mixture,
              lambda: dict(n=10, d=2, centers=2, spread=1.0),
              {"n": "posint", "d": "posint", "centers": "posint", "spread": "pos"}),
        Entry("graphs.swiss_roll", swiss_roll, lambda: dict(n=10, noise=0.05),
              {"n": "posint", "noise": "nonneg"}),
        Entry("imaging.charbonnier", charbonnier,
              lambda: dict(a=torch.zeros(3), b=torch.ones(3), eta=0.1), {"eta": "pos"}),
        Entry("imaging.radial_init", lambda **kw: radial_init(**kw)[0][0],
              lambda: dict(n_taps=4, n_layers=2, radius=2.0),
              {"n_taps": "posint", "n_layers": "posint", "radius": "pos"}),
        Entry("imaging.random_init", lambda **kw: random_init(**kw)[0][0],
              lambda: dict(n_taps=4, n_layers=2, radius=2.0, rng=np.random.default_rng(0)),
              {"n_taps": "posint", "n_layers": "posint", "radius": "pos", "rng": "rng"}),
        Entry("landscape.linear_path", lambda **kw: linear_path(**kw).bend,
              lambda: dict(theta_a=torch.zeros(3), theta_b=torch.ones(3)),
              {"theta_a": "tensor", "theta_b": "tensor_shape"}),
        Entry("metanet.split_indices", lambda **kw: split_indices(**kw)[0],
              lambda: dict(n=20, seed=0), {"n": "posint"}),
        Entry("policy.whitened_advantages", whitened_advantages,
              lambda: dict(rewards=r4(), group_size=2, eps=1e-4),
              {"rewards": "tensor", "group_size": "posint", "eps": "nonneg"}),
        Entry("policy.rloo_advantages", rloo_advantages,
              lambda: dict(rewards=r4(), group_size=2),
              {"rewards": "tensor", "group_size": "posint"}),
        Entry("policy.spo_advantages", spo_advantages,
              lambda: dict(rewards=r4(), values=torch.full((4,), 0.5), eps=1e-8),
              {"rewards": "tensor", "values": "tensor", "eps": "nonneg"}),
        Entry("recsys.gini", gini, lambda: dict(counts=np.array([1.0, 2.0, 3.0])),
              {"counts": "array"}),
        Entry("recsys.soft_rank", soft_rank,
              lambda: dict(scores=torch.tensor([[0.3, 0.1, 0.2]]), eps=1.0),
              {"scores": "tensor", "eps": "pos"},
              names={"scores": ("scores", "z")}),  # z = -scores/eps, the projection's input
        Entry("recsys.soft_topk_indicator", soft_topk_indicator,
              lambda: dict(ranks=torch.tensor([[1.0, 2.0, 3.0]]), k=2, tau=0.5),
              {"ranks": "tensor", "k": "posint", "tau": "pos"}),
        Entry("scheduling.hypervolume", hypervolume,
              lambda: dict(front=np.array([[1.0, 2.0], [2.0, 1.0]]), ideal=np.zeros(2),
                           nadir=np.array([3.0, 3.0])),
              {"front": "array", "ideal": "array", "nadir": "array"}),
        Entry("scheduling.dirichlet_preferences", dirichlet_preferences,
              lambda: dict(n_obj=2, size=3, rng=np.random.default_rng(0)),
              {"n_obj": "posint", "size": "posint", "rng": "rng"},
              skip=(("size", "zero"),)),  # zero samples is a valid empty draw
        Entry("transport.l2_uvp", l2_uvp,
              lambda: dict(predicted=np.zeros((3, 2)), reference=np.ones((3, 2)),
                           target_variance=2.0),
              {"predicted": "array", "reference": "array_shape", "target_variance": "pos"}),
        Entry("unlearning.npo_loss", npo_loss,
              lambda: dict(logp=torch.tensor([-1.0, -2.0]), logp_ref=torch.tensor([-1.5, -1.0]),
                           beta=0.1),
              # NaN log-probs propagate to a NaN loss (visible); dtype and shape are checked
              {"logp": "tensor_shape", "logp_ref": "tensor_shape", "beta": "pos"}),
        Entry("unlearning.mia_auc", mia_auc,
              lambda: dict(member_losses=np.array([0.1, 0.2]),
                           nonmember_losses=np.array([0.5, 0.7])),
              {"member_losses": "array_values", "nonmember_losses": "array_values"}),
        Entry("unlearning.kl_divergence", kl_divergence,
              lambda: dict(logits_ref=torch.zeros(2, 3), logits=torch.ones(2, 3)),
              {"logits_ref": "tensor_nan", "logits": "tensor_nan"}),
        Entry("nas.edge_direction", edge_direction,
              lambda: dict(costs=np.array([1.0, 3.0]), budget=2.0),
              {"costs": "array", "budget": "real"}),
        Entry("nas.connas_gradient", connas_gradient,
              lambda: dict(grad=torch.ones(2, 3), direction=torch.zeros(2, 3), rescale=1.2,
                           eps=1e-6),
              {"rescale": "pos", "eps": "pos"}),
        Entry("recsys.topk_lists", topk_lists,
              lambda: dict(scores=torch.rand(2, 5, generator=torch.Generator().manual_seed(0)),
                           seen=np.zeros((2, 5), bool), length=3),
              {"length": "posint", "scores": "tensor_nan"},
              names={"scores": ("scores", "seen")}, skip=(("scores", "int"),)),
        Entry("unlearning.cosine_similarity", cosine_similarity,
              lambda: dict(a=[torch.ones(2)], b=[torch.ones(2)], eps=1e-12), {"eps": "nonneg"}),
        Entry("graphs.probe_vectors", probe_vectors,
              lambda: dict(points=np.arange(12.0).reshape(6, 2), count=3, seed=0),
              {"count": "posint", "points": "array"}),
        Entry("graphs.padded_bounds", lambda **kw: padded_bounds(**kw)[0],
              lambda: dict(points=np.arange(12.0).reshape(6, 2), pad=0.25), {"pad": "nonneg"}),
        Entry("metanet.random_symmetry", lambda **kw: random_symmetry(**kw)[1][0],
              lambda: dict(widths=[2, 3, 1], batch=2, kind="scale",
                           generator=torch.Generator().manual_seed(0)), {"batch": "posint"}),
        Entry("nas.ConNAS", lambda **kw: ConNAS(3, lambda a: {"f": 1.0}, **kw).rescale,
              lambda: dict(budgets={"f": 1.0}, rescale=1.2, eps=1e-6),
              {"rescale": "pos", "eps": "pos", "budgets": "budgets"}),
        Entry("imaging.SparseKernelComplex",
              lambda **kw: SparseKernelComplex([np.zeros((2, 2))], [np.ones(2)], **kw).scale,
              lambda: dict(scale=1.0), {"scale": "pos"}),
        Entry("bo.TurboState", TurboState, lambda: dict(dim=3, length=0.8),
              {"dim": "posint", "length": "pos"}),
    ]


def _llm_routing_bilevel_entries():
    """The LLM substrate, the routing evaluator and the bilevel solvers."""
    from optzoo.bilevel import F2SA, MASOBA, TTSA, Oracle, StocBiO, UniBiO
    from optzoo.bilevel.problems.quadratic import QuadraticBilevel
    from optzoo.llm import (
        Addition,
        Countdown,
        Mixture,
        PretrainConfig,
        TinyLlama,
        char_tokenizer,
        rollout,
        tiny_llama,
        token_logprobs,
    )
    from optzoo.routing import InstanceSpec, gap, generate_x_like, run_hgs

    tok = char_tokenizer()
    lm = tiny_llama(len(tok), hidden_size=16, intermediate_size=32, num_layers=1, num_heads=2)
    done = rollout(lm, tok, ["1+2="], max_new_tokens=3, seed=0)
    cvrp = generate_x_like(8, seed=0)

    def solver(cls, **fixed):
        def call(**kw):
            return cls(Oracle(QuadraticBilevel(dim_x=3, dim_y=4)), **fixed, **kw).x

        return call

    x0 = lambda: torch.zeros(3, dtype=torch.float64)  # noqa: E731
    return [
        Entry("llm.Addition", lambda **kw: Addition(**kw).format_reward,
              lambda: dict(digits=2, operands=2, format_reward=0.1),
              {"digits": "posint", "operands": "posint", "format_reward": "level"}),
        Entry("llm.Countdown", lambda **kw: Countdown(**kw).max_number,
              lambda: dict(count=3, max_number=10, max_target=99),
              {"count": "posint", "max_number": "posint", "max_target": "posint"}),
        Entry("llm.Mixture", lambda **kw: Mixture((Addition(), Countdown()), **kw).weights,
              lambda: dict(weights=(1.0, 2.0)), {"weights": "object_seq"}),
        Entry("llm.TinyLlama", lambda **kw: TinyLlama(**kw).hidden_size,
              lambda: dict(hidden_size=16, intermediate_size=32, num_layers=1, num_heads=2),
              {"hidden_size": "posint", "intermediate_size": "posint", "num_layers": "posint",
               "num_heads": "posint"}),
        Entry("llm.tiny_llama", lambda **kw: tiny_llama(**kw).config.vocab_size,
              lambda: dict(vocab_size=24, hidden_size=16, intermediate_size=32, num_layers=1,
                           num_heads=2), {"vocab_size": "posint"}),
        Entry("llm.PretrainConfig", lambda **kw: PretrainConfig(**kw).lr,
              lambda: dict(max_steps=10, batch_size=4, lr=1e-3, eval_every=5, eval_size=8),
              {"max_steps": "posint", "batch_size": "posint", "lr": "pos",
               "eval_every": "posint", "eval_size": "posint"}),
        Entry("llm.rollout", lambda **kw: rollout(lm, tok, ["1+2="], seed=0, **kw).logprobs,
              lambda: dict(num_samples=2, max_new_tokens=3, temperature=1.0, top_p=0.9),
              {"num_samples": "posint", "max_new_tokens": "posint", "temperature": "pos",
               "top_p": "prob"}),
        Entry("llm.token_logprobs",
              lambda **kw: token_logprobs(lm, done.prompt_ids, done.prompt_mask,
                                          done.completion_ids, done.completion_mask, **kw),
              lambda: dict(temperature=1.0, batch_size=1),
              {"temperature": "pos", "batch_size": "posint"}),
        Entry("routing.gap", gap, lambda: dict(cost=110.0, bks=100.0),
              {"cost": "real", "bks": "pos"}),
        Entry("routing.generate_x_like", lambda **kw: generate_x_like(**kw).num_clients,
              lambda: dict(n=8, route_size=3.0, seed=0), {"n": "posint", "route_size": "pos"}),
        Entry("routing.InstanceSpec", lambda **kw: InstanceSpec(**kw).n,
              lambda: dict(n=8, reference_iterations=10),
              {"n": "posint", "reference_iterations": "posint"}),
        Entry("routing.run_hgs", lambda **kw: run_hgs(cvrp, seed=0, **kw).cost(),
              lambda: dict(iterations=3), {"iterations": "posint"},
              skip=(("iterations", "zero"),)),  # zero iterations: the best initial solution
        Entry("bilevel.Oracle", lambda **kw: Oracle(QuadraticBilevel(3, 4), **kw).noise,
              lambda: dict(noise=0.1, batch_size=2), {"noise": "nonneg", "batch_size": "posint"}),
        Entry("bilevel.F2SA", solver(F2SA), lambda: dict(lr=0.01, nu=0.1, inner_lr=0.1, x0=x0()),
              {"lr": "pos", "nu": "pos", "inner_lr": "pos", "x0": "tensor"}),
        Entry("bilevel.MASOBA", solver(MASOBA), lambda: dict(lr=0.01, z_lr=0.01, beta=0.9),
              {"lr": "pos", "z_lr": "pos", "beta": "level"}),
        Entry("bilevel.TTSA", solver(TTSA), lambda: dict(lr=0.01, terms=3, neumann_eta=0.01),
              {"lr": "pos", "terms": "posint", "neumann_eta": "pos"}),
        Entry("bilevel.StocBiO", solver(StocBiO), lambda: dict(lr=0.1, terms=3, x0=x0()),
              {"lr": "pos", "terms": "posint", "x0": "tensor"}),
        Entry("bilevel.UniBiO", solver(UniBiO), lambda: dict(lr=0.05, beta=0.9, radius=1.0),
              {"lr": "pos", "beta": "level", "radius": "pos"}),
    ]


def _preference_entries():
    """The preference losses and AuxDPO's bandits."""
    from optzoo.preference import (
        auxdpo_loss,
        dpo_loss,
        gaussian_prior,
        hybrid_weights,
        simpo_loss,
        tdpo_loss,
        ti_dpo_loss,
        wdpo_loss,
    )
    from optzoo.preference.bandits import paper_bandit, random_bandit

    v = lambda *x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
    pairs = lambda: dict(chosen_logps=v(-1.0, -2.0), rejected_logps=v(-1.5, -1.0),  # noqa: E731
                         ref_chosen_logps=v(-1.2, -1.8), ref_rejected_logps=v(-1.4, -1.1))
    m = torch.ones(2, 3)
    tok = lambda: torch.tensor([[0.1, -0.2, 0.3], [0.0, 0.4, -0.1]], dtype=torch.float64)  # noqa
    return [
        Entry("preference.dpo_loss", lambda **kw: dpo_loss(**kw)[0],
              lambda: dict(**pairs(), beta=0.1),
              {"chosen_logps": "tensor", "ref_rejected_logps": "tensor", "beta": "pos"}),
        Entry("preference.simpo_loss", lambda **kw: simpo_loss(**kw)[0],
              lambda: dict(chosen_logps=v(-1.0, -2.0), rejected_logps=v(-1.5, -1.0),
                           chosen_lengths=torch.tensor([2, 3]),
                           rejected_lengths=torch.tensor([1, 2]), beta=2.0, gamma=0.5),
              {"chosen_logps": "tensor", "beta": "pos", "gamma": "real"}),
        Entry("preference.tdpo_loss", lambda **kw: tdpo_loss(**kw)[0],
              lambda: dict(chosen_logratios=v(0.1, 0.2), rejected_logratios=v(0.0, -0.1),
                           chosen_kl=v(0.01, 0.02), rejected_kl=v(0.03, 0.0), beta=0.1,
                           alpha=0.5),
              {"chosen_kl": "tensor", "beta": "pos", "alpha": "nonneg"}),
        Entry("preference.wdpo_loss", lambda **kw: wdpo_loss(**kw)[0],
              lambda: dict(chosen_logps=v(-1.0, -2.0), rejected_logps=v(-1.5, -1.0),
                           weights=v(1.0, 0.5), beta=0.1),
              {"weights": "tensor", "beta": "pos"}),
        Entry("preference.auxdpo_loss", lambda **kw: auxdpo_loss(**kw)[0],
              lambda: dict(chosen_logratios=v(0.1, 0.2), rejected_logratios=v(0.0, -0.1),
                           delta_chosen=v(0.01, 0.0), delta_rejected=v(0.0, 0.02),
                           lambda_null=0.0, lambda_amp=0.01, beta=0.1),
              {"delta_chosen": "tensor", "beta": "pos", "lambda_amp": "nonneg"}),
        Entry("preference.ti_dpo_loss", lambda **kw: ti_dpo_loss(**kw)[0],
              lambda: dict(chosen_logratios=tok(), rejected_logratios=tok(), chosen_mask=m,
                           rejected_mask=m, chosen_weights=m.double(),
                           rejected_weights=m.double(), chosen_kl=v(0.0, 0.1),
                           rejected_kl=v(0.1, 0.0), gamma=0.0, beta=0.1, alpha=0.5),
              {"chosen_logratios": "tensor_nan", "chosen_kl": "tensor", "beta": "pos",
               "alpha": "nonneg"}),
        Entry("preference.gaussian_prior", lambda **kw: gaussian_prior(m, **kw),
              lambda: dict(sigma_div=4.0), {"sigma_div": "pos"}),
        Entry("preference.hybrid_weights", hybrid_weights,
              lambda: dict(importance=tok().abs(), prior=gaussian_prior(m).double(), mask=m,
                           lam=0.7),
              {"importance": "tensor_nan", "lam": "level"}, skip=(("lam", "one"),)),
        Entry("preference.paper_bandit", lambda **kw: paper_bandit(**kw).reward,
              lambda: dict(ratio=20.0), {"ratio": "pos"}),
        Entry("preference.random_bandit", lambda **kw: random_bandit(0, **kw).reward,
              lambda: dict(states=2, actions=3, dim=2, skew=0.3),
              {"states": "posint", "actions": "posint", "dim": "posint", "skew": "pos"}),
    ]


ENTRIES: list[Entry] = [*_optimizer_entries(), *_policy_entries(), *_rl_entries(),
                        *_transport_entries(), *_mcts_entries(), *_imaging_entries(),
                        *_breadth_entries(), *_llm_routing_bilevel_entries(),
                        *_preference_entries()]
CASES = [(e, arg, c) for e in ENTRIES for arg, kind in e.args.items() for c in KINDS[kind]
         if (arg, c) not in e.skip]


def _finite(x) -> bool:
    if isinstance(x, torch.Tensor):
        return bool(torch.isfinite(x).all()) if x.is_floating_point() else True
    if isinstance(x, np.ndarray):
        return bool(np.isfinite(x).all())
    if isinstance(x, float):
        return math.isfinite(x)
    return True


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_valid_call_is_finite(entry):
    assert _finite(entry.call(**entry.valid()))


def _check_bad_input(entry, arg, corruption, magnitude):
    kwargs = entry.valid()
    kwargs[arg] = KINDS[entry.args[arg]][corruption](kwargs[arg], magnitude)
    with pytest.raises((ValueError, TypeError)) as info:
        entry.call(**kwargs)
    names = entry.names.get(arg, arg)
    names = (names,) if isinstance(names, str) else names
    # the name as a word ("b" must not match inside "number")
    assert any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", str(info.value)) for n in names), (
        f"{entry.name}({arg}={corruption}): the message does not name {arg!r}: {info.value}")


# The cases are split over two hypothesis tests: with derandomize=True (the CI
# profile) hypothesis grows a chain of settings per call of one @given function, and a single
# function parametrised over ~1000 cases hit Python's recursion limit.
_HALF = len(CASES) // 2


@pytest.mark.parametrize("entry,arg,corruption", CASES[:_HALF],
                         ids=[f"{e.name}-{a}-{c}" for e, a, c in CASES[:_HALF]])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(magnitude=st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
def test_bad_input_is_a_clear_error(entry, arg, corruption, magnitude):
    _check_bad_input(entry, arg, corruption, magnitude)


@pytest.mark.parametrize("entry,arg,corruption", CASES[_HALF:],
                         ids=[f"{e.name}-{a}-{c}" for e, a, c in CASES[_HALF:]])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(magnitude=st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
def test_bad_input_is_a_clear_error_more_areas(entry, arg, corruption, magnitude):
    _check_bad_input(entry, arg, corruption, magnitude)


def test_table_covers_every_kind_and_area():
    areas = {e.name.split(".")[0] for e in ENTRIES}
    assert {"optim", "policy", "rl", "transport", "mcts", "imaging", "llm", "routing",
            "bilevel", "bo", "graphs", "kan", "landscape", "metanet", "nas", "predictions",
            "recsys", "scheduling", "unlearning", "preference"} <= areas
    assert len(CASES) >= 100


# -- the docstring examples of the entry points that gained checks run ----------------------

DOCTESTED = {
    "optzoo.checks": None,
    "optzoo.policy.advantages": ["grpo_advantages"],
    "optzoo.policy.grpo": ["grpo_loss"],
    "optzoo.rl.adversarial_cmdp": ["PDPOConfig"],
    "optzoo.rl.linear_cmdp": ["random_linear_cmdp"],
    "optzoo.rl.dr_sac": ["kl_dro_dual"],
    "optzoo.transport.problems": ["bures_wasserstein_squared", "gaussian_map",
                                  "energy_distance_np"],
    "optzoo.transport.hj_optimal_transport": ["energy_distance"],
    "optzoo.imaging.sparse_kernel_decomposition": ["poisson_disk_samples", "charbonnier"],
    "optzoo.mcts.uct": ["play_episode"],
    "optzoo.optim.base": ["check_hyper", "ZooOptimizer"],
    "optzoo.kan.two_layer_kan": ["rbf"],
    "optzoo.kan.kan_tangent_kernel": ["predicted_loss_curve"],
    "optzoo.landscape.mode_connectivity": ["linear_path"],
    "optzoo.metanet.zoo": ["split_indices"],
    "optzoo.nas.connas": ["edge_direction"],
}


@pytest.mark.parametrize("module", sorted(DOCTESTED))
def test_docstring_examples_run(module):
    import doctest
    import importlib

    m = importlib.import_module(module)
    names = DOCTESTED[module]
    objs = [m] if names is None else [getattr(m, n) for n in names]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tries = 0
    for obj in objs:
        for t in doctest.DocTestFinder(recurse=False).find(obj, globs=vars(m).copy()):
            runner.run(t)
        tries = runner.tries
    assert tries > 0 and runner.failures == 0, f"{module}: {runner.failures} failing examples"
