"""The CPU backend: NumPy computes, over memory that the Rust pool hands out."""

from __future__ import annotations

import math

import numpy as np

from . import _core, _native
from ._dtypes import bfloat16
from ._nn_cpu import ACTIVATIONS, CpuNnOps


class _HostMemory:
    """Lends pool memory to NumPy; the array's .base keeps the pool buffer alive. bfloat16 is
    lent as uint16 (the array interface has no type string for it) and viewed back by `views`."""

    __slots__ = ("__array_interface__", "_buffer")

    def __init__(self, arr, ptr: int):
        self._buffer = arr._buf
        self.__array_interface__ = {
            "data": (ptr + arr._offset, False),
            "shape": arr.shape,
            "strides": arr.strides,
            "typestr": "<u2" if arr.dtype == bfloat16 else arr.dtype.str,
            "version": 3,
        }


def _host_view(arr, ptr: int) -> np.ndarray:
    view = np.asarray(_HostMemory(arr, ptr))
    return view.view(bfloat16) if arr.dtype == bfloat16 else view


def _is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float))


def _as_f32(x):
    """NumPy has few bfloat16 loops: bfloat16 data is computed on in float32 (exactly)."""
    return x.astype(np.float32) if isinstance(x, np.ndarray) and x.dtype == bfloat16 else x


def _as_loop(x: np.ndarray, loop) -> np.ndarray:
    """`x` in the loop dtype (None: as it is)."""
    return x if loop is None or x.dtype == loop else x.astype(loop)


def _compute_into(out: np.ndarray, compute) -> None:
    """compute(dest), with a bfloat16 `out` computed in float32 and rounded once when stored."""
    if out.dtype != bfloat16:
        compute(out)
        return
    tmp = np.empty(out.shape, np.float32)
    compute(tmp)
    np.copyto(out, tmp, casting="unsafe")


