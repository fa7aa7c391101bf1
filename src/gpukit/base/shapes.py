"""Shape arithmetic with NumPy's rules, and errors that name the shapes involved."""

from __future__ import annotations

import math
import operator

import numpy as np

MAX_DIMS = 64  # as NumPy
MAX_BYTES = 2**63 - 1  # byte offsets are int64 everywhere below


def as_shape(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(n) for n in shape)
    except TypeError as e:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from e
    if any(n < 0 for n in out):
        raise ValueError(f"negative dimensions are not allowed: {out}")
    if len(out) > MAX_DIMS:
        raise ValueError(f"an array has at most {MAX_DIMS} dimensions, not {len(out)}")
    return out


def nbytes(shape, itemsize: int) -> int:
    """Bytes of an array of `shape`; ValueError past what an int64 byte offset can address."""
    size = math.prod(shape) * itemsize
    if size > MAX_BYTES:
        raise ValueError(
            f"array is too big: shape {tuple(shape)} of {itemsize}-byte items is {size} bytes, "
            f"more than {MAX_BYTES}"
        )
    return size


def contiguous_strides(shape, itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_contiguous(shape, strides, itemsize: int) -> bool:
    step = itemsize
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def broadcast(*shapes) -> tuple[int, ...]:
    """NumPy's broadcasting of shapes (any number of dimensions; NumPy's own function stops at
    32)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, start=ndim - len(shape)):
            if n != 1:
                if out[i] not in (1, n):
                    listed = " and ".join(str(tuple(s)) for s in shapes)
                    raise ValueError(f"shapes {listed} cannot be broadcast together")
                out[i] = n
    return tuple(out)


def broadcast_strides(shape, strides, target) -> tuple[int, ...]:
    """Strides that read an array of `shape` as `target` (0 along broadcast dimensions)."""
    pad = len(target) - len(shape)
    out = [0] * pad
    for n, s, t in zip(shape, strides, target[pad:], strict=True):
        out.append(s if n == t else 0)
    return tuple(out)


def reshape_target(size: int, shape) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"reshape takes ints or a sequence of ints, not {shape!r}") from None
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"invalid shape {shape} for reshape")
    if unknown:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if n == -1 else n for n in shape)
    if math.prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """Sorted, non-negative axes for a reduction; None means all."""
    if axis is None:
        return tuple(range(ndim))
    try:
        axes = (operator.index(axis),) if _is_index(axis) else tuple(axis)
        axes = tuple(operator.index(a) for a in axes)
    except TypeError:
        raise TypeError(f"axis must be an int, a sequence of ints or None, not {axis!r}") from None
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in axis: {axis}")
    return tuple(sorted(out))


def _is_index(value) -> bool:
    return hasattr(type(value), "__index__")


def one_axis(axis, ndim: int, what: str) -> int:
    """A single axis (an int) in range: TypeError for a tuple, AxisError out of range."""
    if not _is_index(axis):
        raise TypeError(f"{what} takes one axis (an int), not {axis!r}")
    return normalize_axes(axis, ndim)[0]


def reduced_shape(shape, axes, keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def matmul_shape(a_shape, b_shape) -> tuple[int, ...]:
    """NumPy's matmul: 1-D operands are promoted, the added axis removed; batch dims broadcast."""
    if not a_shape or not b_shape:
        raise ValueError("matmul: operands must be at least 1-D, got a 0-d array")
    a2 = (1, *a_shape) if len(a_shape) == 1 else tuple(a_shape)
    b2 = (*b_shape, 1) if len(b_shape) == 1 else tuple(b_shape)
    if a2[-1] != b2[-2]:
        raise ValueError(
            f"matmul: shapes {tuple(a_shape)} and {tuple(b_shape)} are not aligned: "
            f"{a2[-1]} (last dim of the first) != {b2[-2]} (second-to-last dim of the second)"
        )
    try:
        batch = broadcast(a2[:-2], b2[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: batch dimensions of {tuple(a_shape)} and {tuple(b_shape)} do not broadcast"
        ) from None
    out = (*batch, a2[-2], b2[-1])
    if len(a_shape) == 1:
        out = out[:-2] + out[-1:]
    if len(b_shape) == 1:
        out = out[:-1]
    return out


def basic_index(shape, strides, key) -> tuple[tuple, tuple, int]:
    """(shape, strides, byte offset) of the view `a[key]` for NumPy's basic indexing: integers,
    slices (any step), Ellipsis and None."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        if sum(k is Ellipsis for k in key) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        used = sum(k is not None and k is not Ellipsis for k in key)
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + (slice(None),) * (len(shape) - used) + key[at + 1 :]
    if sum(k is not None for k in key) > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, but "
            f"{sum(k is not None for k in key)} were indexed"
        )
    out_shape, out_strides, offset, axis = [], [], 0, 0
    for k in key:
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
            continue
        n, stride = shape[axis], strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            out_shape.append(length)
            out_strides.append(stride * step if length > 1 else stride)  # no huge unused stride
            if length:  # an empty slice moves nothing (its start can be -1: a[::-1] of size 0)
                offset += start * stride
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError(
                    f"index {k!r}: basic indexing takes only integers, slices, '...' and None "
                    "(arrays and masks go through gpukit.indexing)"
                ) from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            offset += (i % n) * stride
        axis += 1
    out_shape += shape[axis:]
    out_strides += strides[axis:]
    return tuple(out_shape), tuple(out_strides), offset
