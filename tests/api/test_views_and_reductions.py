"""Views, joins, assignment, the rest of the creation functions and reductions: parity with
NumPy on fresh random data, on every backend."""

import numpy as np
import pytest
from conftest import TOLERANCE, assert_matches, random_array

import gpukit as gk


def test_view_functions_share_memory(backend, rng):
    x = random_array(rng, (3, 1, 4), "float32")
    a = gk.asarray(x)
    cases = [
        (gk.swapaxes(a, 0, 2), np.swapaxes(x, 0, 2)),
        (gk.squeeze(a), np.squeeze(x)),
        (gk.squeeze(a, axis=1), np.squeeze(x, axis=1)),
        (gk.expand_dims(a, (0, 3)), np.expand_dims(x, (0, 3))),
        (gk.broadcast_to(a, (2, 3, 5, 4)), np.broadcast_to(x, (2, 3, 5, 4))),
        (gk.transpose(a, (2, 0, 1)), np.transpose(x, (2, 0, 1))),
    ]
    for got, ref in cases:
        assert got._buf is a._buf
        np.testing.assert_array_equal(got.to_numpy(), ref)
    contiguous = gk.ascontiguousarray(a.T)
    assert contiguous.is_contiguous and contiguous._buf is not a._buf
    np.testing.assert_array_equal(contiguous.to_numpy(), x.T)
    with pytest.raises(ValueError, match="size not equal to one"):
        gk.squeeze(a, axis=0)
    with pytest.raises(ValueError, match=r"cannot broadcast an array of shape \(3, 1, 4\)"):
        gk.broadcast_to(a, (3, 2, 5))


@pytest.mark.parametrize("dtype", ["int32", "float16", "bfloat16", "float64"])
def test_setitem_scalars_arrays_broadcasting(backend, rng, dtype):
    x = random_array(rng, (6, 5), dtype)
    a = gk.asarray(x)
    row = random_array(rng, (5,), "float32")
    col = random_array(rng, (3, 1), dtype)
    a[2] = 7
    x[2] = 7
    a[::2, 1:4] = gk.asarray(col)
    x[::2, 1:4] = col
    a[-1] = row  # a NumPy array, cast like NumPy does
    x[-1] = row
    a[1:, 0] = a[:-1, 0]  # overlapping source and destination
    x[1:, 0] = x[:-1, 0].copy()
    np.testing.assert_array_equal(a.to_numpy(), x)
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(4,\)"):
        a[0] = gk.ones(4, dtype)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_stack_split(backend, rng, axis):
    xs = [random_array(rng, (3, 4), "float32"), random_array(rng, (3, 4), "int32")]
    if axis == 0:
        xs.append(random_array(rng, (2, 4), "float64"))
    arrays = [gk.asarray(x) for x in xs]
    got = gk.concatenate(arrays, axis=axis)
    ref = np.concatenate(xs, axis=axis)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.to_numpy(), ref)
    same = [gk.asarray(x) for x in xs[:2]]
    np.testing.assert_array_equal(gk.stack(same, axis=axis).to_numpy(), np.stack(xs[:2], axis))
    for parts, ref_parts in ((gk.split(got, [1, 3], axis), np.split(ref, [1, 3], axis)),):
        for p, r in zip(parts, ref_parts, strict=True):
            np.testing.assert_array_equal(p.to_numpy(), r)
    with pytest.raises(ValueError, match="must match exactly"):
        gk.concatenate([gk.ones((2, 3)), gk.ones((2, 4))], axis=0)


def test_creation_like_linspace_eye(backend, rng):
    x = random_array(rng, (2, 3), "int16")
    a = gk.asarray(x)
    assert_matches(gk.zeros_like(a), np.zeros_like(x))
    assert_matches(gk.ones_like(a, dtype="float32"), np.ones_like(x, dtype=np.float32))
    assert_matches(gk.full_like(a, 7), np.full_like(x, 7))
    assert gk.empty_like(a).shape == (2, 3)
    for args in ((0, 1, 7), (2.5, -1, 4), (0, 10, 5, False), (3, 3, 1)):
        assert_matches(gk.linspace(*args), np.linspace(*args))
    assert_matches(gk.linspace(0, 1, 5, dtype="float32"), np.linspace(0, 1, 5, dtype=np.float32))
    for n, m, k in ((3, None, 0), (3, 5, 1), (4, 3, -2), (2, 2, 5)):
        assert_matches(gk.eye(n, m, k), np.eye(n, m, k))


