"""matmul on every path (the tensor-core kernel for float16/bfloat16 on sm_80+, the tiled kernel for
the rest), the runtime's row_block slicing, gpukit.dot and gpukit.linear, against NumPy in
float64 on fresh random data."""

import numpy as np
import pytest
from array_cases import poisoned
from conftest import TOLERANCE, random_array

import gpukit as gk

HALVES = ["float16", "bfloat16"]
DTYPES = [*HALVES, "float32", "float64", "int8", "uint8", "int32", "int64", "bool"]


def _dtype(name) -> np.dtype:
    return np.dtype(gk.bfloat16) if name == "bfloat16" else np.dtype(name)


def _data(rng, shape, name):
    """Random data of dtype `name` (bfloat16 rounded from float32 normals)."""
    if name == "bfloat16":
        return rng.standard_normal(shape).astype(np.float32).astype(_dtype(name))
    return random_array(rng, shape, name)


def _reference(x, y):
    """np.matmul in float64 (exact for integers), rounded to the operands' result dtype."""
    if x.dtype.kind in "biu":
        return np.matmul(x, y)
    return np.matmul(x.astype(np.float64), y.astype(np.float64))


def _check(got, expected, name, k):
    """got (GPUArray) against the float64 `expected`: dtype `name`, within its rounding scaled by
    sqrt(k) (the size of a sum of k products of normals)."""
    dtype = _dtype(name)
    assert isinstance(got, gk.GPUArray)
    host = got.to_numpy()
    assert host.dtype == dtype and host.shape == np.shape(expected), (host.dtype, host.shape)
    if dtype.kind in "biu":
        np.testing.assert_array_equal(host, np.asarray(expected).astype(dtype))
        return
    tol = (1e-2 if name == "bfloat16" else TOLERANCE[dtype]) * max(1.0, k**0.5)
    np.testing.assert_allclose(host.astype(np.float64), expected, rtol=tol, atol=tol)


# (m, k, n): 1, empty k (zeros) and odd sizes, k not a multiple of the 32-wide k-slice, more
# k-slices than the 4-stage ring, several 128x128 tiles; multiples of 8 take the tensor-core
# kernel's 16-byte path.
SIZES = [
    (1, 1, 1),
    (5, 0, 9),
    (7, 33, 1),
    (1, 129, 7),
    (33, 7, 129),
    (129, 257, 33),
    (257, 129, 257),
    (136, 264, 200),
    (8, 520, 16),
]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("m,k,n", SIZES)
def test_matmul_odd_sizes(backend, rng, name, m, k, n):
    x, y = _data(rng, (m, k), name), _data(rng, (k, n), name)
    _check(gk.asarray(x) @ gk.asarray(y), _reference(x, y), name, k)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((3, 1, 33, 40), (5, 40, 17)),
        ((2, 16, 24), (24, 8)),
        ((40,), (4, 40, 9)),
        ((2, 3, 45), (45,)),
        ((45,), (45,)),
        ((1, 130, 64), (3, 64, 136)),
    ],
)
def test_matmul_batched_broadcasting_and_vectors(backend, rng, name, a_shape, b_shape):
    x, y = _data(rng, a_shape, name), _data(rng, b_shape, name)
    _check(gk.asarray(x) @ gk.asarray(y), _reference(x, y), name, a_shape[-1])


@pytest.mark.parametrize("name", DTYPES)
def test_matmul_non_contiguous_operands(backend, rng, name):
    # Transposed views (the contiguous axis is the other one), a strided slice (neither axis is
    # contiguous: the tensor-core path copies it) and a transposed batch.
    x, y = _data(rng, (40, 35), name), _data(rng, (130, 40), name)
    a, b = gk.asarray(x), gk.asarray(y)
    _check(a.T @ b.T, _reference(x.T, y.T), name, 40)
    _check(a[:, ::2] @ b[::2, :].T[:18], _reference(x[:, ::2], y[::2, :].T[:18]), name, 18)
    z = _data(rng, (3, 24, 16), name)
    c = gk.asarray(z)
    _check(c.transpose(0, 2, 1) @ c, _reference(z.transpose(0, 2, 1), z), name, 24)
    _check(c[1:, :, 8:] @ b[:8, :24], _reference(z[1:, :, 8:], y[:8, :24]), name, 8)


