"""GPT-2: learned positions, LayerNorm, fused qkv projection, tanh GELU, tied output layer.
Its Conv1D weights are (in, out); they are transposed once at load to (out, in) for `linear`."""

from __future__ import annotations

from .. import nn
from ..elementwise import elementwise
from ..linalg import linear
from ..views import ascontiguousarray
from .base import CausalLM
from .decode import attend_cached


class GPT2LMHeadModel(CausalLM):
    prefixes = ("transformer.",)

    def __init__(self, config, weights):
        super().__init__(config, weights)
        h = config.hidden_size
        self.wte = self.weight("wte.weight", (config.vocab_size, h))
        self.wpe = self.weight("wpe.weight", (config.max_positions, h))
        self.lm_head = self.weight("lm_head.weight", (config.vocab_size, h), optional=True)
        if self.lm_head is None:
            self.lm_head = self.wte
        self.layers = [self._layer(i) for i in range(config.num_layers)]
        self.ln_f = self._norm("ln_f")

    def _norm(self, name: str) -> tuple:
        h = (self.config.hidden_size,)
        return self.weight(name + ".weight", h), self.weight(name + ".bias", h)

    def _layer(self, i: int) -> dict:
        p = f"h.{i}."
        h, f = self.config.hidden_size, self.config.intermediate_size

        def conv1d(name, n_in, n_out):
            weight = self.weight(p + name + ".weight", (n_in, n_out))
            return ascontiguousarray(weight.T), self.weight(p + name + ".bias", (n_out,))

        return {
            "ln_1": self._norm(p + "ln_1"),
            "ln_2": self._norm(p + "ln_2"),
            "qkv": conv1d("attn.c_attn", h, 3 * h),
            "proj": conv1d("attn.c_proj", h, h),
            "fc": conv1d("mlp.c_fc", h, f),
            "fc_proj": conv1d("mlp.c_proj", f, h),
        }

    def _check_length(self, positions: int) -> None:
        if positions > self.config.max_positions:
            raise ValueError(
                f"GPT-2 has {self.config.max_positions} positions; {positions} were asked for"
            )

    def _forward(self, ids, cache, start, last_only: bool, check: bool):
        c = self.config
        b, s = ids.shape
        eps = c.norm_eps
        h = nn.embedding(ids, self.wte, check=check)
        if start is None:  # the decode step: the position from the device
            here = elementwise("subtract", cache.positions, 1).reshape(1, 1)
            h = h + nn.embedding(here, self.wpe, check=False)
        else:
            self._check_length(start + s)
            h = h + self.wpe[start : start + s]
        h = h.reshape(b * s, c.hidden_size)  # (tokens, features): 2-D products
        for i, layer in enumerate(self.layers):
            a = nn.layer_norm(h, *layer["ln_1"], eps=eps)
            h = self._attention(i, layer, a, cache, h, (b, s))
            m = nn.layer_norm(h, *layer["ln_2"], eps=eps)
            m = linear(m, *layer["fc"], activation="gelu_tanh")
            h = linear(m, *layer["fc_proj"], residual=h)
        if last_only:
            h, s = h.reshape(b, s, c.hidden_size)[:, -1], 1
        return linear(nn.layer_norm(h, *self.ln_f, eps=eps), self.lm_head).reshape(b, s, -1)

    def _attention(self, i, layer, x, cache, residual, bs):
        c = self.config
        b, s = bs
        qkv = linear(x, *layer["qkv"]).reshape(b, s, 3 * c.hidden_size)
        q = cache.write(i, qkv, None, None, c.num_heads)
        if s == 1:
            o = attend_cached(q, cache.keys[i], cache.values[i], cache)
        else:
            keys, values = cache.filled(i)
            o = nn.scaled_dot_product_attention(q, keys, values, is_causal=True)
        o = o.transpose(0, 2, 1, 3).reshape(b * s, c.hidden_size)
        return linear(o, *layer["proj"], residual=residual)
