"""Products with NumPy's names, built on matmul and elementwise ops: tensordot, vecdot, inner,
outer, kron, cross, trace."""

from __future__ import annotations

import math
import operator

import numpy as np

from . import array_args as _args
from .array import GPUArray
from .base import dtypes as _dtypes
from .linalg import matmul
from .linalg_vectors import vecdot
from .manipulation import _write, moveaxis
from .matrices import diagonal
from .statistics import sum as _sum
from .views import expand_dims, stack


def tensordot(a, b, axes=2) -> GPUArray:
    """Sum of products over `axes` (the last N of a with the first N of b, or two lists of axes),
    as one matrix product."""
    a, b = _args.arrays(a, b)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(
                f"tensordot: axes={n} does not fit arrays of {a.ndim} and {b.ndim} dims"
            )
        axes_a, axes_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    axes_a = [_args.axis_index(x, a.ndim) for x in axes_a]
    axes_b = [_args.axis_index(x, b.ndim) for x in axes_b]
    if any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b, strict=True)):
        raise ValueError(
            f"shape-mismatch for sum: axes {axes_a} of {a.shape} and {axes_b} of {b.shape}"
        )
    keep_a = [i for i in range(a.ndim) if i not in axes_a]
    keep_b = [j for j in range(b.ndim) if j not in axes_b]
    k = math.prod(a.shape[i] for i in axes_a)
    rows = a.transpose(keep_a + axes_a).reshape(math.prod(a.shape[i] for i in keep_a), k)
    cols = b.transpose(axes_b + keep_b).reshape(k, math.prod(b.shape[j] for j in keep_b))
    shape = tuple(a.shape[i] for i in keep_a) + tuple(b.shape[j] for j in keep_b)
    return matmul(rows, cols).reshape(shape)


def inner(a, b) -> GPUArray:
    """Sum of products over the last axes of a and b (a product when either is 0-d)."""
    a, b = _args.arrays(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b, out=None) -> GPUArray:
    """Every element of the flattened a times every element of the flattened b."""
    a, b = _args.arrays(a, b)
    result = a.reshape(-1, 1) * b.reshape(1, -1)
    return result if out is None else _write(result, out)


def kron(a, b) -> GPUArray:
    """Kronecker product: blocks of b scaled by each element of a."""
    a, b = _args.arrays(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    nd = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + a.shape)
    b = b.reshape((1,) * (nd - b.ndim) + b.shape)
    spread = expand_dims(a, tuple(range(1, 2 * nd, 2))) * expand_dims(b, tuple(range(0, 2 * nd, 2)))
    return spread.reshape(tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None) -> GPUArray:
    """Cross products of the 3-vectors along the given axes (2-vectors are refused, as NumPy
    does since 2.5 and the Array API does)."""
    a, b = _args.arrays(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
            f"{a.shape[-1]} and {b.shape[-1]} dimensional instead."
        )
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    parts = _args.arrays(ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx)
    dtype = _dtypes.result_type(*(p.dtype for p in parts))
    c = stack([p.astype(dtype, copy=False) for p in parts], axis=-1)
    return moveaxis(c, -1, axisc)


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """Sum along diagonal `offset` of the planes given by axis1 and axis2."""
    result = _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
    return result if out is None else _write(result, out, "unsafe")


__all__ = ["cross", "inner", "kron", "outer", "tensordot", "trace", "vecdot"]
