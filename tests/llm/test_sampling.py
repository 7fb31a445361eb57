"""Batched sampling: masks worked out by hand with a scripted model, greedy decoding against
transformers' own ``generate``, log-probs recomputed under the model, seeds, and the sampled
distribution (with top-k / top-p) against the softmax."""

from types import SimpleNamespace

import pytest
import torch
from transformers import LlamaConfig

from optzoo.llm import (
    Addition,
    TinyLlama,
    char_tokenizer,
    greedy_accuracy,
    rollout,
    token_logprobs,
)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
PROMPTS = ["1+2=", "123+456=", "99+1=", "7="]


def _model(device="cpu", seed=0):
    return TinyLlama(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2).build(
        char_tokenizer(), seed=seed).to(device)


class ScriptedLM(torch.nn.Module):
    """A stand-in causal LM that writes ``script(prompt)`` then EOS, reading the prompt from the
    prefill and its progress from ``position_ids`` (so it also checks that positions count real
    tokens only).  It records every attention mask it is given."""

    def __init__(self, tokenizer, script):
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(1))
        self.tok, self.script = tokenizer, script
        self.config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=8, num_hidden_layers=1,
                                  num_attention_heads=1, intermediate_size=8)
        self.masks = []

    def forward(self, input_ids, attention_mask, position_ids, past_key_values=None,
                use_cache=False, logits_to_keep=0):
        self.masks.append(attention_mask.clone())
        if input_ids.shape[1] > 1:  # prefill
            self.start = attention_mask.sum(1)
            self.targets = []
            for row, m in zip(input_ids, attention_mask, strict=True):
                text = self.tok.decode(row[m.bool()], skip_special_tokens=True)
                self.targets.append(self.tok(self.script(text), add_special_tokens=False)
                                    .input_ids + [self.tok.eos_token_id])
        logits = torch.full((input_ids.shape[0], 1, len(self.tok)), -30.0)
        for i, pos in enumerate(position_ids[:, -1].tolist()):
            k = pos - int(self.start[i]) + 1          # index of the token to write next
            target = self.targets[i]
            logits[i, 0, target[k] if k < len(target) else self.tok.eos_token_id] = 0.0
        return SimpleNamespace(logits=logits, past_key_values=past_key_values)


