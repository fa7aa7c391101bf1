"""The blocked Cholesky (lower) of a contiguous stack of n x n matrices past gk_chol_small's
GK_LA_MAX_N rows, all of it one plan: no Python between its steps. The trailing matrix T lives
in scratch negated (T = -A), so that every product adds. Per panel of PANEL columns, per
diagonal block of GK_LA_MAX_N columns in it (left-looking within the panel):

    T[k:, k:k+w] += L[k:, k0:k] L[k:k+w, k0:k]^T   (the panel's earlier columns; none first)
    L11, -L11^-T = gk_chol_small(-T11)             (L11 into the result, info merged)
    L21 = T21 (-L11^-T)                            (into the result, below L11)

then once per panel T22 += L21 L21^T with the panel's L21 (its lower triangle, in place): T22
is read and written once per panel, at K = PANEL. With lookahead, the next panel's columns of
T22 are updated first and the rest on the plan's second lane, alongside the next panel's
factorization, which is otherwise one SM's chain of small launches. The products are the
exact float32 GEMM or the float64 tensor-core GEMM, reading and writing rows of stride n inside
the plan's buffers (MAGMA's trsm by inverted diagonal blocks). The result starts zeroed: its
upper triangle is never written."""

from __future__ import annotations

import numpy as np

from .. import kernels
from ..args import CONSTANTS
from ..backend import Layout
from . import gemm, gemm_plan
from .elementwise import emit, emit_fill_zero
from .plans import PlanBuilder

_C = CONSTANTS
PANEL = 256  # columns per trailing update (plan_blocked)


def supported(backend, dtype) -> bool:
    """Whether the plan's products have kernels that take rows inside its buffers."""
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return True
    return dtype == np.float64 and backend.device.compute_capability >= (8, 0)


def leaf_threads(n: int) -> int:
    """gk_chol_small's block: warp 0 alone up to GK_LANES rows (one warp a block: its registers,
    sized for the 32 + 32 case, then limit no stack's occupancy), warps 0 to 2 past that."""
    return _C["GK_LANES"] if n <= _C["GK_LANES"] else _C["GK_LA_THREADS"]


def plan_blocked(backend, a: Layout, outputs, panel: int = PANEL, lookahead: bool = True) -> object:
    """Args: a. Returns (L, info): info[i] = 1 where matrix i is not positive definite (its L is
    then NaN from the failed block on). `panel`: columns per trailing update (a multiple of
    GK_LA_MAX_N): within a panel each diagonal block's columns are first brought up to date
    by the panel's earlier columns (left-looking), so that T22 is read and written once per
    panel, not once per diagonal block. `lookahead`: the trailing update past the next panel
    runs on a second lane, alongside the next panel's factorization (which needs only its own
    columns updated first)."""
    dtype, n = a.dtype, a.shape[-1]
    count = a.size // (n * n)
    item, nb = dtype.itemsize, _C["GK_LA_MAX_N"]
    if panel < nb or panel % nb:
        raise ValueError(f"cholesky: panel {panel} is not a positive multiple of {nb}")
    factor = outputs[0]
    b = PlanBuilder(backend, "a", outputs=[factor.size * item, count * 4])
    out, flags = b.output(0), b.output(1)
    t = b.add_scratch(a.size * item)
    inv = b.add_scratch(count * nb * nb * item)
    emit_fill_zero(b, factor, out)
    emit(b, "negative", dtype, [(a, 0)], (factor, t))  # (factor: T's layout too)
    file, defines = kernels.linalg_small(dtype)
    leaf = backend.function(file, defines, "gk_chol_small")

    def at(row: int, col: int) -> int:
        return (row * n + col) * item

    batch = (count,) if count > 1 else ()

    def product(m, cols, k, a_at, b_at, b_strides, out_at, args, lower=False):
        """out (m x cols at out_at, rows of stride n) = a (m x k at a_at, rows of stride n) @ b
        (+ the residual, at out_at too, where args has one); b_strides: b's (k, column, matrix)
        element strides."""
        p = gemm_plan.Problem(
            dtype=dtype.name,
            m=m,
            n=cols,
            k=k,
            bshape=batch,
            sa=(n, 1),
            sb=b_strides[:2],
            so=(n, 1),
            ba=(n * n,) if batch else (),
            bb=b_strides[2:] if batch else (),
            bo=(n * n,) if batch else (),
            aligned=(a_at % 16 == 0, b_at % 16 == 0, out_at % 16 == 0),
        )
        args = args._replace(at=(a_at, b_at, out_at, out_at))
        epi = gemm.Epilogue(0, None, (n, n * n) if args.residual is not None else None)
        emit_product = gemm.emit_f32 if dtype == np.float32 else gemm.emit_f64
        emit_product(b, p, args, epi, None, lower)

    update = gemm.Args(out, out, t, None, t)  # T += L L^T
    rows_t = (1, n, n * n)  # L's rows read as columns: L^T
    solve = gemm.Args(t, inv, out, None, None)  # L21 = T21 (-L11^-T)
    inverse = (nb, 1, nb * nb)
    in_place = {"ld": n, "stride": n * n, "out_ld": n, "out_stride": n * n}  # the leaf's blocks
    for k0 in range(0, n, panel):
        end = min(k0 + panel, n)
        for k in range(k0, end, nb):
            w = min(nb, end - k)
            rest = n - k - w
            if k > k0:
                product(n - k, w, k - k0, at(k, k0), at(k, k0), rows_t, at(k, k), update)
            mode = _C["GK_LA_CHOL_NEGATED"] | (_C["GK_LA_CHOL_INVERSE"] if rest else 0)
            mode |= _C["GK_LA_CHOL_MERGE_INFO"] if k else 0
            fields = {"n": w, "mode": mode, **in_place}
            addresses = [("a", t, at(k, k), 1), ("out", out, at(k, k), 1), ("info", flags, 0, 1)]
            if rest:
                addresses.append(("out2", inv, 0, 1))
            b.launch(leaf, count, leaf_threads(w), "gk_linalg_args", fields, addresses=addresses)
            if rest:  # (then w = nb: a panel's blocks but the matrix's last are whole)
                product(rest, w, w, at(k + w, k), 0, inverse, at(k + w, k), solve)
        if end < n:
            below, k = at(end, k0), end - k0
            if not lookahead:
                product(n - end, n - end, k, below, below, rows_t, at(end, end), update, True)
                continue
            # The next panel's columns first, on lane 0 (after the rest's update of the panel
            # before, which wrote them too); the rest on lane 1, alongside the next panel.
            nxt = min(end + panel, n)
            with b.lane(0, wait=True):
                product(n - end, nxt - end, k, below, below, rows_t, at(end, end), update, True)
            if nxt < n:
                with b.lane(1):
                    rest_at = at(nxt, k0)
                    product(n - nxt, n - nxt, k, rest_at, rest_at, rows_t, at(nxt, nxt), update,
                            True)  # fmt: skip
    return b.build()
