"""PolicyTrainer: the loop's bookkeeping, every algorithm's update rule against its loss function,
exact resumption from checkpoints, and errors."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import torch

from optzoo.llm import Addition, char_tokenizer
from optzoo.llm.models import TinyLlama
from optzoo.policy import grpo_advantages, grpo_loss
from optzoo.policy.trainer import (
    GNIVO,
    GRPO,
    SPO,
    Algorithm,
    OffPolicyGRPO,
    PolicyTrainer,
    Reinforce,
    TrainerConfig,
)

TASK = Addition(digits=1)
CHAIN = Addition(digits=1, operands=3, steps=True)


def _model(seed=0):
    tok = char_tokenizer()
    model = TinyLlama(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2).build(
        tok, seed=seed)
    return model, tok


def parity_reward(prompts, completions):
    """A reward a random model earns half the time (exact-match rewards would all be 0, every
    group degenerate and the policy would never move)."""
    return [float(len(c) % 2) for c in completions]


def _trainer(algorithm, task=TASK, steps=3, seed=0, reward=parity_reward, **cfg):
    model, tok = _model()
    train, test = task.split(40, 10, seed=1)
    return PolicyTrainer(model, tok, task, train, test, algorithm,
                         TrainerConfig(steps=steps, lr=1e-3, eval_every=2, eval_size=10,
                                       seed=seed, checkpoint_every=1, **cfg), reward=reward)


def _params(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


ALGORITHMS = [
    lambda: GRPO(group_size=4, prompts_per_step=3),
    lambda: GRPO(group_size=4, prompts_per_step=3, inner_steps=2, beta=0.05),
    lambda: OffPolicyGRPO(group_size=4, prompts_per_step=3, sync_period=2, inner_steps=2),
    lambda: SPO(prompts_per_step=6, n0=2),
    lambda: GNIVO(group_size=3, prompts_per_step=3, steps="token"),
    lambda: Reinforce(group_size=3, prompts_per_step=3, baseline="rloo"),
]


@pytest.mark.parametrize("make", ALGORITHMS)
def test_history_bookkeeping(make):
    tr = _trainer(make(), steps=3)
    hist = tr.fit()
    assert [h["step"] for h in hist] == [0, 1, 2, 3]
    assert "test_accuracy" in hist[0] and "test_accuracy" in hist[2] and "test_accuracy" in hist[3]
    assert "test_accuracy" not in hist[1]
    per_step = [h["samples"] for h in hist[1:]]
    n = per_step[0]
    assert per_step == [n, 2 * n, 3 * n]
    for h in hist[1:]:
        assert 0 <= h["accuracy"] <= 1 and 0 <= h["reward"] <= 1
        assert h["tokens"] > 0 and h["tokens_per_s"] > 0
        assert 0 <= h["degenerate_frac"] <= 1
    assert hist[-1]["wall_s"] >= hist[1]["wall_s"] > 0


@pytest.mark.parametrize("make", ALGORITHMS)
def test_resume_equals_uninterrupted(make, tmp_path):
    straight = _trainer(make(), steps=4)
    straight.fit()
    ck = tmp_path / "run.pt"
    first = _trainer(make(), steps=4)
    first.fit(2, checkpoint=ck)
    resumed = _trainer(make(), steps=4)  # a fresh process: same init, then the checkpoint
    resumed.fit(checkpoint=ck)
    assert resumed.step == 4
    assert torch.equal(_params(resumed.model), _params(straight.model))
    drop = ("wall_s", "tokens_per_s")
    strip = [{k: v for k, v in h.items() if k not in drop} for h in straight.history]
    assert [{k: v for k, v in h.items() if k not in drop} for h in resumed.history] == strip


def test_grpo_step_is_one_adam_step_on_trl_loss():
    """The trainer's GRPO update equals a hand-made step: sample with the same generator, TRL's
    advantages and loss, clip, AdamW."""
    alg = GRPO(group_size=4, prompts_per_step=2)
    tr = _trainer(alg, steps=1)
    tr._setup()
    model = copy.deepcopy(tr.model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    gen = torch.Generator().manual_seed(0)
    rng = __import__("numpy").random.default_rng(0)
    idx = rng.choice(len(tr.train), size=2, replace=False).tolist()
    from optzoo.llm import rollout
    model.eval()
    r = rollout(model, tr.tokenizer, [tr.train[i].prompt for i in idx], num_samples=4,
                max_new_tokens=tr.max_new_tokens, generator=gen)
    rewards = torch.tensor(parity_reward(r.prompts, r.completions))
    model.train()
    loss, _ = grpo_loss(r.logprobs_under(model), None, grpo_advantages(rewards, 4),
                        r.completion_mask, loss_type="grpo")
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    row = tr.train_step()
    assert row["reward"] == pytest.approx(rewards.mean().item())
    assert row["loss"] == pytest.approx(loss.item(), abs=1e-6)
    assert torch.allclose(_params(tr.model), _params(model), atol=1e-6)


def test_offpolicy_sampler_lags_by_the_sync_period():
    alg = OffPolicyGRPO(group_size=4, prompts_per_step=2, sync_period=3, mask_zero_variance=False)
    tr = _trainer(alg, steps=7)
    snapshots = []
    moved = []
    tr._setup()
    for step in range(7):
        before = _params(tr.model)
        sampler = alg.sampler(tr, step)  # what train_step will call (syncs are idempotent)
        snapshots.append((step, torch.equal(_params(sampler), before)))
        row = tr.train_step()
        moved.append(not torch.equal(_params(tr.model), before))
        assert row["syncs"] == -(-(step + 1) // 3)
        assert row["lag"] == step % 3
    assert all(moved)
    # the sampler equals the policy exactly at the sync steps 0, 3, 6
    assert [s for s, same in snapshots if same] == [0, 3, 6]


def test_offpolicy_with_v1_matches_grpo_up_to_advantage_scaling():
    """v = 1, i = 1, no mask, β = 0: the paper's loss is GRPO's clipped surrogate; with equal
    advantages the two trainers take the same step."""

    class Whitened(GRPO):
        def update(self, trainer, batch, step):  # GRPO with the paper's whitened advantage
            from optzoo.policy import whitened_advantages
            r = batch.rollout
            adv = whitened_advantages(batch.rewards, self.group_size, eps=1e-4)
            loss, _ = grpo_loss(trainer.policy_logprobs(r), None, adv, r.completion_mask,
                                loss_type="grpo")
            trainer.optimizer_step(loss)
            return {"loss": loss.item(), "degenerate_frac": 0.0}

    a = _trainer(Whitened(group_size=4, prompts_per_step=2), steps=1)
    b = _trainer(OffPolicyGRPO(group_size=4, prompts_per_step=2, sync_period=1,
                               mask_zero_variance=False, beta=0.0, ref_refresh_period=None),
                 steps=1)
    a.fit()
    b.fit()
    # the sampler's KV-cache log-probs differ from a full forward's by ~1e-7, so the off-policy
    # ratio is 1 ± 1e-7 where GRPO's is exactly 1; Adam's first step (≈ lr·sign(g)) turns that
    # into ~1e-6 differences on parameters whose gradient is ~0
    assert torch.allclose(_params(a.model), _params(b.model), atol=1e-5)
    assert not torch.equal(_params(a.model), _params(_trainer(GRPO()).model))


RESCORED = {
    "offpolicy-v1": lambda rescore: OffPolicyGRPO(group_size=4, prompts_per_step=2,
                                                  rescore_sampler=rescore),
    "offpolicy-v2": lambda rescore: OffPolicyGRPO(group_size=4, prompts_per_step=2,
                                                  sync_period=2, rescore_sampler=rescore),
    "gn-ivo": lambda rescore: GNIVO(group_size=2, prompts_per_step=2, steps="token",
                                    rescore_old=rescore),
}


@pytest.mark.parametrize("name", sorted(RESCORED))
def test_rescoring_replaces_the_decode_logprobs(name):
    """``rescore_sampler`` / ``rescore_old`` = True take the sampler's log-probs from a full
    forward of its weights: log-probs recorded while decoding that are off by noise of std 0.3
    then change nothing, while the default on CPU (the recorded log-probs) moves the run."""
    def run(rescore, corrupt):
        tr = _trainer(RESCORED[name](rescore), steps=2)
        if corrupt:
            sample = tr.sample

            def shifted(*args, **kwargs):
                r = sample(*args, **kwargs)
                # noise, not a constant shift: Adam is blind to a gradient's scale
                noise = torch.randn(r.logprobs.shape, generator=torch.Generator().manual_seed(9))
                r.logprobs = r.logprobs + 0.3 * noise * r.completion_mask
                return r

            tr.sample = shifted
        tr.fit()
        return _params(tr.model)

    clean = run(True, False)
    assert torch.allclose(run(True, True), clean, atol=1e-5)
    assert torch.allclose(run(None, False), clean, atol=1e-5)  # fp32 CPU: both paths agree
    assert not torch.allclose(run(None, True), clean, atol=1e-5)


def test_spo_tracker_absorbs_each_sampled_reward():
    alg = SPO(prompts_per_step=5, n0=3)
    tr = _trainer(alg, steps=1)
    tr._setup()
    assert tr.setup_samples == 3 * len(tr.train)
    before = {k: alg.tracker.alpha_beta(k) for k in range(len(tr.train))}
    tr.train_step()
    visited = [k for k in range(len(tr.train)) if alg.tracker.visits(k)]
    assert len(visited) == 5
    for k in range(len(tr.train)):
        a, b = alg.tracker.alpha_beta(k)
        if k in visited:
            # first visit: no stored response, so D = 0 and ρ = ρ_max; a + b grows by one
            a0, b0 = before[k]
            assert a + b == pytest.approx(alg.rho_max * (a0 + b0) + 1)
            assert alg.tracker.stored_response(k) is not None
        else:
            assert (a, b) == before[k]


def test_spo_second_visit_measures_divergence_of_the_stored_response():
    alg = SPO(prompts_per_step=40, n0=0, sampling="uniform")  # every prompt every step
    tr = _trainer(alg, steps=2)
    tr.fit()
    rho = tr.history[-1]["rho_mean"]
    # the policy moved (lr 1e-3), so D > 0 and ρ < ρ_max on the second visit
    assert alg.rho_min <= rho < alg.rho_max


def _logp_by_hand(model, tok, prompt, completion_ids):
    """log π(completion | prompt) per token, from one plain forward of prompt + completion."""
    p = tok([prompt], return_tensors="pt")["input_ids"][0]  # BOS + prompt, as sampled
    ids = torch.cat([p, completion_ids])[None]
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, p.numel() - 1:-1]
    return torch.log_softmax(logits.double(), -1).gather(-1, completion_ids[:, None])[:, 0]


def _record_batches(alg):
    """Wrap ``alg.update`` so that the last batch it saw is kept in the returned dict."""
    seen = {}
    update = alg.update

    def spy(trainer, batch, step):
        seen["batch"] = batch
        return update(trainer, batch, step)

    alg.update = spy
    return seen


def test_spo_two_visits_recompute_d_rho_and_the_beta_update_by_hand():
    """Visit 2 of every prompt: D = mean |log π_then − log π_now| over the response stored at
    visit 1 (π_now: the policy after visit 2's update), ρ = clip(2^(−D/0.06), ρ_min, ρ_max),
    a ← ρa + r, b ← ρb + (1 − r): all recomputed outside the trainer."""
    alg = SPO(prompts_per_step=40, n0=0, sampling="uniform")  # every prompt at every step
    tr = _trainer(alg, steps=2)
    tr._setup()
    tr.train_step()
    stored = {k: alg.tracker.stored_response(k) for k in range(40)}
    ab1 = {k: alg.tracker.alpha_beta(k) for k in range(40)}
    seen = _record_batches(alg)
    tr.train_step()
    batch = seen["batch"]
    assert sorted(batch.index.tolist()) == list(range(40))
    ds = []
    for row, k in enumerate(batch.index.tolist()):
        ids, then = stored[k]
        now = _logp_by_hand(tr.model, tr.tokenizer, tr.train[k].prompt, ids)
        d = (then.double() - now).abs().mean().item()
        rho = min(max(2.0 ** (-d / 0.06), alg.rho_min), alg.rho_max)
        r = batch.rewards[row].item()
        a, b = alg.tracker.alpha_beta(k)
        assert a == pytest.approx(rho * ab1[k][0] + r, abs=1e-5)
        assert b == pytest.approx(rho * ab1[k][1] + 1 - r, abs=1e-5)
        ds.append(d)
    # the policy moved between the visits, so the proxy is not trivially zero
    assert max(ds) > 1e-3


def test_spo_mini_batches_are_verl_ppo_steps_with_rescored_old_logprobs():
    """``mini_batches=2``: the old log-probs come from a full no-grad forward before the update;
    two AdamW steps on consecutive halves, clip-higher and the dual-clip cap included."""
    alg = SPO(prompts_per_step=6, n0=0, sampling="uniform", mini_batches=2, epsilon_high=0.28,
              loss_type="bnpo", delta=10.0)
    tr = _trainer(alg, steps=1)
    tr._setup()
    model = copy.deepcopy(tr.model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    seen = _record_batches(alg)
    tr.train_step()
    batch = seen["batch"]
    r = batch.rollout
    raw = batch.rewards.double() - 0.5  # untouched priors: v̂ = 0.5 for every prompt
    adv = ((raw - raw.mean()) / (raw.std() + 1e-8)).float()
    with torch.no_grad():
        old = r.logprobs_under(model)
    for rows in (torch.arange(0, 3), torch.arange(3, 6)):
        sub = r.rows(rows)
        loss, _ = grpo_loss(sub.logprobs_under(model), old[rows], adv[rows], sub.completion_mask,
                            epsilon_high=0.28, loss_type="bnpo", delta=10.0)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    assert torch.allclose(_params(tr.model), _params(model), atol=1e-6)
    # one step on the whole batch lands elsewhere: the split is not cosmetic
    one = _trainer(SPO(prompts_per_step=6, n0=0, sampling="uniform", epsilon_high=0.28,
                       loss_type="bnpo", delta=10.0), steps=1)
    one.fit()
    assert not torch.allclose(_params(one.model), _params(model), atol=1e-6)


def test_grpo_loss_delta_is_verls_dual_clip():
    """verl's dual clip, for A < 0: min(−A·c, max(−Aρ, −A·clip(ρ, 1 − ε_l, 1 + ε_h))), and the
    plain clipped loss for A ≥ 0, equals grpo_loss with ``delta = c`` (token-mean)."""
    g = torch.Generator().manual_seed(3)
    logp = torch.randn(5, 7, generator=g) * 2
    old = torch.randn(5, 7, generator=g) * 2
    adv = torch.randn(5, generator=g)
    mask = torch.ones(5, 7)
    ratio = (logp - old).exp()
    a = adv[:, None].expand_as(ratio)
    clipped = torch.maximum(-a * ratio, -a * ratio.clamp(0.8, 1.28))
    verl = torch.where(a < 0, torch.minimum(-a * 3.0, clipped), clipped).mean()
    ours, _ = grpo_loss(logp, old, adv, mask, epsilon_high=0.28, loss_type="bnpo", delta=3.0)
    assert ours.item() == pytest.approx(verl.item(), rel=1e-6)
    assert (ratio > 3.0).any() and (adv < 0).any()  # the cap is exercised


def test_spo_verl_recipe_settings():
    alg = SPO.verl_recipe()
    assert (alg.prompts_per_step, alg.mini_batches, alg.n0) == (1024, 8, 8)
    assert (alg.epsilon, alg.epsilon_high, alg.delta, alg.loss_type) == (0.2, 0.28, 10.0, "bnpo")
    assert alg.beta == 0.0 and alg.rho_min == 0.875 and alg.sampling == "prioritised"
    assert SPO.verl_recipe(prompts_per_step=64).prompts_per_step == 64
    assert SPO().n0 == 8
    with pytest.raises(ValueError, match="unknown SPO fields"):
        SPO.verl_recipe(clip_ratio_high=0.3)


def test_gnivo_line_steps_split_at_the_separator():
    alg = GNIVO(group_size=2, prompts_per_step=2, steps="line")
    tr = _trainer(alg, task=CHAIN)
    ids = tr.tokenizer(["1+2=3;3+4=7"], add_special_tokens=False,
                       return_tensors="pt")["input_ids"]
    mask = torch.ones_like(ids)
    r = type("R", (), {"completion_ids": ids, "completion_mask": mask})()
    sids = alg.step_ids(tr, r)
    assert sids.tolist() == [[0] * 6 + [1] * 5]
    assert torch.equal(GNIVO(steps="one").step_ids(tr, r), torch.zeros_like(ids))
    assert GNIVO(steps="token").step_ids(tr, r) is None


def test_nonfinite_loss_raises():
    class Broken(GRPO):
        def update(self, trainer, batch, step):
            trainer.optimizer_step(torch.tensor(float("nan"), requires_grad=True))
            return {}

    tr = _trainer(Broken(group_size=2, prompts_per_step=1))
    with pytest.raises(FloatingPointError, match="non-finite loss"):
        tr.train_step()


def test_checkpoint_of_another_algorithm_is_refused(tmp_path):
    ck = tmp_path / "a.pt"
    _trainer(GRPO(group_size=2, prompts_per_step=2), steps=1).fit(checkpoint=ck)
    other = _trainer(Reinforce(group_size=2, prompts_per_step=2), steps=2)
    with pytest.raises(ValueError, match="algorithm 'grpo'"):
        other.fit(checkpoint=ck)


@pytest.mark.parametrize("kwargs, match", [
    ({"steps": -1}, "steps"), ({"lr": 0.0}, "lr"), ({"grad_clip": -1.0}, "grad_clip"),
    ({"temperature": 0}, "temperature"), ({"eval_size": 0}, "eval_size"),
    ({"max_new_tokens": 0}, "max_new_tokens"), ({"seed": -2}, "seed"),
])
def test_config_errors_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrainerConfig(**kwargs)


@pytest.mark.parametrize("make, match", [
    (lambda: GRPO(group_size=1), "group_size"), (lambda: GRPO(inner_steps=0), "inner_steps"),
    (lambda: OffPolicyGRPO(sync_period=0), "sync_period"),
    (lambda: SPO(sampling="greedy"), "sampling"), (lambda: SPO(baseline="critic"), "baseline"),
    (lambda: SPO(loss_type="sum"), "loss_type"), (lambda: SPO(mini_batches=0), "mini_batches"),
    (lambda: SPO(prompts_per_step=4, mini_batches=5), "mini_batches"),
    (lambda: SPO(delta=0.5), "delta"), (lambda: SPO(epsilon_high=-1.0), "epsilon_high"),
    (lambda: GNIVO(steps="word"), "steps"), (lambda: GNIVO(alpha=0.0), "alpha"),
    (lambda: GNIVO(num_t=0), "num_t"), (lambda: Reinforce(baseline="value"), "baseline"),
])
def test_algorithm_errors_name_the_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_trainer_argument_errors():
    model, tok = _model()
    train, test = TASK.split(10, 5, seed=0)
    with pytest.raises(ValueError, match="algorithm"):
        PolicyTrainer(model, tok, TASK, train, test, "grpo")
    with pytest.raises(ValueError, match="train"):
        PolicyTrainer(model, tok, TASK, [], test, GRPO())
    with pytest.raises(ValueError, match="task"):
        PolicyTrainer(model, tok, "addition", train, test, GRPO())
    assert isinstance(GRPO(), Algorithm)


def test_fit_evaluates_at_its_own_last_step():
    tr = _trainer(GRPO(group_size=2, prompts_per_step=2), steps=10)
    tr.config = dataclasses.replace(tr.config, eval_every=0)
    hist = tr.fit(3)
    assert [("test_accuracy" in h) for h in hist] == [True, False, False, True]


def test_reference_model_kept_only_for_a_kl_penalty():
    without = _trainer(GRPO(group_size=2, prompts_per_step=2, beta=0.0), steps=1)
    without.fit()
    assert without.reference is None  # no second copy of the model without a KL term
    with_kl = _trainer(GRPO(group_size=2, prompts_per_step=2, beta=0.1), steps=1)
    initial = _params(with_kl.model)
    with_kl.fit()
    assert torch.equal(_params(with_kl.reference), initial)  # the initial policy, frozen
    assert not torch.equal(_params(with_kl.model), initial)
