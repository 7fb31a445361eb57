"""Policy optimisation (policy area): training throughput of :class:`PolicyTrainer` with GRPO vs
TRL 1.16's ``GRPOTrainer`` on the same model, batch and generation length.

Issue 7 asks for tokens/s of PolicyTrainer + ``grpo_loss`` against ``GRPOTrainer``, measured in
one run, target ≥ 1.0×.  Both sides:

* the 1 M-parameter tiny Llama pretrained on 2-digit addition (``optzoo.llm.pretrain``'s
  default, from the cache) and its character tokenizer; one torch thread, CPU;
* 8 prompts × G = 8 completions per step, at most 8 new tokens, temperature 1, no top-k/top-p;
* GRPO with β = 0, ε = 0.2, ``loss_type="grpo"``, one optimizer step per batch, AdamW lr 1e-4,
  gradient clipping at 1;
* the task's exact-match reward.

Time per step covers sampling, rewards, advantages, the forward/backward and the optimizer
step (TRL: a callback's ``on_step_begin`` → ``on_step_end``, which encloses its generation;
ours: ``PolicyTrainer.train_step``), in CPU seconds of the process (``time.process_time``:
both sides run one torch thread, and wall time is distorted by whatever else shares the
machine).  The first ``WARMUP`` steps are dropped; the rows report
seconds per 1 000 generated completion tokens (so ratio < 1 means we are faster, i.e. more
tokens/s) and carry the tokens/s of each side.

Issue 27 adds the peak memory of one GRPO step on the same model, batch and lengths
(:func:`bench_policy_trainer_vs_trl_grpo_memory`, target ≤ 1.0×): the peak of torch's CPU
allocations (the profiler's memory events, cumulated in time order) during the second training
step of each side — PolicyTrainer's ``train_step``, TRL's ``on_step_begin`` → ``on_step_end``
(generation included) — above what was resident when the step began (model, AdamW state), so
the first step's one-time allocations are excluded on both sides.  PolicyTrainer runs with its
defaults (whole batch in one forward, unchunked log-probs) like TRL; the row also carries the
peak with ``logprob_chunk_size=64`` and ``per_device_train_batch_size=16``.
"""

from __future__ import annotations

import copy
import time
import warnings

import torch

STEPS, WARMUP = 12, 2
PROMPTS, G, MAX_NEW = 8, 8, 8


def _setup():
    from optzoo.llm import Addition, PretrainConfig, pretrain

    task = Addition(digits=2)
    lm = pretrain(PretrainConfig(task=task))
    train, test = task.split(1000, 100, seed=1)
    return task, lm, train, test


def _ours(task, lm, train, test) -> tuple[float, int]:
    from optzoo.policy.trainer import GRPO, PolicyTrainer, TrainerConfig

    tr = PolicyTrainer(copy.deepcopy(lm.model), lm.tokenizer, task, train, test,
                       GRPO(group_size=G, prompts_per_step=PROMPTS, loss_type="grpo"),
                       TrainerConfig(steps=STEPS, lr=1e-4, max_new_tokens=MAX_NEW, eval_every=0))
    seconds, tokens = 0.0, 0
    for step in range(STEPS):
        t0 = time.process_time()
        row = tr.train_step()  # rollout + rewards + update
        if step >= WARMUP:
            seconds += time.process_time() - t0
            tokens += row["tokens"]
    return seconds, tokens


class _Peak:
    """Peak of torch's CPU allocations between :meth:`start` and :meth:`stop` (profiler memory
    events in time order, cumulated from 0 at the start)."""

    bytes = 0

    def start(self):
        from torch.profiler import ProfilerActivity, profile

        self._prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
        self._prof.start()

    def stop(self) -> int:
        self._prof.stop()
        level = self.bytes = 0
        for _, nbytes in sorted((e.start_ns(), e.nbytes())
                                for e in self._prof.profiler.kineto_results.events()
                                if e.name() == "[memory]"):
            level += nbytes
            self.bytes = max(self.bytes, level)
        return self.bytes


def _ours_peak(task, lm, train, test, **config) -> int:
    from optzoo.policy.trainer import GRPO, PolicyTrainer, TrainerConfig

    tr = PolicyTrainer(copy.deepcopy(lm.model), lm.tokenizer, task, train, test,
                       GRPO(group_size=G, prompts_per_step=PROMPTS, loss_type="grpo"),
                       TrainerConfig(steps=2, lr=1e-4, max_new_tokens=MAX_NEW, eval_every=0,
                                     **config))
    tr.train_step()  # AdamW's state and other one-time allocations
    peak = _Peak()
    peak.start()
    tr.train_step()
    return peak.stop()


