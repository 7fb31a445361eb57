"""PolicyTrainer's reward functions: TRL's keyword convention (dataset columns as keyword
arguments, ``completion_ids``, ``trainer_state``, ``log_metric``), lists of functions, and the
original ``reward(prompts, completions)`` convention, unchanged."""

from __future__ import annotations

import pytest
import torch

from optzoo.llm import Addition, char_tokenizer
from optzoo.llm.models import TinyLlama
from optzoo.policy.trainer import GRPO, PolicyTrainer, TrainerConfig

TASK = Addition(digits=1)


def _trainer(reward, steps: int = 2, task=TASK):
    tok = char_tokenizer()
    model = TinyLlama(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2).build(
        tok, seed=0)
    train, test = task.split(40, 10, seed=1)
    return PolicyTrainer(model, tok, task, train, test, GRPO(group_size=4, prompts_per_step=3),
                         TrainerConfig(steps=steps, lr=1e-3, eval_every=0, eval_size=4, seed=0),
                         reward=reward)


def _params(trainer):
    return torch.cat([p.detach().reshape(-1) for p in trainer.model.parameters()])


def parity(prompts, completions):
    return [float(len(c) % 2) for c in completions]


def test_trl_reward_gets_the_answer_column_and_trainer_keywords():
    seen = []

    def reward(prompts, completions, answer, completion_ids, trainer_state, **kwargs):
        seen.append((list(prompts), list(completions), list(answer), completion_ids,
                     trainer_state.global_step, sorted(kwargs)))
        return [float(c.strip() == a) for c, a in zip(completions, answer, strict=True)]

    trainer = _trainer(reward)
    by_prompt = {p.prompt: p.answer for p in trainer.train}
    trainer.train_step()
    trainer.train_step()
    assert [s[4] for s in seen] == [0, 1]
    prompts, completions, answer, ids, _, rest = seen[0]
    assert len(prompts) == len(completions) == len(answer) == len(ids) == 12
    assert answer == [by_prompt[p] for p in prompts]  # one answer per completion, aligned
    assert all(isinstance(row, list) and all(isinstance(t, int) for t in row) for row in ids)
    assert rest == ["log_extra", "log_metric"]


def test_trl_reward_with_only_completions_and_kwargs():
    got = {}

    def reward_len(completions, **kwargs):
        got.update(kwargs)
        return [-float(len(c)) for c in completions]

    row = _trainer(reward_len).train_step()
    assert {"prompts", "answer", "completion_ids", "trainer_state"} <= set(got)
    assert row["reward"] <= 0
    # completions alone (no prompts, no **kwargs) is fine too
    assert _trainer(lambda completions: [1.0] * len(completions)).train_step()["reward"] == 1.0


def test_every_convention_gives_bit_identical_training():
    def trl_style(prompts, completions, **kwargs):
        return parity(prompts, completions)

    def positional(p, c):
        return parity(p, c)

    results = []
    for reward in (parity, trl_style, positional, [parity]):
        t = _trainer(reward)
        t.fit()
        results.append(([r.get("reward") for r in t.history], _params(t)))
    for rewards, params in results[1:]:
        assert rewards == results[0][0]
        assert torch.equal(params, results[0][1])


def test_default_task_reward_equals_passing_it_explicitly():
    a, b = _trainer(None), _trainer(TASK.reward)
    a.fit()
    b.fit()
    assert [r.get("reward") for r in a.history] == [r.get("reward") for r in b.history]
    assert torch.equal(_params(a), _params(b))


def test_a_list_of_rewards_is_summed_and_none_entries_are_skipped():
    def half(prompts, completions, **kw):
        return [None if i % 2 else 1.0 for i in range(len(completions))]

    def ones(prompts, completions, **kw):
        return [1.0] * len(completions)

    t = _trainer([half, ones])
    row = t.train_step()
    assert row["reward"] == pytest.approx(1.5)
    with pytest.warns(UserWarning, match="None"):
        _trainer(lambda prompts, completions: [None] * len(completions)).train_step()


def test_log_metric_goes_to_the_history_and_log_extra_is_kept():
    def reward(completions, log_metric, log_extra, **kw):
        log_metric("mean_len", sum(map(len, completions)) / len(completions))
        log_extra("lengths", [len(c) for c in completions])
        return [0.0] * len(completions)

    t = _trainer(reward)
    row = t.train_step()
    assert row["mean_len"] >= 0 and len(t.completion_extras["lengths"]) == 12


def test_bad_reward_functions_fail_with_a_clear_error():
    with pytest.raises(TypeError, match="solution"):
        _trainer(lambda prompts, completions, solution: [0.0])
    with pytest.raises(TypeError, match="reward"):
        _trainer(42)
    with pytest.raises(TypeError, match="reward"):
        _trainer([])
    with pytest.raises(ValueError, match="12 rewards"):
        _trainer(lambda prompts, completions: [0.0]).train_step()
