"""Neural-network functions for inference: activations, normalisations, embeddings, rotary
position embedding and fused attention, on every backend (CUDA kernels, NumPy on the CPU)."""

from .activations import gelu, relu, silu, silu_mul
from .attention import scaled_dot_product_attention
from .embedding import embedding
from .normalization import layer_norm, log_softmax, rms_norm, softmax
from .rope import rope, rope_cache

__all__ = [
    "embedding",
    "gelu",
    "layer_norm",
    "log_softmax",
    "relu",
    "rms_norm",
    "rope",
    "rope_cache",
    "scaled_dot_product_attention",
    "silu",
    "silu_mul",
    "softmax",
]
