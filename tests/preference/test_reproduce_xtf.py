"""The xtf reproduction's data and claims: injected noise is labelled where it sits, the clean
answer is right, and a mask no better than random cannot pass."""

from __future__ import annotations

import numpy as np

from optzoo.experiment import Result, Trial
from optzoo.preference.reproduce.xtf import (
    FILLER,
    OFF_DOMAIN,
    PRESETS,
    _answer,
    _claim_accuracy,
    _claim_recall,
    _noisy_answer,
)


def test_clean_answers_end_with_the_sum_and_carry_when_needed():
    for a, b in [(47, 38), (12, 34), (99, 99), (10, 90)]:
        words = _answer(a, b)
        tail = words[len(words) - 1 - words[::-1].index("is") + 1:]
        assert "".join(tail) == str(a + b)
        assert ("carry" in words) == (a % 10 + b % 10 >= 10)


def test_injected_noise_is_labelled_at_its_positions():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        words, kinds = _noisy_answer(47, 38, rng, 0.5)
        assert len(words) == len(kinds)
        clean = [w for w, k in zip(words, kinds, strict=True) if k is None]
        assert clean == _answer(47, 38)  # removing the labelled noise gives the clean answer
        for w, k in zip(words, kinds, strict=True):
            if k == "offdomain":
                assert w in OFF_DOMAIN
            if k == "filler":
                assert w in FILLER
            seen.add(k)
    assert {"boiler", "offdomain", "filler", None} <= seen


def _results(xtf_recall, random_recall, xtf_acc, normal_acc):
    out = []
    for s, (xr, rr, xa, na) in enumerate(zip(xtf_recall, random_recall, xtf_acc, normal_acc,
                                             strict=True)):
        out.append(Result(Trial("all", "addition", s, {}),
                          {"recall_xtf": xr, "recall_random": rr, "mask_ratio": 0.2,
                           "noise_share": 0.1, "accuracy_xtf": xa, "accuracy_normal": na,
                           "accuracy_random": na}))
    return out


def test_a_mask_no_better_than_random_and_a_tie_in_accuracy_do_not_pass():
    cfg = PRESETS["quick"]
    tie = _results([0.3, 0.31, 0.29], [0.3, 0.3, 0.3], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert _claim_recall(tie, cfg).status == "not held"
    assert _claim_accuracy(tie, cfg, "normal").status == "not held"
    good = _results([0.8, 0.82, 0.79], [0.3, 0.31, 0.3], [0.7, 0.72, 0.71], [0.5, 0.52, 0.5])
    assert _claim_recall(good, cfg).status == "held"
    assert _claim_accuracy(good, cfg, "normal").status == "held"
