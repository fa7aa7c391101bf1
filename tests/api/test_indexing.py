"""Advanced indexing against NumPy: integer arrays, boolean masks, take, nonzero, and writes
through advanced keys; index arrays from lists, NumPy and the device; bounds errors."""

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"]


def check(x, a, key, device_key=None):
    """a[key] (or a[device_key], the same key with arrays on the device) matches NumPy."""
    got = a[key if device_key is None else device_key]
    ref = x[key]
    assert isinstance(got, gk.GPUArray)
    assert got.shape == ref.shape, (key, got.shape, ref.shape)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.to_numpy(), ref)


def on_device(key):
    key = key if isinstance(key, tuple) else (key,)
    return tuple(gk.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_array_indexing_every_dtype(backend, rng, dtype):
    x = random_array(rng, (7, 5, 3), dtype)
    a = gk.asarray(x)
    idx = rng.integers(-7, 7, size=11)
    for key in (idx, (idx, 2), (slice(None), rng.integers(0, 5, size=(2, 3))), (..., [0, -1])):
        check(x, a, key)
        check(x, a, key, on_device(key))
    for itype in ("int8", "int32", "uint8"):  # narrower index arrays, host and device
        key = (idx.astype(itype) % 7, slice(None), [[2], [0]])
        check(x, a, key)
        check(x, a, key, on_device(key))


def test_numpy_placement_of_advanced_dimensions(backend, rng):
    x = random_array(rng, (4, 5, 6, 7), "float32")
    a = gk.asarray(x)
    i = rng.integers(0, 4, size=(2, 3))
    j = rng.integers(-5, 5, size=(3,))
    k = rng.integers(0, 6, size=(2, 1))
    keys = [
        (i, j),  # adjacent at the front
        (slice(None), j, k),  # adjacent in the middle: (4, 2, 3, 7)
        (i, slice(1, 4), k),  # separated by a slice: broadcast dims first
        (i, None, j),  # separated by None
        (0, slice(None), k),  # an integer beside an array counts as an index array
        (slice(None), 1, slice(None), [2, 0]),
        (None, i, ..., 3),
        (i[:, :1], j[:2].reshape(1, 2), slice(None, None, -2)),
        (np.array(2), slice(None)),  # a 0-d index array
    ]
    for key in keys:
        check(x, a, key)
        check(x, a, key, on_device(key))


def test_non_contiguous_sources_and_index_arrays(backend, rng):
    x = random_array(rng, (9, 8, 6), "float64")
    a = gk.asarray(x)
    xs, as_ = x.transpose(2, 0, 1)[:, ::-2], a.transpose(2, 0, 1)[:, ::-2]
    idx = rng.integers(0, 5, size=(4, 6))
    check(xs, as_, (slice(None), idx[:, ::2]))
    got = as_[:, gk.asarray(idx)[:, ::2]]  # a strided index array on the device
    np.testing.assert_array_equal(got.to_numpy(), xs[:, idx[:, ::2]])
    # Row gathers whose rows may move as wide words: offsets and widths of several kinds.
    for dtype in ("uint8", "float16", "float32", "float64"):
        y = random_array(rng, (10, 33), dtype)
        b = gk.asarray(y)
        for sl in (slice(None), slice(1, 33), slice(0, 32), slice(8, 24)):
            rows = rng.integers(0, 10, size=7)
            check(y, b, (rows, sl))
            check(y[:, sl], b[:, sl], rows)


def test_odd_sizes_empty_and_zero_dim_results(backend, rng):
    x = random_array(rng, (1031,), "int32")
    a = gk.asarray(x)
    idx = rng.integers(-1031, 1031, size=4099)
    check(x, a, idx)
    check(x, a, [])
    check(x, a, np.zeros((0, 3), np.int64))
    check(x, a, np.array(5))
    y = random_array(rng, (0, 4), "float32")
    check(y, gk.asarray(y), (slice(None), [1, 2]))
    check(y, gk.asarray(y), ([], slice(None)))


def test_boolean_masks(backend, rng):
    x = random_array(rng, (6, 5, 4), "float32")
    a = gk.asarray(x)
    full = x > 0.3
    lead = rng.random((6, 5)) < 0.4
    first = rng.random(6) < 0.5
    for key in (
        full,
        lead,
        first,
        (slice(None), rng.random(5) < 0.5),
        (first, 1),
        (lead, np.array([[0], [3]])),
    ):
        check(x, a, key)
        check(x, a, key, on_device(key))
    check(x, a, x > 100)  # nothing selected
    check(x, a, np.ones_like(full))  # everything
    got = a[a > 0]  # the common form: a mask computed on the device
    np.testing.assert_array_equal(got.to_numpy(), x[x > 0])
    for key in (True, False, (0, True), (Ellipsis, False)):
        check(x, a, key)


def test_large_mask_spans_many_tiles(backend, rng):
    x = random_array(rng, (3, 10007), "float64")  # several 4096-element tiles, a ragged tail
    a = gk.asarray(x)
    m = x > 0.5
    check(x, a, m, gk.asarray(m))
    got = a[:, ::-1][gk.asarray(m[:, ::-1])]  # a non-contiguous source, mask from device
    np.testing.assert_array_equal(got.to_numpy(), x[:, ::-1][m[:, ::-1]])


def test_nonzero_flatnonzero_take(backend, rng):
    x = random_array(rng, (5, 7, 9), "int16")
    x[x % 3 == 0] = 0
    a = gk.asarray(x)
    got = gk.nonzero(a)
    ref = np.nonzero(x)
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g.to_numpy(), r)
    np.testing.assert_array_equal(gk.flatnonzero(a.transpose()).to_numpy(), np.flatnonzero(x.T))
    np.testing.assert_array_equal(gk.nonzero(gk.zeros(0))[0].to_numpy(), np.zeros(0, np.int64))
    f = np.array([0.0, np.nan, -0.0, 2.0])
    np.testing.assert_array_equal(gk.flatnonzero(f).to_numpy(), np.flatnonzero(f))
    with pytest.raises(ValueError, match="0d"):
        gk.nonzero(gk.asarray(3))
    idx = rng.integers(-7, 7, size=(3, 2))
    for axis in (None, 0, 1, -1):
        i = rng.integers(-x.size, x.size, size=4) if axis is None else idx % x.shape[axis]
        for ind in (i, gk.asarray(i), i.tolist()):
            got = gk.take(a, ind, axis=axis)
            np.testing.assert_array_equal(got.to_numpy(), np.take(x, i, axis=axis))
    assert gk.take(a, 3).shape == ()
    assert int(gk.take(a, 3)) == x.reshape(-1)[3]
    with pytest.raises(TypeError, match="integer"):
        gk.take(a, [0.5])


