"""gpukit.nn against NumPy references computed in float64 on fresh random data."""

import math

import numpy as np
import pytest
from conftest import TOLERANCE, random_array

import gpukit as gk
from gpukit import nn

FLOATS = ["float16", "float32", "float64", "bfloat16"]


def _tol(dtype) -> float:
    dtype = np.dtype(dtype)
    return TOLERANCE.get(dtype, 1.6e-2)  # bfloat16: 8 significant bits


def _data(rng, shape, dtype):
    """(random data of `dtype`, the same values in float64)."""
    x = random_array(rng, shape, dtype)
    return x, x.astype(np.float64)


def _close(actual, expected, dtype, scale=1.0):
    assert isinstance(actual, gk.GPUArray), type(actual)
    got = actual.to_numpy()
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    tol = _tol(dtype) * scale
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tol, atol=tol)


def _softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax_ref(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# --- softmax and log_softmax ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 7, 1000, 4097])
def test_softmax_rows(backend, rng, dtype, n):
    x, ref = _data(rng, (2, 3, n), dtype)
    x = x * 4  # a wider spread than N(0, 1) exercises the running max
    ref = ref * 4
    a = gk.asarray(x)
    _close(nn.softmax(a), _softmax_ref(ref, -1), dtype)
    _close(nn.log_softmax(a), _log_softmax_ref(ref, -1), dtype, scale=4)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [0, 1, 2, -2])
def test_softmax_axis_and_strided_input(backend, rng, dtype, axis):
    x, ref = _data(rng, (6, 40, 10), dtype)
    view = gk.asarray(x).transpose(2, 0, 1)[:, ::2]  # non-contiguous: (10, 3, 40)
    ref = ref.transpose(2, 0, 1)[:, ::2]
    _close(nn.softmax(view, axis=axis), _softmax_ref(ref, axis), dtype)
    _close(nn.log_softmax(view, axis=axis), _log_softmax_ref(ref, axis), dtype, scale=4)


def test_softmax_extremes(backend):
    x = np.array(
        [[1e4, 1e4 - 1, -1e4, -np.inf], [-np.inf, 0.0, 2.0, -np.inf], [3.0, 3.0, 3.0, 3.0]],
        np.float32,
    )
    ref = _softmax_ref(x.astype(np.float64), -1)
    _close(nn.softmax(gk.asarray(x)), ref, "float32")
    got = nn.log_softmax(gk.asarray(x)).to_numpy()
    expected = _log_softmax_ref(x.astype(np.float64), -1)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-5, atol=1e-5)
    scalar = nn.softmax(gk.asarray(np.float32(2.5)))
    assert scalar.shape == () and scalar.item() == 1.0
    assert nn.softmax(gk.zeros((3, 0), "float32")).shape == (3, 0)


# --- layer_norm and rms_norm ----------------------------------------------------------------------
def _layer_norm_ref(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def _rms_norm_ref(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * (1 if w is None else w)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 7, 1000, 4097])
def test_layer_norm(backend, rng, dtype, n):
    x, ref = _data(rng, (5, n), dtype)
    w, w_ref = _data(rng, (n,), dtype)
    b, b_ref = _data(rng, (n,), dtype)
    a = gk.asarray(x)
    _close(nn.layer_norm(a), _layer_norm_ref(ref, None, None, 1e-5), dtype, scale=4)
    got = nn.layer_norm(a, gk.asarray(w), gk.asarray(b), eps=1e-3)
    _close(got, _layer_norm_ref(ref, w_ref, b_ref, 1e-3), dtype, scale=8)
    got = nn.layer_norm(a, weight=gk.asarray(w))
    _close(got, _layer_norm_ref(ref, w_ref, None, 1e-5), dtype, scale=8)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 7, 1000, 4097])