REDUCTIONS = ["sum", "mean", "prod", "max", "min", "any", "all", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["bool", "int32", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_reductions_against_numpy(backend, rng, name, dtype, axis):
    x = random_array(rng, (5, 6, 7), dtype)
    if name == "prod" and dtype != "bool":
        # Factors near 1 (or small integers): the product stays finite in every dtype.
        x = np.sign(x) * (0.9 + np.abs(x) % 0.2) if "float" in dtype else x % 3 + 1
        x = x.astype(dtype)
    if dtype == "bool" and name in ("var", "std", "mean"):
        pytest.skip("NumPy's var/std/mean of bool go through float64 and are covered by int32")
    got = getattr(gk, name)(gk.asarray(x), axis=axis)
    ref_dtype = getattr(np, name)(x, axis=axis).dtype
    assert got.dtype == ref_dtype, (got.dtype, ref_dtype)
    if ref_dtype.kind in "biu":
        np.testing.assert_array_equal(got.to_numpy(), getattr(np, name)(x, axis=axis))
        return
    ref = getattr(np, name)(x.astype(np.float64), axis=axis)
    # float16 sums are rounded to float16 (NumPy) where ours are not; bfloat16 results are
    # float32 results rounded once.
    tol = TOLERANCE[ref_dtype] * {"float16": 50, "bfloat16": 1}.get(dtype, 10)
    np.testing.assert_allclose(got.to_numpy().astype(np.float64), ref, rtol=tol, atol=tol)


def test_reduction_edge_cases(backend, rng):
    empty = gk.zeros((0, 3))
    np.testing.assert_array_equal(gk.any(empty, axis=0).to_numpy(), [False] * 3)
    np.testing.assert_array_equal(gk.all(empty, axis=0).to_numpy(), [True] * 3)
    np.testing.assert_array_equal(gk.prod(empty, axis=0).to_numpy(), [1.0] * 3)
    with pytest.raises(ValueError, match="zero-size array to reduction operation min"):
        gk.min(empty, axis=0)
    x = random_array(rng, (9, 4), "float64")
    a = gk.asarray(x)
    np.testing.assert_allclose(a.var(axis=0, ddof=1).to_numpy(), x.var(axis=0, ddof=1))
    np.testing.assert_allclose(a.std(keepdims=True).to_numpy(), x.std(keepdims=True))
    np.testing.assert_allclose(a.T.min(axis=1).to_numpy(), x.T.min(axis=1))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["uint8", "int32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin_first_index_like_numpy(backend, rng, name, dtype, axis):
    x = (
        random_array(rng, (6, 300, 5), dtype)
        if axis != 1
        else random_array(rng, (3, 700, 4), dtype)
    )
    x = (x % 7).astype(dtype) if dtype in ("uint8", "int32") else x  # many ties: first one wins
    a = gk.asarray(x)
    for data, arr in ((x, a), (x.transpose(2, 1, 0), a.transpose(2, 1, 0))):
        got = getattr(arr, name)(axis=axis)
        ref = getattr(np, name)(data, axis=axis)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.to_numpy(), ref)
    np.testing.assert_array_equal(
        getattr(gk, name)(a, axis=axis, keepdims=True).to_numpy(),
        getattr(np, name)(x, axis=axis, keepdims=True),
    )


def test_argmax_nan_and_errors(backend):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 5.0, 1.0]], np.float32)
    a = gk.asarray(x)
    for name in ("argmax", "argmin"):
        np.testing.assert_array_equal(getattr(a, name)(axis=1).to_numpy(), getattr(np, name)(x, 1))
        assert int(getattr(a, name)()) == getattr(np, name)(x)
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        gk.zeros((0, 3)).argmax(axis=0)
    with pytest.raises(TypeError, match="takes one axis"):
        a.argmax(axis=(0, 1))


@pytest.mark.parametrize("dtype", ["bool", "int32", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_against_numpy(backend, rng, dtype, axis):
    x = random_array(rng, (3, 1100, 5), dtype)  # rows longer than one 256-element chunk
    a = gk.asarray(x)
    for data, arr in ((x, a), (x.transpose(1, 2, 0), a.transpose(1, 2, 0))):
        got = gk.cumsum(arr, axis=axis)
        ref_dtype = np.cumsum(data, axis=axis).dtype
        assert got.dtype == ref_dtype
        if ref_dtype.kind in "iu":
            np.testing.assert_array_equal(got.to_numpy(), np.cumsum(data, axis=axis))
            continue
        ref = np.cumsum(data.astype(np.float64), axis=axis)
        n = data.size if axis is None else data.shape[axis]
        tol = TOLERANCE[ref_dtype] * 4
        # 16-bit running sums are float32 sums rounded once each: no error grows with n.
        sixteen = ref_dtype in (np.float16, gk.bfloat16)
        atol = TOLERANCE[ref_dtype] if sixteen else tol * np.sqrt(n) * 4
        np.testing.assert_allclose(got.to_numpy().astype(np.float64), ref, rtol=tol, atol=atol)
