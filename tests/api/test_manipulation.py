"""Rearranging functions against NumPy: every dtype (they only move data, so results are exact),
contiguous and non-contiguous inputs, odd shapes, and their error messages."""

import numpy as np
import pytest
from array_cases import ALL_DTYPES, assert_same, layouts, poisoned
from conftest import random_array

import gpukit as gk


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_transposes_flips_rolls(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 5, 2), dtype):
        assert_same(gk.permute_dims(a, (2, 0, 1)), np.permute_dims(x, (2, 0, 1)))
        assert_same(gk.matrix_transpose(a), np.matrix_transpose(x))
        assert_same(gk.moveaxis(a, 0, -1), np.moveaxis(x, 0, -1))
        assert_same(gk.moveaxis(a, (0, 2), (2, 0)), np.moveaxis(x, (0, 2), (2, 0)))
        for axis in (None, 0, -1, (0, 2)):
            assert_same(gk.flip(a, axis), np.flip(x, axis))
        assert_same(gk.fliplr(a), np.fliplr(x))
        assert_same(gk.flipud(a), np.flipud(x))
        for k, axes in ((1, (0, 1)), (2, (1, 2)), (3, (0, 2)), (-1, (2, 0)), (4, (0, 1))):
            assert_same(gk.rot90(a, k, axes), np.rot90(x, k, axes))
        for shift, axis in ((2, None), (-7, None), (4, 1), ((1, -2), (0, 2)), ((3, 1), (1, 1))):
            assert_same(gk.roll(a, shift, axis), np.roll(x, shift, axis))
    assert gk.flip(a)._buf is a._buf  # a view, as NumPy's
    with pytest.raises(ValueError, match="do not match an array of 3 dimensions"):
        gk.permute_dims(a, (1, 0))
    with pytest.raises(ValueError, match="repeated axis"):
        gk.permute_dims(a, (1, 1, 0))
    with pytest.raises(np.exceptions.AxisError):
        gk.flip(a, 3)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        gk.matrix_transpose(gk.ones(3))
    with pytest.raises(ValueError, match=r"Input must be >= 2-d"):
        gk.fliplr(gk.ones(3))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_repeat_tile(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 4), dtype):
        assert_same(gk.repeat(a, 3), np.repeat(x, 3))
        assert_same(gk.repeat(a, 2, axis=0), np.repeat(x, 2, axis=0))
        assert_same(gk.repeat(a, 0, axis=1), np.repeat(x, 0, axis=1))
        counts = rng.integers(0, 4, size=4)
        assert_same(gk.repeat(a, counts, axis=-1), np.repeat(x, counts, axis=-1))
        assert_same(gk.repeat(a, gk.asarray(counts), axis=1), np.repeat(x, counts, axis=1))
        assert_same(a.repeat(2, axis=1), x.repeat(2, axis=1))
        for reps in (2, (2, 1), (1, 3, 2), (0, 2), (2, 2, 1, 1)):
            assert_same(gk.tile(a, reps), np.tile(x, reps))
    with pytest.raises(ValueError, match="negative values"):
        gk.repeat(a, -1)
    with pytest.raises(ValueError, match=r"repeats of shape \(3,\) do not match axis 1"):
        gk.repeat(a, [1, 2, 3], axis=1)
    with pytest.raises(ValueError, match="negative dimensions"):
        gk.tile(a, (-1, 2))


