"""Property tests of elementwise ops and operators against NumPy, through the public API only:
random shapes (0-d, size-0 axes, broadcasting), every dtype pair, Python and NumPy scalars,
NaN/inf/-0. A result matches NumPy's (same dtype and shape; values exact for integers and bool,
within the result dtype's tolerance otherwise, NaN where NumPy has NaN), or gpukit raises the
exception type NumPy raises. bfloat16 follows PyTorch's promotion (the README's table) and
computes in float32 rounded once, so its reference is NumPy in float32 rounded to bfloat16."""

import operator

import numpy as np
import pytest
from conftest import TOLERANCE
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import DTYPES, FLOATS, arrays, np_dtype, property_test

import gpukit as gk

BF16 = gk.bfloat16
UNARY = ["negative", "absolute", "exp", "log", "sqrt", "sin", "cos", "tanh", "floor", "ceil"]
UNARY += ["sign", "logical_not", "invert", "positive"]
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power"]
BINARY += ["maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater"]
BINARY += ["greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and"]
BINARY += ["bitwise_or", "bitwise_xor"]
OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "==": operator.eq,
    "<": operator.lt,
    ">=": operator.ge,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
}
# Transcendental functions are correctly rounded nowhere: a few units of the result's precision.
SCALE = 4.0
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
_BOOL_RESULT = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
_BOOL_RESULT |= {"logical_and", "logical_or", "logical_xor", "logical_not"}


def _error_kind(e: BaseException) -> type:
    """The builtin exception class NumPy's error derives from (UFuncTypeError -> TypeError)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


def _bf16_target(dtypes) -> np.dtype:
    """The float type bfloat16 arrays meet `dtypes` in (PyTorch's rule, the README's table)."""
    if np.dtype("float64") in dtypes:
        return np.dtype("float64")
    if np.dtype("float32") in dtypes or np.dtype("float16") in dtypes:
        return np.dtype("float32")
    return BF16


def _is_numeric(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype != np.bool_


def _numpy_reference(fn, operands, name=None):
    """(result, None) or (None, exception) of `fn` on NumPy data; bfloat16 arrays as gpukit
    computes them (in float32, or the wider float they meet, rounded once to the result)."""
    arrays_ = [x for x in operands if isinstance(x, (np.ndarray, np.generic))]  # scalars: strong
    with np.errstate(all="ignore"):
        if not any(x.dtype == BF16 for x in arrays_):
            try:
                return np.asarray(fn(*operands)), None
            except Exception as e:
                return None, e
        target = _bf16_target({x.dtype for x in arrays_})
        compute = np.dtype("float32") if target == BF16 else target
        cast = [x.astype(compute) if _is_numeric(x) else x for x in operands]
        try:
            out = np.asarray(fn(*cast))
        except Exception as e:
            return None, e
    if out.dtype == compute and target == BF16 and name not in _BOOL_RESULT:
        out = out.astype(BF16)
    return out, None


def _check(got_fn, ref_fn, operands, name=None, tol_scale=SCALE, raw=False):
    """got_fn on gpukit operands against ref_fn on NumPy ones (as they are with `raw`, else
    through _numpy_reference)."""
    gk_operands = [gk.asarray(x) if isinstance(x, np.ndarray) else x for x in operands]
    if raw:
        try:
            with np.errstate(all="ignore"):
                expected, error = np.asarray(ref_fn(*operands)), None
        except Exception as e:
            expected, error = None, e
    else:
        expected, error = _numpy_reference(ref_fn, operands, name)
    if error is not None:
        with pytest.raises(_error_kind(error)):
            got_fn(*gk_operands)
        return
    got = got_fn(*gk_operands)
    assert isinstance(got, gk.GPUArray)
    result = got.to_numpy()
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    if result.dtype.kind in "biu":
        np.testing.assert_array_equal(result, expected)
    else:
        tol = TOLERANCE[result.dtype] * tol_scale
        np.testing.assert_allclose(
            result.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol
        )


python_scalars = st.one_of(
    st.booleans(),
    st.integers(-300, 300),
    st.floats(-100, 100, allow_subnormal=False),
    st.sampled_from([0.0, -0.0, float("nan"), float("inf")]),
)
numpy_scalars = st.one_of(
    st.floats(-100, 100).map(np.float64),
    st.floats(-100, 100, width=32).map(np.float32),
    st.integers(-100, 100).map(np.int64),
    st.integers(-100, 100).map(np.int32),
    st.integers(0, 200).map(np.uint8),
)


@st.composite
def two_operands(draw):
    """Two arrays of drawn dtypes and mutually broadcastable shapes (0-d and size 0 included)."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4))
    d1, d2 = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES))
    return draw(arrays(d1, shapes.input_shapes[0])), draw(arrays(d2, shapes.input_shapes[1]))


@pytest.mark.parametrize("name", UNARY)
@property_test(25)
@given(data=st.data())
def test_unary(backend, name, data):
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES))), label="x")
    ref = getattr(np, name)
    _check(getattr(gk, name), ref, [x], name)


