"""The TRL adapters (:mod:`optzoo.policy.trl`) on a tiny random Llama on CPU.

For each adapter: a few real ``GRPOTrainer`` steps run; the loss TRL back-propagates equals the
package's pure loss on the tensors TRL passed in (captured inside ``_compute_loss``: the
inputs and the policy's per-token log-probs), value and gradient; resuming from a TRL
checkpoint continues the method's state exactly as the uninterrupted run.
"""

from __future__ import annotations

import os

import pytest
import torch
import trl
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from optzoo.policy import gn_ivo_loss, grpo_loss, offpolicy_grpo_loss, spo_advantages
from optzoo.policy.trl import (
    STATE_FILE,
    TRL_PIN,
    GNIVOConfig,
    GNIVOTrainer,
    OffPolicyGRPOConfig,
    OffPolicyGRPOTrainer,
    SPOConfig,
    SPOTrainer,
)

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
T = 6  # max completion length


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    vocab = {c: i for i, c in enumerate(["<pad>", "<eos>", *"0123456789+=\n"])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                      pad_token_id=0, eos_token_id=1, bos_token_id=1)
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(cfg).save_pretrained(folder)
    hf_tok.save_pretrained(folder)
    return str(folder)


def reward(prompts, completions, **kwargs):
    # binary, so SPO's Beta tracker applies; ~1/3 of random completions contain a "1"
    return [float("1" in c) for c in completions]


DATA = Dataset.from_dict({"prompt": [f"{i}+{j}=" for i in range(4) for j in range(2)]})


def _trainer(cls, config_cls, model_dir, out, **kw):
    assert trl.__version__ == TRL_PIN
    args = config_cls(output_dir=str(out), report_to="none", use_cpu=True,
                      max_completion_length=T, logging_steps=1, disable_tqdm=True,
                      learning_rate=1e-2,
                      **{"per_device_train_batch_size": 4, "save_strategy": "no",
                         "max_steps": 4, **kw})
    return cls(model=LlamaForCausalLM.from_pretrained(model_dir), reward_funcs=reward,
               args=args, train_dataset=DATA,
               processing_class=PreTrainedTokenizerFast.from_pretrained(model_dir))


def _capture(trainer):
    """Record, at every loss call, TRL's inputs, the policy log-probs the loss used, the loss
    and its gradient with respect to those log-probs."""
    calls = []
    forward, compute = trainer._get_per_token_logps_and_entropies, trainer._compute_loss

    def logps(*args, **kwargs):
        out = forward(*args, **kwargs)
        logps.last = out[0]
        return out

    def loss_fn(model, inputs):
        loss = compute(model, inputs)
        (grad,) = torch.autograd.grad(loss, logps.last, retain_graph=True)
        calls.append({"inputs": inputs, "logp": logps.last.detach(), "loss": loss.detach(),
                      "grad": grad})
        return loss

    trainer._get_per_token_logps_and_entropies = logps
    trainer._compute_loss = loss_fn
    return calls


