"""User kernels: RawKernel (CUDA source, launched by hand) and ElementwiseKernel (an operation
applied per element), both compiled at run time through the same cache as the built-in kernels."""

from __future__ import annotations

import math
import operator
import re
import struct

import numpy as np

from .array import GPUArray, copy_into, empty
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .errors import BackendUnavailableError
from .runtime import kernels as _kernels
from .runtime import runtime


def _gpu_runtime(arrays, what: str):
    runtimes = {id(a._rt): a._rt for a in arrays}
    if len(runtimes) > 1:
        raise ValueError(f"{what}: arrays are on different devices")
    rt = next(iter(runtimes.values())) if runtimes else runtime()
    if not rt.capabilities.compiles_kernels:
        raise BackendUnavailableError(
            f"{what} runs CUDA code and needs the cuda backend; this array is on {rt.name}"
        )
    return rt


def _dim3(value, what: str) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must be an int or 1 to 3 ints, got {value!r}")
    dims = tuple(operator.index(d) for d in dims)
    if any(d < 1 for d in dims):
        raise ValueError(f"{what} dimensions must be positive, got {value!r}")
    if any(d >= 2**32 for d in dims):  # the driver takes unsigned 32-bit dimensions
        raise ValueError(f"{what} dimensions must be below 2**32, got {value!r}")
    return (*dims, 1, 1)[:3]


def pack_arguments(args, addresses) -> bytes:
    """Kernel parameters laid out as a C struct: GPUArrays as device pointers (`addresses`, in
    order), NumPy scalars as their own type. Bare Python numbers are refused: their C type would
    be a guess."""
    out = bytearray()
    addresses = iter(addresses)
    for i, arg in enumerate(args):
        if isinstance(arg, GPUArray):
            data, align = struct.pack("<Q", next(addresses)), 8
        elif isinstance(arg, np.generic):
            data, align = arg.tobytes(), arg.dtype.itemsize
        elif isinstance(arg, (bool, int, float)):
            raise TypeError(
                f"kernel argument {i} is a Python {type(arg).__name__}; pass a typed scalar "
                f"such as numpy.int32({arg!r}) or numpy.float32({arg!r})"
            )
        else:
            raise TypeError(f"kernel argument {i} has unsupported type {type(arg).__name__}")
        out += b"\0" * (-len(out) % align)
        out += data
    return bytes(out)


class RawKernel:
    """CUDA C++ source with an `extern "C" __global__` kernel `name`, compiled on first launch:

    k = gk.RawKernel(src, "scale")
    k((blocks,), (256,), (x, np.float32(2.0), np.int64(x.size)))
    """

    def __init__(self, source: str, name: str, options=()):
        self.source = _text(source, "RawKernel: source")
        self.name = _text(name, "RawKernel: name")
        self.options = _options(options, "RawKernel")
        self._functions: dict = {}

    def _function(self, rt) -> int:
        key = id(rt)
        if key not in self._functions:
            self._functions[key] = rt.compile_function(
                f"{self.name}.cu", self.source, self.options, self.name
            )
        return self._functions[key]

    def compile(self) -> None:
        """Compiles now (CompileError with the NVRTC log on failure) instead of at first launch."""
        self._function(_gpu_runtime([], "RawKernel"))

    def __call__(self, grid, block, args, shared_mem: int = 0, stream=None) -> None:
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        shared_mem = operator.index(shared_mem)
        if not 0 <= shared_mem < 2**32:
            raise ValueError(f"shared_mem must be from 0 to 2**32 - 1 bytes, got {shared_mem}")
        if stream is not None and not hasattr(stream, "handle"):
            raise TypeError(f"stream must be a gpukit.Stream or None, not {type(stream).__name__}")
        args = tuple(args)
        arrays = [a for a in args if isinstance(a, GPUArray)]
        rt = _gpu_runtime(arrays, "RawKernel")
        fn = self._function(rt)
        handle = stream.handle if stream is not None else rt.stream
        addresses = rt.addresses([a._buf for a in arrays], [a._offset for a in arrays], handle)
        params = pack_arguments(args, addresses)
        rt.launch(fn, grid, block, shared_mem, handle, params)


_PARAM = re.compile(r"^\s*(?:(raw)\s+)?([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z_][A-Za-z0-9_]*)\s*$")


