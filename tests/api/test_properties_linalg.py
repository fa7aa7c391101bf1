"""Property tests of matmul (`@`), dot and linear against a float64 NumPy reference through the
public API: NumPy's matmul shape rules (1-D operands, broadcast batch dimensions, size-0 axes),
every float dtype and the integer ones, transposed and reversed (strided) operands. A float
result is within the dtype's tolerance of the float64 product, relative to the sum of |a||b|
over each dot product (what rounding the terms can cost); integers are exact (wrapping as
NumPy does)."""

import numpy as np
import pytest
from conftest import TOLERANCE
from hypothesis import given
from hypothesis import strategies as st
from strategies import arrays, property_test, resolution

import gpukit as gk

BF16 = gk.bfloat16
DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8"]


def _expected_dtype(a, b):
    if BF16 in (a, b):
        other = b if a == BF16 else a
        return (
            np.dtype("float32")
            if other in (np.float16, np.float32)
            else (np.dtype("float64") if other == np.float64 else BF16)
        )
    return np.result_type(a, b)


@st.composite
def operands(draw):
    """Shapes (a, b) that matmul accepts: 1-D or more, batch dimensions that broadcast."""
    m, k, n = (draw(st.integers(0, 9)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    a_shape = (k,) if draw(st.booleans()) and not batch else (*batch, m, k)
    kept = draw(st.integers(0, len(batch)))  # b's batch: a suffix of a's (broadcast aligns right)
    b_batch = [1 if draw(st.booleans()) else d for d in batch][len(batch) - kept :]
    b_shape = (k,) if draw(st.booleans()) and len(a_shape) > 1 else (*b_batch, k, n)
    dtype = draw(st.sampled_from(DTYPES))
    mixed = draw(st.sampled_from([dtype, dtype, *DTYPES]))
    kw = dict(special=False, magnitude=4.0)
    a = draw(arrays(dtype, a_shape, **kw) if dtype[0] in "fb" else arrays(dtype, a_shape))
    b = draw(arrays(mixed, b_shape, **kw) if mixed[0] in "fb" else arrays(mixed, b_shape))
    return a, b


def _small_ints(x):
    """Integers kept small (|x| < 8) so that products of int8 stay exact in every accumulator."""
    return (x % 8).astype(x.dtype) if x.dtype.kind in "iu" else x


@property_test(60)
@given(ab=operands(), transposed=st.booleans(), reversed_=st.booleans())
def test_matmul(backend, ab, transposed, reversed_):
    a, b = (_small_ints(x) for x in ab)
    ga, gb = gk.asarray(a), gk.asarray(b)
    if transposed and a.ndim >= 2:  # the same values through a transposed (strided) view
        ga = gk.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))).swapaxes(-1, -2)
    if reversed_ and b.ndim >= 1 and b.shape[-1]:
        gb = gk.asarray(np.ascontiguousarray(b[..., ::-1]))[..., ::-1]
    got = ga @ gb
    dtype = _expected_dtype(a.dtype, b.dtype)
    assert got.dtype == dtype, (got.dtype, dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    expected = a64 @ b64
    assert got.shape == expected.shape, (got.shape, expected.shape)
    result = got.to_numpy()
    if dtype.kind in "iu":
        np.testing.assert_array_equal(
            result, (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)
        )
        return
    bound = np.abs(a64) @ np.abs(b64)  # the scale of every dot product's terms
    tol = TOLERANCE[dtype] * 4
    allowed = tol * (np.abs(expected) + bound) + resolution(dtype)
    excess = np.abs(result.astype(np.float64) - expected) - allowed
    assert (excess <= 0).all(), (result, expected)


@property_test(30)
@given(data=st.data())
def test_linear(backend, data):
    """linear(x, w, bias) = x @ w.T + bias, with the bias fused: PyTorch's layout."""
    dtype = data.draw(st.sampled_from(["float16", "bfloat16", "float32", "float64"]))
    rows = data.draw(st.lists(st.integers(1, 4), max_size=2), label="leading")
    k, n = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 40))
    kw = dict(special=False, magnitude=4.0)
    x = data.draw(arrays(dtype, (*rows, k), **kw), label="x")
    w = data.draw(arrays(dtype, (n, k), **kw), label="w")
    bias = data.draw(st.none() | arrays(dtype, (n,), **kw), label="bias")
    got = gk.linear(gk.asarray(x), gk.asarray(w), None if bias is None else gk.asarray(bias))
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    expected = x64 @ w64.T + (0 if bias is None else bias.astype(np.float64))
    bound = np.abs(x64) @ np.abs(w64).T + (0 if bias is None else np.abs(bias.astype(np.float64)))
    assert got.dtype == x.dtype and got.shape == expected.shape
    tol = TOLERANCE[got.dtype] * 4
    allowed = tol * (np.abs(expected) + bound) + resolution(got.dtype)
    excess = np.abs(got.to_numpy().astype(np.float64) - expected) - allowed
    assert (excess <= 0).all()


@pytest.mark.parametrize(
    "shapes", [((3,), (4,)), ((2, 3), (2, 3)), ((2, 2, 3), (3, 3, 4)), ((), (3,))]
)
def test_matmul_shape_errors(backend, shapes):
    a, b = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError):
        np.matmul(a, b)
    with pytest.raises(ValueError, match="matmul"):
        gk.asarray(a) @ gk.asarray(b)
