"""GPUArray: an n-dimensional array in device memory with NumPy's semantics, and the planned
operations every array needs (allocation, copies, fills). Methods that run other ops are
attached by their modules: operators by gpukit.elementwise, sum/mean/... by gpukit.reductions,
@ by gpukit.linalg, advanced indexing by gpukit.indexing, DLPack by gpukit.interop."""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from . import _core
from .base import dtypes, scalars, shapes
from .runtime import runtime
from .runtime.backend import Layout, address_align
from .runtime.ops import ELEMENTWISE
from .runtime.quota import local as _quota

_SCALARS = (bool, int, float, complex)
_ComplexWarning = np.exceptions.ComplexWarning if hasattr(np, "exceptions") else np.ComplexWarning
_IDENTITY = ELEMENTWISE["identity"]
_Buffer = _core.Buffer


class GPUArray:
    """An array in memory from the gpukit pool. Views share the buffer (`_buf`) at an offset."""

    # shape, dtype and strides are read-only properties over these slots (a layout that does not
    # fit the buffer would read past it). _readonly marks broadcast views; every constructor sets
    # it, so the hot paths read it as a plain slot.
    __slots__ = (
        "__weakref__",
        "_buf",
        "_desc",
        "_dtype",
        "_offset",
        "_readonly",
        "_rt",
        "_shape",
        "_strides",
    )
    # NumPy operators defer to ours (ndarray @ GPUArray runs here and returns a GPUArray).
    __array_ufunc__ = None

    def __init__(self, buf, shape, dtype, strides=None, offset=0, rt=None):
        self._buf = buf
        self._desc = None
        self._readonly = False
        self._offset = offset
        self._rt = rt if rt is not None else runtime()
        self._shape = tuple(shape)
        self._dtype = dtype
        self._strides = (
            tuple(strides)
            if strides is not None
            else shapes.contiguous_strides(self._shape, dtype.itemsize)
        )

    # --- properties -----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @shape.setter
    def shape(self, value) -> None:
        """As NumPy: an in-place reshape, only where no copy is needed."""
        value = (value,) if isinstance(value, (int, np.integer)) else value
        shape = shapes.reshape_target(self.size, value)
        if not self.is_contiguous:
            raise AttributeError(
                "Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                "with the desired shape."
            )
        self._shape, self._desc = shape, None
        self._strides = shapes.contiguous_strides(shape, self.itemsize)

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def strides(self) -> tuple[int, ...]:
        return self._strides

    @property
    def readonly(self) -> bool:
        """Whether writes are refused: broadcast views (one element of memory stands for many,
        so a write would race with itself on the GPU) and views of them, as in NumPy."""
        return self._readonly

    def check_writable(self) -> None:
        if self._readonly:
            raise ValueError("assignment destination is read-only (a broadcast view)")

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
        """The device the array lives on: "cpu", "cuda:0", ..."""
        return self._rt.name

    @property
    def is_contiguous(self) -> bool:
        return shapes.is_contiguous(self.shape, self.strides, self.itemsize)

    @property
    def evictable(self) -> bool:
        """Whether the pool may spill this array's memory to host under pressure (it comes back
        on the next use). Views share the setting with their base."""
        return self._buf.evictable

    @evictable.setter
    def evictable(self, value: bool) -> None:
        self._buf.evictable = bool(value)

    @property
    def T(self) -> GPUArray:
        return self.transpose()

    def shares_memory(self, other: GPUArray) -> bool:
        """Whether both arrays are views of the same memory (a cheap check: the same buffer)."""
        return isinstance(other, GPUArray) and other._buf is self._buf

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # --- conversion -----------------------------------------------------------------------------
    def to_numpy(self) -> np.ndarray:
        """A NumPy copy of the data (waits for pending work on the array)."""
        src = self if self.is_contiguous else self.copy()
        host = np.empty(src.shape, src.dtype)
        if host.size:
            src._rt.download(host, src._buf, src._offset)
        return host

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

    # --- views ----------------------------------------------------------------------------------
    def _view(self, shape, strides, offset=None) -> GPUArray:
        off = self._offset if offset is None else offset
        view = GPUArray(self._buf, shape, self.dtype, strides, off, self._rt)
        view._readonly = self._readonly
        return view

    def _basic_getitem(self, key) -> GPUArray:
        shape, strides, offset = shapes.basic_index(self.shape, self.strides, key)
        a = _new_array(GPUArray)
        a._buf, a._desc, a._offset, a._rt = self._buf, None, self._offset + offset, self._rt
        a._shape, a._dtype, a._strides = shape, self.dtype, strides
        a._readonly = self._readonly
        return a

    def reshape(self, *shape) -> GPUArray:
        shape = shapes.reshape_target(self.size, shape)
        src = self if self.is_contiguous else self.copy()
        return src._view(shape, shapes.contiguous_strides(shape, self.itemsize))

    def transpose(self, *axes) -> GPUArray:
        if not axes or axes == (None,):
            axes = tuple(reversed(range(self.ndim)))
        elif len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0])
        if len(axes) != self.ndim:
            raise ValueError(f"axes {axes} are not a permutation of the {self.ndim} dimensions")
        shapes.normalize_axes(axes, self.ndim)  # types, range and repeats, as NumPy checks
        axes = tuple(operator.index(a) % self.ndim for a in axes)
        return self._view(tuple(self.shape[a] for a in axes), tuple(self.strides[a] for a in axes))

    def swapaxes(self, axis1: int, axis2: int) -> GPUArray:
        axes = list(range(self.ndim))
        i = shapes.normalize_axes(axis1, self.ndim)[0]
        j = shapes.normalize_axes(axis2, self.ndim)[0]
        axes[i], axes[j] = axes[j], axes[i]
        return self.transpose(axes)

    def squeeze(self, axis=None) -> GPUArray:
        """Drops size-1 dimensions (those in `axis`, or all)."""
        if axis is None:
            axes = tuple(i for i, n in enumerate(self.shape) if n == 1)
        else:
            axes = shapes.normalize_axes(axis, self.ndim)
            for i in axes:
                if self.shape[i] != 1:
                    raise ValueError(
                        f"cannot select an axis to squeeze out which has size not equal to one "
                        f"(axis {i} of shape {self.shape})"
                    )
        keep = [i for i in range(self.ndim) if i not in axes]
        return self._view(tuple(self.shape[i] for i in keep), tuple(self.strides[i] for i in keep))

    # --- copies ---------------------------------------------------------------------------------
    def _assign(self, value) -> None:
        """self[...] = value: a scalar, or an array broadcast to self's shape (cast as NumPy
        does)."""
        if isinstance(value, (*_SCALARS, np.generic)):
            fill(self, value)
            return
        (value,), _ = operands(value if isinstance(value, GPUArray) else np.asarray(value))
        if value._rt is not self._rt:
            raise ValueError(f"arrays are on different devices: {value.device} and {self.device}")
        try:
            fits = shapes.broadcast(value.shape, self.shape) == self.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"could not broadcast input array from shape {value.shape} into shape {self.shape}"
            )
        warn_discarded_imaginary(value.dtype, self.dtype)
        if value._buf is self._buf:  # a[1:] = a[:-1]: read everything before writing
            value = value.copy()
        value = value._view(
            self.shape, shapes.broadcast_strides(value.shape, value.strides, self.shape)
        )
        copy_into(value, self)

    def copy(self) -> GPUArray:
        return self.astype(self.dtype)

    def astype(self, dtype, copy=True) -> GPUArray:
        dtype = dtypes.normalize(dtype)
        if dtype == self.dtype and not copy:
            return self
        warn_discarded_imaginary(self.dtype, dtype)
        rt = self._rt
        # The alignment decides 16-byte accesses of a transposing copy.
        key = ("astype", rt, self.dtype, self.shape, self.strides, alignment(self), dtype)
        plan = _PLANS.get(key)
        if plan is None:
            out = Layout(dtype, self.shape, shapes.contiguous_strides(self.shape, dtype.itemsize))
            plan = rt.plan_elementwise(_IDENTITY, dtype, (layout(self),), out, True)
            remember_plan(key, plan)
        buf = plan(rt.thread.stream, _quota.quota, self._buf, self._offset)
        return _wrap(
            buf, self.shape, dtype, shapes.contiguous_strides(self.shape, dtype.itemsize), rt
        )


