"""RTN against a brute-force nearest-level search, the model-level driver (what it touches,
the calibration Hessian, agreement with the layer-level quantizers) and the ΔCE metric."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from optzoo.llm import tiny_llama
from optzoo.scaling.gptq import gptq_quantize
from optzoo.scaling.quantization import (
    _hessians,
    block_linears,
    cross_entropy,
    grid_params,
    quantization_error,
    quantize_model,
    rtn_quantize,
)


def _nearest_level(W, bits, group, symmetric):
    """Every weight to the nearest of its (row, group)'s 2^bits levels, by search."""
    out = torch.empty_like(W)
    for c in range(0, W.shape[1], group):
        block = W[:, c:c + group]
        scale, zero = grid_params(block, bits, symmetric=symmetric)
        levels = scale * (torch.arange(2 ** bits, dtype=W.dtype)[None, :] - zero)
        idx = (block[:, :, None] - levels[:, None, :]).abs().argmin(-1)
        out[:, c:c + group] = torch.gather(levels, 1, idx)
    return out


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 20), bits=st.integers(2, 8),
       group=st.integers(1, 20), symmetric=st.booleans(), seed=st.integers(0, 10_000))
def test_rtn_is_the_nearest_grid_level(rows, cols, bits, group, symmetric, seed):
    W = torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed),
                    dtype=torch.float64)
    got = rtn_quantize(W, bits, group, symmetric=symmetric)
    ref = _nearest_level(W, bits, group, symmetric)
    # ties (exactly half-way between two levels) may go either way: same distance
    assert torch.allclose((got - W).abs(), (ref - W).abs(), atol=1e-12)
    for c in range(0, cols, group):
        for r in range(rows):
            assert torch.unique(got[r, c:c + group]).numel() <= 2 ** bits


def test_rtn_per_channel_is_one_group_and_more_bits_help():
    W = torch.randn(8, 64, generator=torch.Generator().manual_seed(0))
    assert torch.equal(rtn_quantize(W, 3, None), rtn_quantize(W, 3, 64))
    errs = [float((rtn_quantize(W, b, 16) - W).pow(2).sum()) for b in (2, 3, 4, 8)]
    assert errs == sorted(errs, reverse=True) and errs[-1] < 1e-3 * errs[0]
    assert float((rtn_quantize(W, 3, 8) - W).pow(2).sum()) < float(
        (rtn_quantize(W, 3, None) - W).pow(2).sum())  # smaller groups, finer grids


def test_rtn_bad_input():
    with pytest.raises(ValueError, match="weight"):
        rtn_quantize(torch.randn(4), 3)
    with pytest.raises(ValueError, match="weight"):
        rtn_quantize(torch.tensor([[float("inf"), 1.0]]), 3)
    with pytest.raises(ValueError, match="bits"):
        rtn_quantize(torch.randn(2, 2), 17)
    with pytest.raises(ValueError, match="group_size"):
        rtn_quantize(torch.randn(2, 2), 3, -1)


@pytest.fixture(scope="module")
def lm():
    torch.manual_seed(0)
    model = tiny_llama(40, hidden_size=64, intermediate_size=128, num_layers=2, num_heads=4)
    g = torch.Generator().manual_seed(1)
    return (model, torch.randint(0, 40, (8, 16), generator=g),
            torch.randint(0, 40, (8, 16), generator=g))


def test_quantize_model_touches_only_block_linears(lm):
    model, calib, _ = lm
    before = {k: v.clone() for k, v in model.state_dict().items()}
    q = quantize_model(model, "gptq", 3, 32, calibration=calib)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k])  # the original is untouched
    linears = {n + ".weight" for n, _ in block_linears(model)}
    assert len(linears) == 2 * 7
    for k, v in q.state_dict().items():
        if k in linears:
            assert not torch.equal(v, before[k])
        else:  # embeddings, norms, LM head: full precision
            assert torch.equal(v, before[k]), k


def test_quantize_model_rtn_equals_layerwise(lm):
    model, _, _ = lm
    q = quantize_model(model, "rtn", 4, 32, symmetric=False)
    for (_, m), (_, mq) in zip(block_linears(model), block_linears(q), strict=True):
        assert torch.equal(mq.weight, rtn_quantize(m.weight, 4, 32))


def test_calibration_hessian_and_first_gptq_layer(lm):
    model, calib, _ = lm
    layer = model.model.layers[0]
    with torch.no_grad():
        x = layer.input_layernorm(model.model.embed_tokens(calib)).reshape(-1, 64).double()
    H_ref = 2 * x.T @ x / x.shape[0]
    hs = _hessians(model, [("q", layer.self_attn.q_proj)], calib, batch_size=3)
    assert torch.allclose(hs["q"], H_ref, atol=1e-10)
    q = quantize_model(model, "gptq", 3, 32, calibration=calib)
    ref = gptq_quantize(layer.self_attn.q_proj.weight, H_ref, 3, 32).weight
    assert torch.allclose(q.model.layers[0].self_attn.q_proj.weight, ref, atol=1e-6)


def test_quantization_error_metric(lm):
    model, calib, ids = lm
    q = quantize_model(model, "rtn", 2, None)
    e = quantization_error(model, q, ids)
    assert e["dce"] == pytest.approx(e["ce_q"] - e["ce_fp"])
    assert e["rel"] == pytest.approx(e["ce_q"] / e["ce_fp"] - 1)
    # the CE by hand
    with torch.no_grad():
        logits = model(input_ids=ids).logits[:, :-1]
    ref = torch.nn.functional.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1))
    assert e["ce_fp"] == pytest.approx(float(ref), rel=1e-6)
    assert cross_entropy(model, ids, batch_size=3) == pytest.approx(float(ref), rel=1e-6)
    same = quantization_error(model, model, ids)
    assert same["dce"] == 0.0


def test_quantize_model_bad_input(lm):
    model, calib, _ = lm
    with pytest.raises(ValueError, match="method"):
        quantize_model(model, "awq", 3)
    with pytest.raises(ValueError, match="calibration"):
        quantize_model(model, "gptq", 3)
    with pytest.raises(ValueError, match="calibration"):
        quantize_model(model, "gptq", 3, calibration=calib.float())
    with pytest.raises(ValueError, match="calibration"):
        quantize_model(model, "gptq", 3, calibration=calib + 100)
    with pytest.raises(ValueError, match="modules"):
        quantize_model(model, "rtn", 3, modules=["lm_head"])
    with pytest.raises(ValueError, match="model"):
        quantize_model(torch.nn.Linear(2, 2), "rtn", 3)
