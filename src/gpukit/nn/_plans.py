"""Running gpukit.nn's ops through their backend's plans (cached by kind of call)."""

from __future__ import annotations

import numpy as np

from ..array import GPUArray, cached_plan, layout, wrap
from ..base import shapes
from ..runtime.backend import Layout
from ..runtime.quota import local as _quota


def contiguous(dtype, shape) -> Layout:
    return Layout(np.dtype(dtype), tuple(shape), shapes.contiguous_strides(shape, dtype.itemsize))


def describe(*arrays) -> tuple:
    """A plan key's part for these arrays (None for an absent one)."""
    out = []
    for a in arrays:
        out.append(None if a is None else (a.dtype, a.shape, a.strides))
    return tuple(out)


def run(key: tuple, make, rt, *args):
    """The plan cached under `key` (made by make(), which gets Layouts through `layout`) called
    with `args`: GPUArrays (as buffer and offset) and scalars."""
    plan = cached_plan(key, make)
    flat = []
    for a in args:
        if isinstance(a, GPUArray):
            flat += (a._buf, a._offset)
        else:
            flat.append(a)
    return plan(rt.thread.stream, _quota.quota, *flat)


def result(buf, out: Layout, rt) -> GPUArray:
    return wrap(buf, out.shape, out.dtype, out.strides, rt)


__all__ = ["contiguous", "describe", "layout", "result", "run"]
