"""The decode step's own ops, each one launch whose arguments do not change from position to
position: the rotary embedding fused with the KV-cache write, and the next token sampled on the
device (kernels/qkv_cache.cu, kernels/sample.cu)."""

from __future__ import annotations

import numpy as np

from ..array import GPUArray
from ..nn._plans import contiguous, describe, layout, result, run

_I32, _I64, _U8 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint8)


def qkv_into_cache(qkv: GPUArray, cos, sin, positions: GPUArray, k_cache: GPUArray,
                   v_cache: GPUArray, hq: int, hkv: int) -> GPUArray:  # fmt: skip
    """q of shape (batch, hq, s, d), rotated; k (rotated) and v written into the caches.

    qkv (batch, s, (hq + 2 hkv) d) holds the q, k and v heads of s tokens at positions
    positions[0] - s .. positions[0] - 1 (positions: the cache's int32 length on the device,
    already advanced past them); cos / sin: the rotary tables (rows of d / 2 angles), None for
    no rotation; caches (batch, hkv, capacity, d) with d contiguous."""
    b, s, width = qkv.shape
    d = k_cache.shape[-1]
    if width != (hq + 2 * hkv) * d or k_cache.shape != v_cache.shape:
        raise ValueError(
            f"qkv of shape {qkv.shape} does not hold {hq} + 2 x {hkv} heads of {d} for caches of "
            f"shape {k_cache.shape}"
        )
    if qkv.strides[-1] != qkv.itemsize:
        qkv = qkv.copy()
    rt, rotary = qkv._rt, cos is not None
    out = contiguous(qkv.dtype, (b, hq, s, d))
    tables = (cos, sin) if rotary else ()
    key = ("qkv_cache", rt, hq, hkv, *describe(qkv, *tables, positions, k_cache))

    def make():
        cs = (layout(cos), layout(sin)) if rotary else (None, None)
        return rt.plan_qkv_cache(layout(qkv), *cs, layout(positions), layout(k_cache), out, hq,
                                 hkv)  # fmt: skip

    return result(run(key, make, rt, qkv, *tables, positions, k_cache, v_cache), out, rt)


def sample_into(logits: GPUArray, params: GPUArray, positions: GPUArray, finished: GPUArray,
                next_ids: GPUArray, tokens: GPUArray) -> None:  # fmt: skip
    """The next token of each row of logits (rows, vocab), by the gk_sample_params in `params`
    (device bytes): written to next_ids (rows, 1) and tokens[row, positions[0]]; finished
    (rows,) int32 marks rows that produced the end token."""
    rt = logits._rt
    key = ("sample", rt, *describe(logits, next_ids, tokens))

    def make():
        ids = layout(next_ids.reshape(next_ids.shape[0]))
        return rt.plan_sample(layout(logits), ids, layout(tokens))

    run(key, make, rt, logits, params, positions, finished, next_ids, tokens)
