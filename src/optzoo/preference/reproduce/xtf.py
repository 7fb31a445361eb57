"""Reproduction ``xtf``: token-level noise filtering by three explainable scores (Yang et al.,
ICLR 2026, arXiv 2602.14536; brief ``xtf.md``), on a tiny word-level Llama trained in-process.

Two stages per seed, as the brief's small-scale section describes:

* **Base model.** Pretrained on a general corpus: one-digit additions written with the
  boilerplate "let us compute a + b = c so the result is c", and off-domain "story" sentences
  over a disjoint word block — so the base model knows the boilerplate (a high teacher-forced
  probability) and has trained embeddings for every word.
* **Fine-tuning set.** Two-digit additions with step-wise answers ("Q: 4 7 + 3 8 A: let us
  compute 7 + 8 = 1 5 carry 1 4 + 3 + 1 = 8 so the result is 8 5"), whose LABELS carry three
  kinds of injected token noise at a known rate each: (a) known boilerplate padding ("so the
  result is so the result is") — KN's target; (b) off-domain words inserted mid-answer — TR's
  target; (c) inert filler words after the answer — RI's target.  The injected positions are
  known, so each mask's precision and recall are measured (a check the paper could not do).

Methods at the same number of SFT steps, from the same base model: normal fine-tuning, XTF (the
union of the three noise sets), random masking at XTF's mask ratio (trial ``all``); each single
attribute and each pair of attributes (trial ``ablations``); Token Cleaning, Rho-1 / SLM, DF and
normal fine-tuning for twice the steps ("double epochs", the one arm with more steps) (trial
``baselines``; :mod:`optzoo.preference.token_selection`).  Every trial of a seed rebuilds the
same base model, data and scores (they are deterministic given the seed; ``mask_ratio_check``
records XTF's ratio in the other trials, so a mismatch would show), and every arm draws its
batches from one generator seeded ``seed + 1``, so comparisons are paired by seed.  The metric
is greedy exact-match accuracy of the final answer on clean held-out problems.  The three
scores come from the base model once, before fine-tuning (:mod:`optzoo.preference.xtf`).

Baselines (readings fixed before any result was seen):

* **Reference model** (Token Cleaning and Rho-1): the base model fine-tuned, with the normal
  recipe (``sft_steps`` steps, batches from ``seed + 2``), on the CLEAN answers (injected noise
  removed) of the first ``ref_fraction = 0.2`` of the training problems — Token Cleaning's
  warm-up reference (10 k of its 50 k pool) on a subset whose labels are known to be clean.
* **Token Cleaning** (Pang et al. 2025, fixed-model cleaning): keep the global top
  ``keep_ratio = 0.6`` of label tokens by loss(base) − loss(reference), computed once
  (``data_prop = 0.6`` in UCSC-REAL/TokenCleaning's ``fixed_model_cleaning.sh``).
* **Rho-1 / SLM** (Lin et al. 2024): at each step, keep the top ``keep_ratio = 0.6`` of the
  batch's label tokens by excess loss, current model − reference (online; Rho-1's 1 B setting
  selects 60 %); its mask ratio and recall are accumulated over all steps.
* **DF**: drop the ``df_drop = 0.2`` of training samples with the highest base-model
  perplexity over their label tokens; batches are drawn from the kept samples.
* **Double epochs**: normal fine-tuning for ``2 · sft_steps`` steps.
* **DA** (data augmentation; the brief's "e.g. paraphrased templates", the paper rewrites samples
  with an LLM): the set plus one paraphrase per training problem — the question with its operands
  commuted, answered in the set's template with noise injected at the set's rate, from a
  generator seeded ``seed + 3`` (a paraphraser imitating the data reproduces its noise; one that
  cleaned the answers would be a different method, noise removal).  A paraphrase equal to a
  held-out problem is skipped (``da_added`` counts the rest).  Same ``sft_steps``, so each sample
  is seen half as often.  Added after the other baselines had run (issue 24), before any DA
  result was seen; the baseline arms are in the ``baselines`` trial's key.

Readings and deviations (fixed before any result was seen): the score aggregations and
thresholds of :mod:`optzoo.preference.xtf` (since issue 24: TR's centre from the domain words
``DOMAIN_WORDS`` — the digits, "+" and "=", the official maths list within this vocabulary —,
each token's last hidden state fed alone (``tr_repr="hidden"``), 5 Multi-Otsu classes and the
official per-example caps ``caps = (0.05, 0.1, 0.05)`` applied as the official code applies
them, among all of an example's label tokens (``cap_among="all"``); all four are in every trial's
key.  The cap's reading was settled on fidelity, after two had run: an adaptation that ranks
only among the tokens each rule flags (``cap_among="flagged"``, still available) masked one
template word ("us", "<eos>") in every example on full seeds 0 and 3 (XTF 0.03 / 0.025 exact
match), because TR is context-free and the answers share one template; the official rule keeps
TR's second-lowest class from masking anything here (TR then does not act, and the claims say
so); partial quick numbers of the official rule (XTF 0.19 / 0.22 vs normal 0.21 / 0.11, two
seeds) were seen before the choice);
digits are separate words (a word-level vocabulary, so that TR's embedding distance is
informative — the brief's pitfall); the baselines and the attribute ablations run in ``smoke``
and ``full`` only (``quick`` keeps the three arms the brief's quick preset names: it is already
past its time budget on two shared cores); the second noise level of the brief's full setting
(``second_noise_rate = 0.15``, half the main rate) runs only the three arms of trial ``all``,
with its own recall and accuracy claims.

Verdict margins (fixed before results were seen):
* ``min_recall = 0.1``: XTF's recall of injected noise must beat random masking's by ten
  points of recall — the mask must find noise, not only drop tokens.
* ``min_accuracy = 0.02``: two points of exact-match accuracy is the smallest gain that counts.
* ``min_own = 0.1``: an attribute "catches mostly its own noise type" when its recall on its
  own type beats its recall on every other type by ten points.
* ``min_accuracy`` also decides the baselines (XTF superior to each, as the paper's headline
  table says: XTF 45.7 vs DF 41.4, TC 41.0, SLM 40.5 on GSM8K) and is the non-inferiority
  margin of "all three ≥ each pair": losing less than the smallest gain that counts is no loss;
  a pair cell where both arms answer nothing (0 exact match in every seed) is undecided — a tie
  at the floor orders nothing.
* ``min_rho = 0.1``: the ablation ordering (single < pair < all three) is a rising trend of
  accuracy in the number of attributes, Spearman's ρ over (subset, seed) points; a CI above
  0.1 excludes a flat or noise-level association (ties in accuracy give ρ ≈ 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import (
    Claim,
    Figure,
    Preset,
    Reproduction,
    Result,
    Summary,
    Table,
    Trial,
    fmt_ci,
    mean_ci,
)
from optzoo.experiment.core import NotEvaluated, split_claims
from optzoo.experiment.stats import metric_values
from optzoo.experiment.verdicts import (
    all_of,
    by_seed,
    common_seeds,
    noninferior,
    superior,
    trend,
    undecided,
)
from optzoo.preference.problems import pad_right, word_llama
from optzoo.report.figures import category_panel, grid, save

BOILER = ("let", "us", "compute", "so", "the", "result", "is", "carry")
OFF_DOMAIN = ("apple", "river", "blue", "song", "chair", "cloud", "tiger", "lamp", "green",
              "stone")
FILLER = ("um", "uh", "hmm", "well")
SPECIAL = ("<pad>", "<bos>", "<eos>", "Q:", "A:", "+", "=")
VOCAB = (*SPECIAL, *(str(d) for d in range(10)), *BOILER, *OFF_DOMAIN, *FILLER)
INDEX = {w: i for i, w in enumerate(VOCAB)}
#: TR's domain example words: the official code's maths list ("1" … "10", "+", "-", "*", "/",
#: "=", "maths") restricted to this vocabulary
DOMAIN_WORDS = (*(str(d) for d in range(10)), "+", "=")
PAD, BOS, EOS = 0, 1, 2
NOISE_TYPES = ("boiler", "offdomain", "filler")
METHODS = ("normal", "xtf", "random")
#: the attribute subsets of the ablation (metric suffix -> attributes); all three is XTF
ABLATIONS = {"ri": ("ri",), "kn": ("kn",), "tr": ("tr",), "ri_kn": ("ri", "kn"),
             "ri_tr": ("ri", "tr"), "kn_tr": ("kn", "tr")}
BASELINES = ("tc", "rho1", "df", "double", "da")
ARM_NAMES = {"normal": "normal FT", "xtf": "XTF", "random": "random mask", "tc": "Token Cleaning",
             "rho1": "Rho-1 (SLM)", "df": "DF (perplexity)", "double": "double epochs",
             "da": "DA (commuted paraphrases)",
             "ri": "RI only", "kn": "KN only", "tr": "TR only", "ri_kn": "RI+KN",
             "ri_tr": "RI+TR", "kn_tr": "KN+TR"}
EXTRAS = ("baselines", "ablations")
#: the problem name of the trials at the second noise level
SECOND = "addition-second"
#: the fields of the original trial ``all``: its key hashes exactly these
BASE_PARAMS = ("hidden", "layers", "base_steps", "sft_steps", "batch", "lr", "n_train",
               "n_test", "noise_rate")
#: XTF's own settings (issue 24): in every trial's key, so results of the earlier reading
#: (centre over all tokens, 4 classes, no caps) are never mixed with these
XTF_PARAMS = ("tr_repr", "otsu_classes", "caps")
BASELINE_PARAMS = ("keep_ratio", "df_drop", "ref_fraction")


@dataclass(frozen=True)
class XTFConfig(Preset):
    """Sizes of the two stages and the noise rates."""

    seeds: int = 3
    hidden: int = 64
    layers: int = 2
    base_steps: int = 300
    sft_steps: int = 300
    batch: int = 32
    lr: float = 3e-3
    n_train: int = 400
    n_test: int = 100
    noise_rate: float = 0.3
    min_recall: float = 0.1
    min_accuracy: float = 0.02
    min_own: float = 0.1
    min_rho: float = 0.1
    extras: tuple[str, ...] = ()
    keep_ratio: float = 0.6
    df_drop: float = 0.2
    ref_fraction: float = 0.2
    tr_repr: str = "hidden"
    otsu_classes: int = 5
    caps: tuple[float, ...] = (0.05, 0.1, 0.05)
    second_noise_rate: float = 0.0
    cap_among: str = "all"

    def validate(self) -> None:
        super().validate()
        for name in ("hidden", "layers", "base_steps", "sft_steps", "batch", "n_train",
                     "n_test"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")
        if not 0 < self.noise_rate < 1:
            raise ConfigError(f"noise_rate: expected a rate in (0, 1), got {self.noise_rate}")
        bad = set(self.extras) - set(EXTRAS)
        if bad:
            raise ConfigError(f"extras: expected a subset of {EXTRAS}, got {sorted(bad)}")
        for name in ("keep_ratio", "df_drop", "ref_fraction"):
            if not 0 < getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected a share in (0, 1), got "
                                  f"{getattr(self, name)}")
        if self.tr_repr not in ("hidden", "input"):
            raise ConfigError(f"tr_repr: expected 'hidden' or 'input', got {self.tr_repr!r}")
        if self.cap_among not in ("flagged", "all"):
            raise ConfigError(f"cap_among: expected 'flagged' or 'all', got {self.cap_among!r}")
        if self.otsu_classes < 3:
            raise ConfigError(f"otsu_classes: expected an integer >= 3, got {self.otsu_classes}")
        if len(self.caps) != 3 or not all(0 < c < 1 for c in self.caps):
            raise ConfigError(f"caps: expected three shares in (0, 1) (RI, KN, TR), got "
                              f"{self.caps}")
        if not 0 <= self.second_noise_rate < 1 or self.second_noise_rate == self.noise_rate:
            raise ConfigError(f"second_noise_rate: expected 0 (none) or a rate in (0, 1) other "
                              f"than noise_rate, got {self.second_noise_rate}")
        if int(self.ref_fraction * self.n_train) < 1:
            raise ConfigError(f"ref_fraction: {self.ref_fraction} of n_train={self.n_train} "
                              "leaves no reference problem")


PRESETS = {
    "smoke": XTFConfig(seeds=1, hidden=32, layers=1, base_steps=10, sft_steps=10, n_train=48,
                       n_test=8, batch=16, extras=EXTRAS, second_noise_rate=0.15),
    "quick": XTFConfig(),
    "full": XTFConfig(seeds=5, base_steps=600, sft_steps=600, n_train=800, n_test=200,
                      extras=EXTRAS, second_noise_rate=0.15),
}


def trials(cfg: XTFConfig) -> list[Trial]:
    """Per seed: ``all`` (normal, XTF, random), then ``ablations`` and ``baselines`` when the
    preset's ``extras`` name them, then ``all`` at ``second_noise_rate`` (problem
    ``addition-second``) when it is set."""
    d = cfg.to_dict()
    base = {k: d[k] for k in (*BASE_PARAMS, *XTF_PARAMS)}
    base["cap_among"] = cfg.cap_among  # the per-example cap's reading (issue 24)
    # the baseline arms are in the key: a trial run before an arm existed lacks its metric
    extra = {**base, **{k: d[k] for k in BASELINE_PARAMS}, "baseline_arms": list(BASELINES)}
    out = [Trial("all", "addition", s, base) for s in range(cfg.seeds)]
    if "ablations" in cfg.extras:
        out += [Trial("ablations", "addition", s, base) for s in range(cfg.seeds)]
    if "baselines" in cfg.extras:
        out += [Trial("baselines", "addition", s, extra) for s in range(cfg.seeds)]
    if cfg.second_noise_rate:
        second = {**base, "noise_rate": cfg.second_noise_rate}
        out += [Trial("all", SECOND, s, second) for s in range(cfg.seeds)]
    return out


# -- data ----------------------------------------------------------------------------------------

def _digits(n: int) -> list[str]:
    return list(str(n))


def _base_sentence(rng: np.random.Generator) -> list[str]:
    if rng.random() < 0.7:
        a, b = int(rng.integers(0, 10)), int(rng.integers(0, 10))
        return ["let", "us", "compute", str(a), "+", str(b), "=", *_digits(a + b), "so", "the",
                "result", "is", *_digits(a + b)]
    return list(rng.choice(OFF_DOMAIN, size=int(rng.integers(4, 8))))


def _answer(a: int, b: int) -> list[str]:
    lo = a % 10 + b % 10
    carry = lo // 10
    hi = a // 10 + b // 10 + carry
    steps = ["let", "us", "compute", str(a % 10), "+", str(b % 10), "=", *_digits(lo)]
    if carry:
        steps += ["carry", "1", str(a // 10), "+", str(b // 10), "+", "1", "=", *_digits(hi)]
    else:
        steps += [str(a // 10), "+", str(b // 10), "=", *_digits(hi)]
    return steps + ["so", "the", "result", "is", *_digits(a + b)]


def _prompt(a: int, b: int) -> list[str]:
    return ["Q:", *_digits(a), "+", *_digits(b), "A:"]


def _noisy_answer(a: int, b: int, rng: np.random.Generator, rate: float
                  ) -> tuple[list[str], list[str | None]]:
    """The answer with injected noise and, per word, its noise type (None: clean)."""
    words = _answer(a, b)
    kinds: list[str | None] = [None] * len(words)
    if rng.random() < rate:  # (a) known boilerplate padding before the final phrase
        at = len(words) - 4 - len(_digits(a + b))
        pad = ["so", "the", "result", "is"]
        words[at:at] = pad
        kinds[at:at] = ["boiler"] * len(pad)
    if rng.random() < rate:  # (b) off-domain words mid-answer
        at = 3 + int(rng.integers(0, 4))
        pad = list(rng.choice(OFF_DOMAIN, size=2))
        words[at:at] = pad
        kinds[at:at] = ["offdomain"] * len(pad)
    if rng.random() < rate:  # (c) inert filler after the answer
        pad = list(rng.choice(FILLER, size=int(rng.integers(2, 4))))
        words += pad
        kinds += ["filler"] * len(pad)
    return words, kinds


def _encode(words: list[str]) -> list[int]:
    return [INDEX[w] for w in words]


# -- model and training --------------------------------------------------------------------------

def _model(cfg_like: dict[str, Any], seed: int):
    # eager attention: RI needs the attention weights
    return word_llama(len(VOCAB), hidden=int(cfg_like["hidden"]),
                      layers=int(cfg_like["layers"]), max_positions=64, seed=seed, eager=True,
                      pad=PAD, bos=BOS, eos=EOS)


def _train(model, seqs: list[list[int]], labels: list[list[int]], steps: int, batch: int,
           lr: float, rng: np.random.Generator, *, ref=None, keep: float = 0.6,
           kinds: list[list[str | None]] | None = None,
           stats: dict[str, float] | None = None) -> None:
    """AdamW on the causal-LM loss over ``labels`` (−100 ignored).  With a reference model
    ``ref``: Rho-1's selective loss — the mean NLL over the top ``keep`` share of each batch's
    label tokens by excess loss (current − reference); ``stats`` then accumulates, per noise
    type of ``kinds``, how many label tokens were seen and how many were left out."""
    from optzoo.preference.token_selection import rho1_select, shifted_nll, token_losses

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    for _ in range(steps):
        idx = rng.integers(0, len(seqs), size=batch)
        ids = pad_right([seqs[i] for i in idx], PAD)
        lab = pad_right([labels[i] for i in idx], -100)
        att = pad_right([[1] * len(seqs[i]) for i in idx], 0)
        if ref is None:
            loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        else:
            valid = lab != -100
            nll = shifted_nll(model(input_ids=ids, attention_mask=att, use_cache=False).logits,
                              ids, valid)
            keep_mask = rho1_select(nll, token_losses(ref, ids, att, valid), valid, keep=keep)
            loss = nll[keep_mask].sum() / keep_mask.sum().clamp_min(1)
            if stats is not None and kinds is not None:
                _count_selection(stats, valid, keep_mask, [kinds[i] for i in idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    model.eval()


def _count_selection(stats: dict[str, float], valid: torch.Tensor, keep: torch.Tensor,
                     kinds: list[list[str | None]]) -> None:
    dropped = (valid & ~keep).tolist()
    for row, (v_row, d_row) in enumerate(zip(valid.tolist(), dropped, strict=True)):
        for j, (v, d) in enumerate(zip(v_row, d_row, strict=True)):
            if not v:
                continue
            kind = kinds[row][j] if j < len(kinds[row]) else None
            for key in ("all", *(("noise", kind) if kind else ())):
                stats[f"seen_{key}"] = stats.get(f"seen_{key}", 0) + 1
                stats[f"dropped_{key}"] = stats.get(f"dropped_{key}", 0) + int(d)


@torch.no_grad()
def _accuracy(model, problems: list[tuple[int, int]]) -> float:
    prompts = [[BOS, *_encode(_prompt(a, b))] for a, b in problems]
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[PAD] * (width - len(p)) + p for p in prompts])
    att = (ids != PAD).long()
    out = model.generate(input_ids=ids, attention_mask=att, max_new_tokens=40, do_sample=False,
                         pad_token_id=PAD, eos_token_id=EOS)
    correct = 0
    for row, (a, b) in zip(out[:, width:].tolist(), problems, strict=True):
        words = [VOCAB[t] for t in row]
        if "<eos>" in words:
            words = words[:words.index("<eos>")]
        # the final answer: the digits after the last "is"
        tail = words[len(words) - 1 - words[::-1].index("is") + 1:] if "is" in words else []
        digits = [w for w in tail if w.isdigit()]
        correct += "".join(digits) == str(a + b)
    return correct / len(problems)


def _prepare(p: dict[str, Any], seed: int) -> dict[str, Any]:
    """Stages 1–2 of every trial of a seed: the base model, the noisy fine-tuning set, the
    held-out problems, the three scores from the base model, XTF's noise sets and the random
    mask at XTF's ratio (deterministic given the seed)."""
    from optzoo.preference.xtf import (
        context_free_states,
        knowledge_novelty,
        reasoning_importance,
        task_relevance,
        xtf_noise,
    )

    rng = np.random.default_rng(seed)
    torch.set_num_threads(1)
    # stage 1: the base model
    base_seqs = [[BOS, *_encode(_base_sentence(rng)), EOS] for _ in range(2000)]
    model = _model(p, seed)
    _train(model, base_seqs, base_seqs, int(p["base_steps"]), int(p["batch"]), float(p["lr"]),
           rng)
    # stage 2: the noisy fine-tuning set and clean held-out problems
    pairs = [(int(rng.integers(10, 100)), int(rng.integers(10, 100)))
             for _ in range(int(p["n_train"]) + int(p["n_test"]))]
    train, test = pairs[:int(p["n_train"])], pairs[int(p["n_train"]):]
    seqs, labels, kinds_all, label_pos = [], [], [], []
    for a, b in train:
        words, kinds = _noisy_answer(a, b, rng, float(p["noise_rate"]))
        prompt = [BOS, *_encode(_prompt(a, b))]
        ids = prompt + _encode(words) + [EOS]
        seqs.append(ids)
        labels.append([-100] * len(prompt) + ids[len(prompt):])
        kinds_all.append([None] * len(prompt) + kinds + [None])
        label_pos.append(list(range(len(prompt), len(ids))))
    # the three scores, from the base model, once
    ids = pad_right(seqs, PAD)
    att = pad_right([[1] * len(s) for s in seqs], 0)
    lab_mask = torch.zeros_like(ids)
    for i, pos in enumerate(label_pos):
        lab_mask[i, pos] = 1
    ri_t, kn_t = [], []
    for s in range(0, len(seqs), 64):
        sl = slice(s, s + 64)
        ri_t.append(reasoning_importance(model, ids[sl], att[sl], lab_mask[sl]))
        kn_t.append(knowledge_novelty(model, ids[sl], att[sl], lab_mask[sl]))
    ri_all, kn_all = torch.cat(ri_t), torch.cat(kn_t)
    flat = [(i, j) for i, pos in enumerate(label_pos) for j in pos]
    rows, cols = (torch.tensor([x[k] for x in flat]) for k in (0, 1))
    vocab = torch.arange(len(VOCAB))
    vectors = (context_free_states(model, vocab) if p["tr_repr"] == "hidden"
               else model.get_input_embeddings().weight)
    tr = task_relevance(vectors, ids[rows, cols],
                        torch.tensor([INDEX[w] for w in DOMAIN_WORDS]))
    noise = xtf_noise(ri_all[rows, cols].numpy(), kn_all[rows, cols].numpy(), tr.numpy(),
                      groups=rows.numpy(), caps=tuple(p["caps"]),
                      cap_among=str(p.get("cap_among", "flagged")),
                      otsu_classes=int(p["otsu_classes"]))
    truth = np.array([kinds_all[i][j] is not None for i, j in flat])
    kinds = np.array([kinds_all[i][j] or "" for i, j in flat])
    random_mask = np.zeros(len(flat), dtype=bool)
    k = int(round(noise["ratio"] * len(flat)))
    random_mask[rng.choice(len(flat), size=k, replace=False)] = True
    return {"model": model, "state": {k: v.clone() for k, v in model.state_dict().items()},
            "train": train, "test": test, "seqs": seqs, "labels": labels,
            "kinds_all": kinds_all, "flat": flat, "rows": rows, "cols": cols, "ids": ids,
            "att": att, "lab_mask": lab_mask, "noise": noise, "truth": truth, "kinds": kinds,
            "random_mask": random_mask}


