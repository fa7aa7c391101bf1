"""Sorting and what builds on it, with NumPy's names and semantics: sort, argsort, searchsorted,
the unique family (NumPy's and the Array API's), median, percentile, quantile and their nan-
forms, partition, histogram, bincount, digitize, lexsort, isin and the set functions.

Order is NumPy's: NaN after everything, -0.0 equal to +0.0. Every sort is stable (`kind` is
accepted and ignored); `descending=True` (Array API) keeps equal elements in input order.
The backend plans the sorts, searches, distinct values and counts (`plan_sort`,
`plan_searchsorted`, `unique`, `plan_histogram`, `plan_bincount`); the rest is composed here."""

from __future__ import annotations

import builtins
import math
import operator
from collections import namedtuple

import numpy as np

from .array import GPUArray, asarray, cached_plan, empty, fill, layout, operands, wrap
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .base.dtypes import bfloat16, is_floating
from .elementwise import elementwise
from .indexing import getitem
from .runtime.quota import local as _quota
from .views import ascontiguousarray, concatenate

_INT64 = np.dtype("int64")
_F64 = np.dtype("float64")

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _array(a) -> GPUArray:
    (a,), rt = operands(a)
    a = a if isinstance(a, GPUArray) else asarray(a, rt=rt)
    if a.dtype.kind == "c":  # the radix keys are real; NumPy orders complex by parts
        raise TypeError(f"gpukit.sorting does not take complex arrays ({a.dtype.name})")
    return a


def _last_axis_first(ndim: int, axis: int) -> tuple[int, ...]:
    return (*(i for i in range(ndim) if i != axis), axis)


def _inverse(perm) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _check_order(order) -> None:
    if order is not None:
        raise TypeError(
            "sorting by field names (order=) needs structured arrays, which gpukit has not"
        )


def _sorted(a, axis, descending: bool, keys: bool, index: bool):
    """(sorted keys, indices) along `axis` (None: the flattened array), either None if unwanted."""
    a = _array(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    (axis,) = _shapes.normalize_axes(axis, a.ndim)
    perm = _last_axis_first(a.ndim, axis)
    src = ascontiguousarray(a.transpose(perm) if axis != a.ndim - 1 else a)
    vals, idx = _sort_rows(src, bool(descending), keys, index)
    if axis != a.ndim - 1:
        back = _inverse(perm)
        vals = None if vals is None else ascontiguousarray(vals.transpose(back))
        idx = None if idx is None else ascontiguousarray(idx.transpose(back))
    return vals, idx


def _sort_rows(src: GPUArray, descending: bool, keys: bool, index: bool):
    """(keys, indices) of contiguous src sorted along its last axis (None where unwanted)."""
    rt = src._rt
    if src.size == 0:
        return (
            empty(src.shape, src.dtype, rt) if keys else None,
            empty(src.shape, _INT64, rt) if index else None,
        )
    key = ("sort", rt, src.dtype, src.shape, descending, keys, index)
    plan = cached_plan(key, lambda: rt.plan_sort(layout(src), keys, index, descending))
    made = plan(rt.thread.stream, _quota.quota, src._buf, src._offset)
    made = made if isinstance(made, tuple) else (made,)
    out_keys = out_index = None
    if keys:
        strides = _shapes.contiguous_strides(src.shape, src.dtype.itemsize)
        out_keys = wrap(made[0], src.shape, src.dtype, strides, rt)
    if index:
        out_index = wrap(made[-1], src.shape, _INT64, _shapes.contiguous_strides(src.shape, 8), rt)
    return out_keys, out_index


def sort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None) -> GPUArray:
    """A sorted copy of `a` along `axis` (None: flattened). Always stable."""
    _check_order(order)
    return _sorted(a, axis, descending, True, False)[0]


def argsort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None) -> GPUArray:
    """int64 indices that sort `a` along `axis` (None: flattened); ties keep input order."""
    _check_order(order)
    return _sorted(a, axis, descending, False, True)[1]


