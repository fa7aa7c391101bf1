"""Reductions with NumPy's names and result dtypes: sum, mean, prod, max, min, argmax, argmin,
any, all, var and std, each one pass over the data (var and std by Welford's update and Chan's
merge), combined in a fixed order: the same bits on every run; cumsum. 16-bit floats accumulate
in float32. Complex var, std, cumsum, any and all go through the parts (or the truth values):
their kernels take real values. Each repeated kind of call is one plan call."""

from __future__ import annotations

import builtins

import numpy as np

from .array import GPUArray, alignment, asarray, cached_plan, empty, layout, operands, wrap
from .base import shapes
from .base.dtypes import reduction_result
from .complex_parts import imag, real
from .elementwise import elementwise
from .runtime.backend import Layout
from .runtime.quota import local as _quota


def _array(a) -> GPUArray:
    (a,), rt = operands(a)
    return a if isinstance(a, GPUArray) else asarray(a, rt=rt)


def reduce(name: str, a, axis=None, keepdims=False, *, empty_ok=False, ddof=0) -> GPUArray:
    """Reduction `name` (sum mean prod max min argmax argmin any all var std) over `axis` (None:
    all; an int or a tuple); var and std divide by n - `ddof`."""
    a = _array(a)
    rt = a._rt
    if name in ("argmax", "argmin") and not (axis is None or isinstance(axis, (int, np.integer))):
        raise TypeError(f"{name} takes one axis or None, not {axis!r}")
    axes = shapes.normalize_axes(axis, a.ndim)
    if not empty_ok and builtins.any(a.shape[i] == 0 for i in axes):
        if name in ("max", "min"):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        if name in ("argmax", "argmin"):
            raise ValueError(f"attempt to get {name} of an empty sequence")
    dtype = reduction_result(name, a.dtype)
    shape = shapes.reduced_shape(a.shape, axes, keepdims)
    strides = shapes.contiguous_strides(shape, dtype.itemsize)
    # The alignment picks kernels (16-byte loads of neighbouring outputs); ddof sets the scale.
    key = ("reduce", rt, name, a.dtype, a.shape, a.strides, alignment(a), axes, ddof)
    kept = shapes.reduced_shape(a.shape, axes, False)
    out = Layout(dtype, kept, shapes.contiguous_strides(kept, dtype.itemsize))
    plan = cached_plan(key, lambda: rt.plan_reduce(name, layout(a), axes, out, ddof))
    return wrap(plan(rt.thread.stream, _quota.quota, a._buf, a._offset), shape, dtype, strides, rt)


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


def any(a, axis=None, keepdims=False) -> GPUArray:
    """Whether any element along `axis` is true (False over no elements)."""
    return reduce("any", _truth(a), axis, keepdims, empty_ok=True)


def all(a, axis=None, keepdims=False) -> GPUArray:
    """Whether every element along `axis` is true (True over no elements)."""
    return reduce("all", _truth(a), axis, keepdims, empty_ok=True)


def _truth(a) -> GPUArray:
    """Complex arrays as their truth values (the kernels reduce real values only)."""
    a = _array(a)
    return elementwise("not_equal", a, 0) if a.dtype.kind == "c" else a


def _ddof(ddof):
    if not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise TypeError(f"ddof must be a number, not {ddof!r}")
    return ddof.item() if isinstance(ddof, np.generic) else ddof


def var(a, axis=None, keepdims=False, ddof=0) -> GPUArray:
    """Mean squared deviation from the mean, divided by n - ddof instead of n (inf or NaN when
    n <= ddof, as NumPy). One pass; 16-bit floats accumulate in float32. Complex: the mean of
    |x - mean|^2, the sum of the parts' variances."""
    a = _array(a)
    if a.dtype.kind == "c":
        return var(real(a), axis, keepdims, ddof) + var(imag(a), axis, keepdims, ddof)
    return reduce("var", a, axis, keepdims, empty_ok=True, ddof=_ddof(ddof))


def std(a, axis=None, keepdims=False, ddof=0) -> GPUArray:
    """The square root of var."""
    a = _array(a)
    if a.dtype.kind == "c":
        return elementwise("sqrt", var(a, axis, keepdims, ddof))
    return reduce("std", a, axis, keepdims, empty_ok=True, ddof=_ddof(ddof))


def cumsum(a, axis=None) -> GPUArray:
    """Running sum along `axis` (over the flattened array when None), NumPy's result dtype."""
    a = _array(a)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    axis = shapes.one_axis(axis, a.ndim, "cumsum")
    rt = a._rt
    dtype = reduction_result("cumsum", a.dtype)
    if dtype.kind == "c":  # part by part (the scan kernel sums real values)
        out = empty(a.shape, dtype, rt)
        real(out)[...] = cumsum(real(a), axis)
        imag(out)[...] = cumsum(imag(a), axis)
        return out
    strides = shapes.contiguous_strides(a.shape, dtype.itemsize)
    key = ("cumsum", rt, a.dtype, a.shape, a.strides, alignment(a), axis)
    plan = cached_plan(
        key, lambda: rt.plan_cumsum(layout(a), axis, Layout(dtype, a.shape, strides))
    )
    return wrap(
        plan(rt.thread.stream, _quota.quota, a._buf, a._offset), a.shape, dtype, strides, rt
    )


def _method(f):
    def method(self, axis=None, keepdims=False):
        return f(self, axis, keepdims)

    method.__name__ = f.__name__
    method.__doc__ = f.__doc__
    return method


for _f in (sum, mean, prod, max, min, argmax, argmin, any, all):
    setattr(GPUArray, _f.__name__, _method(_f))
GPUArray.cumsum = lambda self, axis=None: cumsum(self, axis)
GPUArray.var = lambda self, axis=None, keepdims=False, ddof=0: var(self, axis, keepdims, ddof)
GPUArray.std = lambda self, axis=None, keepdims=False, ddof=0: std(self, axis, keepdims, ddof)