def _mask_metrics(out: dict[str, Any], name: str, m: np.ndarray, truth: np.ndarray,
                  kinds: np.ndarray) -> None:
    """Recall and precision of the drop mask ``m`` against the injected noise, and recall per
    noise type."""
    out[f"recall_{name}"] = float((m & truth).sum() / max(1, truth.sum()))
    out[f"precision_{name}"] = float((m & truth).sum() / max(1, m.sum()))
    for t in NOISE_TYPES:
        own = kinds == t
        out[f"recall_{name}_{t}"] = float((m & own).sum() / max(1, own.sum()))


def _masked(labels: list[list[int]], flat: list[tuple[int, int]], drop: np.ndarray
            ) -> list[list[int]]:
    lab = [list(x) for x in labels]
    for (i, j), d in zip(flat, drop, strict=True):
        if d:
            lab[i][j] = -100
    return lab


def _sft(prep: dict[str, Any], p: dict[str, Any], seed: int, labels: list[list[int]], *,
         seqs: list[list[int]] | None = None, steps: int | None = None, **kw) -> float:
    """Fine-tune from the base state with batches from ``seed + 1``; held-out accuracy."""
    model = prep["model"]
    model.load_state_dict(prep["state"])
    _train(model, prep["seqs"] if seqs is None else seqs, labels,
           int(p["sft_steps"]) if steps is None else steps, int(p["batch"]), float(p["lr"]),
           np.random.default_rng(seed + 1), **kw)
    return _accuracy(model, prep["test"])