def warn_discarded_imaginary(src: np.dtype, dst: np.dtype) -> None:
    """NumPy's ComplexWarning for a cast that keeps only the real part."""
    if src.kind == "c" and dst.kind not in "cb":
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            _ComplexWarning,
            stacklevel=3,
        )


def _is_basic_entry(k) -> bool:
    t = type(k)
    return t is int or t is slice or k is None or k is Ellipsis or isinstance(k, np.integer)


def is_basic(key) -> bool:
    """Whether `key` is NumPy basic indexing (a view); bools are masks, not integers."""
    if type(key) is tuple:
        return all(_is_basic_entry(k) for k in key)
    return _is_basic_entry(key)


def _getitem(self, key) -> GPUArray:
    """A view for NumPy's basic indexing (integers, slices, '...', None); advanced keys (integer
    arrays, boolean masks) are gpukit.indexing's."""
    if not is_basic(key):
        raise IndexError(f"advanced indexing needs gpukit.indexing: {key!r}")
    return self._basic_getitem(key)


def _setitem(self, key, value) -> None:
    self.check_writable()
    if not is_basic(key):
        raise IndexError(f"advanced indexing needs gpukit.indexing: {key!r}")
    self._basic_getitem(key)._assign(value)


GPUArray.__getitem__ = _getitem
GPUArray.__setitem__ = _setitem


