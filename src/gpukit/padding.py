"""NumPy's pad: constant, edge, reflect, symmetric, wrap and empty modes.

Every mode but constant only copies elements, so each axis is one gather whose source indices
are NumPy's own padding of 0..n-1 (computed on the host: they depend only on the shape)."""

from __future__ import annotations

import numpy as np

from . import array_args as _args
from .array import GPUArray
from .creation import empty
from .indexing import take

_GATHER_MODES = ("edge", "reflect", "symmetric", "wrap")


def _pairs(value, ndim: int, name: str) -> np.ndarray:
    """NumPy's ((before, after),) * ndim broadcasting of pad_width / constant_values."""
    arr = np.asarray(value.to_numpy() if isinstance(value, GPUArray) else value)
    try:
        return np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"{name} of shape {arr.shape} does not broadcast to ({ndim}, 2) for a {ndim}-d array"
        ) from None


def pad(array, pad_width, mode: str = "constant", **kwargs) -> GPUArray:
    """`array` padded by pad_width[i] = (before, after) elements along each axis."""
    a = _args.array(array)
    widths = _pairs(pad_width, a.ndim, "pad_width")
    if widths.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    widths = widths.astype(np.int64)
    allowed = {"constant": {"constant_values"}, "empty": set(), "reflect": {"reflect_type"}}
    allowed["symmetric"] = allowed["reflect"]
    if mode not in (*_GATHER_MODES, "constant", "empty"):
        raise ValueError(
            f"mode {mode!r} is not supported by gpukit's pad; it has constant, edge, reflect, "
            "symmetric, wrap and empty"
        )
    unknown = set(kwargs) - allowed.get(mode, set())
    if unknown:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(unknown)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError("gpukit's pad supports reflect_type='even' only")
    if mode in _GATHER_MODES:
        for axis in range(a.ndim):
            before, after = (int(w) for w in widths[axis])
            if before or after:
                if a.shape[axis] == 0:
                    raise ValueError(
                        f"can't extend empty axis {axis} using modes other than "
                        "'constant' or 'empty'"
                    )
                source = np.pad(np.arange(a.shape[axis]), (before, after), mode=mode)
                a = take(a, source, axis=axis)
        return a
    shape = tuple(int(n + w.sum()) for n, w in zip(a.shape, widths, strict=True))
    out = empty(shape, a.dtype, device=a.device)
    out[tuple(slice(int(w[0]), int(w[0]) + n) for n, w in zip(a.shape, widths, strict=True))] = a
    if mode == "empty":
        return out
    values = _pairs(kwargs.get("constant_values", 0), a.ndim, "constant_values")
    for axis in range(a.ndim):
        head = (slice(None),) * axis
        before, after = (int(w) for w in widths[axis])
        if before:
            out[(*head, slice(0, before))] = values[axis][0].item()
        if after:
            out[(*head, slice(shape[axis] - after, None))] = values[axis][1].item()
    return out


__all__ = ["pad"]
