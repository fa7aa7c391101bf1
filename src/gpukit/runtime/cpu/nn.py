"""gpukit.nn on the CPU backend: NumPy over views of pool memory, accumulating 16-bit floats in
float32 like the kernels."""

from __future__ import annotations

import numpy as np

# Query rows of one attention chunk are bounded so that the score block stays near 16M values.
_SCORES_PER_CHUNK = 1 << 24


def _acc(dtype: np.dtype):
    return np.float64 if dtype == np.float64 else np.float32


def _rows(kind, x, axis, weight, bias, eps):
    if kind in ("softmax", "log_softmax"):
        m = x.max(axis=axis, keepdims=True)
        shifted = x - m
        total = np.exp(shifted).sum(axis=axis, keepdims=True)
        if kind == "softmax":
            return np.exp(shifted) / total
        return shifted - np.log(total)
    if kind == "layer_norm":
        # Shifted by the row's first element, as the kernel does: a float32 mean of values
        # far from zero would be off by more than a small spread.
        centred = x - x[..., :1]
        centred -= centred.mean(axis=-1, keepdims=True)
        y = centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)
    else:
        y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _attention_chunk(q, k, v, allowed, additive, scale):
    """q (b, hkv, g, m, d), k / v (b, hkv, 1, skv, d), allowed / additive broadcastable to
    (b, hkv, g, m, skv) or None."""
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if additive is not None:
        s = s + additive
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    m = s.max(axis=-1, keepdims=True, initial=-np.inf)
    seen = m > -np.inf  # a row that sees no key at all gives zeros
    p = np.exp(s - np.where(seen, m, 0))
    total = p.sum(axis=-1, keepdims=True)
    return np.matmul(p, v) / np.where(seen, total, 1)


def rows(kind, s, axis, w, b, eps, o, r=None, h=None) -> None:
    """softmax / log_softmax / layer_norm / rms_norm of NumPy views into `o`; with a residual
    `r`, h = s + r (rounded to s's dtype, as the GPU stores it) is written to `h` and
    normalized instead."""
    if s.size == 0:
        return
    acc = _acc(s.dtype)
    x = s.astype(acc)
    if r is not None:
        np.copyto(h, x + r.astype(acc), casting="unsafe")
        x = h.astype(acc)
    w = None if w is None else w.astype(acc)
    b = None if b is None else b.astype(acc)
    np.copyto(o, _rows(kind, x, axis, w, b, eps), casting="unsafe")


def embedding(i, t, o) -> bool:
    """o = t[i]; False (nothing written) when an id is out of range."""
    if ((i < 0) | (i >= t.shape[0])).any():
        return False
    o[...] = t[i]
    return True


def rope(xv, c, s, o, interleaved: bool) -> None:
    acc = _acc(xv.dtype)
    xv, c, s = xv.astype(acc), c.astype(acc), s.astype(acc)
    half = xv.shape[-1] // 2
    if interleaved:
        lo, hi = (slice(0, None, 2), slice(1, None, 2))
    else:
        lo, hi = (slice(0, half), slice(half, None))
    x_lo, x_hi = xv[..., lo], xv[..., hi]
    o[..., lo] = x_lo * c - x_hi * s
    o[..., hi] = x_hi * c + x_lo * s


def attention(qv, kv, vv, mask, lengths, o, causal: bool, scale: float) -> None:
    """Attention of NumPy views into `o`; mask broadcasts to (batch, hq, sq, skv) or is None;
    lengths (None, one, or one per batch entry): only the first keys count, and causal rows align
    to them."""
    if o.size == 0:
        return
    b, hq, sq, _ = qv.shape
    skv = kv.shape[2]
    full_mask = None if mask is None else np.broadcast_to(mask, (b, hq, sq, skv))
    if lengths is None:
        _attention(qv, kv, vv, full_mask, o, causal, scale)
        return
    lengths = np.clip(lengths.reshape(-1).astype(np.int64), 0, skv)
    for i in range(b):
        n = int(lengths[i if lengths.size > 1 else 0])
        m = None if full_mask is None else full_mask[i : i + 1, ..., :n]
        cut = (slice(i, i + 1), slice(None), slice(0, n))
        _attention(qv[i : i + 1], kv[cut], vv[cut], m, o[i : i + 1], causal, scale)


def _attention(qv, kv, vv, full_mask, o, causal: bool, scale: float) -> None:
    """full_mask: (batch, hq, sq, skv) or None; o contiguous."""
    b, hq, sq, d = qv.shape
    hkv, skv = kv.shape[1], kv.shape[2]
    g = hq // hkv
    acc = _acc(qv.dtype)
    qg = qv.astype(acc).reshape(b, hkv, g, sq, d)
    kg = kv.astype(acc)[:, :, None]
    vg = vv.astype(acc)[:, :, None]
    if full_mask is not None:
        full_mask = full_mask.reshape(b, hkv, g, sq, skv)
    og = o.reshape(b, hkv, g, sq, d)
    step = max(1, _SCORES_PER_CHUNK // max(1, b * hq * skv))
    for i0 in range(0, sq, step):
        i1 = min(sq, i0 + step)
        allowed = additive = None
        if causal:
            rows_ = np.arange(i0, i1)[:, None] + (skv - sq)
            allowed = np.arange(skv)[None, :] <= rows_
        if full_mask is not None:
            chunk = full_mask[..., i0:i1, :]
            if chunk.dtype == np.bool_:
                allowed = chunk if allowed is None else allowed & chunk
            else:
                additive = chunk.astype(acc)
        res = _attention_chunk(qg[..., i0:i1, :], kg, vg, allowed, additive, scale)
        np.copyto(og[..., i0:i1, :], res, casting="unsafe")
