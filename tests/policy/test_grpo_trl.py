"""Reference test: optzoo's GRPO-family losses equal TRL's own ``GRPOTrainer._compute_loss`` on
identical tensors.

A real ``GRPOTrainer`` is built per configuration around a tiny random Llama (saved to a
temporary folder so that TRL can load its reference model when beta != 0); the only thing
replaced is the model forward ``_get_per_token_logps_and_entropies``, which returns the test's
per-token log-probs, so everything from the config to the loss is TRL's code.  The TRL version is
pinned: the loss path is private and has changed between releases.
"""

from __future__ import annotations

import itertools
import tempfile

import pytest
import torch
import trl
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from trl import GRPOConfig, GRPOTrainer

from optzoo.policy import (
    SPOValueTracker,
    grpo_advantages,
    grpo_loss,
    offpolicy_grpo_loss,
    spo_advantages,
)

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # transformers 5 deprecations
TRL_PIN = "1.16.0"
B, T, G = 8, 6, 4


def test_trl_version_is_the_pinned_one():
    assert trl.__version__ == TRL_PIN, (
        f"these reference tests were written against trl {TRL_PIN} (GRPOTrainer._compute_loss is "
        f"private); found {trl.__version__}: re-read its _compute_loss, then update TRL_PIN and "
        "constraints.txt")


@pytest.fixture(scope="module")
def tiny_model_dir():
    vocab = {c: i for i, c in enumerate(["<pad>", "<eos>", *"0123456789+="])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                      pad_token_id=0, eos_token_id=1, bos_token_id=1)
    torch.manual_seed(0)
    folder = tempfile.mkdtemp(prefix="optzoo-trl-ref-")
    LlamaForCausalLM(cfg).save_pretrained(folder)
    hf_tok.save_pretrained(folder)
    return folder


def _trl_loss(model_dir, logp, inputs, *, grad_accum=1, train=True, **config):
    assert trl.__version__ == TRL_PIN, f"trl {trl.__version__} is not the pinned {TRL_PIN}"
    from datasets import Dataset

    args = GRPOConfig(output_dir=tempfile.mkdtemp(prefix="optzoo-trl-run-"), report_to="none",
                      use_cpu=True, per_device_train_batch_size=B, num_generations=G,
                      gradient_accumulation_steps=grad_accum, max_completion_length=T,
                      save_strategy="no", **config)
    trainer = GRPOTrainer(
        model=LlamaForCausalLM.from_pretrained(model_dir),
        reward_funcs=lambda prompts, completions, **kw: [0.0] * len(prompts),
        args=args, train_dataset=Dataset.from_dict({"prompt": ["1+1="] * B}),
        processing_class=PreTrainedTokenizerFast.from_pretrained(model_dir))
    leaf = logp.detach().clone().requires_grad_(True)
    # The one replaced piece: the model forward returns the test's log-probs (and zero entropy).
    trainer._get_per_token_logps_and_entropies = (
        lambda *a, **k: (leaf, torch.zeros_like(leaf), None))
    trainer.current_gradient_accumulation_steps = grad_accum
    trainer.model.train(train)
    loss = trainer._compute_loss(trainer.model, inputs)
    loss.backward()
    mode = "train" if train else "eval"
    metrics = {k: v[-1] for k, v in trainer._metrics[mode].items()}
    return loss.detach(), leaf.grad, metrics


def _batch(dtype=torch.float64, seed=1, empty_row=True):
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([6, 3, 5, 1, 6, 4, 2, 0 if empty_row else 6])
    mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).long()
    logp = -torch.rand(B, T, generator=gen, dtype=dtype) * 3 - 0.05
    old = logp + 0.3 * torch.randn(B, T, generator=gen, dtype=dtype)
    ref = logp + 0.5 * torch.randn(B, T, generator=gen, dtype=dtype)
    rewards = torch.randint(0, 2, (B,), generator=gen).to(dtype)
    rewards[:G] = torch.tensor([1.0, 0.0, 0.0, 1.0], dtype=dtype)
    adv = grpo_advantages(rewards, G)
    inputs = {
        "prompt_ids": torch.full((B, 3), 2, dtype=torch.long),
        "prompt_mask": torch.ones(B, 3, dtype=torch.long),
        "completion_ids": torch.full((B, T), 3, dtype=torch.long),
        "completion_mask": mask,
        "advantages": adv,
        "old_per_token_logps": old,
        "ref_per_token_logps": ref,
        "num_items_in_batch": mask.sum(),
    }
    return logp, old, ref, adv, mask, inputs


def _ours(logp, old, ref, adv, mask, **kw):
    leaf = logp.detach().clone().requires_grad_(True)
    loss, metrics = grpo_loss(leaf, old, adv, mask, ref_logp=ref, **kw)
    loss.backward()
    return loss.detach(), leaf.grad, metrics


