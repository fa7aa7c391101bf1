"""What every causal LM here shares: weights by name, the KV cache, the generate loop."""

from __future__ import annotations

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

    def weight(self, name: str, optional: bool = False):
        w = self.weights.get(name)
        if w is None and not optional:
            raise ValueError(
                f"the checkpoint has no tensor {name!r} (a {self.config.model_type} model needs it)"
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
        ids = np.asarray(input_ids, dtype=np.int64)
        squeeze = ids.ndim == 1
        ids = ids[None] if squeeze else ids
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError(f"input_ids must be (batch, seq) with seq >= 1, got shape {ids.shape}")
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


def _token_ids(input_ids):
    if isinstance(input_ids, _array.GPUArray):
        ids = input_ids
    else:
        ids = _array.asarray(np.asarray(input_ids, dtype=np.int64))
    if ids.ndim == 1:
        ids = ids.reshape(1, -1)
    if ids.ndim != 2 or ids.dtype.kind not in "iu":
        raise ValueError(f"input_ids must be integer (batch, seq), got {ids.dtype} {ids.shape}")
    return ids
