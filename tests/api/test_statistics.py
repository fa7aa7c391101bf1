"""Reductions with NumPy's keywords, the NaN-ignoring reductions, running products, differences
and the statistics built on them, against NumPy in float64."""

import warnings

import numpy as np
import pytest
from array_cases import NUMERIC, as_float64, assert_same, layouts, poisoned
from conftest import assert_matches, random_array

import gpukit as gk

LOW_PRECISION = ("float16", "bfloat16")


def _scale(dtype) -> float:
    return 4.0 if str(dtype) in LOW_PRECISION else 1.0


@pytest.mark.parametrize("dtype", NUMERIC)
def test_reduction_keywords(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 7), dtype):
        ref = as_float64(x)
        for axis, keepdims in ((None, False), (0, True), (1, False), ((0, 1), True)):
            assert_matches(
                gk.sum(a, axis, keepdims=keepdims),
                np.sum(ref, axis, keepdims=keepdims),
                gk.sum(a, axis, keepdims=keepdims).dtype,
            )
            got = gk.sum(a, axis, dtype="float64", keepdims=keepdims)
            assert_matches(got, np.sum(ref, axis, keepdims=keepdims))
            got = gk.mean(a, axis, dtype="float32", keepdims=keepdims)
            assert_matches(got, np.mean(ref, axis, keepdims=keepdims).astype("float32"))
            for correction in (0, 1, 1.5):
                want = np.var(ref, axis, keepdims=keepdims, ddof=correction)
                got = gk.var(a, axis=axis, correction=correction, keepdims=keepdims)
                assert_matches(got, want, got.dtype, scale=_scale(dtype))
                got = a.std(axis=axis, ddof=correction, keepdims=keepdims)
                assert_matches(got, np.sqrt(want), got.dtype, scale=_scale(dtype))
        small = gk.asarray(np.clip(x[:3, :4], -3, 3).astype(x.dtype))
        assert_same(
            gk.prod(small, axis=1, dtype="int64"),
            np.prod(x[:3, :4].clip(-3, 3).astype(x.dtype), axis=1, dtype="int64"),
        )
        out = poisoned((7,), "float64")
        assert gk.max(a, axis=0, out=out) is out
        assert_matches(out, np.max(ref, axis=0))
        out = poisoned((4,), "int64")
        assert a.argmin(axis=1, out=out) is out
        assert_same(out, np.argmin(x.astype(np.float32) if dtype == "bfloat16" else x, axis=1))
        out = poisoned((4, 7), "float64")
        assert gk.cumsum(a, axis=1, dtype="float64", out=out) is out
        assert_matches(out, np.cumsum(ref, axis=1))
    with pytest.raises(ValueError, match="ddof and correction can't be provided simultaneously"):
        gk.var(a, ddof=1, correction=1)
    with pytest.raises(ValueError, match=r"out has shape \(3,\)"):
        gk.sum(a, axis=0, out=gk.empty((3,)))


