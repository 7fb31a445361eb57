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

Methods at the same number of SFT steps, from the same base model (one trial per seed runs all
of them, so comparisons are paired): normal fine-tuning, XTF (the union of the three noise
sets), random masking at XTF's mask ratio.  The metric is greedy exact-match accuracy of the
final answer on clean held-out problems.  The three scores come from the base model once,
before fine-tuning (:mod:`optzoo.preference.xtf`).

Readings and deviations (fixed before any result was seen): the brief's inferred score
aggregations (:mod:`optzoo.preference.xtf`); digits are separate words (a word-level vocabulary,
so that TR's embedding distance is informative — the brief's pitfall); the baselines Token
Cleaning, Rho-1, DF and double epochs, and the attribute ablations, are not run (only normal
fine-tuning and random masking: the controls the brief's quick preset names).

Verdict margins (fixed before results were seen):
* ``min_recall = 0.1``: XTF's recall of injected noise must beat random masking's by ten
  points of recall — the mask must find noise, not only drop tokens.
* ``min_accuracy = 0.02``: two points of exact-match accuracy is the smallest gain that counts.
* ``min_own = 0.1``: an attribute "catches mostly its own noise type" when its recall on its
  own type beats its recall on every other type by ten points.
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
from optzoo.experiment.verdicts import all_of, by_seed, superior
from optzoo.preference.problems import pad_right, word_llama
from optzoo.report.figures import category_panel, grid, save

BOILER = ("let", "us", "compute", "so", "the", "result", "is", "carry")
OFF_DOMAIN = ("apple", "river", "blue", "song", "chair", "cloud", "tiger", "lamp", "green",
              "stone")
FILLER = ("um", "uh", "hmm", "well")
SPECIAL = ("<pad>", "<bos>", "<eos>", "Q:", "A:", "+", "=")
VOCAB = (*SPECIAL, *(str(d) for d in range(10)), *BOILER, *OFF_DOMAIN, *FILLER)
INDEX = {w: i for i, w in enumerate(VOCAB)}
PAD, BOS, EOS = 0, 1, 2
NOISE_TYPES = ("boiler", "offdomain", "filler")
METHODS = ("normal", "xtf", "random")


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

    def validate(self) -> None:
        super().validate()
        for name in ("hidden", "layers", "base_steps", "sft_steps", "batch", "n_train",
                     "n_test"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: expected an integer >= 1, got {getattr(self, name)}")
        if not 0 < self.noise_rate < 1:
            raise ConfigError(f"noise_rate: expected a rate in (0, 1), got {self.noise_rate}")


PRESETS = {
    "smoke": XTFConfig(seeds=1, hidden=32, layers=1, base_steps=10, sft_steps=10, n_train=48,
                       n_test=8, batch=16),
    "quick": XTFConfig(),
    "full": XTFConfig(seeds=5, base_steps=600, sft_steps=600, n_train=800, n_test=200),
}


def trials(cfg: XTFConfig) -> list[Trial]:
    params = {k: v for k, v in cfg.to_dict().items()
              if k not in {"seeds", "min_recall", "min_accuracy", "min_own"}}
    return [Trial("all", "addition", s, params) for s in range(cfg.seeds)]


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
           lr: float, rng: np.random.Generator) -> None:
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    for _ in range(steps):
        idx = rng.integers(0, len(seqs), size=batch)
        ids = pad_right([seqs[i] for i in idx], PAD)
        lab = pad_right([labels[i] for i in idx], -100)
        att = pad_right([[1] * len(seqs[i]) for i in idx], 0)
        loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    model.eval()


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


def run_trial(trial: Trial, device: str = "cpu") -> dict[str, Any]:
    from optzoo.preference.xtf import (
        knowledge_novelty,
        reasoning_importance,
        task_relevance,
        xtf_noise,
    )

    p, seed = trial.params, trial.seed
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
    tr = task_relevance(model.get_input_embeddings().weight, ids[rows, cols],
                        ids[att.bool()])
    noise = xtf_noise(ri_all[rows, cols].numpy(), kn_all[rows, cols].numpy(), tr.numpy())
    truth = np.array([kinds_all[i][j] is not None for i, j in flat])
    kinds = np.array([kinds_all[i][j] or "" for i, j in flat])
    out: dict[str, Any] = {"mask_ratio": noise["ratio"], "noise_share": float(truth.mean())}
    random_mask = np.zeros(len(flat), dtype=bool)
    k = int(round(noise["ratio"] * len(flat)))
    random_mask[rng.choice(len(flat), size=k, replace=False)] = True
    masks = {"xtf": noise["union"], "random": random_mask, "ri": noise["ri"],
             "kn": noise["kn"], "tr": noise["tr"]}
    for name, m in masks.items():
        out[f"recall_{name}"] = float((m & truth).sum() / max(1, truth.sum()))
        out[f"precision_{name}"] = float((m & truth).sum() / max(1, m.sum()))
        for t in NOISE_TYPES:
            own = kinds == t
            out[f"recall_{name}_{t}"] = float((m & own).sum() / max(1, own.sum()))
    # stage 3: fine-tuning from the same base, the same steps and batches' seed
    state = {k: v.clone() for k, v in model.state_dict().items()}
    for method in METHODS:
        model.load_state_dict(state)
        lab = [list(x) for x in labels]
        if method != "normal":
            for (i, j), drop in zip(flat, masks[method], strict=True):
                if drop:
                    lab[i][j] = -100
        _train(model, seqs, lab, int(p["sft_steps"]), int(p["batch"]), float(p["lr"]),
               np.random.default_rng(seed + 1))
        out[f"accuracy_{method}"] = _accuracy(model, test)
    return out


# -- claims --------------------------------------------------------------------------------------

def _claim_recall(results: list[Result], cfg: XTFConfig) -> Claim | NotEvaluated:
    text = ("XTF's mask finds the injected noise: its recall beats random masking's at the "
            "same mask ratio.")
    xtf, rnd = by_seed(results, "recall_xtf"), by_seed(results, "recall_random")
    if not xtf:
        return NotEvaluated(text, "no trial ran")
    return Claim(text, f"recall XTF {np.mean(list(xtf.values())):.3f} vs random "
                       f"{np.mean(list(rnd.values())):.3f} at mask ratio "
                       f"{np.mean(list(by_seed(results, 'mask_ratio').values())):.3f} (noise "
                       f"share {np.mean(list(by_seed(results, 'noise_share').values())):.3f})",
                 superior(xtf, rnd, min_effect=cfg.min_recall))


def _claim_accuracy(results: list[Result], cfg: XTFConfig, baseline: str) -> Claim:
    name = {"normal": "normal fine-tuning", "random": "random masking at the same ratio"}
    xtf, base = by_seed(results, "accuracy_xtf"), by_seed(results, f"accuracy_{baseline}")
    return Claim(f"XTF's held-out accuracy beats {name[baseline]}.",
                 f"exact match XTF {np.mean(list(xtf.values())):.3f} vs {baseline} "
                 f"{np.mean(list(base.values())):.3f} over {len(xtf)} seeds",
                 superior(xtf, base, min_effect=cfg.min_accuracy))


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


def summarize(results: list[Result], cfg: XTFConfig, outdir: Path) -> Summary:
    acc_rows = [[m, fmt_ci(*_mean_ci(results, f"accuracy_{m}"))] for m in METHODS]
    mask_rows = [[m, fmt_ci(*_mean_ci(results, f"recall_{m}")),
                  fmt_ci(*_mean_ci(results, f"precision_{m}")),
                  *(fmt_ci(*_mean_ci(results, f"recall_{m}_{t}")) for t in NOISE_TYPES)]
                 for m in ("xtf", "random", "ri", "kn", "tr")]
    tables = [Table("Held-out exact match (mean ± 95% CI over seeds)", ["method", "accuracy"],
                    acc_rows),
              Table(f"Masks against the injected noise (mask ratio "
                    f"{fmt_ci(*_mean_ci(results, 'mask_ratio'))}, noise share "
                    f"{fmt_ci(*_mean_ci(results, 'noise_share'))})",
                    ["mask", "recall", "precision", *(f"recall {t}" for t in NOISE_TYPES)],
                    mask_rows)]
    figures = [_figure(results, outdir)] if results else []
    items = [_claim_recall(results, cfg)]
    if results:
        items += [_claim_accuracy(results, cfg, "normal"), _claim_accuracy(results, cfg,
                                                                          "random"),
                  _claim_own(results, cfg)]
    claims, notes = split_claims(items)
    notes += ["Scores from the base model before fine-tuning; the union of the three noise "
              "sets is masked (labels −100).",
              "Observed in the first quick run: TR's second-lowest Multi-Otsu class is a large "
              "mixed class in this 41-word vocabulary (no whitespace or placeholder tokens "
              "form the lowest class, as they do in the paper's tokenizers), so XTF masks "
              "about half of the label tokens against a noise share of about 10 %; and normal "
              "fine-tuning reaches only ~12 % exact match in 300 steps. Both limit what the "
              "accuracy claims can show at this scale. A diagnostic generation (seed 0) "
              "shows why XTF's accuracy is 0: the union masks structural words (among "
              "them the boilerplate KN finds known) that the model must still produce, "
              "and the XTF-trained model emits 'us 2 1 song tiger 5 uh …' instead of an "
              "answer.",
              "Not run: Token Cleaning, Rho-1, DF, double epochs and the attribute-subset "
              "ablations of the paper."]
    return Summary(tables=tables, figures=figures, claims=claims, notes=notes)


#: Full names of the noise types and attributes on the figure.
NOISE_NAMES = {"boiler": "known boilerplate", "offdomain": "off-domain words",
               "filler": "inert filler"}
ATTRIBUTE_NAMES = {"ri": "RI (reasoning importance)", "kn": "KN (knowledge novelty)",
                   "tr": "TR (task relevance)"}


def _figure(results: list[Result], outdir: Path) -> Figure:
    fig, (ax1, ax2) = grid(2, panel=(4.8, 3.8))
    category_panel(ax1, {m: metric_values(results, f"accuracy_{m}") for m in METHODS},
                   colors={"normal": "0.6", "xtf": "C0", "random": "C1"},
                   ylabel="held-out exact match", title="accuracy per fine-tuning method",
                   ylog=False)
    category_panel(ax2, {NOISE_NAMES[t]: {ATTRIBUTE_NAMES[a]: metric_values(
        results, f"recall_{a}_{t}") for a in ATTRIBUTE_NAMES} for t in NOISE_TYPES},
                   xlabel="attribute's mask", ylabel="recall of injected noise",
                   title="each attribute against each noise type", ylog=False)
    return save(fig, outdir / "xtf.png",
                "Left: held-out exact match per fine-tuning method. Right: recall of each "
                "attribute's mask on each injected noise type (series). Mean ± 95 % CI over "
                "seeds.")


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
        "random masking at XTF's ratio; held-out exact match and the masks' recall of the "
        "known noise."),
)
