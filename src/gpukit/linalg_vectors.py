"""The Array API linalg extension's vector and matrix helpers, on the last axes as the standard
has them (NumPy's top-level cross, outer, trace and diagonal take other axes; gpukit has those
too): cross, outer, trace, diagonal, vecdot."""

from __future__ import annotations

import operator

import numpy as np

from . import array_args as _args
from . import statistics as _stats
from .array import GPUArray
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .elementwise import conjugate
from .manipulation import moveaxis
from .matrices import diagonal as _diagonal
from .views import broadcast_to, stack


def cross(x1, x2, /, *, axis: int = -1) -> GPUArray:
    """Cross products of the 3-vectors along `axis` (the other axes broadcast)."""
    a, b = _args.arrays(x1, x2)
    axis = operator.index(axis)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("linalg.cross needs arrays of at least one dimension")
    shape = _shapes.broadcast(a.shape, b.shape)
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    a, b = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
    if a.shape[-1] != 3:
        raise ValueError(f"linalg.cross: axis {axis} must have size 3, not {a.shape[-1]}")
    dtype = _dtypes.result_type(a.dtype, b.dtype)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    parts = [ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx]
    return moveaxis(stack([p.astype(dtype, copy=False) for p in parts], axis=-1), -1, axis)


def outer(x1, x2, /) -> GPUArray:
    """The outer product of two 1-D arrays."""
    a, b = _args.arrays(x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"linalg.outer needs 1-D arrays, got shapes {a.shape} and {b.shape}")
    return a.reshape(-1, 1) * b.reshape(1, -1)


def diagonal(x, /, *, offset: int = 0) -> GPUArray:
    """Diagonal `offset` of each matrix (the last two axes)."""
    return _diagonal(x, offset, -2, -1)


def trace(x, /, *, offset: int = 0, dtype=None) -> GPUArray:
    """Sum of diagonal `offset` of each matrix (the last two axes)."""
    return _stats.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def vecdot(x1, x2, /, *, axis: int = -1) -> GPUArray:
    """Sum over `axis` of conj(x1) * x2, the other axes broadcast; the contracted axis is not
    (its lengths must match, as the Array API and NumPy's gufunc ask). float16 and bfloat16
    accumulate in float32, as the matrix product does."""
    a, b = _args.arrays(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("vecdot needs arrays of at least one dimension")
    a, b = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"vecdot: x1 has {a.shape[-1]} elements along axis {axis}, x2 {b.shape[-1]}"
        )
    dtype = _dtypes.result_type(a.dtype, b.dtype)
    if dtype in (_dtypes.bfloat16, np.dtype("float16")):
        a, b = a.astype(np.float32), b.astype(np.float32)
    if a.dtype.kind == "c":
        a = conjugate(a)
    return _stats.sum(a * b, axis=-1).astype(dtype, copy=False)


__all__ = ["cross", "diagonal", "outer", "trace", "vecdot"]