def test_masks_on_a_ragged_batch_worked_by_hand():
    tok = char_tokenizer()
    lm = ScriptedLM(tok, lambda p: "5" * (len(p) - 1))   # "1=" -> "5", "12=" -> "55", ...
    r = rollout(lm, tok, ["1=", "12=", "1234="], max_new_tokens=4, seed=0)
    five, eos, pad = tok.convert_tokens_to_ids("5"), tok.eos_token_id, tok.pad_token_id
    assert r.completion_ids.tolist() == [[five, eos, pad, pad], [five, five, eos, pad],
                                         [five] * 4]
    assert r.completion_mask.tolist() == [[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    assert r.truncated.tolist() == [False, False, True]
    assert r.completions == ["5", "55", "5555"] and r.lengths.tolist() == [2, 3, 4]
    assert r.prompt_mask.tolist() == [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1], [1] * 6]
    assert r.prompt_ids[0, :3].tolist() == [pad] * 3 and r.prompt_ids[:, -1].tolist() == [
        tok.convert_tokens_to_ids("=")] * 3
    # the model saw each finished row's later tokens masked out
    assert lm.masks[-1][:, 6:].tolist() == [[1, 1, 0], [1, 1, 1], [1, 1, 1]]
    assert torch.allclose(r.logprobs, torch.zeros_like(r.logprobs), atol=1e-9)


def test_greedy_accuracy_counts_correct_completions():
    tok = char_tokenizer()
    task = Addition(digits=2)
    prompts = [p.prompt for p in task.sample(10, seed=0)]
    oracle = ScriptedLM(tok, lambda p: str(sum(int(x) for x in p[:-1].split("+"))))
    assert greedy_accuracy(oracle, tok, task, prompts, batch_size=3) == 1.0
    bad = set(prompts[:3])
    flawed = ScriptedLM(tok, lambda p: "0" if p in bad else str(
        sum(int(x) for x in p[:-1].split("+"))))
    assert greedy_accuracy(flawed, tok, task, prompts) == pytest.approx(0.7)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_recomputed_logprobs_equal_the_sampling_logprobs(device, temperature):
    tok = char_tokenizer()
    model = _model(device)
    r = rollout(model, tok, PROMPTS, num_samples=3, max_new_tokens=12,
                temperature=temperature, seed=0)
    again = r.logprobs_under(model, temperature=temperature)
    assert torch.allclose(again, r.logprobs, atol=1e-5)
    assert torch.equal(token_logprobs(model, r.prompt_ids, r.prompt_mask, r.completion_ids,
                                      r.completion_mask, temperature=temperature,
                                      batch_size=5), again)
    # each padded row computes what it computes alone (no padding)
    for i in (0, 4, 11):
        keep = r.prompt_mask[i].bool()
        alone = token_logprobs(model, r.prompt_ids[i:i + 1, keep], r.prompt_mask[i:i + 1, keep],
                               r.completion_ids[i:i + 1], r.completion_mask[i:i + 1],
                               temperature=temperature)
        assert torch.allclose(alone[0], r.logprobs[i], atol=1e-5)
    assert r.logprobs.device.type == device and r.logprobs.dtype == torch.float32


def test_logprobs_are_differentiable_and_masked():
    tok = char_tokenizer()
    model = _model()
    r = rollout(model, tok, PROMPTS, num_samples=2, max_new_tokens=10, seed=1)
    lp = r.logprobs_under(model)
    assert lp.requires_grad and torch.all(lp[r.completion_mask == 0] == 0)
    lp.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    assert float(model.lm_head.weight.grad.abs().sum()) > 0


@pytest.mark.parametrize("device", DEVICES)
def test_greedy_is_deterministic_and_matches_transformers_generate(device):
    tok = char_tokenizer()
    model = _model(device, seed=2)
    a = rollout(model, tok, PROMPTS, max_new_tokens=10, greedy=True)
    b = rollout(model, tok, PROMPTS, max_new_tokens=10, greedy=True)
    assert torch.equal(a.completion_ids, b.completion_ids) and a.completions == b.completions
    enc = tok(PROMPTS, return_tensors="pt", padding=True).to(device)
    out = model.generate(**enc, do_sample=False, max_new_tokens=10, pad_token_id=tok.pad_token_id,
                         eos_token_id=tok.eos_token_id, output_logits=True,
                         return_dict_in_generate=True)
    ref = out.sequences[:, enc["input_ids"].shape[1]:]
    n = ref.shape[1]
    assert torch.equal(a.completion_ids[:, :n], ref)
    ref_lp = torch.stack([torch.log_softmax(s.float(), -1) for s in out.logits], 1)
    ref_lp = ref_lp.gather(-1, ref[..., None]).squeeze(-1) * a.completion_mask[:, :n]
    assert torch.allclose(a.logprobs[:, :n], ref_lp, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_a_seed_reproduces_a_sampled_batch(device):
    tok = char_tokenizer()
    model = _model(device)
    torch.manual_seed(0)
    state = torch.get_rng_state()
    a = rollout(model, tok, PROMPTS, num_samples=4, max_new_tokens=12, seed=7)
    assert torch.equal(torch.get_rng_state(), state)   # the global RNG is not used
    b = rollout(model, tok, PROMPTS, num_samples=4, max_new_tokens=12, seed=7)
    c = rollout(model, tok, PROMPTS, num_samples=4, max_new_tokens=12, seed=8)
    assert torch.equal(a.completion_ids, b.completion_ids) and torch.equal(a.logprobs, b.logprobs)
    assert not torch.equal(a.completion_ids, c.completion_ids)
    g1 = torch.Generator(device=device).manual_seed(7)
    d = rollout(model, tok, PROMPTS, num_samples=4, max_new_tokens=12, generator=g1)
    assert torch.equal(d.completion_ids, a.completion_ids)
    assert a.group.tolist() == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4
    assert a.prompts == [p for p in PROMPTS for _ in range(4)]


def test_masks_on_random_ragged_completions():
    tok = char_tokenizer()
    model = _model(seed=3)
    # a hot temperature makes EOS (1 of 24 tokens) end rows at many different lengths
    r = rollout(model, tok, PROMPTS * 8, max_new_tokens=20, temperature=4.0, seed=0)
    eos, pad = tok.eos_token_id, tok.pad_token_id
    lengths = set(r.lengths[~r.truncated].tolist())
    assert len(lengths) >= 4 and r.truncated.any()   # the batch is really ragged
    for ids, m, trunc, text in zip(r.completion_ids, r.completion_mask, r.truncated,
                                   r.completions, strict=True):
        hits = (ids == eos).nonzero().flatten().tolist()
        end = hits[0] + 1 if hits else len(ids)
        assert trunc == (not hits)
        assert m.tolist() == [1] * end + [0] * (len(ids) - end)
        assert (ids[end:] == pad).all()
        assert text == tok.decode(ids[:end], skip_special_tokens=True)
    assert torch.all(r.logprobs[r.completion_mask == 0] == 0)


def test_sampling_frequencies_follow_the_softmax_and_truncation():
    tok = char_tokenizer()
    model = _model(seed=4)
    n = 4000
    with torch.no_grad():
        logits = model(torch.tensor([tok("12+3=").input_ids])).logits[0, -1]
    for top_k, top_p in [(0, 1.0), (3, 1.0), (0, 0.5)]:
        r = rollout(model, tok, ["12+3="], num_samples=n, max_new_tokens=1, temperature=0.5,
                    top_k=top_k, top_p=top_p, seed=11)
        p = torch.softmax(logits / 0.5, -1)
        order = torch.argsort(p, descending=True)
        if top_k:
            keep = order[:top_k]
        elif top_p < 1:
            before = torch.cumsum(p[order], 0) - p[order]
            keep = order[before < top_p]
        else:
            keep = order
        q = torch.zeros_like(p)
        q[keep] = p[keep] / p[keep].sum()
        freq = torch.bincount(r.completion_ids[:, 0], minlength=len(p)).double() / n
        tol = 4 * torch.sqrt(q * (1 - q) / n) + 1e-3
        assert torch.all((freq - q.double()).abs() <= tol), (top_k, top_p)
        # the returned log-probs are those of the untruncated tempered softmax (TRL's)
        assert torch.allclose(r.logprobs[:, 0], torch.log(p)[r.completion_ids[:, 0]], atol=1e-5)


def test_format_prompt_changes_the_input_not_the_reward_prompt():
    tok = char_tokenizer()
    model = _model()
    r = rollout(model, tok, ["1+2="], max_new_tokens=3, seed=0, format_prompt=lambda p: "((" + p)
    assert r.prompts == ["1+2="]
    assert tok.decode(r.prompt_ids[0], skip_special_tokens=True) == "((1+2="


def test_rollout_arguments_are_validated():
    tok = char_tokenizer()
    model = _model()
    for kwargs, name in [({"num_samples": 0}, "num_samples"), ({"max_new_tokens": 0},
                         "max_new_tokens"), ({"temperature": 0}, "temperature"),
                         ({"top_k": -1}, "top_k"), ({"top_p": 0}, "top_p"),
                         ({"seed": 1, "generator": torch.Generator()}, "seed")]:
        with pytest.raises(ValueError, match=name):
            rollout(model, tok, PROMPTS, **kwargs)
    with pytest.raises(ValueError, match="prompts"):
        rollout(model, tok, "1+2=")
    with pytest.raises(ValueError, match="prompt_mask"):
        token_logprobs(model, torch.ones(2, 3, dtype=torch.long), torch.ones(2, 4),
                       torch.ones(2, 1, dtype=torch.long))
