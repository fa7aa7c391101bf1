"""Reading and writing model files: SafeTensors (gpukit.io.safetensors)."""

from .safetensors import LazySafeTensors, load_safetensors, safetensors_metadata, save_safetensors

__all__ = ["LazySafeTensors", "load_safetensors", "safetensors_metadata", "save_safetensors"]
