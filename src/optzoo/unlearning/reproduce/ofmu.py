"""Reproduction ``ofmu``: Asif & Amiri, "OFMU: Optimization-Driven Framework for Machine
Unlearning" (ICLR 2026, OpenReview ZDuyNJI56H, arXiv 2509.22483).  No official code.

The paper's vision track (CIFAR-10/100, ResNet, class-wise and random forgetting) at CPU scale,
as the brief prescribes: scikit-learn digits, MLP 64-128-10 trained on the whole training split
(Adam, 60 epochs); gold standard = the same recipe retrained on D_r from the same seed
(:mod:`optzoo.unlearning.problems`).  Tasks:

* ``classwise``: D_f = every training image of digit 3 (retrained UA = 0);
* ``random_noisy`` (issue 21, replaces ``random`` in the presets): a random 10 % of digits with
  fixed Gaussian pixel noise σ = 0.5.  The original model memorises its training set (UA = 1)
  but the retrained model's forget accuracy is ≈ 0.65 — well below 1, as the retrained ResNet's
  is on CIFAR-10.  On clean digits (``random``) the original model was within 2.4 points of the
  retrained one: an OFMU that changed nothing passed claims (1) and (3) there.

Each unlearning method starts from the original model and makes the same number ``steps`` of
full-batch plain gradient updates (OFMU: ``steps / (T + 1)`` rounds of T inner + 1 outer
update), with its step size tuned on the pilot split (below, "Tuning").  The forget loss of GA,
GradDiff and OFMU is the bounded cross-entropy ``mean_i min(CE_i, log 10)`` (the brief's
pitfall: unbounded ascent); NPO uses its own loss; the retain loss is cross-entropy.

Methods: original (no unlearning), retrain, FT (fine-tune on D_r), GA, NPO (β = 0.1), GradDiff
swept over λ ∈ ``lambdas``, and OFMU arms (:data:`OFMU_ARMS`):

* ``ofmu`` — the arm every claim rests on: EXACT second-order term ∇²Φ∇Φ (triple backward; the
  issue-21 default at this scale), outer step chained at the last inner iterate, ε = 1e-8;
* ``ofmu_first_order`` — ∇²Φ∇Φ ≈ H_f∇Φ (the library default, for LMs);
* ``ofmu_anchor`` — the "outer step at θ_k" reading, θ_{k+1} = θ_k − η∇F_ρ(θ'_T);
* ``ofmu_beta0`` — the paper's ablation without the decorrelation term (β = 0);
* ``ofmu ε=…`` — the ε sweep of Sim's smoothed norms ``‖g‖_ε = sqrt(‖g‖² + ε²)``.

The paper was searched again for issue 21 (OpenReview ZDuyNJI56H, arXiv HTML v1, the papernotes
summary): the retrievable text is the abstract, the introduction and summaries ("inner
maximization step that incorporates a similarity-aware penalty … outer minimization step";
"outer level minimizes the retain loss with a penalty term enforcing stationary points of the
inner objective").  None of it says where the outer step starts, how the third-order part of
∇²Φ∇Φ is computed, or what ε is; so both outer-step readings and both second-order variants
are run, ε of the main arm is the plain-cosine guard 1e-8 (declared before any run: the
paper's Sim is a cosine, and 1e-8 is ``torch.nn.functional.cosine_similarity``'s guard), and
ε ∈ ``eps_sweep`` is reported as a sensitivity, never used to pick the arm the claims use.

Metrics per trial: forget / retain / test accuracy (class-wise: test without digit 3), forget gap
|UA − UA_retrain|, loss-threshold MIA AUC on D_f against held-out non-members (class-wise: the
test images of digit 3), KL(p_retrain ‖ p) on D_f, the total variation Σ_j |r_{j+1} − r_j| of
the retain-accuracy curve sampled every ``inner_steps + 1`` updates (one OFMU round; the same
grid for every method), and for OFMU arms the terms of the first steps at θ_0 (‖∇L_f‖,
‖β∇Sim‖, ‖2ρ_0∇²Φ∇Φ‖) and the total change of L_f made by the inner and by the outer steps.

Claims (thresholds fixed before any run; per task; decided by named tests of
:mod:`optzoo.experiment.verdicts`, paired by seed — every method of a (task, seed) starts from
the same original model):

(0) (a cell of every claim) OFMU moves towards the retrained model: its forget gap is below the
    original model's by more than ``min_move`` (paired ``superior``).  Issue 18 required only a
    drop of UA; issue 21: a no-op, or an overshoot past the retrained model (UA → 0 where the
    retrained model keeps 0.65), is no movement towards it.  Where the original model's gap is
    itself not shown to exceed ``min_move`` (nothing to forget) every claim is inconclusive
    (``not_acting``).
(1) OFMU lies on or above GradDiff's λ-front: for retain and test accuracy and every λ,
    ``any_of`` (Holm) [forget gap lower by more than ``pareto_tol``, accuracy higher by more
    than ``pareto_tol``] (paired ``superior``), all cells with (0) by ``all_of``.  A tie is no
    "on or above".
(2) retrain-level forgetting: ``all_of`` [(0), ``equivalent`` (TOST) of UA and the retrained
    model's UA within ``retrain_tol``, ``noninferior`` of the test accuracy against the
    retrained model's with margin ``retrain_tol``].
(3) smoother training curve: ``all_of`` [(0), paired ``superior`` (lower TV by more than
    ``min_tv``) against GA and against GradDiff λ = 1].
(4) ablation, β = 0 forgets at least as well but retains less: ``all_of`` [(0),
    ``noninferior`` of β = 0's forget gap with margin ``pareto_tol``, ``superior`` of OFMU's
    retain accuracy over β = 0's by more than ``pareto_tol``] ((0) added in issue 21: a no-op
    OFMU "retains more" than any β = 0 run that forgets).
The other OFMU arms are reported in a table (the paper makes no claim about them).

Verdict margins (preset fields, the same for every preset, not trial parameters):

- ``pareto_tol = 0.005``: half an accuracy point (≈ 3 of the ~540 test images) — the smallest
  difference on the front that counts.
- ``retrain_tol = 0.02``: the brief's "retrain level (±2 %)" and "within ~1–2 %".
- ``min_move = 0.05`` (issue 21, replaces issue 18's ``min_forget = 0.01``): five points of
  forget accuracy towards the retrained model (≈ 6 of the ~126 random-forget images, a seventh
  of the random_noisy gap, a twentieth of the class-wise gap) is the smallest movement that
  counts as unlearning; the paper's CIFAR-10 OFMU closes a ≈ 7-point gap to within 0.9.
- ``min_tv = 0.01``: one accuracy point of total variation of the retain curve.

Tuning (issue 21: the same budget for method and baselines).  Every compared method's step size
is chosen on the pilot split (seed ``pilot_seed`` = 100, a split, D_f and original / retrained
models of their own; never a claim seed) from the same grid ``lr_grid`` = {0.003, 0.01, 0.03,
0.1, 0.3, 1, 3, 10} (8 points each, half-decade steps) by the same rule, the lowest forget gap +
test-accuracy drop (:func:`pilot_score`): OFMU (main arm; its other arms and the β = 0 ablation
run at its pick), GA, NPO and GradDiff (at λ = 1, its pick used for every λ of the front).  Each
pick is a :class:`~optzoo.experiment.verdicts.Tuned` record and every comparison claim is
``guard``-ed by the picks it rests on (claims 1: OFMU, GradDiff; 2 and 4: OFMU; 3: OFMU, GA,
GradDiff): a pick on the grid's edge makes the claim inconclusive.  FT is in no claim and keeps
``lr`` = 0.1.  Every run re-derives the pick (deterministic, cached per process), so it is
stored with each trial (``lr_used``, ``pilot_i``) and the table "step sizes tuned on the pilot
split" reports it.  The grid was {0.03, 0.1, 0.3, 1} until stop 37: on it the picks of GA (0.03,
both tasks), NPO (0.03), GradDiff (1, class-wise) and OFMU (0.03, random_noisy) fell on the
edge, so those claims were inconclusive by the guard.  It was widened once, by a decade each way
and for every tuned method at once, before any run on the new grid was seen; it is not
re-widened after a result.  The picks are reproducible in one environment, not bit for bit
across runs: stop 36's ``make run`` and stop 37's run of the same code differ in the last digits
of the trained models (retrained random_noisy test accuracy 0.6623 vs 0.6630), and the chaotic
unlearning runs amplify that (OFMU's random_noisy pilot score at lr 0.03: 0.158 vs 0.311).

OFMU's other hyper-parameters, T = 5, β = 1, ρ_0 = 0.1, γ = 1.1, ρ_max = 10, are those of an
earlier session's offline pilot (the brief's grid T ∈ {1, 5}, β ∈ {0.1, 1}, ρ_0 ∈ {0.01, 0.1},
γ/ε combinations: 32 points at lr = 0.1, seed 100, then with the clean ``random`` task and
ε = 0.1); they are not re-tuned here, and the baselines have no counterpart of that budget (GA
has no other knob; NPO's β = 0.1 is the NPO paper's; GradDiff's λ is swept): an asymmetry in
OFMU's favour that remains (a held OFMU claim is optimistic on that count; a not-held one is
not).  ε = 1e-8 (was 0.1: issue 21 — at ε = 0.1 ≫ ‖∇L‖ ≈ 0.003–0.014 the "cosine" is
⟨g_f, g_r⟩/ε², an inner product) is declared, not tuned.  Everything runs on the CPU
(``--device`` is ignored).
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Claim, Figure, Preset, Reproduction, Result, Summary, Table, Trial
from optzoo.experiment.stats import fmt_ci, mean_ci
from optzoo.experiment.verdicts import (
    Tuned,
    Verdict,
    all_of,
    any_of,
    by_seed,
    common_seeds,
    downgrade,
    equivalent,
    guard,
    noninferior,
    not_acting,
    superior,
    tune,
    undecided,
)
from optzoo.report import figures as fg
from optzoo.unlearning import (
    accuracy,
    capped,
    classification_ce,
    finetune,
    graddiff,
    gradient_ascent,
    kl_divergence,
    loss_mia_auc,
    npo,
    ofmu,
    ofmu_gradients,
)
from optzoo.unlearning.problems import TASKS, digits_forgetting, train_digits_model

SLUG = "ofmu"
BASE_METHODS = ("original", "retrain", "ft", "ga", "npo")
#: OFMU arms: name -> (variant, outer_at, β = 0?).  "ofmu" is the arm the claims rest on.
OFMU_ARMS = {
    "ofmu": ("exact", "inner", False),
    "ofmu_first_order": ("first_order", "inner", False),
    "ofmu_anchor": ("exact", "anchor", False),
    "ofmu_beta0": ("exact", "inner", True),
    "ofmu_eps": ("exact", "inner", False),  # one trial per ε of ``eps_sweep``
}
OFMU_METHODS = tuple(m for m in OFMU_ARMS if m != "ofmu_eps")
MARGINS = ("pareto_tol", "retrain_tol", "min_move", "min_tv")  # verdict margins, not params
SMOOTH_REF_LAMBDA = 1.0  # GradDiff's unweighted sum is the reference of claim (3)


# -- configuration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class OFMUConfig(Preset):
    """Settings of the reproduction.

    Args:
        seeds: seeds (split, D_f, initialisation and batch order of the trained models).
        tasks: forgetting tasks ("classwise", "random").
        hidden: MLP width (64-hidden-10).
        epochs, train_lr: Adam recipe of the original and retrained models (batch 64).
        steps: gradient updates of every unlearning method (OFMU: steps / (T+1) rounds).
        lr: step size of FT (untuned: FT is in no claim).
        lr_grid: the step-size grid every tuned method (GA, NPO, GradDiff at λ = 1, OFMU)
            is tuned on, on the pilot split (the same grid and budget for all).
        pilot_seed: seed of the pilot split the step sizes are chosen on (never a claim
            seed: must be >= ``seeds``).
        lambdas: GradDiff's λ grid (must contain 1.0, the reference of claim 3).
        npo_beta: NPO's β.
        inner_steps, beta, rho, gamma, rho_max, eps: OFMU's T, β, ρ_0, γ, ρ_max and ε (the
            ε of the main arm, declared before any run: 1e-8, a numerical guard only, as in
            ``torch.nn.functional.cosine_similarity``; the paper's Sim is the cosine).
        eps_sweep: the other ε values of the smoothed norms, each run as an extra OFMU arm
            (a reported sensitivity, never used to pick the arm the claims rest on).
        pareto_tol, retrain_tol, min_move, min_tv: verdict margins (module docstring,
            "Verdict margins"); not trial parameters.
    """

    seeds: int = 3
    tasks: tuple[str, ...] = ("classwise", "random_noisy")
    hidden: int = 128
    epochs: int = 60
    train_lr: float = 1e-2
    steps: int = 198
    lr: float = 0.1
    lr_grid: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
    pilot_seed: int = 100
    lambdas: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0, 10.0)
    npo_beta: float = 0.1
    inner_steps: int = 5
    beta: float = 1.0
    rho: float = 0.1
    gamma: float = 1.1
    rho_max: float = 10.0
    eps: float = 1e-8
    eps_sweep: tuple[float, ...] = (1e-3, 1e-2, 0.1)
    pareto_tol: float = 0.005
    retrain_tol: float = 0.02
    min_move: float = 0.05
    min_tv: float = 0.01

    def validate(self) -> None:
        super().validate()
        bad = [t for t in self.tasks if t not in TASKS]
        if bad or not self.tasks:
            raise ConfigError(f"tasks: expected a non-empty subset of {TASKS}, got {self.tasks}")
        for name in ("hidden", "epochs", "steps", "inner_steps"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected >= 1, got {getattr(self, name)}")
        if self.steps < 2 * (self.inner_steps + 1):
            raise ConfigError(f"steps: expected >= 2 OFMU rounds = {2 * (self.inner_steps + 1)},"
                              f" got {self.steps}")
        if SMOOTH_REF_LAMBDA not in self.lambdas or any(v <= 0 for v in self.lambdas):
            raise ConfigError(f"lambdas: expected positive values including "
                              f"{SMOOTH_REF_LAMBDA}, got {self.lambdas}")
        if len(set(self.lr_grid)) < 2 or any(not v > 0 for v in self.lr_grid):
            raise ConfigError(f"lr_grid: expected at least two distinct positive step sizes, "
                              f"got {self.lr_grid}")
        if self.pilot_seed < self.seeds:
            raise ConfigError(f"pilot_seed: expected >= seeds = {self.seeds} (the pilot split "
                              f"is never a claim seed), got {self.pilot_seed}")
        for name in ("train_lr", "lr", "npo_beta", "rho", "rho_max", "eps"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")
        if any(not e > 0 for e in self.eps_sweep) or self.eps in self.eps_sweep:
            raise ConfigError(f"eps_sweep: expected positive values other than eps = "
                              f"{self.eps}, got {self.eps_sweep}")
        for name in MARGINS:
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}: expected > 0, got {getattr(self, name)}")
        if self.beta < 0:
            raise ConfigError(f"beta: expected >= 0, got {self.beta}")
        if self.gamma < 1:
            raise ConfigError(f"gamma: expected >= 1, got {self.gamma}")
        if self.rho_max < self.rho:
            raise ConfigError(f"rho_max: expected >= rho = {self.rho}, got {self.rho_max}")


PRESETS = {
    "smoke": OFMUConfig(seeds=1, epochs=4, steps=12, inner_steps=2, lambdas=(0.3, 1.0),
                        eps_sweep=(0.1,), lr_grid=(0.1, 0.3)),
    "quick": OFMUConfig(),
    "full": OFMUConfig(seeds=5, lambdas=(0.1, 0.3, 1.0, 3.0, 10.0, 30.0)),
}


def _methods(cfg: OFMUConfig) -> list[tuple[str, dict]]:
    return ([(m, {}) for m in BASE_METHODS]
            + [("graddiff", {"lam": float(lam)}) for lam in cfg.lambdas]
            + [(m, {}) for m in OFMU_METHODS]
            + [("ofmu_eps", {"sweep_eps": float(e)}) for e in cfg.eps_sweep])


def tuned_method(method: str) -> str | None:
    """The method whose pilot-split step size ``method`` runs with: every OFMU arm runs with
    the main arm's (the readings and the β = 0 ablation differ from it in one setting only),
    every GradDiff λ with GradDiff's tuned at λ = 1; FT, original and retrain are untuned."""
    if method in OFMU_ARMS:
        return "ofmu"
    return method if method in ("ga", "npo", "graddiff") else None


