"""The speculative-decoding testbed: a small probabilistic grammar and a tiny target trained on it.

The GTO brief asks for a target whose next-token distribution has real branching (so draft
trees matter) yet is learnable by a tiny model on CPU.  :class:`Grammar` is a weighted
context-free grammar over English-like words spelled in characters (sentences ``NP VP .`` with
optional adjectives, prepositional phrases and adverbs, synonyms with unequal weights); a
document is sentences joined by spaces.  Inside a word most characters are determined, at word
and sentence boundaries several continuations are likely: the entropy is moderate and uneven,
as in natural text.

:func:`train_target` trains a ``transformers.LlamaForCausalLM`` (:class:`optzoo.llm.TinyLlama`
shape, :func:`optzoo.llm.char_tokenizer` over the grammar's alphabet) on fresh documents by
next-token cross-entropy, and caches it under :func:`optzoo.cache.cache_dir` ``/specdec/``
(keyed by the config and the torch / transformers versions, written atomically under a lock),
so a reproduction trains it once.

Example:
    >>> import numpy as np
    >>> g = Grammar()
    >>> doc = g.document(np.random.default_rng(0), 40)
    >>> len(doc), set(doc) <= set(g.alphabet)
    (40, True)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from optzoo.cache import cache_dir, locked
from optzoo.checks import check_int, check_real
from optzoo.llm.models import TinyLlama, load_causal_lm, save_causal_lm
from optzoo.llm.tokenizer import char_tokenizer

__all__ = ["Grammar", "TargetConfig", "TrainedTarget", "encode", "train_target"]

TARGET_VERSION = 1

_RULES: dict[str, tuple[tuple[tuple[str, ...], float], ...]] = {
    "S": ((("NP", "VP"), 1.0),),
    "NP": ((("DET", "N"), 0.45), (("DET", "ADJ", "N"), 0.35), (("NAME",), 0.2)),
    "VP": ((("V", "NP"), 0.5), (("V", "NP", "PP"), 0.2), (("IV",), 0.15),
           (("IV", "ADV"), 0.15)),
    "PP": ((("P", "NP"), 1.0),),
}
_WORDS: dict[str, tuple[tuple[str, float], ...]] = {
    "DET": (("the", 0.55), ("a", 0.25), ("my", 0.1), ("one", 0.1)),
    "ADJ": (("red", 0.3), ("big", 0.25), ("old", 0.2), ("small", 0.15), ("lazy", 0.1)),
    "N": (("cat", 0.25), ("dog", 0.2), ("fox", 0.15), ("bird", 0.12), ("frog", 0.1),
          ("king", 0.08), ("girl", 0.06), ("boy", 0.04)),
    "NAME": (("tom", 0.4), ("ann", 0.3), ("max", 0.2), ("eve", 0.1)),
    "V": (("sees", 0.3), ("likes", 0.25), ("finds", 0.15), ("chases", 0.15), ("helps", 0.1),
          ("meets", 0.05)),
    "IV": (("sleeps", 0.4), ("runs", 0.3), ("sings", 0.2), ("waits", 0.1)),
    "ADV": (("now", 0.4), ("here", 0.3), ("again", 0.2), ("often", 0.1)),
    "P": (("near", 0.4), ("with", 0.3), ("behind", 0.2), ("under", 0.1)),
}


@functools.cache
def _probs(options, sharpness: float) -> np.ndarray:
    """The choice probabilities ``w^sharpness / Σ w^sharpness`` of a rule's options (computed
    once per rule: documents draw thousands of choices from a handful of fixed rules)."""
    w = np.array([o[1] for o in options], dtype=float) ** sharpness
    p = w / w.sum()
    p.flags.writeable = False
    return p


@dataclass(frozen=True)
class Grammar:
    """The weighted grammar (fixed rules; ``sharpness`` reshapes every choice's weights as
    ``w^sharpness``: 0 = uniform, 1 = as listed, larger = more peaked)."""

    sharpness: float = 1.0

    def __post_init__(self):
        check_real("sharpness", self.sharpness, low=0)

    @property
    def alphabet(self) -> str:
        return " .abcdefghijklmnopqrstuvwxyz"

    def _pick(self, rng: np.random.Generator, options):
        return options[int(rng.choice(len(options), p=_probs(options, self.sharpness)))][0]

    def _expand(self, symbol: str, rng: np.random.Generator) -> list[str]:
        if symbol in _WORDS:
            return [self._pick(rng, _WORDS[symbol])]
        return [w for s in self._pick(rng, _RULES[symbol]) for w in self._expand(s, rng)]

    def sentence(self, rng: np.random.Generator) -> str:
        return " ".join(self._expand("S", rng)) + "."

    def document(self, rng: np.random.Generator, length: int) -> str:
        """Sentences joined by spaces, cut to exactly ``length`` characters (starting at a
        random offset of the first sentence, so every position in a sentence is a start)."""
        check_int("length", length, low=1)
        first = self.sentence(rng)
        start = int(rng.integers(0, len(first) + 1))
        parts, size = [first], len(first) - start
        while size < length:
            s = self.sentence(rng)
            parts.append(s)
            size += len(s) + 1
        return " ".join(parts)[start:start + length]

    def tokenizer(self):
        return char_tokenizer(self.alphabet)

    def spec(self) -> dict:
        return {"grammar": "Grammar", "sharpness": self.sharpness, "version": TARGET_VERSION}


def encode(tokenizer, texts: list[str], device="cpu") -> torch.Tensor:
    """``B x (1 + length)`` ids (``<bos>`` first) of equal-length texts."""
    ids = tokenizer(list(texts)).input_ids
    if len({len(x) for x in ids}) != 1:
        raise ValueError("texts: expected texts of equal length")
    return torch.tensor(ids, device=device)


@dataclass(frozen=True)
class TargetConfig:
    """How the target is trained (every field enters the cache key).

    Args:
        grammar: the language.
        model: shape of the tiny Llama.
        steps: AdamW steps on fresh documents.
        batch_size: documents per step.
        length: characters per document.
        lr: peak learning rate (linear warm-up over 5 %, cosine decay to 10 %).
        seed: initialisation and data seed.
    """

    grammar: Grammar = field(default_factory=Grammar)
    model: TinyLlama = field(default_factory=lambda: TinyLlama(
        hidden_size=128, intermediate_size=384, num_layers=3, num_heads=4,
        max_position_embeddings=160))
    steps: int = 400
    batch_size: int = 32
    length: int = 64
    lr: float = 3e-3
    seed: int = 0

    def __post_init__(self):
        for f in ("steps", "batch_size", "length"):
            check_int(f, getattr(self, f), low=1)
        check_int("seed", self.seed, low=0)
        check_real("lr", self.lr, low=0, low_open=True)
        if self.length + 1 > self.model.max_position_embeddings:
            raise ValueError(f"length: expected < max_position_embeddings = "
                             f"{self.model.max_position_embeddings}, got {self.length}")

    def spec(self) -> dict:
        return {"grammar": self.grammar.spec(), "model": dataclasses.asdict(self.model),
                **{f: getattr(self, f) for f in ("steps", "batch_size", "length", "lr",
                                                 "seed")}}


@dataclass
class TrainedTarget:
    """A trained target, its tokenizer and training metrics (``loss``, ``heldout_loss``,
    ``seconds``, ``from_cache``)."""

    model: object
    tokenizer: object
    metrics: dict
    path: Path | None = None




def _heldout(model, tokenizer, config: TargetConfig) -> float:
    rng = np.random.default_rng([config.seed, 99])
    ids = encode(tokenizer, [config.grammar.document(rng, config.length) for _ in range(64)])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[:, :-1]
    return float(torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                   ids[:, 1:].reshape(-1)))


def _train(config: TargetConfig) -> TrainedTarget:
    import math

    tokenizer = config.grammar.tokenizer()
    model = config.model.build(tokenizer, seed=config.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.0)
    warm = max(1, config.steps // 20)

    def lam(s):
        if s < warm:
            return (s + 1) / warm
        frac = (s - warm) / max(1, config.steps - warm)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * frac))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lam)
    rng = np.random.default_rng([config.seed, 1])
    start, losses = time.perf_counter(), []
    model.train()
    for _ in range(config.steps):
        ids = encode(tokenizer, [config.grammar.document(rng, config.length)
                                 for _ in range(config.batch_size)])
        logits = model(input_ids=ids).logits[:, :-1]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 ids[:, 1:].reshape(-1))
        if not torch.isfinite(loss):
            raise FloatingPointError("train_target: non-finite loss (lower lr)")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    metrics = {"loss": float(np.mean(losses[-20:])), "heldout_loss": _heldout(model, tokenizer,
                                                                               config),
               "seconds": time.perf_counter() - start, "from_cache": False}
    return TrainedTarget(model, tokenizer, metrics)


def cache_key(config: TargetConfig) -> str:
    import transformers

    key = {"kind": "specdec-target", "config": config.spec(), "torch": torch.__version__,
           "transformers": transformers.__version__}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]


def train_target(config: TargetConfig | None = None, *, cache: bool = True,
                 cache_root: str | os.PathLike | None = None) -> TrainedTarget:
    """The target of ``config`` (trained on CPU, or loaded from the cache).

    Example::

        tgt = train_target(TargetConfig(steps=200))   # seconds once, then cached
        tgt.model, tgt.tokenizer, tgt.metrics["heldout_loss"]
    """
    config = TargetConfig() if config is None else config
    if not isinstance(config, TargetConfig):
        raise ValueError(f"config: expected a TargetConfig, got {type(config).__name__}")
    if not cache:
        return _train(config)
    root = Path(cache_root) if cache_root is not None else cache_dir()
    folder = root / "specdec" / f"target-{cache_key(config)}"
    with locked(folder.with_name(folder.name + ".lock")):
        if not (folder / "metrics.json").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            tgt = _train(config)
            tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            save_causal_lm(tgt.model, tgt.tokenizer, tmp)
            (tmp / "metrics.json").write_text(json.dumps(tgt.metrics, indent=1))
            os.replace(tmp, folder)
            tgt.path = folder
            return tgt
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["from_cache"] = True
    model, tokenizer = load_causal_lm(folder)
    return TrainedTarget(model, tokenizer, metrics, folder)
