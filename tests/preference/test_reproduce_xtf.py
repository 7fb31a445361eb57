"""The xtf reproduction's data and claims: injected noise is labelled where it sits, the clean
answer is right, a mask no better than random cannot pass, the ablation ordering is decided by
a trend test (and is inconclusive when every arm ties), the baselines' claims refuse a tie, the
trials' keys carry XTF's settings, and XTF's mask leaves every answer supervised (issue 24)."""

from __future__ import annotations

import numpy as np

from optzoo.experiment import Result, Trial
from optzoo.preference.reproduce.xtf import (
    ABLATIONS,
    BASELINES,
    FILLER,
    OFF_DOMAIN,
    PRESETS,
    SECOND,
    VOCAB,
    _answer,
    _augmented,
    _claim_ablation_trend,
    _claim_accuracy,
    _claim_all_three,
    _claim_recall,
    _count_selection,
    _noisy_answer,
    _prepare,
    trials,
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


def test_the_trials_keys_are_fixed_and_carry_xtfs_own_settings():
    quick = trials(PRESETS["quick"])
    # XTF's settings are part of every key (issue 24 changed the method: the keys of the
    # earlier reading, 74b29f34…, 0afa201e…, 476e7dd6…, must not be resumed)
    assert all({"tr_repr", "otsu_classes", "caps", "cap_among"} <= set(t.params) for t in quick)
    assert {t.params["cap_among"] for t in quick} == {"all"}  # the official cap
    assert not any(t.key("xtf").startswith(("74b29f34", "0afa201e", "476e7dd6")) for t in quick)
    full = trials(PRESETS["full"])
    cells = [("all", "addition"), ("ablations", "addition"), ("baselines", "addition"),
             ("all", SECOND)]
    assert sorted({(t.method, t.problem) for t in full}) == sorted(cells)
    assert all(sum((t.method, t.problem) == c for t in full) == 5 for c in cells)
    # the second noise level differs from the main one only in its rate
    main = {t.seed: t.params for t in full if (t.method, t.problem) == ("all", "addition")}
    for t in full:
        if t.problem == SECOND:
            assert t.params == {**main[t.seed], "noise_rate": PRESETS["full"].second_noise_rate}
    assert not any(t.problem == SECOND for t in quick)
    # the adaptation that ranks among flagged tokens is an option with keys of its own
    import dataclasses

    flagged = trials(dataclasses.replace(PRESETS["quick"], cap_among="flagged"))
    assert all(t.params["cap_among"] == "flagged" for t in flagged)
    assert not {t.key("xtf") for t in flagged} & {t.key("xtf") for t in quick}
    smoke = trials(PRESETS["smoke"])  # every code path
    assert {(t.method, t.problem) for t in smoke} == set(cells)


def test_xtfs_mask_on_the_reproductions_data_leaves_every_answer_supervised():
    """Issue 24: the earlier reading masked every occurrence of "is", "+", "<eos>" … (54 % of
    the label tokens) and every arm with TR answered nothing."""
    params = trials(PRESETS["smoke"])[0].params
    prep = _prepare(params, 0)
    noise, rows = prep["noise"], prep["rows"].numpy()
    words = np.array([VOCAB[prep["seqs"][i][j]] for i, j in prep["flat"]])
    caps = params["caps"]
    for i in np.unique(rows):
        n = int((rows == i).sum())
        for a, c in zip(("ri", "kn", "tr"), caps, strict=True):
            assert noise[a][rows == i].sum() <= int(c * n)
        assert noise["union"][rows == i].sum() <= sum(int(c * n) for c in caps) < n
    # the words every clean answer needs keep supervised occurrences
    for w in ("let", "us", "compute", "+", "=", "so", "the", "result", "is", "<eos>"):
        assert (~noise["union"][words == w]).any(), w


def _arm_results(acc: dict[str, list[float]]):
    """One result per (trial, seed) holding the given per-seed accuracies (XTF in ``all``)."""
    seeds = len(acc["xtf"])
    out = []
    for s in range(seeds):
        out.append(Result(Trial("all", "addition", s, {}),
                          {"accuracy_xtf": acc["xtf"][s], "accuracy_normal": 0.3,
                           "accuracy_random": 0.3}))
        out.append(Result(Trial("ablations", "addition", s, {}),
                          {f"accuracy_{n}": acc[n][s] for n in ABLATIONS}))
        out.append(Result(Trial("baselines", "addition", s, {}),
                          {f"accuracy_{b}": acc[b][s] for b in BASELINES if b in acc}))
    return out


def _ablation(single, pair, three, jitter=0.01):
    rng = np.random.default_rng(1)
    acc = {}
    for n, attrs in ABLATIONS.items():
        level = single if len(attrs) == 1 else pair
        acc[n] = list(level + jitter * rng.standard_normal(5))
    acc["xtf"] = list(three + jitter * rng.standard_normal(5))
    return acc


def test_the_ablation_ordering_is_a_trend_that_a_tie_or_a_reversal_cannot_pass():
    cfg = PRESETS["full"]
    rising = _claim_ablation_trend(_arm_results(_ablation(0.32, 0.36, 0.40)), cfg)
    assert rising.status == "held" and rising.verdict.test == "trend"
    falling = _claim_ablation_trend(_arm_results(_ablation(0.40, 0.36, 0.32)), cfg)
    assert falling.status == "not held"
    noise = _claim_ablation_trend(_arm_results(_ablation(0.35, 0.35, 0.35, jitter=0.05)), cfg)
    assert noise.status != "held"
    flat = _claim_ablation_trend(_arm_results(_ablation(0.0, 0.0, 0.0, jitter=0.0)), cfg)
    assert flat.status == "inconclusive" and flat.verdict.test == "undecided"
    # all three vs every pair: non-inferior within the margin, not held when clearly worse
    assert _claim_all_three(_arm_results(_ablation(0.32, 0.36, 0.36)), cfg).status == "held"
    assert _claim_all_three(_arm_results(_ablation(0.32, 0.36, 0.30)), cfg).status == "not held"
    # a tie at the floor (both at 0 exact match) cannot pass "at least as accurate"
    floor = _claim_all_three(_arm_results(_ablation(0.0, 0.0, 0.0, jitter=0.0)), cfg)
    assert floor.status == "inconclusive"
    assert all(c.test == "undecided" for _, c in floor.verdict.cells)
    # a run without ablation trials states no ablation claim
    only_all = [r for r in _arm_results(_ablation(0.3, 0.3, 0.3)) if r.trial.method == "all"]
    assert not hasattr(_claim_ablation_trend(only_all, cfg), "verdict")


def test_xtf_against_each_baseline_needs_a_gain_beyond_the_margin():
    cfg = PRESETS["full"]
    acc = _ablation(0.3, 0.3, 0.5)
    acc.update({"tc": [0.5] * 5, "rho1": list(acc["xtf"]), "df": [0.3, 0.31, 0.29, 0.3, 0.3],
                "double": [0.6] * 5, "da": [0.45] * 5})
    res = _arm_results(acc)
    assert _claim_accuracy(res, cfg, "rho1").status == "not held"  # a tie
    assert _claim_accuracy(res, cfg, "df").status == "held"
    assert _claim_accuracy(res, cfg, "double").status == "not held"
    assert _claim_accuracy(res, cfg, "tc").status != "held"
    assert _claim_accuracy(res, cfg, "da").status == "held"
    assert "DA" in _claim_accuracy(res, cfg, "da").text


def test_da_adds_one_commuted_paraphrase_per_problem_noisy_at_the_sets_rate_never_a_test_one():
    train = [(47, 38), (12, 34), (99, 99), (10, 90), (21, 56)] * 40
    test = [(34, 12)]  # the paraphrase of (12, 34) would be a held-out problem
    prep = {"train": train, "test": test, "seqs": [[1, 2]] * len(train),
            "labels": [[-100, 2]] * len(train)}
    seqs, labels, n = _augmented(prep, 0.3, np.random.default_rng(0))
    assert n == len(train) - 40 and len(seqs) == len(labels) == len(train) + n
    assert seqs[:len(train)] == prep["seqs"] and labels[:len(train)] == prep["labels"]
    noisy = 0
    for ids, lab in zip(seqs[len(train):], labels[len(train):], strict=True):
        words = [VOCAB[t] for t in ids]
        prompt = words[2:words.index("A:")]  # after <bos> and "Q:"
        a, b = (int("".join(prompt[:prompt.index("+")])),
                int("".join(prompt[prompt.index("+") + 1:])))
        assert (b, a) in set(train) and (a, b) not in set(test)
        answer = words[words.index("A:") + 1:-1]
        tail = answer[len(answer) - 1 - answer[::-1].index("is") + 1:]
        assert "".join(w for w in tail if w.isdigit()) == str(a + b)
        assert lab[:words.index("A:") + 1] == [-100] * (words.index("A:") + 1)
        noisy += answer != _answer(a, b)
    # three noise types at 0.3 each: 1 − 0.7³ ≈ 0.66 of the paraphrases carry some noise
    assert 0.5 < noisy / n < 0.8


def test_rho1_selection_counts_what_it_leaves_out_per_noise_type():
    import torch

    valid = torch.tensor([[False, True, True, True], [False, True, True, False]])
    keep = torch.tensor([[False, True, False, False], [False, False, True, False]])
    kinds = [[None, None, "filler", "boiler"], [None, "filler", None, None]]
    stats: dict[str, float] = {}
    _count_selection(stats, valid, keep, kinds)
    assert stats == {"seen_all": 5, "dropped_all": 3, "seen_noise": 3, "dropped_noise": 3,
                     "seen_filler": 2, "dropped_filler": 2, "seen_boiler": 1,
                     "dropped_boiler": 1}


def test_the_second_noise_level_has_its_own_claims_and_never_mixes_with_the_main_one(tmp_path):
    from optzoo.preference.reproduce.xtf import summarize

    cfg = PRESETS["full"]
    main = _results([0.8, 0.82, 0.79, 0.81, 0.8], [0.3] * 5, [0.7, 0.72, 0.71, 0.7, 0.69],
                    [0.5, 0.52, 0.5, 0.51, 0.5])
    own = {f"recall_{a}_{t}": 0.1 for a in ("ri", "kn", "tr")
           for t in ("boiler", "offdomain", "filler")}
    main = [Result(r.trial, {**r.metrics, **own}) for r in main]
    # at the second rate XTF's mask is no better than random: its claim must say so
    second = [Result(Trial("all", SECOND, r.trial.seed, {}),
                     {**r.metrics, "recall_xtf": 0.3, "accuracy_xtf": 0.5})
              for r in main]
    claims = {c.text: c for c in summarize(main + second, cfg, tmp_path).claims}
    at = "At the second noise rate (0.15 per noise type): "
    assert claims["XTF's mask finds the injected noise: its recall beats random masking's at "
                  "the same mask ratio."].status == "held"
    assert claims[at + "XTF's mask finds the injected noise: its recall beats random "
                  "masking's at the same mask ratio."].status == "not held"
    assert claims[at + "XTF's held-out accuracy beats normal fine-tuning."].status == "not held"
    assert claims["XTF's held-out accuracy beats normal fine-tuning."].status == "held"
