"""The elementwise op table: every elementwise op declared once. The ufunc functions and
operators (gpukit.elementwise), the dtype rules, the CUDA kernel's functor (generated into the
source, see gpukit.runtime.kernels), the CPU backend's implementation and the tests'
parametrization all come from ELEMENTWISE.

A new op is one entry here (plus a math helper in kernels/compat.cuh when its C expression needs
one that does not exist yet)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..base.dtypes import ANGLE, COMMON, SELECT

NUMPY = "numpy"  # a top-level gpukit function with NumPy's name and semantics
NN = "nn"  # reached through gpukit.nn
INTERNAL = "internal"  # used by gpukit itself (copies, fills)


@dataclass(frozen=True)
class ElementwiseOp:
    name: str
    arity: int
    # The C expression of the kernel functor over inputs a, b, c in the compute type T.
    expr: str
    # How result dtypes are found: a NumPy ufunc's name ("exp": float results for integer
    # inputs), or COMMON / SELECT (NumPy's promotion of all operands / all but the first), or
    # ANGLE (np.angle's).
    rule: str
    doc: str
    # The CPU backend's implementation f(*inputs, out) over NumPy arrays; None: NumPy's ufunc of
    # the same name with out= (same_kind casting).
    cpu: Callable | None = None
    namespace: str = NUMPY
    # The Python operator it serves ("add": __add__, __radd__, __iadd__) and whether the
    # reflected and in-place forms exist.
    dunder: str | None = None
    reflected: bool = True
    aliases: tuple[str, ...] = ()
    # Complex operands raise TypeError even where the rule would type them (ordering, which the
    # Array API leaves undefined, and functions with no complex form here).
    real_only: bool = False
    # Computed in the loop dtype's own format (nextafter steps to its neighbouring value), also
    # for bfloat16, which the other ops compute in float32.
    storage: bool = False
    # A long math routine (a libm-style polynomial with range cases, or a loop), not one or two
    # instructions: with 8 or more elements to a 16-byte vector, the kernel's instruction issue
    # rivals its memory time, and a capped grid that strides beats one block per chunk of the
    # array (which every other op takes). Measured per op on the H100 (notes/memory_bound.md).
    long_math: bool = False

    @property
    def numpy_reference(self):
        """NumPy's function of this name, when NumPy has one."""
        return getattr(np, self.name, None)


