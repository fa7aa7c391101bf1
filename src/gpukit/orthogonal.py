"""The orthogonal factorizations that a backend with panel kernels only (CUDA) computes through
the front end: blocked Householder QR (LAPACK geqrf / orgqr's structure over the backend's
"qr_panel", the rest products) and the singular value and symmetric eigenvalue decompositions
by one-sided Jacobi (the backend's "svj" sweeps; sorting, scaling and Rayleigh quotients by
gpukit's ops). Inputs: contiguous stacks of real matrices with elements."""

from __future__ import annotations

import numpy as np

from . import reductions as _red
from .array import GPUArray
from .creation import empty_like, eye, zeros_like
from .elementwise import absolute, greater, isfinite, less, sqrt, where
from .errors import LinAlgError
from .fused_products import product
from .linalg_steps import I32, count, mT, run
from .matrices import diagonal, tril, triu
from .searching import take_along_axis
from .sorting import argsort
from .views import ascontiguousarray, broadcast_to


def _identity(like: GPUArray, batch: int, n: int, cols: int | None = None) -> GPUArray:
    """A fresh, writable stack of identities (n x cols)."""
    i = eye(n, cols, dtype=like.dtype).to_device(like.device)
    return broadcast_to(i, (batch, n, n if cols is None else cols)).copy()


# Panels merged into one block of reflectors for the trailing update and Q: its products then
# run at GEMM speed (K and the tiles' rows a multiple of the panel's width) rather than at the
# panel's 32 columns, and there are a quarter as many.
_PANELS_PER_BLOCK = 4


def blocked_qr(a: GPUArray, mode: str, nb: int) -> list[GPUArray]:
    """Q, R (or [R] for mode "r") of stack a by blocks of Householder reflectors (LAPACK geqrf /
    orgqr's structure): each block of up to _PANELS_PER_BLOCK panels of nb columns is factored
    by _factor_block into reflectors V and -T with H_1 ... H_w = I - V T V^T; the trailing
    matrix becomes C - V (T^T (V^T C)) through three products (the subtraction in the last
    one's epilogue), whose first rows are R's; Q is accumulated backwards, the last block's
    reflectors first, on the identity (orgqr's order: each step only touches the block below
    and right of its own)."""
    *batch, m, n = a.shape
    c, k = count(batch), min(m, n)
    rows = m if mode == "complete" else k
    cur = a.reshape(c, m, n)
    r = zeros_like(cur, shape=(c, rows, n))
    steps = []
    for j in range(0, k, nb * _PANELS_PER_BLOCK):
        w = min(nb * _PANELS_PER_BLOCK, k - j)
        v, neg_t = _factor_block(cur[:, :, :w], r[:, j:, j:], nb)
        if j + w < n:
            rest = _reflect(v, neg_t, cur[:, :, w:], transposed=True)
            r[:, j : j + w, j + w :] = rest[:, :w]
            cur = rest[:, w:]
        steps.append((j, v, neg_t))
    if mode == "r":
        return [r.reshape(*batch, rows, n)]
    q = _identity(cur, c, m, rows)
    for j, v, neg_t in reversed(steps):
        q[:, j:, j:] = _reflect(v, neg_t, q[:, j:, j:], transposed=False)
    return [q.reshape(*batch, m, rows), r.reshape(*batch, rows, n)]


def _factor_block(block: GPUArray, r: GPUArray, nb: int) -> tuple[GPUArray, GPUArray]:
    """V (count x L x w) and -T (count x w x w) of a block's w columns (count x L x w), its R
    written into r's first w rows and columns: the backend factors each panel of nb columns,
    whose reflectors update the block's columns right of it; the panels' (V_i, -T_i) merge as
    -T = [[-T_a, (-T_a) S_ai (-T_i)], [0, -T_i]], S = V^T V (V_i is zero above its panel's
    row)."""
    c, rows, w = block.shape
    if w <= nb:
        v, r11, neg_t = _panel(block)
        r[:, :w, :w] = r11
        return v, neg_t
    v = zeros_like(block, shape=(c, rows, w))
    neg_t = zeros_like(block, shape=(c, w, w))
    cur = block
    for i in range(0, w, nb):
        wi = min(nb, w - i)
        vi, r11, ti = _panel(cur[:, :, :wi])
        r[:, i : i + wi, i : i + wi] = r11
        if i + wi < w:
            rest = _reflect(vi, ti, cur[:, :, wi:], transposed=True)
            r[:, i : i + wi, i + wi : w] = rest[:, :wi]
            cur = rest[:, wi:]
        v[:, i:, i : i + wi] = vi
        neg_t[:, i : i + wi, i : i + wi] = ti
    s = mT(v) @ v
    for i in range(nb, w, nb):
        wi = min(nb, w - i)
        ti = neg_t[:, i : i + wi, i : i + wi]
        neg_t[:, :i, i : i + wi] = neg_t[:, :i, :i] @ (s[:, :i, i : i + wi] @ ti)
    return v, neg_t


