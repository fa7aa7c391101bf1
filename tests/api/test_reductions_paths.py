"""Reductions over every kind of layout the kernels plan for (whole arrays, inner and outer axes,
transposed, strided, reversed and offset views, odd sizes), against float64 NumPy, with NaN and
inf, results the same bits on every run, and the float32 accuracy target."""

import math
import warnings

import numpy as np
import pytest
from conftest import TOLERANCE, assert_within, random_array

import gpukit as gk

SIZES = [0, 1, 31, 1025, 2**20 + 3]
FLOAT_NAMES = ["sum", "mean", "max", "min", "argmax", "argmin", "var", "std", "any", "all"]


def _views(x):
    """(name, NumPy view) pairs of a 1-D array x of at least 2n + 1 elements, n = len(x) // 2."""
    n = (len(x) - 1) // 2
    return [
        ("contiguous", x[:n]),
        ("offset", x[1 : n + 1]),
        ("strided", x[: 2 * n : 2]),
        ("reversed", x[:n][::-1]),
    ]


def _device_view(a, name, n):
    return {
        "contiguous": a[:n],
        "offset": a[1 : n + 1],
        "strided": a[: 2 * n : 2],
        "reversed": a[:n][::-1],
    }[name]


def _poison(shape, dtype):
    """Leaves NaN-like bytes in the pool's free blocks of an output's size, so that an output
    element the kernel did not write shows up."""
    nbytes = max(math.prod(shape), 1) * np.dtype(dtype).itemsize
    for _ in range(2):
        junk = gk.full((max(nbytes // 4, 1),), np.nan, "float32")
        del junk


def _check(got, name, x64, axis, dtype):
    """got (GPUArray) against NumPy's `name` of x64 (float64 / int64 data of `dtype`)."""
    kwargs = {} if name in ("argmax", "argmin") else {"axis": axis}
    if name in ("argmax", "argmin"):
        ref = getattr(np, name)(x64, axis=axis)
    elif name in ("any", "all"):
        ref = getattr(np, name)(x64 != 0, **kwargs)
    else:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Mean of empty slice"
            ref = getattr(np, name)(x64, **kwargs)
    out = got.to_numpy()
    assert out.shape == np.shape(ref), (out.shape, np.shape(ref))
    if name in ("argmax", "argmin", "any", "all", "max", "min") or out.dtype.kind in "biu":
        np.testing.assert_array_equal(out.astype(np.float64), np.asarray(ref, np.float64))
        return
    out = out.astype(np.float64)
    tol = TOLERANCE[got.dtype] * 2
    if name in ("sum", "mean"):
        scale = np.abs(x64).sum(axis=axis)
        if name == "mean":
            scale = scale / max(x64.size // max(np.size(ref), 1), 1)
        atol = tol * scale
    else:
        atol = tol
    assert_within(out.astype(np.float64), ref, tol, atol)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_whole_array_float32_every_view(backend, rng, n, name):
    x = random_array(rng, (2 * n + 1,), "float32")
    if name in ("any", "all"):
        x[rng.random(x.size) < 0.5] = 0
    a = gk.asarray(x)
    for view_name, view in _views(x):
        if n == 0 and name in ("max", "min", "argmax", "argmin"):
            continue
        _poison((1,), "float64")
        got = getattr(gk, name)(_device_view(a, view_name, n))
        _check(got, name, view.astype(np.float64), None, "float32")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("n", [31, 2**20 + 3])
def test_whole_array_other_dtypes(backend, rng, dtype, n):
    x = random_array(rng, (2 * n + 1,), dtype)
    a = gk.asarray(x)
    names = ["sum", "max", "argmax", "argmin", "any", "all"]
    if dtype not in ("bool", "uint8"):
        names += ["mean", "min", "var", "std"]
    for name in names:
        for view_name, view in _views(x)[:3]:
            got = getattr(gk, name)(_device_view(a, view_name, n))
            ref_dtype = np.dtype(gk.bfloat16) if dtype == "bfloat16" else None
            x64 = view.astype(np.float64) if dtype != "bool" else view.astype(np.int64)
            if ref_dtype is None and name not in ("any", "all"):
                assert got.dtype == getattr(np, name)(view[:1]).dtype, (name, got.dtype)
            _check(got, name, x64, None, dtype)


AXES = [None, 0, 1, 2, -1, (0, 2), (1, 2), (0, 1, 2)]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "reversed"])
@pytest.mark.parametrize("shape", [(5, 67, 129), (3, 1, 1025), (1025, 2, 3), (2, 300, 64)])
def test_every_axis_and_layout(backend, rng, shape, layout):
    base = random_array(rng, (shape[0], shape[1], 2 * shape[2]), "float32")
    a = gk.asarray(base)
    view, dview = {
        "contiguous": (base[..., : shape[2]], a[..., : shape[2]]),
        "transposed": (
            base[..., : shape[2]].transpose(2, 0, 1),
            a[..., : shape[2]].transpose(2, 0, 1),
        ),
        "sliced": (base[..., ::2], a[..., ::2]),
        "reversed": (base[::-1, :, : shape[2]], a[::-1, :, : shape[2]]),
    }[layout]
    x64 = view.astype(np.float64)
    for axis in AXES:
        for name in ("sum", "mean", "max", "var", "argmin", "all"):
            if name == "argmin" and isinstance(axis, tuple):
                continue
            got = getattr(gk, name)(dview, axis=axis)
            _check(got, name, x64, axis, "float32")
        kept = gk.sum(dview, axis=axis, keepdims=True)
        assert kept.shape == np.sum(x64, axis=axis, keepdims=True).shape


@pytest.mark.parametrize("shape", [(4096, 3), (3, 4096), (8, 8192), (300, 8)])
@pytest.mark.parametrize("axis", [0, 1])
def test_outer_and_inner_axes_with_few_or_many_outputs(backend, rng, shape, axis):
    x = random_array(rng, shape, "float32")
    a = gk.asarray(x)
    for name in ("sum", "argmax", "var", "min"):
        _check(getattr(gk, name)(a, axis=axis), name, x.astype(np.float64), axis, "float32")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_nan_and_inf_propagate_as_numpy(backend, rng, dtype):
    x = random_array(rng, (37, 1025), dtype)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, 30, replace=False)
    flat[picks[:10]] = np.nan
    flat[picks[10:20]] = np.inf
    flat[picks[20:]] = -np.inf
    a = gk.asarray(x)
    x64 = x.astype(np.float64)
    for axis in (None, 0, 1):
        for name in ("sum", "max", "min", "argmax", "argmin", "var", "mean"):
            got = getattr(gk, name)(a, axis=axis).to_numpy().astype(np.float64)
            with np.errstate(all="ignore"):
                ref = np.asarray(getattr(np, name)(x64, axis=axis), np.float64)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=f"{name} {axis}")
            if name in ("argmax", "argmin", "max", "min"):
                np.testing.assert_array_equal(got, ref, err_msg=f"{name} {axis}")
            else:
                both_inf = np.isinf(ref)
                np.testing.assert_array_equal(got[both_inf], ref[both_inf])


