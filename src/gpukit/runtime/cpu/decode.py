"""gpukit.models' decode kernels on the CPU backend (kernels/qkv_cache.cu, kernels/sample.cu in
NumPy): the same positions read from the device length, the same integer weights and Philox
draws, so a generate call makes the same tokens as on a GPU given the same logits (up to float32
rounding of the exponentials)."""

from __future__ import annotations

import struct

import numpy as np

from ..args import arg_struct
from ..philox import philox4x32

_F32 = np.dtype(np.float32)


def _acc(dtype: np.dtype):
    return np.float64 if dtype == np.float64 else np.float32


def qkv_cache(qkv, cos, sin, length, q_out, k_cache, v_cache, hq, hkv, rotary) -> None:
    """See gk_qkv_cache_args: q rotated into q_out, k and v written into the caches."""
    b, s, _ = qkv.shape
    d = q_out.shape[-1]
    half, cap = d // 2, k_cache.shape[2]
    acc = _acc(qkv.dtype)
    pos = int(length[0]) - s + np.arange(s)
    placed = (pos >= 0) & (pos < cap)
    if rotary:
        placed &= pos < cos.shape[0]
    x = qkv.astype(acc).reshape(b, s, hq + 2 * hkv, d)
    if rotary:
        at = np.where(placed, pos, 0)
        c, sn = cos[at].astype(acc)[None, :, None], sin[at].astype(acc)[None, :, None]
        lo, hi = x[..., : hq + hkv, :half], x[..., : hq + hkv, half:]
        x[..., : hq + hkv, :] = np.concatenate([lo * c - hi * sn, hi * c + lo * sn], axis=-1)
    q = np.where(placed[None, :, None, None], x[:, :, :hq], 0)
    np.copyto(q_out, q.transpose(0, 2, 1, 3), casting="unsafe")
    where = pos[placed]
    k = x[:, placed, hq : hq + hkv].transpose(0, 2, 1, 3)
    v = x[:, placed, hq + hkv :].transpose(0, 2, 1, 3)
    k_cache[:, :, where] = k  # cast (rounded) to the caches' dtype, as the kernel stores
    v_cache[:, :, where] = v


def order_keys(z: np.ndarray) -> np.ndarray:
    """kernels/sample.cu's gk_order_key: larger float32 values give larger uint32 keys."""
    u = z.astype(_F32).view(np.uint32)
    return np.where(u & np.uint32(0x80000000), ~u, u | np.uint32(0x80000000))


def read_params(params: np.ndarray) -> dict:
    """The fields of a gk_sample_params held in `params` (its bytes)."""
    s = arg_struct("gk_sample_params")
    raw = params.tobytes()
    return {
        name: struct.unpack_from("<" + fmt, raw, offset)[0]
        for name, (fmt, offset, _) in s.fields.items()
    }


def _threshold(keys: np.ndarray, weights: np.ndarray, need: int) -> np.uint32:
    """The largest key whose elements at or above it weigh at least `need`."""
    order = np.argsort(keys, kind="stable")[::-1]
    reached = np.cumsum(weights[order], dtype=np.uint64) >= np.uint64(need)
    return keys[order][int(np.argmax(reached))]


def sample_row(z: np.ndarray, p: dict, row: int, position: int, done: bool, exp=np.exp) -> int:
    """The token gk_sample picks for one row of logits (`exp`: the float32 exponential; tests
    pass the one a host-compiled kernel used)."""
    if done:
        return int(p["eos"])
    keys = order_keys(z)
    best = int(np.argmax(keys))
    top = z.astype(_F32)[best]
    if not (p["temperature"] > 0 and np.isfinite(top)):
        return best
    n = z.size
    with np.errstate(all="ignore"):
        w = exp((z.astype(_F32) - top) / np.float32(p["temperature"])).astype(_F32)
    w = np.where(w >= 0, w, np.float32(0))
    weights = (w.astype(np.float64) * 4294967296.0).astype(np.uint64)
    floor = np.uint32(0)
    if 0 < p["top_k"] < n:
        floor = np.partition(keys, n - p["top_k"])[n - p["top_k"]]
    kept = np.where(keys >= floor, weights, np.uint64(0))
    mass = int(kept.sum(dtype=np.uint64))
    if p["top_p"] < 1.0:
        want = np.ceil(p["top_p"] * float(mass))
        need = 1 if want < 1.0 else mass if want >= float(mass) else int(want)
        floor = _threshold(keys, kept, need)
        kept = np.where(keys >= floor, weights, np.uint64(0))
        mass = int(kept.sum(dtype=np.uint64))
    w0, w1, _, _ = philox4x32(np.array([row], np.uint64), position, int(p["seed"]))
    bits = (int(w0[0]) << 32 | int(w1[0])) >> 11
    u = float(bits) * (1.0 / 9007199254740992.0)
    target = min(int(u * float(mass)), mass - 1)
    running = np.cumsum(kept, dtype=np.uint64)
    return int(np.searchsorted(running, np.uint64(target), side="right"))


def sample(logits, params, length, finished, next_ids, tokens) -> None:
    """See gk_sample_args; logits (rows, vocab), next_ids (rows,), tokens (rows, capacity)."""
    p = read_params(params)
    position = int(length[0])
    for row in range(logits.shape[0]):
        done = p["eos"] >= 0 and finished[row] != 0
        token = sample_row(logits[row], p, row, position, done)
        next_ids[row] = token
        if 0 <= position < tokens.shape[1]:
            tokens[row, position] = token
        if p["eos"] >= 0 and token == p["eos"]:
            finished[row] = 1