def _run_all(prep: dict[str, Any], p: dict[str, Any], seed: int) -> dict[str, Any]:
    noise, truth, kinds = prep["noise"], prep["truth"], prep["kinds"]
    out: dict[str, Any] = {"mask_ratio": noise["ratio"], "noise_share": float(truth.mean())}
    masks = {"xtf": noise["union"], "random": prep["random_mask"], "ri": noise["ri"],
             "kn": noise["kn"], "tr": noise["tr"]}
    for name, m in masks.items():
        _mask_metrics(out, name, m, truth, kinds)
    # stage 3: fine-tuning from the same base, the same steps and batches' seed
    for method in METHODS:
        lab = (prep["labels"] if method == "normal"
               else _masked(prep["labels"], prep["flat"], masks[method]))
        out[f"accuracy_{method}"] = _sft(prep, p, seed, lab)
    return out


def _run_ablations(prep: dict[str, Any], p: dict[str, Any], seed: int) -> dict[str, Any]:
    noise, truth, kinds = prep["noise"], prep["truth"], prep["kinds"]
    out: dict[str, Any] = {"mask_ratio_check": noise["ratio"]}
    for name, attrs in ABLATIONS.items():
        m = np.zeros(len(prep["flat"]), dtype=bool)
        for a in attrs:
            m |= noise[a]
        out[f"mask_ratio_{name}"] = float(m.mean())
        if len(attrs) > 1:  # the single attributes' masks are measured in trial ``all``
            _mask_metrics(out, name, m, truth, kinds)
        out[f"accuracy_{name}"] = _sft(prep, p, seed, _masked(prep["labels"], prep["flat"], m))
    return out


