"""Creating arrays: NumPy's functions, with memory from the gpukit pool."""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes
from .array import GPUArray, asarray, empty


def full(shape, fill_value, dtype=None) -> GPUArray:
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    out = empty(shape, dtype)
    out._rt.fill(out, fill_value)
    return out


def zeros(shape, dtype="float64") -> GPUArray:
    return full(shape, 0, dtype)


def ones(shape, dtype="float64") -> GPUArray:
    return full(shape, 1, dtype)


def arange(start, stop=None, step=1, dtype=None) -> GPUArray:
    """Evenly spaced values in [start, stop), as np.arange."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    length = max(0, math.ceil((stop - start) / step))
    dtype = _dtypes.normalize(np.result_type(start, stop, step) if dtype is None else dtype)
    out = empty((length,), dtype)
    if length:
        out._rt.arange(start, step, out)
    return out


def from_numpy(array: np.ndarray) -> GPUArray:
    """Copies a NumPy array to the device."""
    return asarray(array)


def to_numpy(array: GPUArray) -> np.ndarray:
    """Copies a GPUArray to a NumPy array."""
    return array.to_numpy()
