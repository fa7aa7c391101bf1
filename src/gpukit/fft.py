"""Discrete Fourier transforms with NumPy's and the Array API's names (numpy.fft, the standard's
`fft` extension): fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft,
fftfreq rfftfreq fftshift ifftshift.

Dtypes as in NumPy 2: complex64 and complex128 keep their type; float32 (and float16, bfloat16)
transform in complex64, float64, integers and bools in complex128; the real results of irfft and
hfft are the matching real type (float16 stays float16, as NumPy gives it). `n` crops or zero-pads
the input along the axis; `norm` is "backward" (default: the inverse scaled by 1/n), "ortho"
(1/sqrt(n) both ways) or "forward" (the forward scaled by 1/n); `out=` takes the result as
NumPy's does.

The backend transforms one axis at a time (`plan_fft`: complex-to-complex, real-to-complex or
complex-to-real along the last axis of a strided array, into a contiguous result); the
multi-dimensional transforms apply it axis by axis, as NumPy does."""

from __future__ import annotations

import math
import operator

import numpy as np

from .array import (
    GPUArray,
    asarray,
    cached_plan,
    copy_into,
    empty,
    fill,
    layout,
    operands,
    wrap,
)
from .base import shapes as _shapes
from .base.dtypes import bfloat16
from .creation import asarray as _asarray_on
from .device_arg import on_device
from .elementwise import elementwise
from .manipulation import roll
from .runtime.quota import local as _quota
from .views import ascontiguousarray, concatenate

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
# Beyond this many dimensions the backend gets a contiguous copy (its kernels index at most
# three batch dimensions besides the transformed one).
_MAX_STRIDED_DIMS = 4


def _array(a) -> GPUArray:
    (a,), rt = operands(a)
    a = a if isinstance(a, GPUArray) else asarray(a, rt=rt)
    if a.ndim == 0:
        raise ValueError("an FFT needs an array of at least one dimension, not a 0-d one")
    return a


def _complex_type(dtype: np.dtype) -> np.dtype:
    """The complex type a transform of `dtype` computes in (NumPy 2's)."""
    if dtype.kind == "c":
        return dtype
    if dtype in (_F16, _F32, bfloat16):
        return _C64
    if dtype.kind in "biuf":
        return _C128
    raise TypeError(f"cannot take the FFT of an array of dtype {dtype}")


def _real_type(dtype: np.dtype) -> np.dtype:
    """The real type rfft / ihfft transform `dtype` in (complex input is refused, as NumPy does)."""
    if dtype.kind == "c":
        raise TypeError(f"rfft and ihfft take real input, not {dtype}")
    return _F64 if _complex_type(dtype) == _C128 else _F32


def _check_norm(norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f'norm must be "backward", "ortho", "forward" or None, not {norm!r}')
    return norm


def _swap_direction(norm) -> str:
    norm = _check_norm(norm)
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def _scale(norm, n: int, inverse: bool) -> float:
    norm = _check_norm(norm)
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == inverse:
        return 1.0 / n
    return 1.0


