"""PolicyTrainer at scale (issue 27): micro-batches with gradient accumulation equal the
full-batch step, chunked per-token log-probs equal the full computation and hold less memory,
LoRA through peft (reference = adapter disabled, adapter-only snapshots and checkpoints),
``optimizer=`` / ``lr_scheduler=``, ``task=None`` with TRL reward functions, bf16 autocast and
re-scoring, and the GPU script's ``--tiny`` CPU run."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest
import torch

from optzoo.llm import Addition, char_tokenizer
from optzoo.llm.models import TinyLlama
from optzoo.llm.sampling import token_logprobs
from optzoo.policy.trainer import (
    GNIVO,
    GRPO,
    OffPolicyGRPO,
    PolicyTrainer,
    Reinforce,
    TrainerConfig,
)

TASK = Addition(digits=1)
ROOT = Path(__file__).resolve().parents[2]


def _model(seed=0):
    tok = char_tokenizer()
    model = TinyLlama(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2).build(
        tok, seed=seed)
    return model, tok


def parity_reward(prompts, completions):
    return [float(len(c) % 2) for c in completions]


def _trainer(algorithm, steps=2, model=None, reward=parity_reward, task=TASK, train=None,
             test=None, **kwargs):
    cfg = {k: kwargs.pop(k) for k in list(kwargs) if k in TrainerConfig.__dataclass_fields__}
    m, tok = _model()
    model = m if model is None else model
    if train is None:
        train, test = TASK.split(40, 10, seed=1)
    if kwargs.get("peft_config") is not None:
        torch.manual_seed(0)  # peft draws lora_A from the global RNG: equal runs, equal inits
    return PolicyTrainer(model, tok, task, train, test, algorithm,
                         TrainerConfig(steps=steps, lr=1e-3, eval_every=0, eval_size=5, seed=0,
                                       checkpoint_every=1, **cfg), reward=reward, **kwargs)


def _params(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


# -- micro-batches ------------------------------------------------------------------------------

MICRO = {
    "grpo-token-mean": lambda: GRPO(group_size=4, prompts_per_step=3, loss_type="bnpo"),
    "grpo-sequence-mean": lambda: GRPO(group_size=4, prompts_per_step=3, loss_type="grpo"),
    "grpo-dr-two-inner-kl": lambda: GRPO(group_size=4, prompts_per_step=3, loss_type="dr_grpo",
                                         inner_steps=2, beta=0.05),
    "offpolicy-v2": lambda: OffPolicyGRPO(group_size=4, prompts_per_step=3, sync_period=2,
                                          inner_steps=2),
    "gn-ivo-group-coupled": lambda: GNIVO(group_size=4, prompts_per_step=3, steps="token"),
    "reinforce-sum": lambda: Reinforce(group_size=4, prompts_per_step=3, baseline="rloo"),
}


@pytest.mark.parametrize("name", sorted(MICRO))
def test_micro_batches_equal_the_full_batch_step(name):
    """12 completions in micro-batches of 5 (5 + 5 + 2, accumulated) land on the parameters of
    the one-forward step, for token-mean, sequence-mean and group-coupled losses.  SGD, not
    Adam: Adam's first step is ≈ lr·sign(g), which turns float-rounding differences of
    near-zero gradients into lr-sized ones."""
    def sgd(params):
        return torch.optim.SGD(params, lr=0.5)

    full = _trainer(MICRO[name](), steps=2, optimizer=sgd)
    micro = _trainer(MICRO[name](), steps=2, per_device_train_batch_size=5, optimizer=sgd)
    start = _params(full.model)
    for _ in range(2):
        a, b = full.train_step(), micro.train_step()
        assert a["loss"] == pytest.approx(b["loss"], abs=1e-6)
    assert torch.allclose(_params(micro.model), _params(full.model), atol=1e-6)
    assert (_params(full.model) - start).abs().max() > 1e-3  # the steps moved the policy


def test_micro_batches_are_not_trls_per_micro_batch_token_mean():
    """The guard that the equality above can fail: normalising each micro-batch by its own
    token count (what plain accumulation of ``bnpo`` losses does) gives another step."""
    from optzoo.policy import grpo_advantages, grpo_loss

    tr = _trainer(GRPO(group_size=4, prompts_per_step=3, loss_type="bnpo"))
    tr._setup()
    r = tr.sample(tr.model, [p.prompt for p in tr.train[:3]], 4)
    adv = grpo_advantages(torch.tensor(parity_reward(r.prompts, r.completions)), 4)
    naive = copy.deepcopy(tr.model)
    for rows in torch.arange(12).split(5):
        sub = r.rows(rows)
        loss, _ = grpo_loss(sub.logprobs_under(naive), None, adv[rows], sub.completion_mask,
                            loss_type="bnpo")
        (loss / 3).backward()
    exact, _ = grpo_loss(r.logprobs_under(tr.model), None, adv, r.completion_mask,
                         loss_type="bnpo")
    exact.backward()
    g_naive = torch.cat([p.grad.reshape(-1) for p in naive.parameters()])
    g_exact = torch.cat([p.grad.reshape(-1) for p in tr.model.parameters()])
    assert not torch.allclose(g_naive, g_exact, atol=1e-6)
    # policy_step with micro-batches applies the exact gradient: one SGD step, lr 1, no clip
    sgd = _trainer(GRPO(group_size=4, prompts_per_step=3), per_device_train_batch_size=5,
                   grad_clip=None, optimizer=lambda p: torch.optim.SGD(p, lr=1.0))
    before = _params(sgd.model)
    sgd.policy_step(r, lambda logp: grpo_loss(logp, None, adv, r.completion_mask,
                                              loss_type="bnpo"))
    assert torch.allclose(before - _params(sgd.model), g_exact, atol=1e-6)


# -- chunked log-probs --------------------------------------------------------------------------

def _wide_models():
    """A Llama and a Qwen2 with a 4096-token vocabulary (the head dominates the logits)."""
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    common = dict(vocab_size=4096, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                  num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
    return {"llama": LlamaForCausalLM(LlamaConfig(**common)),
            "qwen2": Qwen2ForCausalLM(Qwen2Config(**common))}


def _wide_batch(n=16, p=6, c=24):
    g = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, 4096, (n, p), generator=g)
    pmask = torch.ones(n, p, dtype=torch.long)
    pmask[::3, :2] = 0  # some left padding
    comp = torch.randint(0, 4096, (n, c), generator=g)
    cmask = (torch.arange(c)[None] < torch.randint(3, c + 1, (n, 1), generator=g)).long()
    return prompt, pmask, comp, cmask


@pytest.mark.parametrize("arch", ["llama", "qwen2", "qwen2-lora"])
def test_chunked_logprobs_equal_the_full_computation_with_gradients(arch):
    model = _wide_models()[arch.removesuffix("-lora")]
    if arch.endswith("-lora"):
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "lm_head"],
                                                 init_lora_weights=False))  # B != 0: it acts
    batch = _wide_batch()
    full = token_logprobs(model, *batch, temperature=0.7)
    full.sum().backward()
    g_full = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    chunked = token_logprobs(model, *batch, temperature=0.7, chunk_size=37)
    chunked.sum().backward()
    assert torch.allclose(chunked, full, atol=1e-5)
    assert torch.equal(chunked == 0, full == 0)  # masked positions stay 0
    for a, b in zip(g_full, (p.grad for p in model.parameters()), strict=True):
        assert (a is None and b is None) or torch.allclose(a, b, atol=1e-5)


def _peak_bytes(fn) -> int:
    """Peak of torch's CPU allocations during ``fn()`` (profiler memory events, cumulated)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                    if e.name() == "[memory]")
    level = peak = 0
    for _, nbytes in events:
        level += nbytes
        peak = max(peak, level)
    return peak


