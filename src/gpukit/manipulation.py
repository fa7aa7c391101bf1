"""Rearranging arrays with NumPy's (and the Array API's) names: transposes, flips, rolls,
repeats, tiles, joins and splits. Views where NumPy gives views; otherwise one copy."""

from __future__ import annotations

import builtins
import operator

import numpy as np

from . import array_args as _args
from . import views
from .array import GPUArray
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .elementwise import where as _where
from .indexing import take


def _axes(axis, ndim: int) -> tuple[int, ...]:
    """Axes in the order given, non-negative, checked for range and repeats."""
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(_args.axis_index(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return out


def permute_dims(x, /, axes) -> GPUArray:
    """A view of `x` with its dimensions in the order `axes` (a permutation of all of them)."""
    x = _args.array(x)
    axes = tuple(operator.index(a) for a in axes)
    if len(axes) != x.ndim:
        raise ValueError(f"axes {axes} do not match an array of {x.ndim} dimensions")
    return x.transpose(_axes(axes, x.ndim))


def matrix_transpose(x, /) -> GPUArray:
    """The last two dimensions swapped (a view)."""
    x = _args.array(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got {x.ndim}")
    return x.swapaxes(-1, -2)


def moveaxis(a, source, destination) -> GPUArray:
    """A view with axes `source` moved to positions `destination`, the others in order."""
    a = _args.array(a)
    src, dst = _axes(source, a.ndim), _axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return a.transpose(order)


def reshape(a, /, shape, *, copy: bool | None = None) -> GPUArray:
    """`a` with a new shape: a view when `a` is contiguous; copy=True always copies, copy=False
    raises ValueError where a copy is needed."""
    a = _args.array(a)
    if copy is False and not a.is_contiguous:
        raise ValueError("reshape(copy=False): this array cannot be reshaped without a copy")
    out = a.reshape(shape)
    return out.copy() if copy and out._buf is a._buf else out


def ravel(a) -> GPUArray:
    """The elements in C order as a 1-D array (a view when `a` is contiguous)."""
    return _args.array(a).reshape(-1)


def flip(m, axis=None) -> GPUArray:
    """A view with the order of elements reversed along `axis` (all axes when None)."""
    m = _args.array(m)
    axes = range(m.ndim) if axis is None else _axes(axis, m.ndim)
    key = [slice(None)] * m.ndim
    for i in axes:
        key[i] = slice(None, None, -1)
    return m[tuple(key)]


def fliplr(m) -> GPUArray:
    """A view with the columns (axis 1) reversed."""
    m = _args.array(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m) -> GPUArray:
    """A view with the rows (axis 0) reversed."""
    m = _args.array(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1]


def rot90(m, k: int = 1, axes=(0, 1)) -> GPUArray:
    """`m` rotated by 90 degrees `k` times in the plane of `axes`, from the first towards the
    second (a view)."""
    m = _args.array(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = _axes(axes, m.ndim)
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (a0, a1))
    order = list(range(m.ndim))
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return flip(m, a1).transpose(order)
    return flip(m.transpose(order), a1)


def roll(a, shift, axis=None) -> GPUArray:
    """Elements shifted along `axis` (the flattened array when None), wrapping around."""
    a = _args.array(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    shifts = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    if shifts[0].ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = [0] * a.ndim
    for s, ax in zip(shifts[0].reshape(-1), shifts[1].reshape(-1), strict=True):
        total[_args.axis_index(ax, a.ndim)] += int(s)
    out = a
    for ax, s in enumerate(total):
        n = a.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        head = (slice(None),) * ax
        out = views.concatenate(
            [out[(*head, slice(n - s, None))], out[(*head, slice(0, n - s))]], ax
        )
    return out.copy() if out is a else out


def repeat(a, repeats, axis=None) -> GPUArray:
    """Each element repeated `repeats` times (an int, or one count per element) along `axis`
    (the flattened array when None)."""
    a = _args.array(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _args.axis_index(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(repeats, GPUArray):
        repeats = repeats.to_numpy()
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iub":
        raise TypeError(f"repeats must be integers, not {counts.dtype.name}")
    if counts.ndim > 1 or (counts.ndim == 1 and counts.size not in (1, n)):
        raise ValueError(f"repeats of shape {counts.shape} do not match axis {axis} of length {n}")
    if (counts < 0).any():
        raise ValueError("repeats may not contain negative values")
    if counts.ndim == 0 or counts.size == 1:
        r = int(counts.reshape(-1)[0])
        shape = (*a.shape[: axis + 1], r, *a.shape[axis + 1 :])
        wide = views.broadcast_to(views.expand_dims(a, axis + 1), shape)
        return wide.reshape((*a.shape[:axis], n * r, *a.shape[axis + 1 :]))
    return take(a, np.repeat(np.arange(n), counts), axis=axis)


def tile(A, reps) -> GPUArray:
    """`A` repeated `reps` times along each dimension (NumPy's tile: the shorter of A.ndim and
    len(reps) is padded with ones in front)."""
    A = _args.array(A)
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"negative dimensions are not allowed: reps={reps}")
    ndim = builtins.max(A.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    A = A.reshape((1,) * (ndim - A.ndim) + A.shape)
    # (r0, n0, r1, n1, ...) from a view with a size-1 axis in front of each dimension
    spread = views.expand_dims(A, tuple(range(0, 2 * ndim, 2)))
    shape = tuple(v for r, n in zip(reps, A.shape, strict=True) for v in (r, n))
    out = views.broadcast_to(spread, shape).reshape(
        tuple(r * n for r, n in zip(reps, A.shape, strict=True))
    )
    return out.copy() if out._buf is A._buf else out


def broadcast_arrays(*arrays) -> list[GPUArray]:
    """Views of the arrays broadcast to their common shape, as a list (the Array API's type;
    NumPy 2 gives a tuple)."""
    arrays = _args.arrays(*arrays)
    shape = _shapes.broadcast(*(a.shape for a in arrays))
    return [views.broadcast_to(a, shape) for a in arrays]


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind") -> GPUArray:
    """Arrays joined along an existing axis (flattened first when axis is None)."""
    arrays = _args.arrays(*arrays) if len(arrays) else []
    if axis is None:
        arrays, axis = [a.reshape(-1) for a in arrays], 0
    if dtype is not None:
        arrays = [_cast(a, dtype, casting) for a in arrays]
    result = views.concatenate(arrays, axis)
    return result if out is None else _write(result, out, casting)


concat = concatenate


def _cast(a: GPUArray, dtype, casting: str) -> GPUArray:
    dtype = _dtypes.normalize(dtype)
    if not _castable(a.dtype, dtype, casting):
        raise TypeError(f"cannot cast {a.dtype.name} to {dtype.name} with casting={casting!r}")
    return a.astype(dtype, copy=False)


def _castable(src: np.dtype, dst: np.dtype, casting: str) -> bool:
    from .data_types import can_cast

    if casting == "unsafe":
        return True
    if casting == "same_kind":
        return _dtypes.can_cast_same_kind(src, dst)
    if casting == "safe":
        return can_cast(src, dst)
    if casting in ("no", "equiv"):
        return src == dst
    raise ValueError(
        f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe', not {casting!r}"
    )


def _write(result: GPUArray, out, casting: str = "same_kind") -> GPUArray:
    """`result` stored into `out` (same shape; cast as `casting` allows)."""
    if not isinstance(out, GPUArray):
        raise TypeError(f"out must be a GPUArray, not {type(out).__name__}")
    if out.shape != result.shape:
        raise ValueError(f"out has shape {out.shape}, the result has shape {result.shape}")
    if not _castable(result.dtype, out.dtype, casting):
        raise TypeError(
            f"cannot cast the {result.dtype.name} result to out's {out.dtype.name} "
            f"with casting={casting!r}"
        )
    out[...] = result
    return out


def unstack(x, /, *, axis: int = 0) -> tuple[GPUArray, ...]:
    """Views of `x`, one per index along `axis`."""
    x = _args.array(x)
    axis = _args.axis_index(axis, x.ndim)
    head = (slice(None),) * axis
    return tuple(x[(*head, i)] for i in range(x.shape[axis]))


def atleast_1d(*arys):
    return _atleast(arys, lambda a: a.reshape(1) if a.ndim == 0 else a)


def atleast_2d(*arys):
    return _atleast(arys, lambda a: a.reshape((1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)


def atleast_3d(*arys):
    def three(a):
        if a.ndim == 0:
            return a.reshape(1, 1, 1)
        if a.ndim == 1:
            return a.reshape(1, a.shape[0], 1)
        return a.reshape(*a.shape, 1) if a.ndim == 2 else a

    return _atleast(arys, three)


def _atleast(arys, fix):
    out = tuple(fix(_args.array(a)) for a in arys)
    return out[0] if len(out) == 1 else out


def vstack(tup, *, dtype=None, casting="same_kind") -> GPUArray:
    """Arrays stacked as rows (1-D arrays become rows)."""
    return concatenate(_as_tuple(atleast_2d(*tup)), 0, dtype=dtype, casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind") -> GPUArray:
    """Arrays joined along their second axis (the first for 1-D arrays)."""
    arrs = _as_tuple(atleast_1d(*tup))
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def dstack(tup) -> GPUArray:
    """Arrays stacked along a third axis."""
    return concatenate(_as_tuple(atleast_3d(*tup)), 2)


def column_stack(tup) -> GPUArray:
    """1-D arrays as columns, 2-D arrays as they are, joined side by side."""
    arrs = [_args.array(a) for a in tup]
    return concatenate([a.reshape(-1, 1) if a.ndim < 2 else a for a in arrs], 1)


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def array_split(ary, indices_or_sections, axis: int = 0) -> list[GPUArray]:
    """Views of `ary` cut along `axis` into N parts (the first n % N one longer), or at the given
    indices."""
    ary = _args.array(ary)
    axis = _args.axis_index(axis, ary.ndim)
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        n = ary.shape[axis]
        size, extra = divmod(n, sections)
        bounds = np.cumsum([0] + extra * [size + 1] + (sections - extra) * [size]).tolist()
        return views.split(ary, bounds[1:-1], axis)
    return views.split(ary, [operator.index(i) for i in indices_or_sections], axis)


def split(ary, indices_or_sections, axis: int = 0) -> list[GPUArray]:
    """Views of `ary` cut along `axis` into N equal parts, or at the given indices."""
    ary = _args.array(ary)
    if not isinstance(indices_or_sections, (int, np.integer)):
        indices_or_sections = [operator.index(i) for i in indices_or_sections]
    return views.split(ary, indices_or_sections, axis)


def append(arr, values, axis=None) -> GPUArray:
    """`values` joined to the end of `arr` (both flattened when axis is None)."""
    arr, values = _args.arrays(arr, values)
    if axis is None:
        return concatenate([arr.reshape(-1), values.reshape(-1)], 0)
    return concatenate([arr, values], axis)


def delete(arr, obj, axis=None) -> GPUArray:
    """`arr` without the entries `obj` (an index, a slice, indices or a boolean mask) along `axis`
    (the flattened array when None)."""
    arr = _args.array(arr)
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    axis = _args.axis_index(axis, arr.ndim)
    n = arr.shape[axis]
    keep = np.ones(n, bool)
    if isinstance(obj, GPUArray):
        obj = obj.to_numpy()
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        obj = np.asarray(obj)
        if obj.dtype == np.bool_:
            if obj.shape != (n,):
                raise ValueError(
                    "boolean array argument obj to delete must be one dimensional and match "
                    f"the axis length of {n}"
                )
            keep = ~obj
        else:
            if obj.dtype.kind not in "iu" and obj.size:
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            bad = obj[(obj < -n) | (obj >= n)]
            if bad.size:
                raise IndexError(
                    f"index {bad.reshape(-1)[0]} is out of bounds for axis {axis} with size {n}"
                )
            keep[obj.astype(np.int64)] = False
    return take(arr, np.flatnonzero(keep), axis=axis)


def copyto(dst, src, casting: str = "same_kind", where=True) -> None:
    """Copies `src` (broadcast) into `dst` where `where` is true, casting as `casting` allows."""
    if not isinstance(dst, GPUArray):
        raise TypeError(f"copyto's dst must be a GPUArray, not {type(dst).__name__}")
    if isinstance(src, (bool, int, float)):
        if type(src) is int and dst.dtype.kind in "iu":
            info = np.iinfo(dst.dtype)
            if not info.min <= src <= info.max:
                raise OverflowError(f"Python integer {src} out of bounds for {dst.dtype.name}")
        from .data_types import result_type

        src_dtype = result_type(dst.dtype, src)
    else:
        src = _args.arrays(src)[0] if not isinstance(src, GPUArray) else src
        src_dtype = src.dtype
        _shapes.broadcast(src.shape, dst.shape)
    if not _castable(src_dtype, dst.dtype, casting):
        raise TypeError(
            f"cannot cast {src_dtype.name} to {dst.dtype.name} with casting={casting!r}"
        )
    if where is True:
        dst[...] = src
        return
    mask = where if isinstance(where, GPUArray) else _args.arrays(where)[0]
    if mask.dtype != np.bool_:
        raise TypeError(f"copyto's where must be boolean, not {mask.dtype.name}")
    if isinstance(src, GPUArray) and src.dtype != dst.dtype:
        src = src.astype(dst.dtype)
    dst[...] = _where(mask, src, dst)


__all__ = [
    "append",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "column_stack",
    "concat",
    "concatenate",
    "copyto",
    "delete",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "hstack",
    "matrix_transpose",
    "moveaxis",
    "permute_dims",
    "ravel",
    "repeat",
    "reshape",
    "roll",
    "rot90",
    "split",
    "tile",
    "unstack",
    "vstack",
]