def _sort_in_place(a: GPUArray, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    _check_order(order)
    a[...] = _sorted(a, axis, descending, True, False)[0]


# ---------------------------------------------------------------------------------------------
# Searching


def _common(a: GPUArray, v):
    """a and v (array-like or scalar) converted to their common dtype, contiguous."""
    if isinstance(v, GPUArray):
        dtype = _dtypes.result_type(a.dtype, v.dtype)
    else:
        host = np.asarray(v)
        if host.dtype.kind not in "biuf" and host.dtype != bfloat16:
            raise TypeError(f"cannot search for values of dtype {host.dtype}")
        dtype = _dtypes.result_type(a.dtype, host.dtype)
        v = asarray(host.astype(dtype) if host.dtype != dtype else host, rt=a._rt)
    a, v = (x.astype(dtype, copy=False) for x in (a, v))
    # Not ascontiguousarray: that makes a 0-d v 1-D, as NumPy's does, and v's shape is the result's.
    return (a if a.is_contiguous else a.copy()), (v if v.is_contiguous else v.copy())


def searchsorted(a, v, side="left", sorter=None) -> GPUArray:
    """Indices where `v` would go into the sorted 1-D `a` (or `a[sorter]`) to keep it sorted:
    before equal elements (side "left") or after them ("right"). int64, v's shape."""
    a = _array(a)
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, not {a.ndim}-D")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', not {side!r}")
    if sorter is not None:
        sorter = _array(sorter)
        if sorter.dtype.kind not in "iu" or sorter.ndim != 1:
            raise TypeError("sorter must be a 1-D array of integers")
        if sorter.size != a.size:
            raise ValueError("sorter.size must equal a.size")
        sorter = ascontiguousarray(sorter.astype(_INT64, copy=False))
    a, v = _common(a, v)
    rt = a._rt
    if v.size == 0:
        return empty(v.shape, _INT64, rt)
    flat = v.reshape(-1)
    key = ("searchsorted", rt, a.dtype, a.size, flat.size, side, sorter is not None)
    plan = cached_plan(
        key,
        lambda: rt.plan_searchsorted(
            layout(a), layout(flat), side == "right", None if sorter is None else layout(sorter)
        ),
    )
    args = [a._buf, a._offset, flat._buf, flat._offset]
    if sorter is not None:
        args += [sorter._buf, sorter._offset]
    made = plan(rt.thread.stream, _quota.quota, *args)
    if sorter is not None:
        made, flag_buf = made
        flag = np.zeros(1, np.int32)
        rt.download(flag, flag_buf, 0)
        if flag[0]:
            raise ValueError("Sorter index out of range.")
    return wrap(made, v.shape, _INT64, _shapes.contiguous_strides(v.shape, 8), rt)


def digitize(x, bins, right=False) -> GPUArray:
    """Index of the bin each value of x falls in (NumPy's digitize: bins increasing or
    decreasing; `right` closes bins on the right)."""
    bins = _array(bins)
    if bins.ndim != 1:
        raise ValueError("bins must be a 1-D array")
    host = bins.to_numpy()
    if host.dtype == bfloat16:
        host = host.astype(np.float32)
    ascending = bool(np.all(host[1:] >= host[:-1]))
    if not ascending and not np.all(host[1:] <= host[:-1]):
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if ascending:
        return searchsorted(bins, x, side)
    return bins.size - searchsorted(bins[::-1], x, side)


# ---------------------------------------------------------------------------------------------
# Distinct values


def _unique(x, index: bool, inverse: bool, counts: bool, equal_nan: bool):
    x = _array(x)
    flat = ascontiguousarray(x.reshape(-1))
    rt = flat._rt
    values, idx, inv, cnt, total = rt.unique(
        layout(flat), flat._buf, flat._offset, index, inverse, counts, bool(equal_nan),
        rt.thread.stream, _quota.quota,
    )  # fmt: skip
    values = wrap(values, (total,), x.dtype, (x.dtype.itemsize,), rt)
    idx = None if idx is None else wrap(idx, (total,), _INT64, (8,), rt)
    cnt = None if cnt is None else wrap(cnt, (total,), _INT64, (8,), rt)
    if inv is not None:
        inv = wrap(inv, x.shape, _INT64, _shapes.contiguous_strides(x.shape, 8), rt)
    return values, idx, inv, cnt


def unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    sorted=True,
) -> GPUArray | tuple:
    """NumPy's unique over the flattened array: the sorted distinct values, and on request the
    index of each one's first occurrence, the inverse (ar's shape) and the counts."""
    if axis is not None:
        raise NotImplementedError("unique: axis= (distinct slices) is not implemented; axis=None")
    values, idx, inv, cnt = _unique(ar, return_index, return_inverse, return_counts, equal_nan)
    wanted = ((idx, return_index), (inv, return_inverse), (cnt, return_counts))
    extra = [r for r, want in wanted if want]
    return (values, *extra) if extra else values


def unique_values(x) -> GPUArray:
    """Array API: the distinct values, sorted; every NaN is distinct."""
    return _unique(x, False, False, False, False)[0]


def unique_counts(x) -> UniqueCountsResult:
    values, _, _, cnt = _unique(x, False, False, True, False)
    return UniqueCountsResult(values, cnt)


def unique_inverse(x) -> UniqueInverseResult:
    values, _, inv, _ = _unique(x, False, True, False, False)
    return UniqueInverseResult(values, inv)


def unique_all(x) -> UniqueAllResult:
    values, idx, inv, cnt = _unique(x, True, True, True, False)
    return UniqueAllResult(values, idx, inv, cnt)


# ---------------------------------------------------------------------------------------------
# Order statistics


def _rows_sorted(a: GPUArray, axis):
    """(rows, kept shape, reduced axes): a's reduced axes moved last and merged, sorted along
    them, as a 2-D contiguous array."""
    axes = _shapes.normalize_axes(axis, a.ndim)
    kept = [i for i in range(a.ndim) if i not in axes]
    moved = a.transpose((*kept, *axes)) if a.ndim else a.reshape(1)
    kept_shape = tuple(a.shape[i] for i in kept)
    n = math.prod(a.shape[i] for i in axes)
    rows = ascontiguousarray(moved).reshape(math.prod(kept_shape), n)
    return _sorted(rows, -1, False, True, False)[0], kept_shape, axes


def _finish(result: GPUArray, q_shape, kept_shape, axes, ndim, keepdims, out):
    """(q..., rows) results shaped as NumPy gives them, copied into `out` when given."""
    shape = tuple(q_shape) + tuple(kept_shape)
    if keepdims:
        full = [1] * ndim
        it = iter(kept_shape)
        for i in range(ndim):
            if i not in axes:
                full[i] = next(it)
        shape = tuple(q_shape) + tuple(full)
    result = result.reshape(shape)
    if out is not None:
        out[...] = result
        return out
    return result


def _lerp(lo: GPUArray, hi: GPUArray, t, rest, upper):
    """NumPy's _lerp: lo + (hi - lo) * t, or hi - (hi - lo) * rest where `upper` (t >= 0.5;
    rest = 1 - t), with hi - lo in the elements' dtype and NumPy's promotion after it: t and
    rest are Python floats (weak) or arrays (a 0-d one per q, or one per row)."""
    if lo.dtype == bfloat16:
        lo, hi = lo.astype("float32"), hi.astype("float32")
    diff = hi - lo
    if isinstance(upper, bool):
        return hi - diff * rest if upper else lo + diff * t
    return elementwise("where", upper, hi - diff * rest, lo + diff * t)


def _quantile_dtype(a_dtype, weak_q: bool, q_dtype):
    """NumPy's result dtype: with a Python-number q the array's float type (float64 for
    integers); with an array q the promotion of both. bfloat16 stays bfloat16 (float32 inside)."""
    if a_dtype == bfloat16:
        return bfloat16
    if weak_q:
        return _F64 if a_dtype.kind in "biu" else a_dtype
    return np.result_type(a_dtype, q_dtype)