def test_chunked_logprobs_hold_less_memory():
    """Backward included: chunks of 64 tokens hold 64 x 4096 fp32 logits at a time instead of
    the batch's 16 x 25 x 4096 (6.5 MB)."""
    model = _wide_models()["llama"]
    batch = _wide_batch()

    def run(chunk):
        def fn():
            token_logprobs(model, *batch, chunk_size=chunk).sum().backward()
            model.zero_grad(set_to_none=True)
        return fn

    full, chunked = _peak_bytes(run(None)), _peak_bytes(run(64))
    assert full > 16 * 25 * 4096 * 4  # the logits were there
    assert chunked < 0.5 * full


def test_trainer_with_chunked_logprobs_matches_the_unchunked_run():
    a = _trainer(GRPO(group_size=4, prompts_per_step=3, inner_steps=2, beta=0.05))
    b = _trainer(GRPO(group_size=4, prompts_per_step=3, inner_steps=2, beta=0.05),
                 logprob_chunk_size=7)
    a.fit()
    b.fit()
    assert torch.allclose(_params(a.model), _params(b.model), atol=1e-5)


# -- optimizer, scheduler -----------------------------------------------------------------------

def test_optimizer_and_lr_scheduler_arguments(tmp_path):
    def make(**kw):
        return _trainer(GRPO(group_size=4, prompts_per_step=3), steps=4,
                        optimizer=lambda params: torch.optim.SGD(params, lr=0.5, momentum=0.9),
                        lr_scheduler=lambda opt: torch.optim.lr_scheduler.LambdaLR(
                            opt, lambda s: 0.5 ** s), **kw)

    straight = make()
    straight.fit()
    assert isinstance(straight.optimizer, torch.optim.SGD)
    assert straight.optimizer.param_groups[0]["lr"] == pytest.approx(0.5 * 0.5 ** 4)
    adam = _trainer(GRPO(group_size=4, prompts_per_step=3), steps=4)
    adam.fit()
    assert not torch.allclose(_params(adam.model), _params(straight.model), atol=1e-4)
    # the scheduler's state is in the checkpoint: a resumed run continues exactly
    ck = tmp_path / "sgd.pt"
    make().fit(2, checkpoint=ck)
    resumed = make()
    resumed.fit(checkpoint=ck)
    assert torch.equal(_params(resumed.model), _params(straight.model))
    assert resumed.optimizer.param_groups[0]["lr"] == straight.optimizer.param_groups[0]["lr"]
    # an instance works too
    model, _ = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tr = _trainer(GRPO(group_size=2, prompts_per_step=2), model=model, optimizer=opt)
    assert tr.optimizer is opt


