"""gpukit.linalg's factorizations against NumPy (float64 references) on every backend that has
them: residuals scaled by n * eps * ||A|| on matrices built from chosen singular values or
eigenvalues (well- and ill-conditioned), every size from 1 to 65 and odd larger ones, batches,
non-contiguous inputs, complex dtypes, and NumPy's errors for singular and bad inputs."""

import numpy as np
import pytest
from linalg_cases import (
    COMPLEX,
    LARGE_SIZES,
    REAL,
    SMALL_SIZES,
    conditioned,
    eps,
    hermitian,
    hT,
    positive_definite,
    scaled_residual,
)

import gpukit as gk

# A residual within this many units of n * eps * ||A|| passes (LAPACK's own tests use 30).
BOUND = 30.0


def runs(backend, op: str, dtype="float64", n: int = 1) -> bool:
    """Whether `backend` computes `op` for n x n matrices of `dtype`: the CPU backend every op;
    CUDA every op in float32 and float64, any size (kernels/linalg_small.cu, blocked past it:
    the LU's and QR's panels, one-sided Jacobi for eigh and svd), no complex dtype yet."""
    return backend == "cpu" or dtype in REAL


def factorizations(backend, op: str = "svd", dtype="float64", n: int = 1):
    """Skips where the backend does not compute `op` (see notes/linalg.md)."""
    if not runs(backend, op, dtype, n):
        pytest.skip(f"gpukit has no {backend} kernels for linalg.{op} of {n}x{n} {dtype} yet")


def _dev(x):
    return gk.asarray(np.ascontiguousarray(x))


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_cholesky_every_size(backend, rng, dtype):
    factorizations(backend, "cholesky", dtype)
    for n in SMALL_SIZES + LARGE_SIZES:
        if not runs(backend, "cholesky", dtype, n):
            continue
        a = positive_definite(rng, n, 1e3, dtype, batch=(2,))
        l_ = gk.linalg.cholesky(_dev(a)).to_numpy()
        assert l_.dtype == np.dtype(dtype) and l_.shape == a.shape
        assert np.all(np.triu(l_, 1) == 0), n
        r = l_.astype(np.complex128) @ hT(l_.astype(np.complex128)) - a
        assert scaled_residual(r, a, dtype, n) < BOUND, n


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cholesky_upper_reads_one_triangle(backend, rng, dtype):
    factorizations(backend, "cholesky", dtype)
    n = 37
    a = positive_definite(rng, n, 10.0, dtype)
    poisoned = a.copy()
    poisoned[np.tril_indices(n, -1)] = np.nan  # the upper factor reads the upper triangle only
    u = gk.linalg.cholesky(_dev(poisoned), upper=True).to_numpy()
    assert np.all(np.tril(u, -1) == 0)
    assert scaled_residual(hT(u) @ u - a, a, dtype, n) < BOUND
    poisoned = a.copy()
    poisoned[np.triu_indices(n, 1)] = np.nan
    lo = gk.linalg.cholesky(_dev(poisoned)).to_numpy()
    assert scaled_residual(lo @ hT(lo) - a, a, dtype, n) < BOUND


@pytest.mark.parametrize("dtype", REAL)
def test_cholesky_not_positive_definite_raises(backend, rng, dtype):
    factorizations(backend, "cholesky", dtype)
    n = 9
    lam = np.linspace(1.0, 2.0, n)
    lam[4] = -1.0  # one negative eigenvalue: no Cholesky factor exists
    bad = hermitian(rng, n, lam, dtype)
    good = positive_definite(rng, n, 10.0, dtype)
    with pytest.raises(gk.LinAlgError, match="positive definite"):
        gk.linalg.cholesky(_dev(np.stack([good, bad])))
    with pytest.raises(np.linalg.LinAlgError):
        gk.linalg.cholesky(_dev(bad))
    lam = np.linspace(1.0, 2.0, 150)
    lam[140] = -1.0  # past the first blocks of the blocked path
    big = np.stack([positive_definite(rng, 150, 10.0, dtype), hermitian(rng, 150, lam, dtype)])
    with pytest.raises(gk.LinAlgError, match="positive definite"):
        gk.linalg.cholesky(_dev(big))


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_solve_every_size(backend, rng, dtype):
    factorizations(backend, "solve", dtype)
    for n in SMALL_SIZES + LARGE_SIZES:
        if not runs(backend, "solve", dtype, n):
            continue
        a = conditioned(rng, n, 1e4, dtype, batch=(2,))
        b = conditioned(rng, n, 10.0, dtype, batch=(2,), m=n)[..., :3]
        x = gk.linalg.solve(_dev(a), _dev(b)).to_numpy()
        assert x.dtype == np.dtype(dtype) and x.shape == b.shape
        r = a.astype(np.complex128) @ x - b
        # backward error: ||A x - b|| <= c n eps ||A|| ||x||
        xn = np.linalg.norm(x.astype(np.complex128), 2, axis=(-2, -1))
        assert scaled_residual(r, a, dtype, n, times=np.max(xn)) < BOUND, n


