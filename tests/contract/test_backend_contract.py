"""The Backend protocol (gpukit.runtime.backend), checked on every backend that opens here: what
a new backend (HIP, another device kind) must do before the front end can run on it. Each
planner is called directly with buffers from the backend's own pool, on fresh random data,
outputs compared with NumPy."""

import math

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk
from gpukit import _core
from gpukit.base import dtypes
from gpukit.base.shapes import contiguous_strides
from gpukit.runtime import open_backend, philox
from gpukit.runtime.backend import Capabilities, Layout
from gpukit.runtime.ops import ELEMENTWISE

F32, F64, I64, I32 = (np.dtype(t) for t in ("float32", "float64", "int64", "int32"))


@pytest.fixture
def rt(backend):
    return open_backend(backend)


def put(rt, x: np.ndarray, offset: int = 0):
    """(buffer, offset, layout) of a copy of x in the backend's memory, `offset` bytes in."""
    x = np.ascontiguousarray(x)
    buf = rt.pool.allocate(x.nbytes + offset, rt.stream)
    if x.size:
        rt.upload(x, buf, offset)
    return buf, offset, Layout(x.dtype, x.shape, x.strides, 16 if offset % 16 == 0 else 4)


def get(rt, buf, layout: Layout, offset: int = 0) -> np.ndarray:
    host = np.empty(layout.shape, layout.dtype)
    rt.download(host, buf, offset)
    return host


def dense(dtype, shape) -> Layout:
    dtype = np.dtype(dtype)
    return Layout(dtype, tuple(shape), contiguous_strides(shape, dtype.itemsize))


def test_identity_and_capabilities(rt, backend):
    assert rt.kind == backend
    assert isinstance(rt.index, int) and rt.name in (rt.kind, f"{rt.kind}:{rt.index}")
    assert isinstance(rt.capabilities, Capabilities)
    assert isinstance(rt.pool, _core.Pool)
    assert len(rt.dlpack_device) == 2 and rt.total_memory > 0
    info = rt.memory_info()
    assert (info is None) == (not rt.capabilities.memory_info)
    assert isinstance(rt.describe(), str)


def test_streams_and_events(rt):
    start, end = rt.create_event(True), rt.create_event(True)
    rt.record_event(start, rt.stream)
    rt.record_event(end, rt.stream)
    rt.synchronize_event(end)
    assert rt.event_done(end) and rt.elapsed_ms(start, end) >= 0
    least, _ = rt.stream_priority_range()
    stream = rt.create_stream(least)
    rt.wait_event(stream, end)
    rt.synchronize(stream)
    rt.destroy_event(start)
    rt.destroy_event(end)


def test_upload_download_round_trip_at_an_offset(rt, rng):
    x = random_array(rng, (1000,), "int16")
    buf, off, layout = put(rt, x, offset=48)
    np.testing.assert_array_equal(get(rt, buf, layout, off), x)


def test_elementwise_plans_allocate_or_write_out(rt, rng):
    add = ELEMENTWISE["add"]
    x, y = random_array(rng, (7, 33), "float32"), random_array(rng, (33,), "float32")
    (bx, ox, lx), (by, oy, ly) = put(rt, x, 16), put(rt, y)
    out = dense(F32, x.shape)
    plan = rt.plan_elementwise(add, F32, (lx, ly), out, True)
    got = plan(rt.stream, None, bx, ox, by, oy)
    np.testing.assert_array_equal(get(rt, got, out), x + y)
    # The same plan serves other operands of the same layout, and scalars are values per call.
    x2 = random_array(rng, (7, 33), "float32")
    got = plan(rt.stream, None, put(rt, x2)[0], 0, by, oy)
    np.testing.assert_array_equal(get(rt, got, out), x2 + y)
    scaled = rt.plan_elementwise(ELEMENTWISE["multiply"], F32, (lx, float), out, True)
    for k in (2.0, -0.5):
        np.testing.assert_array_equal(
            get(rt, scaled(rt.stream, None, bx, ox, k), out), x * np.float32(k)
        )
    # Into a strided out at an offset: every element written, nothing beside it.
    target = np.full((33, 7), np.nan, np.float32)
    bt, ot, _ = put(rt, target, 32)
    strided = Layout(F32, (7, 33), (4, 28), 16)
    into = rt.plan_elementwise(add, F32, (lx, ly), strided, False)
    assert into(rt.stream, None, bx, ox, by, oy, bt, ot) is None
    np.testing.assert_array_equal(get(rt, bt, dense(F32, (33, 7)), ot), (x + y).T)


