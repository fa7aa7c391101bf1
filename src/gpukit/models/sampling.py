"""The next token from a row of logits: greedy on the device, or a draw with temperature,
top-k and top-p on the host (one row of the vocabulary per sequence)."""

from __future__ import annotations

import operator

import numpy as np


def sample(logits, temperature: float, top_k: int | None, top_p: float | None, rng) -> np.ndarray:
    """logits: GPUArray (batch, vocab). Returns int64 (batch,)."""
    temperature = float(temperature)
    if not temperature >= 0:  # NaN too
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None:
        top_k = operator.index(top_k)
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
    if top_p is not None and not 0 < float(top_p) <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if temperature == 0:
        return logits.argmax(axis=-1).to_numpy().astype(np.int64)
    z = logits.to_numpy().astype(np.float64) / temperature
    return np.array([_draw(row, top_k, top_p, rng) for row in z], dtype=np.int64)


def _draw(z: np.ndarray, top_k, top_p, rng) -> int:
    order = np.argsort(-z, kind="stable")
    if top_k is not None:
        order = order[:top_k]
    p = np.exp(z[order] - z[order[0]])
    p /= p.sum()
    if top_p is not None:
        # The smallest prefix whose mass reaches top_p (at least one token).
        keep = int(np.searchsorted(np.cumsum(p), top_p)) + 1
        order, p = order[:keep], p[:keep] / p[:keep].sum()
    return int(order[rng.choice(len(order), p=p)])