def test_rms_norm(backend, rng, dtype, n):
    x, ref = _data(rng, (5, n), dtype)
    w, w_ref = _data(rng, (n,), dtype)
    a = gk.asarray(x)
    _close(nn.rms_norm(a), _rms_norm_ref(ref, None, 1e-6), dtype, scale=4)
    _close(nn.rms_norm(a, gk.asarray(w), eps=1e-2), _rms_norm_ref(ref, w_ref, 1e-2), dtype, 8)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_repeated_calls_check_what_they_must(backend, rng, dtype):
    """A call repeated with arrays of the same kind reuses its checks; one whose weight needs
    converting (float32 for a 16-bit x), a strided weight or a residual never takes that path,
    and every call reads the data it is given (fresh data each round), with the same bits as
    the checked first call."""
    n = 777
    for _ in range(3):
        x, ref = _data(rng, (4, n), dtype)
        w, w_ref = _data(rng, (n,), dtype)
        w32 = rng.standard_normal(n).astype(np.float32)
        wide = gk.asarray(np.repeat(w, 2))[::2]
        a = gk.asarray(x)
        first = nn.rms_norm(a, gk.asarray(w), eps=1e-3)
        again = nn.rms_norm(a, gk.asarray(w), eps=1e-3)
        _close(again, _rms_norm_ref(ref, w_ref, 1e-3), dtype, 8)
        np.testing.assert_array_equal(again.to_numpy(), first.to_numpy())
        conv = nn.rms_norm(a, gk.asarray(w32), eps=1e-3)
        w32_ref = w32.astype(dtype).astype(np.float64)  # converted to x's dtype first
        _close(conv, _rms_norm_ref(ref, w32_ref, 1e-3), dtype, 8)
        _close(nn.rms_norm(a, wide, eps=1e-3), _rms_norm_ref(ref, w_ref, 1e-3), dtype, 8)
        out, h = nn.rms_norm(a, gk.asarray(w), eps=1e-3, residual=a)
        h_ref = (x.astype(np.float64) * 2).astype(dtype).astype(np.float64)
        np.testing.assert_array_equal(h.to_numpy().astype(np.float64), h_ref)  # x + x is exact
        _close(out, _rms_norm_ref(h_ref, w_ref, 1e-3), dtype, 8)
        b, b_ref = _data(rng, (n,), dtype)
        got = nn.layer_norm(a, gk.asarray(w), gk.asarray(b), eps=1e-3)
        _close(got, _layer_norm_ref(ref, w_ref, b_ref, 1e-3), dtype, scale=8)
        for axis in (-1, 1, 0):
            _close(nn.softmax(a, axis=axis), _softmax_ref(ref, axis), dtype, scale=4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_norms_batched_strided(backend, rng, dtype):
    x, ref = _data(rng, (3, 9, 2, 130), dtype)
    view = gk.asarray(x)[:, 1::2].transpose(0, 2, 1, 3)  # (3, 2, 4, 130), strided rows
    ref = ref[:, 1::2].transpose(0, 2, 1, 3)
    w_full, w_ref = _data(rng, (260,), dtype)
    w = gk.asarray(w_full)[::2]  # a strided weight
    w_ref = w_ref[::2]
    _close(nn.layer_norm(view, w), _layer_norm_ref(ref, w_ref, None, 1e-5), dtype, scale=8)
    _close(nn.rms_norm(view, w), _rms_norm_ref(ref, w_ref, 1e-6), dtype, scale=8)
    col = gk.asarray(x)[0, :, 0, :].T  # rows whose elements lie 260 apart
    _close(
        nn.rms_norm(col),
        _rms_norm_ref(x[0, :, 0].T.astype(np.float64), None, 1e-6),
        dtype,
        4,
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_large_mean(backend, rng, dtype):
    # The spread is tiny against the mean: a naive E[x^2] - E[x]^2 would cancel to noise.
    x, ref = _data(rng, (4, 3000), dtype)
    x = (x * 0.01 + 1000).astype(dtype)
    ref = x.astype(np.float64)
    ref = ref - ref[:, :1]  # exact (Sterbenz), and keeps the float64 reference itself accurate
    _close(nn.layer_norm(gk.asarray(x)), _layer_norm_ref(ref, None, None, 1e-5), dtype, 10)


def test_norm_errors(backend):
    x = gk.zeros((4, 8), "float32")
    with pytest.raises(ValueError, match=r"\(7,\).*\(4, 8\)"):
        nn.layer_norm(x, gk.ones((7,), "float32"))
    with pytest.raises(ValueError, match=r"\(8, 1\)"):
        nn.layer_norm(x, bias=gk.ones((8, 1), "float32"))
    with pytest.raises(ValueError, match=r"\(4,\).*\(4, 8\)"):
        nn.rms_norm(x, gk.ones((4,), "float32"))
    with pytest.raises(TypeError, match="int32"):
        nn.rms_norm(gk.zeros((4, 8), "int32"))
    with pytest.raises(TypeError, match="int64"):
        nn.softmax(gk.arange(5))
    with pytest.raises(TypeError, match="weight"):
        nn.layer_norm(x, gk.ones((8,), "int32"))
    with pytest.raises(np.exceptions.AxisError):
        nn.softmax(x, axis=2)


# --- activations ----------------------------------------------------------------------------------
_ERF = np.vectorize(math.erf)
ACTIVATIONS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "silu": (nn.silu, lambda x: x / (1 + np.exp(-x))),
    "gelu": (nn.gelu, lambda x: 0.5 * x * (1 + _ERF(x / math.sqrt(2)))),
    "gelu_tanh": (
        lambda x: nn.gelu(x, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations(backend, rng, dtype, name):
    f, ref_f = ACTIVATIONS[name]
    x, ref = _data(rng, (7, 1001), dtype)
    x = (x * 3).astype(x.dtype)
    ref = x.astype(np.float64)
    _close(f(gk.asarray(x)), ref_f(ref), dtype, scale=2)
    view = gk.asarray(x)[::2, ::3].T  # non-contiguous
    _close(f(view), ref_f(ref[::2, ::3].T), dtype, scale=2)


def test_activation_errors_and_nan(backend):
    got = nn.relu(gk.asarray(np.array([np.nan, -1.0, 2.0], np.float32))).to_numpy()
    np.testing.assert_array_equal(got, [np.nan, 0.0, 2.0])
    for f in (nn.relu, nn.silu, nn.gelu):
        with pytest.raises(TypeError, match="int32"):
            f(gk.zeros((3,), "int32"))
    with pytest.raises(ValueError, match="approximate"):
        nn.gelu(gk.zeros((3,), "float32"), approximate="erf")


# --- embedding ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("id_dtype", ["int32", "int64", "uint8"])
@pytest.mark.parametrize("dim", [1, 7, 64])
def test_embedding(backend, rng, dtype, id_dtype, dim):
    table, _ = _data(rng, (50, dim), dtype)
    ids = rng.integers(0, 50, size=(3, 11)).astype(id_dtype)
    got = nn.embedding(gk.asarray(ids), gk.asarray(table))
    assert got.dtype == table.dtype
    np.testing.assert_array_equal(got.to_numpy(), table[ids])
    # Strided ids and a transposed (column-major) table.
    t_cols = gk.asarray(np.ascontiguousarray(table.T)).T
    got = nn.embedding(gk.asarray(ids)[:, ::2], t_cols)
    np.testing.assert_array_equal(got.to_numpy(), table[ids[:, ::2]])
    assert nn.embedding(gk.asarray(ids[:0]), gk.asarray(table)).shape == (0, 11, dim)


def test_embedding_errors(backend):
    table = gk.ones((10, 4), "float32")
    with pytest.raises(IndexError):
        nn.embedding(gk.asarray(np.array([1, 10])), table)
    with pytest.raises(IndexError):
        nn.embedding(gk.asarray(np.array([[0], [-1]])), table)
    with pytest.raises(TypeError, match="float32"):
        nn.embedding(gk.zeros((3,), "float32"), table)
    with pytest.raises(TypeError, match="table"):
        nn.embedding(gk.zeros((3,), "int64"), gk.zeros((10, 4), "int32"))
    with pytest.raises(ValueError, match=r"\(40,\)"):
        nn.embedding(gk.zeros((3,), "int64"), gk.ones((40,), "float32"))


# --- rope -----------------------------------------------------------------------------------------
def _rope_ref(x, cos, sin, layout):
    """Independent formulations: rotate_half with duplicated angles, and complex products."""
    if layout == "half":
        c, s = np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)
        half = x.shape[-1] // 2
        rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
        return x * c + rotated * s
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * (cos + 1j * sin)
    return np.stack([z.real, z.imag], -1).reshape(x.shape)


def test_rope_cache(backend):
    cos, sin = nn.rope_cache(11, 6, base=500.0)
    assert cos.shape == sin.shape == (11, 3) and cos.dtype == np.float32
    angles = np.arange(11)[:, None] * 500.0 ** (-np.arange(0, 6, 2) / 6)
    np.testing.assert_allclose(cos.to_numpy(), np.cos(angles), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sin.to_numpy(), np.sin(angles), rtol=1e-6, atol=1e-6)
    assert nn.rope_cache(4, 8, dtype="float16")[0].dtype == np.float16
    with pytest.raises(ValueError, match="even"):
        nn.rope_cache(4, 7)
    with pytest.raises(TypeError):
        nn.rope_cache(4, 8, dtype="int32")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("dim", [2, 14, 128])
def test_rope(backend, rng, dtype, layout, dim):
    seq = 9
    x, ref = _data(rng, (2, 3, seq, dim), dtype)
    cos, sin = nn.rope_cache(seq, dim, dtype=dtype)
    c_ref, s_ref = cos.to_numpy().astype(np.float64), sin.to_numpy().astype(np.float64)
    _close(nn.rope(gk.asarray(x), cos, sin, layout), _rope_ref(ref, c_ref, s_ref, layout), dtype, 4)
    # (batch, seq, heads, dim) stored, read as (batch, heads, seq, dim): a strided view.
    x2, ref2 = _data(rng, (2, seq, 3, dim), dtype)
    view = gk.asarray(x2).transpose(0, 2, 1, 3)
    want = _rope_ref(ref2.transpose(0, 2, 1, 3), c_ref, s_ref, layout)
    _close(nn.rope(view, cos, sin, layout=layout), want, dtype, 4)
    # (seq, dim) without heads; then angles per batch row (sequences at different positions).
    _close(
        nn.rope(gk.asarray(x[0, 0]), cos, sin, layout),
        _rope_ref(ref[0, 0], c_ref, s_ref, layout),
        dtype,
        4,
    )
    big_c, big_s = nn.rope_cache(3 * seq, dim, dtype=dtype)
    per_batch = [slice(0, seq), slice(2 * seq, 3 * seq)]
    c_b = gk.stack([big_c[p] for p in per_batch])[:, None]  # (2, 1, seq, dim/2)
    s_b = gk.stack([big_s[p] for p in per_batch])[:, None]
    cb_ref, sb_ref = (a.to_numpy().astype(np.float64) for a in (c_b, s_b))
    _close(
        nn.rope(gk.asarray(x), c_b, s_b, layout), _rope_ref(ref, cb_ref, sb_ref, layout), dtype, 4
    )


def test_rope_errors(backend):
    x = gk.zeros((2, 5, 8), "float32")
    cos, sin = nn.rope_cache(5, 8)
    with pytest.raises(ValueError, match="even"):
        nn.rope(gk.zeros((2, 5, 7), "float32"), cos, sin)
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        nn.rope(x, cos[:4], sin)
    with pytest.raises(ValueError, match=r"\(5, 8\)"):
        nn.rope(x, gk.zeros((5, 8), "float32"), sin)
    with pytest.raises(ValueError, match="layout"):
        nn.rope(x, cos, sin, layout="gptj")
    with pytest.raises(TypeError, match="int32"):
        nn.rope(gk.zeros((2, 5, 8), "int32"), cos, sin)


# --- attention ------------------------------------------------------------------------------------
def _attention_ref(q, k, v, mask=None, causal=False, scale=None):
    b, hq, sq, d = q.shape
    hkv, skv = k.shape[1], k.shape[2]
    k = np.repeat(k, hq // hkv, axis=1)
    v = np.repeat(v, hq // hkv, axis=1)
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(d) if scale is None else scale)
    allowed = np.ones((b, hq, sq, skv), bool)
    if causal:
        allowed &= np.arange(skv)[None, :] <= np.arange(sq)[:, None] + skv - sq
    if mask is not None:
        if mask.dtype == np.bool_:
            allowed &= mask
        else:
            s = s + mask
    s = np.where(allowed, s, -np.inf)
    m = s.max(-1, keepdims=True)
    seen = np.isfinite(m)
    p = np.exp(s - np.where(seen, m, 0))
    out = p @ v / np.where(seen, p.sum(-1, keepdims=True), 1)
    return np.where(seen, out, 0)


# (batch, hq, hkv, sq, skv, head_dim, causal)
ATTENTION_CASES = {
    "mha": (2, 4, 4, 7, 7, 16, False),
    "causal": (1, 2, 2, 37, 37, 64, True),
    "gqa_causal_kv_cache": (2, 8, 2, 5, 70, 40, True),
    "mqa_long": (1, 4, 1, 33, 200, 128, False),
    "decode_long": (2, 8, 2, 1, 3000, 128, True),
    "decode_mha": (1, 3, 3, 1, 1000, 64, False),
    "head_dim_256": (1, 2, 1, 9, 45, 256, True),
    "head_dim_1": (1, 1, 1, 3, 5, 1, False),
    "sq_over_skv": (1, 2, 2, 6, 4, 32, True),  # the first rows see nothing: zeros
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", sorted(ATTENTION_CASES))
def test_attention(backend, rng, dtype, case):
    b, hq, hkv, sq, skv, d, causal = ATTENTION_CASES[case]
    q, q_ref = _data(rng, (b, hq, sq, d), dtype)
    k, k_ref = _data(rng, (b, hkv, skv, d), dtype)
    v, v_ref = _data(rng, (b, hkv, skv, d), dtype)
    got = nn.scaled_dot_product_attention(gk.asarray(q), gk.asarray(k), gk.asarray(v), None, causal)
    _close(got, _attention_ref(q_ref, k_ref, v_ref, causal=causal), dtype, scale=4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_attention_masks_and_strides(backend, rng, dtype):
    b, hq, hkv, sq, skv, d = 2, 6, 3, 11, 75, 48
    # Stored as (batch, seq, heads, dim), as a projection writes them: strided head views.
    q, q_ref = _data(rng, (b, sq, hq, d), dtype)
    k, k_ref = _data(rng, (b, skv, hkv, d), dtype)
    v, v_ref = _data(rng, (b, skv, hkv, d), dtype)
    qa, ka, va = (gk.asarray(a).transpose(0, 2, 1, 3) for a in (q, k, v))
    q_ref, k_ref, v_ref = (a.transpose(0, 2, 1, 3) for a in (q_ref, k_ref, v_ref))
    # A padding mask per batch row (broadcast over heads and queries); batch 1 hides every key
    # from query row 0 of head 0 through a full mask below.
    pad = np.ones((b, 1, 1, skv), bool)
    pad[0, ..., 60:] = False
    got = nn.scaled_dot_product_attention(qa, ka, va, mask=gk.asarray(pad))
    _close(got, _attention_ref(q_ref, k_ref, v_ref, pad), dtype, scale=4)
    full = rng.random((b, hq, sq, skv)) < 0.7
    full[1, 0, 0] = False
    got = nn.scaled_dot_product_attention(qa, ka, va, gk.asarray(full), is_causal=True)
    want = _attention_ref(q_ref, k_ref, v_ref, full, causal=True)
    _close(got, want, dtype, scale=4)
    assert not got.to_numpy()[1, 0, 0].any()
    # An additive mask (a bias over keys, -inf for hidden ones), broadcast over batch and heads.
    bias = (rng.standard_normal((sq, skv)) * 2).astype(np.float32)
    bias[:, :5] = -np.inf
    bias_ref = bias.astype(np.dtype(dtype)).astype(np.float64)
    got = nn.scaled_dot_product_attention(qa, ka, va, gk.asarray(bias), scale=0.3)
    _close(got, _attention_ref(q_ref, k_ref, v_ref, bias_ref, scale=0.3), dtype, scale=4)


def test_attention_errors(backend):
    q = gk.zeros((1, 4, 3, 8), "float32")
    kv = gk.zeros((1, 2, 5, 8), "float32")
    with pytest.raises(ValueError, match=r"\(1, 4, 3, 8\).*\(1, 3, 5, 8\)"):
        nn.scaled_dot_product_attention(
            q, gk.zeros((1, 3, 5, 8), "float32"), gk.zeros((1, 3, 5, 8), "float32")
        )
    with pytest.raises(ValueError, match=r"\(1, 2, 5, 16\)"):
        nn.scaled_dot_product_attention(
            q, gk.zeros((1, 2, 5, 16), "float32"), gk.zeros((1, 2, 5, 16), "float32")
        )
    with pytest.raises(ValueError, match=r"\(1, 2, 5, 4\)"):
        nn.scaled_dot_product_attention(q, kv, gk.zeros((1, 2, 5, 4), "float32"))
    with pytest.raises(ValueError, match="4-D"):
        nn.scaled_dot_product_attention(gk.zeros((4, 3, 8), "float32"), kv, kv)
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        nn.scaled_dot_product_attention(q, kv, kv, mask=gk.zeros((3, 4), "float32"))
    with pytest.raises(TypeError, match="int32"):
        nn.scaled_dot_product_attention(q, kv, kv, mask=gk.zeros((3, 5), "int32"))
    with pytest.raises(TypeError, match="int32"):
        nn.scaled_dot_product_attention(gk.zeros((1, 4, 3, 8), "int32"), kv, kv)
    with pytest.raises(TypeError, match="float16"):
        nn.scaled_dot_product_attention(q.astype("float16"), kv, kv)
    with pytest.raises(ValueError, match="257"):
        big = gk.zeros((1, 1, 2, 257), "float32")
        nn.scaled_dot_product_attention(big, big, big)


def test_attention_no_keys_gives_zeros(backend):
    q = gk.ones((1, 2, 3, 8), "float32")
    kv = gk.zeros((1, 1, 0, 8), "float32")
    got = nn.scaled_dot_product_attention(q, kv, kv)
    np.testing.assert_array_equal(got.to_numpy(), np.zeros((1, 2, 3, 8), np.float32))
