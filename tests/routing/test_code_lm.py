"""The code-writing LM of RFTHGS: tokenizer round trip, deterministic cached pretraining,
sampling through LMGenerator, the compile-rate measurement."""

from __future__ import annotations

import pytest
import torch

from optzoo.llm.models import TinyLlama
from optzoo.routing import code_lm

TINY = code_lm.CodeLMConfig(vocab_size=1024, documents=6, steps=3, batch_size=2, model=TinyLlama(
    hidden_size=16, intermediate_size=32, num_layers=1, num_heads=2,
    max_position_embeddings=4096))


@pytest.mark.parametrize("pretokenizer", code_lm.PRETOKENIZERS)
def test_tokenizer_round_trips_any_text(pretokenizer):
    tok = code_lm.train_tokenizer(["def crossover(parents):\n    return parents[0]\n"] * 3, 300,
                                  pretokenizer)
    for text in ("def crossover(:\n\tüñï ∑ 'x'  \n", "```python\nx = 1\n```\n", "",
                 "a\n\n\n  b\r\n"):
        assert tok.decode(tok(text).input_ids) == text
    assert tok.eos_token == code_lm.EOS and tok.pad_token == code_lm.PAD
    assert tok.eos_token_id != tok.pad_token_id


def test_line_level_merges_shorten_the_corpus():
    """The reason for ``pretokenizer="lines"``: at one vocabulary size it writes the SREX
    prompt in far fewer tokens than GPT-2's word split, whose tokens cannot cross a word."""
    from optzoo.routing import code_corpus
    from optzoo.routing.lm_generator import build_prompt

    docs = code_corpus.documents(40, 0)
    texts = [t for d in docs for t in (d.prompt, d.completion)]
    prompt = build_prompt(code_corpus.srex_source())
    n = {p: len(code_lm.train_tokenizer(texts, 2048, p)(prompt).input_ids)
         for p in code_lm.PRETOKENIZERS}
    assert n["lines"] < 0.5 * n["words"], n


def test_pretraining_is_deterministic_and_learns():
    a = code_lm.pretrain_code_lm(TINY, cache=False)
    b = code_lm.pretrain_code_lm(TINY, cache=False)
    assert a.metrics["loss_history"] == b.metrics["loss_history"]
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    longer = code_lm.pretrain_code_lm(
        code_lm.CodeLMConfig(**{**TINY.__dict__, "steps": 40, "lr": 1e-2}), cache=False)
    h = longer.metrics["loss_history"]
    assert sum(h[-5:]) / 5 < 0.8 * sum(h[:5]) / 5  # it fits the corpus


def test_cache_trains_once_and_loads_the_same_model(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTZOO_CACHE", str(tmp_path))
    first = code_lm.pretrain_code_lm(TINY)
    second = code_lm.pretrain_code_lm(TINY)
    assert first.metrics["from_cache"] is False and second.metrics["from_cache"] is True
    assert first.path == second.path and first.path.parent == tmp_path / "routing"
    s1, s2 = first.model.state_dict(), second.model.state_dict()
    assert all(torch.equal(s1[k], s2[k]) for k in s1)
    text = "def crossover(parents, data, cost_evaluator, rng):\n    return parents[0]\n"
    assert first.tokenizer(text).input_ids == second.tokenizer(text).input_ids
    other = code_lm.CodeLMConfig(**{**TINY.__dict__, "seed": 1})
    assert code_lm.cache_key(other) != code_lm.cache_key(TINY)


def test_generator_samples_text_and_compile_rate_counts_it():
    lm = code_lm.pretrain_code_lm(TINY, cache=False)
    gen = code_lm.code_generator(lm, max_new_tokens=12)
    report = code_lm.compile_rate(gen, 3, seed=0)
    assert report["n"] == 3 and len(report["sources"]) == 3
    assert 0.0 <= report["compiles"] <= report["has_code"] <= 1.0
    again = code_lm.compile_rate(gen, 3, seed=0)
    assert again["sources"] == report["sources"]  # seeded sampling


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match="vocab_size: expected >= 300"):
        code_lm.CodeLMConfig(vocab_size=100)
    with pytest.raises(ValueError, match="steps: expected an integer >= 1"):
        code_lm.CodeLMConfig(steps=0)
    with pytest.raises(ValueError, match="pretokenizer: expected one of"):
        code_lm.CodeLMConfig(pretokenizer="bytes")
    short = code_lm.CodeLMConfig(**{**TINY.__dict__, "model": TinyLlama(
        hidden_size=16, intermediate_size=32, num_layers=1, num_heads=2,
        max_position_embeddings=64)})
    with pytest.raises(ValueError, match="shorter than the longest document"):
        code_lm.pretrain_code_lm(short, cache=False)
    lm = code_lm.pretrain_code_lm(TINY, cache=False)
    with pytest.raises(ValueError, match="max_new_tokens: at most"):
        code_lm.code_generator(lm, max_new_tokens=10_000)