def _run_baselines(prep: dict[str, Any], p: dict[str, Any], seed: int) -> dict[str, Any]:
    from optzoo.preference.token_selection import perplexity_filter, token_cleaning, token_losses

    noise, truth, kinds, flat = prep["noise"], prep["truth"], prep["kinds"], prep["flat"]
    rows, cols = prep["rows"], prep["cols"]
    out: dict[str, Any] = {"mask_ratio_check": noise["ratio"]}
    model, ids, att, lab_mask = prep["model"], prep["ids"], prep["att"], prep["lab_mask"]

    def nll(m) -> torch.Tensor:
        return torch.cat([token_losses(m, ids[s:s + 64], att[s:s + 64], lab_mask[s:s + 64])
                          for s in range(0, ids.shape[0], 64)])

    base_nll = nll(model)[rows, cols].double().numpy()
    # the reference model: the base fine-tuned on the clean answers of a small subset
    n_ref = int(float(p["ref_fraction"]) * int(p["n_train"]))
    ref_seqs, ref_labels = [], []
    for a, b in prep["train"][:n_ref]:
        prompt = [BOS, *_encode(_prompt(a, b))]
        seq = prompt + _encode(_answer(a, b)) + [EOS]
        ref_seqs.append(seq)
        ref_labels.append([-100] * len(prompt) + seq[len(prompt):])
    ref = _model(p, seed)
    ref.load_state_dict(prep["state"])
    _train(ref, ref_seqs, ref_labels, int(p["sft_steps"]), int(p["batch"]), float(p["lr"]),
           np.random.default_rng(seed + 2))
    out["accuracy_reference"] = _accuracy(ref, prep["test"])
    for q in ref.parameters():
        q.requires_grad_(False)
    ref_nll = nll(ref)[rows, cols].double().numpy()
    keep_ratio = float(p["keep_ratio"])
    # Token Cleaning: one offline pass, global top-k influence
    tc_drop = ~token_cleaning(base_nll, ref_nll, keep=keep_ratio)
    out["mask_ratio_tc"] = float(tc_drop.mean())
    _mask_metrics(out, "tc", tc_drop, truth, kinds)
    out["accuracy_tc"] = _sft(prep, p, seed, _masked(prep["labels"], flat, tc_drop))
    # DF: drop the highest-perplexity samples under the base model
    per_sample: list[list[float]] = [[] for _ in prep["seqs"]]
    for (i, _), v in zip(flat, base_nll, strict=True):
        per_sample[i].append(float(v))
    kept = perplexity_filter(per_sample, drop=float(p["df_drop"]))
    df_drop = ~kept[np.array([i for i, _ in flat])]
    out["mask_ratio_df"] = float(df_drop.mean())
    _mask_metrics(out, "df", df_drop, truth, kinds)
    keep_idx = np.flatnonzero(kept)
    out["accuracy_df"] = _sft(prep, p, seed, [prep["labels"][i] for i in keep_idx],
                              seqs=[prep["seqs"][i] for i in keep_idx])
    # Rho-1: online per-batch top-k excess loss against the reference
    stats: dict[str, float] = {}
    out["accuracy_rho1"] = _sft(prep, p, seed, prep["labels"], ref=ref, keep=keep_ratio,
                                kinds=prep["kinds_all"], stats=stats)
    out["mask_ratio_rho1"] = stats.get("dropped_all", 0) / max(1, stats.get("seen_all", 0))
    out["recall_rho1"] = stats.get("dropped_noise", 0) / max(1, stats.get("seen_noise", 0))
    out["precision_rho1"] = (stats.get("dropped_noise", 0)
                             / max(1, stats.get("dropped_all", 0)))
    for t in NOISE_TYPES:
        out[f"recall_rho1_{t}"] = stats.get(f"dropped_{t}", 0) / max(1, stats.get(f"seen_{t}", 0))
    # double epochs: normal fine-tuning for twice the steps
    out["accuracy_double"] = _sft(prep, p, seed, prep["labels"], steps=2 * int(p["sft_steps"]))
    # DA: the set doubled by one paraphrase per sample, same steps
    seqs, labels, n_aug = _augmented(prep, float(p["noise_rate"]), np.random.default_rng(seed + 3))
    out["da_added"] = n_aug
    out["accuracy_da"] = _sft(prep, p, seed, labels, seqs=seqs)
    return out