@pytest.mark.parametrize("dtype", ["bool", "int16", "bfloat16", "float32"])
def test_array_and_copy(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 4), dtype):
        for got in (gk.array(a), gk.copy(a)):
            assert got._buf is not a._buf and got.is_contiguous
            assert_same(got, x)
        assert gk.array(a, copy=False) is a
        assert_same(gk.array(x, ndmin=4), np.array(x, ndmin=4))
        assert_same(gk.array(a, dtype="float64"), x.astype("float64"))
    assert_same(gk.array([[1, 2]], dtype=gk.int8), np.array([[1, 2]], dtype="int8"))
    assert_same(gk.copy([1.5, 2.0]), np.copy([1.5, 2.0]))


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint64", "bfloat16", "float32"])
def test_reshape_ravel_unstack_broadcast(backend, rng, dtype):
    for layout, a, x in layouts(rng, (4, 6), dtype):
        for shape in ((24,), (2, 3, 4), (-1, 8), (6, 1, 4)):
            assert_same(gk.reshape(a, shape), x.reshape(shape))
        copied = gk.reshape(a, (6, 4), copy=True)
        assert copied._buf is not a._buf
        assert_same(copied, x.reshape(6, 4))
        if layout == "contiguous":
            assert gk.reshape(a, (8, 3), copy=False)._buf is a._buf
        else:
            with pytest.raises(ValueError, match="cannot be reshaped without a copy"):
                gk.reshape(a, (8, 3), copy=False)
        assert_same(gk.ravel(a), np.ravel(x))
        for axis in (0, 1, -1):
            parts = gk.unstack(a, axis=axis)
            assert isinstance(parts, tuple)
            for p, r in zip(parts, np.unstack(x, axis=axis), strict=True):
                assert_same(p, r)
        col = random_array(rng, (4, 1), dtype)
        got = gk.broadcast_arrays(a, gk.asarray(col), gk.asarray(col[0]))
        for g, r in zip(got, np.broadcast_arrays(x, col, col[0]), strict=True):
            assert_same(g, r)
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        gk.broadcast_arrays(a, gk.ones((3,)))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float16", "bfloat16", "float64"])
def test_joins(backend, rng, dtype):
    cases = list(layouts(rng, (3, 4), dtype))
    gks = [a for _, a, _ in cases]
    nps = [x for _, _, x in cases]
    for axis in (0, 1, -1, None):
        assert_same(gk.concat(gks, axis=axis), np.concat(nps, axis=axis))
        assert_same(gk.concatenate(gks, axis), np.concatenate(nps, axis))
    mixed = [gks[0], gk.asarray(random_array(rng, (2, 4), "int64"))]
    joined = gk.result_type(*mixed)  # bfloat16 with int64 is bfloat16 (PyTorch's rule)
    ref = np.concatenate([nps[0].astype(joined), mixed[1].to_numpy().astype(joined)])
    assert_same(gk.concat(mixed), ref)
    assert_same(gk.concatenate(gks, dtype="float32"), np.concatenate(nps, dtype="float32"))
    out = poisoned((9, 4), dtype)
    assert gk.concatenate(gks, out=out) is out
    assert_same(out, np.concatenate(nps))
    vecs = [random_array(rng, (5,), dtype) for _ in range(3)]
    gvecs = [gk.asarray(v) for v in vecs]
    for fn in ("vstack", "hstack", "dstack", "column_stack"):
        for g, r in ((gvecs, vecs), (gks, nps)):
            assert_same(getattr(gk, fn)(g), getattr(np, fn)(r))
    assert_same(gk.append(gks[1], gks[2]), np.append(nps[1], nps[2]))
    assert_same(gk.append(gks[1], gks[2], axis=1), np.append(nps[1], nps[2], axis=1))
    for fn in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for x in (vecs[0][0], vecs[0], nps[1], random_array(rng, (2, 3, 2), dtype)):
            assert_same(getattr(gk, fn)(gk.asarray(x)), getattr(np, fn)(x))
        got = getattr(gk, fn)(gvecs[0], gks[0])
        assert isinstance(got, tuple) and len(got) == 2
    with pytest.raises(ValueError, match="need at least one array"):
        gk.concat([])
    with pytest.raises(TypeError, match="cannot cast float64 to int8 with casting='same_kind'"):
        gk.concatenate([gk.ones(2)], dtype="int8")
    with pytest.raises(ValueError, match=r"out has shape \(2,\)"):
        gk.concatenate([gk.ones(3)], out=gk.ones(2))


@pytest.mark.parametrize("dtype", ["int32", "bfloat16", "float64"])
def test_splits_and_delete(backend, rng, dtype):
    for _, a, x in layouts(rng, (7, 5), dtype):
        for sections, axis in ((3, 0), (4, 1), (7, 0), (9, 1), ([2, 5], 0), ([1, 1, 9], 1)):
            got = gk.array_split(a, sections, axis)
            ref = np.array_split(x, sections, axis)
            assert len(got) == len(ref)
            for g, r in zip(got, ref, strict=True):
                assert_same(g, r)
        for g, r in zip(gk.split(a, [3, 4], 1), np.split(x, [3, 4], 1), strict=True):
            assert_same(g, r)
        for obj, axis in (
            (1, 0),
            ([0, -1], 1),
            (slice(1, 6, 2), 0),
            ([True, False] * 2 + [True], 1),
        ):
            assert_same(gk.delete(a, obj, axis), np.delete(x, obj, axis))
        assert_same(gk.delete(a, [3, 30]), np.delete(x, [3, 30]))
    with pytest.raises(ValueError, match="number sections must be larger than 0"):
        gk.array_split(a, 0)
    with pytest.raises(ValueError, match="does not result in an equal division"):
        gk.split(a, 3)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 5"):
        gk.delete(a, 9, axis=1)


@pytest.mark.parametrize("dtype", ["uint8", "int64", "float16", "bfloat16", "float32"])
def test_copyto(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 5), dtype):
        src = random_array(rng, (5,), dtype)
        mask = rng.random((4, 5)) < 0.5
        gk.copyto(a, gk.asarray(src), where=gk.asarray(mask))
        np.copyto(x, src, where=mask)
        assert_same(a, x)
        gk.copyto(a, 3)
        np.copyto(x, 3)
        assert_same(a, x)
        small = random_array(rng, (4, 1), "uint8")
        gk.copyto(a, gk.asarray(small))
        np.copyto(x, small)
        assert_same(a, x)
    with pytest.raises(TypeError, match="with casting='safe'"):
        gk.copyto(gk.ones(3, "int8"), gk.ones(3, "int64"), casting="safe")
    with pytest.raises(TypeError, match="cannot cast float64 to int8"):
        gk.copyto(gk.ones(3, "int8"), 1.5)
    with pytest.raises(OverflowError, match="Python integer 1000 out of bounds for int8"):
        gk.copyto(gk.ones(3, "int8"), 1000)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        gk.copyto(gk.ones(3), gk.ones(4))