# --- plans ----------------------------------------------------------------------------------------
# Plans by kind of call (see gpukit.runtime.backend). Keys start with the op and the runtime.
_PLANS: dict = {}
_MAX_PLANS = 4096


def remember_plan(key, plan):
    """Caches `plan` (or any entry a hot path looks up with `planned`) under `key`."""
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


planned = _PLANS.get  # the entry cached under a key, or None


def cached_plan(key, make, *args):
    """The plan cached under `key`, made by make(*args) the first time."""
    plan = _PLANS.get(key)
    return plan if plan is not None else remember_plan(key, make(*args))


def alignment(a: GPUArray) -> int:
    """The largest power of two up to 16 dividing the address of a's first element. Pool
    buffers start at multiples of 128, so only the offset counts for them."""
    if type(a._buf) is _Buffer:
        return address_align(a._offset)
    return address_align(a._buf.device_ptr(0) + a._offset)


def layout(a: GPUArray) -> Layout:
    """What a planner sees of an array."""
    return Layout(a.dtype, a.shape, a.strides, alignment(a))


def copy_into(src: GPUArray, out: GPUArray) -> None:
    """out[...] = src (src already broadcast to out's shape; dtype converted)."""
    rt = out._rt
    key = ("copy", rt, src.dtype, src.shape, src.strides, alignment(src), out.dtype, out.shape)
    key += (out.strides, alignment(out))
    plan = cached_plan(
        key, lambda: rt.plan_elementwise(_IDENTITY, out.dtype, (layout(src),), layout(out), False)
    )
    plan(rt.thread.stream, _quota.quota, src._buf, src._offset, out._buf, out._offset)


def fill(out: GPUArray, value) -> None:
    """out[...] = value (a scalar, cast to out's dtype)."""
    if isinstance(value, np.generic):  # NumPy and ml_dtypes scalars go in as Python ones
        value = value.item()
    value = scalars.fill_value(value, out.dtype)
    rt, kind = out._rt, type(value)
    key = ("fill", rt, out.dtype, out.shape, out.strides, kind)
    plan = cached_plan(
        key, lambda: rt.plan_elementwise(_IDENTITY, out.dtype, (kind,), layout(out), False)
    )
    plan(rt.thread.stream, _quota.quota, value, out._buf, out._offset)


# --- construction -------------------------------------------------------------------------------
_LAYOUTS: dict = {}