def _pure(call, fn, scale=1.0):
    """The captured loss and gradient equal ``fn(logp)[0] / scale`` (the pure loss)."""
    leaf = call["logp"].clone().requires_grad_(True)
    loss = fn(leaf)[0] / scale
    (grad,) = torch.autograd.grad(loss, leaf)
    torch.testing.assert_close(call["loss"], loss.detach(), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(call["grad"], grad, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------------------------


def test_offpolicy_grpo_trains_with_a_lagged_sampler_and_its_loss_is_the_pure_loss(
        model_dir, tmp_path):
    # v = 2 rounds between syncs, i = 2 inner steps per round: rounds 0, 1, 2 = steps 0..5
    trainer = _trainer(OffPolicyGRPOTrainer, OffPolicyGRPOConfig, model_dir, tmp_path,
                       num_generations=2, sync_period=2, num_iterations=2, beta=0.04,
                       max_steps=6)
    calls = _capture(trainer)
    trainer.train()
    assert trainer.rounds == 3 and trainer.last_sync == 2
    assert len(calls) == 6
    lagged = [c for c in calls if "sampler_per_token_logps" in c["inputs"]]
    assert len(lagged) == 2  # the two inner steps of round 1, the only round with lag 1
    for c in calls:
        x = c["inputs"]
        anchor = x["old_per_token_logps"]
        sampler = x.get("sampler_per_token_logps", anchor)
        _pure(c, lambda logp, x=x, anchor=anchor, sampler=sampler: offpolicy_grpo_loss(
            logp, sampler, anchor, x["advantages"], x["completion_mask"],
            group_mask=x["group_mask"], ref_logp=x["ref_per_token_logps"], beta=0.04,
            epsilon=0.2, loss_type="grpo", max_completion_length=T))
        # G = 2: a group is masked exactly when its two rewards tie, i.e. its advantages are 0
        assert torch.equal(x["group_mask"].bool(), x["advantages"] != 0)
    for c in lagged:
        x = c["inputs"]
        mask = x["completion_mask"].bool()
        # α of round 1 is the policy synced at round 0: the initial weights (those of the
        # reference model, scored by TRL's own forward), not π_1
        torch.testing.assert_close(x["sampler_per_token_logps"][mask],
                                   x["ref_per_token_logps"][mask], rtol=0, atol=1e-6)
        assert (x["old_per_token_logps"] - x["sampler_per_token_logps"])[mask].abs().max() > 1e-4
    logged = [h for h in trainer.state.log_history if "offpolicy/lag" in h]
    assert [h["offpolicy/lag"] for h in logged] == [0.0, 1.0, 0.0]
    assert all("offpolicy/anchor_shift" in h for h in trainer.state.log_history[:-1])


class _FakeEngine:
    """Stands for TRL's ``VLLMGeneration`` (vLLM is not installed here): an engine with its
    own copy of the weights, refreshed only by ``sync_weights``, that samples with that copy
    and returns the sampled tokens' log-probs under it, in vLLM's (B, T, 1) layout."""

    def __init__(self, trainer):
        self.trainer, self.syncs = trainer, []
        self.model = LlamaForCausalLM.from_pretrained(trainer.model.name_or_path).eval()

    def sync_weights(self):
        self.syncs.append(self.trainer.state.global_step)
        self.model.load_state_dict(self.trainer.model.state_dict())

    def generate(self, prompts, images, num_generations, profiler=None):
        # TRL passes each prompt num_generations times; vLLM samples n per unique prompt
        rows = [p for p in prompts[::num_generations] for _ in range(num_generations)]
        ids = torch.tensor(rows)  # the test's prompts all have the same length
        with torch.no_grad():
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                                      max_new_tokens=T, pad_token_id=0, eos_token_id=1)
            logp = torch.log_softmax(self.model(out).logits[:, :-1].float(), -1)
        logp = logp.gather(-1, out[:, 1:].unsqueeze(-1)).squeeze(-1)[:, ids.shape[1] - 1:]
        completions, logprobs = [], []
        for seq, lp in zip(out[:, ids.shape[1]:].tolist(), logp.tolist(), strict=True):
            end = seq.index(1) + 1 if 1 in seq else len(seq)
            completions.append(seq[:end])
            logprobs.append([[x] for x in lp[:end]])
        return rows, completions, logprobs, None


def test_offpolicy_grpo_with_vllm_syncs_the_engine_every_v_rounds(model_dir, tmp_path):
    trainer = _trainer(OffPolicyGRPOTrainer, OffPolicyGRPOConfig, model_dir, tmp_path,
                       num_generations=2, sync_period=2, max_steps=4)
    trainer.use_vllm, trainer._last_loaded_step = True, -1  # what TRL sets with use_vllm=True
    trainer.vllm_generation = engine = _FakeEngine(trainer)
    calls = _capture(trainer)
    trainer.train()
    assert engine.syncs == [0, 2]  # rounds 0 and 2 (TRL alone would sync at 0, 1, 2, 3)
    assert [h["offpolicy/lag"] for h in trainer.state.log_history
            if "offpolicy/lag" in h] == [0.0, 1.0, 0.0, 1.0]
    for j, c in enumerate(calls):
        x = c["inputs"]
        assert "sampler_per_token_logps" not in x  # α's log-probs are the engine's
        anchor, sampler = x["old_per_token_logps"], x["sampling_per_token_logps"]
        mask = x["completion_mask"].bool()
        gap = float((anchor - sampler)[mask].abs().max())
        # lag 0: α = π_k up to the engine's arithmetic (this fake scores with a plain
        # log_softmax, TRL with its fused head: ~3e-4 apart); lag 1: α = π_{k-1}
        assert (gap < 2e-3) if j % 2 == 0 else (gap > 2e-2)
        _pure(c, lambda logp, x=x, anchor=anchor, sampler=sampler: offpolicy_grpo_loss(
            logp, sampler, anchor, x["advantages"], x["completion_mask"],
            group_mask=x["group_mask"], loss_type="grpo", max_completion_length=T))


@pytest.mark.parametrize("loss_type", ["bnpo", "dapo"])
def test_offpolicy_grpo_accumulation_normalisers_match_the_pure_loss(model_dir, tmp_path,
                                                                      loss_type):
    # two micro-batches per optimizer step: bnpo is divided by 2, dapo normalised by the
    # tokens of the accumulation window (TRL's conventions)
    trainer = _trainer(OffPolicyGRPOTrainer, OffPolicyGRPOConfig, model_dir, tmp_path,
                       num_generations=2, per_device_train_batch_size=2,
                       gradient_accumulation_steps=2, loss_type=loss_type, max_steps=2)
    calls = _capture(trainer)
    trainer.train()
    assert len(calls) == 4
    for c in calls:
        x = c["inputs"]
        anchor = c["logp"] if x.get("old_per_token_logps") is None else x["old_per_token_logps"]
        scale = 1.0 if loss_type == "dapo" else 2.0
        items = x["num_items_in_batch"] if loss_type == "dapo" else None
        _pure(c, lambda logp, x=x, anchor=anchor, items=items, scale=scale: offpolicy_grpo_loss(
            logp, anchor, anchor, x["advantages"], x["completion_mask"],
            group_mask=x["group_mask"], loss_type=loss_type, max_completion_length=T,
            num_items_in_batch=items), scale)


def test_spo_trains_single_stream_with_the_tracker(model_dir, tmp_path):
    trainer = _trainer(SPOTrainer, SPOConfig, model_dir, tmp_path, n0=2, max_steps=4)
    tok = trainer.processing_class
    drawn = []  # (keys, tracker values at the draw) of every round
    draw = trainer._draw

    def record():
        keys = draw()
        drawn.append((keys, dict(zip(keys, trainer.tracker.values(keys).tolist(),
                                     strict=True))))
        return keys

    trainer._draw = record
    calls = _capture(trainer)
    trainer.train()
    keys = list(range(len(DATA)))
    # every round was absorbed (the last one too, at its optimizer step's end)
    assert sum(trainer.tracker.visits(k) for k in keys) == 4 * 4
    assert trainer._pending is None
    for key in keys:  # the tracker's visits are the prompts the sampler drew
        assert trainer.tracker.visits(key) == sum(r.count(key) for r, _ in drawn)
    # priors from n0 = 2 samples each: N_0 = 1/(1 − ρ_min) = 8 pseudo-counts, then forgetting
    a, b = trainer.tracker.alpha_beta(drawn[0][0][0])
    assert 0 < a + b < 8 + 1
    assert len(calls) == len(drawn) == 4  # one micro-batch per round
    for c, (round_keys, values) in zip(calls, drawn, strict=True):
        x = c["inputs"]
        # the generated prompts are the drawn ones (rows shuffled by TRL), one response each
        prompts = [t.replace(" ", "")  # the word-level decoder joins tokens with spaces
                   for t in tok.batch_decode(x["prompt_ids"], skip_special_tokens=True)]
        assert sorted(prompts) == sorted(DATA["prompt"][k] for k in round_keys)
        row_keys = [DATA["prompt"].index(p) for p in prompts]
        completions = tok.batch_decode(x["completion_ids"], skip_special_tokens=True)
        rewards = torch.tensor(reward(prompts, completions), dtype=torch.float64)
        v = torch.tensor([values[k] for k in row_keys], dtype=torch.float64)
        # A = r − v̂ with v̂ from before this round's rewards, normalised over the round
        torch.testing.assert_close(x["advantages"].double(), spo_advantages(rewards, v),
                                   rtol=1e-5, atol=1e-6)
        _pure(c, lambda logp, x=x: grpo_loss(logp, None, x["advantages"], x["completion_mask"],
                                             loss_type="bnpo", max_completion_length=T))
    # the tracker acted: values moved between rounds
    assert any(drawn[1][1][k] != drawn[0][1][k] for k in drawn[0][0] if k in drawn[1][1])
    logged = [h for h in trainer.state.log_history if "spo/rho_mean" in h]
    assert len(logged) == 4 and all(0.875 <= h["spo/rho_mean"] <= 0.96 for h in logged)


def test_gn_ivo_keeps_groups_together_and_its_loss_is_the_pure_loss(model_dir, tmp_path):
    # 2 micro-batches per round (steps_per_generation = 2): TRL shuffles and splits the round,
    # the adapter's layout must keep each group of K = 2 in one micro-batch
    trainer = _trainer(GNIVOTrainer, GNIVOConfig, model_dir, tmp_path, num_generations=2,
                       per_device_train_batch_size=2, steps_per_generation=2,
                       gradient_accumulation_steps=2, max_steps=2, num_iterations=2)
    tok = trainer.processing_class
    calls = _capture(trainer)
    trainer.train()
    assert len(calls) == 2 * 2  # one round: i = 2 optimizer steps × 2 micro-batches
    for c in calls:
        x = {k: v.flatten(0, 1) if torch.is_tensor(v) and v.dim() >= 2 and k != "prefix_steps"
             else v for k, v in c["inputs"].items()}
        ids = x["prompt_ids"]
        assert torch.equal(ids[0::2], ids[1::2])  # consecutive rows answer the same prompt
        texts = tok.batch_decode(x["completion_ids"], skip_special_tokens=True)
        assert x["rewards"].tolist() == reward(None, texts)
        assert x["prefix_steps"].shape == (1, 1)
        _pure(c, lambda logp, x=x: gn_ivo_loss(
            logp, x["old_per_token_logps"], x["rewards"], x["completion_mask"], 2, alpha=0.2,
            step_ids=x["step_ids"], prefix_steps=x["prefix_steps"],
            ref_logp=x["ref_per_token_logps"], beta=0.04), 2.0)


# ---------------------------------------------------------------------------------------------


RESUME_CASES = {
    # sync period 3, one optimizer step per round: the checkpoint at step 2 is mid-period, so
    # the resumed round 2 must generate with the saved α (lag 2)
    "offpolicy": (OffPolicyGRPOTrainer, OffPolicyGRPOConfig,
                  dict(num_generations=2, sync_period=3)),
    "spo": (SPOTrainer, SPOConfig, dict(n0=2)),
    "gn_ivo": (GNIVOTrainer, GNIVOConfig, dict(num_generations=2, num_iterations=1)),
}


def _state(trainer):
    state = trainer._method_state()
    weights = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    return state, weights


def _assert_same(a, b, path="state"):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), path
        for j, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_same(x, y, f"{path}[{j}]")
    elif torch.is_tensor(a):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=path)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12), path
    else:
        assert a == b, path


