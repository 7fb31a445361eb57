"""A user's local Hugging Face model runs the StepORLM loop (issue 24): a tiny Llama with its
own byte-level BPE tokenizer (subword, not the word-level vocabulary) saved to a folder with
``save_pretrained``, loaded with ``local_files_only``; the modelling language round-trips
through the tokenizer, one co-evolution iteration trains it, and the reproduction's trial runs
from the folder (policy and GenPRM) and returns its metrics."""

from __future__ import annotations

import copy

import pytest
import torch

from optzoo.errors import ConfigError
from optzoo.experiment import Trial
from optzoo.llm import load_causal_lm, save_causal_lm
from optzoo.preference.genprm import GOOD, GenPRM, add_verdict_tokens, verdict_text
from optzoo.preference.or_problems import or_tokenizer, sample_problems
from optzoo.preference.reproduce.steporlm import PRESETS, StepORLMPreset, run_trial, trials
from optzoo.preference.steporlm import (
    StepORLMConfig,
    check_round_trip,
    coevolve_iteration,
    sft,
)


def _bpe_folder(path, vocab_size=300):
    """A byte-level BPE tokenizer trained on generated problems and a random tiny Llama."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    corpus = [t for q in sample_problems(150, seed=99) for t in (q.prompt, q.solution)]
    backend = Tokenizer(models.BPE(unk_token=None))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                  pad_token="<pad>")
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
        pad_token_id=0, bos_token_id=1, eos_token_id=2))
    return save_causal_lm(model, tok, path)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return _bpe_folder(tmp_path_factory.mktemp("user_model"))


def test_the_dsl_round_trips_through_a_subword_tokenizer(folder):
    _, tok = load_causal_lm(folder)
    probs = sample_problems(10, seed=3)
    # subword: the gold model text is split into more pieces than it has words
    q = probs[0]
    assert len(tok(q.solution, add_special_tokens=False).input_ids) > len(q.solution.split())
    check_round_trip(tok, [p.prompt for p in probs] + [p.solution for p in probs])
    # a tokenizer that cannot spell the language is refused, naming the argument
    word = or_tokenizer()
    with pytest.raises(ValueError, match="tokenizer"):
        check_round_trip(word, ["VARS x1 ; OBJ max 3 x1 ; C zebra x1 <= 4 ; SOLVE"])


def test_verdict_tokens_are_added_to_a_subword_tokenizer(folder):
    model, tok = load_causal_lm(folder)
    with pytest.raises(ValueError, match="tokenizer"):
        GenPRM(model, tok)  # GOOD / BAD are several BPE pieces
    n = len(tok)
    assert add_verdict_tokens(model, tok) == 3  # GOOD, BAD and the JUDGE tag
    assert len(tok) == n + 3 and model.get_input_embeddings().weight.shape[0] == n + 3
    prm = GenPRM(model, tok)
    crit = verdict_text([True, False, True], prm.sep)
    assert tok(crit, add_special_tokens=False).input_ids == [prm.good_id, prm.bad_id,
                                                           prm.good_id]
    assert add_verdict_tokens(model, tok) == 0  # idempotent
    word = or_tokenizer()  # the word-level vocabulary has them already: nothing added
    assert GOOD in word.get_vocab() and GenPRM(model, word).sep == " "


def test_one_iteration_from_the_folder_trains_the_policy(folder):
    policy, tok = load_causal_lm(folder)
    prm_model, prm_tok = load_causal_lm(folder)
    add_verdict_tokens(prm_model, prm_tok)
    prm = GenPRM(prm_model, prm_tok)
    probs = sample_problems(6, seed=5)
    sft(policy, tok, [q.prompt for q in probs], [q.solution for q in probs], steps=2,
        batch_size=6, lr=1e-2)
    before = copy.deepcopy(policy.state_dict())
    prm_before = copy.deepcopy(prm_model.state_dict())
    # the GenPRM judges every sample as solver-correct ⇔ all GOOD, so critiques are kept
    stats = coevolve_iteration(policy, prm, tok, probs, StepORLMConfig(
        k=2, steps=2, batch_size=4, prm_steps=2, max_new_tokens=40, lr=1e-3), seed=0,
        verifier=lambda text, gold: type("O", (), {"correct": len(text) % 2 == 0})())
    assert stats.trajectories == 12 and stats.pairs > 0 and len(stats.losses) == 2
    changed = [k for k, v in policy.state_dict().items() if not torch.equal(v, before[k])]
    assert changed, "W-DPO left every parameter of the user's model unchanged"
    if stats.prm_kept:
        assert any(not torch.equal(v, prm_before[k]) for k, v in prm_model.state_dict().items())


def test_the_trial_runs_from_the_folder(folder):
    cfg = StepORLMPreset(**{**PRESETS["smoke"].to_dict(), "arms": ("outcome", "steporlm"),
                            "max_new_tokens": 40, "policy_model": str(folder),
                            "genprm_model": str(folder)})
    (trial,) = [t for t in trials(cfg) if t.method == "all"]
    assert trial.params["policy_model"] == str(folder)
    m = run_trial(trial)
    for key in ("accuracy_sft", "accuracy_steporlm", "accuracy_outcome", "perturbed_steporlm",
                "prm_accuracy_initial", "prm_accuracy_refined", "bon_steporlm", "maj_sft"):
        assert 0.0 <= m[key] <= 1.0, key
    assert m["pairs_steporlm"] >= 0 and m["solver_calls"] >= 0 and m["n_hard"] >= 1


def test_model_folders_are_checked_and_keep_the_default_keys(tmp_path):
    with pytest.raises(ConfigError, match="policy_model"):
        StepORLMPreset(policy_model=str(tmp_path))
    with pytest.raises(ConfigError, match="genprm_model"):
        PRESETS["quick"].with_overrides({"genprm_model": str(tmp_path / "nope")})
    (t,) = [t for t in trials(PRESETS["smoke"]) if t.method == "all"]
    assert isinstance(t, Trial) and "policy_model" not in t.params
    assert "genprm_model" not in t.params