def _panel(x: GPUArray) -> list[GPUArray]:
    """The backend's factors of a stack of panels (count x L x w): V, R11 and -T."""
    c, rows, w = x.shape
    dt = x.dtype
    return run("qr_panel", [x], [((c, rows, w), dt), ((c, w, w), dt), ((c, w, w), dt)])


def _reflect(v: GPUArray, neg_t: GPUArray, c: GPUArray, transposed: bool) -> GPUArray:
    """H^T c (`transposed`) or H c, H = I - V T V^T given V and -T: c + V (-T)^T (V^T c) or
    c + V (-T) (V^T c), three products (the addition in the last one's epilogue)."""
    t = mT(neg_t) if transposed else neg_t
    return product(v, t @ (mT(v) @ c), residual=c)


def _qr_nb(a: GPUArray) -> int:
    return a._rt.linalg_max_n("qr_panel", a.dtype) or 0


def _complete(u: GPUArray, cols: int) -> GPUArray:
    """cols orthonormal columns (count x L x cols) whose first ones are u's (count x L x k,
    orthonormal but for zero columns, which come last): Householder QR's Q of u, each column
    times the sign of R's diagonal entry (R = diag(+-1) on u's orthonormal columns; the zero
    columns' reflectors are the identity, their Q columns the complement)."""
    q, r = blocked_qr(u, "complete", _qr_nb(u))
    k = u.shape[-1]
    d = ascontiguousarray(diagonal(r[:, :k, :k], 0, -2, -1))
    sign = where(less(d, 0), -1, 1).astype(u.dtype, copy=False)
    q[:, :, :k] = q[:, :, :k] * sign[:, None, :]
    return q[:, :, :cols]


# Past one launch's 64 rows, sweeps without pivoting converge slowly on graded spectra: in
# notes/svj_sweeps_model.py a float64 512 x 512 matrix of singular values 1 to 1e-6 (random
# singular vectors) takes 30 sweeps, about 3 more each time n doubles (64 rows: 19).
_BLOCKED_SWEEPS = 60


def _largest(x: GPUArray) -> GPUArray:
    """The largest magnitude of each matrix of stack x (count), 1 for a zero matrix (NaN stays
    NaN, and the front end raises)."""
    big = _red.max(absolute(x), axis=(-2, -1))
    return where(greater(big, 0), big, 1)


def _sweeps(x: GPUArray) -> tuple[bool, GPUArray, GPUArray, GPUArray, GPUArray]:
    """Rotates the rows of x (count x k x len, in place) until they are orthogonal. Returns
    whether every matrix converged (within GK_LA_SWEEPS sweeps in one launch, _BLOCKED_SWEEPS
    over blocks of rows), the factor (count) each matrix was divided by first (its largest
    magnitude, so that the squared norms neither overflow nor underflow), and with the rows in
    descending order of their norms: the norms (count x k), the rows divided by them (zero rows
    stay zero) and the rotations (count x k x k: the same rotations applied to the identity).
    Rows of norm at most eps ||x||_F are set to zero: the rows of zero singular values, which
    rotations only cancel to noise again."""
    c, k, _ = x.shape
    big = _largest(x)
    x[...] = x / big[:, None, None]
    fro = sqrt(_red.sum(x * x, axis=(-2, -1)))
    negligible = (fro * float(np.finfo(x.dtype).eps)).astype(x.dtype, copy=False)
    if k <= (x._rt.linalg_max_n("svj_whole", x.dtype) or 0):
        r = empty_like(x, shape=(c, k, k))
        info, norms = run("svj", [x, r, negligible], [((c,), I32), ((c, k), x.dtype)],
                          (("whole", True),))  # fmt: skip
        return not info.to_numpy().any(), big, norms, x, r
    r = _identity(x, c, k)
    converged = False
    for _ in range(_BLOCKED_SWEEPS):
        flag = zeros_like(x, I32, (c,))
        run("svj", [x, r, negligible, flag], [], (("whole", False),))
        if not flag.to_numpy().any():
            converged = True
            break
    norms = sqrt(_red.sum(x * x, axis=-1))
    order = argsort(norms, axis=-1, descending=True)
    norms = take_along_axis(norms, order, axis=-1)
    rows = take_along_axis(x, order[:, :, None], axis=-2)
    positive = greater(norms, 0)[:, :, None]
    units = where(positive, rows / where(positive, norms[:, :, None], 1), 0)
    units = units.astype(x.dtype, copy=False)
    return converged, big, norms, units, take_along_axis(r, order[:, :, None], axis=-2)


