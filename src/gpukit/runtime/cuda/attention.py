"""Attention plans on CUDA: float16 / bfloat16 on tensor cores (sm_80+; kernels/attention_tc.cu
for prefill, on sm_90a kernels/attention_sm90.cu for unmasked prefill with head_dim 64 / 128 /
256, kernels/attention_decode.cu + its combine pass for decode, launch geometry in
attention_geometry.py), everything else on CUDA cores (kernels/attention.cu)."""

from __future__ import annotations

import math

import numpy as np

from ... import _native
from ...base import strides
from .. import kernels
from ..args import CONSTANTS, arg_struct
from ..backend import Layout
from . import attention_geometry as geometry
from .plans import PlanBuilder

_C = CONSTANTS
_MIN_TILES_PER_SPLIT = 4  # fewer key tiles per block than this do not pay for the combine pass
_LOG2E = 1.4426950408889634
_F32 = np.dtype(np.float32)


def _mask_kind(mask) -> str:
    return "none" if mask is None else "bool" if mask.dtype == np.bool_ else "additive"


def _arguments(mask, kv_length) -> str:
    return "aaa" + "a" * ((mask is not None) + (kv_length is not None))


def plan_attention(backend, q, k, v, mask, kv_length, out: Layout, causal: bool, scale: float):
    """Args: q, k, v (, mask) (, kv_length). Allocates out (contiguous, q's shape). kv_length
    (int32 / int64, one length or one per batch entry) is read on the device by the tensor-core
    kernels; None (no plan) where no kernel for this call reads it, and the caller cuts the keys
    itself."""
    if out.size == 0:
        return PlanBuilder(backend, _arguments(mask, kv_length), outputs=[0]).build()
    plan = _plan_tensor_cores(backend, q, k, v, mask, kv_length, out, causal, scale)
    if plan is not None or kv_length is not None:
        return plan
    return _plan_cuda_cores(backend, q, k, v, mask, out, causal, scale)


def _plan_tensor_cores(backend, q, k, v, mask, kv_length, out, causal, scale):
    """The plan on tensor cores, or None where they do not serve the call."""
    mma = kernels.MMA_TYPES.get(q.dtype.name)
    if mma is None or backend.device.compute_capability[0] < 8:
        return None
    if min(x.align for x in (q, k, v)) < 16:
        return None
    b, hq, sq, d = q.shape
    hkv, skv = k.shape[1], k.shape[2]
    qkv_strides = [list(strides.element_strides(x, x.shape)) for x in (q, k, v)]
    if not geometry.loadable_strides(qkv_strides):
        return None
    kind = _mask_kind(mask)
    limit = backend.device.max_shared_per_block_optin
    if backend.sm90a and not geometry.use_decode(hq, hkv, sq, d, limit):
        plan = _plan_sm90(backend, q, k, v, kv_length, out, causal, scale, mma, kind, limit)
        if plan is not None:
            return plan
    p = geometry.tensor_core_attention(mma, b, hq, hkv, sq, skv, d, kind, backend.sm_count, limit)
    if p is None:
        return None
    scratch = [n * _F32.itemsize for n in p.workspace] if p.n_splits > 1 else []
    builder = PlanBuilder(backend, _arguments(mask, kv_length), outputs=[_nbytes(out)],
                          scratch=scratch)  # fmt: skip
    full = (b, hq, sq, skv)
    len_stride = 0
    if kv_length is not None and kv_length.size > 1:
        len_stride = strides.element_strides(kv_length, kv_length.shape)[-1]
    fields = {
        "batch": b,
        "hq": hq,
        "hkv": hkv,
        "sq": sq,
        "skv": skv,
        "d": d,
        "q_stride": qkv_strides[0],
        "k_stride": qkv_strides[1],
        "v_stride": qkv_strides[2],
        "mask_stride": strides.element_strides(mask, full) if mask is not None else [0] * 4,
        "kv_len_stride": len_stride,
        "keys_per_split": p.keys_per_split,
        "scale_log2": float(scale) * _LOG2E,
        "causal": int(causal),
        "kv_len_size": 0 if kv_length is None else kv_length.dtype.itemsize,
        "n_splits": p.n_splits,
    }
    # 16-byte tile copies of q, k, v and 16-byte stores of out.
    addresses = [("q", 0, 0, 16), ("k", 1, 0, 16), ("v", 2, 0, 16)]
    addresses.append(("out", builder.output(0), 0, 16))
    arg = 3
    if mask is not None:
        addresses.append(("mask", arg, 0, 1))
        arg += 1
    if kv_length is not None:
        addresses.append(("kv_len", arg, 0, kv_length.dtype.itemsize))
    if p.n_splits > 1:
        addresses.append(("ws_o", builder.scratch_arg(0), 0, 4))
        addresses.append(("ws_ml", builder.scratch_arg(1), 0, 4))
    for launch in (p.main, p.combine):
        if launch is None:
            continue
        fn = backend.function(launch.file, launch.defines, launch.kernel)
        if launch.shared:
            backend.allow_shared(fn, launch.shared)
        builder.launch(fn, launch.grid, launch.block, "gk_attn_tc_args", fields,
                       shared=launch.shared, addresses=addresses)  # fmt: skip
    return builder.build()


