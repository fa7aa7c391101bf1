"""Scaled dot-product attention, fused (flash-attention style on the GPU: no score matrix)."""

from __future__ import annotations

import math

import numpy as np

from ..array import GPUArray, alignment, asarray, cached_plan, operands
from ..base import dtypes as _dtypes
from ..base import shapes as _shapes
from ..views import broadcast_to, concatenate
from ._checks import float_array, real, same_device
from ._plans import contiguous, describe, layout, result, run

MAX_HEAD_DIM = 256


def _mask(mask, q: GPUArray, full: tuple) -> GPUArray:
    if not isinstance(mask, GPUArray):
        (mask,), _ = operands(mask)
        mask = mask if isinstance(mask, GPUArray) else asarray(mask, rt=q._rt)
    same_device("scaled_dot_product_attention", q, mask)
    if mask.dtype.kind != "b" and not _dtypes.is_floating(mask.dtype):
        raise TypeError(
            "scaled_dot_product_attention: mask must be boolean (True: attend) or a float "
            f"(added to the scores), got {mask.dtype.name}"
        )
    try:
        fits = mask.ndim <= 4 and _shapes.broadcast(mask.shape, full) == full
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"scaled_dot_product_attention: mask of shape {mask.shape} does not broadcast to "
            f"(batch, q heads, q len, kv len) = {full}"
        )
    if mask.dtype.kind != "b" and mask.dtype != q.dtype:
        mask = mask.astype(q.dtype)
    return mask


def _kv_length(kv_length, q: GPUArray, batch: int) -> GPUArray:
    if not isinstance(kv_length, GPUArray):
        kv_length = asarray(np.asarray(kv_length), rt=q._rt)
    same_device("scaled_dot_product_attention", q, kv_length)
    if kv_length.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(
            "scaled_dot_product_attention: kv_length must be int32 or int64, got "
            f"{kv_length.dtype.name}"
        )
    if kv_length.size not in (1, batch) or kv_length.ndim > 1:
        raise ValueError(
            "scaled_dot_product_attention: kv_length must hold one length or one per batch entry "
            f"({batch}), got shape {kv_length.shape}"
        )
    return kv_length.reshape(kv_length.size)


def _cut_keys(q, k, v, mask, causal: bool, scale: float, kv_length: GPUArray) -> GPUArray:
    """kv_length where no kernel reads it on the device: read here (a host synchronization), each
    batch entry (or all, for one length) attending to its first keys."""
    b, hq, sq, _ = q.shape
    skv = k.shape[2]
    lengths = np.clip(kv_length.to_numpy().astype(np.int64), 0, skv)
    full = None if mask is None else broadcast_to(mask, (b, hq, sq, skv))
    if lengths.size == 1:
        parts = [(slice(None), int(lengths[0]))]
    else:
        parts = [(slice(i, i + 1), int(n)) for i, n in enumerate(lengths)]
    outs = []
    for rows, n in parts:
        m = None if full is None else full[rows, :, :, :n]
        outs.append(
            scaled_dot_product_attention(q[rows], k[rows, :, :n], v[rows, :, :n], m, causal, scale)
        )
    return outs[0] if len(outs) == 1 else concatenate(outs, axis=0)


def scaled_dot_product_attention(
    q,
    k,
    v,
    mask=None,
    is_causal: bool = False,
    scale: float | None = None,
    kv_length=None,
) -> GPUArray:
    """softmax(q @ k^T * scale + mask) @ v per (batch, head): q (batch, hq, sq, d), k and v
    (batch, hkv, skv, d) with hq a multiple of hkv (grouped-query attention: query head h reads
    kv head h // (hq // hkv)). scale defaults to 1 / sqrt(d). is_causal lets query i see keys
    j <= i + skv - sq (aligned to the end, as with a KV cache). mask broadcasts to
    (batch, hq, sq, skv): boolean (True attends) or float (added to the scores). A query row
    that sees no key gives zeros. Result (batch, hq, sq, d), contiguous, in q's dtype.

    kv_length (decode with a preallocated KV cache): an int32 / int64 array on q's device
    holding the number of valid keys, one for all or one per batch entry (shape (), (1,) or
    (batch,)); keys at or past it are ignored (values are clamped to [0, skv]) and causal rows
    align to it. float16 / bfloat16 on the tensor-core kernels read it on the device, so the
    launch does not depend on its value (a captured decode step replays at every position);
    other calls on a GPU read it back first."""
    name = "scaled_dot_product_attention"
    q = float_array(q, name, "q")
    k = float_array(k, name, "k", rt=q._rt)
    v = float_array(v, name, "v", rt=q._rt)
    same_device(name, q, k, v)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(
            f"{name}: q, k and v must share a dtype, got {q.dtype.name}, {k.dtype.name}, "
            f"{v.dtype.name}"
        )
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(
            f"{name}: q, k, v must be 4-D (batch, heads, seq, head_dim), got shapes "
            f"{q.shape}, {k.shape}, {v.shape}"
        )
    b, hq, sq, d = q.shape
    if k.shape != v.shape:
        raise ValueError(f"{name}: k of shape {k.shape} and v of shape {v.shape} differ")
    if k.shape[0] != b or k.shape[3] != d:
        raise ValueError(
            f"{name}: k of shape {k.shape} does not match q of shape {q.shape} in batch or head_dim"
        )
    hkv, skv = k.shape[1], k.shape[2]
    if hkv == 0 or hq % hkv:
        raise ValueError(
            f"{name}: q heads ({hq}, q of shape {q.shape}) must be a multiple of kv heads "
            f"({hkv}, k of shape {k.shape})"
        )
    if d > MAX_HEAD_DIM:
        raise ValueError(f"{name}: head_dim {d} (q of shape {q.shape}) exceeds {MAX_HEAD_DIM}")
    if mask is not None:
        mask = _mask(mask, q, (b, hq, sq, skv))
    if kv_length is not None:
        kv_length = _kv_length(kv_length, q, b)
    scale = 1.0 / math.sqrt(d) if scale is None else real(scale, name, "scale")
    rt, causal = q._rt, bool(is_causal)
    out = contiguous(q.dtype, q.shape)
    # The tensor-core kernels copy q, k, v in 16-byte pieces: a plan holds for one alignment.
    aligned = tuple(alignment(x) for x in (q, k, v))
    key = ("attention", rt, causal, scale, *describe(q, k, v, mask, kv_length), aligned)

    def make():
        m = None if mask is None else layout(mask)
        n = None if kv_length is None else layout(kv_length)
        return rt.plan_attention(layout(q), layout(k), layout(v), m, n, out, causal, scale)

    arrays = [x for x in (q, k, v, mask, kv_length) if x is not None]
    if kv_length is not None and cached_plan(key, make) is None:
        return _cut_keys(q, k, v, mask, causal, scale, kv_length)
    return result(run(key, make, rt, *arrays), out, rt)
