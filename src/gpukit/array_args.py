"""Arguments of the NumPy-style functions: array-likes become GPUArrays on the device of the
GPUArrays passed beside them."""

from __future__ import annotations

import operator

import numpy as np

from .array import GPUArray, asarray, operands


def arrays(*xs) -> list[GPUArray]:
    """GPUArrays as they are; NumPy data, lists and scalars copied to the GPUArrays' device."""
    ops, rt = operands(*xs)
    return [x if isinstance(x, GPUArray) else asarray(x, rt=rt) for x in ops]


def array(x) -> GPUArray:
    return arrays(x)[0]


def axis_index(axis, ndim: int, name: str = "axis") -> int:
    """`axis` as a non-negative int below `ndim` (numpy's AxisError otherwise)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim, None if name == "axis" else name)
    return axis % ndim
