"""Generation: the prompt through the big-matrix path (prefill), then one token per decode step,
each step captured once as a graph and replayed (or run eagerly: the same launches, the same
tokens).

A decode step of `batch` rows reads and writes only static arrays (DecodeState): the cache with
its device length, the next input ids, the tokens made so far and the rows' finished flags, all
written by the step's own kernels; its launches do not depend on the position, so the graph of
the first step serves every later one, and every later generate call of that batch size and
capacity. The host reads back nothing per token: with an end token, a 4-byte "all finished" flag
every few steps; at the end, the tokens."""

from __future__ import annotations

import numpy as np

from .. import creation
from .. import nn as _nn
from ..errors import GraphCaptureError
from ..graphs import Graph
from . import sampling
from .fused import sample_into

# Steps between reads of the finished flags when an end token is given.
CHECK_EVERY = 8


def attend_cached(q, keys, values, cache):
    """One new query position per row against the whole cache, the visible positions taken from
    the device (kv_length where the attention reads it there, else a mask computed from it)."""
    if cache.attention == "length":
        return _nn.scaled_dot_product_attention(q, keys, values, kv_length=cache.positions)
    return _nn.scaled_dot_product_attention(q, keys, values, mask=cache.valid)


def attention_mode(cache, heads: int) -> str:
    """ "length" where the attention reads kv_length on the device for this cache (probed once by
    capturing one call: a read back fails the capture), else "mask"."""
    if cache.window is not None:
        return "mask"
    b, _, _, d = cache.keys[0].shape
    q = creation.zeros((b, heads, 1, d), cache.dtype)
    probe = Graph()
    try:
        with probe.capture():
            _nn.scaled_dot_product_attention(
                q, cache.keys[0], cache.values[0], kv_length=cache.positions
            )
    except GraphCaptureError:
        return "mask"
    finally:
        probe.release()
    return "length"


class DecodeState:
    """The static arrays of decoding `batch` rows into a cache of `capacity` positions, and the
    captured decode step."""

    def __init__(self, model, batch: int, capacity: int):
        self.cache = model.new_cache(batch, capacity)
        self.next_ids = creation.zeros((batch, 1), "int64")
        self.tokens = creation.zeros((batch, self.cache.capacity), "int64")
        self.finished = creation.zeros((batch,), "int32")
        self.params = sampling.params_array(sampling.params_bytes(0.0, 0, 1.0, 0, None))
        self.graph = None
        self.capturable = True  # until a capture fails
        self.warm = False  # an eager step ran: every op's plan and kernel exist

    def start(self, params: bytes) -> None:
        """Empties the cache and the flags, installs the sampling parameters."""
        self.cache.reset()
        self.finished[...] = 0
        self.params[...] = np.frombuffer(params, np.uint8)

    def sample(self, logits) -> None:
        """The next token of each row from the last position's logits (batch, s, vocab)."""
        last = logits[:, -1]
        sample_into(last, self.params, self.cache.positions, self.finished, self.next_ids,
                    self.tokens)  # fmt: skip

    def step(self, model) -> None:
        """One decode step: the cache's device length advanced, the last tokens in, the next out."""
        self.cache.advance_device(1)
        self.sample(model.forward_step(self.next_ids, self.cache))

    def decode(self, model, use_graph: bool) -> None:
        if self.graph is not None and use_graph:
            self.graph.replay()
            return
        if use_graph and self.warm and self.capturable:
            graph = Graph()
            try:
                with graph.capture():
                    self.step(model)
            except GraphCaptureError:
                self.capturable = False  # something in the step reads back: stay eager
            else:
                self.graph = graph
                graph.replay()
                return
        self.step(model)
        self.warm = True

    def all_finished(self) -> bool:
        return bool(self.finished.to_numpy().all())

    def release(self) -> None:
        if self.graph is not None:
            self.graph.release()
            self.graph = None


def generate(model, ids: np.ndarray, max_new: int, params: bytes, eos, use_graph: bool):
    """Token ids (batch, prompt + new) as int64, `ids` the checked prompt."""
    batch, prompt = ids.shape
    if max_new == 0:
        return ids.copy()
    state = model.decode_state(batch, prompt + max_new)
    state.start(params)
    cache = state.cache
    state.sample(model.forward_prefill(ids, cache))
    made = 1
    while made < max_new:
        if eos is not None and made % CHECK_EVERY == 0 and state.all_finished():
            break
        state.decode(model, use_graph)
        made += 1
    new = state.tokens[:, prompt : prompt + made].to_numpy()
    cache.length = prompt + made - 1  # positions whose keys and values are in the cache
    if eos is not None:
        done = np.maximum.accumulate(new == eos, axis=1).all(axis=0)
        if done.any():  # generation ends at the step where every row has ended
            new = new[:, : int(np.argmax(done)) + 1]
    return np.concatenate([ids, new], axis=1)
