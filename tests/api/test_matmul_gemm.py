"""Matrix products on every backend against float64: odd shapes in every dimension, transposed and
strided operands, batches with broadcasting, linear's fused epilogue (bias, activation, residual),
the TF32 setting, and which kernel family a product takes."""

import math

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk

# Relative error ||out - ref|| / ||ref|| allowed against float64 (issue 13).
REL = {"bfloat16": 1e-2, "float16": 1e-2, "float32": 1e-5, "float64": 1e-13}
ODD = (1, 7, 129, 1000, 4097)
# Every odd extent in every dimension, products kept small enough for the CPU backend.
SHAPES = [(ODD[i], ODD[(i + 1) % 5], ODD[(i + 2) % 5]) for i in range(5)] + [
    (ODD[i], ODD[(i + 3) % 5], ODD[(i + 4) % 5]) for i in range(5)
]


def _dtype(name):
    return gk.bfloat16 if name == "bfloat16" else np.dtype(name)


def _poisoned_pool(nbytes, dtype):
    """Leaves freed memory full of NaN in the pool, where the next result of that size is likely
    to land: a kernel that skips an element then shows a NaN."""
    poison = gk.full((max(nbytes // np.dtype(dtype).itemsize, 1),), np.nan, dtype)
    del poison


def _check(out, ref, name, scale=1.0):
    got = out.to_numpy().astype(np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert np.isfinite(got).all(), "an element was not written (or overflowed)"
    err = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300)
    assert err <= REL[name] * scale, f"relative error {err:.3g} > {REL[name] * scale:g}"


def _operand(rng, rows, cols, dtype, layout):
    """A (rows, cols) operand laid out row-major, as the .T of a row-major (cols, rows) matrix,
    or as every other column of a wider row-major matrix (no axis contiguous in memory)."""
    if layout == "row":
        host = random_array(rng, (rows, cols), dtype)
        return gk.asarray(host), host
    if layout == "col":
        host = random_array(rng, (cols, rows), dtype)
        return gk.asarray(host).T, host.T
    host = random_array(rng, (rows, 2 * cols), dtype)
    return gk.asarray(host)[:, ::2], host[:, ::2]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_odd_shapes(backend, rng, dtype, shape):
    m, n, k = shape
    dt = _dtype(dtype)
    a, ha = _operand(rng, m, k, dt, "row")
    b, hb = _operand(rng, k, n, dt, "row")
    _poisoned_pool(m * n * np.dtype(dt).itemsize, dt)
    _check(a @ b, ha.astype(np.float64) @ hb.astype(np.float64), dtype)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64"])
@pytest.mark.parametrize(
    "layouts",
    [("row", "col"), ("col", "row"), ("col", "col"), ("strided", "row"), ("row", "strided")],
)
@pytest.mark.parametrize(
    "shape",
    [(129, 1000, 264), (1000, 136, 4104), (2, 4097, 520)],
    ids=lambda s: "x".join(map(str, s)),
)
def test_transposed_and_strided_operands(backend, rng, dtype, layouts, shape):
    m, n, k = shape
    dt = _dtype(dtype)
    a, ha = _operand(rng, m, k, dt, layouts[0])
    b, hb = _operand(rng, k, n, dt, layouts[1])
    _poisoned_pool(m * n * np.dtype(dt).itemsize, dt)
    _check(a @ b, ha.astype(np.float64) @ hb.astype(np.float64), dtype)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "float64"])
def test_batches_with_broadcasting(backend, rng, dtype):
    dt = _dtype(dtype)
    cases = [
        ((3, 200, 264), (3, 264, 304)),  # both batched
        ((3, 200, 264), (264, 304)),  # b shared by the batch
        ((200, 264), (4, 264, 304)),  # a shared by the batch
        ((2, 1, 129, 72), (3, 72, 136)),  # broadcast over two batch axes
        ((64, 512, 128), (64, 128, 512)),  # many small products
    ]
    for sa, sb in cases:
        ha, hb = random_array(rng, sa, dt), random_array(rng, sb, dt)
        out = gk.asarray(ha) @ gk.asarray(hb)
        _check(out, np.matmul(ha.astype(np.float64), hb.astype(np.float64)), dtype)


def test_batched_transposed_views(backend, rng):
    host = random_array(rng, (3, 304, 200), gk.bfloat16)  # a = its .T per item: m-contiguous
    hb = random_array(rng, (3, 136, 264), gk.bfloat16)  # b = its .T per item: k-contiguous
    a = gk.asarray(host).swapaxes(1, 2)[:, :, :264]
    b = gk.asarray(hb).swapaxes(1, 2)
    ref = np.matmul(host.swapaxes(1, 2)[:, :, :264].astype(np.float64), hb.swapaxes(1, 2))
    _check(a @ b, ref, "bfloat16")


def _gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


ACT_REF = {
    None: lambda x: x,
    "relu": lambda x: np.maximum(x, 0),
    "gelu": _gelu,
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "silu": lambda x: x / (1 + np.exp(-x)),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("rows", [1, 3, 129])
def test_linear_fused_epilogue(backend, rng, dtype, activation, rows):
    dt = _dtype(dtype)
    hx = random_array(rng, (rows, 264), dt)
    hw = random_array(rng, (520, 264), dt)
    hbias = random_array(rng, (520,), dt)
    hres = random_array(rng, (rows, 520), dt)
    out = gk.linear(gk.asarray(hx), gk.asarray(hw), gk.asarray(hbias), activation, gk.asarray(hres))
    assert out.dtype == dt
    f64 = np.float64
    ref = ACT_REF[activation](hx.astype(f64) @ hw.astype(f64).T + hbias.astype(f64))
    _check(out, ref + hres.astype(f64), dtype)


def test_linear_epilogue_at_odd_widths_and_offsets(backend, rng):
    """The epilogue's tails: an odd number of output columns (no vector stores), rows past the last
    full tile, a residual that starts 2 bytes into its buffer (no vector loads), and a long K that
    is split (partial sums first, the epilogue in the reduction)."""
    dt, f64 = gk.bfloat16, np.float64
    for rows, k in ((300, 264), (200, 4104)):
        hx, hw = random_array(rng, (rows, k), dt), random_array(rng, (1001, k), dt)
        hbias, hres = random_array(rng, (1001,), dt), random_array(rng, (rows, 1002), dt)
        res = gk.asarray(hres)[:, 1:]
        _poisoned_pool(rows * 1001 * 2, dt)
        out = gk.linear(gk.asarray(hx), gk.asarray(hw), gk.asarray(hbias), "gelu", res)
        ref = ACT_REF["gelu"](hx.astype(f64) @ hw.astype(f64).T + hbias.astype(f64))
        _check(out, ref + hres[:, 1:].astype(f64), "bfloat16")


@pytest.mark.parametrize("layouts", [("row", "row"), ("col", "col"), ("strided", "col")])
def test_float32_long_k_over_few_tiles(backend, rng, layouts):
    """Exact float32 products with few output tiles and a long K (on CUDA K is split over blocks:
    partial sums first, then a launch that adds them in order and applies linear's epilogue),
    alone and batched, the same bits on a second run."""
    f64 = np.float64
    for m, n, k in ((33, 517, 2051), (129, 40, 1300), (5, 7, 4099)):
        a, ha = _operand(rng, m, k, np.float32, layouts[0])
        b, hb = _operand(rng, k, n, np.float32, layouts[1])
        _poisoned_pool(m * n * 4, np.float32)
        out = a @ b
        _check(out, ha.astype(f64) @ hb.astype(f64), "float32")
        np.testing.assert_array_equal((a @ b).to_numpy(), out.to_numpy())
        hbias, hres = random_array(rng, (n,), np.float32), random_array(rng, (m, n), np.float32)
        fused = gk.linear(a, b.T, gk.asarray(hbias), "silu", gk.asarray(hres))
        ref = ACT_REF["silu"](ha.astype(f64) @ hb.astype(f64) + hbias) + hres
        _check(fused, ref, "float32")
    ha, hb = (
        random_array(rng, (3, 70, 1500), np.float32),
        random_array(rng, (3, 1500, 90), np.float32),
    )
    _check(gk.asarray(ha) @ gk.asarray(hb), np.matmul(ha.astype(f64), hb), "float32")


@pytest.mark.parametrize("activation", [None, "gelu"])
def test_float64_products_with_bias_residual_and_row_slices(backend, rng, activation):
    """float64 (on CUDA sm_80+ the FP64 tensor-core kernel): linear's bias and residual (in its
    epilogue without an activation, after the product with one), odd widths, a residual view
    at an odd offset, and the same product launched in row slices of 100 rows (the same bits)."""
    f64 = np.float64
    for rows, n, k in ((300, 1001, 264), (129, 64, 64), (4096 + 7, 72, 130)):
        hx, hw = random_array(rng, (rows, k), f64), random_array(rng, (n, k), f64)
        hbias, hres = random_array(rng, (n,), f64), random_array(rng, (rows, n + 1), f64)
        x, w, res = gk.asarray(hx), gk.asarray(hw), gk.asarray(hres)[:, 1:]
        _poisoned_pool(rows * n * 8, f64)
        out = gk.linear(x, w, gk.asarray(hbias), activation, res)
        ref = ACT_REF[activation](hx @ hw.T + hbias) + hres[:, 1:]
        _check(out, ref, "float64")
        sliced = gk.linalg.matmul(x, w.T, row_block=100)
        np.testing.assert_array_equal(sliced.to_numpy(), (x @ w.T).to_numpy())


def test_float64_products_have_the_same_bits_alone_and_in_a_batch(backend, rng):
    """On CUDA a lone float64 product of few tiles takes 64 x 64 tiles and a batch of 40 the 128 x
    128 ones: each output is the same chain of DMMAs in K order either way."""
    ha = random_array(rng, (40, 200, 264), "float64")
    hb = random_array(rng, (40, 264, 72), "float64")
    a, b = gk.asarray(ha), gk.asarray(hb)
    batched = (a @ b).to_numpy()
    _check(gk.asarray(batched), np.matmul(ha, hb), "float64")
    for i in (0, 17, 39):
        np.testing.assert_array_equal((a[i] @ b[i]).to_numpy(), batched[i])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_asked_for_their_lower_triangle(backend, rng, dtype):
    """product(..., lower=True) (the blocked Cholesky's trailing update): the lower triangle of
    each result is the full product's, bit for bit, whether launched whole or in row slices
    (tiles wholly above the diagonal may be skipped and their outputs left as they were)."""
    from gpukit.fused_products import product

    for batch, m, k in (((), 300, 64), ((3,), 517, 72), ((), 1100, 130)):
        ha = random_array(rng, (*batch, m, k), dtype)
        hr = random_array(rng, (*batch, m, m), dtype)
        a, r = gk.asarray(ha), gk.asarray(hr)
        full = product(a, gk.matrix_transpose(a), residual=r).to_numpy()
        _check(gk.asarray(full), np.matmul(ha, np.swapaxes(ha, -1, -2)) + hr, dtype)
        low = np.tril(np.ones((m, m), bool))
        for row_block in (None, 200):
            _poisoned_pool(int(np.prod(batch, dtype=int)) * m * m * np.dtype(dtype).itemsize, dtype)
            got = product(a, gk.matrix_transpose(a), residual=r, row_block=row_block, lower=True)
            np.testing.assert_array_equal(got.to_numpy()[..., low], full[..., low])


def test_linear_residual_broadcasts_and_batches(backend, rng):
    dt = gk.bfloat16
    hx = random_array(rng, (2, 3, 136), dt)  # batch of 2 x 3 rows
    hw = random_array(rng, (264, 136), dt)
    hres = random_array(rng, (264,), dt)  # one row for all: broadcast
    out = gk.linear(gk.asarray(hx), gk.asarray(hw), residual=gk.asarray(hres), activation="silu")
    ref = ACT_REF["silu"](hx.astype(np.float64) @ hw.astype(np.float64).T) + hres
    _check(out, ref, "bfloat16")


def test_linear_unfused_bias_and_residual_of_another_dtype(backend, rng):
    hx = random_array(rng, (5, 72), np.float32)
    hw = random_array(rng, (40, 72), np.float32)
    hbias = random_array(rng, (5, 40), np.float32)  # 2-D: added after the product
    hres = random_array(rng, (5, 40), np.float16)  # another dtype: added after the product
    out = gk.linear(gk.asarray(hx), gk.asarray(hw), gk.asarray(hbias), "relu", gk.asarray(hres))
    f64 = np.float64
    ref = np.maximum(hx.astype(f64) @ hw.astype(f64).T + hbias, 0) + hres.astype(f64)
    _check(out, ref, "float32")


def test_linear_errors_are_named(backend):
    x, w = gk.ones((2, 3)), gk.ones((4, 3))
    with pytest.raises(ValueError, match="activation must be one of"):
        gk.linear(x, w, activation="tanh")
    with pytest.raises(ValueError, match="residual of shape"):
        gk.linear(x, w, residual=gk.ones((3, 4)))
    with pytest.raises(ValueError, match="need a floating result"):
        gk.linear(gk.ones((2, 3), "int32"), gk.ones((4, 3), "int32"), activation="relu")


def test_tf32_setting(backend, rng):
    assert gk.linalg.allow_tf32 is False
    ha, hb = random_array(rng, (300, 1032), np.float32), random_array(rng, (1032, 264), np.float32)
    ref = ha.astype(np.float64) @ hb.astype(np.float64)
    gk.linalg.allow_tf32 = True
    try:
        assert gk.linalg.allow_tf32 is True
        _check(gk.asarray(ha) @ gk.asarray(hb), ref, "float32", scale=50)  # 5e-4: TF32
        b_k_major = gk.asarray(np.ascontiguousarray(hb.T)).T  # read in place by the tf32 wgmma
        _check(gk.asarray(ha) @ b_k_major, ref, "float32", scale=50)
    finally:
        gk.linalg.allow_tf32 = False
    _check(gk.asarray(ha) @ gk.asarray(hb), ref, "float32")  # exact again


def test_products_are_deterministic(backend, rng):
    ha = random_array(rng, (256, 4104), gk.bfloat16)
    hb = random_array(rng, (4104, 520), gk.bfloat16)  # few tiles, long k: K is split
    a, b = gk.asarray(ha), gk.asarray(hb)
    first = (a @ b).to_numpy()
    np.testing.assert_array_equal((a @ b).to_numpy(), first)


@pytest.mark.parametrize("shape", [(1900, 264, 4104), (129, 520, 4104)], ids=str)
def test_tail_tiles_are_written_every_time(backend, rng, shape):
    """Plain 16-bit products whose last tiles are partial in m and n (on sm_90 they leave through
    the bulk-store epilogue, whose copies run beside the next tile's work), repeated into a pool
    refilled with NaN before each call: every call writes every element, with the same bits. A
    race between the copies and the rows' reuse would show as a NaN or a changed value in some
    call, not in every one."""
    m, k, n = shape
    ha, hb = random_array(rng, (m, k), gk.bfloat16), random_array(rng, (n, k), gk.bfloat16)
    a, b = gk.asarray(ha), gk.asarray(hb)
    _poisoned_pool(m * n * 2, gk.bfloat16)
    first = gk.linear(a, b).to_numpy()
    _check(gk.asarray(first), ha.astype(np.float64) @ hb.astype(np.float64).T, "bfloat16")
    for _ in range(40 if backend == "cuda" else 2):
        _poisoned_pool(m * n * 2, gk.bfloat16)
        np.testing.assert_array_equal(gk.linear(a, b).to_numpy(), first)


def test_float32_products_have_the_same_bits_alone_and_in_a_batch(backend, rng):
    """On CUDA a lone small float32 product takes the 32 x 32 tiles and a batch of 40 the 128 x
    128 ones: each output is the same chain of multiply-adds in K order either way."""
    if backend != "cuda":
        pytest.skip("which kernel a product takes is the CUDA backend's choice")
    ha = random_array(rng, (40, 67, 93), "float32")
    hb = random_array(rng, (40, 93, 51), "float32")
    a, b = gk.asarray(ha), gk.asarray(hb)
    batched = (a @ b).to_numpy()
    for i in (0, 17, 39):
        np.testing.assert_array_equal((a[i] @ b[i]).to_numpy(), batched[i])
        bias = gk.asarray(random_array(rng, (51,), "float32"))
        fused = gk.linear(a[i], b[i].T, bias).to_numpy()  # the epilogue after the same sums
        np.testing.assert_array_equal(fused, (batched[i] + bias.to_numpy()).astype(np.float32))


def test_matmul_path_names_the_kernel_family(backend):
    names = {"sm90a-wgmma-tma", "sm80-mma", "gemv", "f32-simt", "f64-dmma", "generic", "numpy"}
    for dtype in ("bfloat16", "float32", "float64", "int32"):
        a, b = gk.ones((256, 128), dtype), gk.ones((128, 64), dtype)
        assert gk.linalg.matmul_path(a, b) in names
        assert gk.linalg.matmul_path(a[:1], b) in names
    assert "matmul paths" in gk.info()
    with pytest.raises(ValueError):
        gk.linalg.matmul_path(gk.ones((2, 3)), gk.ones((4, 5)))


def test_reversed_and_broadcast_operands(backend, rng):
    # Negative strides and a row repeated by broadcasting (stride 0): the fast kernels read them
    # through pointers, TMA cannot (those products take another kernel).
    dt = gk.bfloat16
    ha, hb = random_array(rng, (264, 136), dt), random_array(rng, (136, 200), dt)
    a, b = gk.asarray(ha), gk.asarray(hb)
    f64 = np.float64
    _check(a[::-1] @ b, ha[::-1].astype(f64) @ hb.astype(f64), "bfloat16")
    _check(a @ b[:, ::-1], ha.astype(f64) @ hb[:, ::-1].astype(f64), "bfloat16")
    row = random_array(rng, (1, 136), dt)
    repeated = gk.broadcast_to(gk.asarray(row), (264, 136))
    _check(repeated @ b, np.broadcast_to(row, (264, 136)).astype(f64) @ hb.astype(f64), "bfloat16")


def test_tf32_copies_operands_with_odd_rows(backend, rng):
    ha, hb = random_array(rng, (129, 1037), np.float32), random_array(rng, (1037, 77), np.float32)
    ref = ha.astype(np.float64) @ hb.astype(np.float64)
    gk.linalg.allow_tf32 = True
    try:
        _check(gk.asarray(ha) @ gk.asarray(hb), ref, "float32", scale=50)
        _check(gk.asarray(ha)[:, ::-1] @ gk.asarray(hb)[::-1], ref, "float32", scale=50)
    finally:
        gk.linalg.allow_tf32 = False