def test_out_of_range_indices_raise_index_error(backend):
    a = gk.arange(12).reshape(3, 4)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        a[[0, 3]]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        a[:, np.array([1, -5])]
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 4"):
        a[None, :, gk.asarray([0, 7, 1])]  # checked on the device
    with pytest.raises(IndexError, match="index -9 is out of bounds for axis 0 with size 3"):
        gk.take(a, gk.asarray([[0], [-9]]), axis=0)
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        a[1, [4]]
    with pytest.raises(IndexError, match="boolean index did not match"):
        a[np.ones(4, bool)]
    with pytest.raises(IndexError, match="integer \\(or boolean\\) type"):
        a[np.array([0.0])]
    with pytest.raises(IndexError, match="could not be broadcast"):
        a[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices"):
        a[[0], [0], [0]]
    with pytest.raises(IndexError, match="valid indices"):
        a[{"x": 1}]


@pytest.mark.parametrize("dtype", ["bool", "int64", "float16", "float32"])
def test_setitem_with_advanced_keys(backend, rng, dtype):
    x = random_array(rng, (6, 5, 4), dtype)
    y = random_array(rng, (6, 5, 4), dtype)
    rows = rng.permutation(6)[:3]  # no repeats: which repeated write lands is unspecified
    keys = [
        rows,
        (slice(None), [4, 0], [1, 2]),
        (rows[:2], slice(None), 3),
        x.astype(np.float64) > 0.2 if dtype != "bool" else x,
        rng.random((6, 5)) < 0.5,
    ]
    for key in keys:
        for dev in (False, True):
            ref, a = x.copy(), gk.asarray(x)
            value = y[key]
            ref[key] = value
            a[on_device(key) if dev else key] = gk.asarray(value) if dev else value
            np.testing.assert_array_equal(a.to_numpy(), ref)
    ref, a = x.copy(), gk.asarray(x)
    ref[rows, 1:3] = y[0, 0, :]  # a broadcast value, cast from float
    a[rows, 1:3] = y[0, 0, :]
    np.testing.assert_array_equal(a.to_numpy(), ref)
    ref[ref.astype(np.float64) < 0] = 0
    a[a.astype("float64") < 0] = 0
    np.testing.assert_array_equal(a.to_numpy(), ref)
    before = a.to_numpy()
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        a[gk.asarray([0, 6])] = 1
    np.testing.assert_array_equal(a.to_numpy(), before)  # nothing written
    with pytest.raises(ValueError, match="broadcast"):
        a[[0, 1]] = np.zeros((3, 5, 4), dtype)
