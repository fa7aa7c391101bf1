"""Matrices for the linalg tests, built from chosen singular values or eigenvalues so that the
property a test relies on (conditioning, definiteness, rank, singularity) holds for every
seed, and the residual measures that scale them by n * eps * ||A||."""

from __future__ import annotations

import numpy as np

REAL = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
# Every size of the small path (n <= 64) and the first past it, checked in one test each.
SMALL_SIZES = list(range(1, 66))
# Odd sizes past the small path: panels with a remainder.
LARGE_SIZES = [97, 131, 200]


def eps(dtype) -> float:
    return float(np.finfo(np.dtype(dtype)).eps)


def _gauss(rng, shape, dtype):
    dtype = np.dtype(dtype)
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x


def unitary(rng, n: int, dtype, batch=()) -> np.ndarray:
    """Haar-like random unitary (orthogonal) matrices, in complex128 / float64."""
    q, r = np.linalg.qr(_gauss(rng, (*batch, n, n), dtype))
    d = np.diagonal(r, axis1=-2, axis2=-1)
    phase = np.where(np.abs(d) > 0, d / np.where(np.abs(d) > 0, np.abs(d), 1), 1)
    return q * phase[..., None, :]


def with_singular_values(rng, m: int, n: int, s, dtype, batch=()) -> np.ndarray:
    """U diag(s) V^H with random unitary U, V, in `dtype`; s has min(m, n) entries."""
    u = unitary(rng, m, dtype, batch)[..., :, : len(s)]
    v = unitary(rng, n, dtype, batch)[..., :, : len(s)]
    a = (u * np.asarray(s)) @ np.conj(np.swapaxes(v, -1, -2))
    return a.astype(dtype)


def conditioned(rng, n: int, cond: float, dtype, batch=(), m=None) -> np.ndarray:
    """An m x n (default square) matrix with singular values from 1 down to 1/cond."""
    m = n if m is None else m
    k = min(m, n)
    s = np.logspace(0, -np.log10(cond), k) if k > 1 else np.ones(1)
    return with_singular_values(rng, m, n, s, dtype, batch)


def hermitian(rng, n: int, eigenvalues, dtype, batch=()) -> np.ndarray:
    """Q diag(eigenvalues) Q^H, exactly Hermitian in `dtype`."""
    q = unitary(rng, n, dtype, batch)
    a = (q * np.asarray(eigenvalues)) @ np.conj(np.swapaxes(q, -1, -2))
    a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    return a.astype(dtype)


def positive_definite(rng, n: int, cond: float, dtype, batch=()) -> np.ndarray:
    lam = np.logspace(0, -np.log10(cond), n) if n > 1 else np.ones(1)
    return hermitian(rng, n, lam, dtype, batch)


def norm2(x) -> np.ndarray:
    """Spectral norm of each matrix of a stack (float64)."""
    x = np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)
    return np.linalg.norm(x, 2, axis=(-2, -1))


def scaled_residual(r, a, dtype, n: int, *, times=1.0) -> float:
    """max over the stack of ||r|| / (n * eps * ||a|| * times): about 1 for a backward-stable
    result."""
    return float(np.max(norm2(r) / (max(n, 1) * eps(dtype) * np.maximum(norm2(a), 1e-300) * times)))


def hT(x):
    return np.conj(np.swapaxes(x, -1, -2))