def _with_nans(rng, shape, dtype):
    """Random floats with NaNs in random places and one whole row of NaN."""
    x = random_array(rng, shape, dtype)
    x[rng.random(shape) < 0.3] = np.nan
    x[1] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_nan_reductions(backend, rng, dtype):
    x = _with_nans(rng, (4, 9), dtype)
    strided = gk.asarray(np.repeat(x, 2, axis=1))[:, ::2]
    ref = as_float64(x)
    scale = _scale(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns about the all-NaN row
        for a in (gk.asarray(x), strided, gk.asarray(x.T.copy()).T):
            for axis, keepdims in ((None, False), (1, False), (1, True), (0, True)):
                for name in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean"):
                    got = getattr(gk, name)(a, axis=axis, keepdims=keepdims)
                    want = getattr(np, name)(ref, axis=axis, keepdims=keepdims)
                    assert_matches(got, want, dtype, scale=scale * (8 if name == "nanprod" else 1))
                for ddof in (0, 1, 8):
                    for name in ("nanvar", "nanstd"):
                        got = getattr(gk, name)(a, axis=axis, ddof=ddof, keepdims=keepdims)
                        want = getattr(np, name)(ref, axis=axis, ddof=ddof, keepdims=keepdims)
                        assert_matches(got, want, dtype, scale=scale)
            for name in ("nanargmax", "nanargmin"):
                got = getattr(gk, name)(a[[0, 2, 3]], axis=1)
                assert_same(got, getattr(np, name)(ref[[0, 2, 3]], axis=1))
                with pytest.raises(ValueError, match="All-NaN slice encountered"):
                    getattr(gk, name)(a, axis=1)
            got = gk.nanargmax(a)
            assert_same(got, np.nanargmax(ref))
        out = poisoned((9,), dtype)
        assert gk.nanmean(gk.asarray(x), axis=0, out=out) is out
        assert_matches(out, np.nanmean(ref, axis=0), dtype, scale=scale)
        assert_matches(gk.nansum(gk.asarray(x), dtype="float64"), np.nansum(ref))


@pytest.mark.parametrize("dtype", ["int16", "uint8", "bool"])
def test_nan_reductions_of_integers_are_the_plain_ones(backend, rng, dtype):
    x = random_array(rng, (3, 5), dtype)
    a = gk.asarray(x)
    for name in ("nansum", "nanmax", "nanmin", "nanmean", "nanvar", "nanargmax"):
        got = getattr(gk, name)(a, axis=1)
        assert_matches(got, getattr(np, name)(x, axis=1), got.dtype)


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "int64", "uint8", "float16", "bfloat16", "float32", "float64"]
)
def test_cumprod(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 9), dtype):
        if x.dtype.kind == "f" or dtype == "bfloat16":
            x = (0.7 + 0.6 * rng.random(x.shape)).astype(x.dtype)  # products stay in range
            a = gk.asarray(x)
        ref = as_float64(x) if dtype in LOW_PRECISION else x
        for axis in (None, 0, 1, -1):
            got = gk.cumprod(a, axis)
            want = np.cumprod(ref, axis)
            expected_dtype = gk.bfloat16 if dtype == "bfloat16" else np.cumprod(x[:1, :1]).dtype
            assert_matches(
                got, want.astype(np.float64) if dtype in LOW_PRECISION else want, expected_dtype
            )
        out = poisoned((3, 9), "float64")
        assert a.cumprod(axis=1, dtype="float64", out=out) is out
        assert_matches(out, np.cumprod(as_float64(x), axis=1))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float16", "bfloat16", "float32"])
