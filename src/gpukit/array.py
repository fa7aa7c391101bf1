"""GPUArray: an n-dimensional array in device memory with NumPy's semantics."""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes, _shapes
from ._runtime import runtime

_SCALARS = (bool, int, float)


class GPUArray:
    """An array in memory from the gpukit pool. Views share the buffer (`_buf`) at an offset."""

    __slots__ = ("__weakref__", "_buf", "_offset", "_rt", "dtype", "shape", "strides")
    # NumPy operators defer to ours (ndarray @ GPUArray runs here and returns a GPUArray).
    __array_ufunc__ = None

    def __init__(self, buf, shape, dtype, strides=None, offset=0, rt=None):
        self._buf = buf
        self._offset = offset
        self._rt = rt if rt is not None else runtime()
        self.shape = tuple(shape)
        self.dtype = dtype
        self.strides = (
            tuple(strides)
            if strides is not None
            else _shapes.contiguous_strides(self.shape, dtype.itemsize)
        )

    # --- properties -----------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> str:
        return self._rt.name

    @property
    def is_contiguous(self) -> bool:
        return _shapes.is_contiguous(self.shape, self.strides, self.itemsize)

    @property
    def T(self) -> GPUArray:
        return self.transpose()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    # --- conversion -----------------------------------------------------------------------------
    def to_numpy(self) -> np.ndarray:
        """A NumPy copy of the data (waits for pending work on the array)."""
        return self._rt.download(self)

    get = to_numpy

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a GPUArray cannot be viewed by NumPy without a copy")
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def item(self):
        if self.size != 1:
            raise ValueError(f"can only convert an array of size 1 to a scalar, not {self.size}")
        return self.to_numpy().reshape(()).item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        return bool(self.item())

    def __repr__(self) -> str:
        body = np.array2string(self.to_numpy(), separator=", ", prefix="GPUArray(")
        return f"GPUArray({body}, dtype={self.dtype.name}, device={self.device})"

    # --- shape and copies -----------------------------------------------------------------------
    def _view(self, shape, strides, offset=None) -> GPUArray:
        off = self._offset if offset is None else offset
        return GPUArray(self._buf, shape, self.dtype, strides, off, self._rt)

    def reshape(self, *shape) -> GPUArray:
        shape = _shapes.reshape_target(self.size, shape)
        src = self if self.is_contiguous else self.copy()
        return src._view(shape, _shapes.contiguous_strides(shape, self.itemsize))

    def transpose(self, *axes) -> GPUArray:
        if not axes or axes == (None,):
            axes = tuple(reversed(range(self.ndim)))
        elif len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0])
        if sorted(a % self.ndim for a in axes) != list(range(self.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of the {self.ndim} dimensions")
        return self._view(tuple(self.shape[a] for a in axes), tuple(self.strides[a] for a in axes))

    def copy(self) -> GPUArray:
        return self.astype(self.dtype)

    def astype(self, dtype, copy=True) -> GPUArray:
        dtype = _dtypes.normalize(dtype)
        if dtype == self.dtype and not copy:
            return self
        out = empty(self.shape, dtype, self._rt)
        self._rt.copy(self, out)
        return out

    # --- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other):
        return elementwise("add", self, other)

    def __radd__(self, other):
        return elementwise("add", other, self)

    def __sub__(self, other):
        return elementwise("subtract", self, other)

    def __rsub__(self, other):
        return elementwise("subtract", other, self)

    def __mul__(self, other):
        return elementwise("multiply", self, other)

    def __rmul__(self, other):
        return elementwise("multiply", other, self)

    def __truediv__(self, other):
        return elementwise("true_divide", self, other)

    def __rtruediv__(self, other):
        return elementwise("true_divide", other, self)

    def __neg__(self):
        return elementwise("negative", self)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    # --- reductions -----------------------------------------------------------------------------
    def sum(self, axis=None, keepdims=False):
        return reduce("sum", self, axis, keepdims)

    def mean(self, axis=None, keepdims=False):
        return reduce("mean", self, axis, keepdims)

    def max(self, axis=None, keepdims=False):
        return reduce("max", self, axis, keepdims)


# --- construction -------------------------------------------------------------------------------
def empty(shape, dtype="float64", rt=None) -> GPUArray:
    """An uninitialised array (NumPy's default dtype, float64, unless given)."""
    shape = _shapes.as_shape(shape)
    dtype = _dtypes.normalize(dtype)
    rt = rt or runtime()
    buf = rt.pool.allocate(math.prod(shape) * dtype.itemsize)
    return GPUArray(buf, shape, dtype, rt=rt)


def _operands(*xs):
    """(operands, runtime): GPUArrays and Python scalars as they are, NumPy data and lists copied to
    the runtime of the GPUArrays, which must all share one."""
    runtimes = {id(x._rt): x._rt for x in xs if isinstance(x, GPUArray)}
    if len(runtimes) > 1:
        devices = sorted(x.device for x in xs if isinstance(x, GPUArray))
        raise ValueError(f"arrays are on different devices: {', '.join(devices)}")
    rt = next(iter(runtimes.values())) if runtimes else runtime()
    out = []
    for x in xs:
        if isinstance(x, (GPUArray, *_SCALARS)):
            out.append(x)
        elif isinstance(x, (np.ndarray, np.generic, list, tuple)):  # NumPy scalars keep their dtype
            out.append(asarray(x, rt=rt))
        else:
            raise TypeError(f"unsupported operand type {type(x).__name__}")
    return out, rt


def asarray(obj, dtype=None, rt=None) -> GPUArray:
    """A GPUArray from a GPUArray, NumPy array, nested list or scalar (copied to the device)."""
    if isinstance(obj, GPUArray):
        return obj if dtype is None else obj.astype(dtype, copy=False)
    host = np.asarray(obj, dtype=None if dtype is None else _dtypes.normalize(dtype))
    out = empty(host.shape, host.dtype, rt)
    out._rt.upload(np.ascontiguousarray(host), out)
    return out


# --- operations ---------------------------------------------------------------------------------
def elementwise(ufunc_name: str, *operands) -> GPUArray:
    """NumPy's ufunc `ufunc_name` with broadcasting; operands are GPUArrays or Python scalars."""
    ops, rt = _operands(*operands)
    dtype = _dtypes.ufunc_result(
        ufunc_name, *(x.dtype if isinstance(x, GPUArray) else x for x in ops)
    )
    shape = _shapes.broadcast(*(x.shape for x in ops if isinstance(x, GPUArray)))
    out = empty(shape, dtype, rt)
    rt.elementwise(ufunc_name, ops, out)
    return out


def reduce(name: str, a, axis=None, keepdims=False) -> GPUArray:
    (a,), rt = _operands(a)
    if not isinstance(a, GPUArray):
        a = asarray(a, rt=rt)
    axes = _shapes.normalize_axes(axis, a.ndim)
    if name in ("max", "min") and any(a.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    shape = _shapes.reduced_shape(a.shape, axes, keepdims)
    out = empty(shape, _dtypes.reduction_result(name, a.dtype), rt)
    rt.reduce(name, a, axes, out)
    return out


def matmul(a, b) -> GPUArray:
    (a, b), rt = _operands(a, b)
    if not isinstance(a, GPUArray) or not isinstance(b, GPUArray):
        raise ValueError("matmul: scalar operands are not allowed, use * instead")
    shape = _shapes.matmul_shape(a.shape, b.shape)
    out = empty(shape, _dtypes.ufunc_result("matmul", a.dtype, b.dtype), rt)
    rt.matmul(a, b, out)
    return out
