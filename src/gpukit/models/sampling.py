"""How the next token is chosen, as kernels/sample.cu does it on the device (the CPU backend
repeats it in NumPy): greedy (temperature 0) is the argmax, the first of equal maxima; otherwise
a draw from softmax(logits / temperature) restricted to the top_k largest logits (every logit
equal to the k-th is kept, as transformers' top-k keeps them), then to the fewest largest logits
whose probability mass reaches top_p (again keeping ties). Weights are computed in float32 and
counted in units of 2^-32 of the largest one (a token under that is never drawn); the draw is a
Philox4x32-10 uniform with key `seed` and counter (row, position): the same seed gives the same
tokens, in a captured graph or not. The parameters live in device memory, so one captured decode
step serves every sampling setting."""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import array as _array
from ..runtime.args import arg_struct


def check(temperature, top_k, top_p) -> tuple[float, int, float]:
    """(temperature, top_k (0: none), top_p (1: none)), checked."""
    try:
        temperature = float(temperature)
    except (TypeError, ValueError):
        raise TypeError(f"temperature must be a number, not {temperature!r}") from None
    if not temperature >= 0 or temperature == math.inf:  # NaN too
        raise ValueError(f"temperature must be >= 0 and finite, got {temperature}")
    if top_k is None:
        top_k = 0
    else:
        try:
            top_k = operator.index(top_k)
        except TypeError:
            raise TypeError(f"top_k must be an int, not {type(top_k).__name__}") from None
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
    if top_p is None:
        top_p = 1.0
    else:
        try:
            top_p = float(top_p)
        except (TypeError, ValueError):
            raise TypeError(f"top_p must be a number, not {top_p!r}") from None
        if not 0 < top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    return temperature, top_k, top_p


def params_bytes(temperature, top_k, top_p, seed, eos) -> bytes:
    """A gk_sample_params block: what kernels/sample.cu reads from device memory."""
    return bytes(
        arg_struct("gk_sample_params").pack(
            temperature=temperature,
            top_p=top_p,
            top_k=top_k,
            seed=seed & (2**64 - 1),
            eos=-1 if eos is None else eos,
        )
    )


def params_array(block: bytes, rt=None):
    """The block as a device array of bytes (copied there; not inside a graph capture)."""
    return _array.asarray(np.frombuffer(block, np.uint8), rt=rt)


def draw_seed(seed) -> int:
    """A 64-bit Philox key: `seed` (an int), or fresh entropy for None."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    try:
        return operator.index(seed) & (2**64 - 1)
    except TypeError:
        raise TypeError(f"seed must be an int or None, not {type(seed).__name__}") from None
