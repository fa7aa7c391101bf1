"""The LLaMA family (LLaMA, Mistral, Qwen2): RMSNorm, rotary positions, grouped-query
attention, SwiGLU. Weight names as Hugging Face writes them."""

from __future__ import annotations

import numpy as np

from .. import array as _array
from .. import nn
from ..linalg import linear
from .base import CausalLM
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
        layer = {}
        for key, name in names.items():
            layer[key] = self.weight(p + name + ".weight", shapes[key])
            has_bias = biased.get(key, c.mlp_bias)
            bias = (shapes[key][0],)
            layer[key + "_bias"] = self.weight(p + name + ".bias", bias) if has_bias else None
        layer["attn_norm"] = self.weight(p + "input_layernorm.weight", (h,))
        layer["mlp_norm"] = self.weight(p + "post_attention_layernorm.weight", (h,))
        return layer

    def forward(self, ids, cache, last_only: bool):
        start, s = cache.length, ids.shape[1]
        cos, sin = self.rotary(start, s)
        h = nn.embedding(ids, self.embed)
        pending = None  # the last sublayer's output, added to h by the next norm (one pass)
        for i, layer in enumerate(self.layers):
            a, h = self._add_norm(h, pending, layer["attn_norm"])
            pending = self._attention(i, layer, a, cos, sin, cache)
            m, h = self._add_norm(h, pending, layer["mlp_norm"])
            gate = nn.silu(linear(m, layer["gate"], layer["gate_bias"]))
            pending = linear(
                gate * linear(m, layer["up"], layer["up_bias"]), layer["down"], layer["down_bias"]
            )
        cache.advance(s)
        if last_only:
            h = h[:, -1:]
            pending = pending[:, -1:] if pending is not None else None
        return linear(self._add_norm(h, pending, self.norm)[0], self.lm_head)

    def _add_norm(self, h, pending, weight):
        """(rms_norm(h + pending) * weight, h + pending); h itself without a pending output."""
        if pending is None:
            return nn.rms_norm(h, weight, self.config.norm_eps), h
        return nn.rms_norm(pending, weight, self.config.norm_eps, residual=h)

    def _attention(self, i, layer, x, cos, sin, cache):
        c = self.config
        b, s, _ = x.shape

        def heads(key, n):
            y = linear(x, layer[key], layer[key + "_bias"])
            return y.reshape(b, s, n, c.head_dim).transpose(0, 2, 1, 3)

        q = nn.rope(heads("q", c.num_heads), cos, sin)
        k = nn.rope(heads("k", c.num_kv_heads), cos, sin)
        keys, values = cache.update(i, k, heads("v", c.num_kv_heads))
        o = _sliding_window_attention(q, keys, values, c.sliding_window)
        o = o.transpose(0, 2, 1, 3).reshape(b, s, c.num_heads * c.head_dim)
        return linear(o, layer["o"], layer["o_bias"])


def _sliding_window_attention(q, keys, values, window):
    """Causal attention, aligned to the end; with a window, query i sees keys (i - window, i]."""
    s, total = q.shape[2], keys.shape[2]
    if window is None or total <= window:
        return nn.scaled_dot_product_attention(q, keys, values, is_causal=True)
    if s == 1:
        return nn.scaled_dot_product_attention(
            q, keys[:, :, total - window :], values[:, :, total - window :]
        )
    i = np.arange(total - s, total)[:, None]
    j = np.arange(total)[None, :]
    mask = _array.asarray((j <= i) & (j > i - window))
    return nn.scaled_dot_product_attention(q, keys, values, mask=mask)
