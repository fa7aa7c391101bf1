"""Runs kernels/attention_tc.cu and attention_decode.cu on the CPU through gk_emulate.h (a host
C++ build, g++), with NumPy arrays as device memory: the kernels' own code, their fragment
layouts, pipelines and barriers, checked without a GPU."""

from __future__ import annotations

import ctypes
import hashlib
import subprocess
from pathlib import Path

import numpy as np

from gpukit.runtime.args import arg_struct

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parents[2] / "kernels"
# Packed as gpukit packs it (the layout _native read from kernels/args.cuh); the host build of
# the kernels checks every field's offset against its own struct.
ARGS = arg_struct("gk_attn_tc_args")
LOG2E = 1.4426950408889634


def build(kernel: int, defines: tuple, out_dir: Path) -> ctypes.CDLL:
    """The emulated kernel library: kernel 1 = attention_tc.cu, 2 = attention_decode.cu."""
    key = hashlib.sha1(repr((kernel, defines)).encode()).hexdigest()[:16]
    lib = out_dir / f"attn_emu_{key}.so"
    if not lib.exists():
        cmd = [
            "g++", "-O1", "-std=c++17", "-shared", "-fPIC", "-DGK_EMULATE",
            f"-DGK_ATTN_KERNEL={kernel}", *(f"-D{d}" for d in defines), f"-I{KERNELS}",
            f"-I{HERE}", str(HERE / "attention_driver.cpp"), "-o", str(lib),
        ]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
    so = ctypes.CDLL(str(lib))
    so.gk_emu_field_offset.restype = ctypes.c_long
    so.gk_emu_field_offset.argtypes = (ctypes.c_char_p,)
    so.gk_emu_run.argtypes = (ctypes.c_void_p, ctypes.c_int, *[ctypes.c_uint] * 6)
    assert so.gk_emu_args_size() == ARGS.size
    for field, (_, offset, _) in ARGS.fields.items():
        assert so.gk_emu_field_offset(field.encode()) == offset, field
    return so


def _strides(a, shape=None):
    if a is None:
        return [0, 0, 0, 0]
    if shape is not None:
        a = np.broadcast_to(a, shape)
    return [s // a.itemsize for s in a.strides]


def pack(q, k, v, out, mask, kv_len, ws_o, ws_ml, causal, scale, n_splits=1, kps=0):
    b, hq, sq, d = q.shape
    hkv, skv = k.shape[1], k.shape[2]

    def ptr(x):
        return 0 if x is None else x.ctypes.data

    blob = ARGS.pack(
        q=ptr(q), k=ptr(k), v=ptr(v), out=ptr(out), mask=ptr(mask), kv_len=ptr(kv_len),
        ws_o=ptr(ws_o), ws_ml=ptr(ws_ml), batch=b, hq=hq, hkv=hkv, sq=sq, skv=skv, d=d,
        q_stride=_strides(q), k_stride=_strides(k), v_stride=_strides(v),
        mask_stride=_strides(mask, (b, hq, sq, skv)),
        kv_len_stride=1 if kv_len is not None and kv_len.size > 1 else 0, keys_per_split=kps,
        scale_log2=scale * LOG2E, causal=int(causal),
        kv_len_size=0 if kv_len is None else kv_len.itemsize, n_splits=n_splits,
    )  # fmt: skip
    return ctypes.create_string_buffer(bytes(blob), len(blob))


def run(so, args, kernel: int, grid, threads: int, shared: int, seed: int) -> None:
    so.gk_emu_run(args, kernel, *grid, threads, shared, seed)


# gk_launch_table (native/include/gpukit/launch_table.h): how gpukit._core's plans launch.
_LAUNCH = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint32),
    ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p,
    ctypes.c_uint64,
)  # fmt: skip
_ENCODE = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64
)
_ERROR_NAME = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)


class _RawTable(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint32),
        ("ctx", ctypes.c_void_p),
        ("launch", _LAUNCH),
        ("encode_tensor_map", _ENCODE),
        ("error_name", _ERROR_NAME),
    ]


_CAPSULE_NAME = b"gpukit.launch_table"
_FAILED = ctypes.create_string_buffer(b"GK_EMULATOR_LAUNCH_FAILED")


class LaunchTable:
    """A launch table whose launches call launch(function, grid, block, shared, args address,
    args bytes) in Python; a raised exception fails the launch (kept in `.error`)."""

    def __init__(self, launch):
        self.error = None

        def on_launch(ctx, function, grid, block, shared, stream, args, nbytes):
            try:
                launch(function, tuple(grid[:3]), tuple(block[:3]), shared, args, nbytes)
                return 0
            except Exception as e:  # reported through the plan's error, kept for the test
                self.error = e
                return 1

        self._callbacks = (
            _LAUNCH(on_launch),
            _ENCODE(lambda *_: 1),
            _ERROR_NAME(lambda *_: ctypes.addressof(_FAILED)),
        )
        self._raw = _RawTable(1, None, *self._callbacks)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
        self.capsule = new(ctypes.addressof(self._raw), _CAPSULE_NAME, None)