def _operand_dtypes(op) -> list:
    """float64 operands where the op's rule takes them, else int32 (bitwise ops, gcd), else
    float64 with int32 exponents (ldexp)."""
    for types in ([F64] * op.arity, [I32] * op.arity, [F64, I32]):
        try:
            dtypes.resolve(op.rule, *types)
            return types
        except TypeError:
            continue
    raise AssertionError(f"no operand dtypes for {op.name}")


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_every_elementwise_op_of_the_table(rt, rng, name):
    """Each op runs with the table's dtype rule; those NumPy has match it."""
    op = ELEMENTWISE[name]
    values = [random_array(rng, (5, 3), t) for t in _operand_dtypes(op)]
    if name == "where":
        values[0] = values[0] > 0
    if name in ("log", "sqrt", "rsqrt"):
        values[0] = np.abs(values[0]) + 0.5
    loop, out_dt = dtypes.resolve(op.rule, *(v.dtype for v in values), name=name)
    args, layouts = [], []
    for v in values:
        b, o, lay = put(rt, v)
        args += (b, o)
        layouts.append(lay)
    out = dense(out_dt, (5, 3))
    got = get(
        rt, rt.plan_elementwise(op, loop, tuple(layouts), out, True)(rt.stream, None, *args), out
    )
    reference = op.numpy_reference
    if reference is not None and name != "identity":
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(got, reference(*values), rtol=1e-12)


def test_quota_charges_plan_outputs(rt, rng):
    x = random_array(rng, (1024,), "float32")
    bx, ox, lx = put(rt, x)
    plan = rt.plan_elementwise(ELEMENTWISE["exp"], F32, (lx,), dense(F32, (1024,)), True)
    quota = rt.pool.create_quota(1024)  # less than the 4 KiB output
    try:
        with pytest.raises(gk.OutOfMemoryError):
            plan(rt.stream, quota, bx, ox)
        assert rt.pool.quota_usage(quota)[1] == 0
    finally:
        rt.pool.drop_quota(quota)


def test_reduce_cumsum_arange(rt, rng):
    x = random_array(rng, (6, 9, 4), "float64")
    bx, ox, lx = put(rt, x)
    got = rt.plan_reduce("sum", lx, (0, 2), dense(F64, (9,)))(rt.stream, None, bx, ox)
    np.testing.assert_allclose(get(rt, got, dense(F64, (9,))), x.sum(axis=(0, 2)), rtol=1e-12)
    got = rt.plan_reduce("var", lx, (1,), dense(F64, (6, 4)), 1)(rt.stream, None, bx, ox)
    np.testing.assert_allclose(get(rt, got, dense(F64, (6, 4))), x.var(axis=1, ddof=1), rtol=1e-12)
    got = rt.plan_reduce("any", lx, (0, 1, 2), dense(np.bool_, ()))(rt.stream, None, bx, ox)
    assert get(rt, got, dense(np.bool_, ()))[()] == np.bool_(True)
    got = rt.plan_cumsum(lx, 1, dense(F64, x.shape))(rt.stream, None, bx, ox)
    np.testing.assert_allclose(get(rt, got, dense(F64, x.shape)), x.cumsum(axis=1), rtol=1e-12)
    plan = rt.plan_arange(dense(I64, (11,)))
    np.testing.assert_array_equal(
        get(rt, plan(rt.stream, None, -3, 2), dense(I64, (11,))), np.arange(-3, 19, 2)
    )


