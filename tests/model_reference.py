"""Float64 NumPy references of the model families in gpukit.models, and tiny random checkpoints
written with gpukit's own SafeTensors writer, for tests that need no transformers."""

from __future__ import annotations

import json
import os

import numpy as np

import gpukit as gk

LLAMA = {
    "model_type": "llama",
    "vocab_size": 97,
    "hidden_size": 64,
    "intermediate_size": 88,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "rms_norm_eps": 1e-5,
    "max_position_embeddings": 128,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
}
QWEN2 = {**LLAMA, "model_type": "qwen2", "tie_word_embeddings": True}
MISTRAL = {**LLAMA, "model_type": "mistral", "sliding_window": 5, "num_key_value_heads": 1}
GPT2 = {
    "model_type": "gpt2",
    "vocab_size": 89,
    "n_embd": 48,
    "n_layer": 2,
    "n_head": 3,
    "n_positions": 64,
    "layer_norm_epsilon": 1e-5,
}


def _llama_shapes(c):
    h, d = c["hidden_size"], c["hidden_size"] // c["num_attention_heads"]
    kv, f = c["num_key_value_heads"] * d, c["intermediate_size"]
    shapes = {"model.embed_tokens.weight": (c["vocab_size"], h), "model.norm.weight": (h,)}
    if not c["tie_word_embeddings"]:
        shapes["lm_head.weight"] = (c["vocab_size"], h)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes |= {
            p + "self_attn.q_proj.weight": (h, h),
            p + "self_attn.k_proj.weight": (kv, h),
            p + "self_attn.v_proj.weight": (kv, h),
            p + "self_attn.o_proj.weight": (h, h),
            p + "mlp.gate_proj.weight": (f, h),
            p + "mlp.up_proj.weight": (f, h),
            p + "mlp.down_proj.weight": (h, f),
            p + "input_layernorm.weight": (h,),
            p + "post_attention_layernorm.weight": (h,),
        }
        if c["model_type"] == "qwen2":
            for x, n in (("q", h), ("k", kv), ("v", kv)):
                shapes[p + f"self_attn.{x}_proj.bias"] = (n,)
    return shapes


def _gpt2_shapes(c):
    h = c["n_embd"]
    shapes = {
        "transformer.wte.weight": (c["vocab_size"], h),
        "transformer.wpe.weight": (c["n_positions"], h),
        "transformer.ln_f.weight": (h,),
        "transformer.ln_f.bias": (h,),
    }
    for i in range(c["n_layer"]):
        p = f"transformer.h.{i}."
        for ln in ("ln_1", "ln_2"):
            shapes |= {p + ln + ".weight": (h,), p + ln + ".bias": (h,)}
        for name, (n_in, n_out) in {
            "attn.c_attn": (h, 3 * h),
            "attn.c_proj": (h, h),
            "mlp.c_fc": (h, 4 * h),
            "mlp.c_proj": (4 * h, h),
        }.items():
            shapes |= {p + name + ".weight": (n_in, n_out), p + name + ".bias": (n_out,)}
    return shapes


def write_model(folder, config: dict, rng, dtype="float32") -> dict:
    """A random checkpoint of `config` in `folder`; returns its weights as float64 NumPy."""
    shapes = _gpt2_shapes(config) if config["model_type"] == "gpt2" else _llama_shapes(config)
    weights = {}
    for name, shape in shapes.items():
        if name.endswith(("norm.weight", "ln_1.weight", "ln_2.weight", "ln_f.weight")):
            w = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            w = rng.standard_normal(shape) / np.sqrt(shape[-1] if len(shape) > 1 else 16)
        weights[name] = w.astype(dtype)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)
    gk.save_safetensors(
        {k: gk.asarray(v) for k, v in weights.items()}, os.path.join(folder, "model.safetensors")
    )
    return {k: v.astype(np.float64) for k, v in weights.items()}


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _attention(q, k, v, window=None):
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s, t = q.shape[2], k.shape[2]
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    i, j = np.arange(t - s, t)[:, None], np.arange(t)[None, :]
    allowed = (j <= i) & ((j > i - window) if window else True)
    return _softmax(np.where(allowed, scores, -np.inf)) @ v


def _rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def _layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * w + b


def llama_logits(c: dict, w: dict, ids: np.ndarray) -> np.ndarray:
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    d, eps = c["hidden_size"] // nh, c["rms_norm_eps"]
    b, s = ids.shape
    inv = 1.0 / c.get("rope_theta", 10000.0) ** (np.arange(0, d, 2) / d)
    ang = np.outer(np.arange(s), inv)
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))

    def rope(x):
        rot = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], -1)
        return x * cos + rot * sin

    def proj(x, name, n):
        y = x @ w[name + ".weight"].T + w.get(name + ".bias", 0)
        return y.reshape(b, s, n, d).transpose(0, 2, 1, 3)

    h = w["model.embed_tokens.weight"][ids]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = _rms_norm(h, w[p + "input_layernorm.weight"], eps)
        q, k = rope(proj(a, p + "self_attn.q_proj", nh)), rope(proj(a, p + "self_attn.k_proj", nkv))
        o = _attention(q, k, proj(a, p + "self_attn.v_proj", nkv), c.get("sliding_window"))
        h = h + o.transpose(0, 2, 1, 3).reshape(b, s, -1) @ w[p + "self_attn.o_proj.weight"].T
        m = _rms_norm(h, w[p + "post_attention_layernorm.weight"], eps)
        g = m @ w[p + "mlp.gate_proj.weight"].T
        h = (
            h
            + (g / (1 + np.exp(-g)) * (m @ w[p + "mlp.up_proj.weight"].T))
            @ w[p + "mlp.down_proj.weight"].T
        )
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return _rms_norm(h, w["model.norm.weight"], eps) @ head.T


def gpt2_logits(c: dict, w: dict, ids: np.ndarray) -> np.ndarray:
    nh, eps = c["n_head"], c["layer_norm_epsilon"]
    b, s = ids.shape
    d = c["n_embd"] // nh
    h = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:s]

    def gelu(x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))

    for i in range(c["n_layer"]):
        p = f"transformer.h.{i}."

        def conv(x, name, p=p):
            return x @ w[p + name + ".weight"] + w[p + name + ".bias"]

        a = _layer_norm(h, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        q, k, v = (
            t.reshape(b, s, nh, d).transpose(0, 2, 1, 3)
            for t in np.split(conv(a, "attn.c_attn"), 3, -1)
        )
        h = h + conv(_attention(q, k, v).transpose(0, 2, 1, 3).reshape(b, s, -1), "attn.c_proj")
        m = _layer_norm(h, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        h = h + conv(gelu(conv(m, "mlp.c_fc")), "mlp.c_proj")
    h = _layer_norm(h, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"], eps)
    return h @ w["transformer.wte.weight"].T
