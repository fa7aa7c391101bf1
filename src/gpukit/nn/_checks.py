"""Argument checks shared by the gpukit.nn functions."""

from __future__ import annotations

import numpy as np

from ..array import GPUArray, asarray, operands
from ..base.dtypes import bfloat16, is_floating


def float_array(x, func: str, what: str = "x", rt=None) -> GPUArray:
    """`x` as a GPUArray (NumPy data is copied to the device) of a float dtype, else TypeError."""
    if type(x) is GPUArray and (x.dtype.kind == "f" or x.dtype == bfloat16):
        return x
    if not isinstance(x, GPUArray):
        (x,), found = operands(x)
        x = x if isinstance(x, GPUArray) else asarray(x, rt=rt or found)
    if not is_floating(x.dtype):
        raise TypeError(f"{func}: {what} must be a float array, got {x.dtype.name}")
    return x


def same_device(func: str, *arrays) -> None:
    devices = {id(a._rt): a.device for a in arrays}
    if len(devices) > 1:
        raise ValueError(f"{func}: arrays are on different devices: {sorted(devices.values())}")


def vector_like(p, x: GPUArray, func: str, what: str) -> GPUArray | None:
    """A per-feature parameter (weight, bias) of x's last dimension: contiguous, in x's dtype."""
    if p is None:
        return None
    if (
        type(p) is GPUArray
        and p._rt is x._rt
        and p.dtype == x.dtype
        and p.shape == x.shape[-1:]
        and p.strides == (p.dtype.itemsize,)
    ):
        return p  # the common case, already as the kernels want it
    p = float_array(p, func, what, rt=x._rt)
    same_device(func, x, p)
    if p.shape != x.shape[-1:]:
        raise ValueError(
            f"{func}: {what} of shape {p.shape} does not match the last dimension of x of "
            f"shape {x.shape}"
        )
    if p.dtype != x.dtype:
        p = p.astype(x.dtype)
    return p if p.is_contiguous else p.copy()


def residual_like(r, x: GPUArray, func: str) -> GPUArray | None:
    """The residual stream added to x before a norm: x's shape and dtype, on x's device."""
    if r is None:
        return None
    r = float_array(r, func, "residual", rt=x._rt)
    same_device(func, x, r)
    if r.shape != x.shape:
        raise ValueError(f"{func}: residual of shape {r.shape} does not match x of shape {x.shape}")
    if r.dtype != x.dtype:
        raise TypeError(
            f"{func}: residual is {r.dtype.name} but x is {x.dtype.name}; they must match"
        )
    return r


def real(value, func: str, what: str) -> float:
    """A float from an int or float (NumPy's too); TypeError naming `what` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{func}: {what} must be a real number, not {value!r}")
    return float(value)
