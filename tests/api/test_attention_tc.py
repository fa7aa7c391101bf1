"""scaled_dot_product_attention on the shapes and dtypes the tensor-core kernels serve on the GPU
(float16 / bfloat16, head_dim 64 / 96 / 128 / 256 and padded ones, prefill and split-KV decode,
masks, GQA, odd lengths, strided views, device kv_length), against a float64 reference; every
backend runs the same cases."""

import dataclasses
import importlib

import numpy as np
import pytest
from attention_reference import attention_f64
from conftest import random_array

import gpukit as gk
from gpukit import nn
from gpukit.runtime import open_backend
from gpukit.runtime.cuda import attention_geometry

HALF = ["float16", "bfloat16"]


def _inputs(rng, dtype, b, hq, hkv, sq, skv, d, strided=False):
    """q, k, v as GPUArrays (strided: (batch, seq, heads, d) storage seen as (batch, heads, seq,
    d)) and their float64 values."""
    if strided:
        shapes = ((b, sq, hq, d), (b, skv, hkv, d), (b, skv, hkv, d))
    else:
        shapes = ((b, hq, sq, d), (b, hkv, skv, d), (b, hkv, skv, d))
    host = [random_array(rng, s, dtype) for s in shapes]
    dev = [gk.asarray(h) for h in host]
    if strided:
        host = [h.transpose(0, 2, 1, 3) for h in host]
        dev = [a.transpose(0, 2, 1, 3) for a in dev]
    return dev, [h.astype(np.float64) for h in host]


def _poison(shape, dtype):
    """Leaves a NaN-filled block of the result's size in the pool, so that the result's buffer
    starts as NaNs where the pool hands the same block back."""
    gk.full(shape, np.nan, dtype)


def _check(got, want, dtype):
    """Relative error (norm) within 1e-2 for 16-bit floats, every element written; rows that see
    no key are exact zeros."""
    out = got.to_numpy().astype(np.float64)
    assert out.shape == want.shape
    assert got.dtype == np.dtype(dtype)
    assert not np.isnan(out).any()
    err = np.linalg.norm(out - want) / max(np.linalg.norm(want), 1e-30)
    limit = 1e-2 if np.dtype(dtype).itemsize == 2 else 1e-5
    assert err <= limit, err
    zero_rows = ~np.any(want != 0, axis=-1)
    assert not out[zero_rows].any()


# (batch, hq, hkv, sq, skv, head_dim, causal, strided)
PREFILL = {
    "d64_causal_odd": (1, 4, 2, 129, 129, 64, True, False),
    "d96_full": (2, 2, 1, 7, 65, 96, False, False),
    "d128_causal_gqa": (1, 8, 2, 130, 1000, 128, True, False),
    "d128_strided": (2, 4, 2, 65, 200, 128, True, True),
    "d256_full": (1, 2, 2, 33, 129, 256, False, False),
    "d120_padded": (1, 2, 1, 20, 70, 120, True, False),
    "d48_padded_sq_over_skv": (1, 3, 1, 40, 33, 48, True, False),
    "one_query_one_key": (1, 2, 2, 1, 1, 128, False, False),
    # Several key tiles and query-row blocks (on sm_90a: kernels/attention_sm90.cu's pipeline).
    "d128_causal_long": (2, 4, 2, 300, 300, 128, True, False),
    "d64_full_long_gqa": (1, 4, 1, 257, 515, 64, False, False),
    "d256_causal_sq_under_skv": (1, 2, 1, 200, 333, 256, True, True),
    "d128_causal_sq_over_skv": (1, 2, 2, 300, 100, 128, True, False),
}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("case", sorted(PREFILL))
def test_attention_tc_prefill(backend, rng, dtype, case):
    b, hq, hkv, sq, skv, d, causal, strided = PREFILL[case]
    (q, k, v), (qr, kr, vr) = _inputs(rng, dtype, b, hq, hkv, sq, skv, d, strided)
    _poison((b, hq, sq, d), dtype)
    got = nn.scaled_dot_product_attention(q, k, v, is_causal=causal)
    _check(got, attention_f64(qr, kr, vr, causal=causal), dtype)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("d", [64, 128, 256])
