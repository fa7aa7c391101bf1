"""The dtypes gpukit supports and NumPy's promotion rules, resolved by NumPy itself."""

from __future__ import annotations

import functools

import numpy as np

SUPPORTED = tuple(
    np.dtype(t)
    for t in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
    )
)
_SUPPORTED_SET = frozenset(SUPPORTED)


def normalize(dtype) -> np.dtype:
    """np.dtype for anything NumPy accepts, or TypeError for dtypes gpukit does not support."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"not a dtype: {dtype!r}") from e
    if dt not in _SUPPORTED_SET:
        names = ", ".join(d.name for d in SUPPORTED)
        raise TypeError(f"gpukit does not support dtype {dt.name}; supported: {names}")
    return dt


def _probe(operand):
    """A stand-in NumPy resolves types on: a one-element array, or the Python scalar type's zero."""
    if isinstance(operand, np.dtype):
        return np.ones(1, operand)
    return operand(1)  # Python scalars stay "weak" (NEP 50): int8 + 1 is int8


@functools.lru_cache(maxsize=1024)
def _ufunc_result(ufunc_name: str, operands: tuple) -> np.dtype:
    ufunc = getattr(np, ufunc_name)
    return np.asarray(ufunc(*(_probe(o) for o in operands))).dtype


def ufunc_result(ufunc_name: str, *operands) -> np.dtype:
    """Result dtype of NumPy's ufunc on arrays of these dtypes / scalars of these Python types."""
    key = tuple(o if isinstance(o, np.dtype) else type(o) for o in operands)
    for k in key:
        if not isinstance(k, np.dtype) and k not in (bool, int, float):
            raise TypeError(f"unsupported operand type {k.__name__} for {ufunc_name}")
    try:
        dt = _ufunc_result(ufunc_name, key)
    except TypeError as e:
        names = ", ".join(getattr(k, "name", getattr(k, "__name__", "?")) for k in key)
        raise TypeError(f"{ufunc_name} is not defined for ({names})") from e
    return normalize(dt)


@functools.lru_cache(maxsize=256)
def reduction_result(name: str, dtype: np.dtype) -> np.dtype:
    """Result dtype of np.<name> over an array of `dtype` (sum of int32 is int64, mean of int is
    float64, as in NumPy)."""
    return normalize(getattr(np, name)(np.ones(1, dtype)).dtype)
