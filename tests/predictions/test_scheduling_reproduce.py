"""The predictions-smoothness reproduction: config validation and the smoke preset end to end."""

import json
import math

import pytest

from optzoo.errors import ConfigError
from optzoo.experiment import Result
from optzoo.predictions.reproduce.smoothness import REPRODUCTION, SmoothnessConfig


def test_config_validation_names_field():
    with pytest.raises(ConfigError, match="single_etas"):
        SmoothnessConfig(single_etas=(0.5,))
    with pytest.raises(ConfigError, match="predicate"):
        SmoothnessConfig(predicate="all")
    with pytest.raises(ConfigError, match="n_single"):
        SmoothnessConfig(n_single=40)
    with pytest.raises(ConfigError, match="steps"):
        SmoothnessConfig(steps=0)


def test_smoke_preset_end_to_end(tmp_path):
    cfg = REPRODUCTION.preset("smoke")
    trials = REPRODUCTION.trials(cfg)
    problems = {t.problem for t in trials}
    assert problems == {"single-search", "identical-search", "related-search", "thm41",
                        "thm51", "thm61"}
    results = []
    for t in trials:
        metrics = REPRODUCTION.run_trial(t, "cpu")
        json.dumps(metrics, allow_nan=False)  # flat JSON scalars
        assert all(isinstance(v, (int, float, str, bool)) for v in metrics.values())
        assert metrics == REPRODUCTION.run_trial(t, "cpu")  # deterministic
        results.append(Result(t, metrics, {}))
    summary = REPRODUCTION.summarize(results, cfg, tmp_path)
    assert summary.tables and summary.claims and summary.notes
    for fig in summary.figures:
        assert fig.path.exists() and fig.path.stat().st_size > 0
    texts = " ".join(c.text for c in summary.claims)
    for key in ("Thm 4.2", "Thm 4.1", "Thm 5.1", "Thm 5.4", "Thm 6.1"):
        assert key in texts
    # Lower-bound claims are exact constructions and must hold even at smoke scale.
    for c in summary.claims:
        if c.text.startswith(("Thm 5.1", "Thm 6.1", "Thm 4.1")):
            assert c.status == "held", c
        assert c.status in ("held", "not held", "inconclusive") and c.evidence
        # exact checks of theorems: bound_holds, alone or combined
        leaves = [v for _, v in c.verdict.cells] or [c.verdict]
        assert {v.test for v in leaves} == {"bound_holds"}, c.verdict
    ratios = [r.metrics["worst_ratio"] for r in results if "worst_ratio" in r.metrics]
    assert all(v >= 1 - 1e-9 and math.isfinite(v) for v in ratios)


def test_large_error_thm41_claim(tmp_path):
    """Beyond 1 + √3 the construction must force SPJF and RR to ~2 (the paper's bound)."""
    cfg = SmoothnessConfig(single_etas=(), identical_etas=(), related_etas=(),
                           thm41_etas=(1.41, 3.0), thm41_n=200, thm51_etas=(), thm61_ks=())
    results = [Result(t, REPRODUCTION.run_trial(t, "cpu"), {})
               for t in REPRODUCTION.trials(cfg)]
    claims = {c.text.split(":")[0]: c for c in REPRODUCTION.summarize(results, cfg, tmp_path)
              .claims}
    large = claims["Thm 4.1 (large error)"]
    assert large.status == "held"
    assert "spjf η=3.0" in large.evidence and "rr η=3.0" in large.evidence
    assert "η=3.0" not in claims["Thm 4.1"].evidence  # the η ≤ η* claim keeps to its range


def _search(method: str, worst: float, bound: float, eta: float = 1.41, m: int = 1,
            seed: int = 0) -> Result:
    from optzoo.experiment import Trial

    problem = "single-search" if m == 1 else "identical-search"
    return Result(Trial(method, problem, seed, {"eta": eta, "m": m}),
                  {"worst_ratio": worst, "eta_found": eta, "bound": bound,
                   "excess": worst - bound}, {})


