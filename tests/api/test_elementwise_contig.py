"""The contiguous elementwise kernel (gk_ew_contig: 16-byte vectors, GK_EW_UNROLL of them a thread
per step; a block per chunk of the array, or for long math over narrow elements (gelu bfloat16) a
grid of at most GK_EW_BLOCKS_PER_SM blocks per SM striding over the rest) over sizes that end
mid-vector, mid-step and past one capped grid's reach, views that start off a 16-byte boundary,
NaN and inf, written where NaN was just released; against float64 NumPy. Every backend."""

import math

import numpy as np
import pytest
from conftest import TOLERANCE, random_array

import gpukit as gk
from gpukit import nn

_ERF = np.vectorize(math.erf)
SIZES = [0, 1, 31, 1025, 2**20 + 3, 2**23 + 5]


def _close(got, ref, tol):
    """Within tol (relative and absolute) of ref; NaN and inf where ref has them."""
    np.testing.assert_allclose(np.asarray(got, np.float64), ref, rtol=tol, atol=tol)


def _poisoned(n, dtype):
    """Releases n + 64 NaNs: the next result of that size may be placed over them."""
    del_me = gk.full((n + 64,), np.nan, dtype)
    del del_me


@pytest.mark.parametrize("n", SIZES)
def test_exp_and_add_float32(backend, rng, n):
    x = random_array(rng, (n + 1,), "float32")
    y = random_array(rng, (n + 1,), "float32")
    if n > 40:
        x[n // 2], x[n // 3], y[n // 4] = np.nan, np.inf, -np.inf
    a, b = gk.asarray(x), gk.asarray(y)
    tol = TOLERANCE[np.dtype("float32")]
    for lo in (0, 1):  # from the start, and from 4 bytes past it
        xs, ys = x[lo : lo + n], y[lo : lo + n]
        _poisoned(n, "float32")
        with np.errstate(over="ignore"):
            ref = np.exp(xs.astype(np.float64))
        _close(gk.exp(a[lo : lo + n]).to_numpy(), ref, tol)
        _poisoned(n, "float32")
        got = (a[lo : lo + n] + b[lo : lo + n]).to_numpy()
        _close(got, xs.astype(np.float64) + ys, tol)


# 2**25 + 3 bfloat16 elements: more vectors than 132 SMs x 32 blocks x 256 threads cover at once.
@pytest.mark.parametrize("n", [*SIZES, 2**25 + 3])
def test_gelu_bfloat16(backend, rng, n):
    x = random_array(rng, (n + 1,), "bfloat16")
    if n > 40:
        x[n // 2] = np.nan
    a = gk.asarray(x)
    for lo in (0, 1):
        # Past 2**24 elements, every 97th and the last 4096 (math.erf per element is slow).
        at = np.r_[0:n:97, max(n - 4096, 0) : n] if n > 2**24 else np.arange(n)
        xs = x[lo : lo + n][at].astype(np.float64)
        _poisoned(n, "bfloat16")
        got = nn.gelu(a[lo : lo + n]).to_numpy()[at].astype(np.float64)
        ref = 0.5 * xs * (1 + _ERF(xs / math.sqrt(2))) if n else xs
        _close(got, ref, TOLERANCE[x.dtype])
