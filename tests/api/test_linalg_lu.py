"""solve, inv, det and slogdet past the one-block kernel (n > 64: the blocked LU with partial
pivoting on CUDA, LAPACK on the CPU) against NumPy in float64: residuals scaled by
n * eps * ||A|| ||x||, forward errors within cond(A) of that, matrices where pivoting decides
(permuted rows of a dominant matrix, zero leading entries, ties of magnitude), ill-conditioned
ones, several panels with a remainder, batches, non-contiguous operands, exactly singular
matrices (a zero pivot reached after elimination) raising as NumPy raises, and the same bits on
every run. The check_* functions are also run on the host through the emulated CUDA kernels
(tests/gpu/test_linalg_lu_emulated.py)."""

import numpy as np
import pytest
from linalg_cases import REAL, conditioned, eps, scaled_residual, with_singular_values

import gpukit as gk

BOUND = 30.0  # units of n * eps * ||A|| ||x|| (LAPACK's own tests use 30)
SIZES = [65, 100, 257]  # one panel and a column, two panels, five with a remainder


def poison_pool():
    """Blocks the pool hands back next start as NaN (bytes 0xff) where nothing writes them."""
    poison = [gk.full((1 << b,), 255, dtype="uint8") for b in range(8, 23) for _ in range(3)]
    del poison


@pytest.fixture(autouse=True)
def _poisoned(backend):
    poison_pool()


def _dev(x):
    return gk.asarray(np.ascontiguousarray(x))


def _solve_ok(a, x, b, dtype, cond):
    """x solves a x = b backward stably, and is within cond(a) of NumPy's float64 solution."""
    n = a.shape[-1]
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    x64 = x.astype(np.float64)
    xn = np.max(np.linalg.norm(x64, 2, axis=(-2, -1)))
    assert scaled_residual(a64 @ x64 - b64, a64, dtype, n, times=xn) < BOUND, n
    ref = np.linalg.solve(a64, b64)
    err = np.max(np.abs(x64 - ref)) / max(np.max(np.abs(ref)), 1e-300)
    assert err < BOUND * n * eps(dtype) * cond, (n, err)


def pivoting_matrix(rng, n, dtype, batch=()):
    """The rows of a diagonally dominant matrix in random order, the first one's leading entry
    and a few others zero: without the row interchanges the elimination meets zero pivots."""
    d = rng.standard_normal((*batch, n, n)) + 3 * np.sqrt(n) * np.eye(n)
    d[..., 1, 0] = 0.0
    out = np.empty_like(d)
    for i in np.ndindex(*batch):
        p = rng.permutation(n)
        p[[0, np.argmax(p == 1)]] = p[[np.argmax(p == 1), 0]]  # row 1 (leading 0) first
        out[i] = d[i][p]
    return out.astype(dtype)


def ties_matrix(rng, n, dtype, batch=()):
    """Entries +-1 and +-2 with an identity added: many equal magnitudes per column, so the
    pivot is decided by the first row of largest magnitude again and again."""
    x = rng.choice([-2.0, -1.0, 1.0, 2.0], size=(*batch, n, n)) + n * np.eye(n)
    return x[..., rng.permutation(n), :].astype(dtype)


def check_solve(rng, dtype, sizes, batch=(2,), k=3):
    for n in sizes:
        for a, cond in (
            (conditioned(rng, n, 1e3, dtype, batch=batch), 1e3),
            (pivoting_matrix(rng, n, dtype, batch), 10.0),
            (ties_matrix(rng, n, dtype, batch), 10.0),
        ):
            b = rng.standard_normal((*batch, n, k)).astype(dtype)
            out = gk.linalg.solve(_dev(a), _dev(b))
            assert out.dtype == np.dtype(dtype) and out.shape == b.shape
            _solve_ok(a, out.to_numpy(), b, dtype, cond)


def check_inv(rng, dtype, sizes, batch=(2,)):
    for n in sizes:
        for a, cond in (
            (conditioned(rng, n, 1e2, dtype, batch=batch), 1e2),
            (pivoting_matrix(rng, n, dtype, batch), 10.0),
        ):
            x = gk.linalg.inv(_dev(a)).to_numpy()
            assert x.dtype == np.dtype(dtype) and x.shape == a.shape
            eye = np.broadcast_to(np.eye(n), a.shape)
            _solve_ok(a, x, eye, dtype, cond)


