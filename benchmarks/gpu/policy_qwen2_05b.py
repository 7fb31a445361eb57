"""GRPO with ``PolicyTrainer`` on a 0.5B-parameter Qwen2-shaped model in bf16 (issue 27, GPU).

Prepared for a GPU session; ``--tiny`` runs the same code path on CPU with a small model (what
the test suite runs).  Nothing is downloaded: the model is ``Qwen2ForCausalLM`` built from the
Qwen2.5-0.5B configuration (hidden 896, 24 layers, 14 heads, 2 KV heads, MLP 4864, vocabulary
151 936, tied embeddings) with random weights, and the tokenizer is optzoo's character
tokenizer over an alphabet padded to the model's vocabulary (one id per character: a random
model samples every id, and each must decode).

Records, as JSON (``--out``) and on stdout:

* ``tokens_per_s``: completion tokens per second of ``PolicyTrainer.train_step`` (rollout +
  update), mean over the steps after the first;
* ``peak_memory_bytes``: peak allocated memory of the second training step (CUDA:
  ``torch.cuda.max_memory_allocated``, resident model and AdamW state included; CPU: the torch
  profiler's allocation events during the step, above what was resident when it began);
* ``bf16_ratio_error_before_rescoring``: max over completion tokens of |π/π_old − 1| at the
  first inner step when π_old is the log-prob recorded while decoding (KV cache, bf16) and π
  the training forward (full sequence, bf16) of the same weights: the spurious off-policyness;
  ``bf16_ratio_error_after``: the same with π_old re-scored by a no-grad full forward
  (``TrainerConfig.rescore_logprobs``); ``bf16_vs_fp32_logprob_error``: max |log π_bf16 −
  log π_fp32| of the training forward.

``--trl`` adds TRL's ``GRPOTrainer`` on a second copy of the same weights (same batch,
lengths, reward, bf16, ``num_iterations=2``): ``trl_tokens_per_s`` and, on CUDA,
``trl_peak_memory_bytes`` (the second step; ``torch.cuda.max_memory_allocated``).

The reward is a deterministic pseudo-random bit of the completion text (a random model has no
task to solve; the bit keeps groups non-degenerate so the update is a real GRPO step).

Usage::

    python benchmarks/gpu/policy_qwen2_05b.py --out runs/gpu_policy.json          # GPU
    python benchmarks/gpu/policy_qwen2_05b.py --tiny --steps 2                   # CPU check
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

import torch

QWEN2_05B = dict(vocab_size=151936, hidden_size=896, intermediate_size=4864,
                 num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                 max_position_embeddings=32768, rope_theta=1_000_000.0, rms_norm_eps=1e-6,
                 tie_word_embeddings=True)
TINY = dict(vocab_size=2048, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
            rope_theta=10_000.0, rms_norm_eps=1e-6, tie_word_embeddings=True)


def tokenizer_for(vocab_size: int):
    """optzoo's character tokenizer over an alphabet of ``vocab_size - 4`` characters: the
    arithmetic characters, then code points from U+10000 on (no surrogates, no newline)."""
    from optzoo.llm.tokenizer import ARITHMETIC_ALPHABET, SPECIAL_TOKENS, char_tokenizer

    extra = vocab_size - len(SPECIAL_TOKENS) - len(ARITHMETIC_ALPHABET)
    return char_tokenizer(ARITHMETIC_ALPHABET + "".join(chr(0x10000 + i) for i in range(extra)))


def build_model(shape: dict, tokenizer, device: str, seed: int = 0):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(**shape, pad_token_id=tokenizer.pad_token_id,
                      bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(cfg)
    return model.to(device)


def bit_reward(prompts, completions, **kwargs):
    return [float(zlib.crc32(c.encode()) % 2) for c in completions]


def _peak(fn, device: torch.device) -> tuple[object, int]:
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        out = fn()
        torch.cuda.synchronize()
        return out, torch.cuda.max_memory_allocated()
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = fn()
    level = peak = 0
    for _, nbytes in sorted((e.start_ns(), e.nbytes())
                            for e in prof.profiler.kineto_results.events()
                            if e.name() == "[memory]"):
        level += nbytes
        peak = max(peak, level)
    return out, peak


def ratio_errors(trainer) -> dict[str, float]:
    """The bf16 ratio errors of the module docstring on one fresh rollout."""
    prompts = [p.prompt for p in trainer.train[:4]]
    r = trainer.sample(trainer.model, prompts, 4)
    mask = r.completion_mask.bool()
    trainer.model.train()
    train = trainer.policy_logprobs(r).detach()  # the loss's forward (autograd on)
    rescored = trainer.sampler_logprobs(trainer.model, r)
    with torch.no_grad():
        fp32 = r.logprobs_under(trainer.model, temperature=trainer.config.temperature)

    def err(old):
        return ((train - old).exp() - 1).abs()[mask].max().item()

    return {"bf16_ratio_error_before_rescoring": err(r.logprobs),
            "bf16_ratio_error_after": err(rescored),
            "bf16_vs_fp32_logprob_error": (train - fp32).abs()[mask].max().item()}


def trl_grpo(model, tok, prompts: list[str], args, n_prompts: int, max_new: int,
             device: torch.device) -> dict:
    """The peer: TRL's ``GRPOTrainer`` on the same model, batch, lengths and reward, bf16,
    ``num_iterations=2``; tokens/s over the steps after the first (callback clock around each
    step, generation included) and the peak memory of the second step."""
    import tempfile
    import warnings

    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    class Clock(TrainerCallback):
        times: list[float] = []
        peak = 0

        def on_step_begin(self, a, state, control, **kw):
            if device.type == "cuda":
                torch.cuda.synchronize()
                if state.global_step == 1:
                    torch.cuda.reset_peak_memory_stats()
            self._t = time.perf_counter()

        def on_step_end(self, a, state, control, **kw):
            if device.type == "cuda":
                torch.cuda.synchronize()
                if state.global_step == 2:
                    Clock.peak = torch.cuda.max_memory_allocated()
            Clock.times.append(time.perf_counter() - self._t)

    with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = GRPOConfig(output_dir=out, per_device_train_batch_size=n_prompts * args.group,
                         num_generations=args.group, max_completion_length=max_new,
                         max_steps=args.steps, learning_rate=1e-6, beta=0.0, num_iterations=2,
                         loss_type="grpo", temperature=1.0, top_p=1.0, top_k=0, bf16=True,
                         report_to="none", use_cpu=device.type == "cpu", save_strategy="no",
                         logging_steps=1, seed=0, disable_tqdm=True)
        trainer = GRPOTrainer(model=model, reward_funcs=bit_reward, args=cfg,
                              processing_class=tok, callbacks=[Clock()],
                              train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]))
        trainer.remove_callback(PrinterCallback)
        trainer.train()
    lengths = [h["completions/mean_length"] for h in trainer.state.log_history
               if "completions/mean_length" in h]
    tokens = sum(m * n_prompts * args.group for m in lengths[1:])
    return {"trl_tokens_per_s": tokens / max(sum(Clock.times[1:]), 1e-9),
            "trl_peak_memory_bytes": Clock.peak if device.type == "cuda" else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="small model on CPU (the test)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--prompts", type=int, default=None, help="prompts per step")
    ap.add_argument("--group", type=int, default=8, help="completions per prompt (G)")
    ap.add_argument("--max-new-tokens", type=int, default=None)
    ap.add_argument("--micro-batch", type=int, default=None,
                    help="per_device_train_batch_size (None: whole batch)")
    ap.add_argument("--chunk", type=int, default=1024, help="logprob_chunk_size in tokens")
    ap.add_argument("--lora", action="store_true", help="train a LoRA adapter (peft)")
    ap.add_argument("--trl", action="store_true",
                    help="also run TRL's GRPOTrainer on a fresh copy of the same model")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    from optzoo.llm import Addition
    from optzoo.policy.trainer import GRPO, PolicyTrainer, TrainerConfig

    device = torch.device("cpu" if args.tiny or not torch.cuda.is_available() else "cuda")
    shape = TINY if args.tiny else QWEN2_05B
    prompts = args.prompts or (2 if args.tiny else 16)
    max_new = args.max_new_tokens or (8 if args.tiny else 256)
    tok = tokenizer_for(shape["vocab_size"])
    model = build_model(shape, tok, device.type)
    peer = build_model(shape, tok, device.type) if args.trl else None  # same seed, same weights
    n_params = sum(p.numel() for p in model.parameters())
    peft_config = None
    if args.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
                                 target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    train, _ = Addition(digits=2).split(64, 1, seed=1)
    cfg = TrainerConfig(steps=args.steps, lr=1e-6, max_new_tokens=max_new, eval_every=0,
                        per_device_train_batch_size=args.micro_batch,
                        logprob_chunk_size=args.chunk, bf16=True, seed=0)
    trainer = PolicyTrainer(model, tok, None, [p.prompt for p in train], [],
                            GRPO(group_size=args.group, prompts_per_step=prompts,
                                 inner_steps=2), cfg, reward=bit_reward, peft_config=peft_config)
    errors = ratio_errors(trainer)
    if args.steps < 2:
        raise SystemExit("--steps: expected at least 2 (the second step's memory is recorded)")
    t0 = time.perf_counter()
    rows = [trainer.train_step()]  # AdamW's state and other one-time allocations
    row, peak = _peak(trainer.train_step, device)
    rows.append(row)
    for _ in range(args.steps - 2):
        rows.append(trainer.train_step())
    timed = rows[1:] or rows
    result = {"device": device.type, "model": "qwen2-tiny" if args.tiny else "qwen2-0.5b",
              "parameters": n_params, "lora": args.lora, "steps": len(rows),
              "prompts": prompts, "group": args.group, "max_new_tokens": max_new,
              "micro_batch": args.micro_batch, "chunk": args.chunk,
              "tokens_per_s": sum(r["tokens"] for r in timed) / sum(
                  r["tokens"] / r["tokens_per_s"] for r in timed),
              "peak_memory_bytes": peak, "wall_s": time.perf_counter() - t0, **errors,
              "losses": [r["loss"] for r in rows]}
    if peer is not None:
        del trainer, model
        result.update(trl_grpo(peer, tok, [p.prompt for p in train], args, prompts, max_new,
                               device))
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
