"""gpukit.sorting against NumPy on every backend: sort / argsort (stable, NaN last, -0.0 equal to
+0.0, every dtype, every axis, strided inputs), searchsorted, the unique family, order
statistics, partition, lexsort. Fresh random data with NaN, +-inf, -0.0 and duplicates."""

import numpy as np
import pytest
from array_cases import ALL_DTYPES
from conftest import assert_matches

import gpukit as gk

BF16 = gk.bfloat16
DTYPES = [np.dtype(t) for t in ALL_DTYPES]
SIZES = (0, 1, 31, 1025, (1 << 20) + 3)


def keys(rng, shape, dtype):
    """Random keys of `dtype` with many duplicates; floats also NaN (both signs), +-inf, -0.0."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        out = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
        dup = rng.random(shape) < 0.3
        out[dup] = rng.integers(0, 5, size=int(dup.sum())).astype(dtype)
        return out
    x = rng.standard_normal(shape) * 100
    u = rng.random(shape)
    x[u < 0.05] = np.nan
    x[(u >= 0.05) & (u < 0.08)] = -0.0
    x[(u >= 0.08) & (u < 0.11)] = 0.0
    x[(u >= 0.11) & (u < 0.13)] = np.inf
    x[(u >= 0.13) & (u < 0.15)] = -np.inf
    dup = (u >= 0.15) & (u < 0.35)
    x[dup] = np.round(x[dup] / 50)
    out = x.astype(dtype)
    raw = out.view(f"u{dtype.itemsize}")
    raw[u < 0.02] |= np.array(1 << (8 * dtype.itemsize - 1), raw.dtype)  # negative NaNs
    return out


def orderable(x):
    """NumPy cannot order bfloat16; float32 holds it exactly."""
    return x.astype(np.float32) if x.dtype == BF16 else x


def ref_argsort(x, axis=-1, descending=False):
    x = orderable(x)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def same_bits(got, expected):
    """Bit-for-bit equality (tells -0.0 from +0.0 and NaN payloads apart)."""
    assert got.shape == expected.shape and got.dtype == expected.dtype
    width = f"u{expected.dtype.itemsize}"
    np.testing.assert_array_equal(got.view(width), np.ascontiguousarray(expected).view(width))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", SIZES)
def test_sort_and_argsort_1d_match_numpy_stable(backend, rng, dtype, n):
    x = keys(rng, (n,), dtype)
    order = ref_argsort(x)
    a = gk.asarray(x)
    got = gk.argsort(a)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.to_numpy(), order)
    same_bits(gk.sort(a).to_numpy(), x[order])


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", BF16, "uint8"], ids=str)
@pytest.mark.parametrize("shape", [(3, 1025), (64, 50), (2, 3, 4100), (5, 1)])
def test_sort_every_axis_matches_numpy(backend, rng, dtype, shape):
    x = keys(rng, shape, dtype)
    a = gk.asarray(x)
    for axis in range(-len(shape), len(shape)):
        order = ref_argsort(x, axis)
        np.testing.assert_array_equal(gk.argsort(a, axis=axis).to_numpy(), order)
        same_bits(gk.sort(a, axis=axis).to_numpy(), np.take_along_axis(x, order, axis))
    flat = ref_argsort(x.reshape(-1))
    np.testing.assert_array_equal(gk.argsort(a, axis=None).to_numpy(), flat)
    same_bits(gk.sort(a, axis=None).to_numpy(), x.reshape(-1)[flat])


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "float16"])
def test_descending_keeps_ties_in_input_order(backend, rng, dtype):
    x = keys(rng, (7, 3001), dtype)
    a = gk.asarray(x)
    for axis in (0, 1):
        order = ref_argsort(x, axis, descending=True)
        got = gk.argsort(a, axis=axis, descending=True).to_numpy()
        np.testing.assert_array_equal(got, order)
        same_bits(
            gk.sort(a, axis=axis, descending=True).to_numpy(), np.take_along_axis(x, order, axis)
        )


def test_strided_inputs(backend, rng):
    x = keys(rng, (300, 257), "float32")
    a = gk.asarray(x)
    for view, ref in ((a.T, x.T), (a[::3, 1::2], x[::3, 1::2]), (a[::-1], x[::-1])):
        assert not view.is_contiguous
        order = ref_argsort(ref, 0)
        np.testing.assert_array_equal(gk.argsort(view, axis=0).to_numpy(), order)
        same_bits(gk.sort(view, axis=-1).to_numpy(), np.take_along_axis(ref, ref_argsort(ref), -1))


def test_methods_sort_in_place_and_argsort(backend, rng):
    x = keys(rng, (40, 33), "float64")
    a = gk.asarray(x)
    np.testing.assert_array_equal(a.argsort(axis=0).to_numpy(), ref_argsort(x, 0))
    a.sort(axis=0)
    same_bits(a.to_numpy(), np.sort(x, axis=0, kind="stable"))
    view = gk.asarray(x)[:, ::2]
    view.sort()
    same_bits(view.to_numpy(), np.sort(x[:, ::2], kind="stable"))


def test_sort_errors(backend):
    a = gk.asarray(np.arange(5.0))
    with pytest.raises(TypeError, match="structured"):
        gk.sort(a, order="x")
    with pytest.raises(np.exceptions.AxisError):
        gk.sort(a, axis=1)
    with pytest.raises(np.exceptions.AxisError):
        gk.argsort(gk.asarray(np.float64(3.0)))


# --- searchsorted --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "int64", "uint8", "float16", BF16, "bool"], ids=str
)
def test_searchsorted_matches_numpy(backend, rng, dtype):
    a = keys(rng, (5003,), dtype)
    a = a[ref_argsort(a)]
    v = np.concatenate([keys(rng, (2001,), dtype), a[rng.integers(0, a.size, 300)]])
    ga, gv = gk.asarray(a), gk.asarray(v)
    for side in ("left", "right"):
        expected = np.searchsorted(orderable(a), orderable(v), side=side)
        got = gk.searchsorted(ga, gv, side=side)
        np.testing.assert_array_equal(got.to_numpy(), expected)
        np.testing.assert_array_equal(
            ga.searchsorted(gv.reshape(13, -1), side).to_numpy(), expected.reshape(13, -1)
        )
    x = keys(rng, (5003,), dtype)
    sorter = ref_argsort(x)
    expected = np.searchsorted(orderable(x), orderable(v), side="right", sorter=sorter)
    got = gk.searchsorted(gk.asarray(x), gv, side="right", sorter=gk.asarray(sorter))
    np.testing.assert_array_equal(got.to_numpy(), expected)


def test_searchsorted_scalars_promotion_and_errors(backend, rng):
    a = np.sort(rng.standard_normal(100).astype(np.float32))
    ga = gk.asarray(a)
    got = gk.searchsorted(ga, 0.25)
    assert got.shape == () and int(got) == np.searchsorted(a, 0.25)
    ints = np.array([1, 5, 9], np.int8)
    np.testing.assert_array_equal(
        gk.searchsorted(gk.asarray(ints), [300, -300, 5]).to_numpy(),
        np.searchsorted(ints.astype(np.int64), [300, -300, 5]),
    )
    with pytest.raises(ValueError, match="1-D"):
        gk.searchsorted(gk.asarray(a.reshape(10, 10)), 0.5)
    with pytest.raises(ValueError, match="side"):
        gk.searchsorted(ga, 0.5, side="middle")
    with pytest.raises(ValueError, match="Sorter index out of range"):
        gk.searchsorted(ga, 0.5, sorter=np.full(100, 100))
    with pytest.raises(ValueError, match=r"sorter\.size"):
        gk.searchsorted(ga, 0.5, sorter=np.arange(99))


def test_digitize_matches_numpy(backend, rng):
    x = keys(rng, (1001,), "float64")
    up = np.sort(rng.standard_normal(17) * 100)
    for bins in (up, up[::-1]):
        for right in (False, True):
            np.testing.assert_array_equal(
                gk.digitize(gk.asarray(x), bins, right=right).to_numpy(),
                np.digitize(x, bins, right=right),
            )
    with pytest.raises(ValueError, match="monotonically"):
        gk.digitize(gk.asarray(x), [0.0, 2.0, 1.0])


# --- unique ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", (0, 1, 31, 1025, (1 << 20) + 3))
def test_unique_matches_numpy(backend, rng, dtype, n):
    x = keys(rng, (n,), dtype)
    ref = orderable(x)
    values, index, inverse, counts = gk.unique(gk.asarray(x), True, True, True)
    rv, ri, rinv, rc = np.unique(ref, return_index=True, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(orderable(values.to_numpy()), rv)
    assert values.dtype == x.dtype
    np.testing.assert_array_equal(index.to_numpy(), ri)
    np.testing.assert_array_equal(inverse.to_numpy(), rinv)
    np.testing.assert_array_equal(counts.to_numpy(), rc)
    only = gk.unique(gk.asarray(x))
    np.testing.assert_array_equal(orderable(only.to_numpy()), rv)


def test_unique_array_api_forms_treat_each_nan_as_distinct(backend, rng):
    x = keys(rng, (40, 31), "float32")
    g = gk.asarray(x)
    ref = np.unique_all(x)
    got = gk.unique_all(g)
    for name in ("values", "indices", "inverse_indices", "counts"):
        np.testing.assert_array_equal(getattr(got, name).to_numpy(), getattr(ref, name))
    assert got.inverse_indices.shape == x.shape
    np.testing.assert_array_equal(gk.unique_values(g).to_numpy(), np.unique_values(x))
    counts = gk.unique_counts(g)
    np.testing.assert_array_equal(counts.counts.to_numpy(), np.unique_counts(x).counts)
    # NumPy's unique_inverse sorts unstably, so which NaN entry each NaN maps to varies: check
    # that the values rebuild x and that every NaN has its own entry
    inv = gk.unique_inverse(g)
    values, where = inv.values.to_numpy(), inv.inverse_indices.to_numpy()
    np.testing.assert_array_equal(values, np.unique_values(x))
    np.testing.assert_array_equal(values[where], x)
    assert np.unique(where[np.isnan(x)]).size == np.isnan(x).sum()
    values, counts = gk.unique(g, return_counts=True, equal_nan=False)
    rv, rc = np.unique(x, return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(values.to_numpy(), rv)
    np.testing.assert_array_equal(counts.to_numpy(), rc)
    with pytest.raises(NotImplementedError, match="axis"):
        gk.unique(g, axis=0)


# --- order statistics -----------------------------------------------------------------------------


def floats_with_nans(rng, shape, dtype, nan_rows=True):
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    if nan_rows:
        x[rng.random(shape) < 0.05] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int32", "uint8"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
def test_quantile_percentile_median_match_numpy(backend, rng, dtype, axis):
    if np.dtype(dtype).kind == "f":
        x = floats_with_nans(rng, (6, 9, 11), dtype)
        x[0] = np.abs(x[0])  # a slice or two without NaN
    else:
        x = rng.integers(0, 100, (6, 9, 11)).astype(dtype)
    g = gk.asarray(x)
    for q in (0.5, 0.3, [0.0, 0.25, 0.7, 1.0], np.float32(0.9)):
        for keepdims in (False, True):
            exp = np.asarray(np.quantile(x, q, axis=axis, keepdims=keepdims))
            got = gk.quantile(g, q, axis=axis, keepdims=keepdims)
            if axis is None and np.isnan(exp).all():  # NumPy gives a lone NaN a's dtype
                exp = exp.astype(got.dtype)
            assert_matches(got, exp, scale=4)
    exp = np.percentile(x, [10, 50.5], axis=axis)
    assert_matches(gk.percentile(g, [10, 50.5], axis=axis), exp, scale=4)
    assert_matches(gk.median(g, axis=axis), np.median(x, axis=axis), scale=4)
    assert_matches(
        gk.median(g, axis=axis, keepdims=True), np.median(x, axis=axis, keepdims=True), scale=4
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nan_quantiles_and_median_ignore_nans(backend, rng, dtype):
    x = floats_with_nans(rng, (7, 13), dtype)
    x[2] = np.nan  # a slice of NaNs only gives NaN
    x[3, :12] = np.nan
    g = gk.asarray(x)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        exp_med = np.nanmedian(x, axis=1)
    assert_matches(gk.nanmedian(g, axis=1), exp_med)
    for q in (0.5, [0.1, 0.9]):
        with pytest.warns(RuntimeWarning):
            exp = np.nanquantile(x, q, axis=1)
        assert_matches(gk.nanquantile(g, q, axis=1), exp, scale=4)
    with pytest.warns(RuntimeWarning):
        exp = np.nanpercentile(x, 35, axis=1, keepdims=True)
    assert_matches(gk.nanpercentile(g, 35, axis=1, keepdims=True), exp, scale=4)


def test_quantile_out_and_errors(backend, rng):
    x = rng.standard_normal((5, 8))
    g = gk.asarray(x)
    out = gk.full((8,), np.nan)
    res = gk.quantile(g, 0.4, axis=0, out=out)
    assert res is out
    assert_matches(out, np.quantile(x, 0.4, axis=0))
    with pytest.raises(ValueError, match="range"):
        gk.quantile(g, 1.5)
    with pytest.raises(ValueError, match="range"):
        gk.percentile(g, -1)
    with pytest.raises(NotImplementedError, match="linear"):
        gk.quantile(g, 0.5, method="nearest")


def test_partition_and_argpartition_partition(backend, rng):
    x = rng.standard_normal((6, 101))
    g = gk.asarray(x)
    for kth in (0, 50, -1, [3, 70]):
        p = gk.partition(g, kth, axis=1).to_numpy()
        ip = gk.argpartition(g, kth, axis=1).to_numpy()
        for k in np.atleast_1d(kth):
            ref = np.partition(x, k, axis=1)[:, k]
            np.testing.assert_array_equal(p[:, k], ref)
            np.testing.assert_array_equal(np.take_along_axis(x, ip, 1)[:, k], ref)
            assert np.all(p[:, : k % 101] <= ref[:, None]) and np.all(
                p[:, k % 101 :] >= ref[:, None]
            )
    with pytest.raises(ValueError, match="out of bounds"):
        gk.partition(g, 101, axis=1)


def test_lexsort_matches_numpy(backend, rng):
    k1 = rng.integers(0, 4, (5, 200))
    k2 = rng.standard_normal((5, 200)).round(1)
    k3 = rng.integers(0, 3, (5, 200)).astype(np.int8)
    for axis in (-1, 0):
        got = gk.lexsort([gk.asarray(k1), gk.asarray(k2), gk.asarray(k3)], axis=axis)
        np.testing.assert_array_equal(got.to_numpy(), np.lexsort((k1, k2, k3), axis=axis))
