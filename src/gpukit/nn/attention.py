"""Scaled dot-product attention, fused (flash-attention style on the GPU: no score matrix)."""

from __future__ import annotations

import math

from ..array import GPUArray, asarray, operands
from ..base import dtypes as _dtypes
from ..base import shapes as _shapes
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


def scaled_dot_product_attention(
    q, k, v, mask=None, is_causal: bool = False, scale: float | None = None
) -> GPUArray:
    """softmax(q @ k^T * scale + mask) @ v per (batch, head): q (batch, hq, sq, d), k and v
    (batch, hkv, skv, d) with hq a multiple of hkv (grouped-query attention: query head h reads
    kv head h // (hq // hkv)). scale defaults to 1 / sqrt(d). is_causal lets query i see keys
    j <= i + skv - sq (aligned to the end, as with a KV cache). mask broadcasts to
    (batch, hq, sq, skv): boolean (True attends) or float (added to the scores). A query row
    that sees no key gives zeros. Result (batch, hq, sq, d), contiguous, in q's dtype."""
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
    scale = 1.0 / math.sqrt(d) if scale is None else real(scale, name, "scale")
    rt, causal = q._rt, bool(is_causal)
    out = contiguous(q.dtype, q.shape)
    key = ("attention", rt, causal, scale, *describe(q, k, v, mask))

    def make():
        m = None if mask is None else layout(mask)
        return rt.plan_attention(layout(q), layout(k), layout(v), m, out, causal, scale)

    arrays = (q, k, v) if mask is None else (q, k, v, mask)
    return result(run(key, make, rt, *arrays), out, rt)
