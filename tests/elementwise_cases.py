"""Cases of the elementwise op table (gpukit.runtime.ops) for the generated parity tests: every op
of NumPy's namespace with one or two operands, for every dtype its rule takes; random operands
with special values mixed in; NumPy's answer as the kernels must give it; the comparison.

Used by tests/api/test_elementwise_table.py (every backend, through the public API) and
tests/gpu/test_kernel_math_on_host.py (the kernels' functors compiled by the host compiler)."""

from __future__ import annotations

import math

import numpy as np

import gpukit as gk
from gpukit.base import dtypes as _dtypes
from gpukit.runtime.ops import ELEMENTWISE, NUMPY

DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
# Integer dtypes whose promotion to a float loop is checked (int8 -> float16, int64 -> float64);
# the others only where the op computes in integers.
_PROMOTED_INTS = ("int8", "int64")
# Every op with one or two operands that gpukit offers under NumPy's name (where and clip, with
# three, have tests of their own).
NAMES = [op.name for op in ELEMENTWISE.values() if op.namespace == NUMPY and op.arity <= 2]

# Ops whose real results NumPy and the kernels both round once (or not at all): compared bit for
# bit. The others are compared with a float64 reference within the result dtype's tolerance.
EXACT = {
    "negative", "positive", "absolute", "fabs", "logical_not", "invert", "floor", "ceil",
    "trunc", "rint", "sign", "square", "reciprocal", "signbit", "isnan", "isinf", "isfinite",
    "conjugate", "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder",
    "maximum", "minimum", "fmax", "fmin", "fmod", "copysign", "nextafter", "heaviside", "ldexp",
    "gcd", "lcm", "left_shift", "right_shift", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor",
}  # fmt: skip
# Complex results of these are computed with a multiply-add or a square root of sums (the GPU
# may fuse them): compared within tolerance.
SMOOTH_FOR_COMPLEX = {"absolute", "sign", "square", "reciprocal", "multiply", "true_divide"}
# Ops whose complex answers at infinities and NaNs follow C99's Annex G in both NumPy (the C
# library's) and gpukit (kernels/complex.cuh), checked with special values; for the others only
# finite complex operands are drawn.
COMPLEX_SPECIALS = {
    "negative", "positive", "absolute", "conjugate", "isnan", "isinf", "isfinite", "add",
    "subtract", "equal", "not_equal", "logical_not", "logical_and", "logical_or",
    "logical_xor", "exp", "log", "sqrt", "sinh", "cosh", "tanh", "sign", "rint", "maximum",
    "minimum", "fmax", "fmin",
}  # fmt: skip
SPECIAL_FLOATS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.0]


def operand_dtypes(name: str, dtype: str):
    """The operands' dtypes for `name` on arrays of `dtype` (ldexp's exponent is int32), or None
    when the op does not take them."""
    op = ELEMENTWISE[name]
    types = [np.dtype(_dtypes.normalize(dtype))] * op.arity
    if name == "ldexp":
        types[1] = np.dtype("int32")
    try:
        loop, _ = _dtypes.resolve(op.rule, *types, name=name)
    except TypeError:
        return None
    if op.real_only and loop.kind == "c":
        return None
    return tuple(types)


def cases() -> list[tuple[str, str]]:
    out = []
    for name in NAMES:
        for dtype in DTYPES:
            types = operand_dtypes(name, dtype)
            if types is None:
                continue
            loop, _ = result_dtypes(name, types)
            promoted = np.dtype(dtype).kind in "biu" and loop.kind not in "biu"
            if promoted and dtype not in _PROMOTED_INTS:
                continue
            out.append((name, dtype))
    return out


def result_dtypes(name: str, types) -> tuple[np.dtype, np.dtype]:
    """(loop dtype, result dtype) by the op's rule."""
    return _dtypes.resolve(ELEMENTWISE[name].rule, *types, name=name)


def _away_from_branch_points(rng, z: np.ndarray) -> np.ndarray:
    """z with every point closer than 0.1 to 0, 1, -1, i or -i drawn again, so that no inverse
    function is asked for a value where its answer turns on the last bits of its operand."""
    points = np.array([0, 1, -1, 1j, -1j])
    for _ in range(100):
        near = (np.abs(z[..., None] - points) < 0.1).any(-1)
        if not near.any():
            return z
        z[near] = 1.5 * (rng.standard_normal(near.sum()) + 1j * rng.standard_normal(near.sum()))
    raise AssertionError("no draw away from the branch points")


def _integers(rng, name: str, position: int, dtype: np.dtype, shape) -> np.ndarray:
    bits = 8 * dtype.itemsize
    if name in ("left_shift", "right_shift") and position == 1:  # counts past the width too
        lo, hi = (-2, bits + 3) if dtype.kind == "i" else (0, bits + 3)
    elif name == "ldexp" and position == 1:
        lo, hi = -30, 31
    elif name == "power":  # no negative exponents (they raise), results within int8
        lo, hi = (0, 4) if position == 1 else ((-5, 6) if dtype.kind == "i" else (0, 6))
    elif name in ("gcd", "lcm"):  # every value, the extremes included
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        values.flat[: min(3, values.size)] = [info.min, info.max, 0][: min(3, values.size)]
        return values
    else:
        lo, hi = (-50, 50) if dtype.kind == "i" else (0, 100)
    return rng.integers(lo, hi, size=shape).astype(dtype)


