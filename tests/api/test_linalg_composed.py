"""gpukit.linalg's functions composed from the factorizations and reductions (lstsq, pinv,
matrix_rank, matrix_power, the norms) and the Array API helpers (cross, outer, trace,
diagonal, vecdot, tensordot, matrix_transpose) against NumPy in float64, and the namespace."""

import math

import numpy as np
import pytest
from conftest import assert_matches
from linalg_cases import conditioned, eps, with_singular_values
from test_linalg_factorizations import factorizations

import gpukit as gk


def _dev(x):
    return gk.asarray(np.ascontiguousarray(x))


def test_lstsq_overdetermined_and_rank_deficient(backend, rng):
    factorizations(backend)
    a = conditioned(rng, 7, 100.0, "float64", m=19)
    b = rng.standard_normal((19, 3))
    x, res, rank, s = gk.linalg.lstsq(_dev(a), _dev(b))
    rx, rres, rrank, rs = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x.to_numpy(), rx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.to_numpy(), rres, rtol=1e-9)
    assert rank == rrank == 7
    np.testing.assert_allclose(s.to_numpy(), rs, rtol=1e-12)
    # 1-D b, and a matrix of rank 3 by construction: no residuals, the minimum-norm solution
    s_true = np.array([3.0, 2.0, 1.0, 0, 0, 0])
    d = with_singular_values(rng, 9, 6, s_true, "float64")
    v = rng.standard_normal(9)
    x, res, rank, _ = gk.linalg.lstsq(_dev(d), _dev(v), rcond=1e-8)
    assert rank == 3 and res.shape == (0,) and x.shape == (6,)
    np.testing.assert_allclose(x.to_numpy(), np.linalg.pinv(d, rcond=1e-8) @ v, atol=1e-10)


def test_pinv_and_matrix_rank(backend, rng):
    factorizations(backend)
    s_true = np.array([5.0, 1.0, 0.5, 0.0, 0.0])
    a = with_singular_values(rng, 8, 5, s_true, "float64", batch=(2,))
    p = gk.linalg.pinv(_dev(a), rtol=1e-8).to_numpy()
    np.testing.assert_allclose(p, np.linalg.pinv(a, rtol=1e-8), atol=1e-10)
    # Moore-Penrose conditions
    np.testing.assert_allclose(a @ p @ a, a, atol=1e-10)
    np.testing.assert_allclose(p @ a @ p, p, atol=1e-10)
    full = conditioned(rng, 6, 10.0, "float32", m=9)
    np.testing.assert_allclose(
        gk.linalg.pinv(_dev(full)).to_numpy(), np.linalg.pinv(full.astype(np.float64)),
        rtol=1e-4, atol=1e-5,
    )  # fmt: skip
    ranks = gk.linalg.matrix_rank(_dev(a), tol=1e-6).to_numpy()
    np.testing.assert_array_equal(ranks, [3, 3])
    assert gk.linalg.matrix_rank(_dev(a), rtol=1e-6).to_numpy().tolist() == [3, 3]
    assert int(gk.linalg.matrix_rank(_dev(np.zeros(4)))) == 0
    assert int(gk.linalg.matrix_rank(_dev(np.ones(4)))) == 1


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(backend, rng, n):
    if n < 0:
        factorizations(backend, "inv")
    a = conditioned(rng, 6, 4.0, "float64", batch=(2,))
    got = gk.linalg.matrix_power(_dev(a), n)
    assert_matches(got, np.linalg.matrix_power(a, n), scale=1e3)
    ints = rng.integers(-3, 4, (5, 5))
    if n >= 0:
        got = gk.linalg.matrix_power(_dev(ints), n)
        np.testing.assert_array_equal(got.to_numpy(), np.linalg.matrix_power(ints, n))
    with pytest.raises(TypeError):
        gk.linalg.matrix_power(_dev(a), 1.5)


VECTOR_ORDS = [2, 1, 0, math.inf, -math.inf, 3, 0.5, -1]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norm(backend, rng, ord):
    x = rng.standard_normal((4, 5, 3))
    x[0, 0, 0] = 0.0  # a zero for ord=0 and negative orders to count or skip
    x[..., 1] += 3.0
    for axis in (None, -1, 0, (0, 2)):
        ref = np.linalg.vector_norm(x, ord=ord, axis=axis)
        got = gk.linalg.vector_norm(_dev(x), ord=ord, axis=axis)
        assert_matches(got, ref, scale=100)
    got = gk.linalg.vector_norm(_dev(x.astype(np.float32)), ord=ord, axis=1, keepdims=True)
    ref = np.linalg.vector_norm(x.astype(np.float32), ord=ord, axis=1, keepdims=True)
    assert_matches(got, ref.astype(np.float32), scale=100)


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf, "nuc", 2, -2])
def test_matrix_norm(backend, rng, ord):
    if ord in ("nuc", 2, -2):
        factorizations(backend)
    x = rng.standard_normal((3, 6, 4))
    ref = np.linalg.matrix_norm(x, ord=ord)
    assert_matches(gk.linalg.matrix_norm(_dev(x), ord=ord), ref, scale=100)
    got = gk.linalg.matrix_norm(_dev(x), ord=ord, keepdims=True)
    assert got.shape == (3, 1, 1)
    t = _dev(np.swapaxes(x, 0, 2).copy())
    ref = np.linalg.norm(np.swapaxes(x, 0, 2), ord=ord, axis=(2, 1), keepdims=True)
    assert_matches(gk.linalg.norm(t, ord=ord, axis=(2, 1), keepdims=True), ref, scale=100)