def check_det(rng, dtype, sizes, batch=(3,)):
    for n in sizes:
        # |det| is the product of the chosen singular values, exp(sum log s): in range
        s = np.exp(rng.uniform(-1, 1, n))
        for a in (
            with_singular_values(rng, n, n, s, dtype, batch=batch),
            (pivoting_matrix(rng, n, dtype, batch) / np.sqrt(9 * n)).astype(dtype),
            (ties_matrix(rng, n, dtype, batch) / n).astype(dtype),
        ):
            ref_sign, ref_log = np.linalg.slogdet(a.astype(np.float64))
            tol = 50 * n * eps(dtype)
            sign, logdet = gk.linalg.slogdet(_dev(a))
            assert sign.dtype == np.dtype(dtype) and logdet.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(sign.to_numpy(), ref_sign)
            np.testing.assert_allclose(logdet.to_numpy(), ref_log, atol=tol * max(1, n))
            det = gk.linalg.det(_dev(a)).to_numpy()
            assert det.dtype == np.dtype(dtype) and det.shape == batch
            np.testing.assert_allclose(det, ref_sign * np.exp(ref_log), rtol=tol * n)


def check_singular(rng, dtype, n):
    """A zero row and a zero column: the elimination reaches an exactly zero pivot (the zero
    row's last one; the column's at its step), in one matrix of a stack."""
    good = conditioned(rng, n, 10.0, dtype)
    zero_row = conditioned(rng, n, 10.0, dtype)
    zero_row[n // 3] = 0
    zero_col = conditioned(rng, n, 10.0, dtype)
    zero_col[:, n - 7] = 0
    for bad in (zero_row, zero_col):
        stack = np.stack([good, bad, good])
        with pytest.raises(gk.LinAlgError, match="Singular matrix"):
            gk.linalg.solve(_dev(stack), _dev(np.ones((3, n, 2), dtype)))
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            gk.linalg.inv(_dev(stack))
        det = gk.linalg.det(_dev(stack)).to_numpy()
        assert det[1] == 0  # (the others may underflow in float32: slogdet holds them)
        sign, logdet = gk.linalg.slogdet(_dev(stack))
        np.testing.assert_array_equal(sign.to_numpy()[1], 0)
        assert logdet.to_numpy()[1] == -np.inf and np.isfinite(logdet.to_numpy()[[0, 2]]).all()


def check_layouts_and_bits(rng, dtype, n):
    """Non-contiguous operands (a transposed, strided stack; b a column slice), a vector b
    broadcast over a batch, and the same bits on a repeated call."""
    a = pivoting_matrix(rng, n, dtype, (2,))
    big = np.zeros((2, 2 * n, 2 * n), dtype)
    big[:, ::2, ::2] = np.swapaxes(a, -1, -2)
    src = gk.asarray(big)[:, ::2, ::2].mT  # a again, strided and transposed
    b = rng.standard_normal((2, n, 8)).astype(dtype)
    bsrc = gk.asarray(b)[:, :, ::3]
    x = gk.linalg.solve(src, bsrc).to_numpy()
    _solve_ok(a, x, b[:, :, ::3], dtype, 10.0)
    again = gk.linalg.solve(src, bsrc).to_numpy()
    assert x.tobytes() == again.tobytes()
    inv1 = gk.linalg.inv(src).to_numpy()
    assert inv1.tobytes() == gk.linalg.inv(src).to_numpy().tobytes()
    v = rng.standard_normal(n).astype(dtype)
    xv = gk.linalg.solve(src, _dev(v)).to_numpy()
    assert xv.shape == (2, n)
    _solve_ok(a, xv[..., None], np.broadcast_to(v[:, None], (2, n, 1)), dtype, 10.0)
    one = gk.linalg.solve(_dev(a[1]), _dev(b[0])).to_numpy()  # a 2-D a, batch of one
    _solve_ok(a[1], one, b[0], dtype, 10.0)


@pytest.mark.parametrize("dtype", REAL)
def test_solve_past_the_small_kernel(backend, rng, dtype):
    check_solve(rng, dtype, SIZES)


@pytest.mark.parametrize("dtype", REAL)
def test_solve_n_1000(backend, rng, dtype):
    check_solve(rng, dtype, [1000], batch=(), k=5)


@pytest.mark.parametrize("dtype", REAL)
def test_inv_past_the_small_kernel(backend, rng, dtype):
    check_inv(rng, dtype, SIZES)


@pytest.mark.parametrize("dtype", REAL)
def test_det_and_slogdet_past_the_small_kernel(backend, rng, dtype):
    check_det(rng, dtype, SIZES)


@pytest.mark.parametrize("dtype", REAL)
def test_singular_past_the_small_kernel(backend, rng, dtype):
    check_singular(rng, dtype, 131)


@pytest.mark.parametrize("dtype", REAL)
def test_layouts_and_repeated_bits(backend, rng, dtype):
    check_layouts_and_bits(rng, dtype, 97)


def test_ill_conditioned_large_solve(backend, rng):
    n = 150
    a = conditioned(rng, n, 1e12, "float64")
    x_true = rng.standard_normal((n, 2))
    b = a @ x_true
    x = gk.linalg.solve(_dev(a), _dev(b)).to_numpy()
    assert scaled_residual(a @ x - b, a, "float64", n, times=np.linalg.norm(x, 2)) < BOUND