def pilot_score(forget_gap: float, test_drop: float) -> float:
    """The pilot rule, the same for every method (lower is better): forget gap
    |UA − UA_retrain| plus test-accuracy drop TA_retrain − TA, on the pilot split."""
    return float(forget_gap) + float(test_drop)


def trials(cfg: OFMUConfig) -> list[Trial]:
    shared = {k: v for k, v in cfg.to_dict().items()
              if k not in ("seeds", "tasks", "lambdas", "eps_sweep", *MARGINS)}
    return [Trial(method=m, problem=task, seed=s, params={**shared, **extra})
            for task in cfg.tasks for s in range(cfg.seeds) for m, extra in _methods(cfg)]


# -- one trial ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _setup(task: str, seed: int, hidden: int, epochs: int, train_lr: float):
    """The problem, the original model (D_f ∪ D_r) and the retrained model (D_r), same seed."""
    prob = digits_forgetting(task, seed)
    full = tuple(torch.cat([a, b]) for a, b in zip(prob.forget, prob.retain, strict=True))
    kw = {"hidden": hidden, "epochs": epochs, "lr": train_lr}
    original = train_digits_model(full, 1000 + seed, **kw)
    retrained = train_digits_model(prob.retain, 1000 + seed, **kw)
    return prob, original, retrained


