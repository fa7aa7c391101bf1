"""qr, svd and eigh on every backend against NumPy in float64 (on CUDA: blocked Householder QR
and one-sided Jacobi; LAPACK on the CPU), where the CUDA paths change: one launch for small
stacks, blocks of rows past GK_SVJ_ROWS, long rows shortened by a QR, panels with a remainder.
Residuals are scaled by n * eps * ||A|| on matrices built from chosen singular values or
eigenvalues (well- and ill-conditioned, rank-deficient, repeated eigenvalues), with the triangle
eigh does not read poisoned, non-contiguous inputs, NaN raising as NumPy raises, and the same
bits on every run; pinv, matrix_rank and lstsq (composed from svd) follow. The check_*
functions also run on the host through the emulated CUDA kernels
(tests/gpu/test_linalg_orthogonal_emulated.py)."""

import numpy as np
import pytest
from linalg_cases import (
    REAL,
    conditioned,
    eps,
    hermitian,
    hT,
    scaled_residual,
    with_singular_values,
)

import gpukit as gk

BOUND = 30.0  # units of n * eps * ||A|| (LAPACK's own tests use 30)


def _dev(x):
    return gk.asarray(np.ascontiguousarray(x))


def _orthonormal(q, dtype, n):
    """Columns of q (a stack) orthonormal within BOUND units of n * eps."""
    k = q.shape[-1]
    orth = hT(q).astype(np.float64) @ q - np.eye(k)
    assert scaled_residual(orth, np.broadcast_to(np.eye(k), orth.shape), dtype, n) < BOUND


def _qr_ok(a, q, r, dtype, mode):
    m, n = a.shape[-2:]
    k = min(m, n)
    rows = m if mode == "complete" else k
    assert q.dtype == np.dtype(dtype) and r.dtype == np.dtype(dtype)
    assert q.shape == (*a.shape[:-2], m, rows) and r.shape == (*a.shape[:-2], rows, n)
    assert np.all(np.tril(r, -1) == 0)
    qr = q.astype(np.float64) @ r
    assert scaled_residual(qr - a, a, dtype, max(m, n)) < BOUND, (m, n, mode)
    _orthonormal(q, dtype, max(m, n))


def check_qr(rng, dtype, shapes, batch=(2,)):
    """Both Q modes, R alone (the same bits as the reduced mode's R) and, in float64 on a
    well-conditioned matrix, R's diagonal with LAPACK's (NumPy's) signs."""
    for m, n in shapes:
        for cond in (10.0, 1e4):
            a = conditioned(rng, n, cond, dtype, batch=batch, m=m)
            q, r = (x.to_numpy() for x in gk.linalg.qr(_dev(a)))
            _qr_ok(a, q, r, dtype, "reduced")
            qc, rc = (x.to_numpy() for x in gk.linalg.qr(_dev(a), mode="complete"))
            _qr_ok(a, qc, rc, dtype, "complete")
            r_only = gk.linalg.qr(_dev(a), mode="r").to_numpy()
            assert r_only.tobytes() == r.tobytes()
            if dtype == "float64" and cond == 10.0:
                ref = np.linalg.qr(a, mode="r")
                d, dref = (np.diagonal(x, axis1=-2, axis2=-1) for x in (r, ref))
                np.testing.assert_array_equal(np.sign(d), np.sign(dref))


def check_qr_rank_deficient(rng, dtype, m, n):
    """A zero column, a repeated column and an all-zero matrix in the stack."""
    a = conditioned(rng, n, 100.0, dtype, batch=(3,), m=m)
    a[0, :, 1] = 0
    a[1, :, n - 1] = a[1, :, 0]
    a[2] = 0
    for mode in ("reduced", "complete"):
        q, r = (x.to_numpy() for x in gk.linalg.qr(_dev(a), mode=mode))
        _qr_ok(a[:2], q[:2], r[:2], dtype, mode)
        _orthonormal(q[2:], dtype, max(m, n))
        assert np.all(r[2] == 0)


