"""NumPy's round (around): to `decimals` places, halves to even, computed as NumPy computes it
(scale by a power of ten, rint, scale back, each a separate rounding), so that both backends give
NumPy's bits."""

from __future__ import annotations

import operator

import numpy as np

from .array import GPUArray, asarray, empty, operands
from .complex_parts import imag, real
from .elementwise import elementwise


def _power_of_ten(n: int) -> float:
    """10.0**n as NumPy forms it (exact table to 1e8, then multiplications by 10)."""
    if n < 9:
        return 10.0**n
    value = 1e9
    for _ in range(n - 9):
        value *= 10.0
    return value


def round(a, decimals=0, out: GPUArray | None = None) -> GPUArray:
    """`a` rounded to `decimals` decimal places (negative: to tens, hundreds, ...), halves to
    even; complex numbers part by part; integers with decimals >= 0 unchanged."""
    (a,), rt = operands(a)
    a = a if isinstance(a, GPUArray) else asarray(a, rt=rt)
    decimals = operator.index(decimals)
    if a.dtype.kind == "c":
        target = a.copy() if out is None else out
        real(target)[...] = round(real(a), decimals)
        imag(target)[...] = round(imag(a), decimals)
        return target
    integer = a.dtype.kind in "iu"
    if decimals >= 0:
        if integer:
            if out is None:
                return a.copy()
            out[...] = a
            return out
        if decimals == 0:
            return elementwise("rint", a, out=out)
        scale, unscale = "multiply", "true_divide"
    else:
        scale, unscale = "true_divide", "multiply"
        decimals = -decimals
    work = out
    if work is None:  # integers are scaled in float64 and cast back, as NumPy does
        work = empty(a.shape, np.dtype(np.float64) if integer else a.dtype, a._rt)
    factor = _power_of_ten(decimals)
    elementwise(scale, a, factor, out=work)
    elementwise("rint", work, out=work)
    elementwise(unscale, work, factor, out=work)
    if integer and out is None:
        return work.astype(a.dtype)
    return work


around = round
GPUArray.round = lambda self, decimals=0, out=None: round(self, decimals, out)

__all__ = ["around", "round"]