def _run_method(method: str, p: dict, model, prob, monitor, every: int):
    fl = capped(math.log(prob.n_classes))
    steps, lr = int(p["steps"]), float(p["lr"])
    kw = {"monitor": monitor, "monitor_every": every}
    if method == "ft":
        return finetune(model, classification_ce, prob.retain, steps=steps, lr=lr, **kw)
    if method == "ga":
        return gradient_ascent(model, fl, prob.forget, steps=steps, lr=lr, **kw)
    if method == "npo":
        return npo(model, prob.forget, beta=float(p["npo_beta"]), steps=steps, lr=lr, **kw)
    if method == "graddiff":
        return graddiff(model, fl, classification_ce, prob.forget, prob.retain,
                        retain_weight=float(p["lam"]), steps=steps, lr=lr, **kw)
    t = int(p["inner_steps"])
    return ofmu(model, fl, classification_ce, prob.forget, prob.retain,
                rounds=steps // (t + 1), inner_steps=t, lr=lr, **ofmu_settings(method, p),
                **kw)


def ofmu_settings(method: str, p: dict) -> dict:
    """The keyword arguments of :func:`optzoo.unlearning.ofmu` of OFMU arm ``method``."""
    if method not in OFMU_ARMS:
        raise ValueError(f"method: expected one of {tuple(OFMU_ARMS)}, got {method!r}")
    variant, outer_at, no_sim = OFMU_ARMS[method]
    return {"beta": 0.0 if no_sim else float(p["beta"]), "rho": float(p["rho"]),
            "gamma": float(p["gamma"]), "rho_max": float(p["rho_max"]),
            "eps": float(p["sweep_eps"] if method == "ofmu_eps" else p["eps"]),
            "variant": variant, "outer_at": outer_at}


def _loss_budget(history: list[dict]) -> dict:
    """How the forget loss L_f moved: the total change made by the inner (ascent) steps and
    by the outer (penalty) steps over the run, its maximum and its last recorded value
    (records hold L_f before each step, so a step's change is the next record's minus its
    own)."""
    recs = [h for h in history if "forget_loss" in h]
    gain = {"inner": 0.0, "outer": 0.0}
    for a, b in zip(recs, recs[1:], strict=False):
        gain[a["phase"]] += float(b["forget_loss"]) - float(a["forget_loss"])
    lf = [float(h["forget_loss"]) for h in recs]
    return {"inner_lf_change": gain["inner"], "outer_lf_change": gain["outer"],
            "max_forget_loss": max(lf), "final_forget_loss": lf[-1]}