def _augmented(prep: dict[str, Any], rate: float, rng: np.random.Generator
               ) -> tuple[list[list[int]], list[list[int]], int]:
    """The fine-tuning set plus one paraphrase of each training problem: the question with its
    operands commuted ("Q: 3 8 + 4 7" for "Q: 4 7 + 3 8"), answered in the set's own step-wise
    template with noise injected at the set's rate (the augmenter writes like the data it
    augments; it cleans nothing).  A paraphrase that would be a held-out problem is skipped."""
    held_out = set(prep["test"])
    seqs, labels = list(prep["seqs"]), list(prep["labels"])
    n_aug = 0
    for a, b in prep["train"]:
        words, _ = _noisy_answer(b, a, rng, rate)  # drawn first: a skip shifts no later draw
        if (b, a) in held_out:
            continue
        prompt = [BOS, *_encode(_prompt(b, a))]
        ids = prompt + _encode(words) + [EOS]
        seqs.append(ids)
        labels.append([-100] * len(prompt) + ids[len(prompt):])
        n_aug += 1
    return seqs, labels, n_aug


def run_trial(trial: Trial, device: str = "cpu") -> dict[str, Any]:
    p, seed = trial.params, trial.seed
    runners = {"all": _run_all, "ablations": _run_ablations, "baselines": _run_baselines}
    if trial.method not in runners:
        raise ConfigError(f"trial.method: expected one of {sorted(runners)}, got "
                          f"{trial.method!r}")
    return runners[trial.method](_prepare(p, seed), p, seed)