@pytest.mark.parametrize("name", BINARY)
@property_test(40)
@given(data=st.data())
def test_binary(backend, name, data):
    x, y = data.draw(two_operands(), label="operands")
    _check(getattr(gk, name), getattr(np, name), [x, y], name)


@pytest.mark.parametrize("name", BINARY)
@property_test(30)
@given(data=st.data())
def test_with_scalar(backend, name, data):
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES))), label="x")
    s = data.draw(st.one_of(python_scalars, numpy_scalars), label="scalar")
    first = data.draw(st.booleans(), label="scalar first")
    operands = [s, x] if first else [x, s]
    _check(getattr(gk, name), getattr(np, name), operands, name)


@pytest.mark.parametrize("symbol", list(OPERATORS))
@property_test(40)
@given(data=st.data())
def test_operators(backend, symbol, data):
    """a <op> b for arrays and scalars on either side, and the in-place form a <op>= b (which
    NumPy casts back with same_kind)."""
    op = OPERATORS[symbol]
    x, y = data.draw(two_operands(), label="operands")
    if data.draw(st.booleans(), label="scalar right"):
        y = data.draw(st.one_of(python_scalars, numpy_scalars), label="scalar")
    _check(op, op, [x, y], None)
    if isinstance(y, np.ndarray) and data.draw(st.booleans(), label="reflected"):
        _check(lambda a, b: op(b, a), lambda a, b: op(b, a), [x, y], None)


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/", "//", "&", "**"])
@property_test(30)
@given(data=st.data())
def test_in_place(backend, symbol, data):
    op = OPERATORS[symbol]
    iop = getattr(operator, "i" + op.__name__.strip("_") if symbol != "/" else "itruediv")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(arrays(dtype), label="x")
    y = data.draw(st.one_of(python_scalars, arrays(data.draw(st.sampled_from(DTYPES)))), "y")

    def ref(a, b):
        if BF16 not in (a.dtype, getattr(b, "dtype", None)):  # NumPy's own in-place operator
            return iop(a.copy(), b)
        # NumPy checks the cast before the shapes: the result dtype from one-element operands.
        one = [np.ones(1, x.dtype) if isinstance(x, np.ndarray) else x for x in (a, b)]
        probe, error = _numpy_reference(op, one, None)
        if error is None and not _same_kind(probe.dtype, a.dtype):
            raise TypeError("same_kind")
        expected, error = _numpy_reference(op, [a, b], None)
        if error is not None:
            raise error
        if np.broadcast_shapes(expected.shape, a.shape) != a.shape:
            raise ValueError("result does not fit")
        return expected.astype(a.dtype)

    def got(a, b):
        before = a
        a = iop(a, b)
        assert a is before  # in place: the same array
        return a

    _check(got, ref, [x, y], None, raw=True)


def _same_kind(src, dst) -> bool:
    f32 = np.dtype("float32")
    src, dst = (f32 if d == BF16 else d for d in (src, dst))
    return bool(np.can_cast(src, dst, "same_kind"))


@property_test(40)
@given(data=st.data())
def test_where_and_clip(backend, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4))
    c = data.draw(arrays("bool", shapes.input_shapes[0]), label="condition")
    d1, d2 = (data.draw(st.sampled_from(DTYPES)) for _ in range(2))
    x = data.draw(arrays(d1, shapes.input_shapes[1]), label="x")
    y = data.draw(arrays(d2, shapes.input_shapes[2]), label="y")
    _check(gk.where, np.where, [c, x, y], "where")
    if np_dtype(d1).kind in "fiu" or d1 == "bfloat16":
        lo, hi = sorted(data.draw(st.tuples(st.integers(-50, 50), st.integers(-50, 50))))
        if d1 == "bfloat16" or np_dtype(d1).kind == "f":
            lo, hi = float(lo), float(hi)
        if np_dtype(d1).kind == "u":
            lo, hi = abs(lo), abs(hi) + abs(lo)
        _check(lambda a: gk.clip(a, lo, hi), lambda a: np.clip(a, lo, hi), [x], "clip")


@property_test(40)
@given(data=st.data())
def test_out(backend, data):
    """out= of any float dtype, including a strided view, receives the cast result and is
    returned; every element of the view is written and nothing outside it."""
    x, y = data.draw(two_operands(), label="operands")
    dtype = np_dtype(data.draw(st.sampled_from(FLOATS), label="out dtype"))
    shape = np.broadcast_shapes(x.shape, y.shape)
    expected, error = _numpy_reference(np.add, [x, y], "add")
    assume(error is None and _same_kind(expected.dtype, dtype))
    if expected.dtype == BF16:  # computed in float32 and rounded once, into out's dtype
        expected = np.add(*(v.astype(np.float32) for v in (x, y)))
    base = gk.full((*shape, 2), float("nan"), dtype)  # every other element: the view's
    out = base[..., 0]
    result = gk.add(gk.asarray(x), gk.asarray(y), out=out)
    assert result is out
    got = base.to_numpy()
    tol = TOLERANCE[dtype] * SCALE
    np.testing.assert_allclose(
        got[..., 0].astype(np.float64),
        expected.astype(dtype).astype(np.float64),
        rtol=tol,
        atol=tol,
    )
    assert np.isnan(got[..., 1].astype(np.float64)).all()  # untouched