def test_solve_vector_and_broadcast_batches(backend, rng):
    factorizations(backend, "solve")
    a = conditioned(rng, 6, 100.0, "float64", batch=(3, 1))
    b = rng.standard_normal((4, 6, 2))
    got = gk.linalg.solve(_dev(a), _dev(b)).to_numpy()
    np.testing.assert_allclose(got, np.linalg.solve(a, b), rtol=1e-10, atol=1e-10)
    v = rng.standard_normal(6)
    got = gk.linalg.solve(_dev(a), _dev(v)).to_numpy()
    assert got.shape == (3, 1, 6)
    np.testing.assert_allclose(got, np.linalg.solve(a, v), rtol=1e-10, atol=1e-10)
    # integers solve in float64, as NumPy does
    ai = np.array([[2, 1], [1, 3]])
    got = gk.linalg.solve(_dev(ai), _dev(np.array([1, 2])))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.to_numpy(), np.linalg.solve(ai, [1, 2]), rtol=1e-14)


@pytest.mark.parametrize("dtype", REAL)
def test_solve_and_inv_of_singular_raise(backend, rng, dtype):
    factorizations(backend, "solve", dtype)
    n = 7
    a = conditioned(rng, n, 10.0, dtype)
    a[3] = 0  # an exactly zero row: every LU pivot of its column is exactly zero
    dup = conditioned(rng, n, 10.0, dtype)
    dup[:, 5] = 0  # an exactly zero column: every pivot candidate of that step is exactly zero
    for bad in (a, dup):
        with pytest.raises(gk.LinAlgError, match="Singular matrix"):
            gk.linalg.solve(_dev(bad), _dev(np.ones((n, 1), dtype)))
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            gk.linalg.inv(_dev(bad))
    assert gk.linalg.det(_dev(a)).to_numpy() == 0
    sign, logdet = gk.linalg.slogdet(_dev(a))
    assert sign.to_numpy() == 0 and logdet.to_numpy() == -np.inf


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_inv_every_size(backend, rng, dtype):
    factorizations(backend, "inv", dtype)
    for n in SMALL_SIZES + LARGE_SIZES[:1]:
        if not runs(backend, "inv", dtype, n):
            continue
        a = conditioned(rng, n, 1e3, dtype, batch=(2,))
        x = gk.linalg.inv(_dev(a)).to_numpy()
        assert x.dtype == np.dtype(dtype)
        r = a.astype(np.complex128) @ x - np.eye(n)
        xn = np.linalg.norm(x.astype(np.complex128), 2, axis=(-2, -1))
        assert scaled_residual(r, a, dtype, n, times=np.max(xn)) < BOUND, n


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_det_and_slogdet(backend, rng, dtype):
    factorizations(backend, "det", dtype)
    for n in (1, 2, 3, 8, 33, 64, 65, 97):
        if not runs(backend, "det", dtype, n):
            continue
        # |det| = product of singular values, which are chosen: exp(sum log s)
        s = np.exp(rng.uniform(-1, 1, n))
        from linalg_cases import with_singular_values

        a = with_singular_values(rng, n, n, s, dtype, batch=(3,))
        ref = np.linalg.det(a.astype(np.complex128 if "complex" in dtype else np.float64))
        tol = 50 * n * eps(dtype)
        got = gk.linalg.det(_dev(a)).to_numpy()
        assert got.dtype == np.dtype(dtype) and got.shape == (3,)
        np.testing.assert_allclose(got, ref, rtol=tol)
        sign, logdet = gk.linalg.slogdet(_dev(a))
        assert sign.dtype == np.dtype(dtype)
        assert logdet.dtype == np.dtype("float32" if dtype in ("float32", "complex64") else "f8")
        np.testing.assert_allclose(logdet.to_numpy(), np.log(s).sum(), atol=tol * n)
        np.testing.assert_allclose(sign.to_numpy(), ref / np.abs(ref), atol=tol)


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_shapes_and_residuals(backend, rng, dtype, mode):
    factorizations(backend, "qr", dtype)
    shapes = [(n, n) for n in SMALL_SIZES[::4]] + [(65, 13), (13, 65), (1, 7), (7, 1), (131, 97)]
    for m, n in shapes:
        a = conditioned(rng, n, 1e3, dtype, batch=(2,), m=m)
        k = min(m, n)
        got = gk.linalg.qr(_dev(a), mode=mode)
        if mode == "r":
            r = got.to_numpy()
            assert r.shape == (2, k, n)
            assert np.all(np.tril(r, -1) == 0)
            # R^H R = A^H A (R is unique up to the phases of its rows)
            rr = hT(r).astype(np.complex128) @ r - hT(a).astype(np.complex128) @ a
            assert scaled_residual(rr, hT(a) @ a, dtype, max(m, n)) < BOUND, (m, n)
            continue
        q, r = (x.to_numpy() for x in got)
        rows = m if mode == "complete" else k
        assert q.shape == (2, m, rows) and r.shape == (2, rows, n), (q.shape, r.shape)
        assert np.all(np.tril(r, -1) == 0)
        qr = q.astype(np.complex128) @ r
        assert scaled_residual(qr - a, a, dtype, max(m, n)) < BOUND, (m, n)
        orth = hT(q).astype(np.complex128) @ q - np.eye(rows)
        assert scaled_residual(orth, np.eye(rows), dtype, max(m, n)) < BOUND, (m, n)


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_eigh_every_size(backend, rng, dtype):
    factorizations(backend, "eigh", dtype)
    for n in [*SMALL_SIZES[::2], 32, 64, 65, *LARGE_SIZES[:2]]:
        if not runs(backend, "eigh", dtype, n):
            continue
        lam = np.sort(rng.uniform(-3, 3, (2, n)), axis=-1)
        a = np.stack([hermitian(rng, n, lam[i], dtype) for i in range(2)])
        poisoned = a.copy()
        poisoned[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] = np.nan
        w, v = (x.to_numpy() for x in gk.linalg.eigh(_dev(poisoned)))
        real = np.dtype("float32" if dtype in ("float32", "complex64") else "float64")
        assert w.dtype == real and v.dtype == np.dtype(dtype)
        # eigenvalues are well conditioned: |w - lambda| <= c n eps ||A||
        assert np.max(np.abs(w - lam)) <= BOUND * n * eps(dtype) * 3, n
        av = a.astype(np.complex128) @ v - v * w[..., None, :]
        assert scaled_residual(av, a, dtype, n) < BOUND, n
        orth = hT(v).astype(np.complex128) @ v - np.eye(n)
        assert scaled_residual(orth, np.eye(n), dtype, n) < BOUND, n
        wo = gk.linalg.eigvalsh(_dev(a), UPLO="U").to_numpy()
        assert np.max(np.abs(wo - lam)) <= BOUND * n * eps(dtype) * 3, n


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_svd_every_size(backend, rng, dtype):
    factorizations(backend, "svd", dtype)
    shapes = [(n, n) for n in SMALL_SIZES[::2]] + [(65, 64), (64, 65), (5, 40), (40, 5)]
    shapes += [(131, 97)]
    for m, n in shapes:
        k = min(m, n)
        s_true = np.sort(np.logspace(0, -6, k))[::-1] if k > 1 else np.ones(1)
        from linalg_cases import with_singular_values

        a = with_singular_values(rng, m, n, s_true, dtype, batch=(2,))
        for full in (False, True):
            u, s, vh = (x.to_numpy() for x in gk.linalg.svd(_dev(a), full_matrices=full))
            cols = m if full else k
            rows = n if full else k
            assert u.shape == (2, m, cols) and s.shape == (2, k) and vh.shape == (2, rows, n)
            assert np.max(np.abs(s - s_true)) <= BOUND * max(m, n) * eps(dtype), (m, n)
            usv = (u[..., :, :k] * s[..., None, :]).astype(np.complex128) @ vh[..., :k, :]
            assert scaled_residual(usv - a, a, dtype, max(m, n)) < BOUND, (m, n)
            for q in (u, hT(vh)):
                orth = hT(q).astype(np.complex128) @ q - np.eye(q.shape[-1])
                assert scaled_residual(orth, np.eye(q.shape[-1]), dtype, max(m, n)) < BOUND
        sv = gk.linalg.svdvals(_dev(a)).to_numpy()
        assert np.max(np.abs(sv - s_true)) <= BOUND * max(m, n) * eps(dtype)
        s_only = gk.linalg.svd(_dev(a), compute_uv=False).to_numpy()
        assert np.max(np.abs(s_only - s_true)) <= BOUND * max(m, n) * eps(dtype)


