"""Factorizations and what is built on them (gpukit.linalg, NumPy's and the Array API's names):
cholesky, solve, inv, det, slogdet, qr, eigh, eigvalsh, svd, svdvals, and composed from those
lstsq, pinv, matrix_rank and matrix_power. Every one works on stacks of matrices (the last two
axes), in float32, float64, complex64 or complex128 (integers and bools as float64, as NumPy
does). The backend plans the factorizations (`plan_linalg`); a matrix it reports singular, not
positive definite or not converged raises gpukit.LinAlgError, as NumPy raises."""

from __future__ import annotations

import operator
from collections import namedtuple
from functools import partial

import numpy as np

from . import array_args as _args
from . import orthogonal as _orth
from . import reductions as _red
from .array import GPUArray
from .base import shapes as _shapes
from .creation import eye, ones_like, zeros_like
from .elementwise import absolute, greater, isfinite, negative, reciprocal, where
from .errors import LinAlgError
from .fused_products import product
from .linalg_steps import I32 as _I32
from .linalg_steps import check as _check
from .linalg_steps import count as _count
from .linalg_steps import mT as _mT
from .linalg_steps import run as _run
from .views import ascontiguousarray, broadcast_to, expand_dims

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])

_F64 = np.dtype("float64")
_U32 = np.dtype("uint32")
_SUPPORTED = tuple(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))


def compute_dtype(name: str, dtype: np.dtype) -> np.dtype:
    """The dtype `name` computes in: float32/64 and complex64/128 as they are, integers and
    bools as float64; float16 and bfloat16 are refused, as NumPy refuses float16."""
    if dtype.kind in "biu":
        return _F64
    if dtype in _SUPPORTED:
        return dtype
    raise TypeError(f"linalg.{name}: array type {dtype} is unsupported in linalg")


def real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in (np.float32, np.complex64) else _F64


def _stack(name: str, a, square: bool = True) -> GPUArray:
    """a as a contiguous stack of matrices in its compute dtype, its shape checked."""
    a = _args.array(a)
    if a.ndim < 2:
        raise LinAlgError(
            f"linalg.{name}: {a.ndim}-dimensional array given. Array must be at least "
            "two-dimensional"
        )
    if square and a.shape[-1] != a.shape[-2]:
        raise LinAlgError(
            f"linalg.{name}: last 2 dimensions of the array must be square, got {a.shape}"
        )
    return ascontiguousarray(a.astype(compute_dtype(name, a.dtype), copy=False))


def _empty(like: GPUArray, shape, dtype, identity: bool = False) -> GPUArray:
    """A result of a stack without elements: zeros, or identities where `identity`."""
    if identity and shape[-1] and _count(shape):
        i = eye(shape[-1], dtype=dtype)
        return ascontiguousarray(broadcast_to(i.to_device(like.device), shape))
    return zeros_like(like, dtype=dtype, shape=shape)


def _cholesky(a: GPUArray, upper: bool, neg_inv_h: bool = False, check: bool = True):
    """The backend's Cholesky of stack a (contiguous, or matrices of contiguous rows along one
    stack axis; raises LinAlgError where not PD); with `neg_inv_h`, (factor, -L^-H, L the lower
    factor). Without `check`, the info array comes last instead (read back by the caller)."""
    batch = a.shape[:-2]
    shapes = [(a.shape, a.dtype)] * (2 if neg_inv_h else 1) + [((_count(batch),), _I32)]
    options = (("upper", upper),) + ((("neg_inv_h", True),) if neg_inv_h else ())
    *made, info = _run("cholesky", [a], shapes, options)
    if not check:
        return (*made, info)
    _check(info, "Matrix is not positive definite")
    return tuple(made) if neg_inv_h else made[0]


def _inv(a: GPUArray) -> GPUArray:
    out, info = _run("inv", [a], [(a.shape, a.dtype), ((_count(a.shape[:-2]),), _I32)])
    _check(info, "Singular matrix")
    return out


