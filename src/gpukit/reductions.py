"""Reductions with NumPy's names and result dtypes: sum, mean, prod, max, min, argmax, argmin in
one kernel pass;
any and all over truth values; var and std composed from means (two passes, like NumPy)."""

from __future__ import annotations

import builtins
import math

from . import _shapes
from ._dtypes import bfloat16, reduction_result
from .array import GPUArray, _operands, asarray, elementwise, empty, reduce


def _array(a) -> GPUArray:
    (a,), rt = _operands(a)
    return a if isinstance(a, GPUArray) else asarray(a, rt=rt)


def sum(a, axis=None, keepdims=False) -> GPUArray:
    return reduce("sum", a, axis, keepdims)


def mean(a, axis=None, keepdims=False) -> GPUArray:
    return reduce("mean", a, axis, keepdims)


def prod(a, axis=None, keepdims=False) -> GPUArray:
    return reduce("prod", a, axis, keepdims)


def max(a, axis=None, keepdims=False) -> GPUArray:
    return reduce("max", a, axis, keepdims)


def min(a, axis=None, keepdims=False) -> GPUArray:
    return reduce("min", a, axis, keepdims)


def argmax(a, axis=None, keepdims=False) -> GPUArray:
    """Index of the first largest element along `axis` (flat index when None); NaN wins."""
    return reduce("argmax", a, axis, keepdims)


def argmin(a, axis=None, keepdims=False) -> GPUArray:
    """Index of the first smallest element along `axis` (flat index when None); NaN wins."""
    return reduce("argmin", a, axis, keepdims)


def _truth(a: GPUArray) -> GPUArray:
    return a if a.dtype == bool else elementwise("not_equal", a, 0)


def any(a, axis=None, keepdims=False) -> GPUArray:
    """Whether any element along `axis` is true (False over no elements)."""
    return reduce("max", _truth(_array(a)), axis, keepdims, empty_ok=True)


def all(a, axis=None, keepdims=False) -> GPUArray:
    """Whether every element along `axis` is true (True over no elements)."""
    return reduce("min", _truth(_array(a)), axis, keepdims, empty_ok=True)


def var(a, axis=None, keepdims=False, ddof: int = 0) -> GPUArray:
    """Mean squared deviation from the mean, divided by n - ddof instead of n when ddof > 0."""
    a = _array(a)
    if a.dtype == bfloat16:  # accumulated in float32, rounded once at the end (as in PyTorch)
        return var(a.astype("float32"), axis, keepdims, ddof).astype(bfloat16)
    deviation = a - reduce("mean", a, axis, keepdims=True)
    out = reduce("mean", deviation * deviation, axis, keepdims)
    if ddof:
        n = math.prod(a.shape[i] for i in _shapes.normalize_axes(axis, a.ndim))
        out = out * (n / builtins.max(n - ddof, 0)) if n > ddof else out * math.inf
    return out


def std(a, axis=None, keepdims=False, ddof: int = 0) -> GPUArray:
    return elementwise("sqrt", var(a, axis, keepdims, ddof))


def cumsum(a, axis=None) -> GPUArray:
    """Running sum along `axis` (over the flattened array when None), NumPy's result dtype."""
    a = _array(a)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    (axis,) = _shapes.normalize_axes(axis, a.ndim)
    out = empty(a.shape, reduction_result("cumsum", a.dtype), a._rt)
    a._rt.cumsum(a, axis, out)
    return out
