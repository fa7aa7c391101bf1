"""The dtypes gpukit supports and NumPy's promotion rules, resolved by NumPy itself.

bfloat16 (ml_dtypes' dtype, `gpukit.bfloat16`) promotes as in PyTorch, which NumPy cannot resolve
for it, so `resolve` handles it here: bf16 with bf16, any integer or bool array, or a Python int
or float (weak) -> bfloat16; bf16 with float16 -> float32; bf16 with float32 or float64 -> that;
with complex64 / complex128 -> that, with a Python complex -> complex64. A bfloat16 result is
computed in float32 (the loop dtype) and rounded once when stored, as PyTorch does.
Python complex scalars are weak as NumPy's NEP 50 makes them (float32 + 1j is complex64).
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")
_F16, _F32 = np.dtype("float16"), np.dtype("float32")

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
        bfloat16,
        "complex64",
        "complex128",
    )
)
_SUPPORTED_SET = frozenset(SUPPORTED)


def is_floating(dtype: np.dtype) -> bool:
    """Whether `dtype` is a real floating-point dtype, bfloat16 included (NumPy's kind "f" is
    not)."""
    return dtype.kind == "f" or dtype == bfloat16


def real_of(dtype: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's parts (float32 for complex64); other dtypes themselves."""
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype


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


# Dtype rules that are not a NumPy ufunc's: "common", NumPy's promotion of every operand;
# "select" (where), of every operand but the first (the condition, which keeps its type);
# "angle", np.angle's: a complex loop with its parts' dtype as the result, else arctan2(0, x)'s.
COMMON, SELECT, ANGLE = "common", "select", "angle"
# Rules whose later operands are integer exponents (bfloat16 promotion leaves them alone).
EXPONENT_RULES = frozenset({"ldexp"})
# Rules computed in the loop dtype's own format, bfloat16 included (nextafter).
STORAGE_RULES = frozenset({"nextafter"})


@functools.lru_cache(maxsize=2048)
def _resolve(rule: str, operands: tuple) -> tuple[np.dtype, np.dtype]:
    if rule in (COMMON, SELECT):
        values = operands[1:] if rule == SELECT else operands
        dt = np.result_type(*(o if isinstance(o, np.dtype) else o(0) for o in values))
        return dt, dt
    if rule == ANGLE:
        (x,) = operands
        dt = x if isinstance(x, np.dtype) else np.result_type(x(0))
        if dt.kind == "c":
            return dt, real_of(dt)
        return _resolve("arctan2", (int, x))
    ufunc = getattr(np, rule)
    # A Python bool promotes like NumPy's bool (the lowest kind); int and float stay weak.
    operands = tuple(np.dtype(bool) if o is bool else o for o in operands)
    loop = ufunc.resolve_dtypes((*operands, None))
    return loop[0], loop[-1]


def _bf16_partner(arrays) -> np.dtype:
    """The dtype that bfloat16 arrays meet `arrays` in (PyTorch's promotion)."""
    complexes = {d for d in arrays if d.kind == "c"}
    if complexes:
        return max(complexes, key=lambda d: d.itemsize)
    floats = {d for d in arrays if is_floating(d)}
    if np.dtype("float64") in floats:
        return np.dtype("float64")
    if _F32 in floats or _F16 in floats:
        return _F32
    return bfloat16


@functools.lru_cache(maxsize=1024)
def _resolve_bf16(rule: str, operands: tuple) -> tuple[np.dtype, np.dtype]:
    # The condition of where keeps its type, and ldexp's exponent; every other array computes in
    # the promoted dtype.
    start = 1 if rule == SELECT else 0
    stop = 1 if rule in EXPONENT_RULES else len(operands)
    target = _bf16_partner(tuple(o for o in operands[start:stop] if isinstance(o, np.dtype)))
    compute = _F32 if target == bfloat16 else target
    key = tuple(
        compute if isinstance(o, np.dtype) and start <= i < stop else o
        for i, o in enumerate(operands)
    )
    loop, out = _resolve(rule, key)
    if target == bfloat16 and out == _F32:
        out = bfloat16
        if rule in STORAGE_RULES:
            loop = bfloat16
    return loop, out


def resolve(rule: str, *operands, name: str | None = None) -> tuple[np.dtype, np.dtype]:
    """(loop dtype, result dtype) of an elementwise op typed by `rule` (a NumPy ufunc's name, or
    COMMON / SELECT) on arrays of these dtypes / Python scalars of these types, by NumPy's own
    rules (NEP 50: Python scalars are "weak"). `name` (default: the rule) names the op in errors."""
    name = name or rule
    key = tuple(o if isinstance(o, np.dtype) else type(o) for o in operands)
    for k in key:
        if not isinstance(k, np.dtype) and k not in (bool, int, float, complex):
            raise TypeError(f"unsupported operand type {k.__name__} for {name}")
    try:
        loop, out = (_resolve_bf16 if bfloat16 in key else _resolve)(rule, key)
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
    if name in ("any", "all"):
        return np.dtype(np.bool_)
    if dtype == bfloat16:  # sums, means, extrema of bfloat16 stay bfloat16 (as in PyTorch)
        return np.dtype("int64") if name in ("argmax", "argmin") else bfloat16
    return normalize(getattr(np, name)(np.ones(1, dtype)).dtype)


def result_type(*dtypes) -> np.dtype:
    """NumPy's promotion of array dtypes (for joins and the like); bfloat16 as in `resolve`."""
    dtypes = tuple(np.dtype(d) for d in dtypes)
    if bfloat16 in dtypes:
        return _bf16_partner(dtypes)
    return normalize(np.result_type(*dtypes))


def can_cast_same_kind(src: np.dtype, dst: np.dtype) -> bool:
    """NumPy's "same_kind" rule, with bfloat16 a float like the others."""
    if bfloat16 in (src, dst):
        src, dst = (_F32 if d == bfloat16 else d for d in (src, dst))
    return bool(np.can_cast(src, dst, "same_kind"))
