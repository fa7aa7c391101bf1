"""Running sums over every layout the scan kernels plan for: long rows cut into tiles, many rows,
strided axes cut into pieces, offset and strided views, against float64 NumPy; the same bits on
every run."""

import numpy as np
import pytest
from conftest import TOLERANCE, assert_within, random_array

import gpukit as gk


def _check(got, x, axis):
    ref_dtype = np.cumsum(x[:1] if x.ndim == 1 else x, axis=axis).dtype
    assert got.dtype == ref_dtype
    out = got.to_numpy()
    if ref_dtype.kind in "iu":
        np.testing.assert_array_equal(out, np.cumsum(x, axis=axis))
        return
    x64 = x.astype(np.float64)
    ref = np.cumsum(x64, axis=axis)
    tol = TOLERANCE[got.dtype] * 2
    atol = tol * np.cumsum(np.abs(x64), axis=axis)
    assert_within(out.astype(np.float64), ref, tol, atol)


@pytest.mark.parametrize("n", [0, 1, 31, 1025, 4097, 2**20 + 3])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "bfloat16"])
def test_one_row_every_view(backend, rng, n, dtype):
    x = random_array(rng, (2 * n + 1,), dtype)
    a = gk.asarray(x)
    for view, dview in (
        (x[:n], a[:n]),
        (x[1 : n + 1], a[1 : n + 1]),
        (x[: 2 * n : 2], a[: 2 * n : 2]),
    ):
        _check(gk.cumsum(dview), view, 0)


@pytest.mark.parametrize(
    "shape", [(37, 1025), (64, 4096), (3, 20000), (20000, 3), (5, 67, 129), (1, 1), (0, 4)]
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
def test_every_axis_and_transposed(backend, rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    a = gk.asarray(x)
    for axis in [None, *range(len(shape))]:
        _check(gk.cumsum(a, axis=axis), x, axis)
        _check(gk.cumsum(a.T, axis=axis), x.T, axis)


def test_the_same_bits_on_every_run(backend, rng):
    x = random_array(rng, (2**20 + 3,), "float32")
    m = random_array(rng, (512, 2048), "float32")
    for arr, axis in ((gk.asarray(x), 0), (gk.asarray(m), 0), (gk.asarray(m), 1)):
        first = gk.cumsum(arr, axis=axis).to_numpy().tobytes()
        for _ in range(9):
            assert gk.cumsum(arr, axis=axis).to_numpy().tobytes() == first


def test_many_tiles_nan_inf_over_poisoned_memory(backend, rng):
    """A row of more tiles than the look-back reads at once (windows of them), written where NaN
    was just released: finite sums up to an inf, inf up to a NaN, NaN to the end, as NumPy's;
    the same bits on every run."""
    n = 2**24 + 5
    x = random_array(rng, (n,), "float32")
    i_inf, i_nan = n // 3 + 1, 2 * n // 3 + 7
    x[i_inf], x[i_nan] = np.inf, np.nan
    a = gk.asarray(x)
    del_me = gk.full((n + 64,), np.nan, "float32")
    del del_me
    got = gk.cumsum(a)
    out = got.to_numpy()
    _check(got[:i_inf], x[:i_inf], 0)
    assert np.isposinf(out[i_inf:i_nan]).all()
    assert np.isnan(out[i_nan:]).all()
    assert gk.cumsum(a).to_numpy().tobytes() == out.tobytes()
