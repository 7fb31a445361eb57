"""The substrate plugs into TRL unchanged (trl 1.16): ``GRPOTrainer`` trains the tiny Llama with
the character tokenizer as its processing class and a task's ``reward`` as its reward function,
which receives the dataset's prompts and the decoded completions."""

import importlib.metadata

import pytest
import torch
from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from optzoo.llm import Addition, TinyLlama, char_tokenizer


@pytest.mark.filterwarnings("ignore::FutureWarning")  # TRL's own use of deprecated names
def test_grpo_trainer_runs_with_our_model_tokenizer_and_reward(tmp_path):
    assert importlib.metadata.version("trl").startswith("1.16")
    tok = char_tokenizer()
    model = TinyLlama(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2).build(tok)
    task = Addition(digits=1)
    prompts = [p.prompt for p in task.sample(8, seed=0)]
    calls = []

    def reward(prompts, completions, **kwargs):
        calls.append((list(prompts), list(completions)))
        return task.reward(prompts, completions, **kwargs)

    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=4,
                      max_completion_length=4, max_steps=1, report_to="none", use_cpu=True,
                      save_strategy="no", learning_rate=1e-3, seed=0)
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, processing_class=tok,
                          train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]))
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    assert calls, "TRL never called the reward"
    got_prompts, got_completions = calls[0]
    assert set(got_prompts) <= set(prompts) and len(got_prompts) == 8
    assert all(isinstance(c, str) and len(c) <= 4 for c in got_completions)
    logged = [h for h in trainer.state.log_history if "reward" in h]
    expected = sum(task.reward(got_prompts, got_completions)) / len(got_prompts)
    assert abs(float(logged[0]["reward"]) - expected) < 1e-6
    # all-zero rewards give zero advantages; the step still ran (finite loss, same shapes)
    assert all(torch.isfinite(p).all() and p.shape == b.shape
               for p, b in zip(model.parameters(), before, strict=True))