@pytest.mark.parametrize("name", ["sum", "mean", "var", "std", "argmax", "prod"])
def test_the_same_bits_on_every_run(backend, rng, name):
    x = random_array(rng, (2**20 + 3,), "float32")
    if name == "prod":
        x = (1 + x / 1000).astype(np.float32)
    a = gk.asarray(x)
    m = gk.asarray(x[: 1024 * 1024].reshape(1024, 1024))
    for arr, axis in ((a, None), (m, 0), (m, 1)):
        if name == "argmax" and arr is m and axis == 0:
            continue
        first = getattr(gk, name)(arr, axis=axis).to_numpy().tobytes()
        for _ in range(9):
            assert getattr(gk, name)(arr, axis=axis).to_numpy().tobytes() == first


def test_float32_sum_of_16m_values_near_1e4_is_accurate(backend, rng):
    x = (1e4 + rng.random(16 * 2**20)).astype(np.float32)
    got = float(gk.sum(gk.asarray(x)))
    ref = float(x.astype(np.float64).sum())
    assert abs(got - ref) / ref < 1e-6


def test_16_bit_reductions_accumulate_in_float32(backend):
    for dtype in ("float16", gk.bfloat16):
        a = gk.asarray(np.full(4096, 50, dtype))
        assert float(a.mean()) == 50.0
        assert float(a.var()) == 0.0
        assert float(a.std()) == 0.0
    x = np.full(3000, 1, np.float16)  # a float16 running total would stop at 2048
    assert float(gk.asarray(x).sum()) == 3000.0


def test_var_std_degrees_of_freedom_and_empty(backend, rng):
    x = random_array(rng, (9, 4), "float64")
    a = gk.asarray(x)
    for ddof in (0, 1, 3):
        np.testing.assert_allclose(a.var(axis=0, ddof=ddof).to_numpy(), x.var(axis=0, ddof=ddof))
        np.testing.assert_allclose(a.std(axis=1, ddof=ddof).to_numpy(), x.std(axis=1, ddof=ddof))
    with np.errstate(all="ignore"):
        assert np.isinf(float(gk.var(gk.asarray([1.0, 2.0]), ddof=2)))
        assert np.isnan(float(gk.var(gk.asarray([3.0, 3.0]), ddof=2)))
        assert np.isnan(float(gk.var(gk.zeros((0,)))))
        np.testing.assert_array_equal(gk.std(gk.zeros((0, 3)), axis=0).to_numpy(), [np.nan] * 3)
    np.testing.assert_allclose(a.var(axis=0, ddof=0.5).to_numpy(), x.var(axis=0, ddof=0.5))
    with pytest.raises(TypeError, match="ddof must be a number"):
        gk.var(a, ddof="1")
