"""clip with open bounds and the Array API's keywords, square, pow, bitwise_invert (NumPy's
dtypes: the square of bool is int8)."""

import numpy as np
import pytest
from array_cases import as_float64, assert_same, layouts, poisoned
from conftest import assert_matches, random_array

import gpukit as gk


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float16", "bfloat16", "float32"])
def test_clip_variants(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 5), dtype):
        ref = as_float64(x)
        lo, hi = (5, 20) if x.dtype.kind in "u" else (-10, 10)
        for args, kwargs, want in (
            ((lo, hi), {}, np.clip(ref, lo, hi)),
            ((lo, None), {}, np.maximum(ref, lo)),
            ((None, hi), {}, np.minimum(ref, hi)),
            ((), {"min": lo}, np.maximum(ref, lo)),
            ((), {"max": hi}, np.minimum(ref, hi)),
            ((), {"a_min": lo, "a_max": hi}, np.clip(ref, lo, hi)),
            ((), {"a_max": hi}, np.minimum(ref, hi)),
            ((), {}, ref),
        ):
            got = gk.clip(a, *args, **kwargs)
            assert_matches(got, want, x.dtype)
            if "a_min" not in kwargs and "a_max" not in kwargs:
                got = a.clip(*args, **kwargs)
                assert_matches(got, want, x.dtype)
        bounds = random_array(rng, (5,), dtype)
        got = gk.clip(a, min=gk.asarray(bounds))
        assert_matches(got, np.maximum(ref, as_float64(bounds)), x.dtype)
        out = poisoned((4, 5), dtype)
        assert gk.clip(a, None, hi, out=out) is out
        assert_matches(out, np.minimum(ref, hi), x.dtype)
        out = poisoned((4, 5), dtype)
        assert gk.clip(a, out=out) is out
        assert_same(out, x)
    if dtype == "float32":
        x = np.array([np.nan, -2.0, 3.0], "float32")
        assert_same(gk.clip(gk.asarray(x), max=1.0), np.clip(x, None, 1.0))
    with pytest.raises(TypeError, match="pass a_min or min, not both"):
        gk.clip(a, 1, a_min=2)


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint8", "bfloat16", "float64"])
def test_square_pow_invert(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 4), dtype):
        want = np.square(as_float64(x)) if dtype == "bfloat16" else np.square(x)
        assert_matches(gk.square(a), want, a.dtype if dtype == "bfloat16" else want.dtype)
        if dtype != "bool":
            want = np.power(as_float64(x), 2) if dtype == "bfloat16" else np.power(x, 2)
            assert_matches(gk.pow(a, 2), want, a.dtype)
        if dtype in ("bool", "int16", "uint8"):
            assert_same(gk.bitwise_invert(a), np.bitwise_invert(x))


@pytest.mark.parametrize("dtype", ["int32", "float16", "bfloat16", "float32", "float64"])
def test_nan_to_num(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 5), dtype):
        if dtype != "int32":
            x = x.copy()
            x[0, :3] = [np.nan, np.inf, -np.inf]
            x[2, 4] = np.nan
            a = gk.asarray(x)
        ref = x.astype(np.float32) if dtype == "bfloat16" else x
        for kwargs in ({}, {"nan": -1.5, "posinf": 7.0}, {"neginf": -3.0}):
            want = np.nan_to_num(ref, **kwargs)
            if dtype == "bfloat16":
                big = float(gk.finfo(gk.bfloat16).max)
                want[np.isposinf(ref)] = kwargs.get("posinf", big)
                want[np.isneginf(ref)] = kwargs.get("neginf", -big)
            assert_same(gk.nan_to_num(a, **kwargs), want.astype(x.dtype))
        in_place = gk.asarray(x)
        assert gk.nan_to_num(in_place, copy=False) is in_place
        assert not np.isnan(in_place.to_numpy().astype(np.float64)).any()