def test_optimizer_and_scheduler_errors():
    other, _ = _model(seed=1)
    with pytest.raises(ValueError, match="optimizer"):
        _trainer(GRPO(), optimizer=torch.optim.SGD(other.parameters(), lr=0.1))
    with pytest.raises(ValueError, match="optimizer"):
        _trainer(GRPO(), optimizer="adam")
    stray = torch.optim.SGD(other.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="lr_scheduler"):
        _trainer(GRPO(), lr_scheduler=torch.optim.lr_scheduler.StepLR(stray, 1))
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        _trainer(GRPO(), lr_scheduler=torch.optim.lr_scheduler.ReduceLROnPlateau)
    with pytest.raises(ValueError, match="per_device_train_batch_size"):
        TrainerConfig(per_device_train_batch_size=0)
    with pytest.raises(ValueError, match="logprob_chunk_size"):
        TrainerConfig(logprob_chunk_size=-1)
    with pytest.raises(ValueError, match="bf16"):
        TrainerConfig(bf16="yes")


# -- task=None: TRL's convention ----------------------------------------------------------------

def test_no_task_with_prompt_strings_and_dict_columns():
    seen = []

    def reward(prompts, completions, target=None, **kwargs):
        seen.append(target)  # None for the held-out prompt strings (no columns)
        return [float(len(c) % 2) for c in completions]

    train = [{"prompt": f"{i}+{i}=", "target": str(2 * i)} for i in range(5)]
    tr = _trainer(GRPO(group_size=4, prompts_per_step=2), steps=2, task=None, reward=reward,
                  train=train, test=["1+1=", "2+2="], max_new_tokens=4)
    hist = tr.fit()
    assert "accuracy" not in hist[1] and 0 <= hist[-1]["test_reward"] <= 1
    assert "test_reward" in hist[0] and "test_accuracy" not in hist[-1]
    by_prompt = {row["prompt"]: row["target"] for row in train}
    batches = [t for t in seen if t is not None]
    assert len(batches) == 2 and all(len(t) == 8 for t in batches)
    assert all(t in by_prompt.values() for t in batches[0])
    # plain prompt strings, no held-out set: no evaluation
    tr = _trainer(GRPO(group_size=4, prompts_per_step=2), steps=1, task=None,
                  reward=parity_reward, train=["1+2=", "3+4="], test=[], max_new_tokens=4)
    hist = tr.fit()
    assert [set(h) & {"test_reward", "test_accuracy"} for h in hist] == [set(), set()]


