"""The TRL trainers: a few CPU steps on a tiny model, each matching its pure loss on the same
batch (and, where the method reduces to it, TRL's own DPO loss)."""

from __future__ import annotations

import copy
import tempfile
import warnings

import pytest
import torch

from optzoo.preference import auxdpo_loss, dpo_loss, wdpo_loss
from optzoo.preference.trainers import AuxDPOTrainer, WDPOTrainer, _per_token_logps

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")

from tests.preference.test_dpo_trl import _our_logps, _tiny, _tokenizer  # noqa: E402


def _data(weights=None):
    from datasets import Dataset

    cols = {"prompt": ["1+1=", "2+3=", "9+9=", "4+4="], "chosen": ["2", "5", "18", "8"],
            "rejected": ["3a", "6", "1", "9bc"]}
    if weights is not None:
        cols["weight"] = weights
    return Dataset.from_dict(cols)


def _args(**kw):
    from trl import DPOConfig

    return DPOConfig(output_dir=tempfile.mkdtemp(prefix="optzoo-trl-pref-"), report_to="none",
                     use_cpu=True, per_device_train_batch_size=4, beta=0.3, save_strategy="no",
                     seed=0, logging_steps=1, **kw)


def _build(cls, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(model=_tiny(0), ref_model=_tiny(1), processing_class=_tokenizer(), **kw)


def test_wdpo_trainer_matches_the_pure_loss_and_trls_dpo_at_unit_weights():
    from trl import DPOTrainer

    weights = [1.0, 0.0, 2.0, 0.5]
    trainer = _build(WDPOTrainer, args=_args(), train_dataset=_data(weights))
    batch = next(iter(trainer.get_train_dataloader()))
    assert sorted(batch["weight"].tolist()) == sorted(weights)
    with torch.no_grad():
        ours = trainer._compute_loss(trainer.model, batch, return_outputs=False)
        c, r = _our_logps(trainer.model, batch)
        rc, rr = _our_logps(trainer.ref_model, batch)
    want, _ = wdpo_loss(c, r, batch["weight"], rc, rr, beta=0.3)
    assert torch.allclose(ours, want, atol=1e-6)
    # unit weights: TRL's own DPO loss on the same batch
    unit = _build(WDPOTrainer, args=_args(), train_dataset=_data([1.0] * 4))
    plain = _build(DPOTrainer, args=_args(), train_dataset=_data())
    b1 = next(iter(unit.get_train_dataloader()))
    b2 = next(iter(plain.get_train_dataloader()))
    assert torch.equal(b1["input_ids"], b2["input_ids"])  # same seed, same order
    with torch.no_grad():
        w1 = unit._compute_loss(unit.model, b1, return_outputs=False)
        t1 = plain._compute_loss(plain.model, b2, return_outputs=False)
    assert torch.allclose(w1, t1, atol=1e-6, rtol=1e-5)
    with pytest.raises(ValueError, match="weight"):
        _build(WDPOTrainer, args=_args(), train_dataset=_data())


def test_wdpo_trainer_trains_and_a_zero_weight_pair_gives_no_gradient():
    trainer = _build(WDPOTrainer, args=_args(max_steps=2), train_dataset=_data([0.0] * 4))
    before = copy.deepcopy(trainer.model.state_dict())
    trainer.train()
    assert all(torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())
    moved = _build(WDPOTrainer, args=_args(max_steps=2), train_dataset=_data([1.0] * 4))
    start = copy.deepcopy(moved.model.state_dict())
    moved.train()
    assert any(not torch.equal(start[k], v) for k, v in moved.model.state_dict().items())


def test_auxdpo_trainer_matches_the_pure_loss_and_its_delta_learns():
    trainer = _build(AuxDPOTrainer, args=_args(max_steps=3, learning_rate=1e-3),
                     train_dataset=_data(), lambda_null=1e-2, lambda_amp=1.0, aux_lr=0.5)
    batch = next(iter(trainer.get_train_dataloader()))
    assert sorted(batch["pair_index"].tolist()) == [0, 1, 2, 3]
    with torch.no_grad():
        ours = trainer._compute_loss(trainer.model, batch, return_outputs=False)
        c, r = _our_logps(trainer.model, batch)
        rc, rr = _our_logps(trainer.ref_model, batch)
        dc, dr = trainer.aux(batch["pair_index"])
    from optzoo.preference import reference_score_vectors

    names = [n for n, p in trainer.model.named_parameters() if p.requires_grad]
    g = reference_score_vectors(trainer.ref_model, batch["input_ids"], batch["attention_mask"],
                                batch["completion_mask"], params=names)
    want, _ = auxdpo_loss(c - rc, r - rr, dc, dr, grads_chosen=g.chunk(2)[0],
                          grads_rejected=g.chunk(2)[1], beta=0.3, lambda_null=1e-2,
                          lambda_amp=1.0)
    assert torch.allclose(ours.double(), want.double(), atol=1e-6)
    raw0 = trainer.aux.raw.detach().clone()
    trainer.train()
    assert float((trainer.aux.raw.detach() - raw0).abs().max()) > 1e-3  # δ has its own group
    # δ ≡ 0 and no penalties: TRL's sigmoid DPO on the same tensors
    zero = torch.zeros_like(c)
    aux0, _ = auxdpo_loss(c - rc, r - rr, zero, zero, beta=0.3, lambda_null=0.0,
                          lambda_amp=0.0)
    assert torch.allclose(aux0, dpo_loss(c, r, rc, rr, beta=0.3)[0])


def test_auxdpo_penalty_needs_a_separate_reference():
    with pytest.raises(ValueError, match="ref_model"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            AuxDPOTrainer(model=_tiny(0), ref_model=None, processing_class=_tokenizer(),
                          args=_args(), train_dataset=_data(), lambda_null=1.0)


def test_per_token_logps_keep_the_completion_mask_shifted():
    trainer = _build(WDPOTrainer, args=_args(), train_dataset=_data([1.0] * 4))
    batch = next(iter(trainer.get_train_dataloader()))
    with torch.no_grad():
        logp, mask = _per_token_logps(trainer.model, batch)
    assert logp.shape == mask.shape == (8, batch["input_ids"].shape[1] - 1)
    assert torch.equal(mask, batch["completion_mask"][:, 1:])


def test_tidpo_trainer_reduces_to_trls_dpo_and_trains_with_anchors():
    from trl import DPOTrainer

    from optzoo.preference.trainers import TIDPOTrainer

    uniform = _build(TIDPOTrainer, args=_args(), train_dataset=_data(), weighting="uniform",
                     alpha=0.0, gamma=0.0)
    plain = _build(DPOTrainer, args=_args(), train_dataset=_data())
    b1 = next(iter(uniform.get_train_dataloader()))
    b2 = next(iter(plain.get_train_dataloader()))
    assert torch.equal(b1["input_ids"], b2["input_ids"])
    with torch.no_grad():
        ours = uniform._compute_loss(uniform.model, b1, return_outputs=False)
        theirs = plain._compute_loss(plain.model, b2, return_outputs=False)
    assert torch.allclose(ours, theirs, atol=1e-6, rtol=1e-5)
    # the full method: hybrid weights that differ from 1, the KL term, anchors, two steps
    full = _build(TIDPOTrainer, args=_args(max_steps=2), train_dataset=_data(),
                  anchor_max_new_tokens=4)
    batch = next(iter(full.get_train_dataloader()))
    rho, mask, _ = full._logratios_and_kl(full.model, batch["input_ids"],
                                          batch["attention_mask"], batch["completion_mask"])
    w = full._weights(full.model, batch, mask)
    assert torch.allclose(w.sum(1), mask.sum(1).float(), atol=1e-5)  # sum_to_T
    assert float((w[mask.bool()] - 1).abs().max()) > 1e-3  # not uniform
    start = copy.deepcopy(full.model.state_dict())
    full.train()
    assert any(not torch.equal(start[k], v) for k, v in full.model.state_dict().items())
    logged = [h for h in full.state.log_history if "loss/triplet" in h]
    assert len(logged) == 2 and all(h["loss/triplet"] >= 0 for h in logged)  # TRL logged it