# -- claims --------------------------------------------------------------------------------------

def _claim_recall(results: list[Result], cfg: XTFConfig, at: str = ""
                  ) -> Claim | NotEvaluated:
    text = (f"{at}XTF's mask finds the injected noise: its recall beats random masking's at "
            "the same mask ratio.")
    xtf, rnd = by_seed(results, "recall_xtf"), by_seed(results, "recall_random")
    if not xtf:
        return NotEvaluated(text, "no trial ran")
    return Claim(text, f"recall XTF {np.mean(list(xtf.values())):.3f} vs random "
                       f"{np.mean(list(rnd.values())):.3f} at mask ratio "
                       f"{np.mean(list(by_seed(results, 'mask_ratio').values())):.3f} (noise "
                       f"share {np.mean(list(by_seed(results, 'noise_share').values())):.3f})",
                 superior(xtf, rnd, min_effect=cfg.min_recall))


#: what each baseline is called in a claim
BASELINE_TEXT = {"normal": "normal fine-tuning", "random": "random masking at the same ratio",
                 "tc": "Token Cleaning (top 60 % of tokens by base − reference loss)",
                 "rho1": "Rho-1 / SLM (per-batch top 60 % by excess loss)",
                 "df": "DF (the 20 % highest-perplexity samples dropped)",
                 "double": "normal fine-tuning for twice the steps (double epochs)",
                 "da": "DA (the set doubled by commuted-operand paraphrases, same steps)"}


def _claim_accuracy(results: list[Result], cfg: XTFConfig, baseline: str, at: str = ""
                    ) -> Claim | NotEvaluated:
    text = f"{at}XTF's held-out accuracy beats {BASELINE_TEXT[baseline]}."
    xtf, base = common_seeds(by_seed(results, "accuracy_xtf"),
                             by_seed(results, f"accuracy_{baseline}"))
    if not xtf:
        return NotEvaluated(text, f"the preset runs no {ARM_NAMES[baseline]} arm")
    return Claim(text,
                 f"exact match XTF {np.mean(list(xtf.values())):.3f} vs {baseline} "
                 f"{np.mean(list(base.values())):.3f} over {len(xtf)} seeds",
                 superior(xtf, base, min_effect=cfg.min_accuracy))


def _ablation_arms(results: list[Result]) -> dict[str, dict[int, float]]:
    """``{subset: {seed: accuracy}}`` of the six ablation arms and XTF (all three), on the
    seeds every one of them has; empty when the run has no ablation trial."""
    names = [*ABLATIONS, "xtf"]
    found = [by_seed(results, f"accuracy_{n}") for n in names]
    if not all(found):
        return {}
    return dict(zip(names, common_seeds(*found), strict=True))