def _blocked_cholesky(a: GPUArray, nb: int) -> GPUArray:
    """Right-looking blocked Cholesky (lower) for a backend that factors at most nb x nb at a
    time: each diagonal block by the backend (with -L11^-H, the negated conjugate transpose of
    its factor's inverse), -L21 = A21 (-L11^-H) (MAGMA's trsm by inverted diagonal blocks), the
    next trailing matrix A22 - L21 L21^H one product with the subtraction in its epilogue (its
    lower triangle only: the tiles above it are skipped where the backend can, and whatever
    is left above it is never read). Only the lower triangle of `a` is read.
    A step after a failed one works on NaN (the kernel's output there); the infos are read
    back once, at the end."""
    *batch, n, _ = a.shape
    t = a.reshape(_count(batch), n, n)  # read, never written: each step makes the next one
    out = zeros_like(t)
    failed = None  # the steps' infos summed: one read back at the end, no wait per step
    for k in range(0, n, nb):
        w = min(nb, n - k)
        l11, neg_inv_h, info = _cholesky(t[:, :w, :w], False, True, False)
        failed = info if failed is None else failed + info
        out[:, k : k + w, k : k + w] = l11
        if k + w == n:
            break
        neg_l21 = t[:, w:, :w] @ neg_inv_h
        l21 = negative(neg_l21, out=out[:, k + w :, k : k + w])
        t = product(neg_l21, _mT(l21), residual=t[:, w:, w:], lower=True)
    _check(failed, "Matrix is not positive definite")
    return out.reshape(a.shape)


def _planned_cholesky(a: GPUArray) -> GPUArray:
    """The lower factor of contiguous stack a by the backend's plan of every step of a blocked
    Cholesky ("cholesky_blocked"; CUDA: runtime/cuda/linalg_chol.py)."""
    *batch, n, _ = a.shape
    count = _count(batch)
    shapes = [((count, n, n), a.dtype), ((count,), _I32)]
    out, info = _run("cholesky_blocked", [a.reshape(count, n, n)], shapes)
    _check(info, "Matrix is not positive definite")
    return out.reshape(a.shape)


# A blocked LU: per panel (its L11\\U11 over L21, count x rows x width), -inv(L11) and -U12
# (None for the last panel); the pivots (the row swapped with row i at step i), U's diagonal and
# an int32 per matrix set when a pivot was exactly zero.
_LU = namedtuple("_LU", ["steps", "piv", "diag", "info"])


def _lu_nb(a: GPUArray) -> int:
    """The blocked LU's panel width for stack a on its backend; 0 where the backend factors a
    in one piece (or refuses it)."""
    small = a._rt.linalg_max_n("solve", a.dtype)
    if small is None or a.shape[-1] <= small:
        return 0
    return a._rt.linalg_max_n("lu_panel", a.dtype) or 0


def _blocked_lu(a: GPUArray, nb: int, keep: bool = True) -> _LU:
    """Right-looking blocked LU with partial pivoting of contiguous stack a (LAPACK getrf's
    structure): per panel of nb columns, the backend's panel kernel (each pivot the first row of
    largest magnitude down the whole column, the two rows swapped across the trailing matrix),
    -inv(L11) by the backend, -U12 = -inv(L11) A12 and the next trailing matrix
    A22 - L21 U12 = L21 (-U12) + A22 as products (the addition in the product's epilogue). L
    stays in elimination order: later interchanges are applied to right-hand sides as they pass
    each panel (_lu_solve), not to the panels factored before. Without `keep` (det, slogdet)
    the panels are not kept (steps stay empty)."""
    *batch, n, _ = a.shape
    count = _count(batch)
    t = a.reshape(count, n, n).copy()
    piv = zeros_like(t, _I32, (count, n))
    diag = zeros_like(t, shape=(count, n))
    info = zeros_like(t, _I32, (count,))
    counter = zeros_like(t, _U32, (count,))
    steps = []
    for k in range(0, n, nb):
        w = min(nb, n - k)
        copy = [((count, n - k, w), t.dtype)] if keep else []  # the panel, contiguous
        got = _run("lu_panel", [t, piv, diag, info, counter], copy, (("k", k), ("n", n), ("nb", w)))
        panel = got[0] if keep else None
        (neg_linv,) = _run("lu_trinv", [t], [((count, w, w), t.dtype)], (("upper", False),))
        if k + w == n:
            steps += [(panel, neg_linv, None)] if keep else []
            break
        neg_u12 = neg_linv @ t[:, :w, w:]
        t = product(t[:, w:, :w], neg_u12, residual=t[:, w:, w:])
        steps += [(panel, neg_linv, neg_u12)] if keep else []
    return _LU(steps, piv, diag, info)


