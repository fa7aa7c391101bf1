"""What every causal LM here shares: weights by name, the KV cache, the generate loop."""

from __future__ import annotations

import operator

import numpy as np

from .. import array as _array
from .kv_cache import KVCache
from .sampling import sample


class CausalLM:
    """Subclasses set `config`, `dtype`, `weights` and implement `forward(ids, cache, last_only)`
    returning logits (batch, s or 1, vocab) for int64 token ids (batch, s) on the device."""

    prefixes: tuple[str, ...] = ()

    def __init__(self, config, weights: dict):
        self.config = config
        self.weights = {self._strip(k): v for k, v in weights.items()}
        first = next(iter(self.weights.values()), None)
        if first is None:
            raise ValueError("the model folder holds no tensors")
        self.dtype = first.dtype

    def _strip(self, name: str) -> str:
        for p in self.prefixes:
            if name.startswith(p):
                return name[len(p) :]
        return name

    def weight(self, name: str, shape: tuple | None = None, optional: bool = False):
        """The tensor `name`, which config.json's sizes say has `shape` (when given)."""
        w = self.weights.get(name)
        if w is None and not optional:
            raise ValueError(
                f"the checkpoint has no tensor {name!r} (a {self.config.model_type} model needs it)"
            )
        if w is not None and shape is not None and w.shape != tuple(shape):
            raise ValueError(
                f"tensor {name!r} has shape {w.shape}, but config.json's sizes make it "
                f"{tuple(shape)}"
            )
        return w

    def new_cache(self, batch: int, capacity: int = 256) -> KVCache:
        c = self.config
        return KVCache(c.num_layers, batch, c.num_kv_heads, c.head_dim, self.dtype, capacity)

    def __call__(self, input_ids, cache: KVCache | None = None):
        """Logits (batch, seq, vocab) of every position; `cache` (optional) is continued."""
        ids = _token_ids(input_ids)
        cache = cache or self.new_cache(ids.shape[0], ids.shape[1])
        return self.forward(ids, cache, last_only=False)

    def generate(
        self,
        input_ids,
        max_new_tokens: int,
        temperature: float = 0.0,
        top_k: int | None = None,
        top_p: float | None = None,
        eos_token_id: int | None = None,
        seed: int | None = None,
    ) -> np.ndarray:
        """Token ids (batch, prompt + new) as NumPy int64. temperature 0 is greedy (argmax);
        otherwise logits / temperature, then top_k, then top_p (nucleus), then a draw. A row
        that produced `eos_token_id` is padded with it."""
        ids = _host_ids(input_ids)
        squeeze = ids.ndim == 1
        ids = ids[None] if squeeze else ids
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError(f"input_ids must be (batch, seq) with seq >= 1, got shape {ids.shape}")
        max_new_tokens = _count("max_new_tokens", max_new_tokens)
        if eos_token_id is not None:
            eos_token_id = _count("eos_token_id", eos_token_id)
        rng = np.random.default_rng(seed)
        cache = self.new_cache(ids.shape[0], ids.shape[1] + max_new_tokens)
        pieces, finished = [ids], np.zeros(ids.shape[0], dtype=bool)
        step_ids = ids
        for _ in range(max_new_tokens):
            logits = self.forward(_array.asarray(step_ids), cache, last_only=True)
            new = sample(logits[:, -1], temperature, top_k, top_p, rng)
            if eos_token_id is not None:
                new = np.where(finished, eos_token_id, new)
                finished |= new == eos_token_id
            pieces.append(new[:, None])
            step_ids = new[:, None]
            if finished.all():
                break
        out = np.concatenate(pieces, axis=1)
        return out[0] if squeeze else out


def _count(name: str, value) -> int:
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _host_ids(input_ids) -> np.ndarray:
    """Token ids as int64 NumPy; floats, bools and strings are refused rather than truncated."""
    if isinstance(input_ids, _array.GPUArray):
        input_ids = input_ids.to_numpy()
    ids = np.asarray(input_ids)
    if ids.size == 0 and ids.dtype.kind == "f":  # [] or [[]]: no ids at all
        ids = ids.astype(np.int64)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"input_ids must be integers, got {ids.dtype.name} values")
    return ids.astype(np.int64)


def _token_ids(input_ids):
    if isinstance(input_ids, _array.GPUArray) and input_ids.dtype.kind in "iu":
        ids = input_ids
    else:
        ids = _array.asarray(_host_ids(input_ids))
    if ids.ndim == 1:
        ids = ids.reshape(1, -1)
    if ids.ndim != 2 or ids.shape[1] == 0:
        raise ValueError(f"input_ids must be (batch, seq) with seq >= 1, got shape {ids.shape}")
    return ids