def _claim_ablation_trend(results: list[Result], cfg: XTFConfig) -> Claim | NotEvaluated:
    text = ("Held-out accuracy rises with the number of attributes in the noise union: each "
            "single ≤ each pair ≤ all three (the paper's ablation: singles 32.0–34.5, pairs "
            "36.1–36.9, all three 40.1).")
    arms = _ablation_arms(results)
    if not arms or not arms["xtf"]:
        return NotEvaluated(text, "the preset runs no ablation trial")
    size = {n: len(ABLATIONS.get(n, ("ri", "kn", "tr"))) for n in arms}
    xs = [size[n] for n, v in arms.items() for _ in v]
    ys = [x for v in arms.values() for x in v.values()]
    by_size = {k: np.mean([y for x, y in zip(xs, ys, strict=True) if x == k]) for k in (1, 2, 3)}
    evidence = (f"mean exact match by number of attributes: 1 → {by_size[1]:.3f}, 2 → "
                f"{by_size[2]:.3f}, 3 → {by_size[3]:.3f}; per arm " + ", ".join(
                    f"{ARM_NAMES[n]} {np.mean(list(v.values())):.3f}" for n, v in arms.items())
                + f" ({len(arms['xtf'])} seeds)")
    if np.ptp(ys) == 0:
        return Claim(text, evidence, undecided(
            f"every ablation arm has the same accuracy ({ys[0]:.3f}) in every seed: the data "
            "cannot order the subsets", n=len(ys)))
    return Claim(text, evidence, trend(xs, ys, direction="increasing", min_rho=cfg.min_rho))


def _claim_all_three(results: list[Result], cfg: XTFConfig) -> Claim | NotEvaluated:
    text = ("All three attributes together are at least as accurate as every pair (no worse "
            "than the smallest gain that counts).")
    arms = _ablation_arms(results)
    if not arms or not arms["xtf"]:
        return NotEvaluated(text, "the preset runs no ablation trial")
    pairs = [n for n in ABLATIONS if len(ABLATIONS[n]) == 2]
    cells = {}
    for n in pairs:
        if max(*arms["xtf"].values(), *arms[n].values()) == 0:
            # a tie at the floor (no arm answers anything) says nothing about the ordering
            cells[f"all three vs {ARM_NAMES[n]}"] = undecided(
                "both arms at 0 exact match in every seed (floor)", n=len(arms[n]))
        else:
            cells[f"all three vs {ARM_NAMES[n]}"] = noninferior(arms["xtf"], arms[n],
                                                                margin=cfg.min_accuracy)
    return Claim(text, f"exact match all three {np.mean(list(arms['xtf'].values())):.3f} vs "
                       + ", ".join(f"{ARM_NAMES[n]} {np.mean(list(arms[n].values())):.3f}"
                                   for n in pairs), all_of(cells))


def _claim_own(results: list[Result], cfg: XTFConfig) -> Claim:
    own = {"ri": "filler", "kn": "boiler", "tr": "offdomain"}
    cells = {}
    parts = []
    for attr, t in own.items():
        mine = by_seed(results, f"recall_{attr}_{t}")
        for other in NOISE_TYPES:
            if other == t:
                continue
            theirs = by_seed(results, f"recall_{attr}_{other}")
            cells[f"{attr}: {t} over {other}"] = superior(mine, theirs, min_effect=cfg.min_own)
        parts.append(f"{attr.upper()}: " + ", ".join(
            f"{x} {np.mean(list(by_seed(results, f'recall_{attr}_{x}').values())):.2f}"
            for x in NOISE_TYPES))
    return Claim("Each attribute catches mostly its own noise type (RI the inert filler, KN "
                 "the known boilerplate, TR the off-domain words).",
                 "recall by noise type — " + "; ".join(parts), all_of(cells))


def _mean_ci(results: list[Result], key: str) -> tuple[float, float]:
    vals = [float(r.metrics[key]) for r in results if key in r.metrics]
    return mean_ci(vals) if vals else (math.nan, math.nan)


def _has(results: list[Result], key: str) -> bool:
    return any(key in r.metrics for r in results)


#: the rows of the accuracy table and the figure, in order
ALL_ARMS = (*METHODS, *BASELINES, *ABLATIONS)


def _ratio_key(arm: str) -> str | None:
    return {"normal": None, "double": None, "da": None, "xtf": "mask_ratio",
            "random": "mask_ratio"}.get(arm, f"mask_ratio_{arm}")


