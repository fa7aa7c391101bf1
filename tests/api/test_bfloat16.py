"""bfloat16 on every backend: PyTorch's promotion, float32 compute rounded once at the store (so
results equal float32 math rounded to bfloat16, bit for bit where float32 math is exact), creation
and conversion, reductions accumulated in float32."""

import numpy as np
import pytest
from conftest import assert_matches, random_array

import gpukit as gk

BF16 = gk.bfloat16


def test_bfloat16_is_ml_dtypes_bfloat16():
    import ml_dtypes

    assert gk.bfloat16 == np.dtype(ml_dtypes.bfloat16)
    assert gk.zeros(2, "bfloat16").dtype == BF16


@pytest.mark.parametrize(
    "other,expected",
    [
        ("bfloat16", BF16),
        ("bool", BF16),
        ("int8", BF16),
        ("uint8", BF16),
        ("int64", BF16),
        ("float16", np.dtype("float32")),
        ("float32", np.dtype("float32")),
        ("float64", np.dtype("float64")),
    ],
)
def test_promotion_follows_pytorch(backend, other, expected):
    a, b = gk.ones(3, BF16), gk.ones(3, other)
    assert (a + b).dtype == expected
    assert (b * a).dtype == expected
    assert gk.concatenate([a, b]).dtype == expected
    assert (a == b).dtype == np.bool_


def test_python_scalars_keep_bfloat16(backend):
    a = gk.ones(3, BF16)
    for result in (a + 1, 2.5 * a, a / 3, a**2, a - True, gk.maximum(a, 0.5)):
        assert result.dtype == BF16
    assert (a * 2.5).to_numpy().tolist() == [2.5, 2.5, 2.5]


def rounded_float32(op, *xs):
    """op computed in float32 on bfloat16 data, rounded once to bfloat16."""
    return op(*(x.astype(np.float32) for x in xs)).astype(BF16)


def _fma_like(x, y):
    """x * y + x with the product rounded to bfloat16 first, as two bfloat16 ops give."""
    return rounded_float32(lambda a, b: a + b, rounded_float32(lambda a, b: a * b, x, y), x)


@pytest.mark.parametrize(
    "op,ref",
    [
        (lambda x, y: x + y, lambda x, y: rounded_float32(lambda a, b: a + b, x, y)),
        (lambda x, y: x - y, lambda x, y: rounded_float32(lambda a, b: a - b, x, y)),
        (lambda x, y: x * y, lambda x, y: rounded_float32(lambda a, b: a * b, x, y)),
        (lambda x, y: x / y, lambda x, y: rounded_float32(lambda a, b: a / b, x, y)),
        (lambda x, y: x * y + x, _fma_like),
    ],
)
def test_arithmetic_rounds_float32_results_once(backend, rng, op, ref):
    x = random_array(rng, (5, 1, 37), BF16)
    y = random_array(rng, (37, 3), BF16).T  # strided (3, 37), broadcast against x
    got = op(gk.asarray(x), gk.asarray(y.T).T)
    assert got.dtype == BF16
    expected = ref(x, y)
    np.testing.assert_array_equal(got.to_numpy().view(np.uint16), expected.view(np.uint16))


def test_conversions_round_to_nearest_even_and_keep_specials(backend):
    # 1 + 2**-8 is halfway between two bfloat16 numbers: it rounds to the even one (1.0).
    values = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.5, 65504.0, 3e38, np.inf, -np.inf, np.nan])
    for src in ("float32", "float64"):
        host = values.astype(src)
        got = gk.asarray(host).astype(BF16).to_numpy()
        ref = host.astype(BF16)
        np.testing.assert_array_equal(got[:-1], ref[:-1])
        assert np.isnan(got[-1].astype(np.float32))
    back = gk.asarray(values.astype(BF16)).astype("float32").to_numpy()
    np.testing.assert_array_equal(back, values.astype(BF16).astype(np.float32))