def _fields(q, k, kv_length, qkv_strides, causal, scale) -> dict:
    """gk_attn_tc_args' fields of an unmasked prefill call without key splits."""
    b, hq, sq, d = q.shape
    len_stride = 0
    if kv_length is not None and kv_length.size > 1:
        len_stride = strides.element_strides(kv_length, kv_length.shape)[-1]
    return {
        "batch": b,
        "hq": hq,
        "hkv": k.shape[1],
        "sq": sq,
        "skv": k.shape[2],
        "d": d,
        "q_stride": qkv_strides[0],
        "k_stride": qkv_strides[1],
        "v_stride": qkv_strides[2],
        "mask_stride": [0] * 4,
        "kv_len_stride": len_stride,
        "keys_per_split": 0,
        "scale_log2": float(scale) * _LOG2E,
        "causal": int(causal),
        "kv_len_size": 0 if kv_length is None else kv_length.dtype.itemsize,
        "n_splits": 1,
    }


def sm90_params(backend, fn) -> tuple[int, int, int, int]:
    """Byte offsets of gk_attn_sm90's parameters (the tensor maps of q, k, v, the argument
    block) in its parameter buffer as the driver reports them, checked against their sizes."""
    params = backend.param_layout(fn, 4)
    size = arg_struct("gk_attn_tc_args").size
    tma = _native.TENSOR_MAP_BYTES
    if [s for _, s in params] != [tma, tma, tma, size]:
        raise RuntimeError(
            f"gk_attn_sm90's parameters are {params} (offset, size): expected three {tma}-byte "
            f"tensor maps and the {size}-byte gk_attn_tc_args"
        )
    return tuple(o for o, _ in params)


def _plan_sm90(backend, q, k, v, kv_length, out, causal, scale, mma, kind, limit):
    """The unmasked prefill on kernels/attention_sm90.cu (wgmma fed by TMA), or None where it
    does not serve the call (a mask, another head_dim, operands TMA cannot address)."""
    b, hq, sq, d = q.shape
    qkv_strides = [list(strides.element_strides(x, x.shape)) for x in (q, k, v)]
    checked = [
        geometry.sm90_strides(x.shape, s) for x, s in zip((q, k, v), qkv_strides, strict=True)
    ]
    aligned = min(x.align for x in (q, k, v)) >= 16
    if not geometry.sm90_serves(d, kind, checked, aligned):
        return None
    tiles = geometry.sm90_tiles(d, scale, causal)
    # The kernel steps its unit index by the grid in 32 bits.
    if tiles.persist and geometry.sm90_units(b, hq, sq, causal) > 0x7FFFFFFF - backend.sm_count:
        return None
    launch = geometry.sm90_prefill(
        mma, b, hq, sq, d, causal=causal, sm_count=backend.sm_count, tiles=tiles
    )
    if launch.shared > limit or max(launch.grid[1:]) > geometry.MAX_GRID_YZ:
        return None
    builder = PlanBuilder(backend, _arguments(None, kv_length), outputs=[_nbytes(out)])
    addresses = [("out", builder.output(0), 0, 16)]
    if kv_length is not None:
        addresses.append(("kv_len", 3, 0, kv_length.dtype.itemsize))
    fn = backend.function(launch.file, launch.defines, launch.kernel)
    backend.allow_shared(fn, launch.shared)
    at_q, at_k, at_v, at_args = sm90_params(backend, fn)
    rows = (geometry.sm90_q_rows(tiles), tiles.keys, tiles.keys)
    tensor_maps = [
        (at, arg, 0, geometry.sm90_map(x.dtype.name, x.shape, s, r).descriptor())
        for arg, (at, x, s, r) in enumerate(
            zip((at_q, at_k, at_v), (q, k, v), qkv_strides, rows, strict=True)
        )
    ]
    fields = _fields(q, k, kv_length, qkv_strides, causal, scale)
    builder.launch(fn, launch.grid, launch.block, "gk_attn_tc_args", fields, shared=launch.shared,
                   addresses=addresses, at=at_args, tensor_maps=tensor_maps)  # fmt: skip
    return builder.build()


