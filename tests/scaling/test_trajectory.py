"""The synthetic language against its own table (empirical conditionals, exact entropy rate
bound), and the trainer: a forked WSD cooldown equals an uninterrupted WSD run bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from optzoo.llm import TinyLlama
from optzoo.scaling.lr_schedules import Schedule
from optzoo.scaling.trajectory import Trainer
from optzoo.scaling.zipf_ngram import ZipfNGram


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_ngram_samples_follow_the_table():
    lang = ZipfNGram(vocab_size=4, order=2, seq_len=64, zipf_exponent=1.0)
    ids = lang.sample(400, np.random.default_rng(0)).numpy()
    prev, nxt = ids[:, :-1].ravel(), ids[:, 1:].ravel()
    for c in range(4):
        emp = np.bincount(nxt[prev == c], minlength=4) / (prev == c).sum()
        assert np.allclose(emp, lang.table[c], atol=0.03)
    assert np.allclose(lang.table.sum(1), 1.0)
    # the Bayes rate lies below the unigram entropy and above 0
    f = np.bincount(ids.ravel(), minlength=4) / ids.size
    assert 0 < lang.entropy_rate() < -(f * np.log(f)).sum()


def test_ngram_determinism_and_errors():
    lang = ZipfNGram(vocab_size=8, order=3, seq_len=10)
    a = lang.sample(5, np.random.default_rng(3))
    assert torch.equal(a, lang.sample(5, np.random.default_rng(3)))
    assert a.dtype == torch.long and a.shape == (5, 10) and int(a.max()) < 8
    with pytest.raises(ValueError, match="seq_len"):
        ZipfNGram(order=3, seq_len=2)
    with pytest.raises(ValueError, match="rng"):
        lang.sample(2, 0)
    with pytest.raises(ValueError, match="order"):
        ZipfNGram(vocab_size=64, order=6)


def test_batches_drawn_together_equal_one_by_one():
    lang = ZipfNGram(vocab_size=8, order=3, seq_len=12)
    rngs = [np.random.default_rng([0, 1, s]) for s in range(5)]
    together = lang.sample_each(3, rngs)
    for s, got in enumerate(together):
        assert torch.equal(got, lang.sample(3, np.random.default_rng([0, 1, s])))
    tr = _trainer(lang)
    assert all(torch.equal(a, tr.batch(s)) for s, a in zip(range(2, 6), tr.batches(2, 6),
                                                            strict=True))
    with pytest.raises(ValueError, match="rng"):
        lang.sample_each(2, [])


def _trainer(lang, seed=0):
    return Trainer(lang, TinyLlama(hidden_size=32, intermediate_size=64, num_layers=1,
                                   num_heads=2), peak_lr=3e-3, seed=seed, batch_size=4)


def test_forked_cooldown_equals_an_uninterrupted_wsd_run():
    lang = ZipfNGram(vocab_size=8, order=2, seq_len=8)
    trunk = Schedule("constant", 30, 3)
    a = _trainer(lang)
    saved = a.run(trunk, 18, checkpoints=[0, 9, 18])
    assert sorted(saved) == [0, 9, 18]
    b = a.fork()
    cool = Schedule.wsd_from(trunk, 18, 6)
    b.run(cool, 24)
    a.run(trunk, 24)  # the trunk goes on, untouched by the fork
    ref = _trainer(lang)
    ref.run(Schedule("wsd", 24, 3, 6), 24)
    for k, v in ref.model.state_dict().items():
        assert torch.equal(v, b.model.state_dict()[k]), k
    assert ref.losses == b.losses
    assert not torch.equal(a.model.model.layers[0].mlp.down_proj.weight,
                           b.model.model.layers[0].mlp.down_proj.weight)
    assert a.losses[:18] == b.losses[:18]
    # the checkpoint copies did not move with training
    assert not torch.equal(saved[18]["model.embed_tokens.weight"],
                           a.model.state_dict()["model.embed_tokens.weight"])


def test_trainer_errors():
    lang = ZipfNGram(vocab_size=8, order=2, seq_len=8)
    tr = _trainer(lang)
    with pytest.raises(ValueError, match="until"):
        tr.run(Schedule("constant", 5), 6)
    with pytest.raises(ValueError, match="schedule"):
        tr.run(lambda t: 1.0, 2)
    with pytest.raises(ValueError, match="peak_lr"):
        Trainer(lang, TinyLlama(hidden_size=32, num_heads=2), peak_lr=0.0)
    with pytest.raises(ValueError, match="corpus"):
        Trainer(None, TinyLlama(), peak_lr=1e-3)
