"""Supervised pretraining: it learns (a copy task to high accuracy), stops at the target
accuracy, caches under the user cache folder, loads on a second call, trains once under
concurrency, and fine-tunes a model from a local folder."""

import json
import threading

import numpy as np
import pytest
import torch

import optzoo.llm.pretraining as pretrain_module
from optzoo.llm import (
    Addition,
    Grade,
    PretrainConfig,
    Problem,
    Task,
    TinyLlama,
    char_tokenizer,
    greedy_accuracy,
    pretrain,
    save_causal_lm,
)
from optzoo.llm.pretraining import cache_dir, cache_key

TINY = TinyLlama(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2)


class Echo(Task):
    """Repeat a two-digit number (learnable in a few dozen steps)."""

    format_reward = 0.0

    def draw(self, rng):
        d = str(int(rng.integers(10, 100)))
        return Problem(f"{d}=", d)

    def parses(self, prompt):
        return len(prompt) == 3 and prompt[:2].isdigit() and prompt[2] == "="

    def grade(self, prompt, completion):
        return Grade.CORRECT if completion == prompt[:2] else Grade.MALFORMED

    def spec(self):
        return {"task": "Echo"}


def _tiny_config(**kw):
    base = dict(task=Addition(digits=1), model=TINY, max_steps=3, eval_every=3, eval_size=8,
                batch_size=8, holdout=False, target_accuracy=None)
    return PretrainConfig(**{**base, **kw})


def test_supervised_training_learns_a_copy_task():
    torch.manual_seed(0)
    cfg = PretrainConfig(task=Echo(), model=TINY, max_steps=150, eval_every=10, eval_size=50,
                         batch_size=32, lr=1e-2, target_accuracy=0.9, holdout=False)
    lm = pretrain(cfg, cache=False)
    assert lm.metrics["accuracy"] >= 0.9 and lm.metrics["steps"] < 150
    prompts = [p.prompt for p in Echo().sample(50, seed=99)]
    assert greedy_accuracy(lm.model, lm.tokenizer, Echo(), prompts) >= 0.8
    losses = [h["loss"] for h in lm.metrics["history"]]
    assert losses[-1] < losses[0]


def test_training_stops_at_the_first_evaluation_reaching_the_target(monkeypatch):
    accs = iter([0.05, 0.2, 0.45, 0.9])
    monkeypatch.setattr(pretrain_module, "greedy_accuracy", lambda *a, **k: next(accs))
    lm = pretrain(_tiny_config(max_steps=40, eval_every=2, target_accuracy=0.4), cache=False)
    assert lm.metrics["steps"] == 6 and lm.metrics["accuracy"] == 0.45
    assert [h["step"] for h in lm.metrics["history"]] == [2, 4, 6]


def test_second_call_loads_from_the_cache(tmp_path):
    cfg = _tiny_config()
    first = pretrain(cfg, cache_root=tmp_path)
    second = pretrain(cfg, cache_root=tmp_path)
    assert not first.metrics["from_cache"] and second.metrics["from_cache"]
    assert first.path == second.path and first.path.parent == tmp_path / "llm"
    assert first.path.name == f"pretrain-{cache_key(cfg)}"
    ids = torch.tensor([first.tokenizer("3+4=").input_ids])
    with torch.no_grad():
        assert torch.equal(first.model(ids).logits, second.model(ids).logits)
    assert {k: v for k, v in first.metrics.items() if k != "from_cache"} == {
        k: v for k, v in second.metrics.items() if k != "from_cache"}
    assert json.loads((first.path / "key.json").read_text())["config"] == json.loads(
        json.dumps(cfg.spec()))
    # nothing half-written is left beside the model
    assert sorted(p.name for p in (tmp_path / "llm").iterdir()) == [
        first.path.name, first.path.name + ".lock"]


def test_a_stray_folder_without_metrics_is_rebuilt(tmp_path):
    cfg = _tiny_config(seed=4)
    stray = tmp_path / "llm" / f"pretrain-{cache_key(cfg)}"
    stray.mkdir(parents=True)
    (stray / "junk").write_text("left by a crashed copy")
    lm = pretrain(cfg, cache_root=tmp_path)
    assert not lm.metrics["from_cache"] and not (stray / "junk").exists()
    assert pretrain(cfg, cache_root=tmp_path).metrics["from_cache"]


def test_same_seed_same_model_and_keys_tell_configs_apart():
    a = pretrain(_tiny_config(), cache=False)
    b = pretrain(_tiny_config(), cache=False)
    for pa, pb in zip(a.model.parameters(), b.model.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert cache_key(_tiny_config()) == cache_key(_tiny_config())
    assert len({cache_key(_tiny_config()), cache_key(_tiny_config(seed=1)),
                cache_key(_tiny_config(task=Addition(digits=2))), cache_key(_tiny_config(),
                                                                              "cuda")}) == 4


def test_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path / "oc"))
    assert cache_dir() == tmp_path / "oc"
    monkeypatch.delenv("OPTZOO_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "optzoo"
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path / "oc"))
    lm = pretrain(_tiny_config(seed=3))
    assert lm.path.parent == tmp_path / "oc" / "llm"


def test_concurrent_callers_train_once(tmp_path):
    cfg = _tiny_config(max_steps=20, eval_every=10)
    trained, results = [], [None, None]

    def worker(i):
        results[i] = pretrain(cfg, cache_root=tmp_path, log=lambda s, i=i: trained.append(i))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.metrics["from_cache"] for r in results) == [False, True]
    assert len(set(trained)) == 1      # only one of them logged training evaluations
    for pa, pb in zip(results[0].model.parameters(), results[1].model.parameters(), strict=True):
        assert torch.equal(pa, pb)


def test_fine_tunes_a_local_model_folder(tmp_path):
    tok = char_tokenizer()
    base = TINY.build(tok, seed=5)
    save_causal_lm(base, tok, tmp_path / "base")
    lm = pretrain(_tiny_config(init=str(tmp_path / "base")), cache=False)
    assert lm.tokenizer("1+2=").input_ids == tok("1+2=").input_ids
    moved = [not torch.equal(p, q) for p, q in zip(lm.model.parameters(), base.parameters(),
                                                   strict=True)]
    assert all(moved)
    with pytest.raises(FileNotFoundError, match="path"):
        pretrain(_tiny_config(init=str(tmp_path / "nowhere")), cache=False)


def test_config_is_validated():
    with pytest.raises(ValueError, match="task"):
        PretrainConfig(task="addition")
    with pytest.raises(ValueError, match="target_accuracy"):
        PretrainConfig(target_accuracy=1.5)
    with pytest.raises(ValueError, match="batch_size"):
        PretrainConfig(batch_size=0)
    with pytest.raises(ValueError, match="config"):
        pretrain({"task": "addition"})


def test_held_out_prompts_are_never_trained_on(monkeypatch):
    seen = []
    real = pretrain_module._batch

    def spy(tokenizer, problems, device):
        seen.extend(p.prompt for p in problems)
        return real(tokenizer, problems, device)

    monkeypatch.setattr(pretrain_module, "_batch", spy)
    cfg = _tiny_config(task=Addition(digits=2), holdout=True, max_steps=5, batch_size=64,
                       eval_size=300)
    pretrain(cfg, cache=False)
    held_out = {p.prompt for p in cfg.task.sample(300, np.random.default_rng([cfg.seed, 2]))}
    assert len(seen) == 320 and not held_out & set(seen)
