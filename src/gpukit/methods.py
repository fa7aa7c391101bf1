"""The GPUArray methods and attributes that the Array API and NumPy scripts expect beyond
array.py's core, each forwarding to the function of the same name."""

from __future__ import annotations

import operator
import sys

from . import device_arg as _device
from . import manipulation, matrices, products, statistics
from .array import GPUArray
from .array_api import check_api_version
from .base import dtypes as _dtypes
from .elementwise import clip as _clip
from .indexing import nonzero, take


def __array_namespace__(self, /, *, api_version=None):
    """The gpukit module, which implements the Array API standard."""
    check_api_version(api_version)
    return sys.modules["gpukit"]


def to_device(self, device, /, *, stream=None) -> GPUArray:
    """This array on `device` (itself when it is there already)."""
    if stream is not None:
        raise ValueError("to_device: gpukit copies between devices on the current stream only")
    target = _device.runtime_for(device)
    if target is self._rt:
        return self
    from .creation import asarray

    with _device.placed(target.name):
        return asarray(self.to_numpy())


def mT(self) -> GPUArray:
    """The last two dimensions swapped (a view)."""
    return manipulation.matrix_transpose(self)


def __index__(self) -> int:
    if self.ndim != 0 or self.dtype.kind not in "iu":
        raise TypeError("only integer scalar arrays can be converted to a scalar index")
    return operator.index(self.item())


def __complex__(self) -> complex:
    return complex(self.item())


def fill(self, value) -> None:
    """Sets every element to the scalar `value`."""
    self[...] = value


def tolist(self):
    """The elements as (nested) Python lists of Python scalars."""
    host = self.to_numpy()
    return (host.astype("float32") if host.dtype == _dtypes.bfloat16 else host).tolist()


def flatten(self) -> GPUArray:
    """A 1-D copy."""
    return self.reshape(-1).copy() if self.is_contiguous else self.reshape(-1)


def _forward(function):
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = function.__doc__
    return method


_FUNCTIONS = {
    "sum": statistics.sum,
    "prod": statistics.prod,
    "mean": statistics.mean,
    "max": statistics.max,
    "min": statistics.min,
    "argmax": statistics.argmax,
    "argmin": statistics.argmin,
    "var": statistics.var,
    "std": statistics.std,
    "cumsum": statistics.cumsum,
    "cumprod": statistics.cumprod,
    "ptp": statistics.ptp,
    "ravel": manipulation.ravel,
    "repeat": manipulation.repeat,
    "diagonal": matrices.diagonal,
    "trace": products.trace,
    "nonzero": nonzero,
    "take": take,
}


def clip(self, min=None, max=None, out=None) -> GPUArray:
    return _clip(self, min, max, out=out)


def dot(self, b, out=None) -> GPUArray:
    from .linalg import dot as dot_

    result = dot_(self, b)
    return result if out is None else manipulation._write(result, out)


def install() -> None:
    for name, function in _FUNCTIONS.items():
        setattr(GPUArray, name, _forward(function))
    extra = (
        __array_namespace__,
        to_device,
        __index__,
        __complex__,
        fill,
        tolist,
        flatten,
        clip,
        dot,
    )
    for function in extra:
        setattr(GPUArray, function.__name__, function)
    GPUArray.mT = property(mT)