def _check_method(method, weights=None):
    if method != "linear":
        raise NotImplementedError(f"quantile method {method!r}: only 'linear' is implemented")
    if weights is not None:
        raise NotImplementedError("quantile weights are not implemented")


def _quantile(a, q, axis, out, keepdims, nan_aware: bool, percent: bool):
    a = _array(a)
    weak_q = type(q) in (int, float)
    qh = q.to_numpy() if isinstance(q, GPUArray) else np.asarray(q)
    if qh.dtype.kind not in "biuf":
        raise TypeError(f"q must be real numbers, not {qh.dtype}")
    if percent:
        qh = np.true_divide(qh, 100)
    if not (np.all(qh >= 0) and np.all(qh <= 1)):
        raise ValueError(
            f"{'Percentiles' if percent else 'Quantiles'} must be in the range "
            f"[0, {100 if percent else 1}]"
        )
    if a.size == 0 or any(a.shape[i] == 0 for i in _shapes.normalize_axes(axis, a.ndim)):
        raise ValueError("quantile of an empty axis")
    dtype = _quantile_dtype(a.dtype, weak_q, qh.dtype)
    compute = np.dtype("float32") if dtype == bfloat16 else dtype
    s, kept_shape, axes = _rows_sorted(a, axis)
    n = s.shape[1]
    floating = is_floating(a.dtype)
    results = []
    if nan_aware and floating:
        count = n - elementwise("not_equal", s, s).sum(axis=1)  # non-NaN values, NaNs sort last
        rows = elementwise("maximum", count - 1, 0)
        row_ids = asarray(np.arange(s.shape[0]) * n, rt=a._rt)
        flat = s.reshape(-1)
        for qv in qh.reshape(-1).tolist():
            virtual = rows.astype(_F64) * qv
            lo = elementwise("floor", virtual)
            gamma = virtual - lo
            lo_i = lo.astype(_INT64)
            hi_i = elementwise("minimum", lo_i + 1, rows)
            lo_v, hi_v = getitem(flat, (row_ids + lo_i,)), getitem(flat, (row_ids + hi_i,))
            t, rest = gamma, 1.0 - gamma
            if weak_q:  # NumPy's 1-D quantile of each row took gamma as a Python float
                t, rest = t.astype(compute), rest.astype(compute)
            r = _lerp(lo_v, hi_v, t, rest, gamma >= 0.5)
            results.append(elementwise("where", count == 0, math.nan, r).astype(dtype))
    else:
        virtual = (n - 1) * np.asarray(qh)  # as NumPy computes it, in q's dtype
        for v in virtual.reshape(-1):
            lo = n - 1 if v >= n - 1 else int(np.floor(v))
            hi = min(lo + 1, n - 1)
            if virtual.dtype.kind in "iu":  # integer q: exact elements, in a's dtype
                r = s[:, lo]
                dtype = compute = a.dtype
            else:
                gamma = v - lo
                if weak_q:
                    t, rest = float(gamma), 1.0 - float(gamma)
                else:  # strongly typed, as NumPy's gamma array
                    t = asarray(np.asarray(gamma, virtual.dtype), rt=a._rt)
                    rest = asarray(np.asarray(1 - gamma, virtual.dtype), rt=a._rt)
                r = _lerp(s[:, lo], s[:, hi], t, rest, bool(gamma >= 0.5))
            if floating:  # a slice holding NaN sorts it last and gives NaN
                last = s[:, n - 1]
                r = elementwise("where", elementwise("not_equal", last, last), math.nan, r)
            results.append(r.astype(dtype, copy=False))
    result = results[0] if qh.ndim == 0 else concatenate([r.reshape(1, -1) for r in results])
    return _finish(result, qh.shape, kept_shape, axes, a.ndim, keepdims, out)