def _trl_peak(task, lm, train) -> int:
    from transformers import TrainerCallback

    peak = _Peak()

    class Probe(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            if state.global_step == 1:  # the second step
                peak.start()

        def on_step_end(self, args, state, control, **kw):
            if state.global_step == 2:
                peak.stop()

    _trl(task, lm, train, steps=2, callbacks=[Probe()])
    if not peak.bytes:
        raise RuntimeError("trl: the second step was not profiled")
    return peak.bytes


def bench_policy_trainer_vs_trl_grpo_memory() -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        task, lm, train, test = _setup()
        ours = _ours_peak(task, lm, train, test)
        trl = _trl_peak(task, lm, train)
        lean = _ours_peak(task, lm, train, test, logprob_chunk_size=64,
                          per_device_train_batch_size=16)
    finally:
        torch.set_num_threads(threads)
    return {"name": "GRPO step peak memory (tiny Llama, 64 samples)",
            "method": "PolicyTrainer+grpo_loss", "peer": "trl.GRPOTrainer",
            "method_s": ours, "peer_s": trl, "unit": "bytes (peak CPU allocations of a step)",
            "display": (1e-6, "MB"), "target_ratio": 1.0,
            "method_peak_bytes": ours, "peer_peak_bytes": trl,
            "method_chunked_microbatch_peak_bytes": lean}


def _trl(task, lm, train, steps: int = STEPS, callbacks=()) -> tuple[float, int]:
    import tempfile

    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    class Clock(TrainerCallback):
        def __init__(self):
            self.times = []

        def on_step_begin(self, args, state, control, **kw):
            self._t = time.process_time()

        def on_step_end(self, args, state, control, **kw):
            self.times.append(time.process_time() - self._t)

    clock = Clock()
    with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = GRPOConfig(output_dir=out, per_device_train_batch_size=PROMPTS * G,
                          num_generations=G, max_completion_length=MAX_NEW, max_steps=steps,
                          learning_rate=1e-4, beta=0.0, epsilon=0.2, loss_type="grpo",
                          max_grad_norm=1.0, temperature=1.0, top_p=1.0, top_k=0,
                          report_to="none", use_cpu=True, save_strategy="no", logging_steps=1,
                          seed=0, lr_scheduler_type="constant", warmup_steps=0,
                          disable_tqdm=True)
        trainer = GRPOTrainer(model=copy.deepcopy(lm.model), reward_funcs=task.reward, args=args,
                              processing_class=lm.tokenizer,
                              callbacks=[clock, *callbacks],
                              train_dataset=Dataset.from_list([{"prompt": p.prompt}
                                                               for p in train]))
        trainer.remove_callback(PrinterCallback)  # disable_tqdm prints every log dict
        trainer.train()
    lengths = [h["completions/mean_length"] for h in trainer.state.log_history
               if "completions/mean_length" in h]
    tokens = sum(round(m * PROMPTS * G) for m in lengths[WARMUP:STEPS])
    return sum(clock.times[WARMUP:STEPS]), tokens


def bench_policy_trainer_vs_trl_grpo() -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        task, lm, train, test = _setup()
        ours_s, ours_tok = _ours(task, lm, train, test)
        trl_s, trl_tok = _trl(task, lm, train)
    finally:
        torch.set_num_threads(threads)
    return {"name": "GRPO training step (tiny Llama, 64 samples)",
            "method": "PolicyTrainer+grpo_loss", "peer": "trl.GRPOTrainer",
            "method_s": ours_s / ours_tok * 1e3, "peer_s": trl_s / trl_tok * 1e3,
            "unit": "seconds per 1000 completion tokens", "target_ratio": 1.0,
            "method_tokens_per_s": ours_tok / ours_s, "peer_tokens_per_s": trl_tok / trl_s,
            "method_step_s": ours_s / (STEPS - WARMUP), "peer_step_s": trl_s / (STEPS - WARMUP)}


BENCHMARKS = [bench_policy_trainer_vs_trl_grpo, bench_policy_trainer_vs_trl_grpo_memory]
