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


def _lone_forward_log_probs(model, children, temperature):
    """The reference: one forward per completion, no padding (the adapter's old path)."""
    rows = []
    for c in children:
        ids = torch.cat([c.prompt_ids, c.completion_ids]).unsqueeze(0)
        logits = model(ids).logits[0, len(c.prompt_ids) - 1: -1].float()
        logp = torch.log_softmax(logits / temperature, -1)
        rows.append(logp.gather(-1, c.completion_ids.unsqueeze(-1))[:, 0])
    return rows


@pytest.mark.parametrize("batch", [None, 1, 2, 8])
def test_batched_token_log_probs_equal_one_forward_per_completion(batch):
    from optzoo.routing.lm_generator import Completion

    model, tok = _tiny_lm(seed=3)
    gen = LMGenerator(model, tok, max_new_tokens=8, temperature=0.7, logprob_batch=batch)
    g = torch.Generator().manual_seed(0)
    # prompts and completions of different lengths, so that every batch pads
    children = [Completion(torch.randint(len(tok), (lp,), generator=g),
                           torch.randint(len(tok), (lc,), generator=g), "")
                for lp, lc in [(5, 3), (9, 1), (2, 7), (6, 6), (4, 2)]]
    logp, mask = gen.token_log_probs([None] * len(children), children)
    ref = _lone_forward_log_probs(model, children, 0.7)
    assert logp.shape == mask.shape == (5, 7)
    for i, (r, c) in enumerate(zip(ref, children, strict=True)):
        n = len(c.completion_ids)
        assert mask[i].tolist() == [1.0] * n + [0.0] * (7 - n)
        torch.testing.assert_close(logp[i, :n], r, atol=1e-5, rtol=1e-5)
        assert logp[i, n:].abs().sum() == 0
    # the gradient of a masked loss is the reference's
    w = torch.linspace(0.5, 1.5, 7)
    (logp * mask * w).sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    sum((r * w[: len(r)]).sum() for r in ref).backward()
    for a, b in zip(got, (p.grad for p in model.parameters()), strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_bad_logprob_batch_is_refused():
    model, tok = _tiny_lm()
    with pytest.raises(ValueError, match="logprob_batch"):
        LMGenerator(model, tok, logprob_batch=0)
    with pytest.raises(ValueError, match="children"):
        LMGenerator(model, tok).token_log_probs([], [])
