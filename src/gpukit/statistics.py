"""Reductions with NumPy's full signatures (dtype=, out=, ddof= / the Array API's correction=),
their NaN-ignoring forms, running products, differences and the statistics built on them
(ptp, average, cov, corrcoef), all composed from gpukit's own reductions and elementwise ops."""

from __future__ import annotations

import math
import operator

import numpy as np

from . import array_args as _args
from . import reductions
from .array import GPUArray
from .base import dtypes as _dtypes
from .creation import full, zeros
from .elementwise import clip, equal, less, logical_not, not_equal, sqrt, where
from .manipulation import _write, atleast_2d, concatenate
from .matrices import diagonal
from .views import broadcast_to, expand_dims

_F32 = np.dtype("float32")


def _cast_in(a: GPUArray, dtype) -> GPUArray:
    return a if dtype is None else a.astype(dtype, copy=False)


def _finish(result: GPUArray, dtype, out) -> GPUArray:
    if dtype is not None:
        result = result.astype(dtype, copy=False)
    return result if out is None else _write(result, out, "unsafe")


def sum(a, axis=None, dtype=None, out=None, keepdims=False) -> GPUArray:
    """Sum over `axis`; `dtype` is the dtype it is computed and returned in."""
    a = _cast_in(_args.array(a), dtype)
    return _finish(reductions.sum(a, axis, keepdims), dtype, out)


def prod(a, axis=None, dtype=None, out=None, keepdims=False) -> GPUArray:
    a = _cast_in(_args.array(a), dtype)
    return _finish(reductions.prod(a, axis, keepdims), dtype, out)


def mean(a, axis=None, dtype=None, out=None, keepdims=False) -> GPUArray:
    a = _cast_in(_args.array(a), dtype)
    return _finish(reductions.mean(a, axis, keepdims), dtype, out)


def max(a, axis=None, out=None, keepdims=False) -> GPUArray:
    return _finish(reductions.max(a, axis, keepdims), None, out)


def min(a, axis=None, out=None, keepdims=False) -> GPUArray:
    return _finish(reductions.min(a, axis, keepdims), None, out)


amax, amin = max, min


def argmax(a, axis=None, out=None, *, keepdims=False) -> GPUArray:
    return _finish(reductions.argmax(a, axis, keepdims), None, out)


def argmin(a, axis=None, out=None, *, keepdims=False) -> GPUArray:
    return _finish(reductions.argmin(a, axis, keepdims), None, out)