def test_matmul_with_bias_and_row_slices(rt, rng):
    a, b = random_array(rng, (37, 20), "float32"), random_array(rng, (20, 9), "float32")
    bias = random_array(rng, (9,), "float32")
    (ba, oa, la), (bb, ob, lb), (bc, oc, lc) = put(rt, a), put(rt, b), put(rt, bias)
    out = dense(F32, (37, 9))
    ref = a.astype(np.float64) @ b + bias
    for row_block in (None, 8):
        plan = rt.plan_matmul(la, lb, out, lc, row_block)
        got = get(rt, plan(rt.stream, None, ba, oa, bb, ob, bc, oc), out)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_matmul_epilogue_and_row_slices_give_the_same_bits(rt, rng, dtype):
    """act(a @ b + bias) + residual, whole and in row slices: the same bits, near float64."""
    dt = np.dtype(dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    a, b = random_array(rng, (300, 264), dt), random_array(rng, (264, 520), dt)
    bias, res = random_array(rng, (520,), dt), random_array(rng, (300, 520), dt)
    (ba, oa, la), (bb, ob, lb) = put(rt, a), put(rt, b)
    (bc, oc, lc), (br, orr, lr) = put(rt, bias), put(rt, res)
    out = dense(dt, (300, 520))
    got = []
    for row_block in (None, 100):
        plan = rt.plan_matmul(la, lb, out, lc, row_block, "silu", lr)
        got.append(get(rt, plan(rt.stream, None, ba, oa, bb, ob, bc, oc, br, orr), out))
    np.testing.assert_array_equal(got[1], got[0])
    f64 = np.float64
    x = a.astype(f64) @ b.astype(f64) + bias.astype(f64)
    ref = x / (1 + np.exp(-x)) + res.astype(f64)
    err = np.linalg.norm(got[0].astype(f64) - ref) / np.linalg.norm(ref)
    assert err < (1e-5 if dtype == "float32" else 1e-2), err


def test_philox_matches_the_reference_generator(rt):
    out = dense(F32, (1001,))
    plan = rt.plan_philox("gk_rand_f", out, False)
    got = get(rt, plan(rt.stream, None, 2**64 - 5, 7, 0.0, 1.0, 0, 0), out)
    bits = philox.uniform_bits(F32)
    np.testing.assert_array_equal(got, philox.generate("gk_rand_f", 1001, F32, 2**64 - 5, 7, bits))


def test_gather_flags_a_bad_index_and_scatter_writes(rt, rng):
    x = random_array(rng, (6, 5), "float32")
    bx, ox, lx = put(rt, x)
    for idx, bad in ((np.array([4, -6, 0]), 0), (np.array([1, 6]), 1)):
        bi, oi, li = put(rt, idx)
        out = dense(F32, (idx.size, 5))
        plan = rt.plan_gather(lx, out, (li,), (0,), (("b", 0), ("v", 1)), True, False)
        buf, flag = plan(rt.stream, None, bx, ox, bi, oi)
        assert int(get(rt, flag, dense(I32, (1,)))[0]) == bad
        if not bad:
            np.testing.assert_array_equal(get(rt, buf, out), x[idx])
    values = random_array(rng, (2, 5), "float32")
    bv, ov, lv = put(rt, values)
    bi, oi, li = put(rt, np.array([5, 2]))
    plan = rt.plan_gather(lx, lv, (li,), (0,), (("b", 0), ("v", 1)), False, True)
    assert plan(rt.stream, None, bx, ox, bv, ov, bi, oi) is None
    ref = x.copy()
    ref[[5, 2]] = values
    np.testing.assert_array_equal(get(rt, bx, lx), ref)


def test_nonzero(rt, rng):
    mask = random_array(rng, (33, 17), "bool")
    bm, om, lm = put(rt, mask)
    buf, count = rt.nonzero(lm, bm, om, rt.stream, None)
    assert count == mask.sum()
    np.testing.assert_array_equal(get(rt, buf, dense(I64, (2, count))), np.nonzero(mask))


def test_sorting_plans(rt, rng):
    x = random_array(rng, (5, 301), "float32")
    x[:, ::7] = np.nan
    bx, ox, lx = put(rt, x, 16)
    keys, index = rt.plan_sort(lx, True, True, False)(rt.stream, None, bx, ox)
    order = np.argsort(x, axis=-1, kind="stable")
    np.testing.assert_array_equal(get(rt, index, dense(I64, x.shape)), order)
    np.testing.assert_array_equal(get(rt, keys, dense(F32, x.shape)), np.sort(x, kind="stable"))
    a = np.sort(random_array(rng, (100,), "float64"))
    v = random_array(rng, (40,), "float64")
    (ba, oa, la), (bv, ov, lv) = put(rt, a), put(rt, v)
    got = rt.plan_searchsorted(la, lv, True, None)(rt.stream, None, ba, oa, bv, ov)
    np.testing.assert_array_equal(get(rt, got, dense(I64, v.shape)), np.searchsorted(a, v, "right"))
    flat = x.reshape(-1)
    bf, of, lf = put(rt, flat)
    values, first, inverse, counts, total = rt.unique(lf, bf, of, True, True, True, True,
                                                      rt.stream, None)  # fmt: skip
    rv, ri, rinv, rc = np.unique(flat, return_index=True, return_inverse=True, return_counts=True)
    assert total == rv.size
    np.testing.assert_array_equal(get(rt, values, dense(F32, (total,))), rv)
    np.testing.assert_array_equal(get(rt, first, dense(I64, (total,))), ri)
    np.testing.assert_array_equal(get(rt, inverse, dense(I64, flat.shape)), rinv)
    np.testing.assert_array_equal(get(rt, counts, dense(I64, (total,))), rc)
    edges = np.linspace(-2.0, 2.0, 9)
    (be, oe, le), (bv, ov, lv) = put(rt, edges), put(rt, v)
    counts = rt.plan_histogram(lv, le, True, False)(rt.stream, None, bv, ov, be, oe)
    np.testing.assert_array_equal(get(rt, counts, dense(I64, (8,))), np.histogram(v, edges)[0])
    bins = rng.integers(0, 9, 500)
    w = random_array(rng, (500,), "float64")
    (bb, ob, lb), (bw, ow, lw) = put(rt, bins), put(rt, w)
    counts = rt.plan_bincount(lb, 12, None)(rt.stream, None, bb, ob)
    np.testing.assert_array_equal(
        get(rt, counts, dense(I64, (12,))), np.bincount(bins, minlength=12)
    )
    sums = rt.plan_bincount(lb, 12, lw)(rt.stream, None, bb, ob, bw, ow)
    np.testing.assert_allclose(get(rt, sums, dense(F64, (12,))), np.bincount(bins, w, 12))


def test_nn_plans(rt, rng):
    x = random_array(rng, (3, 40), "float32")
    w = random_array(rng, (40,), "float32")
    (bx, ox, lx), (bw, ow, lw) = put(rt, x), put(rt, w)
    out = dense(F32, x.shape)
    got = rt.plan_nn_rows("rms_norm", lx, 1, out, lw, None)(rt.stream, None, bx, ox, bw, ow, 1e-6)
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64**2).mean(axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(get(rt, got, out), ref, rtol=1e-5, atol=1e-5)
    r = random_array(rng, (3, 40), "float32")
    br, o_r, lr = put(rt, r)
    plan = rt.plan_nn_rows("rms_norm", lx, 1, out, lw, None, lr)  # residual: returns (y, x + r)
    got, h = plan(rt.stream, None, bx, ox, bw, ow, br, o_r, 1e-6)
    np.testing.assert_array_equal(get(rt, h, out), x + r)
    h64 = (x + r).astype(np.float64)
    ref = h64 / np.sqrt((h64**2).mean(axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(get(rt, got, out), ref, rtol=1e-5, atol=1e-5)
    ids = np.array([[2, 0], [1, 2]])
    (bi, oi, li), (bt, ot, lt) = put(rt, ids), put(rt, x)
    emb = dense(F32, (2, 2, 40))
    buf, flag = rt.plan_embedding(li, lt, emb)(rt.stream, None, bi, oi, bt, ot)
    assert int(get(rt, flag, dense(I32, (1,)))[0]) == 0
    np.testing.assert_array_equal(get(rt, buf, emb), x[ids])
    q = random_array(rng, (1, 2, 5, 8), "float32")
    k = random_array(rng, (1, 1, 7, 8), "float32")
    v = random_array(rng, (1, 1, 7, 8), "float32")
    (bq, oq, lq), (bk, ok, lk), (bv, ov, lv) = put(rt, q), put(rt, k), put(rt, v)
    att = dense(F32, q.shape)
    plan = rt.plan_attention(lq, lk, lv, None, None, att, False, 1 / math.sqrt(8))
    got = get(rt, plan(rt.stream, None, bq, oq, bk, ok, bv, ov), att)

    def reference(n):
        s = q.astype(np.float64) @ np.swapaxes(k[:, :, :n], -1, -2) / math.sqrt(8)
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v[:, :, :n]

    np.testing.assert_allclose(got, reference(7), rtol=1e-4, atol=1e-5)
    # A device count of valid keys: a plan that reads it, or None where no kernel does.
    bn, on, ln = put(rt, np.array([4], np.int32))
    plan = rt.plan_attention(lq, lk, lv, None, ln, att, False, 1 / math.sqrt(8))
    if plan is not None:
        got = get(rt, plan(rt.stream, None, bq, oq, bk, ok, bv, ov, bn, on), att)
        np.testing.assert_allclose(got, reference(4), rtol=1e-4, atol=1e-5)


def test_zero_sized_plans_allocate_and_run(rt):
    empty = dense(F32, (0, 5))
    plan = rt.plan_elementwise(ELEMENTWISE["exp"], F32, (empty,), empty, True)
    buf, _, _ = put(rt, np.zeros((0, 5), np.float32))
    assert plan(rt.stream, None, buf, 0) is not None
    plan = rt.plan_reduce("sum", empty, (0,), dense(F32, (5,)))
    got = plan(rt.stream, None, buf, 0)
    np.testing.assert_array_equal(get(rt, got, dense(F32, (5,))), np.zeros(5, np.float32))


def test_fft_plans(rt, rng):
    """plan_fft's three kinds along the last axis of a strided view, scaled, into a contiguous
    result: complex-to-complex both ways, real-to-complex, complex-to-real (a Hermitian half)."""
    c128, c64 = np.dtype(np.complex128), np.dtype(np.complex64)
    x = (rng.standard_normal((7, 12)) + 1j * rng.standard_normal((7, 12))).astype(c128)
    bx, ox, lx = put(rt, x)
    view = Layout(c128, (12, 5), (16, 16 * 12), 16)  # x.T[:, :5]: the axis strided
    got = rt.plan_fft(view, "c2c", 5, False, 0.5)(rt.stream, None, bx, ox)
    want = np.fft.fft(x.T[:, :5], axis=-1) * 0.5
    np.testing.assert_allclose(get(rt, got, dense(c128, (12, 5))), want, rtol=1e-12, atol=1e-12)
    got = rt.plan_fft(lx, "c2c", 12, True, 1.0)(rt.stream, None, bx, ox)
    want = np.fft.ifft(x, axis=-1) * 12
    np.testing.assert_allclose(get(rt, got, dense(c128, x.shape)), want, rtol=1e-12, atol=1e-12)
    r = random_array(rng, (3, 10), "float32")
    br, orr, lr = put(rt, r)
    got = rt.plan_fft(lr, "r2c", 10, False, 1.0)(rt.stream, None, br, orr)
    want = np.fft.rfft(r.astype(np.float64), axis=-1)
    np.testing.assert_allclose(get(rt, got, dense(c64, (3, 6))), want, rtol=1e-5, atol=1e-5)
    h = np.fft.rfft(random_array(rng, (4, 9), "float64"), axis=-1)
    bh, oh, lh = put(rt, h)
    got = rt.plan_fft(lh, "c2r", 9, True, 1 / 9)(rt.stream, None, bh, oh)
    want = np.fft.irfft(h, 9, axis=-1)
    np.testing.assert_allclose(get(rt, got, dense(F64, (4, 9))), want, rtol=1e-12, atol=1e-12)
