"""gpukit.nn plans on CUDA: kernels/nn_rows.cu, nn_gather.cu (attention: attention.py)."""

from __future__ import annotations

import math

import numpy as np

from ...base import shapes, strides
from .. import kernels
from ..args import CONSTANTS
from ..backend import Layout
from . import rows_geometry
from .elementwise import emit_fill_zero
from .plans import PlanBuilder

_C = CONSTANTS
_BLOCK, _LANES = _C["GK_BLOCK"], _C["GK_LANES"]
_I32 = np.dtype(np.int32)


def _grid(backend, blocks: int) -> int:
    return min(max(blocks, 1), backend.sm_count * 32)


def _row_layout(src: Layout, axis: int, residual: Layout | None):
    """(n, steps, row_shape, row strides) of rows along `axis`: steps along the row and strides
    of the rows for the input, the output (contiguous in src's shape) and the residual (src's
    shape; the output's strides without one)."""
    in_el = strides.element_strides(src, src.shape)
    out_el = shapes.contiguous_strides(src.shape, 1)
    res_el = strides.element_strides(residual, src.shape) if residual is not None else out_el
    rows = [i for i in range(src.ndim) if i != axis]
    row_shape, row_strides = strides.collapse(
        [src.shape[i] for i in rows], [[st[i] for i in rows] for st in (in_el, out_el, res_el)]
    )
    steps = (in_el[axis], out_el[axis], res_el[axis])
    return src.shape[axis], steps, row_shape, row_strides


def plan_nn_rows(backend, kind: str, src: Layout, axis: int, out: Layout, weight, bias,
                 residual=None):  # fmt: skip
    """Args: src, weight (when given), bias (when given), residual (when given), eps (a scalar).
    Allocates out, and with a residual h = src + residual (both contiguous in src's shape; out
    is the norm of h). Launch shapes from rows_geometry: a row split over blocks is two launches
    sharing a per-call scratch buffer of the pieces' statistics."""
    params = [p for p in (weight, bias, residual) if p is not None]
    outputs = [_nbytes(out)] * (2 if residual is not None else 1)
    b = PlanBuilder(backend, "a" * (1 + len(params)) + "s", outputs=outputs)
    n, steps, row_shape, (in_rows, out_rows, res_rows) = _row_layout(src, axis, residual)
    n_rows = math.prod(row_shape)
    if n and n_rows:
        geo = rows_geometry.plan_rows(
            n, n_rows, src.dtype.itemsize, backend.sm_count, residual is not None
        )
        file, defines = kernels.nn_rows(src.dtype, geo.vecs)
        fields = {
            "n_rows": n_rows,
            "n": n,
            "in_step": steps[0],
            "out_step": steps[1],
            "res_step": steps[2],
            "chunk": geo.chunk,
            "row_ndim": len(row_shape),
            "group": geo.group,
            "splits": geo.splits,
            "row_shape": row_shape,
            "in_row_stride": in_rows,
            "out_row_stride": out_rows,
            "res_row_stride": res_rows,
        }
        addresses = [("in", 0, 0, 1), ("out", b.output(0), 0, 1)]
        arg = 1
        for field, p in (("weight", weight), ("bias", bias), ("residual", residual)):
            if p is not None:
                addresses.append((field, arg, 0, 1))
                arg += 1
        if residual is not None:
            addresses.append(("residual_out", b.output(1), 0, 1))
        if geo.split:
            addresses.append(("partial", b.add_scratch(geo.scratch_bytes), 0, 1))
        parts = ("split_stats", "split_apply") if geo.split else ("rows",)
        for part in ("rows_staged",) if geo.shared else parts:
            fn = backend.function(file, defines, f"gk_{kind}_{part}")
            if geo.shared:
                backend.allow_shared(fn, geo.shared)
            b.launch(fn, geo.grid, geo.block, "gk_rows_args", fields, shared=geo.shared,
                     addresses=addresses, floats=[("eps", arg)])  # fmt: skip
    return b.build()


def plan_embedding(backend, ids: Layout, table: Layout, out: Layout):
    """Args: ids (contiguous), table. Allocates out and an int32 flag, set when an id is out of
    range (that id's row is zeros)."""
    flag = Layout(_I32, (1,), (4,))
    b = PlanBuilder(backend, "aa", outputs=[_nbytes(out), 4])
    emit_fill_zero(b, flag, b.output(1))
    num, dim = table.shape
    n_ids = ids.size
    if n_ids and dim:
        fn = backend.function(*kernels.embedding(ids.dtype, table.dtype), "gk_embedding")
        row_stride, col_stride = strides.element_strides(table, table.shape)
        fields = {
            "n_ids": n_ids,
            "num": num,
            "dim": dim,
            "row_stride": row_stride,
            "col_stride": col_stride,
        }
        addresses = [
            ("ids", 0, 0, 1),
            ("table", 1, 0, 1),
            ("out", b.output(0), 0, 1),
            ("error", b.output(1), 0, 1),
        ]
        grid = _grid(backend, -(-n_ids // (_BLOCK // _LANES)))
        b.launch(fn, grid, _BLOCK, "gk_embed_args", fields, addresses=addresses)
    return b.build()


def plan_rope(backend, x: Layout, cos: Layout, sin: Layout, out: Layout, interleaved: bool):
    """Args: x, cos, sin. Allocates out (contiguous, x's shape)."""
    b = PlanBuilder(backend, "aaa", outputs=[_nbytes(out)])
    lead, half = x.shape[:-1], x.shape[-1] // 2
    target = (*lead, half)
    xs = strides.element_strides(x, x.shape)
    cs = strides.element_strides(cos, target)
    ss = strides.element_strides(sin, target)
    shape, (x_rows, c_rows, s_rows) = strides.collapse(
        list(lead), [list(xs[:-1]), list(cs[:-1]), list(ss[:-1])]
    )
    n_rows = math.prod(shape)
    if half and n_rows:
        fn = backend.function(*kernels.rope(x.dtype), "gk_rope")
        fields = {
            "n_rows": n_rows,
            "half": half,
            "x_step": xs[-1],
            "cos_step": cs[-1],
            "sin_step": ss[-1],
            "ndim": len(shape),
            "interleaved": int(interleaved),
            "shape": shape,
            "x_stride": x_rows,
            "cos_stride": c_rows,
            "sin_stride": s_rows,
        }
        addresses = [("x", 0, 0, 1), ("cos", 1, 0, 1), ("sin", 2, 0, 1)]
        addresses.append(("out", b.output(0), 0, 1))
        grid = _grid(backend, -(-n_rows * half // _BLOCK))
        b.launch(fn, grid, _BLOCK, "gk_rope_args", fields, addresses=addresses)
    return b.build()


def _nbytes(layout: Layout) -> int:
    return layout.size * layout.dtype.itemsize
