"""Triangles, diagonals and other structured matrices with NumPy's names: tri, tril, triu,
diag, diagflat, diagonal, vander, identity."""

from __future__ import annotations

import operator

import numpy as np

from . import array_args as _args
from .array import GPUArray
from .base import dtypes as _dtypes
from .creation import arange, eye, zeros
from .device_arg import on_device
from .elementwise import less_equal, power, where
from .manipulation import moveaxis


def _at_or_below(n: int, m: int, k: int, device) -> GPUArray:
    """Boolean (n, m) mask: True where column <= row + k."""
    rows = arange(n, dtype="int64", device=device).reshape(n, 1)
    cols = arange(m, dtype="int64", device=device).reshape(1, m)
    return less_equal(cols, rows + operator.index(k))


@on_device
def tri(N: int, M: int | None = None, k: int = 0, dtype=None) -> GPUArray:
    """Ones at and below diagonal `k`, zeros elsewhere (float64 unless `dtype` is given)."""
    M = N if M is None else M
    return _at_or_below(N, M, k, None).astype("float64" if dtype is None else dtype)


def tril(m, /, k: int = 0) -> GPUArray:
    """`m` with the elements above diagonal `k` zeroed (of the last two dimensions)."""
    m = _args.array(m)
    if m.ndim < 2:
        raise ValueError(f"tril needs at least 2 dimensions, got {m.ndim}")
    mask = _at_or_below(*m.shape[-2:], k, m.device)
    return where(mask, m, zeros((), m.dtype, device=m.device))


def triu(m, /, k: int = 0) -> GPUArray:
    """`m` with the elements below diagonal `k` zeroed (of the last two dimensions)."""
    m = _args.array(m)
    if m.ndim < 2:
        raise ValueError(f"triu needs at least 2 dimensions, got {m.ndim}")
    mask = _at_or_below(*m.shape[-2:], operator.index(k) - 1, m.device)
    return where(mask, zeros((), m.dtype, device=m.device), m)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> GPUArray:
    """Diagonal `offset` of the 2-D planes given by axis1 and axis2, as the last dimension
    (a view of a contiguous array, as NumPy's read-only view)."""
    a = _args.array(a)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = _args.axis_index(axis1, a.ndim, "axis1"), _args.axis_index(axis2, a.ndim, "axis2")
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    planes = moveaxis(a, (ax1, ax2), (-2, -1))
    n, m = planes.shape[-2:]
    offset = operator.index(offset)
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    start = offset if offset >= 0 else -offset * m
    flat = planes.reshape(*planes.shape[:-2], n * m)
    return flat[..., start : start + length * (m + 1) : m + 1] if length else flat[..., :0]


def diag(v, k: int = 0) -> GPUArray:
    """The k-th diagonal of a 2-D array, or a 2-D array with a 1-D `v` on its k-th diagonal."""
    v = _args.array(v)
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0] + abs(k)
    padded = zeros((n,), v.dtype, device=v.device)
    padded[: v.shape[0]] = v
    along = padded.reshape(n, 1) if k >= 0 else padded.reshape(1, n)
    mask = eye(n, n, k, dtype="bool", device=v.device)
    return where(mask, along, zeros((), v.dtype, device=v.device))


def diagflat(v, k: int = 0) -> GPUArray:
    """A 2-D array with the flattened `v` on its k-th diagonal."""
    return diag(_args.array(v).reshape(-1), k)


@on_device
def identity(n: int, dtype=None) -> GPUArray:
    """The n x n identity matrix (float64 unless `dtype` is given)."""
    return eye(n, dtype=dtype)


def vander(x, N: int | None = None, increasing: bool = False) -> GPUArray:
    """Columns of powers of the 1-D `x` (decreasing unless `increasing`), N columns."""
    x = _args.array(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    N = x.shape[0] if N is None else operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    dtype = _dtypes.result_type(x.dtype, np.dtype("int64"))
    powers = arange(N, dtype="int64", device=x.device)
    if not increasing:
        powers = powers[::-1]
    base = x.astype(dtype, copy=False).reshape(-1, 1)
    out = power(base, powers.astype(dtype) if _dtypes.is_floating(dtype) else powers)
    return out if out.dtype == dtype else out.astype(dtype)


__all__ = ["diag", "diagflat", "diagonal", "identity", "tri", "tril", "triu", "vander"]