def summarize(results: list[Result], cfg: XTFConfig, outdir: Path) -> Summary:
    second = [r for r in results if r.trial.problem == SECOND]
    results = [r for r in results if r.trial.problem != SECOND]
    acc_rows = []
    for m in ALL_ARMS:
        if not _has(results, f"accuracy_{m}"):
            continue
        rk = _ratio_key(m)
        acc_rows.append([ARM_NAMES[m], fmt_ci(*_mean_ci(results, f"accuracy_{m}")),
                         fmt_ci(*_mean_ci(results, rk)) if rk and _has(results, rk) else "0"])
    if _has(results, "accuracy_reference"):
        acc_rows.append(["reference (TC/Rho-1; clean subset)",
                         fmt_ci(*_mean_ci(results, "accuracy_reference")), "—"])
    mask_rows = [[ARM_NAMES[m], fmt_ci(*_mean_ci(results, f"recall_{m}")),
                  fmt_ci(*_mean_ci(results, f"precision_{m}")),
                  *(fmt_ci(*_mean_ci(results, f"recall_{m}_{t}")) for t in NOISE_TYPES)]
                 for m in ("xtf", "random", "ri", "kn", "tr", "ri_kn", "ri_tr", "kn_tr", "tc",
                           "rho1", "df")
                 if _has(results, f"recall_{m}")]
    tables = [Table("Held-out exact match and share of label tokens masked (mean ± 95% CI "
                    "over seeds)", ["method", "accuracy", "mask ratio"], acc_rows),
              Table(f"Masks against the injected noise (XTF's mask ratio "
                    f"{fmt_ci(*_mean_ci(results, 'mask_ratio'))}, noise share "
                    f"{fmt_ci(*_mean_ci(results, 'noise_share'))}; DF: the tokens of dropped "
                    f"samples; Rho-1: accumulated over its training steps)",
                    ["mask", "recall", "precision", *(f"recall {t}" for t in NOISE_TYPES)],
                    mask_rows)]
    if second:
        tables.append(Table(
            f"At the second noise rate ({cfg.second_noise_rate:g}): exact match, XTF's mask "
            "ratio and recall (mean ± 95% CI over seeds)", ["method", "accuracy", "recall"],
            [[ARM_NAMES[m], fmt_ci(*_mean_ci(second, f"accuracy_{m}")),
              fmt_ci(*_mean_ci(second, f"recall_{m}")) if m != "normal" else "—"]
             for m in METHODS] + [["XTF's mask ratio", fmt_ci(*_mean_ci(second, "mask_ratio")),
                                   "—"]]))
    figures = [_figure(results, outdir)] if results else []
    items = [_claim_recall(results, cfg)]
    if results:
        items += [_claim_accuracy(results, cfg, "normal"), _claim_accuracy(results, cfg,
                                                                          "random"),
                  *(_claim_accuracy(results, cfg, b) for b in BASELINES),
                  _claim_ablation_trend(results, cfg), _claim_all_three(results, cfg),
                  _claim_own(results, cfg)]
    if second:
        at = f"At the second noise rate ({cfg.second_noise_rate:g} per noise type): "
        items += [_claim_recall(second, cfg, at), _claim_accuracy(second, cfg, "normal", at),
                  _claim_accuracy(second, cfg, "random", at)]
    claims, notes = split_claims(items)
    notes += ["Scores from the base model before fine-tuning; the union of the three noise "
              "sets is masked (labels −100).",
              "Issue 24: every arm with task relevance used to collapse to 0 exact match. The "
              "earlier reading (domain centre = mean input embedding over every token of the "
              "fine-tuning set, one dataset-wide Multi-Otsu class, no per-example cap) made TR "
              "a per-word-type decision: on quick's data (seed 0) it flagged 47.6 % of the "
              "label tokens — every 'is', 'result', '+', 'carry' and '<eos>' — and the union "
              "54 %, so no model learnt to state or end an answer. Now (the authors' code: "
              "centre of the domain words, last hidden state of each token alone, per-example "
              "caps of 5 / 10 / 5 % for RI / KN / TR) TR flags 3.8 % and the union 11.8 % on "
              "the same data. In this tiny model the off-domain words lie as close to the "
              "digits' centre as the digits do (cosine ≈ 0.7 on seed 0), so TR's class holds "
              "structural words ('result') rather than the off-domain noise. Because TR is "
              "context-free and every answer follows one template, its per-example cap picks "
              "the same word in every example: on quick's seed 1 that word is 'us', and a "
              "diagnostic generation shows the XTF-trained model writing 'let 1 1 7 + …' "
              "instead of 'let us compute …' (0 exact match on that seed).",
              "Baselines (same SFT steps, except double epochs): Token Cleaning and Rho-1 use "
              "a reference model fine-tuned on the clean answers of 20 % of the training "
              "problems (an advantage XTF does not have: it trains no reference model); DF "
              "drops 20 % of the samples by base-model perplexity; DA adds one "
              "commuted-operand paraphrase of every training problem, noise injected at the "
              "set's rate (a paraphraser that writes like the data cleans nothing)."]
    ratio = {r.trial.seed: r.metrics["mask_ratio"] for r in results
             if r.trial.method == "all" and "mask_ratio" in r.metrics}
    off = sorted({r.trial.seed for r in results if "mask_ratio_check" in r.metrics
                  and r.trial.seed in ratio and r.metrics["mask_ratio_check"] != ratio[
                      r.trial.seed]})
    if off:
        notes.append(f"XTF's mask differs between the trials of seed(s) {off}: the base "
                     "model was not rebuilt identically, so those seeds are not paired.")
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


#: Full names of the noise types and attributes on the figure.
NOISE_NAMES = {"boiler": "known boilerplate", "offdomain": "off-domain words",
               "filler": "inert filler"}
ATTRIBUTE_NAMES = {"ri": "RI (reasoning importance)", "kn": "KN (knowledge novelty)",
                   "tr": "TR (task relevance)"}


def _figure(results: list[Result], outdir: Path) -> Figure:
    fig, (ax1, ax2, ax3) = grid(3, panel=(4.8, 3.8))
    arms = [m for m in (*METHODS, *BASELINES) if _has(results, f"accuracy_{m}")]
    category_panel(ax1, {ARM_NAMES[m]: metric_values(results, f"accuracy_{m}") for m in arms},
                   colors={ARM_NAMES["normal"]: "0.6", ARM_NAMES["xtf"]: "C0",
                           ARM_NAMES["random"]: "C1"},
                   ylabel="held-out exact match", title="XTF against the baselines",
                   ylog=False)
    abl = [m for m in (*ABLATIONS, "xtf") if _has(results, f"accuracy_{m}")]
    category_panel(ax2, {("RI+KN+TR (XTF)" if m == "xtf" else ARM_NAMES[m]):
                         metric_values(results, f"accuracy_{m}") for m in abl},
                   ylabel="held-out exact match",
                   title="attribute ablation (singles, pairs, all three)", ylog=False)
    category_panel(ax3, {NOISE_NAMES[t]: {ATTRIBUTE_NAMES[a]: metric_values(
        results, f"recall_{a}_{t}") for a in ATTRIBUTE_NAMES} for t in NOISE_TYPES},
                   xlabel="attribute's mask", ylabel="recall of injected noise",
                   title="each attribute against each noise type", ylog=False)
    return save(fig, outdir / "xtf.png",
                "Left: held-out exact match of XTF, normal fine-tuning, random masking and the "
                "baselines (Token Cleaning, Rho-1, DF, double epochs, DA) where the preset runs "
                "them. Middle: the attribute ablation (each single attribute, each pair, all "
                "three). Right: recall of each attribute's mask on each injected noise type "
                "(series). Mean ± 95 % CI over seeds.")


REPRODUCTION = Reproduction(
    slug="xtf",
    presets=PRESETS,
    trials=trials,
    run_trial=run_trial,
    summarize=summarize,
    description=(
        "A tiny word-level Llama pretrained on boilerplate arithmetic and off-domain text, "
        "fine-tuned on two-digit additions with step-wise answers whose labels carry injected "
        "boilerplate, off-domain and filler tokens: normal fine-tuning vs XTF's masks vs "
        "random masking at XTF's ratio, Token Cleaning, Rho-1, DF, double epochs, DA and the "
        "attribute ablation; held-out exact match and the masks' recall of the known noise."),
)