def test_upper_bound_claim_fails_on_one_instance_above_the_bound():
    from optzoo.predictions.reproduce.smoothness import _upper_claim

    ok = [_search("spjf", 1.5, 1.9881, seed=s) for s in (7, 8)]
    assert _upper_claim(ok, "single-search", "spjf", "t", 1e-9).status == "held"
    bad = ok + [_search("spjf", 1.9881 + 1e-6, 1.9881, seed=9)]
    c = _upper_claim(bad, "single-search", "spjf", "t", 1e-9)
    assert c.status == "not held" and c.verdict.effect == 1


def test_lower_bound_claims_need_the_bound_and_an_informative_instance(tmp_path):
    from optzoo.experiment import Trial
    from optzoo.predictions.reproduce.smoothness import _lower_bound_claim

    def run(ratio, informative=True):
        return Result(Trial("spjf", "thm41", 0, {"eta": 1.41, "n": 200}),
                      {"ratio": ratio, "bound": 1.41, "informative": informative}, {})

    assert _lower_bound_claim([run(1.40)], 0.01, "t").status == "held"
    assert _lower_bound_claim([run(1.39)], 0.01, "t").status == "not held"
    assert _lower_bound_claim([run(1.41, informative=False)], 0.01, "t").status == "not held"


def test_simple_not_robust_claim_needs_a_ratio_above_list_scheduling(tmp_path):
    cfg = SmoothnessConfig(single_etas=(), identical_etas=(4.0,), machines=(2,),
                           related_etas=(), thm41_etas=(), thm51_etas=(), thm61_ks=())

    def claim(worst):
        rs = [_search("simple", worst, 16.0, eta=4.0, m=2, seed=s) for s in (0, 1)]
        out = REPRODUCTION.summarize(rs, cfg, tmp_path).claims
        return next(c for c in out if c.text.startswith("SIMPLE alone"))

    assert claim(1.8).status == "held"
    assert claim(1.5).status == "not held"  # exactly 2 − 1/m is no excess


def test_upper_claim_without_power_is_inconclusive():
    """A seeded search that ends below the construction it started from has no power: the
    'no instance above the bound' claim must not pass on it."""
    from optzoo.predictions.reproduce.smoothness import _upper_claim

    def run(worst, cons, seed):
        r = _search("spjf", worst, 1.9881, seed=seed)
        r.metrics["construction_ratio"] = cons
        return r

    strong = [run(1.3487, 1.3487, s) for s in (0, 1, 2)]
    c = _upper_claim(strong, "single-search", "spjf", "t", 1e-9)
    assert c.status == "held" and "construction 1.3487" in c.evidence
    weak = strong + [run(1.167, 1.3487, 3)]
    assert _upper_claim(weak, "single-search", "spjf", "t", 1e-9).status == "inconclusive"
    # a violation still decides 'not held', construction or not
    bad = strong + [run(2.0, 1.3487, 4)]
    assert _upper_claim(bad, "single-search", "spjf", "t", 1e-9).status == "not held"


def test_seeded_search_trial_reaches_the_construction():
    """End to end through the reproduction: at η = 1.41, n = 8 the SPJF search reports at least
    Thm 4.1's best static vertex (closed form), and the unseeded search of before did not."""
    from optzoo.experiment import Trial
    from optzoo.predictions.reproduce.smoothness import run_trial

    e, n_main, p = 1.41, 7, 141.0

    def vertex(k):  # tiny job, k big (ηp), n-k small (p/η): SPJF order vs SPT order
        import numpy as np
        alg = np.cumsum([1.0] + [e * p] * k + [p / e] * (n_main - k)).sum()
        opt = np.cumsum([1.0] + [p / e] * (n_main - k) + [e * p] * k).sum()
        return alg / opt

    target = max(vertex(k) for k in range(n_main + 1))
    params = {"eta": e, "n": n_main + 1, "m": 1, "steps": 40, "restarts": 2,
              "predicate": "informative", "lam": 0.5}
    seeded = run_trial(Trial("spjf", "single-search", 0, {**params, "seeded": True}))
    assert seeded["worst_ratio"] >= target * (1 - 1e-7)
    assert seeded["construction_ratio"] == pytest.approx(target, rel=1e-7)
    assert seeded["found_over_bound"] == pytest.approx(seeded["worst_ratio"] / e ** 2, rel=1e-6)
    unseeded = run_trial(Trial("spjf", "single-search", 0, {**params, "seeded": False}))
    assert unseeded["worst_ratio"] < target and "construction_ratio" not in unseeded