@pytest.mark.parametrize("name", list(RESUME_CASES))
def test_resume_from_a_trl_checkpoint_continues_the_method_state(model_dir, tmp_path, name):
    cls, config_cls, kw = RESUME_CASES[name]
    full = _trainer(cls, config_cls, model_dir, tmp_path / "full", save_strategy="steps",
                    save_steps=2, **kw)
    full.train()
    checkpoint = tmp_path / "full" / "checkpoint-2"
    assert (checkpoint / STATE_FILE).exists()
    resumed = _trainer(cls, config_cls, model_dir, tmp_path / "resumed", **kw)
    resumed.train(resume_from_checkpoint=str(checkpoint))
    state, weights = _state(full)
    state_r, weights_r = _state(resumed)
    _assert_same(state, state_r)
    _assert_same(weights, weights_r, "weights")
    if name == "offpolicy":
        assert resumed.rounds == 4 and resumed.last_sync == 3
        def lags(t):  # the history of a resumed run starts with the checkpoint's
            return [h["offpolicy/lag"] for h in t.state.log_history if "offpolicy/lag" in h]
        assert lags(resumed) == lags(full) == [0.0, 1.0, 2.0, 0.0]
    if name == "spo":
        assert sum(resumed.tracker.visits(k) for k in range(len(DATA))) == 16


