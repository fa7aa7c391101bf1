"""A model folder's config.json, read into the few numbers the models need."""

from __future__ import annotations

import dataclasses
import json
import os

# model_type -> family; the LLaMA family differs only in which projections carry biases.
FAMILIES = {"llama": "llama", "mistral": "llama", "qwen2": "llama", "gpt2": "gpt2"}


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    model_type: str
    family: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    norm_eps: float
    max_positions: int
    tie_word_embeddings: bool
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    rope_theta: float = 10000.0
    rope_scaling: dict | None = None
    sliding_window: int | None = None
    dtype: str | None = None


def _rope(raw: dict) -> tuple[float, dict | None]:
    # transformers 5 writes rope_parameters; earlier versions rope_theta and rope_scaling.
    params = raw.get("rope_parameters") or {}
    theta = float(params.get("rope_theta", raw.get("rope_theta", 10000.0)))
    scaling = raw.get("rope_scaling") or (params if params.get("rope_type") else None)
    if scaling and scaling.get("rope_type", scaling.get("type")) in ("default", None):
        scaling = None
    return theta, scaling


def from_dict(raw: dict) -> ModelConfig:
    model_type = raw.get("model_type")
    if model_type not in FAMILIES:
        known = ", ".join(sorted(FAMILIES))
        raise ValueError(
            f"config.json: model_type {model_type!r} is not supported (known: {known})"
        )
    dtype = raw.get("dtype") or raw.get("torch_dtype")
    if FAMILIES[model_type] == "gpt2":
        hidden, heads = raw["n_embd"], raw["n_head"]
        return ModelConfig(
            model_type=model_type,
            family="gpt2",
            vocab_size=raw["vocab_size"],
            hidden_size=hidden,
            num_layers=raw["n_layer"],
            num_heads=heads,
            num_kv_heads=heads,
            head_dim=hidden // heads,
            intermediate_size=raw.get("n_inner") or 4 * hidden,
            norm_eps=raw.get("layer_norm_epsilon", 1e-5),
            max_positions=raw["n_positions"],
            tie_word_embeddings=raw.get("tie_word_embeddings", True),
            dtype=dtype,
        )
    hidden, heads = raw["hidden_size"], raw["num_attention_heads"]
    theta, scaling = _rope(raw)
    attention_bias = bool(raw.get("attention_bias", False))
    return ModelConfig(
        model_type=model_type,
        family="llama",
        vocab_size=raw["vocab_size"],
        hidden_size=hidden,
        num_layers=raw["num_hidden_layers"],
        num_heads=heads,
        num_kv_heads=raw.get("num_key_value_heads") or heads,
        head_dim=raw.get("head_dim") or hidden // heads,
        intermediate_size=raw["intermediate_size"],
        norm_eps=raw.get("rms_norm_eps", 1e-6),
        max_positions=raw.get("max_position_embeddings", 4096),
        tie_word_embeddings=raw.get("tie_word_embeddings", False),
        qkv_bias=model_type == "qwen2" or attention_bias,
        o_bias=attention_bias,
        mlp_bias=bool(raw.get("mlp_bias", False)),
        rope_theta=theta,
        rope_scaling=scaling,
        sliding_window=raw.get("sliding_window") if raw.get("use_sliding_window", True) else None,
        dtype=dtype,
    )


def load(folder: str) -> ModelConfig:
    path = os.path.join(folder, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{folder}: no config.json (expected a Hugging Face model folder)"
        ) from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON: {e}") from e
    try:
        return from_dict(raw)
    except KeyError as e:
        raise ValueError(f"{path}: missing key {e.args[0]!r}") from e
