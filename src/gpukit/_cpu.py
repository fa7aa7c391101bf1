"""The CPU backend: NumPy computes, over memory that the Rust pool hands out."""

from __future__ import annotations

import math

import numpy as np

from . import _core, _native


class _HostMemory:
    """Lends pool memory to NumPy; the array's .base keeps the pool buffer alive."""

    __slots__ = ("__array_interface__", "_buffer")

    def __init__(self, arr, ptr: int):
        self._buffer = arr._buf
        self.__array_interface__ = {
            "data": (ptr + arr._offset, False),
            "shape": arr.shape,
            "strides": arr.strides,
            "typestr": arr.dtype.str,
            "version": 3,
        }


def _is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float))


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
}


def _identity(name: str, dtype: np.dtype):
    """The identity of max (the lowest value) or min (the highest) in `dtype`."""
    if dtype == np.bool_:
        return name == "min"
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    if dtype.kind == "f":
        return -np.inf if name == "max" else np.inf
    return info.min if name == "max" else info.max


class CpuRuntime:
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
        return [np.asarray(_HostMemory(a, p)) for a, p in zip(arrays, ptrs, strict=True)]

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

        return run

    def reduce(self, name: str, src, axes: tuple[int, ...], out) -> None:
        s, o = self.views(src, out)
        o = o.reshape(tuple(1 if i in axes else n for i, n in enumerate(src.shape)))
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
        np.cumsum(s, axis=axis, out=o)

    def matmul(self, a, b, out, row_block=None, bias=None) -> None:
        """out = a @ b (+ bias along the last axis); `row_block`: at most that many output rows
        per step, as the GPU backends launch it."""
        if row_block is not None and row_block < 1:
            raise ValueError(f"matmul: row_block must be at least 1, got {row_block}")
        va, vb, vo, *vbias = self.views(a, b, out, *([] if bias is None else [bias]))
        if va.ndim == 1 or row_block is None or row_block >= va.shape[-2]:
            np.matmul(va, vb, out=vo)
        else:
            b2 = vb if vb.ndim > 1 else vb[:, None]
            o2 = vo if vb.ndim > 1 else vo[..., None]
            for r0 in range(0, va.shape[-2], row_block):
                rows = slice(r0, r0 + row_block)
                np.matmul(va[..., rows, :], b2, out=o2[..., rows, :])
        if vbias:
            np.add(vo, vbias[0], out=vo)
