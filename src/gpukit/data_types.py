"""The Array API's data type functions: dtype objects by name, finfo, iinfo, isdtype,
result_type, can_cast, astype. Dtypes are NumPy dtype objects (bfloat16 is ml_dtypes'), so
`np.dtype` interop stays; bfloat16 promotes as PyTorch does (gpukit._dtypes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .array import GPUArray
from .base import dtypes as _dtypes
from .device_arg import runtime_for

# The dtype objects the namespace exposes (gk.float32, ...), by name.
DTYPES = {d.name: d for d in _dtypes.SUPPORTED}

_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": _dtypes.is_floating,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iuc" or _dtypes.is_floating(d),
}


def _dtype_of(x) -> np.dtype:
    if isinstance(x, GPUArray):
        return x.dtype
    return _dtypes.normalize(x)


class finfo_object:
    """Machine limits of a floating-point dtype, as Python floats (the Array API's finfo)."""

    def __init__(self, dtype: np.dtype):
        info = ml_dtypes.finfo(dtype) if dtype == _dtypes.bfloat16 else np.finfo(dtype)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(info.resolution)
        self.tiny = self.smallest_normal
        self.dtype = dtype

    def __repr__(self) -> str:
        return (
            f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
            f"smallest_normal={self.smallest_normal}, dtype={self.dtype.name})"
        )


class iinfo_object:
    """Limits of an integer dtype, as Python ints (the Array API's iinfo)."""

    def __init__(self, dtype: np.dtype):
        info = np.iinfo(dtype)
        self.bits, self.max, self.min, self.dtype = (
            int(info.bits),
            int(info.max),
            int(info.min),
            dtype,
        )

    def __repr__(self) -> str:
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype.name})"


def finfo(type, /) -> finfo_object:
    """Limits of a floating-point dtype (or an array's dtype), bfloat16 included; of a complex
    dtype's parts (float32 for complex64), as NumPy and the Array API give them."""
    dtype = _dtypes.real_of(_dtype_of(type))
    if not _dtypes.is_floating(dtype):
        raise ValueError(f"finfo needs a floating-point dtype, not {dtype.name}")
    return finfo_object(dtype)


def iinfo(type, /) -> iinfo_object:
    """Limits of an integer dtype (or an array's dtype)."""
    dtype = _dtype_of(type)
    if dtype.kind not in "iu":
        raise ValueError(f"iinfo needs an integer dtype, not {dtype.name}")
    return iinfo_object(dtype)


def isdtype(dtype, kind) -> bool:
    """Whether `dtype` is of `kind`: a dtype, a kind name ("bool", "signed integer", "unsigned
    integer", "integral", "real floating", "complex floating", "numeric") or a tuple of those."""
    if not isinstance(dtype, np.dtype):
        raise TypeError(f"isdtype needs a dtype, not {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        try:
            return bool(_KINDS[kind](dtype))
        except KeyError:
            raise ValueError(
                f"unknown dtype kind {kind!r}; kinds: {', '.join(map(repr, _KINDS))}"
            ) from None
    if isinstance(kind, np.dtype):
        return dtype == kind
    raise TypeError(f"isdtype's kind must be a dtype, a kind name or a tuple, not {kind!r}")


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype that these arrays, dtypes and Python scalars promote to (NumPy's rules, Python
    scalars weak; bfloat16 as PyTorch)."""
    numbers = (bool, int, float, complex)
    dtypes = [_dtype_of(x) for x in arrays_and_dtypes if not isinstance(x, numbers)]
    scalars = [x for x in arrays_and_dtypes if isinstance(x, numbers)]
    if not dtypes:
        if not scalars:
            raise ValueError("at least one array or dtype is required")
        return _dtypes.normalize(np.result_type(*scalars))
    dtype = _dtypes.result_type(*dtypes)
    if scalars and dtype != _dtypes.bfloat16:
        dtype = _dtypes.normalize(np.result_type(dtype, *scalars))
    elif any(isinstance(x, complex) for x in scalars):  # only a complex changes bfloat16
        dtype = _dtypes.complex64
    return dtype


def can_cast(from_, to, /) -> bool:
    """Whether `from_` (a dtype or an array) casts to `to` without losing values ("safe")."""
    src, dst = _dtype_of(from_), _dtypes.normalize(to)
    bf16 = _dtypes.bfloat16
    if src == dst:
        return True
    if dst == bf16:  # 8 significant bits hold every 8-bit integer exactly
        return src in (np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.uint8))
    if src == bf16:
        return dst in (np.dtype(np.float32), np.dtype(np.float64)) or dst.kind == "c"
    return bool(np.can_cast(src, dst, "safe"))


def astype(x, dtype, /, *, copy: bool = True, device=None) -> GPUArray:
    """`x` as `dtype` (on `device`): a new array unless copy=False and nothing changes."""
    if not isinstance(x, GPUArray):
        raise TypeError(f"astype needs a GPUArray, not {type(x).__name__}")
    if device is not None and runtime_for(device) is not x._rt:
        x = x.to_device(device)
        copy = False
    return x.astype(dtype, copy=copy)