def _splits(sm_count: int, blocks: int, n_tiles: int) -> tuple[int, int]:
    """(n_splits, tiles_per_split): keys are split over blocks when the grid alone would leave
    most of the GPU idle (decode: one query row per head, long key ranges)."""
    target = 2 * sm_count
    if blocks >= target or n_tiles < 2 * _MIN_TILES_PER_SPLIT:
        return 1, max(n_tiles, 1)
    splits = min(-(-target // blocks), n_tiles // _MIN_TILES_PER_SPLIT)
    per = -(-n_tiles // splits)
    return -(-n_tiles // per), per


def _plan_cuda_cores(backend, q, k, v, mask, out: Layout, causal: bool, scale: float):
    """kernels/attention.cu; keys split over blocks (decode) use two per-call workspaces and a
    combine launch."""
    batch, hq, sq, d = q.shape
    hkv, skv = k.shape[1], k.shape[2]
    file, defines = kernels.attention(q.dtype, d, _mask_kind(mask))
    per_kv_head = hq // hkv * sq
    warps = min(max(-(-per_kv_head // _C["GK_ATTN_ROWS"]), 1), _C["GK_ATTN_MAX_WARPS"])
    block_rows = warps * _C["GK_ATTN_ROWS"]
    m_blocks = -(-per_kv_head // block_rows)
    bh = batch * hkv
    keys = _C["GK_ATTN_KEYS"]
    n_splits, tiles_per_split = _splits(backend.sm_count, m_blocks * bh, -(-skv // keys))
    acc = np.dtype(np.float64 if q.dtype == np.float64 else np.float32)
    rows = batch * hq * sq
    scratch = [n_splits * rows * d * acc.itemsize, n_splits * rows * 2 * acc.itemsize]
    b = PlanBuilder(backend, _arguments(mask, None), outputs=[_nbytes(out)],
                    scratch=scratch if n_splits > 1 else [])  # fmt: skip
    if rows == 0 or d == 0:
        return b.build()
    t = q.dtype.itemsize
    pad = _C["GK_ATTN_PAD_BYTES"] // t if t < _C["GK_ATTN_PAD_BYTES"] else 1
    shared = block_rows * d * acc.itemsize + keys * (d + pad) * t + keys * d * t
    limit = backend.device.max_shared_per_block_optin
    if shared > limit:
        raise ValueError(
            f"attention: head_dim {d} needs {shared} bytes of shared memory per block; this GPU "
            f"has {limit}"
        )
    if m_blocks > 0x7FFFFFFF or bh > geometry.MAX_GRID_YZ or n_splits > geometry.MAX_GRID_YZ:
        raise ValueError("attention: too many (batch, kv head) pairs for one launch")
    fn = backend.function(file, defines, "gk_attention")
    if shared:
        backend.allow_shared(fn, shared)
    full = (batch, hq, sq, skv)
    fields = {
        "batch": batch,
        "hq": hq,
        "hkv": hkv,
        "sq": sq,
        "skv": skv,
        "d": d,
        "q_stride": strides.element_strides(q, q.shape),
        "k_stride": strides.element_strides(k, k.shape),
        "v_stride": strides.element_strides(v, v.shape),
        "mask_stride": strides.element_strides(mask, full) if mask is not None else [0] * 4,
        "tiles_per_split": tiles_per_split,
        "scale_log2": float(scale) * _LOG2E,
        "causal": int(causal),
        "n_splits": n_splits,
    }
    addresses = [("q", 0, 0, 1), ("k", 1, 0, 1), ("v", 2, 0, 1), ("out", b.output(0), 0, 1)]
    if mask is not None:
        addresses.append(("mask", 3, 0, 1))
    if n_splits > 1:
        addresses += [("ws_o", b.scratch_arg(0), 0, 1), ("ws_ml", b.scratch_arg(1), 0, 1)]
    grid = (m_blocks, bh, n_splits)
    b.launch(fn, grid, warps * _C["GK_LANES"], "gk_attn_args", fields, shared=shared,
             addresses=addresses)  # fmt: skip
    if n_splits > 1:
        combine = backend.function(file, defines, "gk_attention_combine")
        grid = backend.blocks_for(rows * _C["GK_LANES"], _C["GK_BLOCK"])
        b.launch(combine, grid, _C["GK_BLOCK"], "gk_attn_args", fields, addresses=addresses)
    return b.build()


def _nbytes(layout: Layout) -> int:
    return math.prod(layout.shape) * layout.dtype.itemsize
