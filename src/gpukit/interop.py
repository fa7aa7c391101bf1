"""Zero-copy exchange with other array libraries: DLPack (`GPUArray.__dlpack__`,
`__dlpack_device__`, `from_dlpack`) and CUDA's `__cuda_array_interface__` (version 3).

Imported memory stays the producer's: the array holds an external buffer (`_core.ExternalBuffer`)
that the pool never frees, spills or moves, and that keeps the producer's tensor alive. Exported
memory stays gpukit's: the capsule keeps the exporting array alive, and the array's buffer is
made non-evictable, since a consumer may read it at any time.
"""

from __future__ import annotations

import numpy as np

from . import _core, _native
from .array import GPUArray, asarray
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .device_arg import placed, runtime_for
from .runtime import runtime

_CPU = 1  # kDLCPU
_CUDA_HOST = 3  # kDLCUDAHost: pinned host memory, readable on the CPU backend
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6
_KINDS = {"i": _INT, "u": _UINT, "f": _FLOAT, "c": _COMPLEX, "b": _BOOL}
_NO_SYNC = -1  # the consumer's stream value that asks for no synchronisation


def _type_code(dtype: np.dtype) -> int:
    return _BFLOAT if dtype == _dtypes.bfloat16 else _KINDS[dtype.kind]


def _dtype_of(code: int, bits: int, lanes: int) -> np.dtype:
    if lanes != 1:
        raise TypeError(f"gpukit does not support vector DLPack types ({lanes} lanes)")
    if code == _BFLOAT and bits == 16:
        return _dtypes.bfloat16
    kinds = {_INT: "i", _UINT: "u", _FLOAT: "f", _COMPLEX: "c"}
    if code == _BOOL and bits == 8:
        return np.dtype(bool)
    if code not in kinds:
        raise TypeError(f"gpukit does not support DLPack type code {code} ({bits} bits)")
    return _dtypes.normalize(np.dtype(f"{kinds[code]}{bits // 8}"))


def device_of(rt) -> tuple[int, int]:
    """(DLPack device type, ordinal) of a runtime's memory."""
    return tuple(rt.dlpack_device)


def _exported_address(a: GPUArray, stream: int) -> int:
    a._buf.evictable = False  # a consumer may read it at any time: it must never move
    return a._rt.pool.device_ptrs((a._buf,), stream)[0] + a._offset


def _consumer_stream(rt, consumer_stream) -> int | None:
    """The CUDA stream a DLPack `stream` value names, or None where nothing is to be ordered."""
    if not rt.capabilities.device_streams or consumer_stream == _NO_SYNC:
        return None
    # None means the legacy default stream (CU_STREAM_LEGACY, 1), as the DLPack spec says.
    return 1 if consumer_stream is None else int(consumer_stream)


def _order(rt, first: int, then: int) -> None:
    """Makes stream `then` wait for the work queued on stream `first` so far."""
    if first == then:
        return
    event = rt.create_event(False)
    try:
        rt.record_event(event, first)
        rt.wait_event(then, event)
    finally:
        rt.destroy_event(event)  # the driver keeps it until the wait is done