def test_resume_from_a_checkpoint_without_method_state_is_an_error(model_dir, tmp_path):
    full = _trainer(SPOTrainer, SPOConfig, model_dir, tmp_path / "a", n0=0, save_strategy="steps",
                    save_steps=1, max_steps=1)
    full.train()
    checkpoint = tmp_path / "a" / "checkpoint-1"
    os.remove(checkpoint / STATE_FILE)
    again = _trainer(SPOTrainer, SPOConfig, model_dir, tmp_path / "b", n0=0, max_steps=2)
    with pytest.raises(FileNotFoundError, match="resume_from_checkpoint"):
        again.train(resume_from_checkpoint=str(checkpoint))


@pytest.mark.parametrize(("config_cls", "kw", "match"), [
    (OffPolicyGRPOConfig, dict(sync_period=0), "sync_period"),
    (OffPolicyGRPOConfig, dict(loss_type="cispo"), "loss_type"),
    (OffPolicyGRPOConfig, dict(top_entropy_quantile=0.5), "top_entropy_quantile"),
    (OffPolicyGRPOConfig, dict(variance_eps=0.0), "variance_eps"),
    (OffPolicyGRPOConfig, dict(sync_period=2, use_vllm=True, vllm_enable_sleep_mode=True),
     "vllm_enable_sleep_mode"),
    (SPOConfig, dict(num_generations=2), "num_generations"),
    (SPOConfig, dict(n0=-1), "n0"),
    (SPOConfig, dict(sampling="greedy"), "sampling"),
    (SPOConfig, dict(rho_min=0.99), "rho_min"),
    (GNIVOConfig, dict(num_generations=4, per_device_train_batch_size=2,
                       steps_per_generation=2),
     "per_device_train_batch_size"),
    (GNIVOConfig, dict(steps="word"), "steps"),
    (GNIVOConfig, dict(alpha=0.0), "alpha"),
    (GNIVOConfig, dict(num_t=0), "num_t"),
])
def test_bad_config_names_the_argument(tmp_path, config_cls, kw, match):
    base = dict(output_dir=str(tmp_path), report_to="none", use_cpu=True,
                per_device_train_batch_size=4)
    if config_cls is not SPOConfig:
        base["num_generations"] = 2
    with pytest.raises(ValueError, match=match):
        config_cls(**{**base, **kw})


