"""Elementwise ops with NumPy's names, promotion and broadcasting: parity with NumPy on fresh
random data (a float64 reference for smooth functions, NumPy in the same dtype for exact ones),
strided and broadcast operands, Python scalars, out= and in-place operators. Every backend."""

import math

import numpy as np
import pytest
from conftest import TOLERANCE, random_array

import gpukit as gk
from gpukit.runtime.ops import ELEMENTWISE, NUMPY

INTS = ["int8", "int32", "int64", "uint8"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
_erf = np.frompyfunc(math.erf, 1, 1)

# name -> float64 reference of the op
SMOOTH_UNARY = {
    "negative": np.negative,
    "absolute": np.absolute,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "erf": lambda x: _erf(x).astype(np.float64),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}
EXACT_UNARY = ["floor", "ceil", "sign", "logical_not", "positive"]
SMOOTH_BINARY = ["add", "subtract", "multiply", "true_divide", "power", "maximum", "minimum"]
EXACT_BINARY = [
    "floor_divide",
    "remainder",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]


def positive_if_needed(name, x):
    if name in ("log", "sqrt", "rsqrt"):
        return (np.abs(x) + 0.5).astype(x.dtype)
    return x


def expected_dtype(name, *operands):
    """NumPy's result dtype for the ufunc whose loop types the op's table entry says it takes."""
    probe = [np.ones(1, o.dtype) if isinstance(o, np.ndarray) else o for o in operands]
    return getattr(np, ELEMENTWISE[name].rule)(*probe).dtype


def test_every_numpy_op_of_the_table_is_a_gpukit_function():
    for op in ELEMENTWISE.values():
        if op.namespace == NUMPY:
            assert getattr(gk, op.name).__doc__ == op.doc
            for alias in op.aliases:
                assert getattr(gk, alias) is getattr(gk, op.name)


def check_close(got, ref, dtype, scale=4.0):
    got = got.to_numpy()
    assert got.dtype == dtype, (got.dtype, dtype)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    tol = TOLERANCE[np.dtype(dtype)] * scale
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(SMOOTH_UNARY))
@pytest.mark.parametrize("dtype", ["int32", *FLOATS])
def test_smooth_unary_against_float64(backend, rng, name, dtype):
    x = positive_if_needed(name, random_array(rng, (7, 143), dtype))
    out_dtype = expected_dtype(name, x)
    a = gk.asarray(x)
    if out_dtype.kind in "iu":  # exact, wrapping as NumPy does
        np.testing.assert_array_equal(getattr(gk, name)(a.T).to_numpy(), getattr(np, name)(x.T))
        return
    ref = SMOOTH_UNARY[name](x.astype(np.float64))
    check_close(getattr(gk, name)(a), ref, out_dtype)
    check_close(getattr(gk, name)(a.T), ref.T, out_dtype)  # strided input


@pytest.mark.parametrize("name", EXACT_UNARY)
@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float64", "bfloat16"])
def test_exact_unary_match_numpy(backend, rng, name, dtype):
    x = random_array(rng, (33, 5), dtype)
    if dtype.startswith("float"):
        x = (x * 3).astype(dtype)
    got = getattr(gk, name)(gk.asarray(x)[::2].T)
    ref = getattr(np, name)(x[::2].T)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.to_numpy(), ref)


def test_nan_propagates_like_numpy(backend):
    x = np.array([np.nan, 1.0, -2.0, np.inf], np.float32)
    y = np.array([0.0, np.nan, -3.0, 1.0], np.float32)
    a, b = gk.asarray(x), gk.asarray(y)
    for name in ("maximum", "minimum"):
        np.testing.assert_array_equal(getattr(gk, name)(a, b).to_numpy(), getattr(np, name)(x, y))
    np.testing.assert_array_equal(gk.sign(a).to_numpy(), np.sign(x))
    np.testing.assert_array_equal(gk.clip(a, -1, 0.5).to_numpy(), np.clip(x, -1, 0.5))


@pytest.mark.parametrize("name", SMOOTH_BINARY)
@pytest.mark.parametrize("dtype", [*INTS, *FLOATS])
def test_smooth_binary_broadcast_and_strided(backend, rng, name, dtype):
    x = random_array(rng, (4, 1, 9), dtype)
    y = random_array(rng, (9, 3), dtype).T  # (3, 9), strided
    if name == "power":
        x = np.abs(x) % 4 + (1 if dtype in INTS else 0.5)
        y = np.abs(y) % 3
        x, y = x.astype(dtype), y.astype(dtype)
    if name == "true_divide":
        y = np.where(y == 0, 1, y).astype(dtype)
    got = getattr(gk, name)(gk.asarray(x), gk.asarray(y.T).T)
    out_dtype = expected_dtype(name, x, y)
    if out_dtype.kind in "iu":  # integer results wrap exactly as NumPy's
        np.testing.assert_array_equal(got.to_numpy(), getattr(np, name)(x, y))
        assert got.dtype == out_dtype
    else:
        check_close(got, getattr(np, name)(x.astype(np.float64), y.astype(np.float64)), out_dtype)