def _check_n(n, default: int) -> int:
    if n is None:
        n = default
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n must be an integer or None, not {n!r}") from None
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _axis(axis, ndim: int) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer, not {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _resize(a: GPUArray, axis: int, n: int) -> GPUArray:
    """a cropped or zero-padded to n elements along `axis`."""
    m = a.shape[axis]
    if m == n:
        return a
    if m > n:
        key = (slice(None),) * axis + (slice(0, n),)
        return a[key]
    shape = list(a.shape)
    shape[axis] = n - m
    zeros = empty(tuple(shape), a.dtype, a._rt)
    fill(zeros, 0)
    return concatenate([a, zeros], axis=axis)


def _transform(a: GPUArray, n: int, axis: int, kind: str, inverse: bool, scale: float):
    """One 1-D transform along `axis` (a already in the dtype it computes in and, for kind
    "c2c" / "r2c", of length n along the axis; for "c2r", n // 2 + 1)."""
    last = a.ndim - 1
    moved = a if axis == last else a.swapaxes(axis, last)
    if moved.ndim > _MAX_STRIDED_DIMS:
        moved = ascontiguousarray(moved)
    rt = moved._rt
    src = layout(moved)
    out_len = n // 2 + 1 if kind == "r2c" else n
    if kind == "c2r":
        out_dtype = _F32 if a.dtype == _C64 else _F64
    else:
        out_dtype = a.dtype if kind == "c2c" else (_C64 if a.dtype == _F32 else _C128)
    shape = (*moved.shape[:-1], out_len)
    strides = _shapes.contiguous_strides(shape, out_dtype.itemsize)
    if moved.size == 0 or math.prod(shape) == 0:
        out = empty(shape, out_dtype, rt)
    else:
        key = ("fft", rt, src, kind, n, inverse, scale)
        plan = cached_plan(key, lambda: rt.plan_fft(src, kind, n, inverse, scale))
        buf = plan(rt.thread.stream, _quota.quota, moved._buf, moved._offset)
        out = wrap(buf, shape, out_dtype, strides, rt)
    return out if axis == last else out.swapaxes(axis, last)


def _into(result: GPUArray, out) -> GPUArray:
    """result, or result written into `out` (NumPy's out=: the result's shape, a same-kind
    cast)."""
    if out is None:
        return result
    if not isinstance(out, GPUArray):
        raise TypeError(f"out must be a GPUArray, not {type(out).__name__}")
    if out.shape != result.shape:
        raise ValueError(f"out has shape {out.shape}; the result has shape {result.shape}")
    if not np.can_cast(result.dtype, out.dtype, "same_kind"):
        raise TypeError(f"cannot cast the {result.dtype} result to out's dtype {out.dtype}")
    out.check_writable()
    copy_into(result, out)
    return out


def _c2c(a, n, axis, norm, inverse: bool) -> GPUArray:
    a = _array(a)
    axis = _axis(axis, a.ndim)
    n = _check_n(n, a.shape[axis])
    a = a.astype(_complex_type(a.dtype), copy=False)
    a = _resize(a, axis, n)
    return _transform(a, n, axis, "c2c", inverse, _scale(norm, n, inverse))


def fft(a, n=None, axis=-1, norm=None, out=None) -> GPUArray:
    """The discrete Fourier transform along `axis` (NumPy's numpy.fft.fft)."""
    return _into(_c2c(a, n, axis, norm, False), out)


def ifft(a, n=None, axis=-1, norm=None, out=None) -> GPUArray:
    """The inverse discrete Fourier transform along `axis`."""
    return _into(_c2c(a, n, axis, norm, True), out)


def rfft(a, n=None, axis=-1, norm=None, out=None) -> GPUArray:
    """The transform of real input: the n // 2 + 1 non-negative frequencies."""
    a = _array(a)
    axis = _axis(axis, a.ndim)
    n = _check_n(n, a.shape[axis])
    a = _resize(a.astype(_real_type(a.dtype), copy=False), axis, n)
    return _into(_transform(a, n, axis, "r2c", False, _scale(norm, n, False)), out)


def _irfft(a: GPUArray, n, axis, norm, real_out) -> GPUArray:
    axis = _axis(axis, a.ndim)
    n = _check_n(n, 2 * (a.shape[axis] - 1))
    a = _resize(a.astype(_complex_type(a.dtype), copy=False), axis, n // 2 + 1)
    out = _transform(a, n, axis, "c2r", True, _scale(norm, n, True))
    return out.astype(real_out, copy=False) if real_out is not None else out


def _half_input(dtype) -> np.dtype | None:
    """float16 input keeps float16 real results (NumPy's)."""
    return _F16 if dtype == _F16 else None


def irfft(a, n=None, axis=-1, norm=None, out=None) -> GPUArray:
    """The inverse of rfft: n real values (default 2 * (m - 1) for m input values)."""
    a = _array(a)
    return _into(_irfft(a, n, axis, norm, _half_input(a.dtype)), out)


def hfft(a, n=None, axis=-1, norm=None, out=None) -> GPUArray:
    """The transform of a Hermitian-symmetric signal given by its first half: real output."""
    a = _array(a)
    real_out = _half_input(a.dtype)
    a = a.astype(_complex_type(a.dtype), copy=False)
    result = _irfft(elementwise("conjugate", a), n, axis, _swap_direction(norm), real_out)
    return _into(result, out)


def ihfft(a, n=None, axis=-1, norm=None, out=None) -> GPUArray:
    """The inverse of hfft: the Hermitian half-spectrum of real input."""
    return _into(elementwise("conjugate", rfft(a, n, axis, _swap_direction(norm))), out)


def _cook(a: GPUArray, s, axes, inverse_real: bool = False):
    """(shape along the axes, axes) of an n-dimensional transform, as numpy.fft's."""
    if s is None:
        axes = list(range(a.ndim)) if axes is None else list(axes)
        axes = [_axis(x, a.ndim) for x in axes]
        s = [a.shape[x] for x in axes]
        if inverse_real and axes:
            s[-1] = 2 * (s[-1] - 1)
    else:
        try:
            s = [operator.index(x) for x in s]
        except TypeError:
            raise TypeError(f"s must be a sequence of integers, not {s!r}") from None
        axes = list(range(-len(s), 0)) if axes is None else list(axes)
        if len(s) != len(axes):
            raise ValueError("when given, axes and shape arguments have to be of the same length")
        axes = [_axis(x, a.ndim) for x in axes]
    for x in s:
        _check_n(x, 1)
    return s, axes


def _c2c_n(a, s, axes, norm, inverse: bool) -> GPUArray:
    a = _array(a)
    s, axes = _cook(a, s, axes)
    for n, axis in reversed(list(zip(s, axes, strict=True))):
        a = _c2c(a, n, axis, norm, inverse)
    return a


def fftn(a, s=None, axes=None, norm=None, out=None) -> GPUArray:
    """The n-dimensional transform over `axes` (all by default; the last len(s) with s)."""
    return _into(_c2c_n(a, s, axes, norm, False), out)


def ifftn(a, s=None, axes=None, norm=None, out=None) -> GPUArray:
    return _into(_c2c_n(a, s, axes, norm, True), out)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> GPUArray:
    return _into(_c2c_n(a, s, axes, norm, False), out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> GPUArray:
    return _into(_c2c_n(a, s, axes, norm, True), out)


def rfftn(a, s=None, axes=None, norm=None, out=None) -> GPUArray:
    """rfft over the last of `axes`, then fft over the others."""
    a = _array(a)
    s, axes = _cook(a, s, axes)
    if not axes:
        raise ValueError("rfftn needs at least one axis")
    a = rfft(a, s[-1], axes[-1], norm)
    for n, axis in reversed(list(zip(s[:-1], axes[:-1], strict=True))):
        a = _c2c(a, n, axis, norm, False)
    return _into(a, out)


def irfftn(a, s=None, axes=None, norm=None, out=None) -> GPUArray:
    """ifft over all but the last of `axes`, then irfft over the last (s[-1] real values,
    default 2 * (m - 1))."""
    a = _array(a)
    real_out = _half_input(a.dtype)
    s, axes = _cook(a, s, axes, inverse_real=True)
    if not axes:
        raise ValueError("irfftn needs at least one axis")
    for n, axis in zip(s[:-1], axes[:-1], strict=True):
        a = _c2c(a, n, axis, norm, True)
    return _into(_irfft(a, s[-1], axes[-1], norm, real_out), out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> GPUArray:
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None) -> GPUArray:
    return irfftn(a, s, axes, norm, out)


def _frequencies(values: np.ndarray, dtype) -> GPUArray:
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise TypeError(f"frequencies are real floating-point, not {dtype}")
        values = values.astype(dtype)
    return _asarray_on(values)


@on_device
def fftfreq(n, d=1.0, *, dtype=None) -> GPUArray:
    """The sample frequencies of an n-point transform: [0, 1, ..., -1] / (d * n) (float64
    unless `dtype` is given)."""
    n = _check_n(n, 1)
    return _frequencies(np.fft.fftfreq(n, float(d)), dtype)


@on_device
def rfftfreq(n, d=1.0, *, dtype=None) -> GPUArray:
    """The n // 2 + 1 non-negative sample frequencies of an n-point rfft."""
    n = _check_n(n, 1)
    return _frequencies(np.fft.rfftfreq(n, float(d)), dtype)


def _shift(x, axes, sign: int) -> GPUArray:
    x = _array(x) if not isinstance(x, GPUArray) else x
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    axes = tuple(_axis(a, x.ndim) for a in axes)
    if not axes:
        return x
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return roll(x, shifts, axes)


def fftshift(x, axes=None) -> GPUArray:
    """The zero frequency moved to the middle of `axes` (all by default)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None) -> GPUArray:
    """The inverse of fftshift."""
    return _shift(x, axes, -1)