def test_creation(backend):
    assert_matches(gk.zeros((2, 3), BF16), np.zeros((2, 3), BF16))
    assert_matches(gk.ones(5, "bfloat16"), np.ones(5, BF16))
    assert_matches(gk.full((3,), 1 / 3, BF16), np.full((3,), 1 / 3, BF16))
    assert_matches(gk.full(4, np.float32(2.75).astype(BF16)), np.full(4, 2.75, BF16))
    assert_matches(gk.arange(0, 300, 1.5, dtype=BF16), np.arange(0, 300, 1.5).astype(BF16))
    assert_matches(gk.zeros_like(gk.ones(2, BF16)), np.zeros(2, BF16))
    assert_matches(gk.eye(3, dtype=BF16), np.eye(3, dtype=BF16))
    a = gk.ones((2, 2), BF16)
    a[0, 1] = np.float32(5.5).astype(BF16)
    a[1] = 1 / 3
    np.testing.assert_array_equal(a.to_numpy(), np.array([[1, 5.5], [1 / 3, 1 / 3]]).astype(BF16))


def test_where_clip_and_comparisons(backend, rng):
    x = random_array(rng, (9, 7), BF16)
    y = random_array(rng, (7,), BF16)
    c = random_array(rng, (9, 1), "bool")
    a, b = gk.asarray(x), gk.asarray(y)
    strided = gk.asarray(x.T.copy()).T
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    assert_matches(gk.where(gk.asarray(c), strided, b), np.where(c, x32, y32), BF16)
    assert_matches(gk.where(a > 0, a, 0.5), np.where(x32 > 0, x32, 0.5), BF16)
    assert_matches(gk.clip(a, -0.5, b), np.clip(x32, -0.5, y32), BF16)
    for op in ("<", "<=", "==", "!=", ">", ">="):
        got = eval(f"a {op} b")
        assert_matches(got, eval(f"x.astype(np.float32) {op} y.astype(np.float32)"))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reductions_accumulate_in_float32(backend, rng, name):
    # 4099 ones and a value that a bfloat16 accumulator would lose: only float32 keeps the sum.
    x = np.ones(4099, BF16) if name != "prod" else np.full(4099, 1.0, BF16)
    x[17] = 3.0
    got = getattr(gk.asarray(x), name)()
    ref = getattr(np, name)(x.astype(np.float32)).astype(BF16)
    assert got.dtype == BF16
    np.testing.assert_array_equal(got.to_numpy(), ref)
    if name == "sum":  # a bfloat16 accumulator would stop at 256
        assert float(got.item()) == float(np.float32(4101).astype(BF16))


def test_var_std_argmax_cumsum_any_all(backend, rng):
    x = random_array(rng, (40, 33), BF16)
    a = gk.asarray(x)
    x64 = x.astype(np.float64)
    assert_matches(a.var(axis=0), x64.var(axis=0), BF16)
    assert_matches(a.std(ddof=1), x64.std(ddof=1), BF16)
    assert_matches(a.T.argmax(axis=1), np.argmax(x.astype(np.float32).T, axis=1))
    assert_matches(a.cumsum(axis=1), np.cumsum(x.astype(np.float32), axis=1).astype(BF16))
    assert_matches(gk.any(a > 3), np.any(x64 > 3))
    assert_matches(gk.all(a, axis=1), np.all(x64, axis=1))


@pytest.mark.parametrize("shapes", [((17, 33), (33, 9)), ((3, 5, 8), (8,)), ((0, 4), (4, 2))])
def test_matmul(backend, rng, shapes):
    x, y = (random_array(rng, s, BF16) for s in shapes)
    got = gk.asarray(x) @ gk.asarray(y)
    ref = np.matmul(x.astype(np.float64), y.astype(np.float64))
    assert_matches(got, ref.astype(BF16), BF16, scale=max(1, shapes[0][-1] ** 0.5) / 4)
    mixed = gk.asarray(x) @ gk.asarray(y.astype(np.float16))  # bf16 with f16 meets in float32
    assert_matches(mixed, ref.astype(np.float32), np.float32, scale=4 * shapes[0][-1] ** 0.5)


def test_integer_ops_refuse_bfloat16(backend):
    a = gk.ones(3, BF16)
    with pytest.raises(TypeError, match="bitwise_and is not defined"):
        a & a
    with pytest.raises(TypeError, match="cannot cast the bfloat16 result to out's int32"):
        gk.add(a, a, out=gk.empty(3, "int32"))
