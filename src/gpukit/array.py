"""GPUArray: an n-dimensional array in device memory with NumPy's semantics."""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes, _shapes
from ._runtime import runtime
from .memory import current_quota

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

    def __getitem__(self, key) -> GPUArray:
        """A view for NumPy's basic indexing (integers, slices, '...', None); a new array for
        advanced indexing (integer arrays, boolean masks: gpukit.indexing)."""
        if not _is_basic(key):
            from .indexing import getitem

            return getitem(self, key)
        shape, strides, offset = _shapes.basic_index(self.shape, self.strides, key)
        return self._view(shape, strides, self._offset + offset)

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

    # --- interop (see gpukit.interop) -------------------------------------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from .interop import dlpack

        return dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        from .interop import device_of

        return device_of(self._rt)

    @property
    def __cuda_array_interface__(self) -> dict:
        from .interop import cuda_array_interface

        return cuda_array_interface(self)

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

    def swapaxes(self, axis1: int, axis2: int) -> GPUArray:
        axes = list(range(self.ndim))
        i, j = (
            _shapes.normalize_axes(axis1, self.ndim)[0],
            _shapes.normalize_axes(axis2, self.ndim)[0],
        )
        axes[i], axes[j] = axes[j], axes[i]
        return self.transpose(axes)

    def squeeze(self, axis=None) -> GPUArray:
        """Drops size-1 dimensions (those in `axis`, or all)."""
        if axis is None:
            axes = tuple(i for i, n in enumerate(self.shape) if n == 1)
        else:
            axes = _shapes.normalize_axes(axis, self.ndim)
            for i in axes:
                if self.shape[i] != 1:
                    raise ValueError(
                        f"cannot select an axis to squeeze out which has size not equal to one "
                        f"(axis {i} of shape {self.shape})"
                    )
        keep = [i for i in range(self.ndim) if i not in axes]
        return self._view(tuple(self.shape[i] for i in keep), tuple(self.strides[i] for i in keep))

    def __setitem__(self, key, value) -> None:
        """a[key] = value; value (array or scalar) broadcasts, and is cast to this array's dtype
        as NumPy does. Advanced keys write through gpukit.indexing."""
        if not _is_basic(key):
            from .indexing import setitem

            setitem(self, key, value)
            return
        target = self[key]
        if isinstance(value, (bool, int, float, np.generic)):
            target._rt.fill(target, value)
            return
        (value,), _ = _operands(value if isinstance(value, GPUArray) else np.asarray(value))
        if value._rt is not target._rt:
            raise ValueError(f"arrays are on different devices: {value.device} and {target.device}")
        try:
            fits = _shapes.broadcast(value.shape, target.shape) == target.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"could not broadcast input array from shape {value.shape} "
                f"into shape {target.shape}"
            )
        if value._buf is target._buf:  # a[1:] = a[:-1]: read everything before writing
            value = value.copy()
        value = value._view(
            target.shape, _shapes.broadcast_strides(value.shape, value.strides, target.shape)
        )
        target._rt.copy(value, target)

    def copy(self) -> GPUArray:
        return self.astype(self.dtype)

    def astype(self, dtype, copy=True) -> GPUArray:
        dtype = _dtypes.normalize(dtype)
        if dtype == self.dtype and not copy:
            return self
        out = empty(self.shape, dtype, self._rt)
        self._rt.copy(self, out)
        return out

    # --- arithmetic, comparisons, logic (NumPy's operators) -----------------------------------
    def __neg__(self):
        return elementwise("negative", self)

    def __pos__(self):
        return elementwise("positive", self)

    def __abs__(self):
        return elementwise("absolute", self)

    def __invert__(self):
        return elementwise("invert", self)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    __hash__ = None  # == compares elementwise, as in NumPy

    # --- reductions (see gpukit.reductions) -----------------------------------------------------
    def sum(self, axis=None, keepdims=False):
        return reduce("sum", self, axis, keepdims)

    def mean(self, axis=None, keepdims=False):
        return reduce("mean", self, axis, keepdims)

    def prod(self, axis=None, keepdims=False):
        return reduce("prod", self, axis, keepdims)

    def max(self, axis=None, keepdims=False):
        return reduce("max", self, axis, keepdims)

    def min(self, axis=None, keepdims=False):
        return reduce("min", self, axis, keepdims)

    def argmax(self, axis=None, keepdims=False):
        """Index of the first largest element (NaN counts as largest); flat when axis is None."""
        return reduce("argmax", self, axis, keepdims)

    def argmin(self, axis=None, keepdims=False):
        return reduce("argmin", self, axis, keepdims)

    def cumsum(self, axis=None):
        from .reductions import cumsum

        return cumsum(self, axis)

    def any(self, axis=None, keepdims=False):
        from .reductions import any as any_

        return any_(self, axis, keepdims)

    def all(self, axis=None, keepdims=False):
        from .reductions import all as all_

        return all_(self, axis, keepdims)

    def var(self, axis=None, keepdims=False, ddof=0):
        from .reductions import var

        return var(self, axis, keepdims, ddof)

    def std(self, axis=None, keepdims=False, ddof=0):
        from .reductions import std

        return std(self, axis, keepdims, ddof)