def _assert_close(ours, theirs, tol):
    (l1, g1, m1), (l2, g2, m2) = ours, theirs
    torch.testing.assert_close(l1, l2.to(l1.dtype), rtol=tol, atol=tol)
    torch.testing.assert_close(g1, g2, rtol=tol, atol=tol)
    for key in ("clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean", "kl"):
        if key in m2:
            assert float(m1[key]) == pytest.approx(m2[key], rel=1e-6, abs=1e-9), key


CONFIGS = [
    dict(loss_type=lt, importance_sampling_level=lvl, beta=beta, use_bias_correction_kl=bc)
    for lt, lvl, (beta, bc) in itertools.product(
        ("grpo", "bnpo", "dr_grpo", "dapo"), ("token", "sequence"),
        ((0.0, True), (0.04, True), (0.04, False)))
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_grpo_loss_equals_trl(tiny_model_dir, config):
    logp, old, ref, adv, mask, inputs = _batch()
    theirs = _trl_loss(tiny_model_dir, logp, inputs, epsilon=0.2, epsilon_high=0.28, **config)
    ours = _ours(logp, old, ref, adv, mask, epsilon_low=0.2, epsilon_high=0.28, **config)
    assert theirs[2]["clip_ratio/region_mean"] > 0  # the clip binds somewhere: a real check
    _assert_close(ours, theirs, 1e-10)


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo"])
def test_grpo_loss_equals_trl_with_accumulation_delta_and_float32(tiny_model_dir, loss_type):
    # Two accumulation steps: TRL divides grpo/bnpo/dr_grpo by 2 and normalises dapo by the
    # generation batch's token count; optzoo leaves the division to the trainer.
    logp, old, ref, adv, mask, inputs = _batch(dtype=torch.float32, seed=3, empty_row=False)
    cfg = dict(loss_type=loss_type, beta=0.02, delta=1.25)
    l2, g2, m2 = _trl_loss(tiny_model_dir, logp, inputs, grad_accum=2, epsilon=0.15, **cfg)
    l1, g1, m1 = _ours(logp, old, ref, adv, mask, epsilon_low=0.15,
                       num_items_in_batch=mask.sum(), **cfg)
    scale = 1.0 if loss_type == "dapo" else 2.0
    _assert_close((l1 / scale, g1 / scale, m1), (l2, g2, m2), 1e-5)


def test_on_policy_single_update_equals_trl(tiny_model_dir):
    # No old log-probs: TRL uses logp.detach() (num_iterations == 1); so does grpo_loss(None).
    logp, _, _, adv, mask, inputs = _batch(seed=5)
    del inputs["old_per_token_logps"]
    theirs = _trl_loss(tiny_model_dir, logp, inputs, loss_type="grpo")
    leaf = logp.detach().clone().requires_grad_(True)
    loss, metrics = grpo_loss(leaf, None, adv, mask, loss_type="grpo")
    loss.backward()
    _assert_close((loss.detach(), leaf.grad, metrics), theirs, 1e-12)
    assert float(metrics["clip_ratio/region_mean"]) == 0.0


def test_eval_mode_equals_trl(tiny_model_dir):
    logp, old, ref, adv, mask, inputs = _batch(seed=7)
    theirs = _trl_loss(tiny_model_dir, logp, inputs, train=False, grad_accum=2, loss_type="dapo")
    ours = _ours(logp, old, ref, adv, mask, loss_type="dapo")
    _assert_close(ours, theirs, 1e-12)


def test_spo_advantages_through_trl_ppo_clip(tiny_model_dir):
    # SPO's policy loss is PPO-clip on its globally normalised advantages (one response per
    # prompt): feed Ã into TRL's loss and into grpo_loss (verl's token mean = bnpo).
    logp, old, ref, _, mask, inputs = _batch(seed=9)
    tracker = SPOValueTracker()
    keys = [f"p{i}" for i in range(B)]
    for i, k in enumerate(keys):
        tracker.initialize(k, successes=i % 4, trials=4)
    rewards = torch.tensor([1, 0, 1, 1, 0, 0, 1, 0], dtype=torch.float64)
    adv = spo_advantages(rewards, tracker.values(keys))
    inputs["advantages"] = adv
    theirs = _trl_loss(tiny_model_dir, logp, inputs, loss_type="bnpo")
    ours = _ours(logp, old, ref, adv, mask, loss_type="bnpo")
    _assert_close(ours, theirs, 1e-12)


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo"])
def test_offpolicy_loss_with_sampler_equal_to_anchor_equals_trl(tiny_model_dir, loss_type):
    # v = 1: the sampler is π_k, the clip window is centred at 1 and the paper's loss is GRPO's.
    logp, old, ref, adv, mask, inputs = _batch(seed=11)
    theirs = _trl_loss(tiny_model_dir, logp, inputs, loss_type=loss_type, beta=0.04,
                       use_bias_correction_kl=False)
    leaf = logp.detach().clone().requires_grad_(True)
    loss, metrics = offpolicy_grpo_loss(leaf, old, old, adv, mask, ref_logp=ref, beta=0.04,
                                        loss_type=loss_type)
    loss.backward()
    _assert_close((loss.detach(), leaf.grad, metrics), theirs, 1e-10)
