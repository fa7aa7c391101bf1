"""The parts of complex arrays as NumPy gives them: `real` and `imag` of a complex array are views
of its memory (writing to them writes the array); of a real array, the array itself and zeros.
GPUArray's `real` / `imag` properties and its `conj` / `conjugate` methods."""

from __future__ import annotations

from .array import GPUArray, asarray, empty, fill, operands
from .base import dtypes
from .elementwise import elementwise


def _array(x) -> GPUArray:
    (x,), rt = operands(x)
    return x if isinstance(x, GPUArray) else asarray(x, rt=rt)


def _part(x: GPUArray, index: int) -> GPUArray:
    """A view of the real (0) or imaginary (1) parts of complex `x`."""
    part = dtypes.real_of(x.dtype)
    view = GPUArray(x._buf, x.shape, part, x.strides, x._offset + index * part.itemsize, x._rt)
    view._readonly = x._readonly
    return view


def real(x) -> GPUArray:
    """The real part: a view of a complex array, a real array itself."""
    x = _array(x)
    return _part(x, 0) if x.dtype.kind == "c" else x


def imag(x) -> GPUArray:
    """The imaginary part: a view of a complex array; zeros (a new array) for a real one."""
    x = _array(x)
    if x.dtype.kind == "c":
        return _part(x, 1)
    zeros = empty(x.shape, x.dtype, x._rt)
    fill(zeros, 0)
    return zeros


def _set_real(self, value) -> None:
    real(self)[...] = value


def _set_imag(self, value) -> None:
    if self.dtype.kind != "c":
        raise TypeError("array does not have imaginary part to set")
    imag(self)[...] = value


GPUArray.real = property(real, _set_real)
GPUArray.imag = property(imag, _set_imag)
GPUArray.conj = GPUArray.conjugate = lambda self: elementwise("conjugate", self)

__all__ = ["imag", "real"]
