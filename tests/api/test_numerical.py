"""gradient, convolve, correlate, polyval, interp against NumPy in float64."""

import numpy as np
import pytest
from array_cases import as_float64, assert_same, layouts
from conftest import assert_matches, random_array

import gpukit as gk


@pytest.mark.parametrize("dtype", ["int32", "float16", "bfloat16", "float32", "float64"])
def test_gradient(backend, rng, dtype):
    scale = 8 if dtype in ("float16", "bfloat16") else 4
    for _, a, x in layouts(rng, (5, 6), dtype):
        ref = as_float64(x)
        coords = np.cumsum(0.5 + rng.random(6))
        for varargs, kwargs in (
            ((), {}),
            ((0.5,), {}),
            ((2.0, 0.25), {"edge_order": 2}),
            ((coords,), {"axis": 1}),
            ((coords,), {"axis": -1, "edge_order": 2}),
            ((), {"axis": 0, "edge_order": 2}),
            ((3.0, gk.asarray(coords)), {}),
        ):
            got = gk.gradient(a, *varargs, **kwargs)
            host = [v.to_numpy() if isinstance(v, gk.GPUArray) else v for v in varargs]
            want = np.gradient(ref, *host, **kwargs)
            got = got if isinstance(got, tuple) else (got,)
            want = want if isinstance(want, tuple) else (want,)
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                # differences of nearby values lose digits; the tolerance follows the inputs' scale
                expected = "float64" if dtype == "int32" else g.dtype
                assert_matches(g, w, expected, scale=scale * (1 + np.abs(ref).max()))
    with pytest.raises(ValueError, match="at least \\(edge_order \\+ 1\\) elements"):
        gk.gradient(gk.ones((2, 5)), edge_order=2, axis=0)
    with pytest.raises(ValueError, match="must match the length"):
        gk.gradient(gk.ones((3, 5)), [1.0, 2.0], axis=1)


@pytest.mark.parametrize("dtype", ["bool", "int16", "bfloat16", "float32", "float64"])
def test_convolve_correlate(backend, rng, dtype):
    for n, m in ((9, 3), (4, 4), (3, 8), (1, 5), (7, 1), (6, 2)):
        x, y = random_array(rng, (2 * n,), dtype)[::2], random_array(rng, (m,), dtype)
        a, v = gk.asarray(np.repeat(x, 2))[::2], gk.asarray(y)
        ref = (lambda z: as_float64(z)) if dtype == "bfloat16" else (lambda z: z)
        for mode in ("full", "same", "valid"):
            for name in ("convolve", "correlate"):
                got = getattr(gk, name)(a, v, mode)
                want = getattr(np, name)(ref(x), ref(y), mode)
                assert_matches(got, want, got.dtype, scale=4)
                assert got.dtype == (gk.result_type(a, v))
    with pytest.raises(ValueError, match="v cannot be empty"):
        gk.convolve(gk.ones(3), gk.ones(0))
    with pytest.raises(ValueError, match="mode must be one of"):
        gk.convolve(gk.ones(3), gk.ones(2), "middle")