def _ddof(ddof, correction):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Variance over `axis`, divided by n - ddof (`correction` is the Array API's ddof)."""
    a = _cast_in(_args.array(a), dtype)
    return _finish(reductions.var(a, axis, keepdims, _ddof(ddof, correction)), dtype, out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    a = _cast_in(_args.array(a), dtype)
    return _finish(reductions.std(a, axis, keepdims, _ddof(ddof, correction)), dtype, out)


def cumsum(a, axis=None, dtype=None, out=None) -> GPUArray:
    a = _cast_in(_args.array(a), dtype)
    return _finish(reductions.cumsum(a, axis), dtype, out)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Running sum along `axis` (which may be left out only for 1-D input); with
    `include_initial`, a zero first."""
    x = _args.array(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError("cumulative_sum needs an axis for arrays that are not 1-D")
        axis = 0
    axis = _args.axis_index(axis, x.ndim)
    result = cumsum(x, axis, dtype)
    if include_initial:
        shape = list(result.shape)
        shape[axis] = 1
        result = concatenate([zeros(tuple(shape), result.dtype, device=x.device), result], axis)
    return result if out is None else _write(result, out, "unsafe")


def cumprod(a, axis=None, dtype=None, out=None) -> GPUArray:
    """Running product along `axis` (over the flattened array when None), NumPy's result dtype.
    Computed as log2(n) rounds of elementwise products of shifted slices (a Hillis-Steele
    scan); float16 and bfloat16 in float32."""
    a = _args.array(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _args.axis_index(axis, a.ndim)
    result_dtype = _dtypes.normalize(dtype) if dtype is not None else _cumprod_dtype(a.dtype)
    compute = _F32 if result_dtype in (_dtypes.bfloat16, np.dtype("float16")) else result_dtype
    scan = a.astype(compute)
    n, head, shift = a.shape[axis], (slice(None),) * axis, 1
    while shift < n:
        upper = (*head, slice(shift, None))
        scan[upper] = scan[upper] * scan[(*head, slice(0, n - shift))]
        shift *= 2
    return _finish(scan, result_dtype, out)


def _cumprod_dtype(dtype: np.dtype) -> np.dtype:
    if dtype == _dtypes.bfloat16:
        return dtype
    return _dtypes.normalize(np.cumprod(np.ones(1, dtype)).dtype)


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None) -> GPUArray:
    """The n-th discrete difference along `axis` (`!=` for booleans, as NumPy)."""
    a = _args.array(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _args.axis_index(axis, a.ndim)
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        extra = _args.arrays(a, extra)[1] if extra is not a else a
        if extra.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            extra = broadcast_to(extra, tuple(shape))
        parts.append(extra)
    if len(parts) > 1:
        a = concatenate(parts, axis)
    head = (slice(None),) * axis
    for _ in range(n):
        upper, lower = a[(*head, slice(1, None))], a[(*head, slice(None, -1))]
        a = not_equal(upper, lower) if a.dtype == np.bool_ else upper - lower
    return a


def count_nonzero(a, axis=None, *, keepdims=False) -> GPUArray:
    """How many elements along `axis` are nonzero (int64)."""
    a = _args.array(a)
    truth = a if a.dtype == np.bool_ else not_equal(a, 0)
    return reductions.sum(truth, axis, keepdims)


def ptp(a, axis=None, out=None, keepdims=False) -> GPUArray:
    """Range (max - min) along `axis`."""
    a = _args.array(a)
    result = reductions.max(a, axis, keepdims) - reductions.min(a, axis, keepdims)
    return result if out is None else _write(result, out, "unsafe")


# --- NaN-ignoring reductions ----------------------------------------------------------------
def _nan_mask(a: GPUArray):
    """Where `a` is NaN (None for dtypes without NaN)."""
    return not_equal(a, a) if _dtypes.is_floating(a.dtype) else None


def nansum(a, axis=None, dtype=None, out=None, keepdims=False) -> GPUArray:
    """Sum treating NaN as zero."""
    a = _args.array(a)
    mask = _nan_mask(a)
    return sum(a if mask is None else where(mask, 0, a), axis, dtype, out, keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False) -> GPUArray:
    """Product treating NaN as one."""
    a = _args.array(a)
    mask = _nan_mask(a)
    return prod(a if mask is None else where(mask, 1, a), axis, dtype, out, keepdims)


def _nan_extreme(name: str, a, axis, out, keepdims) -> GPUArray:
    a = _args.array(a)
    mask = _nan_mask(a)
    if mask is None:
        return _finish(getattr(reductions, name)(a, axis, keepdims), None, out)
    fill = -math.inf if name == "max" else math.inf
    result = getattr(reductions, name)(where(mask, fill, a), axis, keepdims)
    all_nan = reductions.all(mask, axis, keepdims)
    return _finish(where(all_nan, math.nan, result), None, out)


def nanmax(a, axis=None, out=None, keepdims=False) -> GPUArray:
    """Largest element ignoring NaN (NaN where a slice is all NaN, as NumPy)."""
    return _nan_extreme("max", a, axis, out, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False) -> GPUArray:
    """Smallest element ignoring NaN (NaN where a slice is all NaN, as NumPy)."""
    return _nan_extreme("min", a, axis, out, keepdims)


def _nan_arg(name: str, a, axis, out, keepdims) -> GPUArray:
    a = _args.array(a)
    mask = _nan_mask(a)
    if mask is not None:
        if reductions.any(reductions.all(mask, axis)).item():
            raise ValueError("All-NaN slice encountered")
        a = where(mask, -math.inf if name == "argmax" else math.inf, a)
    return _finish(getattr(reductions, name)(a, axis, keepdims), None, out)


def nanargmax(a, axis=None, out=None, *, keepdims=False) -> GPUArray:
    """Index of the largest element ignoring NaN; ValueError for an all-NaN slice."""
    return _nan_arg("argmax", a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False) -> GPUArray:
    """Index of the smallest element ignoring NaN; ValueError for an all-NaN slice."""
    return _nan_arg("argmin", a, axis, out, keepdims)


def _nan_count_and_sum(a: GPUArray, mask: GPUArray, axis, dtype):
    count = reductions.sum(logical_not(mask), axis, True)
    total = sum(where(mask, 0, a), axis, dtype, keepdims=True)
    return count, total


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False) -> GPUArray:
    """Mean of the non-NaN elements (NaN for an all-NaN slice)."""
    a = _args.array(a)
    mask = _nan_mask(a)
    if mask is None:
        return mean(a, axis, dtype, out, keepdims)
    count, total = _nan_count_and_sum(a, mask, axis, dtype)
    result = (total / count).astype(total.dtype, copy=False)
    return _finish(_drop(result, axis, keepdims), None, out)


def _drop(a: GPUArray, axis, keepdims: bool) -> GPUArray:
    """A keepdims=True reduction result as `keepdims` asks."""
    if keepdims:
        return a
    return a.reshape(()) if axis is None else a.squeeze(axis)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Variance of the non-NaN elements, divided by (their count - ddof); NaN where that is not
    positive."""
    a = _args.array(a)
    ddof = _ddof(ddof, correction)
    mask = _nan_mask(a)
    if mask is None:
        return var(a, axis, dtype, out, ddof, keepdims)
    result_dtype = _dtypes.normalize(dtype) if dtype is not None else a.dtype
    if result_dtype == _dtypes.bfloat16:
        a, dtype = a.astype(_F32), _F32
    count, total = _nan_count_and_sum(a, mask, axis, dtype)
    centre = (total / count).astype(total.dtype, copy=False)
    deviation = where(mask, 0, a - centre)
    squares = reductions.sum(deviation * deviation, axis, True)
    dof = count - ddof
    result = where(dof > 0, squares / dof, math.nan).astype(result_dtype, copy=False)
    return _finish(_drop(result, axis, keepdims), None, out)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    result = sqrt(nanvar(a, axis, dtype, None, ddof, keepdims, correction=correction))
    return result if out is None else _write(result, out, "unsafe")


# --- weighted statistics --------------------------------------------------------------------
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted mean along `axis` (the plain mean without weights); with `returned`, also the
    sum of the weights (broadcast to the mean's shape)."""
    a = _args.array(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        scale = full(avg.shape, a.size / avg.size if avg.size else 0, avg.dtype, device=a.device)
        return (avg, scale) if returned else avg
    a, w = _args.arrays(a, weights)
    if a.shape != w.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        ax = _args.axis_index(axes[0], a.ndim) if len(axes) == 1 else None
        if ax is None or w.shape[0] != a.shape[ax]:
            raise ValueError("Shape of weights must be consistent with shape of a along axis.")
        w = w.reshape((1,) * ax + (w.shape[0],) + (1,) * (a.ndim - ax - 1))
    dtype = _dtypes.result_type(a.dtype, w.dtype)
    if not _dtypes.is_floating(dtype):
        dtype = np.dtype("float64")
    w = w.astype(dtype, copy=False)
    scale = sum(w, axis, keepdims=keepdims)
    if reductions.any(equal(scale, 0)).item():
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = (sum(a.astype(dtype, copy=False) * w, axis, keepdims=keepdims) / scale).astype(dtype)
    if not returned:
        return avg
    return avg, broadcast_to(scale, avg.shape).copy()


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """Covariance matrix of the variables in the rows of `m` (columns when not `rowvar`), and of
    `y`'s, through one matrix product. float64 unless `dtype` is given, as NumPy."""
    m = _args.array(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    rows = [m] if y is None else _args.arrays(m, y)
    if rows[-1].ndim > 2:
        raise ValueError("y has more than 2 dimensions")
    rows = [atleast_2d(r) for r in rows]
    rows = [r.T if not rowvar and r.shape[0] != 1 else r for r in rows]
    X = concatenate(rows, 0) if len(rows) > 1 else rows[0]
    dtype = _dtypes.result_type(X.dtype, np.dtype("float64")) if dtype is None else dtype
    dtype = _dtypes.normalize(dtype)
    X = X.astype(_F32 if dtype in (_dtypes.bfloat16, np.dtype("float16")) else dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n, w, aw = X.shape[1], None, None
    if fweights is not None:
        fw = _args.arrays(X, fweights)[1]
        if fw.dtype.kind not in "iu":
            raise TypeError("fweights must be integer")
        _check_weights(fw, n, "fweights")
        w = fw.astype(X.dtype)
    if aweights is not None:
        aw = _args.arrays(X, aweights)[1]
        _check_weights(aw, n, "aweights")
        aw = aw.astype(X.dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg, fact = mean(X, axis=1, keepdims=True), n - ddof
    else:
        v1 = reductions.sum(w).item()
        avg = sum(X * w, axis=1, keepdims=True) / v1
        if ddof == 0:
            fact = v1
        elif aw is None:
            fact = v1 - ddof
        else:
            fact = v1 - ddof * reductions.sum(w * aw).item() / v1
    centred = X - avg
    weighted = centred if w is None else centred * w
    c = (centred @ weighted.T) * (1.0 / fact if fact > 0 else math.inf)
    return c.astype(dtype, copy=False).squeeze()


def _check_weights(w: GPUArray, n: int, name: str) -> None:
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if reductions.any(less(w, 0)).item():
        raise ValueError(f"{name} cannot be negative")


def corrcoef(x, y=None, rowvar=True, *, dtype=None) -> GPUArray:
    """Pearson correlation coefficients (cov normalised by the standard deviations, clipped
    to [-1, 1])."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = sqrt(diagonal(c))
    c = c / expand_dims(d, 1)
    c = c / expand_dims(d, 0)
    return clip(c, -1, 1)


__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "average",
    "corrcoef",
    "count_nonzero",
    "cov",
    "cumprod",
    "cumsum",
    "cumulative_sum",
    "diff",
    "max",
    "mean",
    "min",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
    "prod",
    "ptp",
    "std",
    "sum",
    "var",
]