def test_no_task_spo_priors_count_rewards_as_successes():
    from optzoo.policy.trainer import SPO

    calls = []

    def one_if_long(prompts, completions):
        out = [float(len(c) >= 2) for c in completions]
        calls.append(out)
        return out

    alg = SPO(prompts_per_step=3, n0=2, sampling="uniform")
    tr = _trainer(alg, steps=1, task=None, reward=one_if_long,
                  train=[f"{i}+1=" for i in range(6)], test=[], max_new_tokens=4)
    tr._setup()
    assert tr.setup_samples == 12 and len(calls) == 1
    n = alg.tracker.n_init
    for k in range(6):  # Beta priors from each prompt's 2 offline rewards
        w = calls[0][2 * k] + calls[0][2 * k + 1]
        assert alg.tracker.alpha_beta(k)[0] == pytest.approx(n * (w + 0.5) / 3)
    assert 0 < sum(calls[0]) < 12  # the rewards were not constant
    assert "loss" in tr.train_step()
    bad = _trainer(SPO(prompts_per_step=3, n0=2), steps=1, task=None,
                   reward=lambda prompts, completions: [2.0] * len(completions),
                   train=["1+1=", "2+1="], test=[], max_new_tokens=4)
    with pytest.raises(ValueError, match="reward"):
        bad._setup()


def test_no_task_errors():
    with pytest.raises(ValueError, match="reward"):
        _trainer(GRPO(), task=None, reward=None, train=["1+2="], test=[], max_new_tokens=4)
    with pytest.raises(ValueError, match="max_new_tokens"):
        _trainer(GRPO(), task=None, train=["1+2="], test=[])
    with pytest.raises(ValueError, match="train"):
        _trainer(GRPO(), task=None, train=[{"text": "1+2="}], test=[], max_new_tokens=4)
    with pytest.raises(ValueError, match="Problem"):
        _trainer(GRPO(), train=["1+2="], test=["1+1="], max_new_tokens=4)  # a task grades rows


# -- LoRA ---------------------------------------------------------------------------------------

def _lora():
    from peft import LoraConfig

    return LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0,
                      init_lora_weights=True)


def test_lora_trains_the_adapter_and_the_reference_is_the_base():
    model, _ = _model()
    base = copy.deepcopy(model)
    tr = _trainer(GRPO(group_size=4, prompts_per_step=3, beta=0.1), steps=3, model=model,
                  peft_config=_lora())
    assert tr.peft
    lora = {n: p.detach().clone() for n, p in tr.model.named_parameters() if p.requires_grad}
    assert lora and all("lora_" in n for n in lora)
    tr.fit()
    assert tr.reference is None  # no second copy of the model
    moved = [not torch.equal(p, lora[n]) for n, p in tr.model.named_parameters() if n in lora]
    assert any(moved)
    frozen = {n.replace("base_model.model.", "").replace(".base_layer", ""): p
              for n, p in tr.model.named_parameters() if n not in lora}
    for n, p in base.named_parameters():
        assert torch.equal(frozen[n], p), n  # the base did not move
    r = tr.sample(tr.model, [tr.train[0].prompt], 4)
    ref = tr.reference_logprobs(r)
    assert torch.allclose(ref, r.logprobs_under(base), atol=1e-6)
    assert not torch.allclose(tr.policy_logprobs(r), ref, atol=1e-4)  # the adapter acts


def test_lora_snapshots_copy_the_adapter_only_and_lag():
    alg = OffPolicyGRPO(group_size=4, prompts_per_step=3, sync_period=3, beta=0.05,
                        ref_refresh_period=2)
    tr = _trainer(alg, steps=3, peft_config=_lora())
    tr.fit()  # the sampler synced at step 0, the reference refreshed at step 2
    n_adapter = sum(p.numel() for p in tr.model.parameters() if p.requires_grad)
    n_all = sum(p.numel() for p in tr.model.parameters())
    for snap in (alg._sampler, tr.reference):  # lagged sampler, refreshed reference
        assert sum(t.numel() for t in snap.parameters()) == n_adapter < n_all / 2
    r = tr.sample(tr.model, [tr.train[0].prompt], 4)
    lag = tr.sampler_logprobs(alg._sampler, r)
    assert not torch.allclose(lag, tr.sampler_logprobs(tr.model, r), atol=1e-5)
    # after the snapshot's forward the policy's own adapter is back in place
    assert torch.equal(tr.sampler_logprobs(tr.model, r), tr.sampler_logprobs(tr.model, r))