def dlpack(a: GPUArray, stream=None, max_version=None, dl_device=None, copy=None):
    """`a.__dlpack__(...)`: a legacy "dltensor" capsule (gpukit speaks DLPack 0.8, which every
    consumer reads). `copy=True` exports a copy; strides are always given."""
    del max_version  # consumers accept the unversioned capsule from any producer
    if dl_device is not None and tuple(int(x) for x in dl_device) != device_of(a._rt):
        return _host_dlpack(a, dl_device, copy)
    if copy:
        a = a.copy()
    # The address first: restoring a spilled buffer queues a copy that the consumer must wait for.
    producer = a._rt.stream
    address = _exported_address(a, producer) if a.size else 0
    consumer = _consumer_stream(a._rt, stream)
    if consumer is not None:
        _order(a._rt, producer, consumer)
    device_type, device_id = device_of(a._rt)
    strides = [s // a.itemsize for s in a.strides]
    owner = _Export(a, producer, consumer)
    code, bits = _type_code(a.dtype), a.itemsize * 8
    return _native.dlpack_export(
        owner, address, list(a.shape), strides, code, bits, device_type, device_id
    )


class _Export:
    """What a capsule keeps alive: the exported array, the stream gpukit exported it on and the
    consumer's. When the consumer lets go (calls the deleter), work it queued may still be
    reading the memory: gpukit's stream then waits for the consumer's queued work, so neither
    gpukit's later writes to the array nor the pool's reuse of its block can overtake it."""

    __slots__ = ("array", "consumer", "producer")

    def __init__(self, array: GPUArray, producer: int, consumer: int | None):
        self.array, self.producer, self.consumer = array, producer, consumer

    def __del__(self):
        if self.consumer is not None and self.array.size:
            _order(self.array._rt, self.consumer, self.producer)


def _host_dlpack(a: GPUArray, dl_device, copy):
    """A capsule over a host copy of `a` (the only other device an array can go to)."""
    if tuple(int(x) for x in dl_device) != (_CPU, 0):
        raise BufferError(f"cannot export an array on {a.device} to DLPack device {dl_device}")
    if copy is False:
        raise BufferError(f"exporting an array on {a.device} to the CPU needs a copy (copy=False)")
    host = a.to_numpy()
    strides = [s // a.itemsize for s in host.strides]
    return _native.dlpack_export(host, host.ctypes.data if host.size else 0, list(host.shape),
                                 strides, _type_code(a.dtype), a.itemsize * 8, _CPU, 0)  # fmt: skip


def cuda_array_interface(a: GPUArray) -> dict:
    """`a.__cuda_array_interface__`, version 3: the data is ready on `stream`."""
    if not a._rt.capabilities.cuda_array_interface:
        raise AttributeError(f"__cuda_array_interface__ is only defined on CUDA, not {a.device}")
    if a.dtype == _dtypes.bfloat16:
        raise AttributeError("the CUDA array interface has no bfloat16 type; use DLPack")
    stream = a._rt.stream
    return {
        "shape": a.shape,
        "typestr": a.dtype.str,
        "data": (_exported_address(a, stream) if a.size else 0, False),
        "strides": None if a.is_contiguous else a.strides,
        "version": 3,
        "stream": stream,
    }


def _buffer_over(address: int, shape, strides, itemsize: int, keeper):
    """(external buffer, byte offset of the first element) spanning every element."""
    low = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s > 0)
    empty = 0 in shape
    nbytes = 0 if empty else high - low + itemsize
    return _core.ExternalBuffer(address + (0 if empty else low), nbytes, keeper), -low


def from_dlpack(x, /, *, device=None, copy=None) -> GPUArray:
    """A GPUArray over the memory of `x` (anything with `__dlpack__`: a NumPy array on the CPU
    backend, a PyTorch or CuPy tensor on the CUDA one), without copying unless `copy=True`. The
    producer stays alive while the array (or a view of it) does. `device=` names the device the
    array is for (the current one when None); a GPUArray goes to another device through a
    host copy (refused with copy=False)."""
    if isinstance(x, GPUArray) and device is not None and runtime_for(device) is not x._rt:
        if copy is False:
            raise ValueError(
                f"moving an array from {x.device} to {device} needs a copy (copy=False)"
            )
        return asarray(x.to_numpy(), rt=runtime_for(device))
    with placed(device):
        return _from_dlpack(x, copy)


def _from_dlpack(obj, copy) -> GPUArray:
    if isinstance(obj, GPUArray):
        return obj.copy() if copy else obj
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"{type(obj).__name__} does not support DLPack (no __dlpack__)")
    rt = runtime()
    producer = tuple(int(x) for x in obj.__dlpack_device__())
    on_host = not rt.capabilities.device_streams
    accepted = {device_of(rt)} | ({(_CUDA_HOST, 0)} if on_host else set())
    if producer not in accepted:
        raise ValueError(
            f"arrays are on different devices: the DLPack producer is on device {producer}, "
            f"gpukit's current device is {rt.name} {device_of(rt)}; copy through NumPy instead"
        )
    capsule = obj.__dlpack__() if on_host else obj.__dlpack__(stream=int(rt.stream))
    address, shape, strides, code, bits, lanes, _, _, keeper = _native.dlpack_import(capsule)
    dtype = _dtype_of(code, bits, lanes)
    item = dtype.itemsize
    shape = tuple(shape)
    if strides is None:
        byte_strides = tuple(_shapes.contiguous_strides(shape, item))
    else:
        byte_strides = tuple(s * item for s in strides)
    buf, offset = _buffer_over(address, shape, byte_strides, item, keeper)
    out = GPUArray(buf, shape, dtype, byte_strides, offset, rt)
    return out.copy() if copy else out


def _dlpack_method(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    return dlpack(self, stream, max_version, dl_device, copy)


GPUArray.__dlpack__ = _dlpack_method
GPUArray.__dlpack_device__ = lambda self: device_of(self._rt)
GPUArray.__cuda_array_interface__ = property(cuda_array_interface)
