"""The ti-dpo reproduction: decisive-token data as described, claims that a tie cannot pass."""

from __future__ import annotations

import numpy as np

from optzoo.experiment import Result, Trial
from optzoo.preference.reproduce.ti_dpo import (
    BAD,
    GOOD,
    INDEX,
    METHODS,
    PRESETS,
    _batch,
    _claims,
    _pair,
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