def test_norm_numpy_forms(backend, rng):
    x = rng.standard_normal((5, 4)) + 0.5
    assert_matches(gk.linalg.norm(_dev(x)), np.linalg.norm(x))
    assert_matches(gk.linalg.norm(_dev(x), axis=1), np.linalg.norm(x, axis=1))
    assert_matches(gk.linalg.norm(_dev(x), 1), np.linalg.norm(x, 1))
    assert_matches(gk.linalg.norm(_dev(x[0]), 3), np.linalg.norm(x[0], 3), scale=10)
    c = x + 1j * rng.standard_normal((5, 4))
    assert_matches(gk.linalg.norm(_dev(c), axis=0), np.linalg.norm(c, axis=0))  # real result
    assert_matches(gk.linalg.norm(_dev(np.arange(6).reshape(2, 3))), np.linalg.norm(
        np.arange(6.0)))  # fmt: skip
    with pytest.raises(ValueError):
        gk.linalg.norm(_dev(x), ord="fro", axis=0)
    with pytest.raises(ValueError):
        gk.linalg.matrix_norm(_dev(x), ord=3)
    with pytest.raises(ValueError):
        gk.linalg.norm(_dev(np.ones((2, 2, 2))), ord=1)


def test_array_api_helpers(backend, rng):
    a = rng.standard_normal((4, 3))
    b = rng.standard_normal((1, 3))
    assert_matches(gk.linalg.cross(_dev(a), _dev(b)), np.cross(a, b))
    at, bt = a.T.copy(), rng.standard_normal((3, 4))
    assert_matches(gk.linalg.cross(_dev(at), _dev(bt), axis=0), np.cross(at, bt, axis=0))
    with pytest.raises(ValueError):
        gk.linalg.cross(_dev(a[:, :2]), _dev(b[:, :2]))
    u, v = rng.standard_normal(5), rng.standard_normal(7)
    assert_matches(gk.linalg.outer(_dev(u), _dev(v)), np.outer(u, v))
    with pytest.raises(ValueError):
        gk.linalg.outer(_dev(a), _dev(v))
    m = rng.standard_normal((2, 5, 6))
    for k in (0, 2, -1):
        assert_matches(gk.linalg.diagonal(_dev(m), offset=k), np.diagonal(m, k, -2, -1))
        assert_matches(gk.linalg.trace(_dev(m), offset=k), np.trace(m, k, axis1=-2, axis2=-1))
    mi = rng.integers(-5, 5, (3, 4, 4)).astype(np.int32)
    assert_matches(gk.linalg.trace(_dev(mi), dtype="int64"), np.trace(mi, axis1=1, axis2=2))
    x1 = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    x2 = rng.standard_normal((4,)) + 1j * rng.standard_normal((4,))
    got = gk.linalg.vecdot(_dev(x1), _dev(x2))
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got.to_numpy(), np.vecdot(x1, x2), rtol=1e-12)
    assert_matches(gk.linalg.vecdot(_dev(a), _dev(a), axis=0), np.sum(a * a, axis=0))
    for vecdot in (gk.linalg.vecdot, gk.vecdot):  # the contracted axis is not broadcast
        with pytest.raises(ValueError, match="elements along axis"):
            vecdot(_dev(x1), _dev(x2[:1]))
    t = rng.standard_normal((3, 4, 5))
    assert_matches(gk.linalg.tensordot(_dev(t), _dev(t), axes=([1, 2], [1, 2])),
                   np.tensordot(t, t, axes=([1, 2], [1, 2])))  # fmt: skip
    assert_matches(gk.linalg.matrix_transpose(_dev(t)), np.swapaxes(t, -1, -2))
    assert_matches(gk.linalg.matmul(_dev(t), _dev(np.swapaxes(t, 1, 2))), t @ np.swapaxes(t, 1, 2))


ARRAY_API_LINALG = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]  # fmt: skip


def test_namespace_has_the_linalg_extension(backend):
    xp = gk.ones(2).__array_namespace__()
    for name in [*ARRAY_API_LINALG, "norm", "lstsq"]:
        assert callable(getattr(xp.linalg, name)), name
    assert issubclass(gk.LinAlgError, np.linalg.LinAlgError)
    assert eps("float64") == np.finfo(np.float64).eps
