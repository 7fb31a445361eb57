"""A small causal LM that writes crossover code, pretrained by project code (RFTHGS, issue 25).

RFTHGS (Zhu, Zhang & Cao, ICLR 2026, OpenReview aITKXFeivk) starts from a code LLM and
fine-tunes it with RL.  Nothing may be downloaded here, so this module makes the starting model:

1. a byte-level BPE tokenizer (Hugging Face ``tokenizers``) trained on the corpus of
   :mod:`optzoo.routing.code_corpus`, wrapped as a ``PreTrainedTokenizerFast`` (EOS
   ``<|endoftext|>``, PAD ``<|pad|>``), so that any text — including text that does not compile —
   can be written token by token.  Its pre-tokenizer splits only at line ends, so merges may
   join words, spaces and punctuation within a line (``pretokenizer="lines"``): GPT-2's word
   regex (``"words"``) caps the corpus at about 3 characters a token, at any vocabulary size
   (measured: the SREX prompt is 1 576 tokens at 1 024 and at 8 192), while line-level merges
   make it 239 tokens and a completion ≈ 290 instead of ≈ 1 200 at 4 096 — shorter
   sequences to learn and to sample, the same bytes underneath;
2. a ``LlamaForCausalLM`` from :func:`optzoo.llm.models.tiny_llama` trained on the corpus
   documents with cross-entropy on the completion tokens and the EOS (the prompt — the paper's
   instructions and the parent operator's full source — is context only), AdamW with a linear
   warm-up, fresh documents every step;
3. cached under :func:`optzoo.cache.cache_dir` ``/routing/code-lm-<hash>/`` (``save_pretrained``
   folder plus ``metrics.json``), keyed by the config and the torch / transformers / tokenizers
   versions, written atomically under a file lock so parallel trials train it once.

:func:`code_generator` wraps the model as an :class:`~optzoo.routing.lm_generator.LMGenerator`
(the same class a user's local Hugging Face code model goes through), and
:func:`compile_rate` measures the share of sampled operators that pass the sandbox's static
check — the quantity RL must raise.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from optzoo.cache import cache_dir, locked
from optzoo.llm.models import TinyLlama, count_parameters, load_causal_lm, save_causal_lm
from optzoo.llm.pretraining import supervised_step
from optzoo.routing import code_corpus

CODE_LM_VERSION = 2  # bump when training changes, so stale cached models are not reused
EOS = "<|endoftext|>"
PAD = "<|pad|>"
PRETOKENIZERS = ("lines", "words")


@dataclass(frozen=True)
class CodeLMConfig:
    """What to pretrain (every field enters the cache key).

    The defaults (1.15 M parameters) reach a completion loss of 1.77 per token in 1 500 steps
    (1 496 s on one core while the 2-core machine ran other work at higher priority). Sampled
    at T = 1, top-p 0.95, top-k 200 from the SREX prompt, 2 of 8 operators then passed the
    static check (1 of 8 at steps 500 and 1 000); the others failed on brackets that span
    lines (measured in issue 25's probe).

    Args:
        vocab_size: BPE vocabulary size (special tokens included).
        pretokenizer: ``"lines"`` (split at line ends only) or ``"words"`` (GPT-2's regex).
        model: shape of the tiny Llama; ``max_position_embeddings`` must hold prompt +
            completion (≈ 240-530 + up to 600 tokens at the default tokenizer).
        documents: corpus documents the tokenizer is trained on and training draws from.
        steps: optimizer steps.
        batch_size: documents per step.
        lr: AdamW peak learning rate (linear warm-up over ``warmup_steps``, then constant).
        warmup_steps: warm-up length.
        grad_clip: max global gradient norm.
        defect_rate, srex_parent, srex_share, augment_share, modify_rate: corpus mix
            (:func:`optzoo.routing.code_corpus.documents`).
        seed: seed of the corpus, the initialisation and the batches.
    """

    vocab_size: int = 4096
    pretokenizer: str = "lines"
    model: TinyLlama = field(default_factory=lambda: TinyLlama(
        hidden_size=96, intermediate_size=288, num_layers=3, num_heads=4,
        max_position_embeddings=1536))
    documents: int = 600
    steps: int = 1500
    batch_size: int = 4
    lr: float = 3e-3
    warmup_steps: int = 30
    grad_clip: float = 1.0
    defect_rate: float = 0.15
    srex_parent: float = 0.5
    srex_share: float = 0.1
    augment_share: float = 0.7
    modify_rate: float = 0.3
    seed: int = 0

    def __post_init__(self):
        for name in ("vocab_size", "documents", "steps", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
        if self.vocab_size < 300:
            raise ValueError(f"vocab_size: expected >= 300 (256 bytes + specials + merges), "
                             f"got {self.vocab_size}")
        if self.pretokenizer not in PRETOKENIZERS:
            raise ValueError(f"pretokenizer: expected one of {PRETOKENIZERS}, got "
                             f"{self.pretokenizer!r}")
        if not isinstance(self.model, TinyLlama):
            raise ValueError(f"model: expected a TinyLlama, got {self.model!r}")
        if not self.lr > 0 or not self.grad_clip > 0:
            raise ValueError("lr and grad_clip: expected positive numbers")

    def spec(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["model"] = dataclasses.asdict(self.model)
        return d


@dataclass
class CodeLM:
    """A pretrained code model: ``model`` (eval mode), ``tokenizer``, ``metrics`` (steps, loss
    history, ``num_parameters``, ``seconds``, ``from_cache``) and its cache ``path``."""

    model: object
    tokenizer: object
    metrics: dict
    path: Path | None = None


def train_tokenizer(texts, vocab_size: int, pretokenizer: str = "lines"):
    """A byte-level BPE ``PreTrainedTokenizerFast`` trained on ``texts`` (every string
    round-trips exactly: ``decode(encode(s)) == s``); ``pretokenizer`` as in
    :class:`CodeLMConfig`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if pretokenizer not in PRETOKENIZERS:
        raise ValueError(f"pretokenizer: expected one of {PRETOKENIZERS}, got {pretokenizer!r}")
    tok = Tokenizer(models.BPE())
    if pretokenizer == "lines":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split("\n", "merged_with_previous"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[PAD, EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(list(texts), trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=PAD,
                                   clean_up_tokenization_spaces=False)


def cache_key(config: CodeLMConfig, device: str | torch.device = "cpu") -> str:
    """The hash naming the cache folder of ``config`` trained on ``device``."""
    import tokenizers
    import transformers

    key = {"kind": "code-lm", "version": CODE_LM_VERSION, "config": config.spec(),
           "device": torch.device(device).type, "torch": torch.__version__,
           "transformers": transformers.__version__, "tokenizers": tokenizers.__version__}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]


def _encode(tokenizer, doc) -> tuple[list[int], int]:
    p = tokenizer(doc.prompt, add_special_tokens=False).input_ids
    c = tokenizer(doc.completion, add_special_tokens=False).input_ids
    return p + c + [tokenizer.eos_token_id], len(p)


def _train(config: CodeLMConfig, device: torch.device,
           log: Callable[[str], None] | None) -> CodeLM:
    docs = code_corpus.documents(config.documents, config.seed,
                                 defect_rate=config.defect_rate,
                                 srex_parent=config.srex_parent, srex_share=config.srex_share,
                                 augment_share=config.augment_share,
                                 modify_rate=config.modify_rate)
    tokenizer = train_tokenizer([t for d in docs for t in (d.prompt, d.completion)],
                                config.vocab_size, config.pretokenizer)
    encoded = [_encode(tokenizer, d) for d in docs]
    longest = max(len(s) for s, _ in encoded)
    if longest > config.model.max_position_embeddings:
        raise ValueError(f"model.max_position_embeddings={config.model.max_position_embeddings}"
                         f" is shorter than the longest document ({longest} tokens)")
    model = config.model.build(tokenizer, seed=config.seed).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.0)
    warm = max(config.warmup_steps, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    rng = np.random.default_rng([config.seed, 1])
    history, start = [], time.perf_counter()
    model.train()
    for step in range(1, config.steps + 1):
        batch = [encoded[i] for i in rng.integers(len(encoded), size=config.batch_size)]
        width = max(len(s) for s, _ in batch)
        ids = torch.full((len(batch), width), tokenizer.pad_token_id, dtype=torch.long)
        labels = torch.full_like(ids, -100)
        mask = torch.zeros_like(ids)
        for i, (s, n_prompt) in enumerate(batch):
            ids[i, :len(s)] = torch.tensor(s)
            mask[i, :len(s)] = 1
            labels[i, n_prompt:len(s)] = ids[i, n_prompt:len(s)]
        ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
        history.append(supervised_step(model, opt, sched, ids, mask, labels, config.grad_clip,
                                       f"code LM: step {step}"))
        if log is not None and (step % 25 == 0 or step == config.steps):
            log(f"code LM step {step}/{config.steps}: loss {np.mean(history[-25:]):.3f}")
    model.eval()
    metrics = {"steps": config.steps, "loss_history": history,
               "final_loss": float(np.mean(history[-25:])),
               "num_parameters": count_parameters(model), "longest_document": longest,
               "seconds": time.perf_counter() - start, "torch_threads": torch.get_num_threads()}
    return CodeLM(model, tokenizer, metrics)


def pretrain_code_lm(config: CodeLMConfig | None = None, *, device: str = "cpu",
                     cache: bool = True, log: Callable[[str], None] | None = None) -> CodeLM:
    """The pretrained code model of ``config``: loaded from the cache when it is there, else
    trained (and cached when ``cache``).

    Example:
        >>> from optzoo.llm.models import TinyLlama
        >>> cfg = CodeLMConfig(vocab_size=320, documents=4, steps=2, model=TinyLlama(
        ...     hidden_size=16, intermediate_size=32, num_layers=1, num_heads=2,
        ...     max_position_embeddings=4096))
        >>> lm = pretrain_code_lm(cfg, cache=False)
        >>> len(lm.metrics["loss_history"])
        2
    """
    config = CodeLMConfig() if config is None else config
    dev = torch.device(device)
    if not cache:
        return _train(config, dev, log)
    folder = cache_dir() / "routing" / f"code-lm-{cache_key(config, dev)}"
    with locked(folder.with_suffix(".lock")):
        if not (folder / "metrics.json").exists():
            lm = _train(config, dev, log)
            tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
            shutil.rmtree(tmp, ignore_errors=True)
            save_causal_lm(lm.model, lm.tokenizer, tmp)
            (tmp / "metrics.json").write_text(json.dumps(lm.metrics))
            (tmp / "key.json").write_text(json.dumps(config.spec(), indent=1))
            shutil.rmtree(folder, ignore_errors=True)
            tmp.rename(folder)
            return CodeLM(lm.model, lm.tokenizer, {**lm.metrics, "from_cache": False}, folder)
    model, tokenizer = load_causal_lm(folder, device=dev)
    metrics = json.loads((folder / "metrics.json").read_text())
    return CodeLM(model, tokenizer, {**metrics, "from_cache": True}, folder)


def code_generator(lm: CodeLM, **kwargs):
    """``lm`` as an :class:`~optzoo.routing.lm_generator.LMGenerator` (kwargs: its sampling
    settings; ``max_new_tokens`` defaults to the model's room after the prompt)."""
    from optzoo.routing.lm_generator import LMGenerator, build_prompt

    prompt_len = len(lm.tokenizer(build_prompt(code_corpus.srex_source()),
                                  add_special_tokens=False).input_ids)
    room = lm.model.config.max_position_embeddings - prompt_len
    kwargs.setdefault("max_new_tokens", room)
    if kwargs["max_new_tokens"] > room:
        raise ValueError(f"max_new_tokens: at most {room} fit after the {prompt_len}-token "
                         f"prompt, got {kwargs['max_new_tokens']}")
    return LMGenerator(lm.model, lm.tokenizer, **kwargs)


def compile_rate(generator, n: int, seed: int = 0) -> dict:
    """Sample ``n`` completions from the SREX prompt and report the share with a code block
    (``has_code``) and the share that passes the sandbox's static check (``compiles``: parses,
    compiles, allowed imports, ``crossover`` with four arguments)."""
    from optzoo.routing.sandbox import check_source

    class _Parent:
        source = code_corpus.srex_source()

    gen = torch.Generator().manual_seed(seed)
    outs = generator.propose(_Parent, n, gen)
    codes = [code for _, code in outs]
    ok = [c is not None and check_source(c).ok for c in codes]
    return {"n": n, "has_code": float(np.mean([c is not None for c in codes])),
            "compiles": float(np.mean(ok)), "sources": codes}