def test_ill_conditioned_solve_matches_backward_stability(backend, rng):
    factorizations(backend, "solve")
    n = 50
    a = conditioned(rng, n, 1e12, "float64")
    x_true = rng.standard_normal((n, 1))
    b = a @ x_true
    x = gk.linalg.solve(_dev(a), _dev(b)).to_numpy()
    assert scaled_residual(a @ x - b, a, "float64", n, times=np.linalg.norm(x)) < BOUND


def test_non_contiguous_inputs(backend, rng):
    factorizations(backend, "eigh")
    n = 11
    a = conditioned(rng, n, 100.0, "float64", batch=(3,))
    big = np.zeros((3, 2 * n, 2 * n))
    big[:, ::2, ::2] = np.swapaxes(a, -1, -2)
    src = gk.asarray(big)[:, ::2, ::2].mT  # strided and transposed: a again
    assert not src.flags["C_CONTIGUOUS"] if hasattr(src, "flags") else True
    np.testing.assert_allclose(gk.linalg.inv(src).to_numpy(), np.linalg.inv(a), rtol=1e-9)
    spd = positive_definite(rng, n, 10.0, "float64")
    t = gk.asarray(spd.T.copy()).T
    np.testing.assert_allclose(
        gk.linalg.cholesky(t).to_numpy(), np.linalg.cholesky(spd), rtol=1e-10, atol=1e-12
    )
    w = gk.linalg.eigvalsh(src.mT @ src).to_numpy()
    np.testing.assert_allclose(w, np.linalg.eigvalsh(np.swapaxes(a, -1, -2) @ a), rtol=1e-9)


