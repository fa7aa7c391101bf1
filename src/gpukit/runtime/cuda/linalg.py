"""Linear algebra on CUDA: stacks of float32 / float64 matrices, one block per matrix in
shared memory (kernels/linalg_small.cu): cholesky, and LU with partial pivoting for solve, inv,
det and slogdet, up to GK_LA_MAX_N rows; eigh by cyclic Jacobi up to GK_LA_JACOBI_N rows.
Larger matrices are factored in blocks over the GEMM: cholesky by one plan of all its steps
("cholesky_blocked", linalg_chol.py), the LU by the front end over the blocked LU's kernels
("lu_*" ops, linalg_lu.py, kernels/linalg_lu.cu; linalg_max_n("lu_panel") is its panel
width). qr is the front end's
blocked Householder QR over "qr_panel" (linalg_qr.py; linalg_max_n("qr_panel") is the panel
width); svd and larger eigh are the front end's one-sided Jacobi over "svj" (linalg_svj.py;
linalg_max_n("svj") is the longest row it takes, "svj_whole" the most rows one launch sweeps).
Complex dtypes have no CUDA kernels yet: those are refused with NotImplementedError naming what
is missing."""

from __future__ import annotations

import numpy as np

from ...base import shapes, strides
from .. import kernels
from ..args import CONSTANTS
from . import linalg_chol, linalg_lu, linalg_qr, linalg_svj
from .plans import PlanBuilder

_C = CONSTANTS
_MODES = {
    "solve": _C["GK_LA_SOLVE"],
    "inv": _C["GK_LA_INV"],
    "det": _C["GK_LA_DET"],
    "slogdet": _C["GK_LA_SLOGDET"],
}
_REAL = (np.dtype("float32"), np.dtype("float64"))
_ANY_N = 2**31 - 1  # linalg_max_n of an op with no limit of its own


def _refuse(backend, op: str, why: str):
    return NotImplementedError(
        f"linalg.{op} is not implemented on the {backend.name} backend {why} (gpukit's CUDA "
        f"kernels cover cholesky, solve, inv, det, slogdet, qr, eigh and svd of float32/float64 "
        f"matrices); the cpu backend computes it"
    )


def _max_n(op: str, dtype) -> int:
    if np.dtype(dtype) not in _REAL:
        return 0
    if op == "qr_panel":
        return _C["GK_QR_NB"]
    if op == "lu_panel":
        return _C["GK_LU_NB"]
    if op == "lu_solve":  # right-hand sides, not rows
        return _C["GK_LU_RHS"]
    if op == "eigh":
        return _C["GK_LA_JACOBI_N"]
    return _C["GK_LA_MAX_N"] if op == "cholesky" or op in _MODES else 0


def linalg_max_n(backend, op: str, dtype) -> int:
    """The largest n the kernels factor (0: no kernel for op and dtype); for "svj", the longest
    rows the one-sided Jacobi takes."""
    if np.dtype(dtype) in _REAL and op == "svj":
        return linalg_svj.max_len(backend, np.dtype(dtype))
    if np.dtype(dtype) in _REAL and op == "svj_whole":
        return linalg_svj.whole_rows(backend, np.dtype(dtype))
    if op == "cholesky_blocked":
        return _ANY_N if linalg_chol.supported(backend, dtype) else 0
    return _max_n(op, dtype)


def _matrix_strides(a, n: int) -> dict:
    """ld and stride (elements) of stack a: contiguous, or one axis of matrices whose rows are
    (the blocked Cholesky's diagonal blocks, views into its trailing matrix)."""
    if shapes.is_contiguous(a.shape, a.strides, a.dtype.itemsize):
        return {"ld": n, "stride": n * n}
    if a.ndim != 3 or (n > 1 and a.strides[-1] != a.dtype.itemsize):
        raise ValueError(f"cholesky: a stack of shape {a.shape} and strides {a.strides}")
    ld, stride = strides.matrix_strides(a)
    return {"ld": ld, "stride": stride}


def plan_linalg(backend, op: str, inputs, outputs, options):
    """gpukit.runtime.backend.Backend.plan_linalg on CUDA (see the module's docstring)."""
    if op in linalg_lu.OPS:
        return linalg_lu.plan_lu(backend, op, inputs, outputs, options)
    a = inputs[0]
    if a.dtype not in _REAL:
        raise _refuse(backend, op, f"for {a.dtype} yet")
    if op == "qr_panel":
        return linalg_qr.plan_panel(backend, inputs, outputs, options)
    if op == "cholesky_blocked":
        return linalg_chol.plan_blocked(backend, a, outputs, **dict(options))
    if op == "svj":
        return linalg_svj.plan_svj(backend, inputs, outputs, options)
    if op != "cholesky" and op != "eigh" and op not in _MODES:
        raise _refuse(backend, op, "yet")
    n = a.shape[-1]
    if n > _max_n(op, a.dtype):
        raise _refuse(backend, op, f"for {n} x {n} matrices yet")
    count = a.size // (n * n)
    b = PlanBuilder(
        backend, "a" * len(inputs), outputs=[o.size * o.dtype.itemsize for o in outputs]
    )
    file, defines = kernels.linalg_small(a.dtype)
    fields = {"n": n, "k": 0, "mode": 0, "upper": 0, "ld": n, "stride": n * n}
    addresses = [("a", 0, 0, 1), ("out", b.output(0), 0, 1)]
    if op == "cholesky":
        name = "gk_chol_small"
        opts = dict(options)
        inverse = _C["GK_LA_CHOL_INVERSE"] if opts.get("neg_inv_h", False) else 0
        fields.update(upper=int(opts["upper"]), mode=inverse, out_ld=n, out_stride=n * n)
        fields.update(_matrix_strides(a, n))
        if inverse:
            addresses.append(("out2", b.output(1), 0, 1))
        addresses.append(("info", b.output(len(outputs) - 1), 0, 1))
    elif op == "eigh":
        name = "gk_eigh_jacobi"
        opts = dict(options)
        fields.update(upper=int(opts["upper"]), mode=int(opts["vectors"]))
        if opts["vectors"]:
            addresses.append(("out2", b.output(1), 0, 1))
        addresses.append(("info", b.output(len(outputs) - 1), 0, 1))
    else:
        name = "gk_lu_small"
        fields["mode"] = _MODES[op]
        if op == "solve":
            fields["k"] = inputs[1].shape[-1]
            addresses.append(("b", 1, 0, 1))
        elif op == "inv":
            fields["k"] = n
        if op in ("solve", "inv"):
            addresses.append(("info", b.output(1), 0, 1))
        if op == "slogdet":
            addresses.append(("out2", b.output(1), 0, 1))
    fn = backend.function(file, defines, name)
    threads = linalg_chol.leaf_threads(n) if op == "cholesky" else _C["GK_LA_THREADS"]
    b.launch(fn, count, threads, "gk_linalg_args", fields, addresses=addresses)
    return b.build()
