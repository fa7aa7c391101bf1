"""A model folder's config.json, read into the few numbers the models need."""

from __future__ import annotations

import dataclasses
import json
import math
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
    if not isinstance(params, dict):
        raise ValueError(f"config.json: rope_parameters must be an object, got {params!r}")
    theta = params.get("rope_theta", raw.get("rope_theta", 10000.0))
    scaling = raw.get("rope_scaling") or (params if params.get("rope_type") else None)
    if scaling is not None and not isinstance(scaling, dict):
        raise ValueError(f"config.json: rope_scaling must be an object or null, got {scaling!r}")
    if scaling and scaling.get("rope_type", scaling.get("type")) in ("default", None):
        scaling = None
    return theta, scaling


class _Reader:
    """Typed reads of config.json's values: a bad one raises ValueError naming the key."""

    def __init__(self, raw: dict):
        self.raw = raw

    def _bad(self, key: str, what: str):
        return ValueError(f"config.json: {key} must be {what}, got {self.raw.get(key)!r}")

    def int(self, key: str, minimum: int = 1, default=None, required: bool = True):
        value = self.raw.get(key, default)
        if value is None:
            if required:
                raise ValueError(f"config.json: missing key {key!r}")
            return None
        if type(value) is not int or value < minimum:  # bools and floats are not sizes
            raise self._bad(key, f"an integer >= {minimum}")
        return value

    def number(self, key: str, default: float, positive: bool = False) -> float:
        value = self.raw.get(key, default)
        if value is None:
            value = default
        if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            raise self._bad(key, "a finite non-negative number")
        if positive and value == 0:
            raise self._bad(key, "a positive number")
        return float(value)


_SCALING_KEYS = {"linear": ("factor",), "llama3": ("factor", "original_max_position_embeddings")}


def _scaling(scaling: dict | None) -> dict | None:
    if scaling is None:
        return None
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind not in _SCALING_KEYS:
        raise ValueError(
            f"config.json: rope scaling {kind!r} is not supported (default, linear, llama3 are)"
        )
    for key in _SCALING_KEYS[kind]:
        value = scaling.get(key)
        if type(value) not in (int, float) or not math.isfinite(value) or value <= 0:
            raise ValueError(
                f"config.json: rope_scaling's {key} must be a positive number, got {value!r}"
            )
    if kind == "llama3":
        low, high = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0)
        if not (type(low) in (int, float) and type(high) in (int, float) and 0 < low < high):
            raise ValueError(
                "config.json: rope_scaling's low_freq_factor and high_freq_factor must be "
                f"numbers with 0 < low < high, got {low!r} and {high!r}"
            )
    return scaling


def _divides(config: ModelConfig) -> ModelConfig:
    """The head counts must split the widths evenly, as the projections' shapes assume."""
    if config.head_dim * config.num_heads != config.hidden_size and config.family == "gpt2":
        raise ValueError(
            f"config.json: n_embd {config.hidden_size} is not a multiple of n_head "
            f"{config.num_heads}"
        )
    if config.num_heads % config.num_kv_heads:
        raise ValueError(
            f"config.json: num_attention_heads {config.num_heads} is not a multiple of "
            f"num_key_value_heads {config.num_kv_heads}"
        )
    return config


def from_dict(raw: dict) -> ModelConfig:
    if not isinstance(raw, dict):
        raise ValueError(f"config.json must hold a JSON object, not {type(raw).__name__}")
    model_type = raw.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        known = ", ".join(sorted(FAMILIES))
        raise ValueError(
            f"config.json: model_type {model_type!r} is not supported (known: {known})"
        )
    read = _Reader(raw)
    dtype = raw.get("dtype") or raw.get("torch_dtype")
    if FAMILIES[model_type] == "gpt2":
        hidden, heads = read.int("n_embd"), read.int("n_head")
        return _divides(
            ModelConfig(
                model_type=model_type,
                family="gpt2",
                vocab_size=read.int("vocab_size"),
                hidden_size=hidden,
                num_layers=read.int("n_layer", minimum=0),
                num_heads=heads,
                num_kv_heads=heads,
                head_dim=hidden // heads,
                intermediate_size=read.int("n_inner", required=False) or 4 * hidden,
                norm_eps=read.number("layer_norm_epsilon", 1e-5),
                max_positions=read.int("n_positions"),
                tie_word_embeddings=raw.get("tie_word_embeddings", True),
                dtype=dtype,
            )
        )
    hidden, heads = read.int("hidden_size"), read.int("num_attention_heads")
    head_dim = read.int("head_dim", required=False)
    if head_dim is None:
        if hidden % heads:
            raise ValueError(
                f"config.json: hidden_size {hidden} is not a multiple of num_attention_heads "
                f"{heads} (and no head_dim is given)"
            )
        head_dim = hidden // heads
    if head_dim % 2:
        raise ValueError(f"config.json: head_dim {head_dim} must be even (rotary pairs)")
    theta, scaling = _rope(raw)
    if type(theta) not in (int, float) or not math.isfinite(theta) or theta <= 0:
        raise ValueError(f"config.json: rope_theta must be a positive number, got {theta!r}")
    attention_bias = bool(raw.get("attention_bias", False))
    window = None
    if raw.get("use_sliding_window", True):
        window = read.int("sliding_window", required=False)
    return _divides(
        ModelConfig(
            model_type=model_type,
            family="llama",
            vocab_size=read.int("vocab_size"),
            hidden_size=hidden,
            num_layers=read.int("num_hidden_layers", minimum=0),
            num_heads=heads,
            num_kv_heads=read.int("num_key_value_heads", required=False) or heads,
            head_dim=head_dim,
            intermediate_size=read.int("intermediate_size"),
            norm_eps=read.number("rms_norm_eps", 1e-6),
            max_positions=read.int("max_position_embeddings", default=4096),
            tie_word_embeddings=raw.get("tie_word_embeddings", False),
            qkv_bias=model_type == "qwen2" or attention_bias,
            o_bias=attention_bias,
            mlp_bias=bool(raw.get("mlp_bias", False)),
            rope_theta=theta,
            rope_scaling=_scaling(scaling),
            sliding_window=window,
            dtype=dtype,
        )
    )


def load(folder: str) -> ModelConfig:
    folder = os.fspath(folder)
    path = os.path.join(folder, "config.json")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise NotADirectoryError(f"{folder}: not a folder (expected a Hugging Face model folder)")
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{folder}: no config.json (expected a Hugging Face model folder)"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not valid JSON: {e}") from e
    try:
        return from_dict(raw)
    except ValueError as e:
        raise ValueError(f"{path}: {str(e).removeprefix('config.json: ')}") from None
