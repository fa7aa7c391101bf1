"""What every causal LM here shares: weights by name, the KV cache, the forward passes (prefill of
many positions, the decode step of one), and generate (see gpukit.models.decode)."""

from __future__ import annotations

import operator

import numpy as np

from .. import array as _array
from . import decode as _decode
from . import sampling
from .kv_cache import KVCache, round_capacity

# Decode states (caches, captured steps) a model keeps, by (batch, capacity), the last used.
_STATES = 2


class CausalLM:
    """Subclasses set `config`, `dtype`, `weights` and implement `_forward(ids, cache, start,
    last_only, check)`: logits (batch, s or 1, vocab) for int token ids (batch, s) on the device at
    positions start .. start + s - 1 (the cache advanced past them already); s == 1 is the decode
    step, whose positions come from the device."""

    prefixes: tuple[str, ...] = ()

    def __init__(self, config, weights: dict):
        self.config = config
        self.weights = {self._strip(k): v for k, v in weights.items()}
        first = next(iter(self.weights.values()), None)
        if first is None:
            raise ValueError("the model folder holds no tensors")
        self.dtype = first.dtype
        self._states: dict = {}

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
        """An empty cache for `batch` sequences, preallocated for `capacity` positions (rounded
        up to a power of two, at least 64)."""
        c = self.config
        window = getattr(c, "sliding_window", None)
        cache = KVCache(c.num_layers, batch, c.num_kv_heads, c.head_dim, self.dtype, capacity,
                        window=window)  # fmt: skip
        self._prepare(cache.capacity)
        cache.attention = _decode.attention_mode(cache, c.num_heads) if c.num_layers else "mask"
        return cache

    def _prepare(self, capacity: int) -> None:
        """Makes whatever the forward passes read for positions below `capacity` (rotary
        tables), so that nothing is copied from the host inside a captured step."""

    def __call__(self, input_ids, cache: KVCache | None = None):
        """Logits (batch, seq, vocab) of every position; `cache` (optional) is continued."""
        ids, checked = _token_ids(input_ids, self.config.vocab_size)
        cache = cache or self.new_cache(ids.shape[0], ids.shape[1])
        return self.forward(ids, cache, last_only=False, _checked=checked)

    def forward(self, ids, cache: KVCache, last_only: bool, _checked: bool = False):
        """Logits of ids (batch, s) continuing `cache` (all positions, or the last with
        last_only). Ids on the device are checked against the vocabulary (a read back) unless
        they came from the host."""
        if not _checked:
            ids, _checked = _token_ids(ids, self.config.vocab_size)
        start = cache.advance(ids.shape[1])
        self._prepare(cache.capacity)
        return self._forward(ids, cache, start, last_only, check=not _checked)

    def forward_prefill(self, ids: np.ndarray, cache: KVCache):
        """The last position's logits of host ids (checked already) from an empty cache."""
        start = cache.advance(ids.shape[1])
        return self._forward(_array.asarray(ids), cache, start, True, check=False)

    def forward_step(self, ids, cache: KVCache, trace=None):
        """The decode step's logits (batch, 1, vocab) of ids (batch, 1) made on the device by
        the sampler (in range by construction); the cache's device length is advanced already.
        Launches only: it can be captured. `trace(part)`, where the model supports it, is
        called before each part of the step is queued (benchmarks/bench_models.py times them)."""
        if trace is not None:
            return self._forward(ids, cache, None, True, check=False, trace=trace)
        return self._forward(ids, cache, None, True, check=False)

    def decode_state(self, batch: int, positions: int) -> _decode.DecodeState:
        """The static arrays and captured step for `batch` rows up to `positions` positions."""
        key = (batch, round_capacity(positions))
        state = self._states.pop(key, None)
        if state is None:
            state = _decode.DecodeState(self, batch, key[1])
            while len(self._states) >= _STATES:
                self._states.pop(next(iter(self._states))).release()
        self._states[key] = state  # the most recent last
        return state

    def release_graphs(self) -> None:
        """Frees the decode caches and captured steps that generate keeps for reuse."""
        for state in self._states.values():
            state.release()
        self._states.clear()

    def generate(
        self,
        input_ids,
        max_new_tokens: int,
        temperature: float = 0.0,
        top_k: int | None = None,
        top_p: float | None = None,
        eos_token_id: int | None = None,
        seed: int | None = None,
        graph: bool = True,
    ) -> np.ndarray:
        """Token ids (batch, prompt + new) as NumPy int64. temperature 0 is greedy (argmax);
        otherwise a draw from softmax(logits / temperature) within the top_k largest logits and
        then the top_p mass (see gpukit.models.sampling), with Philox keyed by `seed`. A row that
        produced `eos_token_id` is padded with it; generation ends when every row has.

        The prompt runs through the big-matrix path; each decode step runs as a captured graph
        replayed per token (`graph=False`: the same launches one by one, the same tokens). The
        step's cache and graph are kept for later calls of the same batch size and length class
        (`release_graphs()` frees them)."""
        ids = _host_ids(input_ids)
        squeeze = ids.ndim == 1
        ids = ids[None] if squeeze else ids
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError(f"input_ids must be (batch, seq) with seq >= 1, got shape {ids.shape}")
        _check_vocabulary(ids, self.config.vocab_size)
        max_new_tokens = _count("max_new_tokens", max_new_tokens)
        if eos_token_id is not None:
            eos_token_id = _count("eos_token_id", eos_token_id)
        temperature, top_k, top_p = sampling.check(temperature, top_k, top_p)
        self._check_length(ids.shape[1] + max(max_new_tokens, 1) - 1)  # positions fed back
        params = sampling.params_bytes(
            temperature, top_k, top_p, sampling.draw_seed(seed), eos_token_id
        )
        out = _decode.generate(self, ids, max_new_tokens, params, eos_token_id, bool(graph))
        return out[0] if squeeze else out

    def _check_length(self, positions: int) -> None:
        """Raises ValueError when the model cannot hold `positions` positions."""


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


def _check_vocabulary(ids: np.ndarray, vocab: int) -> None:
    if ids.size and (ids.min() < 0 or ids.max() >= vocab):
        bad = ids[(ids < 0) | (ids >= vocab)][0]
        raise IndexError(f"token id {bad} is out of range for a vocabulary of {vocab}")


def _token_ids(input_ids, vocab: int):
    """(ids on the device as (batch, seq), whether they were checked against the vocabulary on
    the host)."""
    if isinstance(input_ids, _array.GPUArray) and input_ids.dtype.kind in "iu":
        ids, checked = input_ids, False
    else:
        host = _host_ids(input_ids)
        _check_vocabulary(host, vocab)
        ids, checked = _array.asarray(host), True
    if ids.ndim == 1:
        ids = ids.reshape(1, -1)
    if ids.ndim != 2 or ids.shape[1] == 0:
        raise ValueError(f"input_ids must be (batch, seq) with seq >= 1, got shape {ids.shape}")
    return ids, checked