@pytest.mark.parametrize("name", ["bfloat16", "float32", "int32"])
def test_repeated_products_at_every_offset(backend, rng, name):
    # A repeated product takes the plan of its first call: the same kind of call at operands
    # shifted by 1 to 15 elements (other alignments, other plans) must not take another's plan.
    x, y = _data(rng, (40, 70), name), _data(rng, (70, 50), name)
    a, b = gk.asarray(x), gk.asarray(y)
    for shift in (0, 1, 2, 4, 8, 0, 3, 1):
        for _ in range(2):
            _check(a[:, shift : shift + 33] @ b[shift : shift + 33], _reference(
                x[:, shift : shift + 33], y[shift : shift + 33]), name, 33)  # fmt: skip
    first = (a @ b).to_numpy()
    np.testing.assert_array_equal((a @ b).to_numpy(), first)
    _check(gk.matmul(a, b), _reference(x, y), name, 70)


def _poisoned(step, shape, name):
    """step() computed where a NaN-filled buffer of its output's size was just freed (the pool
    hands it out again), so that an output element the product never writes stays NaN."""
    poisoned(shape, _dtype(name))  # dropped at once
    return step()


# 16-bit products on the sm_90a GEMM: (batch, m, k, n, how a is shaped). n % 8 == 0 takes the
# bulk-store epilogue (rows copied out whole by cp.async.bulk), with tails in m (128-row tiles) and
# in n (the last column tile 16 bytes wide: 264, 520); n % 8 != 0 (260, 1001) leaves each output
# row off 16-byte boundaries: x @ w.T takes the staged epilogue (a @ b another kernel, b's rows
# being unaligned too). On other GPUs and the CPU, the same products.
BULK_CASES = [
    (16, 300, 128, 520, "batched"),  # the batched small-K row's form, 3 row tiles, n tail
    (3, 200, 72, 264, "batched"),
    (5, 129, 40, 136, "broadcast a"),  # a (1, m, k) against b (batch, k, n)
    (1, 1000, 264, 1000, "rows of 256"),  # row_block slices, each a launch
    (3, 200, 72, 260, "batched"),  # n % 8 != 0: staged
    (2, 129, 40, 1001, "batched"),
]


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("batch,m,k,n,form", BULK_CASES)
def test_16_bit_products_write_every_output_row_once(backend, rng, name, batch, m, k, n, form):
    x = _data(rng, (1 if form == "broadcast a" else batch, m, k), name)
    y = _data(rng, (batch, k, n), name)
    a, b = gk.asarray(x), gk.asarray(y)
    row_block = 256 if form == "rows of 256" else None
    expected = _reference(x, y)
    first = _poisoned(lambda: gk.matmul(a, b, row_block=row_block), expected.shape, name)
    _check(first, expected, name, k)
    again = _poisoned(lambda: gk.matmul(a, b, row_block=row_block), expected.shape, name)
    np.testing.assert_array_equal(again.to_numpy(), first.to_numpy())
    # x @ w.T (b K-major) of the same rows
    w = np.ascontiguousarray(y[0].T)
    got = _poisoned(lambda: gk.linear(a, gk.asarray(w)), (*x.shape[:-1], n), name)
    _check(got, _reference(x, w.T), name, k)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("row_block", [1, 7, 128, 1000])
def test_row_block_slices_give_the_same_product(backend, rng, name, row_block):
    # Small integers: exact in every dtype and any summation order, so that the CPU backend's BLAS
    # (whose blocking may change with the number of rows) compares exactly too.
    dtype = _dtype(name)
    x = rng.integers(-2, 3, size=(2, 300, 40)).astype(dtype)
    y = rng.integers(-2, 3, size=(40, 37)).astype(dtype)
    a, b = gk.asarray(x), gk.asarray(y)
    whole, sliced = gk.matmul(a, b), gk.matmul(a, b, row_block=row_block)
    np.testing.assert_array_equal(sliced.to_numpy(), whole.to_numpy())
    np.testing.assert_array_equal(whole.to_numpy(), np.matmul(x, y))
    if backend != "cpu":  # a GPU launch computes each output the same way in any slice
        x, y = _data(rng, (300, 257), name), _data(rng, (257, 129), name)
        a, b = gk.asarray(x), gk.asarray(y)
        whole, sliced = gk.matmul(a, b), gk.matmul(a.T.T, b, row_block=row_block)
        np.testing.assert_array_equal(sliced.to_numpy(), whole.to_numpy())


def test_row_block_must_be_positive(backend):
    a = gk.ones((4, 4), "float32")
    with pytest.raises(ValueError, match="row_block"):
        gk.matmul(a, a, row_block=0)


@pytest.mark.parametrize("name", [*HALVES, "float32", "float64", "int64"])
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((33,), (33,)),
        ((7, 33), (33, 5)),
        ((2, 3, 33), (33,)),
        ((33,), (2, 33, 5)),
        ((2, 3, 33), (4, 33, 5)),
        ((3, 33), (2, 4, 33, 6)),
        ((2, 1, 9), (9, 5)),
    ],
)
def test_dot_matches_numpy(backend, rng, name, a_shape, b_shape):
    x, y = _data(rng, a_shape, name), _data(rng, b_shape, name)
    expected = np.dot(x.astype(np.float64), y.astype(np.float64)) if name != "int64" else None
    if expected is None:
        expected = np.dot(x, y)
    got = gk.dot(gk.asarray(x), gk.asarray(y))
    _check(got, expected, name, a_shape[-1])


