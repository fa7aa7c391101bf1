"""Matmul plans on CUDA: the skinny kernel for a few rows times a weight's transpose (decode),
the tensor-core kernel for float16/bfloat16 on sm_80+, the tiled kernel for everything else;
optionally in row slices (the scheduler's best-effort work)."""

from __future__ import annotations

import math

import numpy as np

from ...base import shapes, strides
from .. import kernels
from ..args import CONSTANTS
from ..backend import Layout
from .elementwise import emit_copy
from .plans import PlanBuilder

_C = CONSTANTS
_MAX_ROW_TILES = 65535  # grid.y of the tiled kernel


def _unit_stride_2d(x: Layout) -> bool:
    """Whether one of the matrix axes of `x` (the last two; a 1-D array is one row) is
    contiguous, as the tensor-core kernel's tile loads need."""
    if x.ndim == 1:
        return x.shape[0] <= 1 or x.strides[0] == x.dtype.itemsize
    rows, cols = x.shape[-2:]
    s_rows, s_cols = (s // x.dtype.itemsize for s in x.strides[-2:])
    return cols <= 1 or rows <= 1 or s_cols == 1 or s_rows == 1


def _skinny_rows(a, b, out, m, sa, sb, so, bshape, ba, bb, bo):
    """(rows, a's row stride, out's row stride, a's k stride) when the product is a few rows of
    floats times a b with contiguous columns and no batch of b (decode's linear), the batch of a
    folded into its rows; None when kernels/matmul_skinny.cu does not apply."""
    if not (a.dtype == b.dtype == out.dtype) or a.dtype.kind not in "fV" or sb[0] != 1:
        return None
    if any(bb) or so[1] != 1:
        return None
    items = math.prod(bshape)
    row_sa, row_so = sa[0], so[0]
    if items > 1:
        if len(bshape) != 1:
            return None
        if m == 1:
            row_sa, row_so = ba[0], bo[0]
        elif ba[0] != m * sa[0] or bo[0] != m * so[0]:
            return None
    rows = m * items
    return (rows, row_sa, row_so, sa[1]) if 0 < rows <= _C["GK_SKINNY_M"] else None


def _mma_strides(rows: int, cols: int, s_rows: int, s_cols: int) -> list[int]:
    """A matrix's element strides for the tensor-core kernel, which takes the contiguous one as 1:
    the stride of a size-1 axis is free, so it is made 1 (or 0) where that helps."""
    if cols <= 1:
        s_cols = 1
    if rows <= 1:
        s_rows = 1 if s_cols != 1 else 0
    return [s_rows, s_cols]


def _aligned16(align: int, displacement: int) -> bool:
    return align >= 16 and displacement % 16 == 0


def _mma_type(backend, a, b, out) -> str | None:
    """The tensor-core kernel's element type for this product, or None for the tiled kernel
    (other dtypes, mixed dtypes, GPUs before sm_80)."""
    if not (a.dtype == b.dtype == out.dtype) or backend.device.compute_capability[0] < 8:
        return None
    return kernels.MMA_TYPES.get(a.dtype.name)


def _contiguous(x: Layout) -> Layout:
    return Layout(x.dtype, x.shape, shapes.contiguous_strides(x.shape, x.dtype.itemsize))


def plan_matmul(backend, a: Layout, b: Layout, out: Layout, bias, row_block):
    """out = a @ b (+ bias along the last axis: 1-D, of out's dtype). Args: a, b (, bias).
    Allocates out (contiguous). `row_block`: launch at most that many output rows at a time
    (each launch computes its rows exactly as one launch would), so that a scheduler can slice
    the work into short kernels; multiples of 128 keep every launch's tiles full."""
    if row_block is not None and row_block < 1:
        raise ValueError(f"matmul: row_block must be at least 1, got {row_block}")
    mma = _mma_type(backend, a, b, out)
    copies = [x for x in (a, b) if mma is not None and not _unit_stride_2d(x)]
    builder = PlanBuilder(
        backend,
        "aa" if bias is None else "aaa",
        outputs=[out.size * out.dtype.itemsize],
        scratch=[x.size * x.dtype.itemsize for x in copies],
    )
    a_arg, b_arg, out_arg = 0, 1, builder.output(0)
    bias_arg = 2 if bias is not None else None
    for i, x in enumerate(copies):  # the tensor-core kernel reads a unit-stride axis
        dense = _contiguous(x)
        emit_copy(builder, x, a_arg if x is a else b_arg, dense, builder.scratch_arg(i))
        if x is a:
            a, a_arg = dense, builder.scratch_arg(i)
        else:
            b, b_arg = dense, builder.scratch_arg(i)
    a_shape, a_str = list(a.shape), list(strides.element_strides(a, a.shape))
    b_shape, b_str = list(b.shape), list(strides.element_strides(b, b.shape))
    if a.ndim == 1:
        a_shape, a_str = [1, *a_shape], [0, *a_str]
    if b.ndim == 1:
        b_shape, b_str = [*b_shape, 1], [*b_str, 0]
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    batch = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    o_str = list(strides.contiguous_like(batch, m, n))

    def batch_strides(shape, st):
        pad = len(batch) - len(shape)
        return [0] * pad + [s if d != 1 else 0 for d, s in zip(shape, st, strict=True)]

    bshape, (ba, bb, bo) = strides.collapse(
        list(batch),
        [
            batch_strides(a_shape[:-2], a_str[:-2]),
            batch_strides(b_shape[:-2], b_str[:-2]),
            o_str[:-2],
        ],
    )
    if len(bshape) > _C["GK_MAX_BATCH_DIMS"]:
        raise ValueError(
            f"matmul: at most {_C['GK_MAX_BATCH_DIMS']} batch dimensions are supported, "
            f"got {len(bshape)}"
        )
    sa, sb, so = a_str[-2:], b_str[-2:], o_str[-2:]
    bias_stride = strides.element_strides(bias, bias.shape)[0] if bias is not None else 0
    common = {"k": k, "n": n, "s_bias": bias_stride}
    skinny = _skinny_rows(a, b, out, m, sa, sb, so, bshape, ba, bb, bo)
    if skinny is not None and (row_block is None or row_block >= skinny[0]):
        _emit_skinny(builder, a, b, skinny, sb, common, (a_arg, b_arg, out_arg, bias_arg))
        return builder.build()
    if mma is not None:
        sa, sb = _mma_strides(m, k, *sa), _mma_strides(k, n, *sb)
    tile = kernels.matmul_tile(out.dtype)
    # The tiled kernel's grid has one row of blocks per tile of rows, at most 65535 of them.
    step = min(row_block or m, tile * _MAX_ROW_TILES) if m else 1
    n_batch = math.prod(bshape)
    fields = {
        **common,
        "sa_m": sa[0],
        "sa_k": sa[1],
        "sb_k": sb[0],
        "sb_n": sb[1],
        "so_m": so[0],
        "so_n": so[1],
        "batch_ndim": len(bshape),
        "batch_shape": [*bshape, *[1] * (_C["GK_MAX_BATCH_DIMS"] - len(bshape))],
        "batch_sa": ba,
        "batch_sb": bb,
        "batch_so": bo,
    }
    batch_blocks = min(n_batch, 65535)
    for r0 in range(0, max(m, 1), step):
        rows = min(step, m - r0)
        if rows <= 0 or n == 0 or n_batch == 0:
            continue
        a_at = r0 * sa[0] * a.dtype.itemsize
        out_at = r0 * so[0] * out.dtype.itemsize
        align = 1
        if mma is not None:
            a_trans, b_trans = sa[1] != 1, sb[1] != 1
            vec = (
                _aligned16(a.align, a_at)
                and _aligned16(b.align, 0)
                and _aligned16(out.align, out_at)
                and all(
                    e % 8 == 0
                    for e in (
                        rows if a_trans else k,
                        k if b_trans else n,
                        sa[1] if a_trans else sa[0],
                        sb[1] if b_trans else sb[0],
                        *ba,
                        *bb,
                    )
                )
            )
            defines = kernels.matmul_mma(mma, a_trans, b_trans, vec, bias is not None)[1]
            fn = backend.function("matmul_mma.cu", defines, "gk_matmul_mma")
            backend.allow_shared(fn, _C["GK_MMA_SMEM"])
            tiles = -(-rows // _C["GK_MMA_BM"]) * -(-n // _C["GK_MMA_BN"])
            if tiles > 0x7FFFFFFF:
                raise ValueError("matmul: too many tiles for one launch")
            geometry = ((tiles, 1, batch_blocks), _C["GK_MMA_THREADS"], _C["GK_MMA_SMEM"])
            align = 16 if vec else 1
        else:
            file, defines = kernels.matmul(a.dtype, b.dtype, out.dtype)
            fn = backend.function(file, defines, "gk_matmul")
            row_tiles = -(-rows // tile)
            threads = _C["GK_MATMUL_THREADS"]
            geometry = ((-(-n // tile), row_tiles, batch_blocks), (threads, threads), 0)
        grid, block, shared = geometry
        addresses = [
            ("a", a_arg, a_at, align),
            ("b", b_arg, 0, align),
            ("out", out_arg, out_at, align),
        ]
        if bias_arg is not None:
            addresses.append(("bias", bias_arg, 0, 1))
        builder.launch(fn, grid, block, "gk_matmul_args", {**fields, "m": rows}, shared=shared,
                       addresses=addresses)  # fmt: skip
    return builder.build()


def _emit_skinny(builder, a, b, skinny, sb, common, args) -> None:
    rows, row_sa, row_so, sa_k = skinny
    a_arg, b_arg, out_arg, bias_arg = args
    k, n = common["k"], common["n"]
    if n == 0:
        return
    v = 16 // a.dtype.itemsize
    vec = (
        sa_k == 1
        and k % v == 0
        and (rows == 1 or row_sa % v == 0)
        and (n == 1 or sb[1] % v == 0)
        and a.align >= 16
        and b.align >= 16
    )
    backend = builder.backend
    fn = backend.function(*kernels.matmul_skinny(a.dtype, vec), "gk_matmul_skinny")
    warps = _C["GK_SKINNY_WARPS"]
    fields = {
        **common,
        "m": rows,
        "sa_m": row_sa,
        "sa_k": sa_k,
        "sb_k": sb[0],
        "sb_n": sb[1],
        "so_m": row_so,
        "so_n": 1,
    }
    align = 16 if vec else 1
    addresses = [("a", a_arg, 0, align), ("b", b_arg, 0, align), ("out", out_arg, 0, 1)]
    if bias_arg is not None:
        addresses.append(("bias", bias_arg, 0, 1))
    builder.launch(fn, -(-n // warps), warps * _C["GK_LANES"], "gk_matmul_args", fields,
                   addresses=addresses)  # fmt: skip
