"""Coordinate grids and spaced values with NumPy's names: meshgrid, indices, logspace,
geomspace."""

from __future__ import annotations

import math
import operator

import numpy as np

from . import array_args as _args
from .array import GPUArray
from .base import dtypes as _dtypes
from .creation import arange, linspace
from .device_arg import on_device
from .elementwise import power
from .views import broadcast_to, expand_dims, stack


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from 1-D coordinate vectors ('xy': Cartesian, the first two axes
    swapped; 'ij': matrix indexing), as a list (the Array API's type; NumPy 2 gives a tuple)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [x if x.ndim == 1 else x.reshape(-1) for x in _args.arrays(*xi)] if xi else []
    ndim = len(xs)
    grids = [expand_dims(x, tuple(j for j in range(ndim) if j != i)) for i, x in enumerate(xs)]
    if indexing == "xy" and ndim > 1:
        for i, g in enumerate(grids):
            grids[i] = g.swapaxes(0, 1)
    if not sparse and grids:
        full = tuple(np.broadcast_shapes(*(g.shape for g in grids)))
        grids = [broadcast_to(g, full) for g in grids]
    if copy:
        grids = [g.copy() for g in grids]
    return grids


@on_device
def indices(dimensions, dtype=int, sparse: bool = False):
    """The index of every position of a grid of shape `dimensions`: one array of shape
    (len(dimensions), *dimensions), or with `sparse` a tuple of broadcastable arrays."""
    dimensions = tuple(operator.index(d) for d in dimensions)
    dtype = _dtypes.normalize(dtype)
    n = len(dimensions)
    parts = []
    for i, d in enumerate(dimensions):
        shape = [1] * n
        shape[i] = d
        parts.append(arange(d, dtype=dtype).reshape(shape))
    if sparse:
        return tuple(parts)
    if not parts:
        return arange(0, dtype=dtype)
    return stack([broadcast_to(p, dimensions) for p in parts], 0)


def _scalar(value, name: str) -> float:
    value = np.asarray(value.to_numpy() if isinstance(value, GPUArray) else value)
    if value.ndim:
        raise TypeError(f"{name}: gpukit takes scalar start and stop, not arrays")
    return value.item()


@on_device
def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis=0):
    """`num` values base**t for t evenly spaced from start to stop."""
    start, stop = _scalar(start, "logspace"), _scalar(stop, "logspace")
    if operator.index(axis) not in (0, -1):
        raise np.exceptions.AxisError(axis, 1)
    exponents = linspace(start, stop, num, endpoint)
    out = power(float(_scalar(base, "logspace")), exponents)
    return out if dtype is None else out.astype(dtype)


@on_device
def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis=0):
    """`num` values evenly spaced on a log scale from start to stop (endpoints exact; both
    negative gives negative values)."""
    start, stop = _scalar(start, "geomspace"), _scalar(stop, "geomspace")
    if operator.index(axis) not in (0, -1):
        raise np.exceptions.AxisError(axis, 1)
    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    if isinstance(start, complex) or isinstance(stop, complex):
        raise TypeError("geomspace: gpukit has no complex dtypes yet")
    sign = 1.0
    if start < 0 and stop < 0:
        start, stop, sign = -start, -stop, -1.0
    elif start < 0 or stop < 0:
        raise ValueError("geomspace: start and stop of different signs need complex numbers")
    exponents = linspace(math.log10(start), math.log10(stop), num, endpoint)
    out = power(10.0, exponents) * sign
    if num > 0:
        out[0] = sign * start
        if endpoint and num > 1:
            out[-1] = sign * stop
    return out if dtype is None else out.astype(dtype)


__all__ = ["geomspace", "indices", "logspace", "meshgrid"]