def _text(value, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    return value


def _options(options, what: str) -> tuple[str, ...]:
    options = (options,) if isinstance(options, str) else tuple(options)
    if not all(isinstance(o, str) for o in options):
        raise TypeError(f"{what}: options must be strings, got {options!r}")
    return options


def _parse_params(text: str, what: str):
    _text(text, f"{what}: parameters")
    params = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = _PARAM.match(part)
        if not m:
            raise ValueError(f"{what}: cannot parse parameter {part!r} (expected 'type name')")
        if m.group(1):
            raise ValueError(f"{what}: 'raw' parameters are not supported ({part!r})")
        type_name, name = m.group(2), m.group(3)
        try:
            dtype = _dtypes.normalize(type_name)
        except TypeError:
            if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", type_name):
                raise
            dtype = None  # a type placeholder, resolved from the arguments
        params.append((name, type_name, dtype))
    return params


class ElementwiseKernel:
    """An operation applied to every element, in the manner of CuPy's ElementwiseKernel:

        add = gk.ElementwiseKernel("T x, T y", "T z", "z = x + y", "my_add")
        z = add(x, y)          # or add(x, y, z) to write into z

    Types are dtype names or placeholders (a capitalised name) bound by the first argument of that
    type. Array inputs broadcast together; scalar inputs are passed by value."""

    def __init__(self, in_params: str, out_params: str, operation: str, name: str, options=()):
        name = _text(name, "ElementwiseKernel: name")
        self.inputs = _parse_params(in_params, name)
        self.outputs = _parse_params(out_params, name)
        if not self.outputs:
            raise ValueError(f"{name}: at least one output parameter is needed")
        self.operation = _text(operation, f"{name}: operation")
        self.name = name
        self.options = _options(options, name)
        self._kernels: dict = {}

    def _source(self, types: dict) -> str:
        def ctype(type_name, dtype):
            return _kernels.C_TYPES[dtype if dtype is not None else types[type_name]]

        params, loads, stores = ["gk_i64 _n"], [], []
        for i, (name, type_name, dtype) in enumerate(self.inputs):
            c = ctype(type_name, dtype)
            if types.get(("scalar", i)):
                params.append(f"{c} {name}")
            else:
                params.append(f"const {c}* __restrict__ _p_{name}")
                loads.append(f"const {c} {name} = _p_{name}[_i];")
        for name, type_name, dtype in self.outputs:
            c = ctype(type_name, dtype)
            params.append(f"{c}* __restrict__ _p_{name}")
            loads.append(f"{c} {name};")
            stores.append(f"_p_{name}[_i] = {name};")
        body = "\n        ".join([*loads, f"{self.operation};", *stores])
        return (
            '#include "compat.cuh"\n'
            f"GK_KERNEL void {self.name}({', '.join(params)}) {{\n"
            "    const gk_i64 _step = (gk_i64)gridDim.x * blockDim.x;\n"
            "    for (gk_i64 _i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; _i < _n;"
            " _i += _step) {\n"
            f"        {body}\n"
            "    }\n"
            "}\n"
        )

    def __call__(self, *args):
        n_in, n_out = len(self.inputs), len(self.outputs)
        if len(args) not in (n_in, n_in + n_out):
            raise TypeError(
                f"{self.name} takes {n_in} inputs (and optionally {n_out} outputs), "
                f"got {len(args)} arguments"
            )
        ins, outs = list(args[:n_in]), list(args[n_in:])
        arrays = [a for a in args if isinstance(a, GPUArray)]
        rt = _gpu_runtime(arrays, self.name)
        types: dict = {}
        for i, ((pname, type_name, dtype), arg) in enumerate(zip(self.inputs, ins, strict=True)):
            if isinstance(arg, GPUArray):
                if dtype is None:
                    types.setdefault(type_name, arg.dtype)
                    dtype = types[type_name]
                if arg.dtype != dtype:
                    raise TypeError(
                        f"{self.name}: input {pname} must be {dtype.name}, got {arg.dtype.name}"
                    )
            elif isinstance(arg, (bool, int, float, np.generic)):
                types[("scalar", i)] = True
            else:
                raise TypeError(f"{self.name}: input {pname} must be a GPUArray or a scalar")
        for pname, type_name, dtype in self.inputs + self.outputs:
            if dtype is None and type_name not in types:
                raise TypeError(f"{self.name}: cannot infer type {type_name} of {pname}")
        shape = _shapes.broadcast(*(a.shape for a in ins if isinstance(a, GPUArray)))
        if outs:
            for (pname, type_name, dtype), o in zip(self.outputs, outs, strict=True):
                want = dtype if dtype is not None else types[type_name]
                if not isinstance(o, GPUArray) or o.shape != shape or o.dtype != want:
                    raise ValueError(
                        f"{self.name}: output {pname} must be a {want.name} GPUArray "
                        f"of shape {shape}"
                    )
                if not o.is_contiguous:
                    raise ValueError(f"{self.name}: output {pname} must be contiguous")
        else:
            outs = [
                empty(shape, dtype if dtype is not None else types[type_name], rt)
                for _, type_name, dtype in self.outputs
            ]
        key = tuple(sorted((str(k), str(v)) for k, v in types.items()))
        if key not in self._kernels:
            self._kernels[key] = RawKernel(self._source(types), self.name, self.options)
        launch_args = [np.int64(math.prod(shape))]
        for (_, type_name, dtype), arg in zip(self.inputs, ins, strict=True):
            if isinstance(arg, GPUArray):
                launch_args.append(_dense(arg, shape))
            else:
                want = dtype if dtype is not None else types[type_name]
                launch_args.append(np.asarray(arg).astype(want)[()])
        launch_args += outs
        n = math.prod(shape)
        if n:
            blocks = min((n + 255) // 256, 65535 * 32)
            self._kernels[key]((blocks,), (256,), launch_args)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _dense(arr: GPUArray, shape) -> GPUArray:
    """`arr` broadcast to `shape` and C-contiguous (a copy only when it is not already)."""
    if arr.shape == tuple(shape) and arr.is_contiguous:
        return arr
    strides = _shapes.broadcast_strides(arr.shape, arr.strides, shape)
    out = empty(shape, arr.dtype, arr._rt)
    copy_into(arr._view(shape, strides), out)
    return out
