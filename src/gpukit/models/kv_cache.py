"""Keys and values of the positions seen so far, per layer, in preallocated device arrays."""

from __future__ import annotations

from .. import creation


class KVCache:
    """Per layer, k and v of shape (batch, kv_heads, capacity, head_dim); `length` positions are
    filled. Capacity doubles when exceeded (one copy), so a generate loop that reserves its
    length up front never copies."""

    def __init__(self, num_layers, batch, kv_heads, head_dim, dtype, capacity=256):
        self.num_layers, self.length = num_layers, 0
        self._shape = (batch, kv_heads, 0, head_dim)
        self.dtype = dtype
        self.keys: list = [None] * num_layers
        self.values: list = [None] * num_layers
        self.reserve(capacity)

    @property
    def capacity(self) -> int:
        return self._shape[2]

    def reserve(self, capacity: int) -> None:
        if capacity <= self.capacity:
            return
        b, h, _, d = self._shape
        self._shape = (b, h, capacity, d)
        for store in (self.keys, self.values):
            for i, old in enumerate(store):
                new = creation.zeros(self._shape, self.dtype)
                if old is not None and self.length:
                    new[:, :, : self.length] = old[:, :, : self.length]
                store[i] = new

    def update(self, layer: int, k, v):
        """Writes k, v (batch, kv_heads, s, head_dim) after the cached positions and returns the
        views of all positions so far. `advance(s)` is called once all layers are updated."""
        s = k.shape[2]
        end = self.length + s
        if end > self.capacity:
            self.reserve(max(end, 2 * self.capacity))
        self.keys[layer][:, :, self.length : end] = k
        self.values[layer][:, :, self.length : end] = v
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]

    def advance(self, s: int) -> None:
        self.length += s
