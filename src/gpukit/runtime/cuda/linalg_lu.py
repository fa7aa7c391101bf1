"""The blocked LU's kernels on CUDA (kernels/linalg_lu.cu), the steps between the products that
decompositions._blocked_lu runs through matmul: "lu_panel" factors the first nb columns of a
stack of trailing matrices in place (one thread-block cluster per matrix on sm_90+, else one
cooperative launch, then the panel's interchanges on the columns after it, where the device
allows; else a launch per column) and, given an output, copies the factored panel there
(contiguous), "lu_trinv" inverts a panel's diagonal block, "lu_swap" applies a panel's row
interchanges to right-hand sides in place, "lu_det" multiplies U's diagonal, "lu_solve"
substitutes at most GK_LU_RHS right-hand sides in place through every panel in one plan. Options:
k (the trailing matrices' first row in the whole matrix), n (the whole matrix's order), nb (the
panel's width), cooperative (lu_panel: False keeps the launch per column), cluster (False: no
cluster kernel), regs (False: the cluster kernel that holds the rows in shared memory, not
registers), upper (lu_trinv), mode (lu_det), widths (lu_solve: every panel's)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...base import strides
from .. import kernels
from ..args import CONSTANTS
from .elementwise import emit_copy
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
        b.launch(fn, count, _C["GK_LU_NB"], "gk_lu_args", fields, addresses=addresses)
        return b.build()
    if op == "lu_swap":  # inputs: rows k.. of the right-hand sides (m x r), piv
        fields["r"] = x.shape[-1]
        addresses = [("a", 0, 0, 1), ("piv", 1, 0, 1)]
        for first, cnt in _chunks(count):
            grid = (-(-fields["r"] // _C["GK_LU_SWAP_COLS"]), cnt)
            b.launch(fn, grid, threads, "gk_lu_args", {**fields, "mat0": first},
                     addresses=addresses)  # fmt: skip
        return b.build()
    # lu_panel: inputs T (count x m x m), piv, diag, info, counter (zeros: every launch leaves
    # it zero); outputs: none, or the factored panel's copy (count x m x nb, contiguous)
    coop = None
    if opts.get("cooperative", True) and opts.get("cluster", True):
        coop = _cluster(backend, file, defines, x.dtype, fields["m"], count,
                        regs=opts.get("regs", True))  # fmt: skip
    if coop is None and opts.get("cooperative", True):
        coop = _cooperative(backend, file, defines, x.dtype, fields["m"], count)
    in_kernel = bool(outputs) and coop is not None and coop[4] == "regs"  # it writes the copy
    if coop is not None:
        swap = backend.function(file, defines, "gk_lu_swap")
        _plan_panel_coop(b, coop, swap, fields, count, x.dtype.itemsize, in_kernel)
    else:
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
    if outputs and not in_kernel:  # T's first nb columns copied to the output
        emit_copy(b, replace(x, shape=outputs[0].shape), 0, outputs[0], b.output(0))
    return b.build()


def _cooperative(backend, file, defines, dtype, m: int, count: int):
    """(the cooperative panel kernel, blocks per matrix, rows per block, dynamic shared bytes)
    where the panel takes one cooperative launch: the backend launches cooperatively, every
    block's rows fit in its shared memory and all count x blocks blocks are resident at once;
    else None (the launch per column). Blocks of at least GK_LU_COOP_MIN_ROWS rows, at most one
    per SM and matrix (fewer blocks: a cheaper grid barrier)."""
    if not getattr(backend, "cooperative_launch", False) or count > _GRID_Y:
        return None
    fn = backend.function(file, defines, "gk_lu_panel_coop")
    blocks = max(1, min(-(-m // _C["GK_LU_COOP_MIN_ROWS"]), backend.sm_count // count))
    rows = -(-m // blocks)
    blocks = -(-m // rows)
    shared = (rows * (_C["GK_LU_NB"] + 1) + _C["GK_LU_COOP_SPARE"]) * np.dtype(dtype).itemsize
    if shared > backend.device.max_shared_per_block_optin:
        return None
    backend.allow_shared(fn, shared)
    if blocks * count > backend.cooperative_blocks(fn, _C["GK_LU_THREADS"], shared):
        return None
    return fn, blocks, rows, shared, "cooperative", _C["GK_LU_THREADS"]


def _cluster(backend, file, defines, dtype, m: int, count: int, regs: bool = True):
    """(kernel, GK_LU_CLUSTER blocks per matrix, rows per block, dynamic shared bytes, kind,
    threads per block) where the panel takes one thread-block cluster per matrix: an sm_90+
    device (compute capability 9+) and at least one cluster resident at once
    (cuOccupancyMaxActiveClusters, after allowing the non-portable size of 16); else None (the
    cooperative launch or the launch per column). Kind "regs", gk_lu_panel_regs (a row in each
    thread's registers), where the rows fit one a thread and `regs`; else "cluster",
    gk_lu_panel_cluster, where they fit the blocks' shared memory. Clusters need not be resident
    together: a stack of any size takes one launch (grid.y up to 65535)."""
    device = getattr(backend, "device", None)
    query = getattr(device, "max_active_clusters", None)
    if query is None or count > _GRID_Y or tuple(device.compute_capability) < (9, 0):
        return None
    blocks, ld, itemsize = _C["GK_LU_CLUSTER"], _C["GK_LU_NB"] + 1, np.dtype(dtype).itemsize
    rows = -(-m // blocks)
    most = _C["GK_LU_REGS_THREADS_F32" if itemsize == 4 else "GK_LU_REGS_THREADS_F64"]
    if regs and rows <= most:
        kind, rows = "regs", max(256, -(-rows // 32) * 32)
        threads, shared = rows, (rows * (ld + 1) + _C["GK_LU_REGS_SPARE"]) * itemsize
    else:
        kind, threads = "cluster", _C["GK_LU_THREADS"]
        shared = (rows * ld + _C["GK_LU_CLUSTER_SPARE"]) * itemsize
    if shared > device.max_shared_per_block_optin:
        return None
    fn = backend.function(file, defines, "gk_lu_panel_" + kind)
    backend.allow_shared(fn, shared)
    if query(fn, blocks, threads, shared) < 1:
        return None
    return fn, blocks, rows, shared, kind, threads


def _plan_panel_coop(b, coop, swap, fields, count: int, itemsize: int, copy: bool) -> None:
    """gk_lu_panel_coop (or a cluster kernel) over the panel, then gk_lu_swap over T's
    columns nb.. (the panel's interchanges; none where the panel is all of T). `copy`: the
    register kernel also writes the panel to the plan's output (args.out)."""
    coop_fn, blocks, rows, shared, kind, threads = coop
    if kind != "cooperative":  # a plain launch: the kernel's compile-time cluster dimensions
        addresses = [("a", 0, 0, 1), ("piv", 1, 0, 1), ("diag", 2, 0, 1), ("info", 3, 0, 1)]
        if copy:
            addresses.append(("out", b.output(0), 0, 1))
        b.launch(coop_fn, (blocks, count), threads, "gk_lu_args", {**fields, "r": rows},
                 shared=shared, addresses=addresses)  # fmt: skip
    else:
        slots = b.add_scratch(count * 2 * (blocks + 1) * (_C["GK_LU_NB"] + 1) * itemsize)
        words = b.add_scratch(count * (2 * blocks + 2) * 4)
        addresses = [("a", 0, 0, 1), ("piv", 1, 0, 1), ("diag", 2, 0, 1), ("info", 3, 0, 1),
                     ("counter", 4, 0, 1), ("out", slots, 0, 1), ("out2", words, 0, 1)]  # fmt: skip
        b.launch(coop_fn, (blocks, count), _C["GK_LU_THREADS"], "gk_lu_args",
                 {**fields, "r": rows}, shared=shared, addresses=addresses,
                 cooperative=True)  # fmt: skip
    width = fields["m"] - fields["nb"]
    if width <= 0:
        return
    grid = (-(-width // _C["GK_LU_SWAP_COLS"]), count)
    b.launch(swap, grid, _C["GK_LU_THREADS"], "gk_lu_args", {**fields, "r": width},
             addresses=[("a", 0, fields["nb"] * itemsize, 1), ("piv", 1, 0, 1)])  # fmt: skip


def _plan_solve(backend, file, defines, inputs, opts):
    """Inputs: X (count x n x r, contiguous, solved in place), piv, then per panel its L11\\U11
    over L21, -inv(L11) and (but the last) -U12, as _blocked_lu leaves them; options: n and
    the panels' widths. Forward panel by panel (interchanges and inv(L11) in one launch, the
    rows below in a second), then backward (-U12 times the rows below in partial sums over
    column chunks, then a launch per panel adding them to its rows and substituting with U11);
    each row of a factor is read by one warp."""
    x = inputs[0]
    count, n, r = x.shape
    widths = opts["widths"]
    b = PlanBuilder(backend, "a" * len(inputs))
    names = ("gk_lu_fwd_diag", "gk_lu_fwd_update", "gk_lu_bwd_sums", "gk_lu_bwd")
    fns = {k: backend.function(file, defines, k) for k in names}
    threads, chunk_cols = _C["GK_LU_THREADS"], _C["GK_LU_BWD_COLS"]
    warps = threads // _C["GK_LANES"]
    most = -(-(n - widths[0]) // chunk_cols) * max(widths) * r * min(count, _GRID_Y)
    work = b.add_scratch(max(most, 1) * x.dtype.itemsize)
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
            if n - k > w:  # a warp a row
                grid = (-(-(n - k - w) // warps), cnt)
                b.launch(fns["gk_lu_fwd_update"], grid, threads, "gk_lu_args", g,
                         addresses=[("a", 0, 0, 1), ("out", panel, 0, 1)])  # fmt: skip
    for k, w, panel, neg_u12 in reversed(steps):
        chunks = -(-(n - k - w) // chunk_cols)
        f = {**base, "k": k, "nb": w, "m": n - k, "col": chunks}
        for first, cnt in _chunks(count):
            g = {**f, "mat0": first}
            if chunks:
                sums = [("a", 0, 0, 1), ("out", neg_u12, 0, 1), ("work", work, 0, 1)]
                grid = (chunks * -(-w // warps), cnt)  # a warp a row of -U12, per chunk
                b.launch(fns["gk_lu_bwd_sums"], grid, threads, "gk_lu_args", g,
                         addresses=sums)  # fmt: skip
            rows = [("a", 0, 0, 1), ("out2", panel, 0, 1), ("work", work, 0, 1)]
            b.launch(fns["gk_lu_bwd"], cnt, threads, "gk_lu_args", g, addresses=rows)
    return b.build()
