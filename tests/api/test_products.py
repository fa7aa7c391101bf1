"""tensordot, vecdot, inner, outer, kron, cross, trace against NumPy in float64 (and exactly for
integers), with non-contiguous operands."""

import numpy as np
import pytest
from array_cases import NUMERIC, as_float64, assert_same, layouts, poisoned
from conftest import assert_matches, random_array

import gpukit as gk


def _dt(name):
    return gk.bfloat16 if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_tensordot_inner_vecdot(backend, rng, dtype):
    scale = 4 if dtype in ("float16", "bfloat16") else 1
    for _, a, x in layouts(rng, (3, 4, 5), dtype):
        y = random_array(rng, (5, 4, 2), dtype)
        b = gk.asarray(y)
        xs, ys = as_float64(x), as_float64(y)
        z = random_array(rng, (4, 5), dtype)
        w = random_array(rng, (3, 1, 5), dtype)
        zs, ws = as_float64(z), as_float64(w)
        cases = [
            (gk.tensordot(a, b, axes), np.tensordot(xs, ys, axes))
            for axes in (0, 1, ([1, 2], [1, 0]), ([2], [0]), (1, 1))
        ]
        cases += [
            (gk.inner(a, gk.asarray(z)), np.inner(xs, zs)),
            (gk.vecdot(a, gk.asarray(z)), np.vecdot(xs, zs)),  # broadcast over the first axis
            (gk.vecdot(a, gk.asarray(w), axis=-1), np.vecdot(xs, ws)),
            (gk.vecdot(a, a, axis=0), np.vecdot(xs, xs, axis=0)),
        ]
        for got, want in cases:
            if got.dtype.kind in "iu":  # integer products wrap in the integer dtype, as NumPy's
                want = want.astype(np.int64).astype(got.dtype)
            assert_matches(got, want, _dt(dtype), scale=scale)
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        gk.tensordot(a, b, ([0], [0]))
    with pytest.raises(ValueError, match="vecdot: x1 has 5 elements along axis -1, x2 4"):
        gk.vecdot(a, gk.ones((4,), dtype))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float16", "bfloat16", "float64"])
def test_outer_kron(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 2), dtype):
        y = random_array(rng, (2, 3), dtype)
        b = gk.asarray(y)
        ref = (lambda v: as_float64(v)) if dtype in ("float16", "bfloat16") else (lambda v: v)
        got = gk.outer(a, b)
        assert_matches(got, np.outer(ref(x), ref(y)), got.dtype)
        assert got.dtype == _dt(dtype)
        out = poisoned((6, 6), dtype)
        assert gk.outer(a, b, out=out) is out
        assert_matches(out, np.outer(ref(x), ref(y)), out.dtype)
        for left, right in (
            (x, y),
            (x, y[0]),
            (x[0], y),
            (x[0, 0], y),
            (x, random_array(rng, (2, 2, 2), dtype)),
        ):
            got = gk.kron(gk.asarray(left), gk.asarray(right))
            assert_matches(got, np.kron(ref(left), ref(right)), got.dtype)


@pytest.mark.parametrize("dtype", ["int32", "bfloat16", "float32", "float64"])
def test_cross(backend, rng, dtype):
    x3 = random_array(rng, (4, 3), dtype)
    y3 = random_array(rng, (4, 3), dtype)
    ref = as_float64
    for left, right, kwargs in (
        (x3, y3, {}),
        (x3.T, y3, {"axisa": 0}),
        (x3, y3.T, {"axisb": 0, "axisc": 0}),
        (x3[:, None], y3[None], {}),
        (x3.T, y3.T, {"axis": 0}),
    ):
        got = gk.cross(gk.asarray(left), gk.asarray(right), **kwargs)
        assert_matches(got, np.cross(ref(left), ref(right), **kwargs), got.dtype, scale=4)
        assert got.dtype == _dt(dtype)
    # 2-vectors: deprecated in NumPy 2.0, refused since 2.5 and by the Array API.
    for left, right in ((x3[:, :2], y3), (x3, y3[:, :2]), (x3[:, :2], y3[:, :2])):
        with pytest.raises(ValueError, match="3-dimensional vectors"):
            gk.cross(gk.asarray(left), gk.asarray(right))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "bfloat16", "float32"])
def test_trace(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 5, 3), dtype):
        ref = as_float64(x) if dtype == "bfloat16" else x
        for offset, ax1, ax2 in (
            (0, 0, 1),
            (1, 0, 1),
            (-2, 0, 1),
            (0, 2, 0),
            (2, -1, 1),
            (9, 0, 1),
        ):
            got = gk.trace(a, offset, ax1, ax2)
            want = np.trace(ref, offset, ax1, ax2)
            assert_matches(got, want, got.dtype if dtype == "bfloat16" else want.dtype)
        got = a.trace(dtype="float64")
        assert_matches(got, np.trace(as_float64(x)))
        plain = gk.trace(a)
        out = poisoned((3,), plain.dtype)
        assert gk.trace(a, out=out) is out
        assert_same(out, plain.to_numpy())
