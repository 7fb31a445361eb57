"""The Hugging Face LM adapter of RFTHGS on a tiny random Llama built in-process (no download):
prompt and code extraction, log-probs against the generation scores, and the loop protocol."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from optzoo.routing.crossover_dsl import EXPERT, render  # noqa: E402
from optzoo.routing.lm_generator import (  # noqa: E402
    LMGenerator,
    build_prompt,
    extract_code,
)
from optzoo.routing.rfthgs import RFTConfig, train  # noqa: E402


def _tiny_lm(seed=0):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    vocab["<eos>"] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>")
    cfg = LlamaConfig(vocab_size=len(hf_tok), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=8192, eos_token_id=hf_tok.eos_token_id,
                      pad_token_id=hf_tok.eos_token_id, bos_token_id=hf_tok.eos_token_id)
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg).eval(), hf_tok


def test_prompt_and_code_extraction():
    src = render(EXPERT)
    prompt = build_prompt(src)
    assert src.rstrip() in prompt and "def crossover(parents, data, cost_evaluator, rng)" in prompt
    assert "# MODIFY:" in prompt and "```python" in prompt
    text = "Idea: swap more routes.\n```python\nx = 1\n```\nthen\n```python\ny = 2\n```"
    assert extract_code(text) == "y = 2\n"
    assert extract_code("no code here") is None
    assert extract_code("```\nz = 3\n```") == "z = 3\n"
    with pytest.raises(ValueError, match="parent_source"):
        build_prompt("  ")


def test_sequence_log_probs_equal_generation_scores():
    model, tok = _tiny_lm()
    gen = LMGenerator(model, tok, max_new_tokens=12, temperature=1.0, top_p=1.0,
                      top_k=len(tok))
    ids = gen._encode("def crossover(")
    torch.manual_seed(1)
    out = model.generate(ids.unsqueeze(0), do_sample=True, max_new_tokens=12, top_k=len(tok),
                         top_p=1.0, temperature=1.0, output_scores=True,
                         return_dict_in_generate=True, pad_token_id=tok.eos_token_id)
    comp = out.sequences[0, len(ids):]
    ref = sum(torch.log_softmax(s[0], -1)[t] for s, t in zip(out.scores, comp, strict=False))
    from optzoo.routing.lm_generator import Completion

    got = gen.sequence_log_probs([None], [Completion(ids, comp, "")])
    assert float(got[0].detach()) == pytest.approx(float(ref), abs=1e-4)


def test_generator_plugs_into_the_rfthgs_loop():
    model, tok = _tiny_lm()
    gen = LMGenerator(model, tok, max_new_tokens=8)
    calls = []

    def evaluator(source, instances, seed):
        calls.append(source)
        return {"status": "syntax_error", "source": source}

    out = train(evaluator, [1.0, 1.0], RFTConfig(steps=2, prompts=1, group=2, ppo_epochs=1,
                                                 instances_per_reward=1, lr=1e-3),
                seed=0, policy=gen)
    h = out["history"]
    # a random model writes no code block: every completion takes the compile tier unevaluated
    assert [m["compile_frac"] for m in h] == [1.0, 1.0] and calls == []
    assert len(out["cache"]) == 1
