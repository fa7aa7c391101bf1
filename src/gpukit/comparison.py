"""Comparing whole arrays with NumPy's names: isclose, allclose, array_equal, array_equiv."""

from __future__ import annotations

import math

import numpy as np

from . import array_args as _args
from . import reductions
from .array import GPUArray
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .elementwise import (
    absolute,
    equal,
    less,
    less_equal,
    logical_and,
    logical_or,
    not_equal,
    where,
)


def _nan(a: GPUArray) -> GPUArray:
    return not_equal(a, a)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False) -> GPUArray:
    """Whether |a - b| <= atol + rtol * |b| elementwise (NumPy's rule: b is the reference;
    equal infinities are close; NaNs only with `equal_nan`)."""
    a, b = _args.arrays(a, b)
    if not _dtypes.is_floating(b.dtype):
        b = b.astype(_dtypes.result_type(b.dtype, np.dtype("float64")))
    reference = b
    finite_b = less(absolute(b), math.inf)
    b = where(finite_b, b, 0)  # only finite references can be close: no inf - inf
    tolerance = absolute(b) * rtol + atol
    close = logical_and(less_equal(absolute(a - b), tolerance), finite_b)
    result = logical_or(close, equal(a, reference))
    if equal_nan:
        result = logical_or(result, logical_and(_nan(a), _nan(reference)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of a is close to b's (see isclose)."""
    return bool(reductions.all(isclose(a, b, rtol, atol, equal_nan)).item())


def array_equal(a1, a2, equal_nan: bool = False) -> bool:
    """Whether the two arrays have one shape and equal elements."""
    a1, a2 = _args.arrays(a1, a2)
    if a1.shape != a2.shape:
        return False
    same = equal(a1, a2)
    if equal_nan and (_dtypes.is_floating(a1.dtype) or _dtypes.is_floating(a2.dtype)):
        same = logical_or(same, logical_and(_nan(a1), _nan(a2)))
    return bool(reductions.all(same).item())


def array_equiv(a1, a2) -> bool:
    """Whether the two arrays broadcast together and are equal elementwise."""
    a1, a2 = _args.arrays(a1, a2)
    try:
        _shapes.broadcast(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(reductions.all(equal(a1, a2)).item())


__all__ = ["allclose", "array_equal", "array_equiv", "isclose"]