def _is_basic_entry(k) -> bool:
    t = type(k)
    return t is int or t is slice or k is None or k is Ellipsis or isinstance(k, np.integer)


def _is_basic(key) -> bool:
    """Whether `key` is NumPy basic indexing (a view); bools are masks, not integers."""
    if type(key) is tuple:
        return all(_is_basic_entry(k) for k in key)
    return _is_basic_entry(key)


# --- construction -------------------------------------------------------------------------------
_LAYOUTS: dict = {}


def _layout(shape, dtype) -> tuple:
    """(shape, dtype, contiguous strides, nbytes) for empty()'s arguments, checked once."""
    shape = _shapes.as_shape(shape)
    dtype = _dtypes.normalize(dtype)
    return (
        shape,
        dtype,
        _shapes.contiguous_strides(shape, dtype.itemsize),
        math.prod(shape) * dtype.itemsize,
    )


def empty(shape, dtype="float64", rt=None) -> GPUArray:
    """An uninitialised array (NumPy's default dtype, float64, unless given)."""
    try:
        layout = _LAYOUTS[shape, dtype]
    except KeyError:
        layout = _LAYOUTS[shape, dtype] = _layout(shape, dtype)
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
    except TypeError:  # an unhashable shape such as a list
        layout = _layout(shape, dtype)
    shape, dtype, strides, nbytes = layout
    rt = rt or runtime()
    return _wrap(rt.pool.allocate(nbytes, rt.stream, current_quota()), shape, dtype, strides, rt)


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
def _wrap(buf, shape, dtype, strides, rt) -> GPUArray:
    """A GPUArray over a whole new buffer, without __init__'s checks (hot path)."""
    a = _new_array(GPUArray)
    a._buf, a._offset, a._rt, a.shape, a.dtype, a.strides = buf, 0, rt, shape, dtype, strides
    return a


_new_array = object.__new__

# Elementwise plans by (op, runtime, then per operand: dtype, shape, strides of an array, or the
# type of a Python scalar). A plan allocates the output and launches; everything derived from the
# operands' descriptions (result dtype and shape, kernel, strides) is computed once.
_PLANS: dict = {}
_MAX_PLANS = 4096


def _plan_key(name, rt, ops) -> tuple:
    key = [name, rt]
    for x in ops:
        if type(x) is GPUArray:
            key += (x.dtype, x.shape, x.strides)
        else:
            key.append(type(x))
    return tuple(key)


def _describe(ufunc_name, ops):
    """(loop dtype, result dtype, broadcast shape) of an elementwise call."""
    loop, dtype = _dtypes.resolve(
        ufunc_name, *(x.dtype if isinstance(x, GPUArray) else x for x in ops)
    )
    return loop, dtype, _shapes.broadcast(*(x.shape for x in ops if isinstance(x, GPUArray)))


def _new_plan(key, ufunc_name, rt, ops):
    loop, dtype, shape = _describe(ufunc_name, ops)
    strides = _shapes.contiguous_strides(shape, dtype.itemsize)
    nbytes = math.prod(shape) * dtype.itemsize
    launch = rt.plan_elementwise(ufunc_name, ops, loop, dtype, shape)
    allocate = rt.pool.allocate
    integer_power = ufunc_name == "power" and loop.kind in "iu"

    def plan(operands):
        if integer_power:
            _check_integer_power(operands[1])
        out = _wrap(allocate(nbytes, rt.stream, current_quota()), shape, dtype, strides, rt)
        launch(operands, out)
        return out

    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


def _check_integer_power(exponent) -> None:
    """NumPy refuses integers to negative integer powers (the kernel would give 0): one look at
    the smallest exponent, a reduction and a wait, only for signed integer exponents."""
    if isinstance(exponent, GPUArray):
        signed = exponent.dtype.kind == "i" and exponent.size
        negative = signed and reduce("min", exponent).item() < 0
    else:
        negative = exponent < 0
    if negative:
        raise ValueError("Integers to negative integer powers are not allowed.")


