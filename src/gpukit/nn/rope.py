"""Rotary position embedding (RoPE) and its cos/sin cache."""

from __future__ import annotations

import math
import operator

import numpy as np

from ..array import GPUArray, asarray
from ..base import dtypes as _dtypes
from ..base import shapes as _shapes
from ._checks import float_array, same_device
from ._plans import contiguous, describe, result, run
from ._plans import layout as _layout


def rope_cache(seq_len: int, dim: int, base: float = 10000.0, dtype="float32"):
    """(cos, sin), each (seq_len, dim // 2): angle p * base**(-2j / dim) for position p and pair j
    (computed in float64 on the host, then stored as `dtype`)."""
    seq_len, dim = operator.index(seq_len), operator.index(dim)
    if not (isinstance(base, (int, float, np.integer, np.floating)) and 0 < base < math.inf):
        raise ValueError(f"rope_cache: base must be a positive number, got {base!r}")
    if dim <= 0 or dim % 2:
        raise ValueError(f"rope_cache: dim must be a positive even number, got {dim}")
    if seq_len < 0:
        raise ValueError(f"rope_cache: seq_len must be >= 0, got {seq_len}")
    dtype = _dtypes.normalize(dtype)
    if not _dtypes.is_floating(dtype):
        raise TypeError(f"rope_cache: dtype must be a float dtype, got {dtype.name}")
    inv_freq = float(base) ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    angles = np.outer(np.arange(seq_len, dtype=np.float64), inv_freq)
    return asarray(np.cos(angles).astype(dtype)), asarray(np.sin(angles).astype(dtype))


def _angles(c, x: GPUArray, what: str) -> GPUArray:
    c = float_array(c, "rope", what, rt=x._rt)
    same_device("rope", x, c)
    target = (*x.shape[:-1], x.shape[-1] // 2)
    try:
        fits = _shapes.broadcast(c.shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"rope: {what} of shape {c.shape} does not broadcast to {target} (x of shape "
            f"{x.shape} has {x.shape[-1] // 2} rotated pairs per position)"
        )
    return c if c.dtype == x.dtype else c.astype(x.dtype)


def rope(x, cos, sin, layout: str = "half") -> GPUArray:
    """x rotated pairwise by the angles whose cos and sin are given: x is (..., seq, dim),
    e.g. (batch, heads, seq, dim); cos and sin (seq, dim // 2) or anything that broadcasts to
    (..., seq, dim // 2). layout "half" pairs j with j + dim/2 (GPT-NeoX, LLaMA rotate_half),
    "interleaved" pairs 2j with 2j + 1 (GPT-J). cos/sin are used in x's dtype."""
    if layout not in ("half", "interleaved"):
        raise ValueError(f'rope: layout must be "half" or "interleaved", not {layout!r}')
    x = float_array(x, "rope")
    if x.ndim < 1 or x.shape[-1] % 2:
        raise ValueError(f"rope: the last dimension of x must be even, got shape {x.shape}")
    c, s = _angles(cos, x, "cos"), _angles(sin, x, "sin")
    rt, interleaved = x._rt, layout == "interleaved"
    out = contiguous(x.dtype, x.shape)
    key = ("rope", rt, interleaved, *describe(x, c, s))
    buf = run(key, lambda: rt.plan_rope(_layout(x), _layout(c), _layout(s), out, interleaved),
              rt, x, c, s)  # fmt: skip
    return result(buf, out, rt)
