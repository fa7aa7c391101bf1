"""Creating arrays: NumPy's functions, with memory from the gpukit pool."""

from __future__ import annotations

import math
import operator

import numpy as np

from .array import GPUArray, asarray, cached_plan, empty, fill, wrap
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .runtime import runtime
from .runtime.backend import Layout
from .runtime.quota import local as _quota


def full(shape, fill_value, dtype=None) -> GPUArray:
    """`fill_value` everywhere (an array fill value broadcasts to `shape`, as in NumPy)."""
    if isinstance(fill_value, GPUArray):
        out = empty(shape, fill_value.dtype if dtype is None else dtype)
        out[...] = fill_value
        return out
    host = np.asarray(fill_value)
    out = empty(shape, host.dtype if dtype is None else dtype)
    if host.ndim:
        out[...] = host
    else:
        fill(out, fill_value)
    return out


def zeros(shape, dtype="float64") -> GPUArray:
    return full(shape, 0, "float64" if dtype is None else dtype)


def ones(shape, dtype="float64") -> GPUArray:
    return full(shape, 1, "float64" if dtype is None else dtype)


def arange(start, stop=None, step=1, dtype=None) -> GPUArray:
    """Evenly spaced values in [start, stop), as np.arange."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    span = (stop - start) / step
    if not math.isfinite(span):
        raise ValueError(f"arange: no finite length from {start} to {stop} in steps of {step}")
    length = max(0, math.ceil(span))
    dtype = _dtypes.normalize(np.result_type(start, stop, step) if dtype is None else dtype)
    if dtype == np.bool_ and length > 2:
        raise TypeError("arange of bool is only defined for at most 2 elements, as in NumPy")
    return _arange(start, step, length, dtype)


def _arange(start, step, length: int, dtype) -> GPUArray:
    """start + i * step for i < length, in `dtype` (computed in double, or in 64-bit integers
    for integer dtypes)."""
    rt = runtime()
    shape, strides = (length,), (dtype.itemsize,)
    _shapes.nbytes(shape, dtype.itemsize)  # ValueError past what can be addressed
    plan = cached_plan(
        ("arange", rt, dtype, length), lambda: rt.plan_arange(Layout(dtype, shape, strides))
    )
    if dtype.kind in "biu":
        start, step = int(start), int(step)
    else:
        start, step = float(start), float(step)
    return wrap(plan(rt.thread.stream, _quota.quota, start, step), shape, dtype, strides, rt)


def from_numpy(array: np.ndarray) -> GPUArray:
    """Copies a NumPy array to the device."""
    return asarray(array)


def to_numpy(array: GPUArray) -> np.ndarray:
    """Copies a GPUArray to a NumPy array."""
    if not isinstance(array, GPUArray):
        raise TypeError(f"to_numpy takes a GPUArray, not {type(array).__name__}")
    return array.to_numpy()


def _like(a, dtype, shape):
    if not isinstance(a, GPUArray):
        a = np.asarray(a)  # NumPy's *_like take anything array-like
    return (a.shape if shape is None else shape), (a.dtype if dtype is None else dtype)


def empty_like(a, dtype=None, shape=None) -> GPUArray:
    shape, dtype = _like(a, dtype, shape)
    return empty(shape, dtype)


def zeros_like(a, dtype=None, shape=None) -> GPUArray:
    shape, dtype = _like(a, dtype, shape)
    return zeros(shape, dtype)


def ones_like(a, dtype=None, shape=None) -> GPUArray:
    shape, dtype = _like(a, dtype, shape)
    return ones(shape, dtype)


def full_like(a, fill_value, dtype=None, shape=None) -> GPUArray:
    shape, dtype = _like(a, dtype, shape)
    return full(shape, fill_value, dtype)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None) -> GPUArray:
    """`num` evenly spaced values from start to stop (stop included when `endpoint`)."""
    try:
        num = operator.index(num)
    except TypeError:
        raise TypeError(f"linspace: num must be an int, not {num!r}") from None
    if num < 0:
        raise ValueError(f"number of samples, {num}, must be non-negative")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    dtype = _dtypes.normalize(np.result_type(float, start, stop) if dtype is None else dtype)
    out = _arange(float(start), step, num, np.dtype("float64"))
    if endpoint and num > 1:
        out[-1] = float(stop)
    return out if dtype == np.float64 else out.astype(dtype)


def eye(n: int, m: int | None = None, k: int = 0, dtype="float64") -> GPUArray:
    """A 2-D array with ones on diagonal `k`, zeros elsewhere."""
    m = n if m is None else m
    out = zeros((n, m), dtype)
    length = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
    if length:
        item = out.dtype.itemsize
        start = k if k >= 0 else -k * m
        diagonal = out._view((length,), ((m + 1) * item,), start * item)
        fill(diagonal, 1)
    return out
