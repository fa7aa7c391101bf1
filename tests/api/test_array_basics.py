"""GPUArray's core: creation, conversion, views, arithmetic, matmul, reductions; parity with NumPy
on fresh random data, on every backend."""

import numpy as np
import pytest
from conftest import assert_matches, random_array

import gpukit as gk

FLOATS = ["float16", "bfloat16", "float32", "float64"]
NUMERIC = ["int8", "int32", "int64", "uint8", *FLOATS]


def test_the_issue_example(backend):
    a = gk.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal((a @ a.T).to_numpy(), [[5.0, 14.0], [14.0, 50.0]])


@pytest.mark.parametrize("dtype", ["bool", *NUMERIC])
def test_round_trip_keeps_values_shape_dtype(backend, rng, dtype):
    host = random_array(rng, (3, 5, 7), dtype)
    a = gk.asarray(host)
    assert (a.shape, a.dtype, a.ndim, a.size, a.nbytes) == (
        host.shape,
        host.dtype,
        3,
        105,
        host.nbytes,
    )
    assert a.device == str(gk.device()) and a.device.split(":")[0] == backend
    np.testing.assert_array_equal(a.to_numpy(), host)
    np.testing.assert_array_equal(np.asarray(a), host)
    np.testing.assert_array_equal(gk.to_numpy(gk.from_numpy(host)), host)


def test_creation_functions_match_numpy(backend):
    assert_matches(gk.zeros((2, 3)), np.zeros((2, 3)))
    assert_matches(gk.ones(4, dtype="int32"), np.ones(4, np.int32))
    assert_matches(gk.full((3, 1), 2.5, dtype="float32"), np.full((3, 1), 2.5, np.float32))
    assert_matches(gk.full(2, 7), np.full(2, 7))
    assert gk.empty((0, 4)).shape == (0, 4)
    for args, kw in [
        ((7,), {}),
        ((2, 11, 3), {}),
        ((0.5, 3.0, 0.25), {}),
        ((5,), {"dtype": "float32"}),
        ((10, 0, -3), {}),
        ((3, 3), {}),
    ]:
        assert_matches(gk.arange(*args, **kw), np.arange(*args, **kw))
    assert gk.asarray([[1, 2], [3, 4]]).dtype == np.int64
    assert gk.asarray(3.0).shape == ()


def test_unsupported_dtypes_raise_type_error(backend):
    with pytest.raises(TypeError, match=r"does not support dtype datetime64\[s\]"):
        gk.zeros(3, dtype="datetime64[s]")
    with pytest.raises(TypeError, match="not a dtype"):
        gk.zeros(3, dtype="no-such-type")


def test_reshape_views_and_copies(backend, rng):
    host = random_array(rng, (4, 6), "float32")
    a = gk.asarray(host)
    assert_matches(a.reshape(3, 8), host.reshape(3, 8))
    assert_matches(a.reshape((2, -1, 3)), host.reshape((2, -1, 3)))
    assert a.reshape(24).shares_memory(a), "reshaping a contiguous array is a view"
    assert_matches(a.T.reshape(-1), host.T.reshape(-1))
    with pytest.raises(ValueError, match=r"cannot reshape array of size 24 into shape \(5, 5\)"):
        a.reshape(5, 5)


@pytest.mark.parametrize("src", NUMERIC)
@pytest.mark.parametrize("dst", ["bool", "int32", "float16", "bfloat16", "float32", "float64"])
def test_astype_matches_numpy(backend, rng, src, dst):
    host = random_array(rng, (33,), src)
    assert_matches(gk.asarray(host).astype(dst), host.astype(dst))


def test_copy_is_independent(backend, rng):
    a = gk.asarray(random_array(rng, (5,), "float64"))
    b = a.copy()
    assert not b.shares_memory(a)
    np.testing.assert_array_equal(b.to_numpy(), a.to_numpy())


OPS = [
    ("add", lambda x, y: x + y),
    ("subtract", lambda x, y: x - y),
    ("multiply", lambda x, y: x * y),
    ("true_divide", lambda x, y: x / y),
]


