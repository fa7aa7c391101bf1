"""tri, tril, triu, diag, diagflat, diagonal, identity, vander against NumPy."""

import numpy as np
import pytest
from array_cases import ALL_DTYPES, NUMERIC, as_float64, assert_same, layouts
from conftest import assert_matches, random_array

import gpukit as gk


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_triangles_and_diagonals(backend, rng, dtype):
    for _, a, x in layouts(rng, (2, 5, 4), dtype):
        for k in (0, 1, -2, 7, -9):
            assert_same(gk.tril(a, k=k), np.tril(x, k))
            assert_same(gk.triu(a, k=k), np.triu(x, k))
        for offset, ax1, ax2 in (
            (0, 1, 2),
            (1, 1, 2),
            (-3, 2, 1),
            (0, 0, 2),
            (2, -1, 0),
            (6, 1, 2),
        ):
            assert_same(gk.diagonal(a, offset, ax1, ax2), np.diagonal(x, offset, ax1, ax2))
            assert_same(a.diagonal(offset, ax1, ax2), x.diagonal(offset, ax1, ax2))
        m = a[0]
        for k in (0, 2, -1, -4, 5):
            assert_same(gk.diag(m, k), np.diag(x[0], k))
    v = random_array(rng, (4,), dtype)
    for k in (0, 1, -2):
        assert_same(gk.diag(gk.asarray(v), k), np.diag(v, k))
        assert_same(gk.diag(gk.asarray(v)[::-1], k), np.diag(v[::-1], k))
        assert_same(gk.diagflat(gk.asarray(x[0, :2, :2]), k), np.diagflat(x[0, :2, :2], k))
    with pytest.raises(ValueError, match="Input must be 1- or 2-d"):
        gk.diag(a)
    with pytest.raises(ValueError, match="axis1 and axis2 cannot be the same"):
        gk.diagonal(a, 0, 1, -2)
    with pytest.raises(ValueError, match="tril needs at least 2 dimensions"):
        gk.tril(gk.asarray(v))


def test_tri_identity(backend):
    for args in ((3,), (3, 5), (4, 2, 1), (4, 4, -2), (0, 3)):
        assert_same(gk.tri(*args), np.tri(*args))
    assert_same(gk.tri(3, 4, 1, dtype="int8"), np.tri(3, 4, 1, dtype="int8"))
    assert_same(gk.identity(4), np.identity(4))
    assert_same(gk.identity(3, dtype=gk.bfloat16), np.identity(3, dtype=gk.bfloat16))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_vander(backend, rng, dtype):
    x = random_array(rng, (5,), dtype)
    if dtype not in ("int8", "uint8"):
        x = (x % 4).astype(dtype) if x.dtype.kind in "iu" else (0.5 + rng.random(5)).astype(dtype)
    a = gk.asarray(x)
    for n, increasing in ((None, False), (3, True), (7, False), (0, False)):
        got = gk.vander(a, n, increasing)
        want = np.vander(
            as_float64(x) if got.dtype.kind == "f" or dtype == "bfloat16" else x, n, increasing
        )
        if got.dtype.kind in "iu":
            assert_same(got, want)
        else:
            assert_matches(got, want, got.dtype, scale=4)
    assert gk.vander(a).dtype == (gk.bfloat16 if dtype == "bfloat16" else np.vander(x).dtype)
    with pytest.raises(ValueError, match="one-dimensional"):
        gk.vander(gk.ones((2, 2)))
