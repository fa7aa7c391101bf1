"""Elementwise functions with NumPy's names, broadcasting and type promotion. Each takes GPUArrays
or Python scalars and an optional `out` array."""

from __future__ import annotations

from .array import GPUArray, elementwise


def _make(name: str, nin: int, doc: str):
    if nin == 1:

        def f(x, out: GPUArray | None = None) -> GPUArray:
            return elementwise(name, x, out=out)

    else:

        def f(x, y, out: GPUArray | None = None) -> GPUArray:
            return elementwise(name, x, y, out=out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


_UNARY = {
    "negative": "-x",
    "positive": "+x",
    "absolute": "|x|",
    "logical_not": "not x",
    "invert": "~x (bitwise not; logical not for bool)",
    "exp": "e**x",
    "log": "natural log",
    "sqrt": "square root",
    "rsqrt": "1 / sqrt(x)",
    "sin": "sine",
    "cos": "cosine",
    "tanh": "hyperbolic tangent",
    "erf": "the error function",
    "sigmoid": "1 / (1 + exp(-x))",
    "floor": "largest integer <= x",
    "ceil": "smallest integer >= x",
    "sign": "-1, 0 or 1 (NaN stays)",
}
_BINARY = {
    "add": "x + y",
    "subtract": "x - y",
    "multiply": "x * y",
    "true_divide": "x / y",
    "floor_divide": "x // y (Python's floor division)",
    "remainder": "x % y (sign of y)",
    "power": "x ** y (integers to negative integer powers raise ValueError, as in NumPy)",
    "maximum": "larger (NaN wins)",
    "minimum": "smaller (NaN wins)",
    "equal": "x == y",
    "not_equal": "x != y",
    "less": "x < y",
    "less_equal": "x <= y",
    "greater": "x > y",
    "greater_equal": "x >= y",
    "logical_and": "x and y",
    "logical_or": "x or y",
    "logical_xor": "x xor y",
    "bitwise_and": "x & y",
    "bitwise_or": "x | y",
    "bitwise_xor": "x ^ y",
}

for _name, _doc in _UNARY.items():
    globals()[_name] = _make(_name, 1, f"Elementwise {_doc}.")
for _name, _doc in _BINARY.items():
    globals()[_name] = _make(_name, 2, f"Elementwise {_doc}, with broadcasting.")

abs = absolute  # noqa: F821 - NumPy's alias
divide = true_divide  # noqa: F821
mod = remainder  # noqa: F821
neg = negative  # noqa: F821


def where(condition, x, y, out: GPUArray | None = None) -> GPUArray:
    """x where `condition` is true, else y, broadcasting all three (NumPy's where)."""
    if isinstance(condition, GPUArray) and condition.dtype != bool:
        condition = elementwise("not_equal", condition, 0)
    return elementwise("where", condition, x, y, out=out)


def clip(x, a_min, a_max, out: GPUArray | None = None) -> GPUArray:
    """x limited to [a_min, a_max] elementwise (NaN stays NaN)."""
    return elementwise("clip", x, a_min, a_max, out=out)


__all__ = [*_UNARY, *_BINARY, "abs", "divide", "mod", "neg", "where", "clip"]