def _lu_solve(lu: _LU, b: GPUArray) -> GPUArray:
    """X with A X = b (b: count x n x r, contiguous) from A's blocked LU. A few columns: the
    backend's substitution kernels in one plan; more: forward substitution panel by panel
    (the panel's interchanges on the rows still to come, y = inv(L11) b1, the rows below less
    L21 y as a product), then back substitution (x1 = inv(U11) (y - U12 x2))."""
    count, n, r = b.shape
    if r <= (b._rt.linalg_max_n("lu_solve", b.dtype) or 0):  # few: the backend's substitution
        x = b.copy()
        inputs = [x, lu.piv]
        for step in lu.steps:
            inputs += [s for s in step if s is not None]
        widths = tuple(step[1].shape[-1] for step in lu.steps)
        _run("lu_solve", inputs, [], (("n", n), ("widths", widths)))
        return x
    rest, ys, k = b.copy(), [], 0
    for panel, neg_linv, neg_u12 in lu.steps:
        w = neg_linv.shape[-1]
        _run("lu_swap", [rest, lu.piv], [], (("k", k), ("n", n), ("nb", w)))
        neg_y = neg_linv @ rest[:, :w]
        ys.append(negative(neg_y))
        if neg_u12 is not None:
            rest = product(panel[:, w:], neg_y, residual=rest[:, w:])
        k += w
    x = zeros_like(b)
    e = n
    for (panel, _, neg_u12), y in reversed(list(zip(lu.steps, ys, strict=True))):
        w = y.shape[-2]
        (u_inv,) = _run("lu_trinv", [panel], [((count, w, w), b.dtype)], (("upper", True),))
        if neg_u12 is not None:
            y = product(neg_u12, x[:, e:], residual=y)
        x[:, e - w : e] = u_inv @ y
        e -= w
    return x


def cholesky(x, /, *, upper: bool = False) -> GPUArray:
    """The Cholesky factor of each Hermitian positive-definite matrix: lower L with A = L L^H
    (or upper U with A = U^H U); only the lower (upper) triangle of A is read. Matrices larger
    than the backend factors at once are factored in blocks (by the backend's plan where it has
    one, else _blocked_cholesky)."""
    a = _stack("cholesky", x)
    if a.size == 0:
        return _empty(a, a.shape, a.dtype)
    n, upper = a.shape[-1], bool(upper)
    nb = a._rt.linalg_max_n("cholesky", a.dtype)
    if nb is None or n <= nb or nb == 0:
        return _cholesky(a, upper)
    planned = a._rt.linalg_max_n("cholesky_blocked", a.dtype)
    lower = _planned_cholesky if planned else partial(_blocked_cholesky, nb=nb)
    if upper:  # U = (lower factor of A^H, whose lower triangle is A's upper)^H
        return ascontiguousarray(_mT(lower(ascontiguousarray(_mT(a)))))
    return lower(a)


def solve(a, b) -> GPUArray:
    """x with a @ x = b for each square a (LU with partial pivoting); b of shape (n,) is one
    vector for every matrix, otherwise (..., n, k) with batch dimensions broadcast (NumPy 2)."""
    a, b = _args.arrays(a, b)
    dtype = compute_dtype("solve", np.result_type(a.dtype, b.dtype))
    a = _stack("solve", a.astype(dtype, copy=False))
    n = a.shape[-1]
    vector = b.ndim == 1
    if b.ndim == 0 or (b.shape[0] if vector else b.shape[-2]) != n:
        raise ValueError(
            f"linalg.solve: b of shape {b.shape} does not fit a of shape {a.shape} "
            f"(expected (..., {n}, K) or ({n},))"
        )
    bm = b.reshape(n, 1) if vector else b
    batch = _shapes.broadcast(a.shape[:-2], bm.shape[:-2])
    k = bm.shape[-1]
    a = ascontiguousarray(broadcast_to(a, (*batch, n, n)))
    bm = ascontiguousarray(broadcast_to(bm.astype(dtype, copy=False), (*batch, n, k)))
    shape = (*batch, n, k)
    nb = _lu_nb(a)
    if a.size == 0 or bm.size == 0:
        x = _empty(a, shape, dtype)
    elif nb:
        count = _count(batch)
        lu = _blocked_lu(a, nb)
        _check(lu.info, "Singular matrix")
        x = _lu_solve(lu, bm.reshape(count, n, k)).reshape(shape)
    else:
        x, info = _run("solve", [a, bm], [(shape, dtype), ((_count(batch),), _I32)])
        _check(info, "Singular matrix")
    return x.reshape(*batch, n) if vector else x