LORA_RUNS = {
    "grpo-kl": lambda: GRPO(group_size=4, prompts_per_step=3, beta=0.05, inner_steps=2),
    "offpolicy-v2-refresh": lambda: OffPolicyGRPO(group_size=4, prompts_per_step=3,
                                                  sync_period=2, ref_refresh_period=2),
}


@pytest.mark.parametrize("name", sorted(LORA_RUNS))
def test_lora_checkpoints_hold_the_adapter_and_resume_exactly(name, tmp_path):
    straight = _trainer(LORA_RUNS[name](), steps=4, peft_config=_lora())
    straight.fit()
    ck = tmp_path / "lora.pt"
    _trainer(LORA_RUNS[name](), steps=4, peft_config=_lora()).fit(3, checkpoint=ck)
    state = torch.load(ck, weights_only=False)
    assert state["model"] and all("lora_" in k for k in state["model"])
    for key in ("reference",):
        assert state[key] is None or all("lora_" in k for k in state[key])
    for v in state["algorithm_state"].values():
        assert all("lora_" in k for k in v)
    if name.startswith("offpolicy"):  # the lagged sampler and the refreshed reference, stored
        assert state["reference"] and state["algorithm_state"]["sampler"]
    resumed = _trainer(LORA_RUNS[name](), steps=4, peft_config=_lora())
    resumed.fit(checkpoint=ck)
    assert torch.equal(_params(resumed.model), _params(straight.model))


def test_full_model_checkpoint_keeps_no_sampler_copy_without_lag(tmp_path):
    ck = tmp_path / "g.pt"
    _trainer(GRPO(group_size=2, prompts_per_step=2), steps=1).fit(checkpoint=ck)
    state = torch.load(ck, weights_only=False)
    assert state["reference"] is None and state["algorithm_state"] == {}


# -- bf16 ---------------------------------------------------------------------------------------

def test_bf16_autocast_and_default_rescoring():
    fp32 = _trainer(GRPO(group_size=4, prompts_per_step=3, inner_steps=2))
    assert not fp32.rescore and not fp32.config.bf16  # the CPU fp32 path is unchanged
    tr = _trainer(GRPO(group_size=4, prompts_per_step=3, inner_steps=2), bf16=True)
    assert tr.rescore
    r = fp32.sample(fp32.model, [fp32.train[0].prompt], 4)
    with torch.no_grad():
        assert (tr.logprobs(tr.model, r) - fp32.logprobs(fp32.model, r)).abs().max() > 1e-4
    row = tr.train_step()
    assert torch.isfinite(torch.tensor(row["loss"]))
    assert not _trainer(GRPO(), bf16=True, rescore_logprobs=False).rescore


# -- the GPU script ------------------------------------------------------------------------------

def test_gpu_script_tiny_runs_on_cpu(tmp_path):
    path = ROOT / "benchmarks" / "gpu" / "policy_qwen2_05b.py"
    spec = importlib.util.spec_from_file_location("policy_qwen2_05b", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "gpu.json"
    assert mod.main(["--tiny", "--steps", "2", "--micro-batch", "6", "--lora",
                     "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["device"] == "cpu" and res["parameters"] > 0 and res["steps"] == 2
    assert res["tokens_per_s"] > 0 and res["peak_memory_bytes"] > 0
    assert all(torch.isfinite(torch.tensor(res["losses"])))
    # CPU bf16 autocast: decode and full forward agree closely (the GPU is where they do not);
    # re-scoring makes the first-step ratio exactly 1, and bf16 is really on
    before, after = res["bf16_ratio_error_before_rescoring"], res["bf16_ratio_error_after"]
    assert after <= before and after < 1e-6
    assert res["bf16_vs_fp32_logprob_error"] > 1e-4
