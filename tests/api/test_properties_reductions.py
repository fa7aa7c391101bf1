"""Property tests of reductions against NumPy through the public API: random shapes (0-d, size-0
axes), every dtype, axis as None, an int or a tuple (negative included), keepdims. Integer
results are exact (NumPy's wrapping included); float results are within the result dtype's
tolerance of a float64 reference, relative to the magnitude of what was summed (a sum that
cancels is only as exact as its terms); NaN and inf propagate as in NumPy."""

import numpy as np
import pytest
from conftest import TOLERANCE
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import DTYPES, arrays, property_test, resolution, shapes

import gpukit as gk

BF16 = gk.bfloat16
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@st.composite
def array_and_axis(draw, dtype=None, single_axis=False, **kw):
    dtype = dtype or draw(st.sampled_from(DTYPES), label="dtype")
    x = draw(arrays(dtype, shapes, **kw), label="x")
    if x.ndim == 0 or draw(st.booleans()):
        axis = None if single_axis or x.ndim == 0 or draw(st.booleans()) else ()
    elif single_axis or draw(st.booleans()):
        axis = draw(st.integers(-x.ndim, x.ndim - 1))
    else:
        axes = draw(st.lists(st.integers(0, x.ndim - 1), unique=True, min_size=1))
        axis = tuple(a - x.ndim if draw(st.booleans()) else a for a in axes)
    return x, axis, draw(st.booleans(), label="keepdims")


def _result_dtype(name, dtype):
    if dtype == BF16:
        return np.dtype("int64") if name in ("argmax", "argmin") else BF16
    return getattr(np, name)(np.ones(1, dtype)).dtype


def _as_float64(x):
    return x.astype(np.float64)


def _compare(got, expected, dtype, magnitude):
    result = got.to_numpy()
    assert result.dtype == dtype, (result.dtype, dtype)
    assert result.shape == np.shape(expected), (result.shape, np.shape(expected))
    if dtype.kind in "biu":
        np.testing.assert_array_equal(result, expected)
        return
    tol = TOLERANCE[dtype] * 4
    got, want = result.astype(np.float64), np.asarray(expected, np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got) * np.sign(got), np.isinf(want) * np.sign(want))
    finite = np.isfinite(want)
    bound = tol * np.abs(want) + tol * np.broadcast_to(magnitude, want.shape) + resolution(dtype)
    excess = np.where(finite, np.abs(got - want) - bound, 0)
    assert (excess <= 0).all(), (got, want, bound)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@property_test(40)
@given(data=st.data())
def test_sum_mean_max_min(backend, name, data):
    x, axis, keepdims = data.draw(array_and_axis())
    dtype = _result_dtype(name, x.dtype)
    a = gk.asarray(x)
    if name in ("max", "min") and 0 in [x.shape[i] for i in _axes(axis, x.ndim)]:
        with pytest.raises(ValueError, match="zero-size"):
            getattr(a, name)(axis=axis, keepdims=keepdims)
        return
    got = getattr(gk, name)(a, axis=axis, keepdims=keepdims)
    if dtype.kind in "biu":
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        _compare(got, expected, dtype, 0)
        return
    with np.errstate(all="ignore"):
        x64 = _as_float64(x)
        expected = getattr(np, name)(x64, axis=axis, keepdims=keepdims)
        # How exact a sum can be: the sum (mean) of the magnitudes of its terms.
        magnitude = getattr(np, name if name in ("sum", "mean") else "max")(
            np.abs(np.nan_to_num(x64, posinf=0, neginf=0)), axis=axis, keepdims=keepdims
        )
    if dtype.kind == "f" and dtype.itemsize < 8 and name in ("sum", "mean"):
        # A finite float64 sum beyond the result dtype's range overflows there, as in NumPy.
        expected = expected.astype(dtype)
    _compare(got, expected, dtype, magnitude)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@property_test(40)