def _layout(shape, dtype) -> tuple:
    """(shape, dtype, contiguous strides, nbytes) for empty()'s arguments, checked once."""
    shape = shapes.as_shape(shape)
    dtype = dtypes.normalize(dtype)
    return (
        shape,
        dtype,
        shapes.contiguous_strides(shape, dtype.itemsize),
        shapes.nbytes(shape, dtype.itemsize),
    )


def empty(shape, dtype="float64", rt=None) -> GPUArray:
    """An uninitialised array (NumPy's default dtype, float64, unless given)."""
    try:
        found = _LAYOUTS[shape, dtype]
    except KeyError:
        found = _LAYOUTS[shape, dtype] = _layout(shape, dtype)
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
    except TypeError:  # an unhashable shape such as a list
        found = _layout(shape, dtype)
    shape, dtype, strides, nbytes = found
    rt = rt or runtime()
    return _wrap(
        rt.pool.allocate(nbytes, rt.thread.stream, _quota.quota), shape, dtype, strides, rt
    )


def operands(*xs):
    """(operands, runtime): GPUArrays and Python scalars as they are, NumPy data and lists copied to
    the runtime of the GPUArrays, which must all share one."""
    runtimes = {id(x._rt): x._rt for x in xs if isinstance(x, GPUArray)}
    if len(runtimes) > 1:
        devices = sorted(x.device for x in xs if isinstance(x, GPUArray))
        raise ValueError(f"arrays are on different devices: {', '.join(devices)}")
    rt = next(iter(runtimes.values())) if runtimes else runtime()
    out = []
    for x in xs:
        if type(x) in _SCALARS or isinstance(x, GPUArray):
            out.append(x)
        # NumPy scalars keep their dtype (np.float64 too, though it subclasses float).
        elif isinstance(x, (np.ndarray, np.generic, list, tuple)):
            out.append(asarray(x, rt=rt))
        elif isinstance(x, _SCALARS):  # an int, float or complex subclass (IntEnum, ...)
            out.append(next(t(x) for t in (float, complex, int) if isinstance(x, t)))
        else:
            raise TypeError(f"unsupported operand type {type(x).__name__}")
    return out, rt


def asarray(obj, dtype=None, rt=None) -> GPUArray:
    """A GPUArray from a GPUArray, NumPy array, nested list or scalar (copied to the device)."""
    if isinstance(obj, GPUArray):
        return obj if dtype is None else obj.astype(dtype, copy=False)
    host = np.asarray(obj, dtype=None if dtype is None else dtypes.normalize(dtype))
    out = empty(host.shape, host.dtype, rt)
    if host.size:
        out._rt.upload(np.ascontiguousarray(host), out._buf, 0)
    return out


def _wrap(buf, shape, dtype, strides, rt, desc=None) -> GPUArray:
    """A GPUArray over a whole new buffer, without __init__'s checks (hot path)."""
    a = _new_array(GPUArray)
    a._buf, a._offset, a._rt, a._shape, a._dtype, a._strides = buf, 0, rt, shape, dtype, strides
    a._desc, a._readonly = desc, False
    return a


class Desc:
    """What plans are keyed by for one array: its runtime, dtype, shape and strides, interned so
    that a plan key hashes and compares by identity."""

    __slots__ = ("dtype", "rt", "shape", "strides")

    def __init__(self, rt, dtype, shape, strides):
        self.rt, self.dtype, self.shape, self.strides = rt, dtype, shape, strides


_DESCS: dict = {}


def desc_of(rt, dtype, shape, strides) -> Desc:
    key = (rt, dtype, shape, strides)
    d = _DESCS.get(key)
    if d is None:
        if len(_DESCS) > 65536:
            _DESCS.clear()  # descs held by arrays stay valid; new ones are interned afresh
        d = _DESCS[key] = Desc(rt, dtype, shape, strides)
    return d


def describe(a: GPUArray) -> Desc:
    """a's Desc (computed once per array)."""
    d = a._desc
    if d is None:
        d = a._desc = desc_of(a._rt, a.dtype, a.shape, a.strides)
    return d


wrap = _wrap
_new_array = object.__new__