def elementwise(ufunc_name: str, *operands, out: GPUArray | None = None) -> GPUArray:
    """NumPy's ufunc `ufunc_name` with broadcasting; operands are GPUArrays or Python scalars.
    With `out`, the result is written there (cast as NumPy's "same_kind" rule allows)."""
    ops, rt = _operands(*operands)
    if out is not None:
        return _into(ufunc_name, ops, rt, out)
    key = _plan_key(ufunc_name, rt, ops)
    plan = _PLANS.get(key) or _new_plan(key, ufunc_name, rt, ops)
    return plan(ops)


def _into(ufunc_name, ops, rt, out: GPUArray) -> GPUArray:
    if not isinstance(out, GPUArray):
        raise TypeError(f"out must be a GPUArray, not {type(out).__name__}")
    if out._rt is not rt:
        raise ValueError(f"arrays are on different devices: out is on {out.device}")
    loop, dtype, shape = _describe(ufunc_name, ops)
    if _shapes.broadcast(shape, out.shape) != out.shape:
        raise ValueError(
            f"{ufunc_name}: result of shape {shape} does not fit out of shape {out.shape}"
        )
    if not _dtypes.can_cast_same_kind(dtype, out.dtype):
        raise TypeError(
            f"{ufunc_name}: cannot cast the {dtype.name} result to out's "
            f"{out.dtype.name} (same_kind casting)"
        )
    if ufunc_name == "power" and loop.kind in "iu":
        _check_integer_power(ops[1])
    # An input that shares out's memory but walks it differently would read what this very
    # operation already wrote: compute into a temporary first, as NumPy does.
    overlapping = any(
        isinstance(x, GPUArray)
        and x._buf is out._buf
        and (x._offset, x.shape, x.strides) != (out._offset, out.shape, out.strides)
        for x in ops
    )
    if overlapping:
        rt.copy(elementwise(ufunc_name, *ops), out)
    else:
        rt.plan_elementwise(ufunc_name, ops, loop, out.dtype, out.shape, out.strides)(ops, out)
    return out


def _binary(name: str, a: GPUArray, b) -> GPUArray:
    """a <op> b: a dictionary lookup and the plan when this kind of call was seen before."""
    t = type(b)
    if t is GPUArray and b._rt is a._rt:
        key = (name, a._rt, a.dtype, a.shape, a.strides, b.dtype, b.shape, b.strides)
    elif t is float or t is int or t is bool:
        key = (name, a._rt, a.dtype, a.shape, a.strides, t)
    else:
        return elementwise(name, a, b)
    plan = _PLANS.get(key)
    return plan((a, b)) if plan is not None else elementwise(name, a, b)


def _binary_reflected(name: str, a: GPUArray, b) -> GPUArray:
    """b <op> a, for a scalar or array-like b."""
    t = type(b)
    if t is float or t is int or t is bool:
        plan = _PLANS.get((name, a._rt, t, a.dtype, a.shape, a.strides))
        if plan is not None:
            return plan((b, a))
    return elementwise(name, b, a)


def reduce(name: str, a, axis=None, keepdims=False, *, empty_ok=False) -> GPUArray:
    """Reduction `name` (sum, mean, prod, max, min) over `axis` (None: all; int or tuple)."""
    (a,), rt = _operands(a)
    if not isinstance(a, GPUArray):
        a = asarray(a, rt=rt)
    if name in ("argmax", "argmin") and not (axis is None or isinstance(axis, (int, np.integer))):
        raise TypeError(f"{name} takes one axis or None, not {axis!r}")
    axes = _shapes.normalize_axes(axis, a.ndim)
    if any(a.shape[i] == 0 for i in axes) and not empty_ok:
        if name in ("max", "min"):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        if name in ("argmax", "argmin"):
            raise ValueError(f"attempt to get {name} of an empty sequence")
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


_OPERATORS = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "true_divide",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "power",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
}
_COMPARISONS = {
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
}


def _install_operators():
    def forward(name):
        return lambda self, other: _binary(name, self, other)

    def reflected(name):
        return lambda self, other: _binary_reflected(name, self, other)

    def in_place(name):
        return lambda self, other: elementwise(name, self, other, out=self)

    for dunder, name in _OPERATORS.items():
        setattr(GPUArray, f"__{dunder}__", forward(name))
        setattr(GPUArray, f"__r{dunder}__", reflected(name))
        setattr(GPUArray, f"__i{dunder}__", in_place(name))
    for dunder, name in _COMPARISONS.items():
        setattr(GPUArray, f"__{dunder}__", forward(name))


_install_operators()
