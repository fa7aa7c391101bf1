"""Keys and values of the positions seen so far, per layer, in device arrays preallocated to the
cache's capacity. The number of filled positions lives on the host (`length`, for prefill) and
on the device (`positions`, an int32 advanced by a launch), which is what a decode step reads:
its launches are then the same at every position, so a captured step replays unchanged."""

from __future__ import annotations

import operator

from .. import creation
from ..array import GPUArray
from ..elementwise import elementwise
from .fused import qkv_into_cache

_MIN_CAPACITY = 64


def round_capacity(n: int) -> int:
    """Capacities are powers of two (at least 64): caches of nearby lengths share a size, so a
    decode graph captured for one serves the others."""
    return max(_MIN_CAPACITY, 1 << max(0, int(n) - 1).bit_length())


class KVCache:
    """Per layer, k and v of shape (batch, kv_heads, capacity, head_dim); `length` positions are
    filled (`positions` holds the same count on the device). The capacity is rounded up to a
    power of two and doubles when exceeded (one copy), so a generate loop that reserves its
    length up front never copies."""

    def __init__(self, num_layers, batch, kv_heads, head_dim, dtype, capacity=256, window=None):
        self.num_layers, self.length = num_layers, 0
        self._shape = (batch, kv_heads, 0, head_dim)
        self.dtype = dtype
        self.window = window
        self.keys: list = [None] * num_layers
        self.values: list = [None] * num_layers
        self.positions = creation.zeros((1,), "int32")
        self.valid = None  # the decode step's mask of visible positions (attention by mask)
        self.attention = "mask"  # or "length": see gpukit.models.decode.attention_mode
        self.reserve(operator.index(capacity))

    @property
    def capacity(self) -> int:
        return self._shape[2]

    @property
    def batch(self) -> int:
        return self._shape[0]

    def reserve(self, capacity: int) -> None:
        if capacity <= self.capacity:
            return
        b, h, _, d = self._shape
        self._shape = (b, h, round_capacity(capacity), d)
        for store in (self.keys, self.values):
            for i, old in enumerate(store):
                new = creation.zeros(self._shape, self.dtype)
                if old is not None and self.length:
                    new[:, :, : self.length] = old[:, :, : self.length]
                store[i] = new
        self._slots = creation.arange(self.capacity, dtype="int32")
        if self.window is not None:
            self._window_slots = self._slots + self.window

    def reset(self) -> None:
        """Empties the cache (its memory stays)."""
        self.length = 0
        self.positions[...] = 0

    def advance(self, s: int) -> int:
        """Counts s new positions (growing the cache when needed); returns the first of them."""
        start, end = self.length, self.length + s
        if end > self.capacity:
            self.reserve(max(end, 2 * self.capacity))
        self.length = end
        self.advance_device(s)
        return start

    def advance_device(self, s: int) -> None:
        """positions += s on the device, and for a single new position the mask of the positions
        it sees (keys at or past `positions` are not filled; a sliding window hides the oldest)."""
        self.positions += s
        if s != 1:
            self.valid = None
            return
        valid = elementwise("less", self._slots, self.positions)
        if self.window is not None:
            seen = elementwise("greater_equal", self._window_slots, self.positions)
            valid = elementwise("logical_and", valid, seen)
        self.valid = valid.reshape(1, 1, 1, self.capacity)

    def write(self, layer: int, qkv: GPUArray, cos, sin, heads: int) -> GPUArray:
        """Writes the k and v heads of qkv (batch, s, (heads + 2 kv_heads) head_dim) at the last s
        positions (rotating k by cos / sin, when given) and returns q (batch, heads, s,
        head_dim), rotated likewise."""
        return qkv_into_cache(qkv, cos, sin, self.positions, self.keys[layer], self.values[layer],
                              heads, self._shape[1])  # fmt: skip

    def filled(self, layer: int) -> tuple[GPUArray, GPUArray]:
        """Views of the `length` filled positions of a layer (host-known length: prefill)."""
        end = self.length
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]
