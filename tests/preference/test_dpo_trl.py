"""Reference test: :func:`optzoo.preference.dpo_loss` equals TRL's own
``DPOTrainer._compute_loss`` (``loss_type="sigmoid"``) on the same batch, value and gradient.

A real ``DPOTrainer`` is built around a tiny random Llama and a separate reference model; the
batch comes from TRL's own data pipeline (tokenisation, EOS, collation into ``[chosen;
rejected]`` with a ``completion_mask``).  Our side computes per-token log-probs from the same
models' logits and feeds them to the pure loss.  The TRL version is pinned: ``_compute_loss`` is
private and has changed between releases.
"""

from __future__ import annotations

import tempfile
import warnings

import pytest
import torch
import torch.nn.functional as F
import trl

from optzoo.preference import dpo_loss, sequence_logps

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")
TRL_PIN = "1.16.0"


def test_trl_version_is_the_pinned_one():
    assert trl.__version__ == TRL_PIN, (
        f"written against trl {TRL_PIN} (DPOTrainer._compute_loss is private); found "
        f"{trl.__version__}: re-read its _compute_loss, then update TRL_PIN and constraints.txt")


def _tiny(seed: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=17, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, pad_token_id=0,
                      eos_token_id=1, bos_token_id=1)
    torch.manual_seed(seed)
    return LlamaForCausalLM(cfg)


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(["<pad>", "<eos>", *"0123456789+=abc"])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


@pytest.fixture(scope="module")
def trainer():
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    data = Dataset.from_dict({"prompt": ["1+1=", "2+3=", "9+9=", "4+4="],
                              "chosen": ["2", "5", "18", "8"],
                              "rejected": ["3a", "6", "1", "9bc"]})
    args = DPOConfig(output_dir=tempfile.mkdtemp(prefix="optzoo-trl-dpo-"), report_to="none",
                     use_cpu=True, per_device_train_batch_size=4, beta=0.3, save_strategy="no",
                     seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPOTrainer(model=_tiny(0), ref_model=_tiny(1), args=args, train_dataset=data,
                          processing_class=_tokenizer())


def _our_logps(model, batch):
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    logp = F.log_softmax(logits[:, :-1].float(), -1).gather(
        -1, batch["input_ids"][:, 1:].unsqueeze(-1)).squeeze(-1)
    return sequence_logps(logp, batch["completion_mask"][:, 1:]).chunk(2)


def test_dpo_loss_and_gradient_equal_trl(trainer):
    batch = next(iter(trainer.get_train_dataloader()))
    model = trainer.model
    model.train()
    model.zero_grad()
    theirs = trainer._compute_loss(model, batch, return_outputs=False)
    theirs.backward()
    g_theirs = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    chosen, rejected = _our_logps(model, batch)
    with torch.no_grad():
        ref_chosen, ref_rejected = _our_logps(trainer.ref_model, batch)
    ours, metrics = dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta=0.3)
    ours.backward()
    assert torch.allclose(ours, theirs, atol=1e-6, rtol=1e-5), (ours, theirs)
    for a, b in zip(g_theirs, (p.grad for p in model.parameters()), strict=True):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)
    # the models differ, so the pair is not a trivial tie
    assert abs(float(metrics["rewards/margins"])) > 1e-4
    logged = trainer._metrics["train"]
    assert float(metrics["rewards/accuracies"]) == pytest.approx(logged["rewards/accuracies"][-1])
    assert float(metrics["rewards/margins"]) == pytest.approx(logged["rewards/margins"][-1],
                                                              rel=1e-5, abs=1e-7)


def test_ipo_loss_equals_trl(trainer):
    """The same trainer with ``loss_types = ["ipo"]`` (TRL reads the attribute per call)."""
    from optzoo.preference import ipo_loss

    batch = next(iter(trainer.get_train_dataloader()))
    model = trainer.model
    saved = trainer.loss_types, trainer.loss_weights
    trainer.loss_types, trainer.loss_weights = ["ipo"], [1.0]
    try:
        with torch.no_grad():
            theirs = trainer._compute_loss(model, batch, return_outputs=False)
            chosen, rejected = _our_logps(model, batch)
            ref_chosen, ref_rejected = _our_logps(trainer.ref_model, batch)
    finally:
        trainer.loss_types, trainer.loss_weights = saved
    lengths = batch["completion_mask"].sum(1).chunk(2)
    ours, _ = ipo_loss(chosen, rejected, ref_chosen, ref_rejected, *lengths, beta=0.3)
    assert torch.allclose(ours, theirs, atol=1e-6, rtol=1e-5), (ours, theirs)


def test_unit_weight_wdpo_and_zero_delta_auxdpo_are_trls_dpo(trainer):
    from optzoo.preference import auxdpo_loss, wdpo_loss

    batch = next(iter(trainer.get_train_dataloader()))
    with torch.no_grad():
        theirs = trainer._compute_loss(trainer.model, batch, return_outputs=False)
        chosen, rejected = _our_logps(trainer.model, batch)
        ref_chosen, ref_rejected = _our_logps(trainer.ref_model, batch)
    ones = torch.ones_like(chosen)
    w, _ = wdpo_loss(chosen, rejected, ones, ref_chosen, ref_rejected, beta=0.3)
    zero = torch.zeros_like(chosen)
    aux, _ = auxdpo_loss(chosen - ref_chosen, rejected - ref_rejected, zero, zero, beta=0.3,
                         lambda_null=0.0, lambda_amp=0.0)
    assert torch.allclose(w, theirs, atol=1e-6, rtol=1e-5)
    assert torch.allclose(aux, theirs, atol=1e-6, rtol=1e-5)