def jacobi_svd(a: GPUArray, full: bool, vectors: bool) -> list[GPUArray]:
    """[U, S, Vh] (or [S]) of stack a: the min(m, n) columns (m >= n) or rows of a made
    orthogonal by one-sided Jacobi; their norms are S (sorted descending), the normalized ones
    U's columns (Vh's rows), the accumulated rotations Vh (U). Long rows (over twice as many
    elements as there are rows, and over what one launch sweeps whole) are first shortened by a
    QR: the SVD of R (LAPACK gesvj's preconditioning; it also keeps the rows within what the
    kernel holds). Zero singular values and full_matrices take orthonormal complements."""
    *batch, m, n = a.shape
    c, k, length = count(batch), min(m, n), max(m, n)
    tall = m >= n
    a3 = a.reshape(c, m, n)
    longest = a._rt.linalg_max_n("svj", a.dtype)
    if k > longest:
        raise NotImplementedError(
            f"linalg.svd of matrices of more than {longest} rows and columns on the "
            f"{a._rt.name} backend (one-sided Jacobi holds a pair of rows in shared memory)"
        )
    if length > min(max(2 * k, a._rt.linalg_max_n("svj_whole", a.dtype)), longest):
        # Scaled first, as the sweeps are: the QR's column norms must not underflow either.
        big = _largest(a3)
        scaled = (a3 if tall else mT(a3)) / big[:, None, None]
        q, rk = blocked_qr(scaled, "reduced", _qr_nb(a))
        made = jacobi_svd(rk, False, vectors)
        if not vectors:
            return [(made[0] * big[:, None]).reshape(*batch, k)]
        u, s, vh = made
        s = s * big[:, None]
        left = q @ u  # A (or A^T) = Q U S Vh
        u, vh = (left, vh) if tall else (mT(vh), mT(left))
        return _full(u, s, vh, full, tall, batch)
    x = (mT(a3) if tall else a3).copy()  # rotated in place: never the caller's memory
    converged, scale, sig, left, vecs = _sweeps(x)
    s = sig * scale[:, None]
    if not converged or not bool(_red.all(isfinite(s)).to_numpy()):
        raise LinAlgError("SVD did not converge")
    if not vectors:
        return [s.reshape(*batch, k)]
    u, vh = (mT(left), vecs) if tall else (mT(vecs), left)
    return _full(u, s, vh, full, tall, batch)


def _full(u, s, vh, full: bool, tall: bool, batch) -> list[GPUArray]:
    """U, S, Vh reshaped to the batch, the Jacobi side completed where asked or where a zero
    singular value left a zero column."""
    m, k, n = u.shape[-2], u.shape[-1], vh.shape[-1]
    zero = not bool(_red.all(greater(s, 0)).to_numpy())
    if tall and (zero or (full and m > k)):
        u = _complete(ascontiguousarray(u), m if full else k)
    if not tall and (zero or (full and n > k)):
        vh = mT(_complete(ascontiguousarray(mT(vh)), n if full else k))
    out = [ascontiguousarray(u), s, ascontiguousarray(vh)]
    return [out[0].reshape(*batch, *out[0].shape[1:]), s.reshape(*batch, k),
            out[2].reshape(*batch, *out[2].shape[1:])]  # fmt: skip


def jacobi_eigh(a: GPUArray, upper: bool, vectors: bool) -> list[GPUArray]:
    """[w] or [w, V] of stack a (one triangle read): one-sided Jacobi on the rows of
    B = A + ||A||_F I (positive semidefinite, so that its singular vectors are A's eigenvectors),
    the eigenvalues the Rayleigh quotients of A (ascending), the eigenvectors the accumulated
    rotations' rows (the quotients divide by their squared norms, which the rotations' rounding
    moves off 1 by about as much as their orthogonality)."""
    *batch, n, _ = a.shape
    c = count(batch)
    a3 = a.reshape(c, n, n)
    sym = triu(a3) + mT(triu(a3, 1)) if upper else tril(a3) + mT(tril(a3, -1))
    shift = sqrt(_red.sum(sym * sym, axis=(-2, -1)))
    x = ascontiguousarray(sym + shift[:, None, None] * _identity(a3, 1, n))
    converged, _, _, _, r = _sweeps(x)
    v = mT(r)
    lam = _red.sum(v * (sym @ v), axis=-2) / _red.sum(v * v, axis=-2)
    order = argsort(lam, axis=-1)
    w = take_along_axis(lam, order, axis=-1)
    if not converged or not bool(_red.all(isfinite(w)).to_numpy()):
        raise LinAlgError("Eigenvalues did not converge")
    if not vectors:
        return [w.reshape(*batch, n)]
    v = ascontiguousarray(take_along_axis(v, order[:, None, :], axis=-1))
    return [w.reshape(*batch, n), v.reshape(*batch, n, n)]