def test_empty_stacks(backend):
    assert gk.linalg.inv(gk.zeros((0, 3, 3))).shape == (0, 3, 3)
    np.testing.assert_array_equal(gk.linalg.det(gk.zeros((2, 0, 0))).to_numpy(), [1.0, 1.0])
    q, r = gk.linalg.qr(gk.zeros((2, 3, 0)), mode="complete")
    np.testing.assert_array_equal(q.to_numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
    assert r.shape == (2, 3, 0)
    u, s, vh = gk.linalg.svd(gk.zeros((0, 4)))
    assert (u.shape, s.shape) == ((0, 0), (0,))
    np.testing.assert_array_equal(vh.to_numpy(), np.eye(4))


def test_bad_inputs(backend):
    for fn in (gk.linalg.cholesky, gk.linalg.inv, gk.linalg.det, gk.linalg.eigh):
        with pytest.raises(gk.LinAlgError, match="at least two-dimensional"):
            fn(gk.ones(3))
        with pytest.raises(gk.LinAlgError, match="square"):
            fn(gk.ones((2, 3)))
        with pytest.raises(TypeError, match="float16"):
            fn(gk.ones((2, 2), dtype="float16"))
    with pytest.raises(ValueError, match="does not fit"):
        gk.linalg.solve(gk.eye(3), gk.ones((4, 1)))
    with pytest.raises(ValueError, match="mode"):
        gk.linalg.qr(gk.eye(3), mode="raw")
    with pytest.raises(ValueError, match="UPLO"):
        gk.linalg.eigh(gk.eye(3), UPLO="X")


@pytest.mark.parametrize("dtype", REAL + COMPLEX)
def test_blocked_cholesky_driver(backend, rng, dtype):
    """The blocked algorithm that backends with small kernels only take for larger matrices,
    run with small blocks on every backend (upper and lower, a batch, garbage in the triangle
    not read)."""
    if not runs(backend, "cholesky", dtype, 999):
        pytest.skip(f"no {backend} kernels for {dtype}")
    from gpukit.decompositions import _blocked_cholesky

    for n, nb in ((97, 64), (131, 16), (40, 7)):
        a = positive_definite(rng, n, 1e3, dtype, batch=(2,))
        poisoned = a.copy()
        poisoned[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] = np.nan
        l_ = _blocked_cholesky(_dev(poisoned), nb).to_numpy()
        assert np.all(np.triu(l_, 1) == 0)
        r = l_.astype(np.complex128) @ hT(l_.astype(np.complex128)) - a
        assert scaled_residual(r, a, dtype, n) < BOUND, (n, nb)


def test_cuda_refuses_what_it_has_no_kernels_for(backend):
    if backend == "cpu":
        pytest.skip("the cpu backend has every factorization")
    for dt in ("complex64", "complex128"):
        for fn in (gk.linalg.inv, gk.linalg.qr, gk.linalg.eigh, gk.linalg.svd):
            with pytest.raises(NotImplementedError, match=dt):
                fn(_dev(np.eye(40, dtype=dt)))


@pytest.mark.parametrize("dtype", REAL)
def test_small_batches_on_the_one_block_path(backend, rng, dtype):
    """Many matrices per launch (one block each), every size of the small path."""
    for n in (1, 5, 32, 64):
        a = positive_definite(rng, n, 100.0, dtype, batch=(37,))
        l_ = gk.linalg.cholesky(_dev(a)).to_numpy()
        assert scaled_residual(l_ @ hT(l_) - a, a, dtype, n) < BOUND, n
        g = conditioned(rng, n, 100.0, dtype, batch=(37,))
        transposed = gk.asarray(np.swapaxes(g, -1, -2).copy()).mT  # a strided view of g
        x = gk.linalg.inv(transposed).to_numpy()
        xn = np.linalg.norm(x.astype(np.float64), 2, axis=(-2, -1))
        assert scaled_residual(g @ x - np.eye(n), g, dtype, n, times=np.max(xn)) < BOUND, n
