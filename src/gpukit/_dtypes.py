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


# Ops that are not NumPy ufuncs, typed like the ufunc named here (float results for integers).
_TYPED_LIKE = {"rsqrt": "sqrt", "sigmoid": "exp", "erf": "exp"}
_TYPED_LIKE.update(relu="exp", silu="exp", gelu="exp", gelu_tanh="exp")  # gpukit.nn


@functools.lru_cache(maxsize=2048)
def _resolve(name: str, operands: tuple) -> tuple[np.dtype, np.dtype]:
    if name in ("where", "clip", "identity"):
        values = operands[1:] if name == "where" else operands
        dt = np.result_type(*(o if isinstance(o, np.dtype) else o(0) for o in values))
        return dt, dt
    ufunc = getattr(np, _TYPED_LIKE.get(name, name))
    # A Python bool promotes like NumPy's bool (the lowest kind); int and float stay weak.
    operands = tuple(np.dtype(bool) if o is bool else o for o in operands)
    loop = ufunc.resolve_dtypes((*operands, None))
    return loop[0], loop[-1]


def resolve(name: str, *operands) -> tuple[np.dtype, np.dtype]:
    """(loop dtype, result dtype) of elementwise op `name` on arrays of these dtypes / Python
    scalars of these types, by NumPy's own rules (NEP 50: Python scalars are "weak")."""
    key = tuple(o if isinstance(o, np.dtype) else type(o) for o in operands)
    for k in key:
        if not isinstance(k, np.dtype) and k not in (bool, int, float):
            raise TypeError(f"unsupported operand type {k.__name__} for {name}")
    try:
        loop, out = _resolve(name, key)
    except TypeError as e:
        names = ", ".join(getattr(k, "name", getattr(k, "__name__", "?")) for k in key)
        raise TypeError(f"{name} is not defined for ({names})") from e
    return normalize(loop), normalize(out)


def ufunc_result(ufunc_name: str, *operands) -> np.dtype:
    """Result dtype of elementwise op `ufunc_name` (see resolve)."""
    return resolve(ufunc_name, *operands)[1]


@functools.lru_cache(maxsize=256)
def reduction_result(name: str, dtype: np.dtype) -> np.dtype:
    """Result dtype of np.<name> over an array of `dtype` (sum of int32 is int64, mean of int is
    float64, as in NumPy)."""
    return normalize(getattr(np, name)(np.ones(1, dtype)).dtype)


def result_type(*dtypes) -> np.dtype:
    """NumPy's promotion of array dtypes (for joins and the like)."""
    return normalize(np.result_type(*dtypes))
