"""Copies of strided views into contiguous arrays (ascontiguousarray of transposes, through
shared-memory tiles on the GPU): exact against NumPy for every dtype size and odd shapes."""

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk


@pytest.mark.parametrize("dtype", ["bool", "uint8", "bfloat16", "float16", "float32", "int64"])
@pytest.mark.parametrize("shape", [(1, 1), (31, 1025), (64, 64), (1000, 1030), (257, 3)])
def test_transposed_matrix(backend, rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    a = gk.asarray(x)
    got = gk.ascontiguousarray(a.T)
    assert got.is_contiguous
    np.testing.assert_array_equal(got.to_numpy(), np.ascontiguousarray(x.T))
    np.testing.assert_array_equal(gk.ascontiguousarray(a[1:, ::2].T).to_numpy(), x[1:, ::2].T)


@pytest.mark.parametrize("axes", [(0, 2, 1), (2, 0, 1), (1, 0, 2), (2, 1, 0)])
def test_batched_transposes(backend, rng, axes):
    x = random_array(rng, (3, 130, 67), "float32")
    got = gk.ascontiguousarray(gk.asarray(x).transpose(axes))
    np.testing.assert_array_equal(got.to_numpy(), np.ascontiguousarray(x.transpose(axes)))


@pytest.mark.parametrize("axes", [(1, 0), (0, 2, 1), (2, 0, 1), (1, 2, 0)])
@pytest.mark.parametrize("dtype", ["uint8", "bfloat16", "float32", "float64"])
def test_copy_into_a_transposed_destination(backend, rng, axes, dtype):
    """dst.transpose(axes)[...] = src: the destination contiguous in another order of its axes
    (the K-major copy before a TF32 product is one); the rest of dst's memory untouched."""
    shape = (130, 67) if len(axes) == 2 else (3, 130, 67)
    x = random_array(rng, shape, dtype)
    dst_shape = tuple(shape[axes.index(d)] for d in range(len(axes)))
    poison = random_array(rng, dst_shape, dtype)
    dst = gk.asarray(poison)
    dst.transpose(axes)[...] = gk.asarray(x)
    want = poison.copy()
    want.transpose(axes)[...] = x
    np.testing.assert_array_equal(dst.to_numpy(), want)
    np.testing.assert_array_equal(dst.transpose(axes).to_numpy(), x)