@pytest.mark.parametrize("dtype", ["int32", "bfloat16", "float32", "float64"])
def test_polyval(backend, rng, dtype):
    x = random_array(rng, (3, 4), dtype)
    p = random_array(rng, (4,), dtype)
    for _, a, xs in layouts(rng, (3, 4), dtype):
        got = gk.polyval(gk.asarray(p), a)
        want = (
            np.polyval(as_float64(p), as_float64(xs)) if dtype == "bfloat16" else np.polyval(p, xs)
        )
        assert_matches(got, want, got.dtype, scale=8)
        assert got.dtype == (gk.bfloat16 if dtype == "bfloat16" else want.dtype)
    assert_matches(gk.polyval([1.0, -2.0, 0.5], 3.0), np.polyval([1.0, -2.0, 0.5], 3.0))
    assert_same(
        gk.polyval(gk.asarray(np.array([2, 0, 1])), gk.asarray(x[0].astype("int64") % 5)),
        np.polyval([2, 0, 1], x[0].astype("int64") % 5),
    )


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_interp(backend, rng, dtype):
    """Points between, on (a repeated one too) and beyond the samples, NaN; strided and
    transposed x; left / right; complex fp; a period."""
    xp = np.sort(rng.uniform(-2.0, 2.0, 11))
    xp[5] = xp[4]  # a repeated sample point: NumPy takes the later one's value there
    fp = rng.standard_normal(11)
    gxp, gfp = gk.asarray(xp[::-1].copy())[::-1], gk.asarray(fp)
    for _, a, x in layouts(rng, (5, 7), dtype):
        assert_matches(gk.interp(a, gxp, gfp), np.interp(x, xp, fp))
        assert_matches(gk.interp(a, xp, gfp, -7.5, 9), np.interp(x, xp, fp, -7.5, 9))
    special = np.concatenate([xp, [np.nan, -5.0, 5.0, 0.25]])
    assert_matches(gk.interp(special, gxp, gfp), np.interp(special, xp, fp))
    z = fp + 1j * rng.standard_normal(11)
    got, want = gk.interp(special, gxp, z, 2j, 1 - 1j), np.interp(special, xp, z, 2j, 1 - 1j)
    assert got.dtype == np.complex128
    assert_matches(got.real, want.real)
    assert_matches(got.imag, want.imag)
    x = rng.uniform(-10.0, 10.0, 23)
    # Periodic: distinct points (which of two equal ones sorts first would change the curve).
    px, pf = np.delete(xp, 5), np.delete(fp, 5)
    assert_matches(gk.interp(x, px, pf, period=3.5), np.interp(x, px, pf, period=3.5))
    assert_matches(gk.interp(x, xp[:1], fp[:1]), np.interp(x, xp[:1], fp[:1]))
    inf = np.array([np.inf, 1.0, np.inf, np.inf])
    assert_matches(gk.interp(x, np.arange(4.0), inf), np.interp(x, np.arange(4.0), inf))
    with pytest.raises(ValueError, match="not of the same length"):
        gk.interp(x, xp, fp[:5])
    with pytest.raises(ValueError, match="array of sample points is empty"):
        gk.interp(x, xp[:0], fp[:0])
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        gk.interp(x, xp, fp, period=0)
    with pytest.raises(ValueError, match="must be 1-D"):
        gk.interp(x, xp.reshape(1, 11), fp)


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_polyfit(backend, rng, dtype):
    """Degrees 0-4, strided x, one and two data sets, weights, both covariances, complex y."""
    if dtype == "int32":  # -3..3, each value present: a degree-4 fit has full rank
        x = (rng.permutation(23) % 7 - 3).astype(dtype)
    else:
        x = rng.uniform(-2.0, 2.0, 23).astype(dtype)
    y = rng.standard_normal(23) + 3 * x.astype(np.float64)
    w = rng.uniform(0.5, 2.0, 23)
    gx = gk.asarray(np.repeat(x, 2))[::2]
    for deg in range(5):
        scale = 10.0 ** (deg + 2)  # the fit's conditioning grows with the degree
        assert_matches(gk.polyfit(gx, y, deg), np.polyfit(x, y, deg), scale=scale)
        c, v = gk.polyfit(gx, y, deg, w=w, cov=True)
        c_ref, v_ref = np.polyfit(x, y, deg, w=w, cov=True)
        assert_matches(c, c_ref, scale=scale)
        assert_matches(v, v_ref, scale=scale)
    two = np.stack([y, 2 * y - 1], axis=1)
    c, v = gk.polyfit(gx, two, 2, cov="unscaled")
    c_ref, v_ref = np.polyfit(x, two, 2, cov="unscaled")
    assert_matches(c, c_ref, scale=1e4)
    assert_matches(v, v_ref, scale=1e4)
    z = y + 1j * rng.standard_normal(23)
    got, want = gk.polyfit(gx, z, 2), np.polyfit(x, z, 2)
    assert_matches(got.real, want.real, scale=1e4)
    assert_matches(got.imag, want.imag, scale=1e4)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        gk.polyfit(gx, y, -1)
    with pytest.raises(TypeError, match="same length"):
        gk.polyfit(gx, y[:5], 1)
    with pytest.raises(ValueError, match="must exceed order"):
        gk.polyfit([0.0, 1.0, 2.0], [1.0, 2.0, 0.0], 2, cov=True)


def test_polyfit_through_the_svd(backend, rng):
    """full=True and rank-deficient fits (3 distinct points, degree 4) take lstsq's SVD, as NumPy
    does: its result, rank and RankWarning."""
    x = np.repeat([-1.0, 0.5, 2.0], 4)
    y = rng.standard_normal(12)
    c, resids, rank, s, rcond = gk.polyfit(x, y, 2, full=True)
    c_ref, resids_ref, rank_ref, s_ref, rcond_ref = np.polyfit(x, y, 2, full=True)
    assert_matches(c, c_ref, scale=1e3)
    assert_matches(resids, resids_ref, scale=1e3)
    assert_matches(s, s_ref, scale=1e3)
    assert (rank, rcond) == (rank_ref, rcond_ref)
    with pytest.warns(np.exceptions.RankWarning):
        got = gk.polyfit(x, y, 4)
    with pytest.warns(np.exceptions.RankWarning):
        want = np.polyfit(x, y, 4)
    assert_matches(got, want, scale=1e3)
