"""Finding and gathering with NumPy's names: argwhere, take_along_axis, put_along_axis, and
where with one argument."""

from __future__ import annotations

import math

from . import array_args as _args
from .array import GPUArray
from .creation import arange
from .elementwise import less, remainder
from .elementwise import where as _where
from .indexing import nonzero
from .runtime.ops import ELEMENTWISE
from .views import stack


def argwhere(a) -> GPUArray:
    """Indices of the nonzero elements, one row per element (shape (N, a.ndim))."""
    a = _args.array(a)
    if a.ndim == 0:
        return argwhere(a.reshape(1))[:, :0]
    return stack(nonzero(a), axis=1)


def _along(arr: GPUArray, indices: GPUArray, axis, name: str) -> tuple[GPUArray, tuple]:
    """(the array, the advanced-indexing key) that selects `indices` along `axis` and keeps
    every other position (NumPy's fancy index of take_along_axis)."""
    if indices.dtype.kind not in "iu":
        raise IndexError(f"`indices` must be an integer array, not {indices.dtype.name}")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = arr.reshape(-1), 0
    elif indices.ndim != arr.ndim:
        raise ValueError(f"`indices` and `arr` must have the same number of dimensions ({name})")
    axis = _args.axis_index(axis, arr.ndim)
    key = []
    for i, n in enumerate(arr.shape):
        if i == axis:
            key.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[i] = n
            key.append(arange(n, dtype="int64", device=arr.device).reshape(shape))
    return arr, tuple(key)


def take_along_axis(arr, indices, axis=-1) -> GPUArray:
    """arr's elements at `indices` along `axis` (indices broadcast against the other axes);
    the inverse of argsort-style index arrays."""
    arr, indices = _args.arrays(arr, indices)
    arr, key = _along(arr, indices, axis, "take_along_axis")
    return arr[key]


def put_along_axis(arr, indices, values, axis) -> None:
    """Writes `values` into `arr` at `indices` along `axis` (take_along_axis's inverse)."""
    if not isinstance(arr, GPUArray):
        raise TypeError(f"put_along_axis needs a GPUArray to write into, not {type(arr).__name__}")
    _, indices = _args.arrays(arr, indices)
    if axis is None and not arr.is_contiguous:  # a flat view does not exist: unravel instead
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        flat = _where(less(indices, 0), indices + arr.size, indices)
        if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= arr.size):
            raise IndexError(f"index out of bounds for an array of size {arr.size}")
        coords = []
        for k, n in enumerate(arr.shape):
            coords.append(remainder(flat // math.prod(arr.shape[k + 1 :]), n))
        arr[tuple(coords)] = values
        return
    target, key = _along(arr, indices, axis, "put_along_axis")
    target[key] = values


def where(condition, x=None, y=None, /, out=None) -> GPUArray | tuple[GPUArray, ...]:
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _where(condition, x, y, out=out)


where.__doc__ = ELEMENTWISE["where"].doc  # the op's one description, the 1-argument form included


__all__ = ["argwhere", "put_along_axis", "take_along_axis", "where"]
