"""Scaled dot-product attention in float64, the reference of the attention tests (the kernels
through gpukit, and the same kernels run on the host)."""

import math

import numpy as np


def attention_f64(q, k, v, mask=None, causal=False, scale=None, kv_length=None):
    """softmax(q k^T * scale + mask) v per (batch, head), grouped-query heads; causal aligned to
    the end of the keys; kv_length: None, or the number of valid keys (one for every batch entry
    or one per entry, clamped to the keys there); a row that sees no key gives zeros."""
    b, hq, sq, d = q.shape
    hkv, skv = k.shape[1], k.shape[2]
    q, k, v = (np.asarray(x).astype(np.float64) for x in (q, k, v))
    scale = 1 / math.sqrt(d) if scale is None else scale
    full = None if mask is None else np.broadcast_to(mask, (b, hq, sq, skv))
    lengths = None if kv_length is None else np.asarray(kv_length).reshape(-1)
    out = np.zeros((b, hq, sq, d))
    for i in range(b):
        n = skv if lengths is None else int(np.clip(lengths[i if lengths.size > 1 else 0], 0, skv))
        kk = np.repeat(k[i, :, :n], hq // hkv, axis=0)
        vv = np.repeat(v[i, :, :n], hq // hkv, axis=0)
        s = q[i] @ np.swapaxes(kk, -1, -2) * scale
        allowed = np.ones((hq, sq, n), bool)
        if causal:
            allowed &= np.arange(n)[None, :] <= np.arange(sq)[:, None] + n - sq
        if full is not None:
            m = full[i, :, :, :n]
            if m.dtype == np.bool_:
                allowed &= m
            else:
                s = s + m.astype(np.float64)
        s = np.where(allowed, s, -np.inf)
        top = s.max(-1, keepdims=True, initial=-np.inf)
        seen = top > -np.inf
        p = np.exp(s - np.where(seen, top, 0))
        out[i] = np.where(seen, p @ vv / np.where(seen, p.sum(-1, keepdims=True), 1), 0)
    return out