@given(data=st.data())
def test_argmax_argmin(backend, name, data):
    x, axis, keepdims = data.draw(array_and_axis(single_axis=True))
    a = gk.asarray(x)
    if (x.size if axis is None else x.shape[axis]) == 0:
        with pytest.raises(ValueError, match="empty"):
            getattr(gk, name)(a, axis=axis, keepdims=keepdims)
        return
    reference = x.astype(np.float32) if x.dtype == BF16 else x  # exact for bfloat16
    expected = getattr(np, name)(reference, axis=axis, keepdims=keepdims)
    _compare(getattr(gk, name)(a, axis=axis, keepdims=keepdims), expected, np.dtype("int64"), 0)


@pytest.mark.parametrize("name", ["any", "all"])
@property_test(30)
@given(data=st.data())
def test_any_all(backend, name, data):
    x, axis, keepdims = data.draw(array_and_axis())
    reference = x.astype(np.float32) if x.dtype == BF16 else x
    expected = getattr(np, name)(reference, axis=axis, keepdims=keepdims)
    got = getattr(gk, name)(gk.asarray(x), axis=axis, keepdims=keepdims)
    _compare(got, expected, np.dtype(bool), 0)


@property_test(30)
@given(data=st.data())
def test_prod(backend, data):
    """Products of values that are powers of two (and zeros, signs), exact in every float dtype
    while they stay in range: what differs is only where the accumulation could round."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x, axis, keepdims = data.draw(array_and_axis(dtype))
    if x.dtype.kind == "f" or x.dtype == BF16:
        exponents = data.draw(arrays("int8", x.shape), label="exponents") % 3 - 1  # 0.5, 1, 2
        signs = data.draw(arrays("bool", x.shape), label="signs")
        x = (np.where(signs, -1.0, 1.0) * np.exp2(exponents)).astype(x.dtype)
        assume(x.size <= 100)  # every partial product within 2**+-100: exact in float32
    got = gk.prod(gk.asarray(x), axis=axis, keepdims=keepdims)
    dtype = _result_dtype("prod", x.dtype)
    reference = x.astype(np.float64) if dtype.kind == "f" or dtype == BF16 else x
    expected = np.prod(reference, axis=axis, keepdims=keepdims)
    if dtype.kind == "f" or dtype == BF16:
        with np.errstate(over="ignore"):
            expected = expected.astype(dtype)  # beyond float16's range: inf, as in NumPy
    _compare(got, expected, dtype, 0)


@pytest.mark.parametrize("name", ["var", "std"])
@property_test(30)
@given(data=st.data())
def test_var_std(backend, name, data):
    dtype = data.draw(st.sampled_from(["float16", "bfloat16", "float32", "float64", "int32"]))
    x, axis, keepdims = data.draw(array_and_axis(dtype, magnitude=10.0))
    n = int(np.prod([x.shape[i] for i in _axes(axis, x.ndim)]))
    ddof = data.draw(st.integers(0, 2), label="ddof")
    got = getattr(gk, name)(gk.asarray(x), axis=axis, keepdims=keepdims, ddof=ddof)
    with np.errstate(all="ignore"):
        x64 = _as_float64(x)
        expected = getattr(np, name)(x64, axis=axis, keepdims=keepdims, ddof=ddof)
        spread = np.max(np.abs(np.nan_to_num(x64, posinf=0, neginf=0)), initial=0)
    if n <= ddof:  # NumPy: inf or NaN (0/0) over too few elements
        expected = np.where(np.isnan(expected), expected, np.inf)
    magnitude = spread**2 if name == "var" else spread
    _compare(got, expected, _result_dtype(name, x.dtype), magnitude)


@property_test(30)
@given(data=st.data())
def test_cumsum(backend, data):
    x, axis, _ = data.draw(array_and_axis(single_axis=True))
    got = gk.cumsum(gk.asarray(x), axis=axis)
    dtype = _result_dtype("cumsum", x.dtype)
    if dtype.kind in "biu":
        _compare(got, np.cumsum(x, axis=axis), dtype, 0)
        return
    with np.errstate(all="ignore"):
        x64 = _as_float64(x)
        expected = np.cumsum(x64, axis=axis)
        magnitude = np.cumsum(np.abs(np.nan_to_num(x64, posinf=0, neginf=0)), axis=axis)
    if dtype.itemsize < 8:
        expected = expected.astype(dtype)
    _compare(got, expected, dtype, magnitude)
