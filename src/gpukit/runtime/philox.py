"""Philox4x32-10 and the conversions of kernels/philox.cu in vectorized NumPy: the CPU backend's
random numbers, the same as the GPU's for the same seed and call, bit for bit: every float
operation here is one NumPy float64 (or exact) operation that the kernel performs with the same
rounding (no fused multiply-adds, no math-library functions but the correctly rounded sqrt)."""

from __future__ import annotations

import numpy as np

from .args import CONSTANTS

_M32 = 0xFFFFFFFF
_MUL0, _MUL1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_WEYL0, _WEYL1 = 0x9E3779B9, 0xBB67AE85
_SHIFT = np.uint64(32)
_U32 = np.uint64(_M32)

# Elements per group of four words, by kernel: 32-bit draws, or 64-bit ones (doubles, wide ints).
_PER_32, _PER_64 = CONSTANTS["GK_PHILOX_PER_GROUP_32"], CONSTANTS["GK_PHILOX_PER_GROUP_64"]
PER_GROUP = {
    "gk_rand_f": _PER_32,
    "gk_rand_d": _PER_64,
    "gk_randn_f": _PER_32,
    "gk_randn_d": _PER_64,
    "gk_randint_32": _PER_32,
    "gk_randint_64": _PER_64,
}


def uniform_bits(dtype: np.dtype) -> int:
    """Random bits of a float-path uniform stored as `dtype`: its significand, at most 24."""
    return min(np.finfo(dtype).nmant + 1, 24) if dtype.kind == "f" else 24


def philox4x32(groups: np.ndarray, offset: int, seed: int) -> list[np.ndarray]:
    """The four uint32 words of counter (group lo, group hi, offset lo, offset hi) under key
    (seed lo, seed hi), for every group (a uint64 array)."""
    c0 = (groups & _U32).astype(np.uint32)
    c1 = (groups >> _SHIFT).astype(np.uint32)
    c2 = np.full(groups.shape, offset & _M32, np.uint32)
    c3 = np.full(groups.shape, (offset >> 32) & _M32, np.uint32)
    k0, k1 = seed & _M32, (seed >> 32) & _M32
    for _ in range(10):
        p0 = c0.astype(np.uint64) * _MUL0
        p1 = c2.astype(np.uint64) * _MUL1
        c0, c1, c2, c3 = (
            (p1 >> _SHIFT).astype(np.uint32) ^ c1 ^ np.uint32(k0),
            p1.astype(np.uint32),
            (p0 >> _SHIFT).astype(np.uint32) ^ c3 ^ np.uint32(k1),
            p0.astype(np.uint32),
        )
        k0, k1 = (k0 + _WEYL0) & _M32, (k1 + _WEYL1) & _M32
    return [c0, c1, c2, c3]


def _uniform_f(w: np.ndarray, bits: int, open0: bool) -> np.ndarray:
    x = (w >> np.uint32(32 - bits)) + np.uint32(open0)
    return x.astype(np.float32) * np.float32(1.0 / (1 << bits))


def _uniform_d(hi: np.ndarray, lo: np.ndarray, open0: bool) -> np.ndarray:
    x = ((hi.astype(np.uint64) << _SHIFT) | lo.astype(np.uint64)) >> np.uint64(11)
    return (x + np.uint64(open0)).astype(np.float64) * (1.0 / 2.0**53)


def _mulhi64(x: np.ndarray, y: int) -> np.ndarray:
    """The high 64 bits of x * y (uint64 array times a 64-bit int), from 32-bit halves."""
    x0, x1 = x & _U32, x >> _SHIFT
    y0, y1 = np.uint64(y & _M32), np.uint64(y >> 32)
    p00, p01, p10, p11 = x0 * y0, x0 * y1, x1 * y0, x1 * y1
    mid = (p00 >> _SHIFT) + (p01 & _U32) + (p10 & _U32)
    return p11 + (p01 >> _SHIFT) + (p10 >> _SHIFT) + (mid >> _SHIFT)


