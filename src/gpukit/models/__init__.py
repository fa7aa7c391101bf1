"""Causal language models from Hugging Face model folders (config.json + SafeTensors weights):
the LLaMA family (LLaMA, Mistral, Qwen2) and GPT-2, with a KV cache and `generate`.
Tokenization stays outside (use the `tokenizers` package with the folder's tokenizer.json)."""

from __future__ import annotations

from . import config as _config
from .gpt2 import GPT2LMHeadModel
from .kv_cache import KVCache
from .llama import LlamaForCausalLM

_CLASSES = {"llama": LlamaForCausalLM, "gpt2": GPT2LMHeadModel}


def from_pretrained(folder: str, dtype=None, progress: bool = True):
    """The model in `folder`, its weights loaded to the device (converted to `dtype` if given)."""
    from ..io import load_safetensors

    cfg = _config.load(folder)
    weights = load_safetensors(folder, dtype=dtype, progress=progress)
    return _CLASSES[cfg.family](cfg, weights)


__all__ = ["GPT2LMHeadModel", "KVCache", "LlamaForCausalLM", "from_pretrained"]