def test_spo_config_keeps_one_response_per_prompt(tmp_path):
    cfg = SPOConfig(output_dir=str(tmp_path), report_to="none", use_cpu=True,
                    per_device_train_batch_size=3)
    assert cfg.num_generations == 1 and type(cfg.num_generations) is int
    assert cfg.generation_batch_size == 3  # an odd batch is fine: no groups


def test_configs_parse_from_the_command_line(tmp_path):
    # TRL scripts build their config with HfArgumentParser: the new fields must parse
    from transformers import HfArgumentParser

    base = ["--output_dir", str(tmp_path), "--report_to", "none", "--use_cpu", "true"]
    (spo,) = HfArgumentParser(SPOConfig).parse_args_into_dataclasses([*base, "--n0", "3"])
    assert (spo.n0, spo.num_generations, spo.loss_type) == (3, 1, "bnpo")
    group = ["--num_generations", "2", "--per_device_train_batch_size", "4"]
    (gn,) = HfArgumentParser(GNIVOConfig).parse_args_into_dataclasses(
        [*base, *group, "--num_t", "2", "--steps", "one"])
    assert (gn.num_t, gn.steps, gn.beta, gn.num_iterations) == (2, "one", 0.04, 2)
    (off,) = HfArgumentParser(OffPolicyGRPOConfig).parse_args_into_dataclasses(
        [*base, *group, "--sync_period", "4"])
    assert (off.sync_period, off.loss_type, off.use_bias_correction_kl) == (4, "grpo", False)


@pytest.mark.parametrize("sampling", ["prioritised", "uniform"])
def test_spo_draws_prompts_by_the_tracker_priorities(model_dir, tmp_path, sampling):
    trainer = _trainer(SPOTrainer, SPOConfig, model_dir, tmp_path, sampling=sampling)
    for key in range(len(DATA)):  # keys 0-3 uncertain (v̂ = ½), 4-7 nearly solved (v̂ ≈ 0.005)
        trainer.tracker.initialize(key, *((1.0, 2) if key < 4 else (0.0, 100)))
    counts = torch.zeros(len(DATA))
    for _ in range(300):
        keys = trainer._draw()
        assert len(keys) == len(set(keys)) == 4  # without replacement: 4 of 8 candidates
        counts[keys] += 1
    ratio = float(counts[:4].sum() / counts[4:].sum())
    # weights sqrt(v̂(1 − v̂)) + 0.05: 0.55 vs ≈ 0.12 per prompt
    assert ratio > 2.0 if sampling == "prioritised" else 0.8 < ratio < 1.25