def test_cumulative_sum(backend, rng, dtype):
    for _, a, x in layouts(rng, (5, 6), dtype):
        ref = as_float64(x) if dtype in LOW_PRECISION else x
        for axis in (0, 1, -1):
            for include_initial in (False, True):
                got = gk.cumulative_sum(a, axis=axis, include_initial=include_initial)
                want = np.cumulative_sum(ref, axis=axis, include_initial=include_initial)
                expected = got.dtype if dtype in LOW_PRECISION else want.dtype
                assert_matches(got, want, expected, scale=4)
        got = gk.cumulative_sum(a[0], dtype="float64")
        assert_matches(got, np.cumulative_sum(as_float64(x[0])))
    with pytest.raises(ValueError, match="needs an axis for arrays that are not 1-D"):
        gk.cumulative_sum(a)


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint8", "int64", "float16", "bfloat16", "float64"]
)
def test_diff(backend, rng, dtype):
    low = dtype in LOW_PRECISION  # references in float64, compared within the dtype's tolerance
    for _, a, x in layouts(rng, (4, 7), dtype):
        ref = as_float64(x) if low else x
        edge = random_array(rng, (4, 2), dtype)
        one = True if dtype == "bool" else 1
        cases = [((n, axis), {}) for n, axis in ((1, -1), (2, 0), (3, 1), (0, 1), (5, 0))]
        cases += [((1, 1), {"prepend": edge, "append": x[:, :1]}), ((1, 0), {"prepend": one})]
        for args, kwargs in cases:
            extras = {
                k: v if isinstance(v, (bool, int)) else gk.asarray(v) for k, v in kwargs.items()
            }
            got = gk.diff(a, *args, **extras)
            if low and not kwargs:
                # Each order rounds to the dtype, and the errors grow with the differences:
                # NumPy's differences of the same dtype, one order at a time, round alike.
                want = x
                for _ in range(args[0]):
                    want = np.diff(want, axis=args[1])
                want = as_float64(want)
            else:
                ref_kwargs = {k: as_float64(v) if low else v for k, v in kwargs.items()}
                want = np.diff(ref, *args, **ref_kwargs)
            # NumPy makes arrays of the extras first: a Python 1 is int64 then
            joined = gk.result_type(x.dtype, *(np.asarray(v).dtype for v in kwargs.values()))
            assert_matches(got, want, joined)
    with pytest.raises(ValueError, match="order must be non-negative but got -1"):
        gk.diff(a, -1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        gk.diff(gk.asarray(np.float32(1)))


@pytest.mark.parametrize("dtype", ["bool", "int32", "uint8", "bfloat16", "float32"])
def test_count_nonzero_ptp(backend, rng, dtype):
    for _, a, x in layouts(rng, (5, 6), dtype):
        x = x.copy()
        x[rng.random(x.shape) < 0.4] = 0
        a = gk.asarray(x)
        for axis, keepdims in ((None, False), (0, False), (1, True)):
            got = gk.count_nonzero(a, axis=axis, keepdims=keepdims)
            assert_same(got, np.asarray(np.count_nonzero(x, axis=axis, keepdims=keepdims), "int64"))
            if dtype != "bool":
                got = gk.ptp(a, axis=axis, keepdims=keepdims)
                want = np.ptp(as_float64(x), axis=axis, keepdims=keepdims)
                assert_matches(got, want, got.dtype)
                assert got.dtype == x.dtype


@pytest.mark.parametrize("dtype", ["int16", "bfloat16", "float32", "float64"])
def test_average(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 6), dtype):
        ref = as_float64(x)
        w_full = 0.1 + rng.random((4, 6))
        w_row = 0.1 + rng.random(6)
        for weights, axis in (
            (None, None),
            (None, 1),
            (w_full, None),
            (w_full, 0),
            (w_row, 1),
            (w_row, -1),
        ):
            got = gk.average(a, axis, weights)
            want = np.average(ref, axis, weights)
            expected_dtype = np.average(
                x.astype(np.float32) if dtype == "bfloat16" else x, axis, weights
            ).dtype
            assert_matches(got, want, got.dtype)
            assert got.dtype == (expected_dtype if dtype != "bfloat16" else got.dtype)
            avg, total = gk.average(a, axis, weights, returned=True, keepdims=True)
            want_avg, want_total = np.average(ref, axis, weights, returned=True, keepdims=True)
            assert_matches(avg, want_avg, avg.dtype)
            assert_matches(total, want_total, total.dtype)
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        gk.average(a, 1, np.zeros(6))
    with pytest.raises(TypeError, match="Axis must be specified"):
        gk.average(a, None, w_row)
    with pytest.raises(ValueError, match="consistent with shape of a along axis"):
        gk.average(a, 0, w_row)


@pytest.mark.parametrize("dtype", ["int32", "bfloat16", "float32", "float64"])
def test_cov_corrcoef(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 8), dtype):
        ref = as_float64(x)
        y = random_array(rng, (2, 8), "float64")
        fw = rng.integers(1, 4, size=8)
        aw = 0.1 + rng.random(8)
        cases = [
            {},
            {"bias": True},
            {"ddof": 3},
            {"fweights": fw},
            {"aweights": aw},
            {"fweights": fw, "aweights": aw, "ddof": 2},
        ]
        for kwargs in cases:
            assert_matches(gk.cov(a, **kwargs), np.cov(ref, **kwargs))
        assert_matches(gk.cov(a.T, rowvar=False), np.cov(ref.T, rowvar=False))
        assert_matches(gk.cov(a, gk.asarray(y)), np.cov(ref, y))
        assert_matches(gk.cov(a[0]), np.cov(ref[0]))
        assert_matches(gk.cov(a, dtype="float32"), np.cov(ref).astype("float32"), scale=4)
        assert_matches(gk.corrcoef(a), np.corrcoef(ref))
        assert_matches(gk.corrcoef(a, gk.asarray(y), rowvar=True), np.corrcoef(ref, y))
        assert_matches(gk.corrcoef(a[1]), np.corrcoef(ref[1]))
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        gk.cov(a, aweights=-aw)
    with pytest.raises(TypeError, match="fweights must be integer"):
        gk.cov(a, fweights=aw)
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and fweights"):
        gk.cov(a, fweights=fw[:3])
    with pytest.raises(ValueError, match="m has more than 2 dimensions"):
        gk.cov(gk.ones((2, 2, 2)))
