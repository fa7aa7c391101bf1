"""The CPU backend: NumPy computes, over memory that the Rust pool hands out."""

from __future__ import annotations

import numpy as np

from . import _core, _native


class _HostMemory:
    """Lends pool memory to NumPy; the array's .base keeps the pool buffer alive."""

    __slots__ = ("__array_interface__", "_buffer")

    def __init__(self, arr):
        self._buffer = arr._buf
        self.__array_interface__ = {
            "data": (arr._buf.device_ptr(0) + arr._offset, False),
            "shape": arr.shape,
            "strides": arr.strides,
            "typestr": arr.dtype.str,
            "version": 3,
        }


def _operand(x):
    return x if isinstance(x, (bool, int, float)) else x._rt.view(x)


class CpuRuntime:
    name = "cpu"
    stream = 0  # work is synchronous: there is one stream

    def __init__(self):
        self.pool = _core.Pool(_native.host_allocator_table())

    def describe(self) -> str:
        return "CPU (NumPy over the gpukit pool)"

    def view(self, arr) -> np.ndarray:
        """A NumPy array over the GPUArray's memory (no copy)."""
        return np.asarray(_HostMemory(arr))

    def upload(self, host: np.ndarray, out) -> None:
        self.view(out)[...] = host

    def download(self, arr) -> np.ndarray:
        return self.view(arr).copy()

    def copy(self, src, out) -> None:
        """out[...] = src, converting dtype; src may be strided or broadcast."""
        np.copyto(self.view(out), self.view(src), casting="unsafe")

    def fill(self, out, value) -> None:
        self.view(out).fill(value)

    def arange(self, start, step, out) -> None:
        v = self.view(out)
        v[...] = start + step * np.arange(v.size)

    def elementwise(self, ufunc_name: str, operands, out) -> None:
        getattr(np, ufunc_name)(*(_operand(x) for x in operands), out=self.view(out))

    def plan_elementwise(self, ufunc_name, operands, dtype, shape):
        ufunc = getattr(np, ufunc_name)
        view = self.view

        def run(ops, out):
            ufunc(*(_operand(x) for x in ops), out=view(out))

        return run

    def reduce(self, name: str, src, axes: tuple[int, ...], out) -> None:
        o = self.view(out).reshape(tuple(1 if i in axes else n for i, n in enumerate(src.shape)))
        getattr(np, name)(self.view(src), axis=axes, keepdims=True, out=o)

    def matmul(self, a, b, out) -> None:
        np.matmul(self.view(a), self.view(b), out=self.view(out))
