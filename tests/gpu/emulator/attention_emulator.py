"""Runs kernels/attention_tc.cu and attention_decode.cu on the CPU through gk_emulate.h (a host
C++ build, g++), with NumPy arrays as device memory: the kernels' own code, their fragment
layouts, pipelines and barriers, checked without a GPU."""

from __future__ import annotations

import ctypes
from pathlib import Path

import emulation
import numpy as np

from gpukit.runtime.args import arg_struct

HERE = Path(__file__).resolve().parent
# Packed as gpukit packs it (the layout _native read from kernels/args.cuh); the host build of
# the kernels checks every field's offset against its own struct.
ARGS = arg_struct("gk_attn_tc_args")
LOG2E = 1.4426950408889634


def build(kernel: int, defines: tuple, out_dir: Path) -> ctypes.CDLL:
    """The emulated kernel library: kernel 1 = attention_tc.cu, 2 = attention_decode.cu."""
    so = emulation.build(HERE / "attention_driver.cpp", (f"GK_ATTN_KERNEL={kernel}", *defines),
                         out_dir)  # fmt: skip
    emulation.check_layout(so, ARGS)
    so.run = emulation.runner(so.gk_emu_run, ctypes.c_void_p, ctypes.c_int, *[ctypes.c_uint] * 6)
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
    so.run(args, kernel, *grid, threads, shared, seed)
