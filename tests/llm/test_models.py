"""Character tokenizer and tiny Llama: ids worked out from the alphabet, save/load round trips
through transformers' Auto classes, parameter counts against the Llama closed form, seeding."""

import pytest
import torch
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from optzoo.llm import (
    ARITHMETIC_ALPHABET,
    TinyLlama,
    char_tokenizer,
    count_parameters,
    load_causal_lm,
    prepare_tokenizer,
    save_causal_lm,
    tiny_llama,
)


def test_char_tokenizer_ids_and_specials():
    tok = char_tokenizer()
    assert isinstance(tok, PreTrainedTokenizerFast)
    assert len(tok) == 4 + len(ARITHMETIC_ALPHABET)
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id, tok.unk_token_id) == (0, 1, 2, 3)
    # id = 4 + position in the alphabet; BOS prepended unless add_special_tokens=False
    expected = [4 + ARITHMETIC_ALPHABET.index(c) for c in "12+3="]
    assert tok("12+3=").input_ids == [1, *expected]
    assert tok("12+3=", add_special_tokens=False).input_ids == expected
    assert tok("1x").input_ids == [1, 5, 3]   # outside the alphabet: <unk>
    assert tok.decode([1, *expected, 2, 0, 0], skip_special_tokens=True) == "12+3="


def test_char_tokenizer_round_trips_and_pads_left(tmp_path):
    tok = char_tokenizer()
    text = ARITHMETIC_ALPHABET[::-1] + "7*3=21;25+21=46"
    assert tok.decode(tok(text, add_special_tokens=False).input_ids) == text
    enc = tok(["1+2=", "123+456="], padding=True)
    assert enc["input_ids"][0][:4] == [0, 0, 0, 0] and enc["attention_mask"][0][:5] == [0] * 4 + [1]
    tok.save_pretrained(tmp_path)
    again = AutoTokenizer.from_pretrained(tmp_path, local_files_only=True)
    assert again(text).input_ids == tok(text).input_ids
    assert again.padding_side == "left" and again.eos_token_id == 2 and again.pad_token_id == 0
    custom = char_tokenizer("ab")
    assert len(custom) == 6 and custom("ba", add_special_tokens=False).input_ids == [5, 4]
    with pytest.raises(ValueError, match="alphabet"):
        char_tokenizer("aa")


def _llama_closed_form(v, h, inter, layers, heads, kv, tied):
    head_dim = h // heads
    attn = 2 * h * h + 2 * h * kv * head_dim        # q, o and k, v (no biases)
    mlp = 3 * h * inter                             # gate, up, down
    return v * h + layers * (attn + mlp + 2 * h) + h + (0 if tied else v * h)


@pytest.mark.parametrize("spec", [
    TinyLlama(), TinyLlama(hidden_size=64, intermediate_size=256, num_layers=2),
    TinyLlama(hidden_size=96, num_heads=6, num_kv_heads=2, tie_word_embeddings=True),
    TinyLlama(hidden_size=256, intermediate_size=768, num_layers=6, num_heads=8)], ids=repr)
def test_parameter_count_matches_llama_closed_form(spec):
    tok = char_tokenizer()
    model = spec.build(tok)
    kv = spec.num_kv_heads or spec.num_heads
    assert count_parameters(model) == _llama_closed_form(
        len(tok), spec.hidden_size, spec.intermediate_size, spec.num_layers, spec.num_heads, kv,
        spec.tie_word_embeddings)


def test_default_is_a_one_million_parameter_llama():
    model = TinyLlama().build(char_tokenizer())
    assert type(model).__name__ == "LlamaForCausalLM" and not model.training
    assert 1_000_000 <= count_parameters(model) <= 5_000_000
    cfg = model.config
    assert (cfg.pad_token_id, cfg.bos_token_id, cfg.eos_token_id) == (0, 1, 2)


def test_seed_fixes_the_weights_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    a = tiny_llama(24, hidden_size=32, intermediate_size=64, num_layers=1, seed=5)
    assert torch.equal(torch.rand(3), before)
    b = tiny_llama(24, hidden_size=32, intermediate_size=64, num_layers=1, seed=5)
    c = tiny_llama(24, hidden_size=32, intermediate_size=64, num_layers=1, seed=6)
    pa, pb, pc = (torch.cat([p.flatten() for p in m.parameters()]) for m in (a, b, c))
    assert torch.equal(pa, pb) and not torch.equal(pa, pc)


def test_save_and_load_give_the_same_model(tmp_path):
    tok = char_tokenizer()
    model = TinyLlama(hidden_size=32, intermediate_size=64, num_layers=2).build(tok, seed=1)
    save_causal_lm(model, tok, tmp_path / "m")
    loaded, tok2 = load_causal_lm(tmp_path / "m")
    ids = torch.tensor([tok("12+34=").input_ids])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, loaded(ids).logits)
    assert tok2("12+34=").input_ids == tok("12+34=").input_ids and tok2.padding_side == "left"
    with pytest.raises(FileNotFoundError, match="path"):
        load_causal_lm(tmp_path / "missing")


def test_prepare_tokenizer_sets_pad_to_eos_when_missing():
    from tokenizers import Tokenizer, models

    backend = Tokenizer(models.WordLevel(vocab={"a": 0, "</s>": 1, "?": 2}, unk_token="?"))
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="</s>", unk_token="?")
    assert tok.pad_token_id is None
    prepare_tokenizer(tok)
    assert tok.pad_token_id == tok.eos_token_id == 1 and tok.padding_side == "left"


def test_model_arguments_are_validated():
    with pytest.raises(ValueError, match="hidden_size"):
        TinyLlama(hidden_size=100, num_heads=3)
    with pytest.raises(ValueError, match="num_kv_heads"):
        TinyLlama(num_heads=4, num_kv_heads=3)
    with pytest.raises(ValueError, match="num_layers"):
        TinyLlama(num_layers=0)
    with pytest.raises(ValueError, match="vocab_size"):
        tiny_llama(1)
    with pytest.raises(ValueError, match="eos_token_id"):
        tiny_llama(10, eos_token_id=10)
