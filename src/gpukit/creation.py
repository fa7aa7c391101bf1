"""Creating arrays: NumPy's functions, with memory from the gpukit pool. Each takes `device=`
(the Array API's keyword); `*_like` functions create on their argument's device."""

from __future__ import annotations

import math
import operator

import numpy as np

from .array import GPUArray, cached_plan, fill, warn_discarded_imaginary, wrap
from .array import asarray as _asarray
from .array import empty as _empty
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .device_arg import on_device, runtime_for
from .runtime import runtime
from .runtime.backend import Layout
from .runtime.quota import local as _quota

_FLOAT64 = np.dtype("float64")


@on_device
def empty(shape, dtype=None) -> GPUArray:
    """An uninitialised array (float64 unless `dtype` is given)."""
    return _empty(shape, _FLOAT64 if dtype is None else dtype)


@on_device
def full(shape, fill_value, dtype=None) -> GPUArray:
    """`fill_value` everywhere (an array fill value broadcasts to `shape`, as in NumPy)."""
    if isinstance(fill_value, GPUArray):
        out = _empty(shape, fill_value.dtype if dtype is None else dtype)
        out[...] = fill_value
        return out
    host = np.asarray(fill_value)
    out = _empty(shape, host.dtype if dtype is None else dtype)
    if host.ndim:
        out[...] = host
        return out
    if host.dtype.kind == "c" and out.dtype.kind not in "cb":  # np.full casts unsafely
        warn_discarded_imaginary(host.dtype, out.dtype)
        fill_value = host.real.item()
    fill(out, fill_value)
    return out


@on_device
def zeros(shape, dtype=None) -> GPUArray:
    return full(shape, 0, _FLOAT64 if dtype is None else dtype)


@on_device
def ones(shape, dtype=None) -> GPUArray:
    return full(shape, 1, _FLOAT64 if dtype is None else dtype)


@on_device
def asarray(obj, dtype=None, *, copy: bool | None = None) -> GPUArray:
    """A GPUArray from a GPUArray, NumPy array, nested list or scalar. copy=True always copies;
    copy=False never does (ValueError when it would have to: any data not already a GPUArray
    of this dtype on this device)."""
    if isinstance(obj, GPUArray):
        target = runtime_for(None)
        if obj._rt is not target:
            if copy is False:
                raise ValueError(f"asarray(copy=False): the array is on device {obj.device}")
            obj = obj.to_device(target.name)
            copy = False
        if dtype is None or _dtypes.normalize(dtype) == obj.dtype:
            return obj.copy() if copy else obj
        if copy is False:
            raise ValueError(f"asarray(copy=False) cannot convert {obj.dtype.name} to {dtype}")
        return obj.astype(dtype)
    if copy is False:
        raise ValueError(
            f"asarray(copy=False): a {type(obj).__name__} must be copied to the device"
        )
    return _asarray(obj, dtype)


@on_device
def array(object, dtype=None, *, copy: bool = True, ndmin: int = 0) -> GPUArray:
    """A new GPUArray from array-like data (NumPy's array: a copy unless copy=False allows
    reusing a GPUArray), with at least `ndmin` dimensions (ones prepended)."""
    out = asarray(object, dtype, copy=True if copy else None)
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def copy(a) -> GPUArray:
    """A copy of `a` on its device."""
    return a.copy() if isinstance(a, GPUArray) else asarray(a)


@on_device
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


def _like(a, dtype, shape, device):
    """(shape, dtype, device) of a *_like call: the argument's unless given."""
    if not isinstance(a, GPUArray):
        a = np.asarray(a)
        device = runtime_for(device).name
    return (
        a.shape if shape is None else shape,
        a.dtype if dtype is None else dtype,
        a.device if device is None else device,
    )


def empty_like(a, dtype=None, shape=None, *, device=None) -> GPUArray:
    shape, dtype, device = _like(a, dtype, shape, device)
    return empty(shape, dtype, device=device)


def zeros_like(a, dtype=None, shape=None, *, device=None) -> GPUArray:
    shape, dtype, device = _like(a, dtype, shape, device)
    return zeros(shape, dtype, device=device)


def ones_like(a, dtype=None, shape=None, *, device=None) -> GPUArray:
    shape, dtype, device = _like(a, dtype, shape, device)
    return ones(shape, dtype, device=device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None) -> GPUArray:
    shape, dtype, device = _like(a, dtype, shape, device)
    return full(shape, fill_value, dtype, device=device)


@on_device
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


@on_device
def eye(n: int, m: int | None = None, k: int = 0, dtype=None) -> GPUArray:
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
