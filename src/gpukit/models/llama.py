"""The LLaMA family (LLaMA, Mistral, Qwen2): RMSNorm, rotary positions, grouped-query
attention, SwiGLU. Weight names as Hugging Face writes them.

At load the q, k, v projections are concatenated into one weight (and their biases into one),
and so are gate and up: a layer runs as RMSNorm, one q/k/v product, one launch that rotates q
and k and writes k, v into the cache, attention, the output product with the residual added in
its epilogue, RMSNorm, one gate/up product, SiLU(gate) * up, the down product with the residual."""

from __future__ import annotations

import numpy as np

from .. import array as _array
from .. import nn
from ..linalg import linear
from ..views import concatenate
from .base import CausalLM
from .decode import attend_cached
from .rotary import RotaryTable


class LlamaForCausalLM(CausalLM):
    prefixes = ("model.",)

    def __init__(self, config, weights):
        super().__init__(config, weights)
        c = config
        self.rotary = RotaryTable(c.head_dim, c.rope_theta, c.rope_scaling, self.dtype)
        table = (c.vocab_size, c.hidden_size)
        self.embed = self.weight("embed_tokens.weight", table)
        self.lm_head = self.weight("lm_head.weight", table, optional=True)
        if self.lm_head is None:
            self.lm_head = self.embed  # tied embeddings
        self.layers = [self._layer(i) for i in range(c.num_layers)]
        self.norm = self.weight("norm.weight", (c.hidden_size,))

    def _layer(self, i: int) -> dict:
        p, c = f"layers.{i}.", self.config
        names = {
            "q": "self_attn.q_proj",
            "k": "self_attn.k_proj",
            "v": "self_attn.v_proj",
            "o": "self_attn.o_proj",
            "gate": "mlp.gate_proj",
            "up": "mlp.up_proj",
            "down": "mlp.down_proj",
        }
        biased = {"q": c.qkv_bias, "k": c.qkv_bias, "v": c.qkv_bias, "o": c.o_bias}
        h, q, kv, f = (
            c.hidden_size,
            c.num_heads * c.head_dim,
            c.num_kv_heads * c.head_dim,
            c.intermediate_size,
        )
        shapes = {"q": (q, h), "k": (kv, h), "v": (kv, h), "o": (h, q)}
        shapes.update(gate=(f, h), up=(f, h), down=(h, f))
        found = {}
        for key, name in names.items():
            found[key] = self.weight(p + name + ".weight", shapes[key])
            has_bias = biased.get(key, c.mlp_bias)
            bias = (shapes[key][0],)
            found[key + "_bias"] = self.weight(p + name + ".bias", bias) if has_bias else None
        layer = {
            "qkv": _fused(found, ("q", "k", "v")),
            "qkv_bias": _fused(found, ("q_bias", "k_bias", "v_bias")),
            "o": found["o"],
            "o_bias": found["o_bias"],
            "gate_up": _fused(found, ("gate", "up")),
            "gate_up_bias": _fused(found, ("gate_bias", "up_bias")),
            "down": found["down"],
            "down_bias": found["down_bias"],
        }
        for key, name in names.items():  # the parts are in the fused weights now
            if key not in ("o", "down"):
                self.weights.pop(p + name + ".weight", None)
                self.weights.pop(p + name + ".bias", None)
        layer["attn_norm"] = self.weight(p + "input_layernorm.weight", (h,))
        layer["mlp_norm"] = self.weight(p + "post_attention_layernorm.weight", (h,))
        return layer

    def _prepare(self, capacity: int) -> None:
        self.rotary.ensure(capacity)

    def _forward(self, ids, cache, start, last_only: bool, check: bool, trace=None):
        c = self.config
        b, s = ids.shape
        f, eps = c.intermediate_size, c.norm_eps
        mark = trace or _untraced
        mark("embedding")
        # Activations are (tokens, features) matrices: every product is one 2-D product (a
        # GEMV at batch 1), with its residual in the epilogue.
        h = nn.embedding(ids, self.embed, check=check).reshape(b * s, c.hidden_size)
        for i, layer in enumerate(self.layers):
            mark("attn_norm")
            a = nn.rms_norm(h, layer["attn_norm"], eps)
            h = self._attention(i, layer, a, cache, h, (b, s), mark)
            mark("mlp_norm")
            m = nn.rms_norm(h, layer["mlp_norm"], eps)
            mark("gate_up")
            gate_up = linear(m, layer["gate_up"], layer["gate_up_bias"])
            mark("silu_mul")
            act = nn.silu_mul(gate_up[:, :f], gate_up[:, f:])
            mark("down+residual")
            h = linear(act, layer["down"], layer["down_bias"], residual=h)
        if last_only:
            h, s = h.reshape(b, s, c.hidden_size)[:, -1], 1
        mark("final_norm")
        h = nn.rms_norm(h, self.norm, eps)
        mark("lm_head")
        return linear(h, self.lm_head).reshape(b, s, -1)

    def _attention(self, i, layer, x, cache, residual, bs, mark):
        """residual + the attention block's output, for x (batch * s, hidden)."""
        c = self.config
        b, s = bs
        mark("qkv")
        qkv = linear(x, layer["qkv"], layer["qkv_bias"])
        mark("rope+cache")
        q = cache.write(i, qkv.reshape(b, s, -1), self.rotary.cos, self.rotary.sin, c.num_heads)
        mark("attention")
        if s == 1:  # the decode step: positions from the device
            o = attend_cached(q, cache.keys[i], cache.values[i], cache)
        else:
            keys, values = cache.filled(i)
            o = _sliding_window_attention(q, keys, values, c.sliding_window)
        o = o.transpose(0, 2, 1, 3).reshape(b * s, c.num_heads * c.head_dim)
        mark("o+residual")
        return linear(o, layer["o"], layer["o_bias"], residual=residual)


def _untraced(part: str) -> None:
    pass


def _fused(found: dict, keys: tuple):
    """The tensors of `keys` concatenated along their first axis (None when they are absent)."""
    parts = [found[k] for k in keys]
    if any(p is None for p in parts):
        return None
    return concatenate(parts, axis=0)


def _sliding_window_attention(q, keys, values, window):
    """Causal attention, aligned to the end; with a window, query i sees keys (i - window, i]."""
    s, total = q.shape[2], keys.shape[2]
    if window is None or total <= window:
        return nn.scaled_dot_product_attention(q, keys, values, is_causal=True)
    i = np.arange(total - s, total)[:, None]
    j = np.arange(total)[None, :]
    mask = _array.asarray((j <= i) & (j > i - window))
    return nn.scaled_dot_product_attention(q, keys, values, mask=mask)