def test_attention_tc_masks(backend, rng, dtype, d):
    b, hq, hkv, sq, skv = 2, 4, 2, 65, 150
    (q, k, v), (qr, kr, vr) = _inputs(rng, dtype, b, hq, hkv, sq, skv, d)
    # Boolean, broadcast over heads; row 0 of batch 0 sees no key at all.
    keep = rng.random((b, 1, sq, skv)) < 0.7
    keep[0, :, 0] = False
    got = nn.scaled_dot_product_attention(q, k, v, mask=gk.asarray(keep))
    _check(got, attention_f64(qr, kr, vr, keep), dtype)
    assert not got.to_numpy()[0, :, 0].any()
    # Additive, broadcast over batch and heads, with hidden keys and a fully hidden row; causal.
    bias = (rng.standard_normal((sq, skv)) * 2).astype(dtype)
    bias[:, :3] = -np.inf
    bias[1] = -np.inf
    got = nn.scaled_dot_product_attention(q, k, v, mask=gk.asarray(bias), is_causal=True)
    _check(got, attention_f64(qr, kr, vr, bias.astype(np.float64), causal=True), dtype)
    # A scale of either sign.
    got = nn.scaled_dot_product_attention(q, k, v, scale=-0.2)
    _check(got, attention_f64(qr, kr, vr, scale=-0.2), dtype)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("d", [64, 128, 256])
def test_attention_tc_prefill_device_length(backend, rng, dtype, d):
    """Prefill rows against a cache whose valid keys come from the device, one count per batch
    entry (causal rows align to each count; a count of 0 gives zeros)."""
    b, hq, hkv, sq, skv = 3, 4, 2, 140, 400
    (q, k, v), (qr, kr, vr) = _inputs(rng, dtype, b, hq, hkv, sq, skv, d)
    lengths = [390, 141, 0]
    n = gk.asarray(np.array(lengths, np.int32))
    _poison((b, hq, sq, d), dtype)
    got = nn.scaled_dot_product_attention(q, k, v, is_causal=True, kv_length=n, scale=0.05)
    want = attention_f64(qr, kr, vr, causal=True, kv_length=np.array(lengths), scale=0.05)
    _check(got, want, dtype)


def test_attention_prefill_takes_the_sm90_kernel_on_hopper(backend, rng):
    """On an sm_90 GPU with an sm_90a compiler, unmasked prefill with head_dim 64 / 128 / 256
    runs kernels/attention_sm90.cu (and masked calls the sm_80 kernel)."""
    if backend != "cuda":
        pytest.skip("a CUDA GPU's choice")
    rt = open_backend("cuda")
    if not rt.sm90a:
        pytest.skip("no sm_90 GPU with an sm_90a compiler")
    (q, k, v), _ = _inputs(rng, "bfloat16", 1, 2, 2, 130, 130, 128)
    nn.scaled_dot_product_attention(q, k, v, is_causal=True)
    files = {key[0] for key in rt._functions}
    assert "attention_sm90.cu" in files
    nn.scaled_dot_product_attention(q, k, v, mask=gk.ones((130, 130), "bool"))
    assert "attention_tc.cu" in {key[0] for key in rt._functions}


# (batch, hq, hkv, sq, skv, head_dim, causal, kv_length): the persistent grid's cases, each block
# walking several items (odd tails, causal pairs, sq over skv, rows that see no key, GQA, device
# lengths with a 0)
PERSISTENT = {
    "d64_causal_pairs": (2, 4, 2, 700, 700, 64, True, None),
    "d64_full_tail": (1, 4, 1, 257, 515, 64, False, None),
    "d128_causal_sq_over_skv": (1, 3, 3, 300, 100, 128, True, None),
    "d128_causal_device_length": (3, 4, 2, 400, 600, 128, True, [590, 141, 0]),
    "d256_causal_sq_under_skv": (1, 2, 1, 333, 500, 256, True, None),
    "d256_full": (2, 2, 2, 200, 129, 256, False, None),
}


