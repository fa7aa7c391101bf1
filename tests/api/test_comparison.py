"""isclose, allclose, array_equal, array_equiv against NumPy, with infinities and NaNs placed on
purpose and non-contiguous inputs."""

import numpy as np
import pytest
from array_cases import as_float64, assert_same, layouts
from conftest import random_array

import gpukit as gk


def _near(rng, x: np.ndarray) -> np.ndarray:
    """x moved by amounts around the default tolerances: some elements close, some not."""
    step = np.abs(as_float64(x)) * 10.0 ** rng.uniform(-8, -3, x.shape)
    return (as_float64(x) + step * rng.choice([-1, 1], x.shape)).astype(x.dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_isclose_allclose(backend, rng, dtype):
    for _, a, x in layouts(rng, (5, 6), dtype):
        y = _near(rng, x)
        y[0, :4] = [np.inf, -np.inf, np.nan, np.nan]
        x = x.copy()
        x[0, :4] = [np.inf, np.inf, np.nan, 1.0]
        a, b = gk.asarray(x), gk.asarray(y)
        xs, ys = as_float64(x), as_float64(y)
        for kwargs in ({}, {"rtol": 1e-3}, {"atol": 0.5, "rtol": 0}, {"equal_nan": True}):
            got = gk.isclose(a, b, **kwargs)
            # NumPy's own rule on the same values (computed in the operands' precision)
            want = np.isclose(
                x.astype(np.float32) if dtype == "bfloat16" else x,
                ys.astype(np.float32) if dtype == "bfloat16" else y,
                **kwargs,
            )
            assert_same(got, want)
            assert gk.allclose(a[1:], b[1:], **kwargs) == np.allclose(xs[1:], ys[1:], **kwargs)
        assert gk.allclose(a[1:], a[1:]) is True
    ints = random_array(rng, (4,), "int32")
    assert_same(
        gk.isclose(gk.asarray(ints), ints + 0.5, atol=0.6), np.isclose(ints, ints + 0.5, atol=0.6)
    )
    assert_same(gk.isclose(gk.asarray(ints), 3), np.isclose(ints, 3))


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint32", "bfloat16", "float32"])
def test_array_equal_equiv(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 4), dtype):
        assert gk.array_equal(a, x.copy()) is True
        other = x.copy()
        other[2, 3] = not other[2, 3] if dtype == "bool" else other[2, 3] + 1
        assert gk.array_equal(a, gk.asarray(other)) is False
        assert gk.array_equal(a, a[:2]) is False
        assert gk.array_equiv(a, gk.asarray(x[1:2])) == np.array_equiv(x, x[1:2])
        assert gk.array_equiv(gk.asarray(x[1]), gk.asarray(np.stack([x[1], x[1]]))) is True
        assert gk.array_equiv(a, gk.ones((2, 4), dtype)) is False
    if dtype in ("bfloat16", "float32"):
        x = random_array(rng, (5,), dtype)
        x[2] = np.nan
        assert gk.array_equal(gk.asarray(x), gk.asarray(x)) is False
        assert gk.array_equal(gk.asarray(x), gk.asarray(x), equal_nan=True) is True
