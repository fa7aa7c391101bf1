"""Norms (gpukit.linalg): the Array API's vector_norm and matrix_norm, and NumPy's norm, from
reductions (and the singular values for the 2-norm, -2 and the nuclear norm)."""

from __future__ import annotations

import math
import operator

import numpy as np

from . import array_args as _args
from . import reductions as _red
from .array import GPUArray
from .decompositions import compute_dtype, real_dtype, svdvals
from .elementwise import absolute, not_equal, power, sqrt
from .manipulation import moveaxis


def _magnitudes(name: str, x: GPUArray) -> GPUArray:
    """|x| in the real dtype of x's compute dtype (integers as float64)."""
    dtype = compute_dtype(name, x.dtype)
    return absolute(x.astype(dtype, copy=False)).astype(real_dtype(dtype), copy=False)


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(_args.axis_index(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"vector_norm: repeated axis in {axis}")
    return out


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> GPUArray:
    """The ord-norm of the vectors along `axis` (None: all elements as one vector; a tuple:
    those axes flattened): ord inf / -inf max / min |x|, 0 the count of non-zeros, p > 0
    (sum |x|^p)^(1/p), p < 0 the same formula (NumPy's)."""
    x = _args.array(x)
    axes = _axes(axis, x.ndim)
    a = _magnitudes("vector_norm", x)
    if ord == math.inf:
        return _red.max(a, axis=axes, keepdims=keepdims)
    if ord == -math.inf:
        return _red.min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        return _red.sum(not_equal(a, 0).astype(a.dtype), axis=axes, keepdims=keepdims)
    if ord == 1:
        return _red.sum(a, axis=axes, keepdims=keepdims)
    if ord == 2:
        return sqrt(_red.sum(a * a, axis=axes, keepdims=keepdims))
    if isinstance(ord, str) or not isinstance(ord, (int, float, np.number)):
        raise ValueError(f"vector_norm: invalid ord {ord!r}")
    p = float(ord)
    return power(_red.sum(power(a, p), axis=axes, keepdims=keepdims), 1.0 / p)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def _matrix_norm(x: GPUArray, ord, row: int, col: int, keepdims: bool) -> GPUArray:
    """ord-norm of the matrices in axes (row, col) of x."""
    if ord not in _MATRIX_ORDS:
        raise ValueError(f"matrix_norm: invalid ord {ord!r} for matrices")
    if row == col:
        raise ValueError("matrix_norm: the two axes must differ")
    planes = moveaxis(x, (row, col), (-2, -1))
    if ord == "fro":
        a = _magnitudes("matrix_norm", planes)
        out = sqrt(_red.sum(a * a, axis=(-2, -1)))
    elif ord in ("nuc", 2, -2):
        s = svdvals(planes)
        out = (
            _red.sum(s, axis=-1)
            if ord == "nuc"
            else (_red.max if ord == 2 else _red.min)(s, axis=-1)
        )
    else:
        a = _magnitudes("matrix_norm", planes)
        sums = _red.sum(a, axis=-2 if ord in (1, -1) else -1)  # column sums for 1, row for inf
        out = (_red.max if ord in (1, math.inf) else _red.min)(sums, axis=-1)
    if keepdims:
        for ax in sorted((row, col)):
            out = out.reshape(*out.shape[:ax], 1, *out.shape[ax:])
    return out


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> GPUArray:
    """The ord-norm ("fro", "nuc", 1, -1, 2, -2, inf, -inf) of each matrix (the last two
    axes)."""
    x = _args.array(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: needs at least two dimensions, got shape {x.shape}")
    return _matrix_norm(x, ord, x.ndim - 2, x.ndim - 1, keepdims)


def norm(x, ord=None, axis=None, keepdims: bool = False) -> GPUArray:
    """NumPy's norm: with axis None, the 2-norm of all elements when ord is None, else the
    vector (1-D) or matrix (2-D) norm; an int axis: vector norms; two axes: matrix norms."""
    x = _args.array(x)
    if axis is None:
        if ord is None:
            return vector_norm(x, keepdims=keepdims)
        if x.ndim == 1:
            return vector_norm(x, ord=ord, keepdims=keepdims)
        if x.ndim == 2:
            return _matrix_norm(x, ord, 0, 1, keepdims)
        raise ValueError("Improper number of dimensions to norm.")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order {ord!r} for vectors")
        return vector_norm(x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        row, col = (_args.axis_index(operator.index(a), x.ndim) for a in axes)
        return _matrix_norm(x, "fro" if ord is None else ord, row, col, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


__all__ = ["matrix_norm", "norm", "vector_norm"]
