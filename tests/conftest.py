"""Every test that takes `backend` runs once per backend that opens here (GPUKIT_TEST_BACKENDS, a
comma-separated list, narrows that). Test data is fresh random data; the seed is printed so that a
failure can be replayed with GPUKIT_TEST_SEED."""

import os
import secrets

import numpy as np
import pytest

import gpukit as gk


def _backends():
    names = gk.available_backends()
    wanted = os.environ.get("GPUKIT_TEST_BACKENDS")
    if wanted:
        names = [n for n in wanted.split(",") if n in names]
    return names


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", _backends(), indirect=True)


@pytest.fixture
def backend(request):
    with gk.use_backend(request.param):
        yield request.param


@pytest.fixture
def rng():
    seed = int(os.environ.get("GPUKIT_TEST_SEED", secrets.randbits(32)))
    print(f"GPUKIT_TEST_SEED={seed}")
    return np.random.default_rng(seed)


# Relative error allowed against a float64 reference, by the result's dtype. bfloat16 keeps 8
# significant bits: one rounding is off by up to 2**-9 and two results that differ only in where
# float32 sums were rounded may be one unit (2**-7) apart; 2e-2 leaves room for a few ops.
TOLERANCE = {
    gk.bfloat16: 2e-2,
    np.dtype("float16"): 2e-3,
    np.dtype("float32"): 2e-5,
    np.dtype("float64"): 1e-12,
}


def assert_within(got, ref, rtol, atol):
    """|got - ref| <= rtol |ref| + atol elementwise (atol may be an array: an error bound that
    grows with the magnitudes summed), NaN where ref is NaN."""
    got, ref = np.broadcast_arrays(np.asarray(got, np.float64), np.asarray(ref, np.float64))
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan), "NaN where NumPy has none, or the reverse"
    with np.errstate(invalid="ignore"):
        bad = ~nan & ~(np.abs(got - ref) <= rtol * np.abs(ref) + atol)
    assert not bad.any(), f"{bad.sum()} of {bad.size} off, e.g. {got[bad][:3]} vs {ref[bad][:3]}"


def random_array(rng, shape, dtype):
    """Random values of `dtype`, never all zeros: normal floats, ints in a small signed range."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -50
        return rng.integers(lo, 50, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def assert_matches(actual, expected, dtype=None, scale=1.0):
    """`actual` (GPUArray) against `expected` (computed in float64 or exactly): same shape, dtype
    `dtype` (default: expected's), values within the dtype's tolerance."""
    assert isinstance(actual, gk.GPUArray), type(actual)
    got = actual.to_numpy()
    expected = np.asarray(expected)
    dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == dtype, (got.dtype, dtype)
    if dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        tol = TOLERANCE[dtype] * scale
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol
        )