def _start_terms(model, prob, kw: dict) -> dict:
    """The sizes of ∇L_f and β∇Sim at θ_0 (the original model), and ‖∇Φ(θ_0)‖: what the
    first inner step is made of (the class-wise analysis of issue 21)."""
    fl = capped(math.log(prob.n_classes))
    m = copy.deepcopy(model)
    g0 = ofmu_gradients(m, fl, classification_ce, prob.forget, prob.retain, beta=0.0)
    g = ofmu_gradients(m, fl, classification_ce, prob.forget, prob.retain, beta=kw["beta"],
                       eps=kw["eps"])

    def norm(gs) -> float:
        return math.sqrt(sum(float(x.pow(2).sum()) for x in gs))

    gp = ofmu_gradients(m, fl, classification_ce, prob.forget, prob.retain, beta=kw["beta"],
                        eps=kw["eps"], rho=kw["rho"], variant=kw["variant"])
    gr = ofmu_gradients(m, classification_ce, fl, prob.retain, prob.forget, beta=0.0)
    sim_part = [a - b for a, b in zip(g0.grad_phi, g.grad_phi, strict=True)]  # β∇Sim
    assert gp.grad_penalty is not None
    pen = [a - b for a, b in zip(gp.grad_penalty, gr.grad_phi, strict=True)]  # 2ρ∇²Φ∇Φ
    return {"grad_f_0": norm(g0.grad_phi), "beta_grad_sim_0": norm(sim_part),
            "grad_phi_0": norm(g.grad_phi), "sim_0": g.sim, "grad_r_0": norm(gr.grad_phi),
            "penalty_0": norm(pen)}


def total_variation(values) -> float:
    """Σ_j |v_{j+1} − v_j|: the smoothness statistic of claim (3)."""
    v = np.asarray(values, dtype=float)
    return float(np.abs(np.diff(v)).sum()) if v.size > 1 else 0.0


def _pilot_key(method: str, p: dict) -> tuple:
    """The parameters a pilot run of ``method`` depends on (hashable, arm-independent)."""
    skip = {"lam", "sweep_eps"}
    return tuple(sorted((k, tuple(v) if isinstance(v, list | tuple) else v)
                        for k, v in p.items() if k not in skip))


@functools.lru_cache(maxsize=32)
def _pilot_scores(task: str, method: str, key: tuple) -> tuple[float, ...]:
    """Scores (:func:`pilot_score`) of ``method`` at every step size of ``lr_grid`` on the
    pilot split (seed ``pilot_seed``): the same budget, grid and rule for every tuned method.
    Deterministic, so every process (and every seed's trial) gets the same pick."""
    p = dict(key)
    prob, original, retrained = _setup(task, int(p["pilot_seed"]), int(p["hidden"]),
                                       int(p["epochs"]), float(p["train_lr"]))
    ua_r, ta_r = accuracy(retrained, *prob.forget), accuracy(retrained, *prob.test)
    every = int(p["inner_steps"]) + 1
    out = []
    for lr in p["lr_grid"]:
        q = {**p, "lr": float(lr), "lam": SMOOTH_REF_LAMBDA}
        model = copy.deepcopy(original)
        _run_method(method, q, model, prob, None, every)
        model.eval()
        out.append(pilot_score(abs(accuracy(model, *prob.forget) - ua_r),
                               ta_r - accuracy(model, *prob.test)))
    return tuple(out)


def pilot_tuned(name: str, grid, scores) -> Tuned:
    """The pilot pick of one method as a :class:`Tuned` record (lowest mean score)."""
    return tune(name, {float(g): float(v) for g, v in zip(grid, scores, strict=True)})


