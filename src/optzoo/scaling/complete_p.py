"""Complete(d)P: Mlodozeniec, Ablin, Béthune, Busbridge, Klein, Ramapuram & Cuturi, "Completed
Hyperparameter Transfer across Modules, Width, Depth, Batch and Duration" (ICLR 2026 poster,
OpenReview ``elB9k4nTL1``, arXiv 2512.22382; no official code found).

A *parameterisation* maps hyperparameters tuned on a base shape (width ``base_width``, depth
``base_depth``) to a model of width N and depth L, with m_N = N / base_width and m_L = L /
base_depth, for a pre-LN residual network trained with AdamW.  CompleteP (Dey et al. 2025, α =
1), as the paper adopts it and as the co-author's reference nanoGPT code
(``clairez-cerebras/nanoGPT-mup``, ``configure_optimizers``; read, not copied) implements it:

=================  ==================  ==================  ==============  =============
module kind         init std            learning rate       weight decay    (torch AdamW)
=================  ==================  ==================  ==============  =============
``input``           σ_in                η                   λ
``hidden``          σ_h / √m_N          η·m_N⁻¹·m_L^(α−1)   λ·m_N
``hidden_bias``     0                   η·m_L^(α−1)         0
``hidden_norm``     gain 1, bias 0      η·m_L^(α−1)         0
``final_norm``      gain 1, bias 0      η                   0
``output``          σ_out               η                   λ
=================  ==================  ==================  ==============  =============

plus: each residual branch is multiplied by m_L^(−α) (x ← x + m_L^(−α)·f(LN(x))); the last
hidden state is multiplied by α_out / m_N before the output layer; AdamW's ε becomes
ε·m_N⁻¹·m_L^(−α) (the reference code scales the one global ε, so every group).  torch's AdamW
multiplies the decay by the learning rate, so λ·m_N keeps lr·wd of hidden matrices constant in
width (the brief's pitfall: do not correct twice).

The other parameterisations are the same table with switches: ``"mup"`` (width only: no depth
factors, hidden wd λ as in the reference's μP branch), ``"depth-mup"`` (α = 0.5) and ``"sp"``
(the standard parameterisation: one lr, one wd on matrices, no multipliers, fan-in init).
Every init std is chosen so that **at the base shape all four give the same model and the same
optimizer** (σ_in = 1/√d_in, σ_h = 1/√fan_in at the base width, σ_out = 1/√base_width): the
parameterisations only differ in how they extrapolate, which is what transfer is about (tested).

Per-module multipliers (the paper's per-module HPs, expressed relative to the parameterisation so
that one set is reused at every scale): ``multipliers={kind: {"lr": a, "wd": b, "init": c,
"eps": d}}`` multiplies the table's entries of that kind.

Batch size and training duration (:func:`scale_batch`, :func:`scale_duration`).  The paper
derives them from SDE approximations of AdamW; its table was not reachable, so these are the
brief's INFERRED rules, behind named switches and labelled as such in the reproduction:

* batch B → κB at an equal token budget (``rule="sde"``, Malladi et al. 2022's square-root rule
  for Adam): η·√κ, (1 − β₁)·κ, (1 − β₂)·κ, ε/√κ, λ·√κ (torch's decoupled decay is multiplied by
  η, so λ√κ·η√κ = κ·λη keeps the decay per sample); ``rule="none"`` keeps every value;
* duration T → τT (``rule="ema"``, Wang & Aitchison 2024's AdamW timescale 1/(ηλ) a fixed
  fraction of training): λ/τ; ``rule="none"`` keeps λ.

Not implemented (not in the material read): the Complete(d)P refinements' exact forms (a QK-norm
ε constant in width, the corrected embedding ε, output multipliers folded into per-module rates);
the simplified low-dimensional HP parameterisation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch import nn

PARAMETERISATIONS = ("sp", "mup", "depth-mup", "completep")
KINDS = ("input", "hidden", "hidden_bias", "hidden_norm", "final_norm", "output")
MULTIPLIER_KEYS = ("lr", "wd", "init", "eps")
BATCH_RULES = ("sde", "none")
DURATION_RULES = ("ema", "none")

__all__ = [
    "BATCH_RULES", "DURATION_RULES", "KINDS", "MULTIPLIER_KEYS", "PARAMETERISATIONS",
    "AdamWHyperparameters", "Parameterisation", "coordinate_check", "param_groups",
    "scale_batch", "scale_duration",
]


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value <= 0:
        raise ValueError(f"{name}: expected a finite number > 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Parameterisation:
    """How a base shape's hyperparameters extrapolate to ``width`` × ``depth``.

    Args:
        name: ``"sp"``, ``"mup"``, ``"depth-mup"`` (α = 0.5) or ``"completep"`` (α = 1).
        width, depth: the model's width N and number of residual blocks L.
        base_width, base_depth: the shape the hyperparameters were tuned at.
        output_multiplier: α_out of the output layer's input multiplier α_out / m_N (μP family).
        multipliers: per-module multipliers ``{kind: {"lr" | "wd" | "init" | "eps": x}}``.

    Example:
        >>> from optzoo.scaling import Parameterisation
        >>> p = Parameterisation("completep", width=256, depth=8, base_width=32, base_depth=2)
        >>> p.lr_scale("hidden"), p.wd_scale("hidden"), p.branch_multiplier()  # 1/m_N, m_N, 1/m_L
        (0.125, 8.0, 0.25)
        >>> p.at(width=32, depth=2).lr_scale("hidden")  # the base shape: the tuned values
        1.0
        >>> Parameterisation("sp", width=256).lr_scale("hidden")  # SP: no width rule
        1.0
    """

    name: str = "completep"
    width: int = 32
    depth: int = 2
    base_width: int = 32
    base_depth: int = 2
    output_multiplier: float = 1.0
    multipliers: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in PARAMETERISATIONS:
            raise ValueError(f"name: expected one of {PARAMETERISATIONS}, got {self.name!r}")
        for k in ("width", "depth", "base_width", "base_depth"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{k}: expected an integer >= 1, got {v!r}")
        _positive("output_multiplier", self.output_multiplier)
        if not isinstance(self.multipliers, Mapping):
            raise TypeError(f"multipliers: expected a mapping kind -> {{key: value}}, got "
                            f"{type(self.multipliers).__name__}")
        for kind, mults in self.multipliers.items():
            if kind not in KINDS:
                raise ValueError(f"multipliers: unknown module kind {kind!r}; expected one of "
                                 f"{KINDS}")
            if not isinstance(mults, Mapping):
                raise TypeError(f"multipliers[{kind!r}]: expected a mapping, got "
                                f"{type(mults).__name__}")
            for key, v in mults.items():
                if key not in MULTIPLIER_KEYS:
                    raise ValueError(f"multipliers[{kind!r}]: unknown key {key!r}; expected one "
                                     f"of {MULTIPLIER_KEYS}")
                _positive(f"multipliers[{kind!r}][{key!r}]", v)

    # -- the factors ---------------------------------------------------------------------
    @property
    def m_width(self) -> float:
        return self.width / self.base_width

    @property
    def m_depth(self) -> float:
        return self.depth / self.base_depth

    @property
    def alpha(self) -> float:
        """The depth exponent α (0 where the parameterisation has no depth rule)."""
        return {"completep": 1.0, "depth-mup": 0.5}.get(self.name, 0.0)

    @property
    def width_rules(self) -> bool:
        return self.name != "sp"

    def _mult(self, kind: str, key: str) -> float:
        return float(self.multipliers.get(kind, {}).get(key, 1.0))

    def branch_multiplier(self) -> float:
        """m_L^(−α), the factor of every residual branch."""
        return self.m_depth ** (-self.alpha)

    def output_scale(self) -> float:
        """The factor of the output layer's input: α_out / m_N (μP family), 1 under SP."""
        return self.output_multiplier / self.m_width if self.width_rules else 1.0

    def init_std(self, kind: str, fan_in: int, base_fan_in: int | None = None) -> float:
        """Init std of a weight of ``kind`` with ``fan_in`` inputs (``base_fan_in``: its fan-in
        at the base width, for hidden matrices)."""
        if kind not in ("input", "hidden", "output"):
            raise ValueError(f"kind: expected 'input', 'hidden' or 'output' for a weight's init, "
                             f"got {kind!r}")
        c = self._mult(kind, "init")
        if not self.width_rules or kind == "input":
            return c / math.sqrt(fan_in)
        if kind == "hidden":
            base = fan_in / self.m_width if base_fan_in is None else base_fan_in
            return c / math.sqrt(base) / math.sqrt(self.m_width)
        return c / math.sqrt(self.base_width)  # output: width-independent, times α_out / m_N

    def lr_scale(self, kind: str) -> float:
        self._kind(kind)
        c = self._mult(kind, "lr")
        if not self.width_rules:
            return c
        depth = self.m_depth ** (self.alpha - 1.0) if self.alpha else 1.0
        if kind == "hidden":
            return c * depth / self.m_width
        if kind in ("hidden_bias", "hidden_norm"):
            return c * depth
        return c

    def wd_scale(self, kind: str) -> float:
        """Factor of λ (0 for biases and norms)."""
        self._kind(kind)
        if kind in ("hidden_bias", "hidden_norm", "final_norm"):
            return 0.0
        c = self._mult(kind, "wd")
        if kind == "hidden" and self.name in ("completep", "depth-mup"):
            return c * self.m_width
        return c

    def eps_scale(self, kind: str) -> float:
        self._kind(kind)
        c = self._mult(kind, "eps")
        if self.name in ("completep", "depth-mup"):
            return c / self.m_width * self.m_depth ** (-self.alpha)
        return c

    @staticmethod
    def _kind(kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")

    def at(self, width: int | None = None, depth: int | None = None) -> Parameterisation:
        """The same parameterisation (and multipliers) for another shape."""
        return replace(self, width=self.width if width is None else width,
                       depth=self.depth if depth is None else depth)


@dataclass(frozen=True)
class AdamWHyperparameters:
    """The base shape's global AdamW hyperparameters (η, λ, β₁, β₂, ε)."""

    lr: float = 1e-3
    weight_decay: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def __post_init__(self) -> None:
        _positive("lr", self.lr)
        _positive("eps", self.eps)
        if not (isinstance(self.weight_decay, int | float) and math.isfinite(self.weight_decay)
                and self.weight_decay >= 0):
            raise ValueError(f"weight_decay: expected a finite number >= 0, got "
                             f"{self.weight_decay!r}")
        for k in ("beta1", "beta2"):
            v = getattr(self, k)
            if not (isinstance(v, int | float) and 0 <= v < 1):
                raise ValueError(f"{k}: expected a number in [0, 1), got {v!r}")


def param_groups(named: Iterable[tuple[str, nn.Parameter]], kind_of: Callable[[str], str],
                 param: Parameterisation, hp: AdamWHyperparameters) -> list[dict[str, Any]]:
    """``torch.optim.AdamW`` parameter groups: one per module kind present, each with its lr,
    weight decay, betas and ε from the parameterisation's table.

    Args:
        named: ``model.named_parameters()``.
        kind_of: maps a parameter name to one of :data:`KINDS` (e.g.
            :meth:`optzoo.scaling.problems.ResidualMLP.kind_of`).
        param: the parameterisation at the model's shape.
        hp: the base shape's hyperparameters.

    Example:
        >>> import torch
        >>> from optzoo.scaling import (AdamWHyperparameters, Parameterisation, ResidualMLP,
        ...                             param_groups)
        >>> param = Parameterisation("completep", width=64, depth=4, base_width=32, base_depth=2)
        >>> model = ResidualMLP(d_in=8, d_out=3, param=param)
        >>> hp = AdamWHyperparameters(lr=1e-2, weight_decay=0.1)  # tuned at width 32, depth 2
        >>> groups = param_groups(model.named_parameters(), model.kind_of, param, hp)
        >>> [(g["kind"], g["lr"], g["weight_decay"]) for g in groups]  # hidden: η/m_N, λ·m_N
        [('input', 0.01, 0.1), ..., ('hidden', 0.005, 0.2), ...]
        >>> opt = torch.optim.AdamW(groups)
    """
    by_kind: dict[str, list[nn.Parameter]] = {}
    for name, p in named:
        if not p.requires_grad:
            continue
        kind = kind_of(name)
        if kind not in KINDS:
            raise ValueError(f"kind_of({name!r}) returned {kind!r}; expected one of {KINDS}")
        by_kind.setdefault(kind, []).append(p)
    if not by_kind:
        raise ValueError("named: no trainable parameters")
    return [{"params": ps, "kind": kind, "lr": hp.lr * param.lr_scale(kind),
             "weight_decay": hp.weight_decay * param.wd_scale(kind),
             "betas": (hp.beta1, hp.beta2), "eps": hp.eps * param.eps_scale(kind)}
            for kind, ps in by_kind.items()]


def scale_batch(hp: AdamWHyperparameters, kappa: float, rule: str = "sde"
                ) -> AdamWHyperparameters:
    """Hyperparameters for a batch κ times the base one (INFERRED SDE rule, see the module
    docstring); ``rule="none"`` returns ``hp`` unchanged.

    Raises:
        ValueError: (1 − β)·κ ≥ 1 (the rule leaves its range: above the critical batch size of
            the momentum's timescale).
    """
    kappa = _positive("kappa", kappa)
    if rule not in BATCH_RULES:
        raise ValueError(f"rule: expected one of {BATCH_RULES}, got {rule!r}")
    if rule == "none":
        return hp
    b1, b2 = 1 - (1 - hp.beta1) * kappa, 1 - (1 - hp.beta2) * kappa
    if b1 < 0 or b2 < 0:
        raise ValueError(f"kappa: (1 - beta) * kappa must stay below 1, got beta1 -> {b1:g}, "
                         f"beta2 -> {b2:g} at kappa = {kappa:g}")
    root = math.sqrt(kappa)
    return AdamWHyperparameters(lr=hp.lr * root, weight_decay=hp.weight_decay * root,
                                beta1=b1, beta2=b2, eps=hp.eps / root)


def scale_duration(hp: AdamWHyperparameters, tau: float, rule: str = "ema"
                   ) -> AdamWHyperparameters:
    """Hyperparameters for a run τ times longer (INFERRED: λ/τ keeps AdamW's averaging timescale
    1/(ηλ) a fixed fraction of training); ``rule="none"`` returns ``hp`` unchanged."""
    tau = _positive("tau", tau)
    if rule not in DURATION_RULES:
        raise ValueError(f"rule: expected one of {DURATION_RULES}, got {rule!r}")
    return hp if rule == "none" else replace(hp, weight_decay=hp.weight_decay / tau)


def coordinate_check(build: Callable[[Parameterisation], nn.Module], params:
                     Iterable[Parameterisation], hp: AdamWHyperparameters,
                     data: Callable[[torch.Generator], tuple[torch.Tensor, torch.Tensor]],
                     loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *,
                     steps: int = 3, seed: int = 0) -> list[dict[str, float]]:
    """The μP "coordinate check": per model, the RMS change of every block's output after
    ``steps`` AdamW steps from init, on the same batches.

    Under a parameterisation that transfers, these sizes do not grow or shrink with width and
    depth; under SP they grow with width.  Returns one dict per parameterisation with
    ``width``, ``depth``, ``delta_rms@<block>`` (block = 0..L−1, ``out`` for the logits),
    ``delta_rms_last`` (the residual stream after the last block, the quantity compared across
    depths: a mean over blocks would mix positions of different depth) and ``delta_rms_mean``.
    ``build(param)`` must return a model whose ``forward(x, return_hidden=True)`` gives
    ``(out, [block outputs])`` and that has a ``kind_of(name)`` method.

    Example:
        >>> from torch.nn import functional as F
        >>> from optzoo.scaling import (AdamWHyperparameters, GaussianMixture, Parameterisation,
        ...                             ResidualMLP, coordinate_check)
        >>> task = GaussianMixture(dim=16, classes=5)
        >>> params = [Parameterisation(name, width=w, base_width=32)
        ...           for name in ("sp", "completep") for w in (32, 128)]
        >>> rows = coordinate_check(lambda p: ResidualMLP(d_in=16, d_out=5, param=p), params,
        ...                         AdamWHyperparameters(lr=2 ** -6), lambda g: task.batch(32, g),
        ...                         F.cross_entropy, steps=2)
        >>> growth = [rows[i + 1]["delta_rms_last"] / rows[i]["delta_rms_last"] for i in (0, 2)]
        >>> bool(growth[0] > 2), bool(0.5 < growth[1] < 1.5)  # SP grows with width; CompleteP not
        (True, True)
    """
    rows = []
    for param in params:
        torch.manual_seed(seed)
        model = build(param)
        gen = torch.Generator().manual_seed(seed + 1)
        batches = [data(gen) for _ in range(steps + 1)]
        probe = batches[0][0]
        with torch.no_grad():
            out0, hidden0 = model(probe, return_hidden=True)
        opt = torch.optim.AdamW(param_groups(model.named_parameters(), model.kind_of, param,
                                             hp))
        for x, y in batches[1:]:
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
        with torch.no_grad():
            out1, hidden1 = model(probe, return_hidden=True)
        row = {"width": float(param.width), "depth": float(param.depth)}
        deltas = []
        for i, (a, b) in enumerate(zip(hidden0, hidden1, strict=True)):
            d = float((b - a).pow(2).mean().sqrt())
            row[f"delta_rms@{i}"] = d
            deltas.append(d)
        row["delta_rms@out"] = float((out1 - out0).pow(2).mean().sqrt())
        row["delta_rms_last"] = deltas[-1]
        row["delta_rms_mean"] = float(sum(deltas) / len(deltas))
        rows.append(row)
    return rows
