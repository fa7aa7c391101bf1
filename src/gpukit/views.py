"""Views and joins with NumPy's names: no data moves for views; joins copy once into the result."""

from __future__ import annotations

import itertools
import operator

from .array import GPUArray, empty, operands
from .base import dtypes as _dtypes
from .base import shapes as _shapes


def _array(a) -> GPUArray:
    (a,), _ = operands(a)
    if not isinstance(a, GPUArray):
        raise TypeError(f"expected an array, got {type(a).__name__}")
    return a


def transpose(a, axes=None) -> GPUArray:
    return _array(a).transpose(axes)


def swapaxes(a, axis1: int, axis2: int) -> GPUArray:
    return _array(a).swapaxes(axis1, axis2)


def squeeze(a, axis=None) -> GPUArray:
    return _array(a).squeeze(axis)


def expand_dims(a, axis) -> GPUArray:
    """Inserts size-1 dimensions at `axis` (an int or a tuple), as np.expand_dims."""
    a = _array(a)
    axes = (axis,) if hasattr(type(axis), "__index__") else axis
    try:
        ndim = a.ndim + len(axes)
    except TypeError:
        raise TypeError(f"axis must be an int or a tuple of ints, not {axis!r}") from None
    positions = _shapes.normalize_axes(axes, ndim)
    shape, strides, it = [], [], iter(zip(a.shape, a.strides, strict=True))
    for i in range(ndim):
        if i in positions:
            shape.append(1)
            strides.append(0)
        else:
            n, st = next(it)
            shape.append(n)
            strides.append(st)
    return a._view(tuple(shape), tuple(strides))


def broadcast_to(a, shape) -> GPUArray:
    """A read-only view of `a` with `shape` (stride 0 along broadcast dimensions), as NumPy's."""
    a = _array(a)
    shape = _shapes.as_shape(shape)
    try:
        fits = _shapes.broadcast(a.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"cannot broadcast an array of shape {a.shape} to shape {shape}")
    view = a._view(shape, _shapes.broadcast_strides(a.shape, a.strides, shape))
    view._readonly = True
    return view


def ascontiguousarray(a) -> GPUArray:
    """`a` if C-contiguous, else a contiguous copy; at least 1-D, as NumPy's."""
    a = _array(a)
    if a.ndim == 0:
        return a.reshape(1)
    return a if a.is_contiguous else a.copy()


def concatenate(arrays, axis: int | None = 0) -> GPUArray:
    """Joins arrays along an existing axis (dtype promoted as NumPy does); axis=None joins them
    flattened."""
    arrays = [_array(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays, axis = [a.reshape(-1) for a in arrays], 0
    rt = arrays[0]._rt
    if any(a._rt is not rt for a in arrays):
        raise ValueError("arrays are on different devices")
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _shapes.one_axis(axis, first.ndim, "concatenate")
    for a in arrays:
        if a.ndim != first.ndim or any(
            x != y for i, (x, y) in enumerate(zip(a.shape, first.shape, strict=True)) if i != axis
        ):
            raise ValueError(
                f"all the input array dimensions except for the concatenation axis must match "
                f"exactly: shapes {first.shape} and {a.shape} along axis {axis}"
            )
    dtype = _dtypes.normalize(_dtypes.result_type(*(a.dtype for a in arrays)))
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty(tuple(shape), dtype, rt)
    start = 0
    for a in arrays:
        index = (slice(None),) * axis + (slice(start, start + a.shape[axis]),)
        out[index] = a
        start += a.shape[axis]
    return out


def stack(arrays, axis: int = 0) -> GPUArray:
    """Joins arrays of one shape along a new axis."""
    arrays = [_array(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(
            f"all input arrays must have the same shape, got {[a.shape for a in arrays]}"
        )
    axis = _shapes.one_axis(axis, arrays[0].ndim + 1, "stack")
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def split(a, indices_or_sections, axis: int = 0) -> list[GPUArray]:
    """Views of `a` cut along `axis`: into N equal parts, or at the given indices."""
    a = _array(a)
    axis = _shapes.one_axis(axis, a.ndim, "split")
    n = a.shape[axis]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0, *(operator.index(i) for i in indices_or_sections), n]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(
                f"array split does not result in an equal division: {n} into {sections}"
            )
        bounds = [i * (n // sections) for i in range(sections + 1)]
    return [a[(slice(None),) * axis + (slice(lo, hi),)] for lo, hi in itertools.pairwise(bounds)]