def _sigmoid(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    np.reciprocal(out, out=out)


def _erf(x, out):
    np.copyto(out, np.frompyfunc(math.erf, 1, 1)(x), casting="unsafe")


# Ops that are not NumPy ufuncs (or lack out=), as f(*inputs, out).
_CUSTOM = {
    "identity": lambda x, out: np.copyto(out, x, casting="unsafe"),
    "rsqrt": lambda x, out: np.reciprocal(np.sqrt(x, out=out), out=out),
    "sigmoid": _sigmoid,
    "erf": _erf,
    "where": lambda c, x, y, out: np.copyto(out, np.where(c, x, y), casting="unsafe"),
    "clip": lambda x, lo, hi, out: np.copyto(out, np.clip(x, lo, hi), casting="unsafe"),
    **ACTIVATIONS,
}


def _identity(name: str, dtype: np.dtype):
    """The identity of max (the lowest value) or min (the highest) in `dtype`."""
    if dtype == np.bool_:
        return name == "min"
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    if dtype.kind == "f":
        return -np.inf if name == "max" else np.inf
    return info.min if name == "max" else info.max


class CpuRuntime(CpuNnOps):
    name = "cpu"
    stream = 0  # work is synchronous: there is one stream

    def __init__(self):
        self.pool = _core.Pool(_native.host_allocator_table())

    def describe(self) -> str:
        return "CPU (NumPy over the gpukit pool)"

    def views(self, *arrays) -> list[np.ndarray]:
        """NumPy arrays over the GPUArrays' memory (no copy). One pool call for all of them, so
        that restoring one spilled array never spills another of the same operation."""
        ptrs = self.pool.device_ptrs(tuple(a._buf for a in arrays), 0)
        return [_host_view(a, p) for a, p in zip(arrays, ptrs, strict=True)]

    def view(self, arr) -> np.ndarray:
        return self.views(arr)[0]

    def upload(self, host: np.ndarray, out) -> None:
        self.view(out)[...] = host

    def download(self, arr) -> np.ndarray:
        return self.view(arr).copy()

    def copy(self, src, out) -> None:
        """out[...] = src, converting dtype; src may be strided or broadcast."""
        s, o = self.views(src, out)
        np.copyto(o, s, casting="unsafe")

    def fill(self, out, value) -> None:
        self.view(out).fill(value)

    def arange(self, start, step, out) -> None:
        v = self.view(out)
        v[...] = start + step * np.arange(v.size)

    def plan_elementwise(self, ufunc_name, operands, loop, dtype, shape, out_strides=None):
        views = self.views
        custom = _CUSTOM.get(ufunc_name)
        if custom is None:
            ufunc = getattr(np, ufunc_name)

            def custom(*args, out):
                ufunc(*args, out=out, casting="same_kind")

        def run(ops, out):
            arrays = [x for x in ops if not _is_scalar(x)]
            it = iter(views(*arrays, out))
            args = [x if _is_scalar(x) else next(it) for x in ops]
            custom(*args, out=next(it))

        if bfloat16 not in (dtype, *(x.dtype for x in operands if not _is_scalar(x))):
            return run

        # Array operands are converted to the loop dtype (float32 for bfloat16), as the GPU
        # kernels read them; where's condition keeps its type.
        compute = np.dtype(np.float32) if loop == bfloat16 else loop
        first = 1 if ufunc_name == "where" else 0

        def run_bf16(ops, out):
            arrays = [x for x in ops if not _is_scalar(x)]
            it = iter(views(*arrays, out))
            args = [
                x if _is_scalar(x) else _as_loop(next(it), compute if i >= first else None)
                for i, x in enumerate(ops)
            ]
            _compute_into(next(it), lambda dest: custom(*args, out=dest))

        return run_bf16

    def reduce(self, name: str, src, axes: tuple[int, ...], out) -> None:
        s, o = self.views(src, out)
        if bfloat16 in (s.dtype, o.dtype):
            s = _as_f32(s)
            _compute_into(o, lambda dest: self._reduce(name, s, axes, dest))
            return
        self._reduce(name, s, axes, o)

    @staticmethod
    def _reduce(name: str, s: np.ndarray, axes: tuple[int, ...], o: np.ndarray) -> None:
        o = o.reshape(tuple(1 if i in axes else n for i, n in enumerate(s.shape)))
        if name in ("argmax", "argmin"):
            if len(axes) == s.ndim:  # the flat index, as NumPy gives for axis=None
                o[...] = getattr(np, name)(s)
            else:
                getattr(np, name)(s, axis=axes[0], keepdims=True, out=o)
            return
        extra = {}
        if name in ("max", "min") and s.size == 0:  # any/all of nothing: the identity
            extra["initial"] = _identity(name, s.dtype)
        getattr(np, name)(s, axis=axes, keepdims=True, out=o, **extra)

    def cumsum(self, src, axis: int, out) -> None:
        s, o = self.views(src, out)
        if o.dtype in (np.float16, bfloat16):  # 16-bit floats accumulate in float32, as on GPUs
            np.copyto(o, np.cumsum(_as_f32(s), axis=axis, dtype=np.float32), casting="unsafe")
        else:
            np.cumsum(s, axis=axis, out=o)

    def matmul(self, a, b, out, row_block=None, bias=None) -> None:
        """out = a @ b (+ bias along the last axis); `row_block`: at most that many output rows
        per step, as the GPU backends launch it."""
        if row_block is not None and row_block < 1:
            raise ValueError(f"matmul: row_block must be at least 1, got {row_block}")
        va, vb, vo, *vbias = self.views(a, b, out, *([] if bias is None else [bias]))
        va, vb = _as_f32(va), _as_f32(vb)

        def compute(dest):
            if va.ndim == 1 or row_block is None or row_block >= va.shape[-2]:
                np.matmul(va, vb, out=dest)
            else:
                b2 = vb if vb.ndim > 1 else vb[:, None]
                o2 = dest if vb.ndim > 1 else dest[..., None]
                for r0 in range(0, va.shape[-2], row_block):
                    rows = slice(r0, r0 + row_block)
                    np.matmul(va[..., rows, :], b2, out=o2[..., rows, :])
            if vbias:
                np.add(dest, _as_f32(vbias[0]), out=dest)

        _compute_into(vo, compute)

    def gather(self, src, out, indices, positions, layout, check, scatter=False):
        """out = src[idx] (scatter: src[idx] = out), the index arrays at `positions` of src's
        dimensions (NumPy places the result's dimensions as `layout` says). With `check`, the
        number of the first index array holding an index out of range, before anything moves."""
        s, o, *idx = self.views(src, out, *indices)
        if check:
            for k, (v, p) in enumerate(zip(idx, positions, strict=True)):
                n = s.shape[p]
                if v.size and (v.min() < -n or v.max() >= n):
                    return k
        key = [slice(None)] * s.ndim
        for p, v in zip(positions, idx, strict=True):
            key[p] = v
        if scatter:
            s[tuple(key)] = o
        else:
            o[...] = s[tuple(key)]
        return None

    def nonzero(self, mask):
        """An int64 (ndim, count) array: the coordinates of mask's true elements."""
        from .array import empty

        coords = np.nonzero(self.view(mask))
        out = empty((mask.ndim, coords[0].size), np.dtype("int64"), self)
        if coords[0].size:
            self.view(out)[...] = coords
        return out

    def philox(self, kernel: str, out, seed: int, offset: int, **params) -> None:
        from . import _philox

        bits = _philox.uniform_bits(out.dtype)
        values = _philox.generate(kernel, out.size, out.dtype, seed, offset, bits, **params)
        self.view(out)[...] = values.reshape(out.shape)