@pytest.mark.parametrize("name,op", OPS)
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize(
    "shapes", [((7,), (7,)), ((3, 1, 5), (4, 1)), ((1,), (2, 3)), ((), (5,)), ((0, 3), (3,))]
)
def test_binary_ops_broadcast_like_numpy(backend, rng, name, op, dtype, shapes):
    x, y = (random_array(rng, s, dtype) for s in shapes)
    if name == "true_divide":
        y = np.where(y == 0, 1, y).astype(dtype)
    expected = op(x.astype(np.float64), y.astype(np.float64))
    result_dtype = op(x, y).dtype
    if result_dtype.kind in "iu":  # wrap-around in the integer dtype is part of NumPy's answer
        expected = op(x, y)
    assert_matches(op(gk.asarray(x), gk.asarray(y)), expected.astype(result_dtype), result_dtype)


@pytest.mark.parametrize("name,op", OPS)
def test_python_scalars_follow_numpy_promotion(backend, rng, name, op):
    x = random_array(rng, (6,), "float32")
    a = gk.asarray(x)
    for scalar in (3, 2.5, True):
        assert_matches(op(a, scalar), op(x.astype(np.float64), scalar), op(x, scalar).dtype)
        assert_matches(op(scalar, a), op(scalar, x.astype(np.float64)), op(scalar, x).dtype)
    i = gk.asarray(np.array([1, 2, 3], np.int8))
    assert (i + 1).dtype == np.int8 and (i * 2.0).dtype == np.float64


def test_non_contiguous_operands(backend, rng):
    x = random_array(rng, (5, 9), "float32")
    y = random_array(rng, (9, 5), "float32")
    a, b = gk.asarray(x), gk.asarray(y)
    assert not a.T.is_contiguous
    assert_matches(a.T + b, x.T.astype(np.float64) + y, "float32")
    assert_matches(a.T * 2 - b, x.T.astype(np.float64) * 2 - y, "float32")


def test_mismatched_shapes_name_both(backend):
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4,\)"):
        gk.ones((2, 3)) + gk.ones(4)


def test_arrays_of_different_backends_do_not_mix(backend):
    if len(gk.available_backends()) < 2:
        pytest.skip("one backend here")
    other = next(b for b in gk.available_backends() if b != backend)
    a = gk.ones(3)
    with gk.use_backend(other):
        b = gk.ones(3)
    with pytest.raises(ValueError, match="different devices"):
        a + b


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16", "bfloat16"])
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((2, 3), (3, 4)),
        ((17, 33), (33, 9)),
        ((5,), (5, 3)),
        ((4, 6), (6,)),
        ((7,), (7,)),
        ((2, 3, 4), (4, 5)),
        ((3, 1, 4, 2), (5, 2, 3)),
        ((1, 1), (1, 1)),
        ((0, 3), (3, 2)),
    ],
)
def test_matmul_matches_numpy(backend, rng, dtype, a_shape, b_shape):
    x, y = random_array(rng, a_shape, dtype), random_array(rng, b_shape, dtype)
    expected = np.matmul(x.astype(np.float64), y.astype(np.float64))
    if dtype == "int32":
        expected = np.matmul(x, y)
    k = a_shape[-1]
    assert_matches(
        gk.asarray(x) @ gk.asarray(y), expected.astype(dtype), dtype, scale=max(1, k**0.5)
    )


def test_matmul_transposed_and_shape_errors(backend, rng):
    x = random_array(rng, (19, 6), "float32")
    a = gk.asarray(x)
    assert_matches(a.T @ a, x.T.astype(np.float64) @ x, "float32", scale=4)
    assert_matches(x.T @ a, x.T.astype(np.float64) @ x, "float32", scale=4)
    with pytest.raises(ValueError, match=r"\(19, 6\) and \(19, 6\) are not aligned"):
        a @ a
    with pytest.raises(ValueError, match="0-d"):
        a @ gk.asarray(2.0)