@pytest.mark.parametrize("sms", [3, 132])
@pytest.mark.parametrize("case", sorted(PERSISTENT))
def test_attention_sm90_persistent_grid_gives_the_same_bits(backend, rng, monkeypatch, case, sms):
    """kernels/attention_sm90.cu's persistent form (a few blocks, each walking many items, or a
    block per SM) writes the same bits as a block per row tile, and matches the reference."""
    if backend != "cuda":
        pytest.skip("the sm_90a kernel runs on a CUDA GPU")
    rt = open_backend("cuda")
    if not rt.sm90a:
        pytest.skip("no sm_90 GPU with an sm_90a compiler")
    b, hq, hkv, sq, skv, d, causal, lengths = PERSISTENT[case]
    dtype = "bfloat16" if d == 128 else "float16"
    (q, k, v), (qr, kr, vr) = _inputs(rng, dtype, b, hq, hkv, sq, skv, d)
    n = None if lengths is None else gk.asarray(np.array(lengths, np.int32))
    plans = importlib.import_module("gpukit.array")._PLANS
    table = attention_geometry.sm90_table(causal)
    shipped = table[d]
    outs = []
    variants = [dict(persist=False), dict(persist=True)]
    for flags in variants:
        tiles = dataclasses.replace(shipped, **flags)
        monkeypatch.setitem(table, d, tiles)
        monkeypatch.setattr(rt, "sm_count", sms)
        plans.clear()
        _poison((b, hq, sq, d), dtype)
        outs.append(nn.scaled_dot_product_attention(q, k, v, is_causal=causal, kv_length=n))
    plans.clear()
    kv = None if lengths is None else np.array(lengths)
    _check(outs[1], attention_f64(qr, kr, vr, causal=causal, kv_length=kv), dtype)
    a, *others = (x.to_numpy().view(np.uint16) for x in outs)
    for flags, p in zip(variants[1:], others, strict=True):
        assert np.array_equal(a, p), (flags, int((a != p).sum()))


@pytest.mark.parametrize("d", [64, 128, 256])
def test_attention_sm90_folded_exponent(backend, rng, monkeypatch, d):
    """The folded exponent (one FFMA of the unscaled score) matches the reference for a positive
    scale; a negative scale takes the unfolded kernel, bit for bit."""
    if backend != "cuda":
        pytest.skip("the sm_90a kernel runs on a CUDA GPU")
    if not open_backend("cuda").sm90a:
        pytest.skip("no sm_90 GPU with an sm_90a compiler")
    b, hq, hkv, sq, skv = 2, 4, 2, 300, 450
    (q, k, v), (qr, kr, vr) = _inputs(rng, "bfloat16", b, hq, hkv, sq, skv, d)
    plans = importlib.import_module("gpukit.array")._PLANS
    table = attention_geometry.sm90_table(True)
    shipped = table[d]
    outs = {}
    for fold in (False, True):
        monkeypatch.setitem(table, d, dataclasses.replace(shipped, fold=fold))
        plans.clear()
        for scale in (None, -0.2):
            got = nn.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
            outs[fold, scale] = got.to_numpy().view(np.uint16)
            want = attention_f64(qr, kr, vr, causal=True, scale=scale)
            _check(got, want, "bfloat16")
    plans.clear()
    assert np.array_equal(outs[False, -0.2], outs[True, -0.2])


# (batch, hq, hkv, sq, skv, head_dim, causal, kv_length): decode shapes (few rows per kv head)
DECODE = {
    "gqa_32_8": (1, 32, 8, 1, 2000, 128, False, None),
    "gqa_device_length": (2, 8, 2, 1, 1500, 128, True, [1001, 7]),
    "mha_one_length": (1, 4, 4, 1, 700, 64, False, [333]),
    "speculative_rows": (1, 16, 2, 3, 600, 128, True, [590]),
    "d96": (1, 8, 2, 1, 900, 96, False, None),
    "d256_length_zero_and_past": (2, 4, 1, 1, 300, 256, False, [0, 5000]),
}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("case", sorted(DECODE))
def test_attention_tc_decode(backend, rng, dtype, case):
    b, hq, hkv, sq, skv, d, causal, lengths = DECODE[case]
    (q, k, v), (qr, kr, vr) = _inputs(rng, dtype, b, hq, hkv, sq, skv, d)
    kv_length = None
    if lengths is not None:
        kv_length = gk.asarray(np.array(lengths, np.int32 if len(lengths) > 1 else np.int64))
    ref_len = None if lengths is None else np.broadcast_to(np.array(lengths), (b,))
    _poison((b, hq, sq, d), dtype)
    got = nn.scaled_dot_product_attention(q, k, v, is_causal=causal, kv_length=kv_length)
    _check(got, attention_f64(qr, kr, vr, causal=causal, kv_length=ref_len), dtype)