def run_trial(trial: Trial, device: str) -> dict:
    torch.set_num_threads(1)
    p = dict(trial.params)
    if trial.seed == int(p["pilot_seed"]):
        raise ValueError(f"seed: {trial.seed} is the pilot seed the step sizes are tuned on, "
                         "never a claim seed")
    pilot: dict = {}
    base = tuned_method(trial.method)
    if base is not None:
        grid = [float(v) for v in p["lr_grid"]]
        scores = _pilot_scores(trial.problem, base, _pilot_key(base, p))
        p["lr"] = pilot_tuned(base, grid, scores).best
        pilot = {"lr_used": p["lr"], **{f"pilot_{i}": v for i, v in enumerate(scores)}}
    prob, original, retrained = _setup(trial.problem, trial.seed, int(p["hidden"]),
                                       int(p["epochs"]), float(p["train_lr"]))
    every = int(p["inner_steps"]) + 1

    def monitor(m):
        return {"retain_acc": accuracy(m, *prob.retain), "forget_acc": accuracy(m, *prob.forget)}

    if trial.method in ("original", "retrain"):
        model = original if trial.method == "original" else retrained
        curve = [monitor(model)["retain_acc"]] * (int(p["steps"]) // every + 1)
        extra: dict = {}
    else:
        model = copy.deepcopy(original)
        res = _run_method(trial.method, p, model, prob, monitor, every)
        curve = res.series("retain_acc")
        extra = {"final_rho": res.history[-1].get("rho"), "final_sim": res.history[-1].get("sim")}
        if trial.method in OFMU_ARMS:
            extra.update(_start_terms(original, prob, ofmu_settings(trial.method, p)))
            extra.update(_loss_budget(res.history))
    model.eval()
    ua_r = accuracy(retrained, *prob.forget)
    with torch.no_grad():
        kl = kl_divergence(retrained(prob.forget[0]), model(prob.forget[0]))
    out = {"forget_acc": accuracy(model, *prob.forget),
           "retain_acc": accuracy(model, *prob.retain),
           "test_acc": accuracy(model, *prob.test),
           "retrain_forget_acc": ua_r, "retrain_test_acc": accuracy(retrained, *prob.test),
           "mia_auc": loss_mia_auc(model, prob.forget, prob.nonmembers),
           "kl_retrain": kl, "retain_tv": total_variation(curve),
           **{k: v for k, v in extra.items() if v is not None}, **pilot}
    out["forget_gap"] = abs(out["forget_acc"] - ua_r)
    out["test_drop"] = out["retrain_test_acc"] - out["test_acc"]
    for j, v in enumerate(curve):
        out[f"curve_{j:03d}"] = float(v)
    return out


# -- summary -----------------------------------------------------------------------------------

def _label(r: Result) -> str:
    if r.trial.method == "graddiff":
        return f"graddiff λ={r.trial.params['lam']:g}"
    if r.trial.method == "ofmu_eps":
        return f"ofmu ε={r.trial.params['sweep_eps']:g}"
    return r.trial.method


def _vals(rs: list[Result], key: str) -> list[float]:
    return [float(r.metrics[key]) for r in rs if r.metrics.get(key) is not None]


def _mean(rs: list[Result], key: str) -> float:
    v = _vals(rs, key)
    return float(np.mean(v)) if v else math.nan


def _fmt(rs: list[Result], key: str, digits: int = 3) -> str:
    if key == "seconds":  # wall time is bookkeeping (meta), not a deterministic metric
        v = [float(r.meta["seconds"]) for r in rs if "seconds" in r.meta]
    else:
        v = _vals(rs, key)
    return fmt_ci(*mean_ci(v), digits=digits) if v else "—"


def _by_label(results: list[Result], task: str) -> dict[str, list[Result]]:
    out: dict[str, list[Result]] = {}
    for r in sorted((r for r in results if r.trial.problem == task),
                    key=lambda r: r.trial.seed):
        out.setdefault(_label(r), []).append(r)
    return out


COLUMNS = [("UA (forget acc)", "forget_acc"), ("|UA − UA_retrain|", "forget_gap"),
           ("RA (retain acc)", "retain_acc"), ("TA (test acc)", "test_acc"),
           ("MIA AUC", "mia_auc"), ("KL(retrain ‖ ·) on D_f", "kl_retrain"),
           ("retain-acc TV", "retain_tv"), ("trial seconds", "seconds")]


def _moved(groups: dict[str, list[Result]], cfg: OFMUConfig,
           label: str = "ofmu") -> tuple[Verdict, Verdict | None]:
    """(0): the arm ``label`` moved towards the retrained model: its forget gap
    |UA − UA_retrain| is below the original model's by more than ``min_move`` (paired by
    seed); and whether there is that much to close at all (the original model's UA differs
    from the retrained model's by more than ``min_move``), or None without the original
    model's trials."""
    orig = groups.get("original", [])
    if not orig:
        return undecided("no original-model trial is stored"), None
    gap_orig = by_seed(orig, "forget_gap")
    moved = superior(*common_seeds(gap_orig, by_seed(groups[label], "forget_gap")),
                     min_effect=cfg.min_move)
    room = superior(*common_seeds(gap_orig, {s: 0.0 for s in gap_orig}),
                    min_effect=cfg.min_move)
    return moved, room


def _gated(verdict: Verdict, room: Verdict | None) -> Verdict:
    if room is not None and room.verdict != "held":
        return not_acting(verdict, "the original model's forget accuracy is not shown to "
                                   "differ from the retrained model's by more than min_move "
                                   "(nothing to forget at this scale): " + room.describe())
    return verdict


#: tuned method -> the group its pilot record is read from
PILOT_GROUPS = {"ofmu": "ofmu", "ga": "ga", "npo": "npo",
                "graddiff": f"graddiff λ={SMOOTH_REF_LAMBDA:g}"}
PILOT_NAMES = {"ofmu": "OFMU", "ga": "GA", "npo": "NPO", "graddiff": "GradDiff (λ = 1)"}


def tuned_records(task: str, groups: dict[str, list[Result]],
                  cfg: OFMUConfig) -> dict[str, Tuned | None]:
    """The pilot-split step-size pick of every tuned method (None where no trial of it, or no
    pilot record, is stored).  The scores are those every trial of the method stored (the
    pilot split does not depend on the claim seed)."""
    out: dict[str, Tuned | None] = {}
    for m, label in PILOT_GROUPS.items():
        rs = groups.get(label, [])
        rec = rs[0] if rs else None
        if rec is None or "pilot_0" not in rec.metrics:
            out[m] = None
            continue
        grid = [float(v) for v in rec.trial.params.get("lr_grid", cfg.lr_grid)]
        scores = [float(rec.metrics[f"pilot_{i}"]) for i in range(len(grid))]
        out[m] = pilot_tuned(f"{PILOT_NAMES[m]} lr ({task}, pilot seed {cfg.pilot_seed})",
                             grid, scores)
    return out


def _guarded(verdict: Verdict, tuned: dict[str, Tuned | None], *methods: str) -> Verdict:
    """``guard`` with the pilot picks of ``methods`` (grid edge → inconclusive, unequal
    budgets → inconclusive); a method without a pilot record cannot be compared fairly."""
    missing = [m for m in methods if tuned.get(m) is None]
    if missing:
        return downgrade(verdict, "no pilot-split tuning record of "
                         + ", ".join(PILOT_NAMES[m] for m in missing))
    return guard(verdict, *(t for m in methods if (t := tuned[m]) is not None))


def _tuned_ev(tuned: dict[str, Tuned | None], *methods: str) -> str:
    return "tuning: " + "; ".join(t.describe() if (t := tuned.get(m)) is not None
                                  else f"{PILOT_NAMES[m]}: no pilot record" for m in methods)


def _task_claims(task: str, groups: dict[str, list[Result]], cfg: OFMUConfig) -> list[Claim]:
    o = groups["ofmu"]
    tuned = tuned_records(task, groups, cfg)
    gd = [(lam, groups[f"graddiff λ={lam:g}"]) for lam in cfg.lambdas]
    gap_o = _mean(o, "forget_gap")
    moved, room = _moved(groups, cfg)
    tol = cfg.pareto_tol
    claims = []
    moved_ev = (f"(0) OFMU's forget-gap reduction from the original model's: "
                f"{moved.describe()}"
                + ("" if room is None else f"; the original model's gap: {room.describe()}"))
    # (1) Pareto front
    cells: dict[str, Verdict] = {"(0) OFMU moves": moved}
    parts = []
    for key in ("retain_acc", "test_acc"):
        for lam, rs in gd:
            cells[f"{key} vs λ={lam:g}"] = any_of({
                "lower forget gap": superior(by_seed(o, "forget_gap"), by_seed(rs, "forget_gap"),
                                             min_effect=tol, direction="less"),
                f"higher {key}": superior(by_seed(o, key), by_seed(rs, key), min_effect=tol)})
        parts.append(f"{key}: OFMU ({gap_o:.3f}, {_mean(o, key):.4f}); GradDiff "
                     + ", ".join(f"λ={lam:g} ({_mean(rs, 'forget_gap'):.3f}, "
                                 f"{_mean(rs, key):.4f})" for lam, rs in gd))
    orig = groups.get("original", [])
    if orig:
        parts.append(f"original model (no unlearning): ({_mean(orig, 'forget_gap'):.3f}, "
                     f"{_mean(orig, 'retain_acc'):.4f}) / test {_mean(orig, 'test_acc'):.4f}")
    front = {st: [c for c, v in cells.items() if c.startswith(("retain", "test"))
                  and v.verdict == st] for st in ("not held", "inconclusive")}
    claims.append(Claim(
        text=f"[{task}] (1) OFMU lies on or above GradDiff's Pareto front over λ (forget gap "
             f"|UA − UA_retrain| vs retain and vs test accuracy): against every λ OFMU is better"
             f" by more than {tol * 100:g} pp in at least one of the two (paired by seed, Holm),"
             f" and it moves towards the retrained model (forget gap below the original "
             f"model's by > {cfg.min_move * 100:g} pp).",
        evidence="(forget gap, accuracy) means over seeds — " + " | ".join(parts)
        + f"; {moved_ev}; front cells not held: {', '.join(front['not held']) or 'none'}; "
          f"inconclusive: {', '.join(front['inconclusive']) or 'none'}; "
        + _tuned_ev(tuned, "ofmu", "graddiff"),
        verdict=_gated(_guarded(all_of(cells), tuned, "ofmu", "graddiff"), room)))
    # (2) retrain level
    ua = equivalent(by_seed(o, "forget_acc"), by_seed(o, "retrain_forget_acc"),
                    margin=cfg.retrain_tol)
    ta = noninferior(by_seed(o, "test_acc"), by_seed(o, "retrain_test_acc"),
                     margin=cfg.retrain_tol)
    claims.append(Claim(
        text=f"[{task}] (2) OFMU reaches retrain-level forgetting (UA equivalent to the retrained"
             f" model's within ±{cfg.retrain_tol * 100:g} pp) with test accuracy no more than "
             f"{cfg.retrain_tol * 100:g} pp below the retrained model's, and it moves towards "
             "the retrained model.",
        evidence=f"UA {_fmt(o, 'forget_acc')} vs retrain {_fmt(o, 'retrain_forget_acc')} "
                 f"(UA − UA_retrain {ua.describe()}); TA {_fmt(o, 'test_acc')} vs retrain "
                 f"{_fmt(o, 'retrain_test_acc')} (TA − TA_retrain {ta.describe()}); "
                 + moved_ev + "; " + _tuned_ev(tuned, "ofmu"),
        verdict=_gated(_guarded(all_of({"(0) OFMU moves": moved, "UA ≈ UA_retrain": ua,
                                        "TA ≥ TA_retrain − margin": ta}), tuned, "ofmu"),
                       room)))
    # (3) smoothness
    ref = groups[f"graddiff λ={SMOOTH_REF_LAMBDA:g}"]
    tv = by_seed(o, "retain_tv")
    v_ga = superior(tv, by_seed(groups["ga"], "retain_tv"), min_effect=cfg.min_tv,
                    direction="less")
    v_gd = superior(tv, by_seed(ref, "retain_tv"), min_effect=cfg.min_tv, direction="less")
    claims.append(Claim(
        text=f"[{task}] (3) OFMU trains more smoothly: total variation of its retain-accuracy "
             f"curve (sampled every {cfg.inner_steps + 1} updates) is below GA's and below "
             f"GradDiff's (λ = {SMOOTH_REF_LAMBDA:g}) by more than {cfg.min_tv:g} (paired by "
             "seed), and it moves towards the retrained model.",
        evidence=f"TV: OFMU {_fmt(o, 'retain_tv')}, GA {_fmt(groups['ga'], 'retain_tv')}, "
                 f"GradDiff λ=1 {_fmt(ref, 'retain_tv')}; GA − OFMU {v_ga.describe()}; "
                 f"GradDiff − OFMU {v_gd.describe()}; {moved_ev}; "
                 + _tuned_ev(tuned, "ofmu", "ga", "graddiff"),
        verdict=_gated(_guarded(all_of({"(0) OFMU moves": moved, "below GA": v_ga,
                                        f"below GradDiff λ={SMOOTH_REF_LAMBDA:g}": v_gd}),
                                tuned, "ofmu", "ga", "graddiff"), room)))
    # (4) ablation
    b0 = groups["ofmu_beta0"]
    forgets = noninferior(by_seed(b0, "forget_gap"), by_seed(o, "forget_gap"), margin=tol,
                          direction="less")
    retains = superior(by_seed(o, "retain_acc"), by_seed(b0, "retain_acc"), min_effect=tol)
    claims.append(Claim(
        text=f"[{task}] (4) Ablation: removing the decorrelation term (β = 0) forgets at least "
             f"as well (forget gap no more than {tol * 100:g} pp above OFMU's) but retains less "
             f"(retain accuracy below OFMU's by more than {tol * 100:g} pp), paired by seed; "
             "OFMU moves towards the retrained model (else the comparison is with a no-op).",
        evidence=f"forget gap β=0 {_fmt(b0, 'forget_gap')} vs OFMU {_fmt(o, 'forget_gap')} "
                 f"(OFMU − β=0 {forgets.describe()}); RA β=0 {_fmt(b0, 'retain_acc', 4)} vs "
                 f"OFMU {_fmt(o, 'retain_acc', 4)} (OFMU − β=0 {retains.describe()}); "
                 + moved_ev + "; " + _tuned_ev(tuned, "ofmu") + " (β = 0 runs at OFMU's step)",
        verdict=_gated(_guarded(all_of({"(0) OFMU moves": moved,
                                        "β=0 forgets at least as well": forgets,
                                        "β=0 retains less": retains}), tuned, "ofmu"),
                       room)))
    return claims


def summarize(results: list[Result], cfg: OFMUConfig, outdir: Path) -> Summary:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables, claims, per_task = [], [], {}
    for task in cfg.tasks:
        groups = _by_label(results, task)
        if not groups:
            continue
        per_task[task] = groups
        tables.append(Table(
            title=f"{task} forgetting on digits (mean ± 95% CI over seeds; {cfg.steps} updates "
                  "per method at its pilot-tuned step size)",
            columns=["method", *[c for c, _ in COLUMNS], "n"],
            rows=[[label, *[_fmt(rs, k, 4 if k.endswith("acc") else 3) for _, k in COLUMNS],
                   len(rs)] for label, rs in groups.items()]))
        arms = [lb for lb in groups if lb.startswith("ofmu")]
        tables.append(Table(
            title=f"{task}: OFMU readings — second-order term, where the outer step starts, "
                  "ε of Sim's norms, β = 0 (mean ± 95% CI; per-seed UA; terms at θ_0)",
            columns=["arm", "variant", "outer step at", "β", "ε", "UA", "UA per seed",
                     "move (gap_orig − gap)", "RA", "TA", "‖∇L_f(θ0)‖", "‖β∇Sim(θ0)‖",
                     "‖2ρ∇²Φ∇Φ(θ0)‖", "ΔL_f inner", "ΔL_f outer", "max L_f", "final Sim",
                     "seconds"],
            rows=[_arm_row(lb, groups, cfg) for lb in arms]))
        picks = tuned_records(task, groups, cfg)
        tables.append(Table(
            title=f"{task}: step sizes tuned on the pilot split (seed {cfg.pilot_seed}, never a "
                  "claim seed); score = forget gap + test-accuracy drop (lower is better), the "
                  "same grid and rule for every method",
            columns=["method", "grid", "scores", "chosen lr", "on grid edge"],
            rows=[[PILOT_NAMES[m], " ".join(f"{g:g}" for g in t.grid),
                   " ".join(f"{v:.3f}" for v in t.scores), f"{t.best:g}",
                   "yes" if t.on_edge else "no"] if t is not None
                  else [PILOT_NAMES[m], "—", "—", "—", "—"] for m, t in picks.items()]))
        claims += _task_claims(task, groups, cfg)
    figures = [_plot_front(per_task, cfg, outdir / "pareto.png"),
               _plot_curves(per_task, cfg, outdir / "retain_curves.png")]
    return Summary(tables=tables, figures=figures, claims=claims, notes=_notes(cfg))


def _arm_row(label: str, groups: dict[str, list[Result]], cfg: OFMUConfig) -> list:
    rs = groups[label]
    p = rs[0].trial.params
    method = rs[0].trial.method
    kw = ofmu_settings(method, p) if method in OFMU_ARMS else {}
    orig = by_seed(groups.get("original", []), "forget_gap")
    move = [orig[r.trial.seed] - float(r.metrics["forget_gap"]) for r in rs
            if r.trial.seed in orig]
    return [label, kw.get("variant", "—"), {"inner": "θ'_T (chained)",
                                             "anchor": "θ_k"}.get(kw.get("outer_at"), "—"),
            f"{kw.get('beta', math.nan):g}", f"{kw.get('eps', math.nan):g}",
            _fmt(rs, "forget_acc", 4),
            " ".join(f"{float(r.metrics['forget_acc']):.2f}" for r in rs),
            fmt_ci(*mean_ci(move), digits=3) if move else "—",
            _fmt(rs, "retain_acc", 4), _fmt(rs, "test_acc", 4), _fmt(rs, "grad_f_0"),
            _fmt(rs, "beta_grad_sim_0"), _fmt(rs, "penalty_0"), _fmt(rs, "inner_lf_change"),
            _fmt(rs, "outer_lf_change"), _fmt(rs, "max_forget_loss"), _fmt(rs, "final_sim"),
            _fmt(rs, "seconds")]


def _ci_point(rs: list[Result], key: str) -> tuple[float, float]:
    """Mean and 95 % CI half-width over seeds (half-width 0 for a single seed)."""
    v = [x for x in _vals(rs, key) if math.isfinite(x)]
    if not v:
        return math.nan, 0.0
    m, h = mean_ci(v)
    return m, (0.0 if math.isnan(h) else h)


FRONT_MARKERS = (("ofmu", "*"), ("ofmu_beta0", "s"), ("ofmu_first_order", "P"),
                 ("ofmu_anchor", "<"), ("ga", "v"), ("npo", "^"), ("ft", "D"),
                 ("retrain", "X"), ("original", "o"))


def _plot_front(per_task, cfg: OFMUConfig, path: Path) -> Figure:
    # a 2-D scatter (forget gap, test accuracy) with a 95 % CI on both coordinates: no panel
    # of optzoo.report.figures draws one, so this panel uses the axes' own errorbar
    fig, axes = fg.grid(max(len(per_task), 1), panel=(6.0, 4.4))
    for ax, (task, groups) in zip(axes, per_task.items(), strict=False):
        gd = [groups[f"graddiff λ={lam:g}"] for lam in cfg.lambdas]
        pts = [(_ci_point(rs, "forget_gap"), _ci_point(rs, "test_acc")) for rs in gd]
        ax.errorbar([x for (x, _), _ in pts], [y for _, (y, _) in pts],
                    xerr=[hx for (_, hx), _ in pts], yerr=[hy for _, (_, hy) in pts],
                    fmt="o-", color="0.5", ms=5, capsize=3, lw=0.9,
                    label="GradDiff (λ grid, in λ order)")
        for k, (lam, ((x, _), (y, _))) in enumerate(zip(cfg.lambdas, pts, strict=True)):
            ax.annotate(f"λ={lam:g}", (x, y), fontsize=7, xytext=(4, 4 - 9 * (k % 2)),
                        textcoords="offset points")  # alternate: close points stay legible
        for i, (m, mk) in enumerate(FRONT_MARKERS):
            if m in groups:
                (x, hx), (y, hy) = (_ci_point(groups[m], "forget_gap"),
                                    _ci_point(groups[m], "test_acc"))
                ax.errorbar([x], [y], xerr=[hx] if hx else None, yerr=[hy] if hy else None,
                            fmt=mk, color=fg.color(i), ms=10 if m == "ofmu" else 7, capsize=3,
                            lw=0.9, label=m)
        ax.set_xlabel("forget gap |UA − UA_retrain|")
        ax.set_ylabel("test accuracy")
        ax.set_title(task, fontsize=9)
        ax.grid(True, alpha=0.25, lw=0.5)
        ax.legend(fontsize=7)
    return fg.save(fig, path, "Forget gap vs test accuracy (mean ± 95 % CI over seeds on both "
                   "axes): GradDiff swept over λ against OFMU and the other methods (up-left is "
                   "better)")


def _plot_curves(per_task, cfg: OFMUConfig, path: Path) -> Figure:
    fig, axes = fg.grid(max(len(per_task), 1), panel=(6.0, 4.0))
    every = cfg.inner_steps + 1
    for ax, (task, groups) in zip(axes, per_task.items(), strict=False):
        curves = {}
        for label in ("ga", f"graddiff λ={SMOOTH_REF_LAMBDA:g}", "npo", "ofmu", "ofmu_beta0"):
            rs = groups.get(label)
            if rs:
                keys = sorted(k for k in rs[0].metrics if k.startswith("curve_"))
                curves[label] = [[float(r.metrics.get(k, math.nan)) for k in keys] for r in rs]
        n = max((len(c[0]) for c in curves.values() if c), default=0)
        fg.curves_panel(ax, curves, x=np.arange(n) * every, title=task,
                        xlabel="gradient updates", ylabel="retain accuracy")
    return fg.save(fig, path, f"Retain accuracy during unlearning, sampled every {every} "
                   "updates (mean ± 95 % CI over seeds)")


def _notes(cfg: OFMUConfig) -> list[str]:
    return [
        "Scale: digits + MLP 64-128-10 instead of CIFAR/ResNet and TOFU/WMDP LLMs; the "
        "optional templated-facts tiny LM track of the brief is not run (the library's OFMU "
        "accepts causal LMs, tested on a toy (B, T, V) module only).",
        f"Every method: {cfg.steps} full-batch plain gradient updates from the same original "
        f"model, at the step size picked on the pilot split (seed {cfg.pilot_seed}) from "
        f"{list(cfg.lr_grid)} by the lowest forget gap + test drop (GA, NPO, GradDiff at λ = 1, "
        f"OFMU; FT untuned at {cfg.lr:g}; OFMU's T, β, ρ_0, γ come from an earlier offline pilot)"
        f" (OFMU: {cfg.steps // (cfg.inner_steps + 1)} rounds of "
        f"T = {cfg.inner_steps} inner ascent + 1 outer step); GA, GradDiff and OFMU raise "
        "the bounded forget loss mean_i min(CE_i, log 10); NPO (β = "
        f"{cfg.npo_beta:g}) its own loss.  The paper's forget loss and its learning rates "
        "(appendix §7.4.12) were not retrieved.",
        "OFMU readings (module optzoo.unlearning.ofmu): the claims use the EXACT second-order "
        "term ∇²Φ∇Φ (triple backward), the outer step chained at the last inner iterate and "
        f"ε = {cfg.eps:g}; ρ_k = min(ρ_0 γ^k, ρ_max) with ρ_0 = {cfg.rho:g}, γ = "
        f"{cfg.gamma:g}, ρ_max = {cfg.rho_max:g}.  Beside it (table 'OFMU readings'): the "
        "first-order term H_f∇Φ, the outer step started at θ_k (θ_{k+1} = θ_k − η∇F(θ'_T)), "
        f"β = 0, and ε ∈ {list(cfg.eps_sweep)}.  The paper text retrievable for issue 21 "
        "(abstract, introduction, summaries) settles none of these readings.",
        "Why class-wise OFMU forgets erratically and β = 0 never does (issue 21; the terms at "
        "θ_0 and the ΔL_f columns of the table; numbers from the full preset, 5 seeds): (a) "
        "the trained MLP interpolates D_f, so θ_0 is a minimum of L_f — a stationary point of "
        "Φ when β = 0, i.e. the original model already satisfies OFMU's constraint ∇Φ = 0 and "
        "minimises L_r: it (nearly) solves the penalty problem, and ρ‖∇Φ‖² cannot tell this "
        "minimum of L_f from its maximum (the cap region, where ∇L_f = 0 too).  (b) With "
        "β = 0 the inner ascent moves L_f by ≈ η‖∇L_f‖² per step (‖∇L_f(θ_0)‖ ≈ 0.016, 0.004 "
        "on random_noisy) and each outer step 2ρH_f∇L_f pulls it back to the memorised "
        "minimum: over a run the inner steps add +0.109 to L_f and the outer steps take "
        "−0.107 away (class-wise), L_f never exceeds 0.05 (the cap is 2.30), UA stays 1 on "
        "every seed.  GA, never pulled back, escapes the basin class-wise.  (c) With β > 0 the "
        "first inner steps are made of β∇Sim, not of ∇L_f: ‖β∇Sim(θ_0)‖ / ‖∇L_f(θ_0)‖ ≈ 1.6 "
        "at ε = 0.1, ≈ 150 at ε = 0.01, ≈ 1300 at ε = 1e-3 and ≈ 1500 at ε = 1e-8 (the "
        "cosine's gradient ∝ 1/‖g‖; at ε = 0.1 ≫ ‖g‖, Sim ≈ ⟨g_f, g_r⟩/ε², an inner "
        "product).  Forgetting, when it happens, is a side effect of that kick throwing θ "
        "out of the memorised basin into the cap region (a maximum of L_f, also stationary, "
        "where the outer steps only lower L_r); a kick that falls short is undone by the "
        "outer steps.  So UA is bimodal over seeds: ε = 0.1 gives 1.00 / 0.44 / 0.00 / 1.00 / "
        "0.96 (the old UA 0.61 ± 1.3 the same way), ε = 1e-2 four of five seeds at 0, "
        "ε = 1e-3 all five at 0 with RA ≥ 0.99; at ε = 1e-8 the exact penalty's third-order "
        "term is ‖2ρ_0∇²Φ∇Φ(θ_0)‖ ≈ 4e3 (1e4 on random_noisy, ∝ 1/‖g‖²) and the outer steps "
        "throw the model far (UA 1.00 / 1.00 / 0.70 / 0 / 0, RA 0.81 class-wise; RA 0.41 on "
        "random_noisy); the first-order term (≈ 0.5) drops that curvature (UA 1 / 1 / 1 / 0 / "
        "0, RA 0.99).  On random_noisy no arm both moves towards the retrained model and keeps "
        "its test accuracy: the first-order arm gets closest (forget gap 0.357 → 0.11, test "
        "accuracy 0.55 vs the retrained 0.66).",
        "Forget efficacy is measured as |UA − UA_retrain| (the brief: random forgetting is "
        "judged against the retrained model); MIA is the loss-threshold attack (AUC of −loss, "
        "members = D_f); on digits the trained models' test losses are mostly tiny too, so "
        "even the original model's AUC is near 0.5 and the MIA separates methods little.",
        "Reading the verdicts: an OFMU run that leaves the original model unchanged sits on "
        "GradDiff's front (the original model itself is not dominated) and has a flat curve; "
        "claims (1)–(4) therefore also require OFMU to move towards the retrained model: its "
        "forget gap |UA − UA_retrain| below the original model's by more than "
        f"{cfg.min_move * 100:g} pp (cell (0)), so that neither a no-op nor an overshoot past "
        "the retrained model (UA → 0 on random forgetting) can pass them.",
        f"Seeds: {cfg.seeds}; CIs are Student-t 95 % over seeds.  The paper reports no error "
        "bars.  'trial seconds' is the runner's wall time of a trial; the original and "
        "retrained models are trained once per (task, seed) and process and cached, so the "
        "first trial of a (task, seed) in a process also pays for their training.",
    ]


REPRODUCTION = Reproduction(
    slug=SLUG,
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "Asif & Amiri (ICLR 2026) at CPU scale: class-wise (digit 3) and random (10 %) "
        "forgetting on scikit-learn digits with an MLP 64-128-10; OFMU (penalty-based bi-level "
        "unlearning with a gradient-decorrelation term) against gradient ascent, GradDiff over "
        "a λ grid, NPO, fine-tuning on the retain set and retraining from scratch, with the "
        "β = 0 ablation and the exact second-order variant; forget/retain/test accuracy, "
        "loss-threshold MIA AUC, KL to the retrained model and the smoothness of the "
        "retain-accuracy curve.  Trials are CPU-sized (single-threaded) and run on the CPU "
        "whatever --device says."),
)