def _sigmoid(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    np.reciprocal(out, out=out)


def _erf(x, out):
    np.copyto(out, np.frompyfunc(math.erf, 1, 1)(x), casting="unsafe")


def _in_accumulator(f):
    """An activation `f(x)` computed in float32 for 16-bit inputs (float64 stays), rounded once."""

    def run(x, out):
        acc = np.float64 if x.dtype == np.float64 else np.float32
        np.copyto(out, f(x.astype(acc, copy=False)), casting="unsafe")

    return run


def _in_accumulator2(f):
    """`_in_accumulator` for a function of two arrays."""

    def run(a, b, out):
        acc = np.float64 if np.float64 in (a.dtype, b.dtype) else np.float32
        np.copyto(out, f(a.astype(acc, copy=False), b.astype(acc, copy=False)), casting="unsafe")

    return run


def _gelu(x):
    erf = np.frompyfunc(math.erf, 1, 1)(x * 0.7071067811865476).astype(x.dtype)
    return 0.5 * x * (1 + erf)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def _copy(x, out):
    if isinstance(x, np.ndarray) and x.dtype.kind == "c" and out.dtype.kind not in "cb":
        x = x.real  # the cast NumPy warns about (the front end warns), without its warning here
    np.copyto(out, x, casting="unsafe")


def _angle(x, out):
    np.copyto(out, np.angle(x), casting="unsafe")


def _op(name, arity, expr, rule=None, doc="", **kw) -> ElementwiseOp:
    return ElementwiseOp(name, arity, expr, rule or name, doc, **kw)


def _binary(name, expr, doc, **kw) -> ElementwiseOp:
    return _op(name, 2, expr, doc=f"Elementwise {doc}, with broadcasting.", **kw)


def _unary(name, expr, doc, **kw) -> ElementwiseOp:
    return _op(name, 1, expr, doc=f"Elementwise {doc}.", **kw)


_NAN_WINS_MAX = "(a != a || a > b) ? a : b"
_NAN_WINS_MIN = "(a != a || a < b) ? a : b"

# fmt: off
ELEMENTWISE: dict[str, ElementwiseOp] = {
    op.name: op
    for op in (
        _op("identity", 1, "a", COMMON, "A copy, cast to the output's dtype.", cpu=_copy,
            namespace=INTERNAL),
        _unary("negative", "(T)(-a)", "-x", dunder="neg", aliases=("neg",)),
        _unary("positive", "a", "+x", dunder="pos"),
        _unary("absolute", "gk_absolute(a)", "|x|", dunder="abs", aliases=("abs",)),
        _unary("logical_not", "!a", "not x"),
        _unary("invert", "gk_invert(a)", "~x (bitwise not; logical not for bool)",
               dunder="invert", aliases=("bitwise_invert",)),
        _unary("exp", "gkm_exp(a)", "e**x"),
        _unary("log", "gkm_log(a)", "natural log", long_math=True),
        _unary("sqrt", "gkm_sqrt(a)", "square root"),
        _unary("rsqrt", "gkm_rsqrt(a)", "1 / sqrt(x)", rule="sqrt",
               cpu=lambda x, out: np.reciprocal(np.sqrt(x, out=out), out=out)),
        _unary("sin", "gkm_sin(a)", "sine", long_math=True),
        _unary("cos", "gkm_cos(a)", "cosine", long_math=True),
        _unary("tanh", "gkm_tanh(a)", "hyperbolic tangent"),
        _unary("erf", "gkm_erf(a)", "the error function", rule="exp", cpu=_erf, real_only=True,
               long_math=True),
        _unary("sigmoid", "(T)1 / ((T)1 + gkm_exp(-a))", "1 / (1 + exp(-x))", rule="exp",
               cpu=_sigmoid, real_only=True),
        _unary("floor", "gk_floor(a)", "largest integer <= x"),
        _unary("ceil", "gk_ceil(a)", "smallest integer >= x"),
        _unary("trunc", "gk_trunc(a)", "x rounded toward zero"),
        _unary("rint", "gkm_rint(a)", "x rounded to the nearest integer, halves to even"),
        _unary("sign", "gk_sign(a)",
               "-1, 0 or 1 (NaN stays); x / |x| for complex x (0 for 0)"),
        _unary("log1p", "gkm_log1p(a)", "log(1 + x), accurate for small x", long_math=True),
        _unary("expm1", "gkm_expm1(a)", "exp(x) - 1, accurate for small x", long_math=True),
        _unary("log2", "gkm_log2(a)", "base-2 logarithm", long_math=True),
        _unary("log10", "gkm_log10(a)", "base-10 logarithm", long_math=True),
        _unary("exp2", "gkm_exp2(a)", "2**x"),
        _unary("tan", "gkm_tan(a)", "tangent", long_math=True),
        _unary("sinh", "gkm_sinh(a)", "hyperbolic sine", long_math=True),
        _unary("cosh", "gkm_cosh(a)", "hyperbolic cosine"),
        _unary("arcsin", "gkm_asin(a)", "inverse sine", aliases=("asin",), long_math=True),
        _unary("arccos", "gkm_acos(a)", "inverse cosine", aliases=("acos",), long_math=True),
        _unary("arctan", "gkm_atan(a)", "inverse tangent", aliases=("atan",), long_math=True),
        _unary("arcsinh", "gkm_asinh(a)", "inverse hyperbolic sine", aliases=("asinh",),
               long_math=True),
        _unary("arccosh", "gkm_acosh(a)", "inverse hyperbolic cosine", aliases=("acosh",),
               long_math=True),
        _unary("arctanh", "gkm_atanh(a)", "inverse hyperbolic tangent", aliases=("atanh",),
               long_math=True),
        _unary("cbrt", "gkm_cbrt(a)", "cube root", long_math=True),
        _unary("fabs", "gkm_fabs(a)", "|x| of real floats"),
        _unary("square", "(T)(a * a)", "x * x"),
        _unary("reciprocal", "gk_reciprocal(a)",
               "1 / x (integers: 1 / x rounded toward zero, as NumPy's integer loops)"),
        _unary("deg2rad", "a * (T)0.017453292519943295", "degrees to radians",
               aliases=("radians",)),
        _unary("rad2deg", "a * (T)57.29577951308232", "radians to degrees",
               aliases=("degrees",)),
        _unary("signbit", "gk_signbit(a)", "whether the sign bit is set (-0.0 and -nan too)"),
        _unary("isnan", "gk_isnan(a)", "whether x is NaN (either part of a complex x)"),
        _unary("isinf", "gk_isinf(a)", "whether x is infinite (either part of a complex x)"),
        _unary("isfinite", "gk_isfinite(a)",
               "whether x is neither infinite nor NaN (both parts of a complex x)"),
        _unary("conjugate", "gk_conj(a)", "complex conjugate (x itself for real x)",
               aliases=("conj",)),
        _op("angle", 1, "gk_angle(a)", ANGLE,
            "The counterclockwise angle of complex x from the positive real axis, in radians "
            "(0 or pi for real x); with deg=True in degrees.", cpu=_angle),
        # Activations (gpukit.nn), with torch's definitions; relu keeps NaN.
        _unary("relu", "(a > (T)0 || a != a) ? a : (T)0", "max(x, 0); NaN stays NaN",
               rule="exp", namespace=NN, cpu=_in_accumulator(lambda x: np.maximum(x, 0)),
               real_only=True),
        _unary("silu", "a / ((T)1 + gkm_exp(-a))", "x * sigmoid(x)", rule="exp", namespace=NN,
               cpu=_in_accumulator(lambda x: x / (1 + np.exp(-x))), real_only=True),
        _unary("gelu", "(T)0.5 * a * ((T)1 + gkm_erf(a * (T)0.7071067811865476))",
               "x * Phi(x)", rule="exp", namespace=NN, cpu=_in_accumulator(_gelu),
               real_only=True, long_math=True),
        _unary("gelu_tanh",
               "(T)0.5 * a * ((T)1 + gkm_tanh((T)0.7978845608028654 * "
               "(a + (T)0.044715 * a * a * a)))",
               "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", rule="exp", namespace=NN,
               cpu=_in_accumulator(_gelu_tanh), real_only=True, long_math=True),
        # true_divide's types: float loops as multiply's, integers promoted to a float (as silu).
        _op("silu_mul", 2, "a / ((T)1 + gkm_exp(-a)) * b", "true_divide",
            "silu(gate) * up elementwise, rounded once (SwiGLU's product), with broadcasting.",
            namespace=NN, cpu=_in_accumulator2(lambda a, b: a / (1 + np.exp(-a)) * b),
            real_only=True),
        _binary("add", "(T)(a + b)", "x + y", dunder="add"),
        _binary("subtract", "(T)(a - b)", "x - y", dunder="sub"),
        _binary("multiply", "(T)(a * b)", "x * y", dunder="mul"),
        _binary("true_divide", "a / b", "x / y", dunder="truediv", aliases=("divide",)),
        _binary("floor_divide", "gk_floor_divide(a, b)", "x // y (Python's floor division)",
                dunder="floordiv"),
        _binary("remainder", "gk_remainder(a, b)", "x % y (sign of y)", dunder="mod",
                aliases=("mod",)),
        _binary("power", "gk_power(a, b)",
                "x ** y (integers to negative integer powers raise ValueError, as in NumPy)",
                dunder="pow", aliases=("pow",), long_math=True),
        _binary("float_power", "gk_power(a, b)", "x ** y computed in float64 (or complex128)"),
        _binary("maximum", _NAN_WINS_MAX,
                "larger (NaN wins; complex numbers in NumPy's order, real parts first)"),
        _binary("minimum", _NAN_WINS_MIN,
                "smaller (NaN wins; complex numbers in NumPy's order, real parts first)"),
        _binary("fmax", "gk_fmax(a, b)", "larger, a NaN losing to a number"),
        _binary("fmin", "gk_fmin(a, b)", "smaller, a NaN losing to a number"),
        _binary("fmod", "gk_fmod(a, b)", "C's remainder of x / y (sign of x)"),
        _binary("arctan2", "gkm_atan2(a, b)", "angle of the point (y, x) = (x1, x2)",
                aliases=("atan2",), long_math=True),
        _binary("hypot", "gkm_hypot(a, b)", "sqrt(x**2 + y**2) without overflow"),
        _binary("logaddexp", "gk_logaddexp(a, b)", "log(exp(x) + exp(y))", long_math=True),
        _binary("logaddexp2", "gk_logaddexp2(a, b)", "log2(2**x + 2**y)", long_math=True),
        _binary("copysign", "gkm_copysign(a, b)", "|x| with the sign of y (-0.0 counts)"),
        _binary("nextafter", "gk_nextafter<GK_LOOP_T>(a, b)",
                "the next representable value after x toward y", storage=True),
        _binary("heaviside", "gk_heaviside(a, b)", "Heaviside step: 0, y at x == 0, or 1"),
        _binary("ldexp", "gk_ldexp(a, b)", "x * 2**y for integer exponents y"),
        _binary("gcd", "gk_gcd(a, b)", "greatest common divisor of |x| and |y|", long_math=True),
        _binary("lcm", "gk_lcm(a, b)", "least common multiple of |x| and |y|", long_math=True),
        _binary("left_shift", "gk_left_shift(a, b)", "x << y", dunder="lshift",
                aliases=("bitwise_left_shift",)),
        _binary("right_shift", "gk_right_shift(a, b)", "x >> y", dunder="rshift",
                aliases=("bitwise_right_shift",)),
        _binary("equal", "a == b", "x == y", dunder="eq", reflected=False),
        _binary("not_equal", "a != b", "x != y", dunder="ne", reflected=False),
        _binary("less", "a < b", "x < y", dunder="lt", reflected=False, real_only=True),
        _binary("less_equal", "a <= b", "x <= y", dunder="le", reflected=False, real_only=True),
        _binary("greater", "a > b", "x > y", dunder="gt", reflected=False, real_only=True),
        _binary("greater_equal", "a >= b", "x >= y", dunder="ge", reflected=False,
                real_only=True),
        _binary("logical_and", "a && b", "x and y"),
        _binary("logical_or", "a || b", "x or y"),
        _binary("logical_xor", "(bool)a != (bool)b", "x xor y"),
        _binary("bitwise_and", "(T)(a & b)", "x & y", dunder="and"),
        _binary("bitwise_or", "(T)(a | b)", "x | y", dunder="or"),
        _binary("bitwise_xor", "(T)(a ^ b)", "x ^ y", dunder="xor"),
        _op("where", 3, "a ? b : c", SELECT,
            "x where `condition` is true, else y, broadcasting all three (NumPy's where); "
            "with only `condition`, the indices of its true elements (nonzero).",
            cpu=lambda c, x, y, out: np.copyto(out, np.where(c, x, y), casting="unsafe")),
        _op("clip", 3, "gk_clip(a, b, c)", COMMON,
            "x limited to [min, max] elementwise; a bound of None leaves that side open "
            "(`a_min` / `a_max` are NumPy's keywords for them). NaN stays NaN.",
            cpu=lambda x, lo, hi, out: np.copyto(out, np.clip(x, lo, hi), casting="unsafe"),
            real_only=True),
    )
}
# fmt: on


def functor_source(op: ElementwiseOp) -> str:
    """The kernel functor `gk_op` of `op`, as kernels/elementwise.cu expects it ahead of its
    source."""
    params = ", ".join(f"T {v}" for v in "abc"[: op.arity])
    return (
        '#include "compat.cuh"\n'
        "struct gk_op {\n"
        "    template <typename T>\n"
        f"    __device__ auto operator()({params}) const {{\n"
        f"        return {op.expr};\n"
        "    }\n"
        "};\n"
    )