def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
) -> GPUArray:
    """The q-th quantiles (0 <= q <= 1) along `axis`, NumPy's 'linear' method; NaN where a
    slice holds NaN."""
    _check_method(method, weights)
    return _quantile(a, q, axis, out, keepdims, False, False)


def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
) -> GPUArray:
    _check_method(method, weights)
    return _quantile(a, q, axis, out, keepdims, False, True)


def nanquantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
) -> GPUArray:
    """quantile ignoring NaNs (NaN for a slice of NaNs only)."""
    _check_method(method, weights)
    return _quantile(a, q, axis, out, keepdims, True, False)


def nanpercentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
) -> GPUArray:
    _check_method(method, weights)
    return _quantile(a, q, axis, out, keepdims, True, True)


def _median(a, axis, out, keepdims, nan_aware: bool):
    a = _array(a)
    if a.size == 0:
        raise ValueError("median of an empty array")
    s, kept_shape, axes = _rows_sorted(a, axis)
    n = s.shape[1]
    floating = is_floating(a.dtype)
    dtype = a.dtype if floating else _F64
    acc = np.dtype("float32") if dtype in (np.float16, bfloat16) else dtype  # NumPy's mean
    if nan_aware and floating:
        count = n - elementwise("not_equal", s, s).sum(axis=1)
        row_ids = asarray(np.arange(s.shape[0]) * n, rt=a._rt)
        flat = s.reshape(-1)
        half = elementwise("maximum", count - 1, 0) // 2
        lo = getitem(flat, (row_ids + half,)).astype(acc)
        hi = getitem(flat, (row_ids + half + (1 - count % 2),)).astype(acc)
        r = elementwise("where", count == 0, math.nan, (lo + hi) / 2)
    else:
        half = (n - 1) // 2
        lo, hi = s[:, half].astype(acc), s[:, n // 2].astype(acc)
        r = lo if n % 2 else (lo + hi) / 2
        if floating:
            last = s[:, n - 1]
            r = elementwise("where", elementwise("not_equal", last, last), math.nan, r)
    return _finish(r.astype(dtype, copy=False), (), kept_shape, axes, a.ndim, keepdims, out)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> GPUArray:
    """The median along `axis` (the mean of the two middle values for an even count); NaN where
    a slice holds NaN. Integer input gives float64."""
    return _median(a, axis, out, keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> GPUArray:
    """median ignoring NaNs (NaN for a slice of NaNs only)."""
    return _median(a, axis, out, keepdims, True)


def _check_kth(kth, n):
    ks = np.atleast_1d(np.asarray(kth))
    if ks.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    for k in ks.tolist():
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None) -> GPUArray:
    """A copy of `a` with the element at each kth position where sorting puts it, smaller ones
    before and larger ones after (here: the whole axis sorted, which is such an arrangement)."""
    a = _array(a)
    _check_order(order)
    _check_kth(kth, a.size if axis is None else a.shape[axis])
    return sort(a, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> GPUArray:
    """Indices that partition `a` as `partition` does (a stable argsort here)."""
    a = _array(a)
    _check_order(order)
    _check_kth(kth, a.size if axis is None else a.shape[axis])
    return argsort(a, axis)


def lexsort(keys, axis=-1) -> GPUArray:
    """Indices that sort by the last key, ties broken by the one before it, and so on."""
    if isinstance(keys, GPUArray):
        keys = [keys[i] for i in range(keys.shape[0])]
    keys = [_array(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = keys[0].shape
    if any(k.shape != shape for k in keys):
        raise ValueError("all keys need to be the same shape")
    (axis,) = _shapes.normalize_axes(axis, len(shape))
    perm = _last_axis_first(len(shape), axis)
    rows = [ascontiguousarray(k.transpose(perm)).reshape(-1, shape[axis]) for k in keys]
    n = shape[axis]
    offsets = asarray((np.arange(rows[0].shape[0]) * n)[:, None], rt=keys[0]._rt)
    order = argsort(rows[0], -1)
    for k in rows[1:]:
        ordered = getitem(k.reshape(-1), ((order + offsets).reshape(-1),)).reshape(order.shape)
        step = argsort(ordered, -1)
        order = getitem(order.reshape(-1), ((step + offsets).reshape(-1),)).reshape(order.shape)
    return ascontiguousarray(order.reshape(tuple(shape[i] for i in perm)).transpose(_inverse(perm)))


# ---------------------------------------------------------------------------------------------
# Counting


def bincount(x, weights=None, minlength=0) -> GPUArray:
    """Occurrences of each value of the 1-D non-negative integer x (int64), or the sum of the
    weights of each (float64, summed in a fixed order: the same bits on every run)."""
    x = _array(x)
    if x.ndim != 1:
        raise ValueError("bincount: x must be 1-D")
    if x.dtype.kind not in "biu" or x.dtype == np.uint64:
        raise TypeError(
            f"Cannot cast array data from dtype('{x.dtype}') to dtype('int64') "
            "according to the rule 'safe'"
        )
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    x = ascontiguousarray(x.astype(_INT64, copy=False))
    nbins = minlength
    if x.size:
        lo, hi = int(x.min()), int(x.max())
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
        nbins = builtins.max(hi + 1, minlength)
    if weights is None:
        return _bincount(x, nbins, None)
    w = _array(weights)
    if w.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    return _bincount(x, nbins, ascontiguousarray(w.astype(_F64, copy=False)))


def _bincount(x: GPUArray, nbins: int, weights: GPUArray | None) -> GPUArray:
    """Counts (int64) or weight sums (float64) per bin of contiguous int64 x in [0, nbins)."""
    rt = x._rt
    key = ("bincount", rt, x.size, nbins, weights is not None)
    weights_layout = None if weights is None else layout(weights)
    plan = cached_plan(key, lambda: rt.plan_bincount(layout(x), nbins, weights_layout))
    args = [x._buf, x._offset] + ([] if weights is None else [weights._buf, weights._offset])
    made = plan(rt.thread.stream, _quota.quota, *args)
    return wrap(made, (nbins,), _INT64 if weights is None else _F64, (8,), rt)


def _histogram_plan(x: GPUArray, edges: GPUArray, counts: bool, bins: bool):
    rt = x._rt
    key = ("histogram", rt, x.dtype, x.size, edges.size, counts, bins)
    plan = cached_plan(key, lambda: rt.plan_histogram(layout(x), layout(edges), counts, bins))
    return plan(rt.thread.stream, _quota.quota, x._buf, x._offset, edges._buf, edges._offset)


def _outer_edges(a: GPUArray, range_):
    if range_ is not None:
        first, last = range_
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = a.min().to_numpy()[()], a.max().to_numpy()[()]
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def histogram(a, bins=10, range=None, density=None, weights=None) -> tuple:
    """(counts, edges) of the flattened `a` in `bins` (a count of equal bins over `range` or the
    data's span, or increasing edges); the last bin includes its right edge. NumPy's edges."""
    a = _array(a)
    if a.dtype == bfloat16:
        a = a.astype("float32")
    a = a.reshape(-1)
    if isinstance(bins, str):
        raise NotImplementedError(f"histogram bins={bins!r}: pass a count or edges")
    if np.ndim(bins) == 0 and not isinstance(bins, GPUArray):
        count = operator.index(bins)
        if count < 1:
            raise ValueError("`bins` must be positive, when an integer")
        first, last = _outer_edges(a, range)
        host_a = np.empty(0, a.dtype)
        bin_type = np.result_type(first, last, host_a)
        if np.issubdtype(bin_type, np.integer) or bin_type == np.bool_:
            bin_type = np.result_type(bin_type, float)
        edges_h = np.linspace(first, last, count + 1, endpoint=True, dtype=bin_type)
        keep_type = bin_type
    else:
        edges_h = bins.to_numpy() if isinstance(bins, GPUArray) else np.asarray(bins)
        if edges_h.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        if np.any(edges_h[:-1] > edges_h[1:]):
            raise ValueError("`bins` must increase monotonically, when an array")
        keep_type = np.result_type(a.dtype, edges_h.dtype)  # range= is unused with edges
    nbins = edges_h.size - 1
    rt = a._rt
    x = ascontiguousarray(a.astype(keep_type, copy=False))
    edges = asarray(edges_h.astype(keep_type), rt=rt)
    if weights is None:
        counts = wrap(_histogram_plan(x, edges, True, False), (nbins,), _INT64, (8,), rt)
    else:
        w = _array(weights).reshape(-1)
        if w.size != a.size:
            raise ValueError("weights should have the same shape as a.")
        where = wrap(_histogram_plan(x, edges, False, True), (x.size,), _INT64, (8,), rt)
        sums = _bincount(where, nbins + 1, ascontiguousarray(w.astype(_F64, copy=False)))
        counts = sums[:nbins].astype(w.dtype)
    edges_out = asarray(edges_h, rt=rt)
    if density:
        widths = asarray(np.diff(edges_h).astype(float), rt=rt)
        counts = counts / widths / counts.sum()
    return counts, edges_out


# ---------------------------------------------------------------------------------------------
# Membership and sets


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None) -> GPUArray:
    """Whether each element of `element` equals some element of `test_elements` (NaN never
    does; -0.0 equals +0.0), element's shape."""
    e, t = _array(element), _array(test_elements)
    dtype = _dtypes.result_type(e.dtype, t.dtype)
    e, t = e.astype(dtype, copy=False), t.reshape(-1).astype(dtype, copy=False)
    if t.size == 0 or e.size == 0:
        found = _filled_like(e, False)
    else:
        st = sort(t)
        pos = elementwise("minimum", searchsorted(st, e.reshape(-1)), t.size - 1)
        found = elementwise("equal", getitem(st, (pos,)), e.reshape(-1)).reshape(e.shape)
    return elementwise("logical_not", found) if invert else found


def _filled_like(a: GPUArray, value: bool) -> GPUArray:
    out = empty(a.shape, np.dtype(bool), a._rt)
    if out.size:
        fill(out, value)
    return out


def in1d(ar1, ar2, assume_unique=False, invert=False) -> GPUArray:
    """NumPy 1.x's in1d: isin over the flattened ar1 (removed from NumPy 2.4, kept here)."""
    return isin(_array(ar1).reshape(-1), ar2, assume_unique, invert)


def union1d(ar1, ar2) -> GPUArray:
    return unique(concatenate([_array(ar1).reshape(-1), _array(ar2).reshape(-1)]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False) -> GPUArray:
    """Sorted values present in both (NaN in neither: it equals nothing)."""
    if return_indices:
        raise NotImplementedError("intersect1d(return_indices=True) is not implemented")
    a = _array(ar1).reshape(-1) if assume_unique else unique(ar1)
    b = _array(ar2).reshape(-1) if assume_unique else unique(ar2)
    aux = sort(concatenate([a, b]))
    if aux.size < 2:
        return aux[:0]
    same = elementwise("equal", aux[1:], aux[:-1])
    return aux[:-1][same]


def setdiff1d(ar1, ar2, assume_unique=False) -> GPUArray:
    """Sorted distinct values of ar1 that are not in ar2."""
    a = _array(ar1).reshape(-1) if assume_unique else unique(ar1)
    return a[isin(a, ar2, assume_unique=True, invert=True)]


GPUArray.sort = _sort_in_place
GPUArray.argsort = lambda self, axis=-1, kind=None, order=None, *, descending=False, stable=None: (
    argsort(self, axis, kind, order, descending=descending)
)
GPUArray.searchsorted = lambda self, v, side="left", sorter=None: searchsorted(
    self, v, side, sorter
)
