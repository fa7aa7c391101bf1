"""argwhere, take_along_axis, put_along_axis, where with one argument, against NumPy."""

import numpy as np
import pytest
from array_cases import ALL_DTYPES, assert_same, layouts
from conftest import random_array

import gpukit as gk


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "bfloat16", "float32"])
def test_argwhere_where(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 5), dtype):
        x = x.copy()
        x[rng.random(x.shape) < 0.5] = 0
        a = gk.asarray(x)
        assert_same(gk.argwhere(a), np.argwhere(x))
        for g, w in zip(gk.where(a), np.where(x), strict=True):
            assert_same(g, w)
        assert_same(gk.argwhere(a[1]), np.argwhere(x[1]))
    for scalar in (np.float32(0), np.float32(2)):
        assert_same(gk.argwhere(gk.asarray(scalar)), np.argwhere(scalar))
    with pytest.raises(ValueError, match="both or neither"):
        gk.where(a, 1)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_take_put_along_axis(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 6), dtype):
        for axis in (0, 1, -1):
            n = x.shape[axis]
            shape = list(x.shape)
            shape[axis] = 3
            idx = rng.integers(-n, n, size=shape)
            assert_same(
                gk.take_along_axis(a, gk.asarray(idx), axis=axis), np.take_along_axis(x, idx, axis)
            )
            assert_same(gk.take_along_axis(a, idx, axis), np.take_along_axis(x, idx, axis))
            order = np.argsort(x.astype(np.float32), axis=axis)  # what scripts feed it
            assert_same(gk.take_along_axis(a, order, axis), np.take_along_axis(x, order, axis))
        flat = rng.integers(0, x.size, size=5)
        assert_same(gk.take_along_axis(a, flat, None), np.take_along_axis(x, flat, None))
        broadcast = rng.integers(0, 6, size=(1, 2))
        assert_same(gk.take_along_axis(a, broadcast, 1), np.take_along_axis(x, broadcast, 1))
        target, ref = gk.asarray(x), x.copy()
        strided, ref_strided = target[::2], ref[::2]
        idx = np.stack([rng.permutation(6)[:2] for _ in range(2)])
        values = random_array(rng, (2, 2), dtype)
        gk.put_along_axis(strided, idx, gk.asarray(values), 1)
        np.put_along_axis(ref_strided, idx, values, 1)
        assert_same(target, ref)
        flat_idx = rng.permutation(12)[:4]
        gk.put_along_axis(strided, flat_idx, values.reshape(-1), None)
        flat = ref_strided.reshape(-1)  # NumPy writes into a flat copy of a strided array
        flat[flat_idx] = values.reshape(-1)
        ref_strided[...] = flat.reshape(ref_strided.shape)
        assert_same(target, ref)
    with pytest.raises(ValueError, match="same number of dimensions"):
        gk.take_along_axis(a, np.zeros(3, np.int64), 0)
    with pytest.raises(IndexError, match="must be an integer array"):
        gk.take_along_axis(a, np.zeros((1, 1)), 0)
    with pytest.raises(IndexError, match="out of bounds"):
        gk.take_along_axis(a, np.full((1, 1), 9), 0)