@pytest.mark.parametrize("name", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", ["int32", "int64", *FLOATS])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(backend, rng, name, dtype, axis, keepdims):
    x = random_array(rng, (6, 7, 5), dtype)
    ref = getattr(np, name)(x.astype(np.float64), axis=axis, keepdims=keepdims)
    result_dtype = getattr(np, name)(x, axis=axis).dtype
    if result_dtype.kind in "iu":
        ref = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    got = getattr(gk.asarray(x), name)(axis=axis, keepdims=keepdims)
    assert_matches(got, np.asarray(ref).astype(result_dtype), result_dtype, scale=10)


def test_reductions_of_odd_and_strided_inputs(backend, rng):
    x = random_array(rng, (1001, 3), "float32")
    a = gk.asarray(x)
    assert_matches(a.T.sum(axis=1), x.T.astype(np.float64).sum(axis=1), "float32", scale=30)
    assert_matches(a.max(), x.max())
    assert_matches(gk.zeros((0, 3)).sum(axis=0), np.zeros(3))
    with pytest.raises(ValueError, match="zero-size array"):
        gk.zeros((0, 3)).max(axis=0)
    with pytest.raises(np.exceptions.AxisError):
        a.sum(axis=2)


def test_repr_shows_values_dtype_device(backend):
    a = gk.arange(3, dtype="float32")
    assert a.device == ("cpu" if backend == "cpu" else f"{backend}:0")
    assert repr(a) == f"GPUArray([0., 1., 2.], dtype=float32, device={a.device})"


def test_memory_comes_from_the_pool(backend):
    before = gk.memory.stats()
    a = gk.empty((1000,), "float64")
    after = gk.memory.stats()
    assert after["allocations"] == before["allocations"] + 1
    assert after["allocated_bytes"] >= before["allocated_bytes"] + 8000
    del a
    b = gk.empty((1000,), "float64")
    reused = gk.memory.stats()
    assert reused["cache_hits"] == after["cache_hits"] + 1, "a freed block is reused"
    assert reused["backend_allocations"] == after["backend_allocations"]
    del b


@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        (slice(None), 2),
        slice(1, None, 2),
        (Ellipsis, -2),
        (None, 0),
        slice(None, None, -1),
        (slice(3, 0, -2), None, slice(None, None, 3)),
        (0, 1, 2),
        slice(5, 2),
    ],
)
def test_basic_indexing_gives_views_like_numpy(backend, rng, key):
    x = random_array(rng, (5, 4, 7), "float32")
    a = gk.asarray(x)
    view = a[key]
    assert view.shares_memory(a), "basic indexing never copies"
    np.testing.assert_array_equal(view.to_numpy(), x[key])
    np.testing.assert_array_equal((view * 2).to_numpy(), x[key] * 2)


def test_bad_indices_name_the_problem(backend):
    a = gk.zeros((3, 4))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        a[3]
    with pytest.raises(IndexError, match="too many indices"):
        a[0, 0, 0]
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        a[[0, 3]]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_copies_within_a_dtype_keep_every_bit(backend, rng, dtype):
    """NaNs of either sign with any payload, -0.0 and subnormals survive strided copies, as in
    NumPy (a round trip through another float type would canonicalize the NaNs)."""
    dtype = np.dtype(gk.bfloat16 if dtype == "bfloat16" else dtype)
    raw = np.dtype(f"uint{8 * dtype.itemsize}")
    bits = rng.integers(0, np.iinfo(raw).max, size=(37, 29), dtype=raw, endpoint=True)
    x = bits.view(dtype)
    a = gk.asarray(x)
    for got, want in (
        (gk.ascontiguousarray(a.T), x.T),
        (a[::-2, 1::3].copy(), x[::-2, 1::3]),
        (a.astype(dtype), x),
    ):
        np.testing.assert_array_equal(
            got.to_numpy().view(raw), np.ascontiguousarray(want).view(raw)
        )