def test_dot_scalars_and_errors(backend, rng):
    x = random_array(rng, (4, 3), "float32")
    got = gk.dot(gk.asarray(x), 2.0)
    np.testing.assert_allclose(got.to_numpy(), np.dot(x, 2.0), rtol=1e-6)
    got = gk.dot(gk.asarray(np.float32(3.0)), gk.asarray(x))
    np.testing.assert_allclose(got.to_numpy(), np.dot(np.float32(3.0), x), rtol=1e-6)
    with pytest.raises(ValueError, match=r"\(4, 3\) and \(4, 3\)"):
        gk.dot(gk.asarray(x), gk.asarray(x))
    with pytest.raises(ValueError, match=r"\(2, 4, 3\) and \(2, 4, 3\)"):
        gk.dot(gk.zeros((2, 4, 3)), gk.zeros((2, 4, 3)))


@pytest.mark.parametrize("name", [*HALVES, "float32", "float64"])
@pytest.mark.parametrize("x_shape", [(33,), (5, 33), (2, 7, 33), (130, 64)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_matches_numpy(backend, rng, name, x_shape, with_bias):
    out_features = 136 if x_shape[-1] == 64 else 17
    x = _data(rng, x_shape, name)
    w = _data(rng, (out_features, x_shape[-1]), name)
    bias = _data(rng, (out_features,), name) if with_bias else None
    expected = x.astype(np.float64) @ w.astype(np.float64).T
    if with_bias:
        expected = expected + bias.astype(np.float64)
    got = gk.linalg.linear(gk.asarray(x), gk.asarray(w), None if bias is None else gk.asarray(bias))
    _check(got, expected, name, x_shape[-1])


@pytest.mark.parametrize("name", [*HALVES, "float32", "float64"])
@pytest.mark.parametrize(
    "x_shape,out_features",
    [((1, 2048), 5632), ((2, 1, 520), 33), ((3, 2, 64), 7), ((8, 7), 9), ((1, 1), 1), ((9, 64), 5)],
)
def test_linear_of_a_few_rows_as_in_decoding(backend, rng, name, x_shape, out_features):
    # Up to 8 rows (a batch of single rows included) take the skinny kernel on the GPU: 16-byte
    # loads where k allows (2048, 520, 64), element loads where not (7, 1); 9 rows do not.
    x = _data(rng, x_shape, name)
    w = _data(rng, (out_features, x_shape[-1]), name)
    bias = _data(rng, (out_features,), name)
    got = gk.linear(gk.asarray(x), gk.asarray(w), gk.asarray(bias))
    expected = x.astype(np.float64) @ w.astype(np.float64).T + bias.astype(np.float64)
    _check(got, expected, name, x_shape[-1])
    wide = _data(rng, (*x_shape[:-1], 2 * x_shape[-1]), name)  # rows of a with k stride 2
    got = gk.asarray(wide)[..., ::2] @ gk.asarray(w).T
    _check(got, wide[..., ::2].astype(np.float64) @ w.astype(np.float64).T, name, x_shape[-1])


def test_linear_with_a_strided_or_promoting_bias(backend, rng):
    x = random_array(rng, (6, 20), "float32")
    w = random_array(rng, (9, 20), "float32")
    b = random_array(rng, (18,), "float32")
    got = gk.linear(gk.asarray(x), gk.asarray(w), gk.asarray(b)[::2])  # fused, bias stride 2
    _check(got, x.astype(np.float64) @ w.T + b[::2], "float32", 20)
    b64 = random_array(rng, (6, 9), "float64")  # 2-D and float64: one add after the product
    got = gk.linear(gk.asarray(x), gk.asarray(w), gk.asarray(b64))
    assert got.dtype == np.float64
    expected = x.astype(np.float64) @ w.T + b64  # the product itself is rounded to float32
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=1e-5, atol=1e-5)


def test_linear_shape_errors(backend):
    x, w = gk.zeros((4, 5)), gk.zeros((3, 6))
    with pytest.raises(ValueError, match=r"\(4, 5\).*\(3, 6\)"):
        gk.linear(x, w)
    with pytest.raises(ValueError, match="weight"):
        gk.linear(x, gk.zeros(5))
    with pytest.raises(ValueError, match="broadcast"):
        gk.linear(x, gk.zeros((3, 5)), gk.zeros(4))