@pytest.mark.parametrize("name", EXACT_BINARY + BITWISE)
@pytest.mark.parametrize("dtype", ["bool", *INTS, "float32", "float64", "bfloat16"])
def test_exact_binary_match_numpy(backend, rng, name, dtype):
    x = random_array(rng, (5, 1), dtype)
    y = random_array(rng, (5, 6), dtype)
    if name in ("floor_divide", "remainder") and dtype == "bool":
        pytest.skip("NumPy has no boolean floor division")
    try:
        ref = getattr(np, name)(x, y)
    except TypeError:
        with pytest.raises(TypeError, match=f"{name} is not defined"):
            getattr(gk, name)(gk.asarray(x), gk.asarray(y))
        return
    got = getattr(gk, name)(gk.asarray(x), gk.asarray(y))
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.to_numpy(), ref)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_division_by_zero_follows_numpy(backend, dtype):
    x = np.array([7, -7, 0, 5], dtype)
    y = np.array([0, 0, 0, -2], dtype)
    a, b = gk.asarray(x), gk.asarray(y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((a // b).to_numpy(), x // y)
        np.testing.assert_array_equal((a % b).to_numpy(), x % y)
        np.testing.assert_array_equal((a / b).to_numpy(), (x / y).astype((a / b).dtype))


@pytest.mark.parametrize("op", ["//", "%", "**", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^"])
@pytest.mark.parametrize("scalar", [3, 2.5, True])
def test_operators_with_python_scalars(backend, rng, op, scalar):
    x = (np.abs(random_array(rng, (17,), "int32")) + 1).astype(np.int32)
    a = gk.asarray(x)
    for left, right, g_left, g_right in ((x, scalar, a, scalar), (scalar, x, scalar, a)):
        env = {"left": left, "right": right, "g_left": g_left, "g_right": g_right}
        try:
            ref = eval(f"left {op} right", env)
        except TypeError:
            with pytest.raises(TypeError):
                eval(f"g_left {op} g_right", env)
            continue
        got = eval(f"g_left {op} g_right", env)
        assert got.dtype == ref.dtype, (op, scalar, got.dtype, ref.dtype)
        np.testing.assert_allclose(got.to_numpy(), ref, rtol=1e-12)


def test_unary_operators(backend, rng):
    x = random_array(rng, (6, 4), "int16")
    a = gk.asarray(x)
    for got, ref in ((-a, -x), (+a, +x), (abs(a), abs(x)), (~a, ~x), (~(a > 0), ~(x > 0))):
        assert got.dtype == ref.dtype
        np.testing.assert_array_equal(got.to_numpy(), ref)


def test_where_and_clip(backend, rng):
    x = random_array(rng, (8, 1), "float32")
    y = random_array(rng, (1, 5), "float32")
    c = random_array(rng, (8, 5), "bool")
    np.testing.assert_array_equal(
        gk.where(gk.asarray(c), gk.asarray(x), gk.asarray(y)).to_numpy(), np.where(c, x, y)
    )
    np.testing.assert_array_equal(
        gk.where(gk.asarray(c), gk.asarray(x), 0.5).to_numpy(), np.where(c, x, np.float32(0.5))
    )
    ints = random_array(rng, (8, 5), "int32")
    np.testing.assert_array_equal(
        gk.where(gk.asarray(ints), 1, -1).to_numpy(), np.where(ints, 1, -1)
    )
    np.testing.assert_array_equal(
        gk.clip(gk.asarray(ints), -10, 10).to_numpy(), np.clip(ints, -10, 10)
    )
    lo = random_array(rng, (5,), "float32") - 1
    np.testing.assert_array_equal(
        gk.clip(gk.asarray(x), gk.asarray(lo), 0.5).to_numpy(), np.clip(x, lo, np.float32(0.5))
    )


def test_out_and_in_place(backend, rng):
    x = random_array(rng, (4, 6), "float32")
    y = random_array(rng, (6,), "float32")
    a, b = gk.asarray(x), gk.asarray(y)
    out = gk.empty((4, 6), "float64")
    assert gk.add(a, b, out=out) is out
    np.testing.assert_allclose(out.to_numpy(), x.astype(np.float64) + y, rtol=1e-6)
    view = gk.zeros((6, 4), "float32").T  # a strided out
    gk.multiply(a, 2, out=view)
    np.testing.assert_array_equal(view.to_numpy(), x * 2)
    a += b
    a *= 2
    np.testing.assert_allclose(a.to_numpy(), (x + y) * 2, rtol=1e-6)
    s = gk.asarray(random_array(rng, (5, 5), "float64"))
    expected = s.to_numpy() + s.to_numpy().T
    s += s.T  # overlapping in- and output: NumPy's answer, not a half-updated one
    np.testing.assert_allclose(s.to_numpy(), expected)


def test_repeated_out_and_in_place_calls_take_fresh_data_and_keep_overlap_rules(backend, rng):
    """A repeated out= / in-place call of a kind seen before runs its plan at once: it must read
    this call's operands, refuse a read-only out, and still compute through a temporary when an
    operand overlaps out in another order (same shape and strides, another offset)."""
    n = 2**16 + 3  # many blocks: a plan run in place over an overlapping view would race
    base = gk.asarray(random_array(rng, (2 * n + 1,), "float32"))
    for _ in range(3):  # the first call plans, the later ones hit
        x, y = random_array(rng, (n,), "float32"), random_array(rng, (n,), "float32")
        out = gk.empty(n, "float32")
        gk.add(gk.asarray(x), gk.asarray(y), out=out)
        np.testing.assert_array_equal(out.to_numpy(), x + y)
        a = gk.asarray(x)
        a *= gk.asarray(y)
        np.testing.assert_array_equal(a.to_numpy(), x * y)
        a -= 2.5
        np.testing.assert_array_equal(a.to_numpy(), x * y - np.float32(2.5))
    whole = base.to_numpy()
    gk.add(base[1 : n + 1], 1.0, out=base[:n])  # same kind of call, out overlapping its input
    np.testing.assert_array_equal(base.to_numpy()[:n], whole[1 : n + 1] + np.float32(1.0))
    before = base.to_numpy()
    gk.add(base[:n], base[1 : n + 1], out=base[1 : n + 1])
    np.testing.assert_array_equal(base.to_numpy()[1 : n + 1], before[:n] + before[1 : n + 1])
    with pytest.raises(ValueError, match="read-only"):
        gk.add(gk.asarray(x), gk.asarray(y), out=gk.broadcast_to(gk.asarray(x[:1]), (n,)))


def test_out_errors_name_the_problem(backend):
    a = gk.ones((2, 3), "int32")
    with pytest.raises(TypeError, match="cannot cast the float64 result to out's int32"):
        a += 1.5
    with pytest.raises(ValueError, match=r"shape \(2, 3\) does not fit out of shape \(3,\)"):
        gk.add(a, a, out=gk.empty(3, "int32"))
    with pytest.raises(TypeError, match="bitwise_and is not defined for"):
        gk.ones(3, "float32") & gk.ones(3, "float32")


def test_integers_to_negative_integer_powers_raise_like_numpy(backend, rng):
    # Negative everywhere, so that every exponent drawn from x below is negative.
    x = -(np.abs(random_array(rng, (4, 3), "int32")) + 1)
    a = gk.asarray(x)
    message = "Integers to negative integer powers are not allowed."
    with pytest.raises(ValueError, match=message):
        x ** np.array([2, -1, 3], np.int32)  # NumPy's own answer, for reference
    for power in (
        lambda: a**-1,
        lambda: a ** gk.asarray(np.array([2, -1, 3], np.int8)),
        lambda: 2 ** gk.asarray(x.T)[:, ::2],
        lambda: gk.power(a, -2, out=gk.empty((4, 3), "int64")),
    ):
        with pytest.raises(ValueError, match=message):
            power()
    with pytest.raises(ValueError, match=message):
        a **= -3
    np.testing.assert_array_equal(a.to_numpy(), x, "a refused power leaves its operand alone")
    # Non-negative integer exponents, unsigned ones, and float results are fine.
    exps = np.abs(random_array(rng, (3,), "int32")) % 4
    np.testing.assert_array_equal((a ** gk.asarray(exps)).to_numpy(), x**exps)
    np.testing.assert_array_equal((a ** gk.asarray(exps.astype(np.uint8))).to_numpy(), x**exps)
    np.testing.assert_allclose((a**-1.0).to_numpy(), x**-1.0)
    assert (a[:0] ** gk.asarray(np.zeros((0, 3), np.int32))).shape == (0, 3)  # nothing to check