def inv(x, /) -> GPUArray:
    """The inverse of each square matrix (LU with partial pivoting)."""
    a = _stack("inv", x)
    if a.size == 0:
        return _empty(a, a.shape, a.dtype)
    nb = _lu_nb(a)
    if not nb:
        return _inv(a)
    *batch, n, _ = a.shape
    lu = _blocked_lu(a, nb)
    _check(lu.info, "Singular matrix")
    i = ascontiguousarray(
        broadcast_to(eye(n, dtype=a.dtype).to_device(a.device), (_count(batch), n, n))
    )
    return _lu_solve(lu, i).reshape(a.shape)


def det(x, /) -> GPUArray:
    """The determinant of each square matrix (0 for a singular one, as NumPy gives)."""
    a = _stack("det", x)
    batch = a.shape[:-2]
    if a.size == 0:
        return ones_like(a, shape=batch) if _count(batch) else zeros_like(a, shape=batch)
    nb = _lu_nb(a)
    if nb:
        lu = _blocked_lu(a, nb, keep=False)
        return _run("lu_det", [lu.diag, lu.piv], [(batch, a.dtype)], (("mode", "det"),))[0]
    return _run("det", [a], [(batch, a.dtype)])[0]


def slogdet(x, /) -> SlogdetResult:
    """(sign, log|det|) of each square matrix: sign 0 and log|det| -inf for a singular one;
    sign has the matrix's dtype (a unit complex number for complex ones)."""
    a = _stack("slogdet", x)
    batch = a.shape[:-2]
    real = real_dtype(a.dtype)
    if a.size == 0:
        if not _count(batch):
            return SlogdetResult(zeros_like(a, shape=batch), zeros_like(a, real, batch))
        return SlogdetResult(ones_like(a, shape=batch), zeros_like(a, real, batch))
    if nb := _lu_nb(a):
        lu = _blocked_lu(a, nb, keep=False)
        sign, logabs = _run(
            "lu_det", [lu.diag, lu.piv], [(batch, a.dtype), (batch, real)], (("mode", "slogdet"),)
        )
    else:
        sign, logabs = _run("slogdet", [a], [(batch, a.dtype), (batch, real)])
    return SlogdetResult(sign, logabs)


_QR_MODES = ("reduced", "complete", "r")


def qr(x, /, mode: str = "reduced"):
    """Q R = A by Householder reflections: "reduced" Q (..., m, k), R (..., k, n) with
    k = min(m, n); "complete" Q (..., m, m), R (..., m, n); "r" R alone."""
    if mode not in _QR_MODES:
        raise ValueError(f"linalg.qr: mode must be one of {', '.join(_QR_MODES)}, not {mode!r}")
    a = _stack("qr", x, square=False)
    *batch, m, n = a.shape
    k = min(m, n)
    rows = m if mode == "complete" else k
    shapes = [] if mode == "r" else [(*batch, m, rows)]
    shapes.append((*batch, rows, n))
    if a.size == 0:
        made = [_empty(a, s, a.dtype, identity=(i == 0 and mode == "complete")) for i, s in
                enumerate(shapes)]  # fmt: skip
    elif nb := a._rt.linalg_max_n("qr_panel", a.dtype):
        made = _orth.blocked_qr(a, mode, nb)
    else:
        made = _run("qr", [a], [(s, a.dtype) for s in shapes], (("mode", mode),))
    return made[0] if mode == "r" else QRResult(*made)


def _uplo(name: str, UPLO: str) -> bool:
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.{name}: UPLO must be 'L' or 'U', not {UPLO!r}")
    return UPLO == "U"


