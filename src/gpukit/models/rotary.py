"""Rotary position tables (cos, sin) as Hugging Face computes them, kept on the device and grown
as positions are needed (before a decode step is captured: the step indexes them by the device's
position)."""

from __future__ import annotations

import math

import numpy as np

from .. import array as _array


def inverse_frequencies(head_dim: int, theta: float, scaling: dict | None) -> np.ndarray:
    inv = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    if scaling is None:
        return inv
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "linear":
        return inv / scaling["factor"]
    if kind == "llama3":
        factor = scaling["factor"]
        low, high = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0)
        old_len = scaling["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        scaled = np.where(wavelen > old_len / low, inv / factor, inv)
        smooth = (old_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelen >= old_len / high) & (wavelen <= old_len / low)
        return np.where(medium, smoothed, scaled)
    raise NotImplementedError(
        f"rope scaling {kind!r} is not supported (default, linear, llama3 are)"
    )


class RotaryTable:
    """cos/sin of shape (positions, head_dim / 2): one angle per rotated pair, as gpukit.nn.rope
    takes them."""

    def __init__(self, head_dim: int, theta: float, scaling: dict | None, dtype):
        self.inv_freq = inverse_frequencies(head_dim, theta, scaling)
        self.dtype = dtype
        self.cos = self.sin = None

    def _grow(self, n: int) -> None:
        size = 1 << max(6, (n - 1).bit_length())
        # float32 like transformers, then the model's dtype.
        angles = np.outer(np.arange(size, dtype=np.float32), self.inv_freq.astype(np.float32))
        self.cos = _array.asarray(np.cos(angles).astype(self.dtype))
        self.sin = _array.asarray(np.sin(angles).astype(self.dtype))

    def ensure(self, positions: int) -> None:
        """Tables for at least `positions` positions (decode steps index them on the device)."""
        if self.cos is None or self.cos.shape[0] < positions:
            self._grow(positions)

    def __call__(self, start: int, length: int):
        self.ensure(start + length)
        return self.cos[start : start + length], self.sin[start : start + length]
