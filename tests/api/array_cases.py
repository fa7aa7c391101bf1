"""Shared inputs for the front-end parity tests: the same random data in several memory layouts
(contiguous, strided slices, transposed), and exact comparison of data-movement results."""

import numpy as np
from conftest import random_array

import gpukit as gk

# Every dtype gpukit has, for functions that only move data.
ALL_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]
# One of each kind, for functions that compute.
NUMERIC = ["int8", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def layouts(rng, shape, dtype):
    """(layout name, GPUArray, the same values in NumPy) for a contiguous array, a view with
    step-2 slices along every axis and, for 2+ dims, a transposed view."""
    shape = tuple(shape)
    x = random_array(rng, shape, dtype)
    yield "contiguous", gk.asarray(x), x
    big = random_array(rng, tuple(2 * n + 1 for n in shape), dtype)
    every_other = tuple(slice(1, None, 2) for _ in shape)
    yield "strided", gk.asarray(big)[every_other], big[every_other]
    if len(shape) >= 2:
        xt = random_array(rng, shape[::-1], dtype)
        yield "transposed", gk.asarray(xt).T, xt.T


def assert_same(actual, expected):
    """Exact equality of shape, dtype and every element (NaNs in the same places)."""
    assert isinstance(actual, gk.GPUArray), type(actual)
    got = actual.to_numpy()
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if got.dtype == gk.bfloat16:
        got, expected = got.astype(np.float32), expected.astype(np.float32)
    np.testing.assert_array_equal(got, expected)


def as_float64(x: np.ndarray) -> np.ndarray:
    """A float64 copy for references (NumPy has few bfloat16 loops)."""
    return np.asarray(x).astype(np.float64)


def poisoned(shape, dtype):
    """An output array filled with a value no result here contains (NaN, or a large integer)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return gk.zeros(shape, dtype)  # results tested against it contain True
    if dtype.kind in "iu":
        return gk.full(shape, np.iinfo(dtype).max - 3, dtype)
    return gk.full(shape, np.nan, dtype)