# Series coefficients of kernels/philox.cu: 1/(2k+1), (-1)^k/(2k+1)!, (-1)^k/(2k)!.
_LOG = [1.0, 0.3333333333333333, 0.2, 0.14285714285714285, 0.1111111111111111,
        0.09090909090909091, 0.07692307692307693, 0.06666666666666667, 0.058823529411764705,
        0.05263157894736842, 0.047619047619047616, 0.043478260869565216]  # fmt: skip
_SIN = [1.0, -0.16666666666666666, 0.008333333333333333, -0.0001984126984126984,
        2.7557319223985893e-06, -2.505210838544172e-08, 1.6059043836821613e-10,
        -7.647163731819816e-13, 2.8114572543455206e-15]  # fmt: skip
_COS = [1.0, -0.5, 0.041666666666666664, -0.001388888888888889, 2.48015873015873e-05,
        -2.755731922398589e-07, 2.08767569878681e-09, -1.1470745597729725e-11,
        4.779477332387385e-14, -1.5619206968586225e-16]  # fmt: skip


def _horner(coeffs, z):
    p = np.full(z.shape, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        p = p * z + c
    return p


def _log_unit(u):
    """gk_log_unit: log(u) for u in (0, 1]."""
    m, e = np.frexp(u)
    low = m < 0.7071067811865476
    m = np.where(low, m * 2.0, m)
    e = np.where(low, e - 1, e)
    s = (m - 1.0) / (m + 1.0)
    return e.astype(np.float64) * 0.6931471805599453 + (2.0 * s) * _horner(_LOG, s * s)


def _box_muller(u1, u2):
    """gk_box_muller: (radius cos, radius sin) of 2 pi u2, radius = sqrt(-2 log u1)."""
    radius = np.sqrt(-2.0 * _log_unit(u1))
    q = np.floor(u2 * 4.0)
    r = u2 - q * 0.25
    flip = r > 0.125
    x = 6.283185307179586 * np.where(flip, 0.25 - r, r)
    x2 = x * x
    sx, pc = x * _horner(_SIN, x2), _horner(_COS, x2)
    s, c = np.where(flip, pc, sx), np.where(flip, sx, pc)
    quadrant = q.astype(np.int64)
    cos = np.choose(quadrant, [c, -s, -c, s])
    sin = np.choose(quadrant, [s, c, -s, -c])
    return radius * cos, radius * sin


def generate(kernel: str, n: int, dtype: np.dtype, seed: int, offset: int, bits: int, **params):
    """The n elements kernel `kernel` of philox.cu stores as `dtype` (params: lo, scale, affine,
    low, range as in gk_philox_args)."""
    per = PER_GROUP[kernel]
    groups = np.arange(-(-n // per), dtype=np.uint64)
    w = philox4x32(groups, offset, seed)
    if kernel == "gk_rand_f":
        vals = [_uniform_f(x, bits, False) for x in w]
    elif kernel == "gk_rand_d":
        vals = [_uniform_d(w[0], w[1], False), _uniform_d(w[2], w[3], False)]
    elif kernel == "gk_randn_f":
        vals = []
        for j in range(2):
            u1 = _uniform_f(w[2 * j], 24, True).astype(np.float64)
            u2 = _uniform_f(w[2 * j + 1], 24, False).astype(np.float64)
            vals += [z.astype(np.float32) for z in _box_muller(u1, u2)]
    elif kernel == "gk_randn_d":
        vals = list(_box_muller(_uniform_d(w[0], w[1], True), _uniform_d(w[2], w[3], False)))
    elif kernel == "gk_randint_32":
        low, rng = np.uint64(params["low"]), np.uint64(params["range"])
        vals = [low + ((x.astype(np.uint64) * rng) >> _SHIFT) for x in w]
    else:
        low, rng = np.uint64(params["low"]), params["range"]
        vals = []
        for j in range(2):
            x = (w[2 * j].astype(np.uint64) << _SHIFT) | w[2 * j + 1].astype(np.uint64)
            vals.append(low + (_mulhi64(x, rng) if rng else x))
    out = np.stack(vals, axis=1).reshape(-1)[:n]
    if out.dtype.kind == "u":  # integers: wrap to int64 as the kernel's casts do
        return out.view(np.int64).astype(dtype)
    if params.get("affine"):
        out = (params["lo"] + params["scale"] * out.astype(np.float64)).astype(out.dtype)
    return out.astype(dtype)
