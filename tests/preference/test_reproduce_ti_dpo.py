"""The ti-dpo reproduction: decisive-token data as described, claims that a tie cannot pass."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Result, Trial
from optzoo.experiment.core import NotEvaluated
from optzoo.preference.reproduce.ti_dpo import (
    BAD,
    CONTROL_METHODS,
    GOOD,
    INDEX,
    METHODS,
    PRESETS,
    _batch,
    _claim_control,
    _claims,
    _pair,
    trials,
)


def test_pairs_carry_one_decisive_token_in_the_middle_sixty_percent():
    rng = np.random.default_rng(0)
    good, bad = {INDEX[w] for w in GOOD}, {INDEX[w] for w in BAD}
    for _ in range(200):
        p = _pair(rng)
        for key, pos_key, own, other in (("chosen", "pos_chosen", good, bad),
                                         ("rejected", "pos_rejected", bad, good)):
            resp = p[key]
            assert 12 <= len(resp) <= 16
            hits = [i for i, t in enumerate(resp) if t in own]
            assert hits == [p[pos_key]] and not any(t in other for t in resp)
            assert 0.2 * len(resp) - 1 <= p[pos_key] < 0.8 * len(resp)
    b = _batch([_pair(rng) for _ in range(3)])
    assert b["input_ids"].shape[0] == 6 and bool((b["completion_mask"][:, :3] == 0).all())


def _results(tidpo, dpo, above, ablation):
    out = []
    for s, (t, d, a) in enumerate(zip(tidpo, dpo, above, strict=True)):
        m = {"reduction_gap": 0.0, "decisive_above_median": a}
        for meth in METHODS:
            v = t if meth == "tidpo" else (d if meth in ("dpo", "tdpo2") else ablation[s])
            m[f"pair_accuracy_{meth}"] = v
            m[f"good_rate_{meth}"] = v
        out.append(Result(Trial("all", "decisive-token", s, {"eta": 0.2}), m))
    return out


def test_a_tie_with_dpo_and_chance_level_attribution_do_not_pass():
    cfg = PRESETS["quick"]
    claims = _claims(_results([0.7, 0.71, 0.7], [0.7, 0.71, 0.7], [0.5, 0.52, 0.49],
                              [0.7, 0.71, 0.7]), cfg)
    status = {c.text.split(",")[0] if "beats DPO" in c.text else c.text[:20]: c.status
              for c in claims if hasattr(c, "status")}
    assert list(status.values())[:3] == ["not held", "not held", "not held"]
    good = _claims(_results([0.9, 0.92, 0.91], [0.7, 0.71, 0.7], [0.8, 0.85, 0.82],
                            [0.8, 0.8, 0.81]), cfg)
    assert [c.status for c in good[:4]] == ["held", "held", "held", "held"]


# -- the first/last-position control ---------------------------------------------------------------

def _head_pair(rng: np.random.Generator) -> dict:
    """HEAD's (pre-control) pair generator, written out independently: the middle-position data
    must draw the same words from the same RNG stream as before."""
    from optzoo.preference.reproduce.ti_dpo import BOS, FILLERS, TOPICS

    def response(decisive):
        n = int(rng.integers(12, 17))
        words = list(rng.choice(FILLERS, size=n))
        pos = int(rng.integers(int(0.2 * n), int(np.ceil(0.8 * n))))
        words[pos] = decisive
        return words, pos

    topic = str(rng.choice(TOPICS))
    good, pg = response(str(rng.choice(GOOD)))
    bad, pb = response(str(rng.choice(BAD)))
    return {"prompt": [BOS, INDEX["Q"], INDEX[topic]], "chosen": [INDEX[w] for w in good],
            "rejected": [INDEX[w] for w in bad], "pos_chosen": pg, "pos_rejected": pb}


def test_middle_pairs_are_the_pre_control_stream():
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    assert [_pair(a) for _ in range(50)] == [_head_pair(b) for _ in range(50)]


def test_edge_pairs_put_the_decisive_token_first_or_last():
    rng = np.random.default_rng(1)
    good, bad = {INDEX[w] for w in GOOD}, {INDEX[w] for w in BAD}
    ends = {"first": 0, "last": 0}
    for _ in range(300):
        p = _pair(rng, "edge")
        for key, pos_key, own, other in (("chosen", "pos_chosen", good, bad),
                                         ("rejected", "pos_rejected", bad, good)):
            resp, pos = p[key], p[pos_key]
            assert 12 <= len(resp) <= 16
            assert [i for i, t in enumerate(resp) if t in own] == [pos]
            assert not any(t in other for t in resp)
            assert pos in (0, len(resp) - 1)
            ends["first" if pos == 0 else "last"] += 1
    assert min(ends.values()) > 200  # both ends, about 50/50 of 600 responses
    with pytest.raises(ValueError, match="position"):
        _pair(rng, "start")


def _tiny_batch():
    from optzoo.preference.reproduce.ti_dpo import _model

    model = _model({"hidden": 16, "layers": 1}, seed=0)
    model.eval()
    pairs = [_pair(np.random.default_rng(s)) for s in range(3)]
    return model, _batch(pairs)


def test_flat_prior_is_constant_and_the_gaussian_is_not():
    from optzoo.preference import align_completions, token_importance
    from optzoo.preference.reproduce.ti_dpo import _weights

    model, b = _tiny_batch()
    _, mask = align_completions(b["completion_mask"].double(), b["completion_mask"])
    keep = mask.bool()
    t = keep.sum(1, keepdim=True).double()
    # λ = 0: the weight is the prior alone, rescaled to mean 1 over the response
    flat = _weights(model, b, 0.0, "flat").double()
    assert torch.allclose(flat, keep.double(), atol=1e-12)
    gauss = _weights(model, b, 0.0, "gauss").double()
    assert float((gauss.max(1).values - torch.where(keep, gauss, torch.inf).min(1).values)
                 .min()) > 0.5
    # λ = 0.7: w = T·(λ·I/ΣI + (1 − λ)/T), the closed form of a flat prior (sums to T already)
    imp, _ = align_completions(token_importance(model, b["input_ids"], b["attention_mask"]),
                               b["completion_mask"])
    imp = torch.where(keep, imp.double(), torch.zeros_like(imp.double()))
    expected = torch.where(keep, t * 0.7 * imp / imp.sum(1, keepdim=True) + 0.3,
                           torch.zeros_like(imp))
    got = _weights(model, b, 0.7, "flat").double()
    assert torch.allclose(got, expected, rtol=1e-6, atol=1e-9)
    assert not torch.allclose(got, _weights(model, b, 0.7, "gauss").double(), atol=1e-3)
    with pytest.raises(ValueError, match="prior"):
        _weights(model, b, 0.7, "uniform")


#: HEAD's TIDPOConfig fields that are trial parameters (everything but seeds, noise levels and
#: margins), copied from ``git show HEAD:src/optzoo/preference/reproduce/ti_dpo.py``
_HEAD_QUICK = {"hidden": 64, "layers": 2, "sft_steps": 200, "steps": 150, "batch": 16, "lr": 1e-3,
               "beta": 0.1, "alpha": 0.5, "gamma": 0.1, "lam": 0.7, "n_eval": 200,
               "n_samples": 64}


@pytest.mark.parametrize("preset, seeds, etas, over", [
    ("quick", 3, (0.2,), {}),
    ("full", 5, (0.0, 0.2, 0.4), {"steps": 600, "sft_steps": 400})])
def test_middle_trial_keys_are_those_before_the_control(preset, seeds, etas, over):
    old = [Trial("all", "decisive-token", s, {**_HEAD_QUICK, **over, "eta": eta}).key("ti-dpo")
           for eta in etas for s in range(seeds)]
    # quick runs the middle trials only (the control doubles its cost); check the control's
    # expansion there too
    new = trials(replace(PRESETS[preset], positions=("middle", "edge")))
    middle = [t.key("ti-dpo") for t in new if "position" not in t.params]
    edge = [t for t in new if "position" in t.params]
    assert middle == old
    assert len(edge) == seeds and {t.params["position"] for t in edge} == {"edge"}
    assert {float(t.params["eta"]) for t in edge} == {0.2}
    assert not {t.key("ti-dpo") for t in edge} & set(old)
    only_middle = trials(replace(PRESETS[preset], positions=("middle",)))
    assert [t.key("ti-dpo") for t in only_middle] == old


def test_positions_are_validated_by_name():
    with pytest.raises(ConfigError, match="positions"):
        replace(PRESETS["quick"], positions=("middle", "corner"))
    with pytest.raises(ConfigError, match="positions"):
        replace(PRESETS["quick"], positions=())


def _control(acc_gauss, acc_flat, w_gauss, w_flat):
    out = []
    for s, (ag, af, wg, wf) in enumerate(zip(acc_gauss, acc_flat, w_gauss, w_flat,
                                             strict=True)):
        m = {"pair_accuracy_tidpo": ag, "pair_accuracy_tidpo_flat_prior": af,
             "pair_accuracy_tidpo_no_prior": af, "decisive_weight_gauss": wg,
             "decisive_weight_flat": wf, "decisive_weight_none": wf}
        m.update({f"good_rate_{k}": 0.5 for k in CONTROL_METHODS})
        out.append(Result(Trial("all", "decisive-token", s, {"eta": 0.2, "position": "edge"}),
                          m))
    return out


def test_quick_runs_no_control_and_full_does():
    assert PRESETS["quick"].positions == ("middle",)
    assert "edge" in PRESETS["full"].positions


def test_the_control_claim_needs_harm_and_a_prior_that_acts():
    cfg = replace(PRESETS["quick"], positions=("middle", "edge"))
    hurt = _claim_control(_control([0.70, 0.72, 0.69], [0.85, 0.86, 0.84], [0.5] * 3,
                                   [0.8] * 3), cfg)
    assert hurt.status == "held" and hurt.verdict.test == "superior"
    tie = _claim_control(_control([0.80, 0.82, 0.81], [0.80, 0.82, 0.81], [0.5] * 3,
                                  [0.8] * 3), cfg)
    assert tie.status == "not held"
    # the same harm with a prior that barely moves the decisive token's weight: no evidence
    idle = _claim_control(_control([0.70, 0.72, 0.69], [0.85, 0.86, 0.84], [0.78, 0.5, 0.5],
                                   [0.8] * 3), cfg)
    assert idle.status == "inconclusive" and "does not act" in idle.verdict.reason
    none = _claim_control([], cfg)
    assert isinstance(none, NotEvaluated)
    off = _claim_control(_control([0.7] * 3, [0.85] * 3, [0.5] * 3, [0.8] * 3),
                         replace(cfg, positions=("middle",)))
    assert isinstance(off, NotEvaluated)


@pytest.mark.parametrize("method", ["dpo", "tidpo"])
def test_cached_reference_logits_give_the_same_loss(method):
    import optzoo.preference.reproduce.ti_dpo as mod

    p = {**PRESETS["smoke"].to_dict(), "eta": 0.0}
    model, ref = mod._model(p, 0), mod._model(p, 1)
    pairs = [mod._pair(np.random.default_rng(3)) for _ in range(4)]
    calls = []
    real = mod._ref_logits

    def counted(r, b):
        calls.append(1)
        return real(r, b)

    cache: dict[int, torch.Tensor] = {}
    plain = mod._loss(method, model, ref, pairs, p, 5)
    mod._ref_logits = counted
    try:
        first = mod._loss(method, model, ref, pairs, p, 5, cache)
        n_first = len(calls)
        second = mod._loss(method, model, ref, pairs, p, 5, cache)
    finally:
        mod._ref_logits = real
    # the frozen reference's logits on the batch are computed once and reused bit for bit
    assert list(cache) == [5] and len(calls) - n_first == n_first - 1  # one forward fewer
    assert torch.equal(plain.detach(), first.detach()) and torch.equal(first.detach(),
                                                                       second.detach())