def _eigh(name: str, x, UPLO: str, vectors: bool) -> list[GPUArray]:
    upper = _uplo(name, UPLO)
    a = _stack(name, x)
    *batch, n, _ = a.shape
    real = real_dtype(a.dtype)
    shapes = [((*batch, n), real)] + ([(a.shape, a.dtype)] if vectors else [])
    if a.size == 0:
        return [_empty(a, s, dt) for s, dt in shapes]
    small = a._rt.linalg_max_n("eigh", a.dtype)
    if small is not None and n > small and a._rt.linalg_max_n("svj", a.dtype):
        return _orth.jacobi_eigh(a, upper, vectors)
    *made, info = _run(
        "eigh", [a], [*shapes, ((_count(batch),), _I32)],
        (("upper", upper), ("vectors", vectors)),
    )  # fmt: skip
    _check(info, "Eigenvalues did not converge")
    # LAPACK's divide and conquer (NumPy's eigh past 25 rows) returns NaN for NaN input where
    # its other drivers raise: NaN eigenvalues raise on every path.
    if not bool(_red.all(isfinite(made[0])).to_numpy()):
        raise LinAlgError("Eigenvalues did not converge")
    return made


def eigh(x, /, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors (columns) of each Hermitian matrix; only
    the lower (UPLO="L") or upper triangle is read. A NaN read raises LinAlgError (NumPy's
    eigvalsh does; its eigh does below 26 rows)."""
    return EighResult(*_eigh("eigh", x, UPLO, True))


def eigvalsh(x, /, UPLO: str = "L") -> GPUArray:
    """The eigenvalues (ascending, real) of each Hermitian matrix."""
    return _eigh("eigvalsh", x, UPLO, False)[0]


def _svd(name: str, x, full: bool, vectors: bool) -> list[GPUArray]:
    a = _stack(name, x, square=False)
    *batch, m, n = a.shape
    k = min(m, n)
    real = real_dtype(a.dtype)
    s_shape = ((*batch, k), real)
    if vectors:
        u_cols, vh_rows = (m, n) if full else (k, k)
        shapes = [((*batch, m, u_cols), a.dtype), s_shape, ((*batch, vh_rows, n), a.dtype)]
    else:
        shapes = [s_shape]
    if a.size == 0:
        return [_empty(a, s, dt, identity=full and i != 1) for i, (s, dt) in enumerate(shapes)]
    if a._rt.linalg_max_n("svj", a.dtype):
        return _orth.jacobi_svd(a, full, vectors)
    *made, info = _run(
        "svd", [a], [*shapes, ((_count(batch),), _I32)], (("full", full), ("vectors", vectors))
    )
    _check(info, "SVD did not converge")
    return made


def svd(x, /, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """U, S, Vh with A = U diag(S) Vh, S descending; `full_matrices`: U (..., m, m) and
    Vh (..., n, n), else (..., m, k) and (..., k, n). Without `compute_uv`, S alone.
    `hermitian` is accepted for NumPy's signature; the general method serves."""
    if not compute_uv:
        return _svd("svd", x, bool(full_matrices), False)[0]
    return SVDResult(*_svd("svd", x, bool(full_matrices), True))


def svdvals(x, /) -> GPUArray:
    """The singular values of each matrix, descending."""
    return _svd("svdvals", x, False, False)[0]


def _inverse_values(s: GPUArray, cutoff) -> GPUArray:
    """1/s where s > cutoff, else 0 (singular values below the cutoff are dropped)."""
    keep = greater(s, cutoff)
    return where(keep, reciprocal(where(keep, s, 1)), 0).astype(s.dtype, copy=False)


def _default_rtol(m: int, n: int, dtype: np.dtype) -> float:
    return max(m, n) * float(np.finfo(real_dtype(dtype)).eps)


def pinv(a, rcond=None, hermitian: bool = False, *, rtol=None) -> GPUArray:
    """The Moore-Penrose pseudo-inverse of each matrix, by the SVD: singular values at most
    rtol (or NumPy's rcond) times the largest count as zero. Default: max(m, n) * eps (the
    Array API's), or 1e-15 when `rcond` is passed as None explicitly with hermitian, as NumPy."""
    x = _stack("pinv", a, square=False)
    *batch, m, n = x.shape
    if rcond is not None and rtol is not None:
        raise ValueError("linalg.pinv: give rcond or rtol, not both")
    tol = rtol if rtol is not None else rcond
    if tol is None:
        tol = _default_rtol(m, n, x.dtype)
    if x.size == 0:
        return zeros_like(x, shape=(*batch, n, m))
    u, s, vh = _svd("pinv", x, False, True)
    cutoff = _red.max(s, axis=-1, keepdims=True) * _args.array(tol).astype(s.dtype)[..., None]
    s_inv = _inverse_values(s, cutoff)
    return _mT(vh) @ (expand_dims(s_inv, -1).astype(x.dtype, copy=False) * _mT(u))


def matrix_rank(A, tol=None, hermitian: bool = False, *, rtol=None) -> GPUArray:
    """How many singular values of each matrix exceed `tol` (absolute) or rtol times the
    largest (default max(m, n) * eps); 1-D and 0-D inputs: 1 unless all zero."""
    x = _args.array(A)
    if x.ndim < 2:
        return _red.any(x != 0).astype(np.int64)
    s = svdvals(x)
    m, n = x.shape[-2:]
    if tol is not None:
        cutoff = expand_dims(_args.array(tol).astype(s.dtype), -1)
    else:
        r = rtol if rtol is not None else _default_rtol(m, n, s.dtype)
        r = expand_dims(_args.array(r).astype(s.dtype), -1)
        cutoff = _red.max(s, axis=-1, keepdims=True) * r if s.shape[-1] else r
    return _red.sum(greater(s, cutoff).astype(np.int64), axis=-1)


def lstsq(a, b, rcond=None):
    """NumPy's lstsq: (x, residuals, rank, s) minimizing ||b - a x||_2 for a 2-D a and b of
    shape (m,) or (m, k), by the SVD; singular values at most rcond times the largest
    (default eps * max(m, n)) are taken as zero. residuals: the squared 2-norms of b - a x per
    column when a has full column rank and m > n, else empty; rank a Python int."""
    a, b = _args.arrays(a, b)
    if a.ndim != 2:
        raise LinAlgError(f"linalg.lstsq: a must be two-dimensional, got shape {a.shape}")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise LinAlgError(
            f"linalg.lstsq: b of shape {b.shape} does not fit a of shape {a.shape} "
            f"(expected ({a.shape[0]},) or ({a.shape[0]}, K))"
        )
    dtype = compute_dtype("lstsq", np.result_type(a.dtype, b.dtype))
    x = _stack("lstsq", a.astype(dtype, copy=False), square=False)
    m, n = x.shape
    bm = b.reshape(m, 1) if b.ndim == 1 else b
    bm = bm.astype(dtype, copy=False)
    k = bm.shape[1]
    real = real_dtype(dtype)
    if rcond is None:
        rcond = float(np.finfo(real).eps) * max(m, n)
    if x.size == 0:
        sol = zeros_like(x, shape=(n, k))
        s = zeros_like(x, real, (0,))
        rank = 0
    else:
        u, s, vh = _svd("lstsq", x, False, True)
        cutoff = _red.max(s) * rcond
        s_inv = _inverse_values(s, cutoff)
        rank = int(_red.sum(greater(s, cutoff).astype(np.int64)).to_numpy())
        coeffs = expand_dims(s_inv, -1).astype(dtype, copy=False) * (_mT(u) @ bm)
        sol = _mT(vh) @ coeffs
    if rank == n and m > n:
        r = absolute(bm - x @ sol)
        residuals = _red.sum(r * r, axis=0).astype(real, copy=False)
    else:
        residuals = zeros_like(x, real, (0,))
    return (sol.reshape(n) if b.ndim == 1 else sol), residuals, rank, s


def matrix_power(a, n) -> GPUArray:
    """a raised to the integer power n by repeated squaring (n < 0: of inv(a); n = 0: the
    identity in a's dtype)."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("linalg.matrix_power: exponent must be an integer") from None
    x = _args.array(a)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise LinAlgError(
            f"linalg.matrix_power: needs a stack of square matrices, got shape {x.shape}"
        )
    if n == 0:
        i = eye(x.shape[-1], dtype=x.dtype).to_device(x.device)
        return ascontiguousarray(broadcast_to(i, x.shape))
    if n < 0:
        x, n = inv(x), -n
    result = None
    square = x
    while True:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if not n:
            break
        square = square @ square
    return result if result is not x else ascontiguousarray(x.copy())


__all__ = [
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "lstsq",
    "matrix_power",
    "matrix_rank",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
]