def test_attention_kv_length_matches_a_cut_cache(backend, rng):
    """A cache of capacity 512 holding 300 valid keys (the rest garbage) gives what the first 300
    keys alone give, for a masked causal call and on the CUDA-core path (float32) too."""
    for dtype in ("bfloat16", "float32"):
        (q, k, v), _ = _inputs(rng, dtype, 1, 8, 2, 2, 512, 128)
        bias = gk.asarray((rng.standard_normal((2, 512)) * 0.5).astype(dtype))
        k[:, :, 300:] = gk.full((1, 2, 212, 128), 1e4, dtype)
        n = gk.asarray(np.array(300, np.int32))
        got = nn.scaled_dot_product_attention(q, k, v, bias, True, kv_length=n)
        want = nn.scaled_dot_product_attention(q, k[:, :, :300], v[:, :, :300], bias[:, :300], True)
        np.testing.assert_allclose(
            got.to_numpy().astype(np.float64), want.to_numpy().astype(np.float64), atol=2e-2
        )


def test_attention_kv_length_errors(backend):
    q = gk.zeros((2, 4, 1, 64), "float16")
    kv = gk.zeros((2, 2, 10, 64), "float16")
    with pytest.raises(TypeError, match="float32"):
        nn.scaled_dot_product_attention(q, kv, kv, kv_length=gk.zeros((1,), "float32"))
    with pytest.raises(ValueError, match=r"\(3,\)"):
        nn.scaled_dot_product_attention(q, kv, kv, kv_length=gk.zeros((3,), "int32"))


def test_attention_decode_graph_replays_at_every_length(backend, rng):
    """A captured decode step (GQA 32/8, 4096 cached keys: several key splits merged by the last
    to finish) replayed after the device length changes: every replay matches float64 at its
    length, lengths that end inside a split, on the first, and at zero included; a replay at a
    length seen before gives the same bits (the splits' counters start from zero every time)."""
    (q, k, v), (qr, kr, vr) = _inputs(rng, "bfloat16", 1, 32, 8, 1, 4096, 128)
    n = gk.asarray(np.array([4096], np.int32))
    nn.scaled_dot_product_attention(q, k, v, kv_length=n)  # planned outside the capture
    g = gk.graph(lambda: nn.scaled_dot_product_attention(q, k, v, kv_length=n))
    first = {}
    for length in (4096, 2345, 1, 0, 4095, 2345, 4096):
        n[...] = gk.asarray(np.array([length], np.int32))
        got = g.replay()
        _check(got, attention_f64(qr, kr, vr, kv_length=[length]), "bfloat16")
        bits = got.to_numpy().view(np.uint16).copy()
        if length in first:
            np.testing.assert_array_equal(bits, first[length])
        first[length] = bits


@pytest.mark.parametrize("mask", ["bool", "additive"])
def test_attention_decode_masks_over_splits(backend, rng, mask):
    """Decode (GQA 32/8, one query, 3000 keys) with a mask and a device length per batch entry:
    the splits' partial states merge right where the mask hides whole splits of a row."""
    b, skv = 2, 3000
    (q, k, v), (qr, kr, vr) = _inputs(rng, "float16", b, 32, 8, 1, skv, 128)
    if mask == "bool":
        m = rng.random((b, 32, 1, skv)) < 0.5
        m[0, :5, :, :2000] = False  # rows whose first splits see nothing
        m[1, 7] = False  # a row that sees no key at all: zeros
        ref_mask = m
    else:
        m = (rng.standard_normal((1, 32, 1, skv)) * 2).astype("float16")
        m[..., 100:2500] = -np.inf
        ref_mask = m.astype(np.float64)
    lengths = [2999, 1800]
    kv_length = gk.asarray(np.array(lengths, np.int32))
    _poison((b, 32, 1, 128), "float16")
    got = nn.scaled_dot_product_attention(q, k, v, mask=gk.asarray(m), kv_length=kv_length)
    want = attention_f64(qr, kr, vr, ref_mask, kv_length=lengths)
    _check(got, want, "float16")