def operands(rng, name: str, types, shape) -> list[np.ndarray]:
    """Random operands of `types` for `name`: floats with about a tenth special values, complex
    numbers away from the inverse functions' branch points (and with special parts for the ops
    in COMPLEX_SPECIALS), integers in ranges where NumPy's answer is defined."""
    out = []
    for position, dtype in enumerate(types):
        if dtype == np.bool_:
            out.append(rng.random(shape) < 0.5)
        elif dtype.kind in "iu":
            out.append(_integers(rng, name, position, dtype, shape))
        elif dtype.kind == "c":
            z = 1.5 * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
            z = _away_from_branch_points(rng, z)
            if name in COMPLEX_SPECIALS:  # one or both parts special (1j * inf is nan+infj)
                picks = rng.random(shape) < 0.15
                k = int(picks.sum())
                special = np.empty(k, np.complex128)
                special.real = rng.choice(SPECIAL_FLOATS, size=k)
                special.imag = np.where(
                    rng.random(k) < 0.5, rng.choice(SPECIAL_FLOATS, size=k), z[picks].imag
                )
                z[picks] = special
            out.append(z.astype(dtype))
        else:
            x = 3 * rng.standard_normal(shape)
            picks = rng.random(shape) < 0.1
            x[picks] = rng.choice(SPECIAL_FLOATS, size=int(picks.sum()))
            out.append(x.astype(dtype))
    return out


# References of the ops NumPy lacks (float64 or exact).
_REFERENCES = {
    "angle": np.angle,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "erf": lambda x: np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}


def _numpy_function(name: str):
    return _REFERENCES.get(name) or getattr(np, name)


def exact(name: str, loop: np.dtype) -> bool:
    """Whether `name` in `loop` is compared bit for bit."""
    if loop.kind in "biu":
        return True
    return name in EXACT and not (loop.kind == "c" and name in SMOOTH_FOR_COMPLEX)


def expected(name: str, xs, types) -> np.ndarray:
    """NumPy's answer, in the op's result dtype: for exact ops in the loop dtype itself
    (bfloat16 as float32, rounded once, as gpukit computes it; nextafter on bfloat16 itself),
    for the others in float64 / complex128, rounded to the result dtype."""
    loop, out = result_dtypes(name, types)
    f = _numpy_function(name)
    with np.errstate(all="ignore"):
        if exact(name, loop):
            storage = ELEMENTWISE[name].storage
            ins = [
                x.astype(np.float32) if x.dtype == gk.bfloat16 and not storage else x for x in xs
            ]
            return np.asarray(f(*ins)).astype(out)
        wide = []
        for x in xs:
            if x.dtype.kind == "c":
                wide.append(x.astype(np.complex128))
            elif _dtypes.is_floating(x.dtype):
                wide.append(x.astype(np.float64))
            elif name == "ldexp":
                wide.append(x)
            else:
                wide.append(x.astype(loop if loop.kind in "biu" else np.float64))
        return np.asarray(f(*wide)).astype(out)


# Relative tolerance by result dtype, for ops not compared bit for bit (four times the suite's
# usual ones: several roundings inside one function).
_TOLERANCE = {
    gk.bfloat16: 8e-2,
    np.dtype("float16"): 8e-3,
    np.dtype("float32"): 8e-5,
    np.dtype("float64"): 4e-12,
}


def _same_specials(got, want, what) -> np.ndarray:
    """Asserts NaNs and infinities sit in the same places (infinities with their signs); returns
    the mask of finite expected values."""
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    assert (nan_g == nan_w).all(), f"{what}: NaN at {np.argwhere(nan_g != nan_w)[:5].tolist()}"
    inf = np.isinf(want)
    bad = inf & (got != want)
    assert not bad.any(), f"{what}: infinity at {np.argwhere(bad)[:5].tolist()}"
    bad = np.isinf(got) & ~inf
    assert not bad.any(), f"{what}: unexpected infinity at {np.argwhere(bad)[:5].tolist()}"
    return ~nan_w & ~inf


def assert_elementwise(got: np.ndarray, want: np.ndarray, name: str, loop: np.dtype) -> None:
    """`got` (NumPy) against `expected(...)`: the same dtype and shape; bit for bit (NaNs in the
    same places, -0.0 equal to 0.0) for exact ops, else within tolerance with NaNs and
    infinities in the same places, complex values part by part relative to their magnitude."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    what = f"{name} ({loop.name} loop, {want.dtype.name} result)"
    tol = _TOLERANCE.get(_dtypes.real_of(np.dtype(want.dtype)))
    if want.dtype == gk.bfloat16:
        got, want = got.astype(np.float32), want.astype(np.float32)
    if exact(name, loop) or want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    got, want = got.astype(np.complex128), want.astype(np.complex128)
    finite_re = _same_specials(got.real, want.real, what + " (real part)")
    finite_im = _same_specials(got.imag, want.imag, what + " (imaginary part)")
    magnitude = np.hypot(np.where(finite_re, want.real, 0), np.where(finite_im, want.imag, 0))
    limit = tol * (1 + magnitude)
    for part, finite in ((np.real, finite_re), (np.imag, finite_im)):
        with np.errstate(invalid="ignore"):
            err = np.where(finite, np.abs(part(got) - part(want)), 0)
        bad = err > limit
        assert not bad.any(), (what, got[bad][:5], want[bad][:5])
