"""Activations, elementwise on float arrays (float16 and bfloat16 compute in float32)."""

from __future__ import annotations

from ..array import GPUArray
from ..elementwise import elementwise
from ._checks import float_array


def relu(x) -> GPUArray:
    """max(x, 0); NaN stays NaN."""
    return elementwise("relu", float_array(x, "relu"))


def silu(x) -> GPUArray:
    """x * sigmoid(x) (also called swish)."""
    return elementwise("silu", float_array(x, "silu"))


def silu_mul(gate, up) -> GPUArray:
    """silu(gate) * up (the SwiGLU product of LLaMA's MLP), in one pass: float32 arithmetic for
    16-bit floats, rounded once."""
    gate = float_array(gate, "silu_mul", "gate")
    return elementwise("silu_mul", gate, float_array(up, "silu_mul", "up", rt=gate._rt))


def gelu(x, approximate: str = "none") -> GPUArray:
    """x * Phi(x) with Phi the normal CDF (approximate="none"), or PyTorch's tanh approximation
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (approximate="tanh")."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f'gelu: approximate must be "none" or "tanh", not {approximate!r}')
    return elementwise("gelu" if approximate == "none" else "gelu_tanh", float_array(x, "gelu"))
