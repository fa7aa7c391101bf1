"""histogram, bincount, isin / in1d and the set functions against NumPy on every backend."""

import numpy as np
import pytest
from conftest import assert_matches

import gpukit as gk


def data(rng, n, dtype="float64"):
    x = rng.standard_normal(n) * 30
    dup = rng.random(n) < 0.2
    x[dup] = np.round(x[dup])  # values on integer edges and repeated
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8"])
@pytest.mark.parametrize("n", [1, 31, 1025, (1 << 20) + 3])
def test_histogram_counts_and_edges_match_numpy(backend, rng, dtype, n):
    x = data(rng, n, "float64")
    x = (np.abs(x) if dtype == "uint8" else x).astype(dtype)
    g = gk.asarray(x)
    for bins, range_ in ((10, None), (7, (-20, 35)), (1, None), (20001, (-40, 40))):
        counts, edges = gk.histogram(g, bins=bins, range=range_)
        ref_counts, ref_edges = np.histogram(x, bins=bins, range=range_)
        assert_matches(counts, ref_counts)
        assert_matches(edges, ref_edges)
    edges = np.sort(rng.standard_normal(12) * 25)
    counts, got_edges = gk.histogram(g, bins=gk.asarray(edges))
    assert_matches(counts, np.histogram(x, bins=edges)[0])
    assert_matches(got_edges, edges)


def test_histogram_weights_density_and_errors(backend, rng):
    x = data(rng, 5003)
    w = rng.random(5003)
    g = gk.asarray(x)
    counts, _ = gk.histogram(g, bins=13, weights=gk.asarray(w))
    ref, _ = np.histogram(x, bins=13, weights=w)
    assert_matches(counts, ref)
    dens, _ = gk.histogram(g, bins=[-50.0, -3.0, 0.0, 1.0, 60.0], density=True)
    assert_matches(dens, np.histogram(x, bins=[-50.0, -3.0, 0.0, 1.0, 60.0], density=True)[0])
    w32 = w.astype(np.float32)
    counts, _ = gk.histogram(g, bins=4, range=(-10, 10), weights=gk.asarray(w32))
    assert_matches(counts, np.histogram(x, bins=4, range=(-10, 10), weights=w32)[0])
    with pytest.raises(ValueError, match="positive"):
        gk.histogram(g, bins=0)
    with pytest.raises(ValueError, match="monotonically"):
        gk.histogram(g, bins=[0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="larger than min"):
        gk.histogram(g, range=(2, 1))
    bad = x.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        gk.histogram(gk.asarray(bad))


def test_histogram_excludes_nan_with_a_range(backend, rng):
    x = data(rng, 1000)
    x[::7] = np.nan
    x[::11] = np.inf
    counts, _ = gk.histogram(gk.asarray(x), bins=9, range=(-30, 30))
    assert_matches(counts, np.histogram(x, bins=9, range=(-30, 30))[0])


@pytest.mark.parametrize("n", [0, 1, 31, 1025, (1 << 20) + 3])
def test_bincount_matches_numpy(backend, rng, n):
    x = rng.integers(0, 300, n)
    g = gk.asarray(x)
    assert_matches(gk.bincount(g), np.bincount(x))
    assert_matches(gk.bincount(g, minlength=500), np.bincount(x, minlength=500))
    w = rng.standard_normal(n)
    got = gk.bincount(g, weights=gk.asarray(w), minlength=3)
    # (NumPy gives int64 zeros for no input with weights; gpukit keeps float64)
    assert_matches(got, np.bincount(x, weights=w, minlength=3).astype(np.float64), scale=1e3)
    again = gk.bincount(g, weights=gk.asarray(w), minlength=3)
    np.testing.assert_array_equal(got.to_numpy().view(np.uint64), again.to_numpy().view(np.uint64))
    assert_matches(
        gk.bincount(gk.asarray(x.astype(np.uint8) if n else x[:0].astype(np.uint8))),
        np.bincount(x.astype(np.uint8)),
    )


def test_bincount_wide_bins_and_errors(backend, rng):
    x = rng.integers(0, 100_000, 7001)  # more bins than shared memory holds
    assert_matches(gk.bincount(gk.asarray(x)), np.bincount(x))
    w = rng.random(7001)
    assert_matches(gk.bincount(gk.asarray(x), gk.asarray(w)), np.bincount(x, w))
    with pytest.raises(ValueError, match="negative"):
        gk.bincount(gk.asarray(np.array([1, -1, 2])))
    with pytest.raises(TypeError, match="safe"):
        gk.bincount(gk.asarray(np.array([1.0, 2.0])))
    with pytest.raises(ValueError, match="minlength"):
        gk.bincount(gk.asarray(np.array([1, 2])), minlength=-1)
    with pytest.raises(ValueError, match="1-D"):
        gk.bincount(gk.asarray(np.ones((2, 2), np.int64)))


def test_isin_and_in1d_match_numpy(backend, rng):
    a = data(rng, (1 << 12) + 3)
    a[::13] = np.nan
    a[1::17] = -0.0
    t = np.concatenate([a[rng.integers(0, a.size, 500)], [0.0, np.nan], data(rng, 300)])
    ga = gk.asarray(a.reshape(-1, 1))
    for invert in (False, True):
        got = gk.isin(ga, gk.asarray(t), invert=invert)
        np.testing.assert_array_equal(got.to_numpy(), np.isin(a.reshape(-1, 1), t, invert=invert))
    np.testing.assert_array_equal(gk.in1d(ga, t).to_numpy(), np.isin(a, t))
    ints = rng.integers(-5, 5, 100).astype(np.int16)
    np.testing.assert_array_equal(
        gk.isin(gk.asarray(ints), [1.0, 2.5, -3]).to_numpy(), np.isin(ints, [1.0, 2.5, -3])
    )
    assert not gk.isin(ga, []).to_numpy().any()


def test_set_functions_match_numpy(backend, rng):
    a = rng.integers(0, 50, 301).astype(np.float64)
    b = rng.integers(25, 80, 207).astype(np.float64)
    a[::31] = np.nan
    b[::41] = np.nan
    ga, gb = gk.asarray(a), gk.asarray(b)
    np.testing.assert_array_equal(gk.union1d(ga, gb).to_numpy(), np.union1d(a, b))
    np.testing.assert_array_equal(gk.intersect1d(ga, gb).to_numpy(), np.intersect1d(a, b))
    np.testing.assert_array_equal(gk.setdiff1d(ga, gb).to_numpy(), np.setdiff1d(a, b))
    ua, ub = np.unique(a[~np.isnan(a)]), np.unique(b[~np.isnan(b)])
    np.testing.assert_array_equal(
        gk.intersect1d(gk.asarray(ua), gk.asarray(ub), assume_unique=True).to_numpy(),
        np.intersect1d(ua, ub, assume_unique=True),
    )
    np.testing.assert_array_equal(
        gk.setdiff1d(gk.asarray(ua), ub, assume_unique=True).to_numpy(),
        np.setdiff1d(ua, ub, assume_unique=True),
    )
    ints = rng.integers(0, 9, 40).astype(np.int8)
    np.testing.assert_array_equal(gk.union1d(ints, [100, 3]).to_numpy(), np.union1d(ints, [100, 3]))
