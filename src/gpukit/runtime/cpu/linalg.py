"""The CPU backend's factorizations, by NumPy (LAPACK) in the operands' own dtype. Each works on
a stack of matrices and reports failure per matrix in an int32 `info` (1: singular, not
positive definite or not converged), as the GPU kernels do; the front end raises."""

from __future__ import annotations

import numpy as np


def _each(fn, count: int, info) -> None:
    """fn(slice) over the whole stack at once; where NumPy finds a matrix failing, fn(i) for
    each matrix i of the stack, with info[i] = 1 for those that fail."""
    try:
        fn(slice(None))
        return
    except np.linalg.LinAlgError:
        pass
    for i in range(count):
        try:
            fn(i)
        except np.linalg.LinAlgError:
            info[i] = 1


def _stack(x: np.ndarray, tail: int) -> np.ndarray:
    """x viewed (or copied) as a stack: (matrices, *its last `tail` dims)."""
    head = x.shape[: x.ndim - tail]
    return x.reshape((int(np.prod(head, dtype=np.int64)), *x.shape[x.ndim - tail :]))


def cholesky(a, *outs, upper: bool, neg_inv_h: bool = False) -> None:
    """outs: (factor, -L^-H, info) with `neg_inv_h` (L the lower factor: what the blocked
    Cholesky multiplies its panel by), else (factor, info)."""
    out, info = outs[0], outs[-1]
    info[...] = 0
    a3, o3 = _stack(a, 2), _stack(out, 2)

    def one(i):
        o3[i] = np.nan
        o3[i] = np.linalg.cholesky(a3[i], upper=upper)

    _each(one, a3.shape[0], info)
    if neg_inv_h:
        lower = np.conj(np.swapaxes(out, -1, -2)) if upper else out
        outs[1][...] = -np.conj(np.swapaxes(np.linalg.inv(lower), -1, -2))


def solve(a, b, out, info) -> None:
    """a (..., n, n) and b (..., n, k), broadcast to out's batch by the front end."""
    info[...] = 0
    a3, b3, o3 = _stack(a, 2), _stack(b, 2), _stack(out, 2)

    def one(i):
        o3[i] = np.nan
        o3[i] = np.linalg.solve(a3[i], b3[i])

    _each(one, a3.shape[0], info)


def inv(a, out, info) -> None:
    info[...] = 0
    a3, o3 = _stack(a, 2), _stack(out, 2)

    def one(i):
        o3[i] = np.nan
        o3[i] = np.linalg.inv(a3[i])

    _each(one, a3.shape[0], info)


def det(a, out) -> None:
    out[...] = np.linalg.det(a)


def slogdet(a, sign, logabsdet) -> None:
    s, ld = np.linalg.slogdet(a)
    sign[...] = s
    logabsdet[...] = ld


def qr(a, *outs, mode: str) -> None:
    """outs: (q, r) for "reduced" and "complete", (r,) for "r"."""
    if mode == "r":
        outs[0][...] = np.linalg.qr(a, mode="r")
        return
    q, r = np.linalg.qr(a, mode=mode)
    outs[0][...] = q
    outs[1][...] = r


def eigh(a, *outs, upper: bool, vectors: bool) -> None:
    """outs: (w, v, info) with vectors, else (w, info)."""
    info = outs[-1]
    info[...] = 0
    a3 = _stack(a, 2)
    w2 = _stack(outs[0], 1)
    v3 = _stack(outs[1], 2) if vectors else None
    uplo = "U" if upper else "L"

    def one(i):
        w2[i] = np.nan
        if vectors:
            v3[i] = np.nan
            w2[i], v3[i] = np.linalg.eigh(a3[i], UPLO=uplo)
        else:
            w2[i] = np.linalg.eigvalsh(a3[i], UPLO=uplo)

    _each(one, a3.shape[0], info)


def svd(a, *outs, full: bool, vectors: bool) -> None:
    """outs: (u, s, vh, info) with vectors, else (s, info)."""
    info = outs[-1]
    info[...] = 0
    a3 = _stack(a, 2)
    if vectors:
        u3, s2, vh3 = _stack(outs[0], 2), _stack(outs[1], 1), _stack(outs[2], 2)
    else:
        s2 = _stack(outs[0], 1)

    def one(i):
        s2[i] = np.nan
        if vectors:
            u3[i] = vh3[i] = np.nan
            u3[i], s2[i], vh3[i] = np.linalg.svd(a3[i], full_matrices=full)
        else:
            s2[i] = np.linalg.svd(a3[i], compute_uv=False)

    _each(one, a3.shape[0], info)


OPS = {
    "cholesky": cholesky,
    "solve": solve,
    "inv": inv,
    "det": det,
    "slogdet": slogdet,
    "qr": qr,
    "eigh": eigh,
    "svd": svd,
}