def _svd_ok(a, u, s, vh, s_true, dtype, full):
    m, n = a.shape[-2:]
    k = min(m, n)
    size = max(m, n)
    assert u.shape == (*a.shape[:-2], m, m if full else k) and s.shape == (*a.shape[:-2], k)
    assert vh.shape == (*a.shape[:-2], n if full else k, n)
    assert u.dtype == np.dtype(dtype) and s.dtype == np.dtype(dtype) and vh.dtype == u.dtype
    assert np.all(np.diff(s, axis=-1) <= 0), "descending"
    assert np.max(np.abs(s - s_true)) <= BOUND * size * eps(dtype) * np.max(s_true), (m, n)
    usv = (u[..., :, :k] * s[..., None, :]).astype(np.float64) @ vh[..., :k, :]
    assert scaled_residual(usv - a, a, dtype, size) < BOUND, (m, n)
    _orthonormal(u, dtype, size)
    _orthonormal(hT(vh), dtype, size)


def check_svd(rng, dtype, shapes, batch=(2,)):
    """Singular values from 1 down to 1e-6 (to 1e-3 and zeros in a rank-deficient matrix of the
    stack), thin and full, values alone."""
    for m, n in shapes:
        k = min(m, n)
        s_true = np.broadcast_to(np.logspace(0, -6, k) if k > 1 else np.ones(1), (*batch, k))
        s_true = s_true.copy()
        s_true[-1, k // 2 :] = 0  # the last matrix: rank k / 2
        s_true[-1, : k // 2] = np.logspace(0, -3, k // 2)
        a = np.stack([with_singular_values(rng, m, n, s_true[i], dtype)
                      for i in np.ndindex(*batch)]).reshape(*batch, m, n)  # fmt: skip
        for full in (False, True):
            u, s, vh = (x.to_numpy() for x in gk.linalg.svd(_dev(a), full_matrices=full))
            _svd_ok(a, u, s, vh, s_true, dtype, full)
        for s in (gk.linalg.svdvals(_dev(a)), gk.linalg.svd(_dev(a), compute_uv=False)):
            s = s.to_numpy()
            assert s.shape == (*batch, k) and s.dtype == np.dtype(dtype)
            assert np.max(np.abs(s - s_true)) <= BOUND * max(m, n) * eps(dtype), (m, n)


def check_composed(rng, dtype, m, n):
    """pinv, matrix_rank and lstsq (built on svd) of a rank-deficient and a full-rank matrix."""
    k = min(m, n)
    rank = max(k // 2, 1)
    s_true = np.r_[np.logspace(0, -2, rank), np.zeros(k - rank)]
    u0 = np.linalg.qr(rng.standard_normal((m, m)))[0][:, :k]
    v0 = np.linalg.qr(rng.standard_normal((n, n)))[0][:, :k]
    a = ((u0 * s_true) @ v0.T).astype(dtype)
    assert int(gk.linalg.matrix_rank(_dev(a)).to_numpy()) == rank
    ref = (v0[:, :rank] / s_true[:rank]) @ u0[:, :rank].T  # the exact pseudo-inverse
    got = gk.linalg.pinv(_dev(a)).to_numpy()
    # the pseudo-inverse's forward error: about eps * ||A+||^2 * ||A|| per unit of n
    err = np.linalg.norm(got - ref, 2) / np.linalg.norm(ref, 2)
    assert err < BOUND * max(m, n) * eps(dtype) * 100, err
    full = conditioned(rng, n, 100.0, dtype, m=max(m, n))
    b = rng.standard_normal((max(m, n), 3)).astype(dtype)
    x, residuals, r, _ = gk.linalg.lstsq(_dev(full), _dev(b))
    assert r == n
    ref_x = np.linalg.lstsq(full.astype(np.float64), b.astype(np.float64), rcond=None)[0]
    err = np.max(np.abs(x.to_numpy() - ref_x)) / np.max(np.abs(ref_x))
    assert err < BOUND * max(m, n) * eps(dtype) * 100, err
    if max(m, n) > n:
        ref_res = np.sum((full.astype(np.float64) @ ref_x - b) ** 2, axis=0)
        np.testing.assert_allclose(residuals.to_numpy(), ref_res, rtol=1e-3 if dtype ==
                                   "float32" else 1e-9)  # fmt: skip


def _eigh_ok(a, w, v, lam, dtype):
    n = a.shape[-1]
    real = np.dtype(dtype)
    assert w.dtype == real and v.dtype == real and w.shape == lam.shape and v.shape == a.shape
    norm = np.max(np.abs(lam))
    assert np.max(np.abs(w - lam)) <= BOUND * n * eps(dtype) * norm, n
    av = a.astype(np.float64) @ v - v * w[..., None, :]
    assert scaled_residual(av, a, dtype, n) < BOUND, n
    _orthonormal(v, dtype, n)


def check_eigh(rng, dtype, sizes, batch=(2,)):
    """Random eigenvalues in [-3, 3], and repeated ones (-1 and 2 a third of the time each, an
    eigenvalue within 1e-7 of 2): both triangles, the other one NaN; eigvalsh."""
    for n in sizes:
        lam = np.sort(rng.uniform(-3, 3, (*batch, n)), axis=-1)
        third = n // 3
        lam[-1] = np.sort(np.r_[[-1.0] * third, [2.0] * third, [2.0 + 1e-7] * (n - 2 * third)])
        a = np.stack([hermitian(rng, n, lam[i], dtype) for i in np.ndindex(*batch)])
        a = a.reshape(*batch, n, n)
        for uplo in ("L", "U"):
            poisoned = a.copy()
            rows, cols = np.triu_indices(n, 1) if uplo == "L" else np.tril_indices(n, -1)
            poisoned[..., rows, cols] = np.nan
            w, v = (x.to_numpy() for x in gk.linalg.eigh(_dev(poisoned), UPLO=uplo))
            _eigh_ok(a, w, v, lam, dtype)
            wo = gk.linalg.eigvalsh(_dev(poisoned), UPLO=uplo).to_numpy()
            assert np.max(np.abs(wo - lam)) <= BOUND * n * eps(dtype) * 3, n


def _exactly_rank_deficient(rng, m, n, dtype):
    """Three m x n matrices whose columns (rows, for wide shapes) span a subspace exactly in
    `dtype`, and their ranks: columns repeating those of a rank-h matrix (h = k // 2) with the
    last one zero, a Vandermonde matrix of 3 nodes each repeated (polyfit's, columns scaled to
    unit norm), and zero. One-sided Jacobi cannot make such columns orthogonal (rounding
    leaves noise inside the subspace)."""
    big, k = max(m, n), min(m, n)
    h = max(k // 2, 1)
    b = with_singular_values(rng, big, h, np.logspace(0, -2, h), "float64")
    dup = b[:, np.arange(k) % h]
    dup[:, k - 1] = 0  # a copy of column (k - 1) % h comes earlier where k >= 2
    nodes = np.array([-1.0, 0.5, 2.0]) + rng.uniform(-0.2, 0.2, 3)
    vander = nodes[np.arange(big) % 3, None] ** np.arange(k)
    vander /= np.linalg.norm(vander, axis=0)
    a = np.stack([dup, vander, np.zeros((big, k))]).astype(dtype)
    a = a if m >= n else np.swapaxes(a, -1, -2).copy()
    return a, [h if k >= 2 else 1, min(3, k), 0]


def check_svd_rank_deficient(rng, dtype, shapes):
    """svd, svdvals and matrix_rank of _exactly_rank_deficient's matrices against LAPACK
    in float64 (NumPy's zero singular values are noise of eps ||A||; gpukit's may be exact)."""
    for m, n in shapes:
        a, ranks = _exactly_rank_deficient(rng, m, n, dtype)
        ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        for full in (False, True):
            u, s, vh = (x.to_numpy() for x in gk.linalg.svd(_dev(a), full_matrices=full))
            _svd_ok(a, u, s, vh, ref, dtype, full)
        s = gk.linalg.svdvals(_dev(a)).to_numpy()
        assert np.max(np.abs(s - ref)) <= BOUND * max(m, n) * eps(dtype) * np.max(ref), (m, n)
        got = [int(gk.linalg.matrix_rank(_dev(x)).to_numpy()) for x in a]
        assert got == ranks, (m, n, got)


def check_svd_extreme_scales(rng, dtype, shapes):
    """Singular values 1 to 1e-3 times a factor whose squares underflow or overflow `dtype`
    (entries of 1e-25 or 1e25 in float32, 1e-170 or 1e170 in float64)."""
    big = 1e25 if dtype == "float32" else 1e170
    for m, n in shapes:
        k = min(m, n)
        for factor in (1 / big, big):
            s_true = np.broadcast_to(np.logspace(0, -3, k) * factor, (2, k))
            a = np.stack([with_singular_values(rng, m, n, x, dtype) for x in s_true])
            u, s, vh = (x.to_numpy() for x in gk.linalg.svd(_dev(a), full_matrices=False))
            _svd_ok(a, u, s, vh, s_true, dtype, False)


def check_eigh_singular_shift(rng, dtype, n):
    """Eigenvalues -1 (once) and 0: B = A + ||A||_F I, whose rows the sweeps orthogonalize,
    is singular."""
    lam = np.r_[-1.0, np.zeros(n - 1)]
    a = hermitian(rng, n, lam, dtype, batch=(2,))
    w, v = (x.to_numpy() for x in gk.linalg.eigh(_dev(a)))
    _eigh_ok(a, w, v, np.broadcast_to(lam, (2, n)), dtype)


def check_special(rng, dtype, n):
    """The identity and zero (nothing to rotate), and NaN in a matrix of a stack: svd and eigh
    raise LinAlgError as NumPy does."""
    for c in (0.0, 1.0):
        a = np.broadcast_to(np.eye(n, dtype=dtype) * c, (2, n, n)).copy()
        w, v = (x.to_numpy() for x in gk.linalg.eigh(_dev(a)))
        np.testing.assert_array_equal(w, np.full((2, n), c, dtype))
        _orthonormal(v, dtype, n)
        u, s, vh = (x.to_numpy() for x in gk.linalg.svd(_dev(a)))
        np.testing.assert_array_equal(s, np.full((2, n), c, dtype))
        _orthonormal(u, dtype, n)
        _orthonormal(hT(vh), dtype, n)
    bad = conditioned(rng, n, 10.0, dtype, batch=(3,))
    bad[1, n - 1, 0] = np.nan  # in the lower triangle, which eigh reads
    with pytest.raises(gk.LinAlgError, match="SVD did not converge"):
        gk.linalg.svd(_dev(bad))
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        gk.linalg.svdvals(_dev(bad))
    with pytest.raises(gk.LinAlgError, match="Eigenvalues did not converge"):
        gk.linalg.eigh(_dev(bad))
    with pytest.raises(gk.LinAlgError, match="Eigenvalues did not converge"):
        gk.linalg.eigvalsh(_dev(bad))


def check_layouts_and_bits(rng, dtype, m, n):
    """Strided, transposed operands give the right factors, and a repeated call the same bits."""
    a = conditioned(rng, n, 100.0, dtype, batch=(2,), m=m)
    big = np.zeros((2, 2 * n, 2 * m), dtype)
    big[:, ::2, ::2] = np.swapaxes(a, -1, -2)
    src = gk.asarray(big)[:, ::2, ::2].mT  # a, strided and transposed
    sym = hermitian(rng, n, rng.uniform(-1, 1, n), dtype, batch=(2,))
    bigs = np.zeros((2, n, 3 * n), dtype)
    bigs[:, :, ::3] = sym
    ssrc = gk.asarray(bigs)[:, :, ::3]
    runs = []
    for _ in range(2):
        q, r = (x.to_numpy() for x in gk.linalg.qr(src))
        u, s, vh = (x.to_numpy() for x in gk.linalg.svd(src, full_matrices=False))
        w, v = (x.to_numpy() for x in gk.linalg.eigh(ssrc))
        runs.append([x.tobytes() for x in (q, r, u, s, vh, w, v)])
    assert runs[0] == runs[1]
    _qr_ok(a, q, r, dtype, "reduced")
    k = min(m, n)
    _svd_ok(a, u, s, vh, np.broadcast_to(np.logspace(0, -2, k), (2, k)), dtype, False)
    _eigh_ok(sym, w, v, np.linalg.eigvalsh(sym.astype(np.float64)), dtype)


# Shapes where the CUDA paths change: one panel and a remainder, wide and tall, several panels.
QR_SHAPES = [(1, 1), (7, 7), (32, 32), (33, 33), (64, 65), (65, 64), (100, 37), (37, 100),
             (257, 131)]  # fmt: skip
# One launch (min(m, n) <= 64), blocks of rows, long rows shortened by a QR first.
SVD_SHAPES = [(1, 1), (2, 2), (5, 5), (32, 32), (64, 64), (40, 300), (300, 40), (65, 65),
              (131, 97), (97, 131), (500, 100), (100, 500)]  # fmt: skip
EIGH_SIZES = [33, 40, 64, 65, 97, 200]
RANK_SHAPES = [(12, 5), (5, 12), (33, 33), (65, 65), (100, 65), (65, 100), (257, 257),
               (300, 40)]  # fmt: skip


@pytest.mark.parametrize("dtype", REAL)
def test_qr(backend, rng, dtype):
    check_qr(rng, dtype, QR_SHAPES)
    check_qr_rank_deficient(rng, dtype, 70, 40)
    check_qr_rank_deficient(rng, dtype, 40, 70)


@pytest.mark.parametrize("dtype", REAL)
def test_qr_n_1000(backend, rng, dtype):
    check_qr(rng, dtype, [(1000, 1000)], batch=())


@pytest.mark.parametrize("dtype", REAL)
def test_svd(backend, rng, dtype):
    check_svd(rng, dtype, SVD_SHAPES)
    check_composed(rng, dtype, 70, 40)
    check_composed(rng, dtype, 40, 70)


@pytest.mark.parametrize("dtype", REAL)
def test_svd_and_eigh_n_512(backend, rng, dtype):
    check_svd(rng, dtype, [(512, 512)], batch=(2,))
    check_eigh(rng, dtype, [512], batch=(1,))


@pytest.mark.parametrize("dtype", REAL)
def test_svd_rank_deficient(backend, rng, dtype):
    """Columns spanning a subspace exactly: one launch (12 x 5 as polyfit's, 33), blocks of rows
    (65, 100, 257), tall and wide, rows shortened by a QR first (300 x 40); eigh of a singular
    shifted matrix."""
    check_svd_rank_deficient(rng, dtype, RANK_SHAPES)
    check_eigh_singular_shift(rng, dtype, 65)


@pytest.mark.parametrize("dtype", REAL)
def test_svd_extreme_scales(backend, rng, dtype):
    check_svd_extreme_scales(rng, dtype, [(12, 5), (65, 65), (40, 100)])


@pytest.mark.parametrize("dtype", REAL)
def test_eigh(backend, rng, dtype):
    check_eigh(rng, dtype, EIGH_SIZES)


@pytest.mark.parametrize("dtype", REAL)
def test_special_matrices(backend, rng, dtype):
    for n in (5, 40, 70):
        check_special(rng, dtype, n)


@pytest.mark.parametrize("dtype", REAL)
def test_layouts_and_repeated_bits(backend, rng, dtype):
    check_layouts_and_bits(rng, dtype, 70, 45)
    check_layouts_and_bits(rng, dtype, 30, 80)


@pytest.mark.parametrize("dtype", REAL)
def test_batches_of_small_matrices(backend, rng, dtype):
    """Many matrices per launch (a block each), as in the issue's 512 x 32 x 32."""
    check_qr(rng, dtype, [(32, 32)], batch=(37,))
    check_svd(rng, dtype, [(32, 32), (20, 8)], batch=(37,))
    check_eigh(rng, dtype, [48], batch=(37,))
