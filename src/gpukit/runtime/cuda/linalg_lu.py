"""The blocked LU's kernels on CUDA (kernels/linalg_lu.cu), the steps between the products that
decompositions._blocked_lu runs through matmul: "lu_panel" factors the first nb columns of a
stack of trailing matrices in place (a launch per column), "lu_trinv" inverts a panel's diagonal
block, "lu_swap" applies a panel's row interchanges to right-hand sides in place, "lu_det"
multiplies U's diagonal, "lu_solve" substitutes at most GK_LU_RHS right-hand sides in place
through every panel in one plan. Options: k (the trailing matrices' first row in the whole
matrix), n (the whole matrix's order), nb (the panel's width), upper (lu_trinv), mode
(lu_det), widths (lu_solve: every panel's)."""

from __future__ import annotations

import numpy as np

from ...base import strides
from .. import kernels
from ..args import CONSTANTS
from .plans import PlanBuilder

_C = CONSTANTS
_GRID_Y = 65535
OPS = ("lu_panel", "lu_trinv", "lu_swap", "lu_det", "lu_solve")


def _chunks(count: int):
    """(first matrix, matrices) of launches whose grid.y counts the matrices."""
    for first in range(0, count, _GRID_Y):
        yield first, min(_GRID_Y, count - first)


def plan_lu(backend, op: str, inputs, outputs, options):
    opts = dict(options)
    x = inputs[0]
    file, defines = kernels.linalg_lu(x.dtype)
    if op == "lu_solve":
        return _plan_solve(backend, file, defines, inputs, opts)
    fn = backend.function(file, defines, op.replace("lu_", "gk_lu_"))
    b = PlanBuilder(
        backend, "a" * len(inputs), outputs=[o.size * o.dtype.itemsize for o in outputs]
    )
    threads = _C["GK_LU_THREADS"]
    fields = dict.fromkeys(("m", "r", "n", "k", "nb", "col", "mode", "mat0"), 0)
    fields.update(ld=0, stride=0)
    for name in ("n", "k", "nb"):
        fields[name] = int(opts.get(name, 0))
    if op == "lu_det":  # inputs: diag, piv (count x n)
        count = x.shape[0]
        fields.update(m=count, mode=_C["GK_LA_DET"] if opts["mode"] == "det" else
                      _C["GK_LA_SLOGDET"], n=x.shape[-1])  # fmt: skip
        addresses = [("diag", 0, 0, 1), ("piv", 1, 0, 1), ("out", b.output(0), 0, 1)]
        if len(outputs) > 1:
            addresses.append(("out2", b.output(1), 0, 1))
        b.launch(fn, -(-count // threads), threads, "gk_lu_args", fields, addresses=addresses)
        return b.build()
    ld, stride = strides.matrix_strides(x)
    fields.update(ld=ld, stride=stride, m=x.shape[-2])
    count = int(np.prod(x.shape[:-2], dtype=np.int64))
    if op == "lu_trinv":  # inputs: the panel (its top-left nb x nb block); output nb x nb each
        fields.update(mode=int(bool(opts["upper"])), nb=outputs[0].shape[-1])
        addresses = [("a", 0, 0, 1), ("out", b.output(0), 0, 1)]
        b.launch(fn, count, threads, "gk_lu_args", fields, addresses=addresses)
        return b.build()
    if op == "lu_swap":  # inputs: rows k.. of the right-hand sides (m x r), piv
        fields["r"] = x.shape[-1]
        addresses = [("a", 0, 0, 1), ("piv", 1, 0, 1)]
        for first, cnt in _chunks(count):
            grid = (-(-fields["r"] // _C["GK_LU_SWAP_COLS"]), cnt)
            b.launch(fn, grid, threads, "gk_lu_args", {**fields, "mat0": first},
                     addresses=addresses)  # fmt: skip
        return b.build()
    # lu_panel: inputs T (count x m x m), piv, diag, info, counter (zeros: the last block of
    # every launch sets it back to zero)
    blocks = -(-fields["m"] // _C["GK_LU_ROWS"])
    per_launch = min(count, _GRID_Y) * blocks
    best = b.add_scratch(per_launch * x.dtype.itemsize)
    rows = b.add_scratch(per_launch * 4)
    addresses = [("a", 0, 0, 1), ("piv", 1, 0, 1), ("diag", 2, 0, 1), ("info", 3, 0, 1),
                 ("counter", 4, 0, 1), ("out", best, 0, 1), ("out2", rows, 0, 1)]  # fmt: skip
    for col in range(fields["nb"] + 1):
        for first, cnt in _chunks(count):
            b.launch(fn, (blocks, cnt), threads, "gk_lu_args", {**fields, "col": col,
                     "mat0": first}, addresses=addresses)  # fmt: skip
    return b.build()


def _plan_solve(backend, file, defines, inputs, opts):
    """Inputs: X (count x n x r, contiguous, solved in place), piv, then per panel its L11\\U11
    over L21, -inv(L11) and (but the last) -U12, as _blocked_lu leaves them; options: n and
    the panels' widths. Forward panel by panel (interchanges and inv(L11) in one launch, the
    rows below in a second), then backward (inv(U11) into scratch, then the panel's rows)."""
    x = inputs[0]
    count, n, r = x.shape
    widths = opts["widths"]
    b = PlanBuilder(backend, "a" * len(inputs))
    fns = {k: backend.function(file, defines, k) for k in ("gk_lu_fwd_diag", "gk_lu_fwd_update",
                                                           "gk_lu_trinv", "gk_lu_bwd")}  # fmt: skip
    threads = _C["GK_LU_THREADS"]
    u_inv = b.add_scratch(count * max(widths) ** 2 * x.dtype.itemsize)
    base = dict.fromkeys(("col", "mode", "mat0"), 0)
    base.update(ld=r, stride=n * r, n=n, r=r)
    steps, k, at = [], 0, 2
    for i, w in enumerate(widths):
        last = i == len(widths) - 1
        steps.append((k, w, at, None if last else at + 2))
        k, at = k + w, at + (2 if last else 3)
    for k, w, panel, _ in steps:
        f = {**base, "k": k, "nb": w, "m": n - k}
        for first, cnt in _chunks(count):
            g = {**f, "mat0": first}
            b.launch(
                fns["gk_lu_fwd_diag"],
                cnt,
                threads,
                "gk_lu_args",
                g,
                addresses=[("a", 0, 0, 1), ("piv", 1, 0, 1), ("out", panel + 1, 0, 1)],
            )
            if n - k > w:
                grid = (-(-(n - k - w) * r // threads), cnt)
                b.launch(fns["gk_lu_fwd_update"], grid, threads, "gk_lu_args", g,
                         addresses=[("a", 0, 0, 1), ("out", panel, 0, 1)])  # fmt: skip
    for k, w, panel, neg_u12 in reversed(steps):
        f = {**base, "k": k, "nb": w, "m": n - k}
        for first, cnt in _chunks(count):
            g = {**f, "mat0": first}
            t = {**g, "ld": w, "stride": (n - k) * w, "mode": 1}
            b.launch(fns["gk_lu_trinv"], cnt, threads, "gk_lu_args", t,
                     addresses=[("a", panel, 0, 1), ("out", u_inv, 0, 1)])  # fmt: skip
            addresses = [("a", 0, 0, 1), ("out2", u_inv, 0, 1)]
            if neg_u12 is not None:
                addresses.append(("out", neg_u12, 0, 1))
            b.launch(fns["gk_lu_bwd"], cnt, threads, "gk_lu_args", g, addresses=addresses)
    return b.build()
