"""Matmul plans on CUDA. gemm_plan.matmul_path picks the kernel family by compute capability,
dtypes and layouts: the sm_90a GEMM, the GEMV kernels for a few rows by a weight and the exact
float32 GEMM (their launches in gemm.py), else the sm_80 tensor-core kernel or the tiled kernel
for any dtypes (here), and the float64 skinny kernel for a few rows. The epilogue (bias,
activation, residual) is fused where the kernel has one, else launched after the product in
the same plan. `row_block` slices the rows into launches (the scheduler's best-effort work)
without changing a bit of the result."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...base import shapes, strides
from .. import kernels
from ..args import CONSTANTS
from ..backend import Layout
from . import gemm, gemm_plan
from .elementwise import emit, emit_copy
from .plans import PlanBuilder

_C = CONSTANTS
_MAX_ROW_TILES = 65535  # grid.y of the tiled kernel
_F32, _F64 = np.dtype("float32"), np.dtype("float64")


@dataclass(frozen=True)
class View:
    """A product's operands as the kernels read them: the gemm_plan.Problem (batch axes
    collapsed), the broadcast batch shape before collapsing and a's, b's and out's element
    strides along it."""

    problem: gemm_plan.Problem
    batch: tuple[int, ...]
    batch_strides: tuple[list[int], list[int], list[int]]


def _contiguous(x: Layout) -> Layout:
    return Layout(x.dtype, x.shape, shapes.contiguous_strides(x.shape, x.dtype.itemsize))


def _mma_strides(rows: int, cols: int, s_rows: int, s_cols: int) -> list[int]:
    """A matrix's element strides with the contiguous one as 1: the stride of a size-1 axis is
    free, so it is made 1 (or 0) where that helps."""
    if cols <= 1:
        s_cols = 1
    if rows <= 1:
        s_rows = 1 if s_cols != 1 else 0
    return [s_rows, s_cols]


def _matrix(x: Layout, vector_as_row: bool):
    shape, st = list(x.shape), list(strides.element_strides(x, x.shape))
    if x.ndim == 1:
        return ([1, *shape], [0, *st]) if vector_as_row else ([*shape, 1], [*st, 0])
    return shape, st


def _batch_strides(batch, shape, st) -> list[int]:
    pad = len(batch) - len(shape)
    return [0] * pad + [s if d != 1 else 0 for d, s in zip(shape, st, strict=True)]


def view(a: Layout, b: Layout, out: Layout) -> View:
    """out (contiguous) = a @ b with NumPy's rules (1-D operands promoted, batches broadcast)."""
    a_shape, a_str = _matrix(a, True)
    b_shape, b_str = _matrix(b, False)
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    batch = tuple(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])))
    o_str = list(strides.contiguous_like(batch, m, n))
    per_operand = (
        _batch_strides(batch, a_shape[:-2], a_str[:-2]),
        _batch_strides(batch, b_shape[:-2], b_str[:-2]),
        o_str[:-2],
    )
    bshape, (ba, bb, bo) = strides.collapse(list(batch), list(per_operand))
    same = a.dtype == b.dtype == out.dtype
    problem = gemm_plan.Problem(
        dtype=a.dtype.name if same else "",
        m=m,
        n=n,
        k=k,
        bshape=tuple(bshape),
        sa=tuple(_mma_strides(m, k, *a_str[-2:])),
        sb=tuple(_mma_strides(k, n, *b_str[-2:])),
        so=(o_str[-2], 1),
        ba=tuple(ba),
        bb=tuple(bb),
        bo=tuple(bo),
        aligned=(a.align >= 16, b.align >= 16, out.align >= 16),
    )
    return View(problem, batch, per_operand)


def _residual_strides(residual: Layout, v: View) -> tuple[int, int] | None:
    """(row stride, batch stride) of a residual (out's shape, any strides) that the GEMM
    epilogues read in place: contiguous along n, its batch collapsing as the product's does.
    None otherwise (it is then added after the product)."""
    p = v.problem
    r_str = strides.element_strides(residual, (*v.batch, p.m, p.n))
    r_shape, collapsed = strides.collapse(list(v.batch), [*v.batch_strides, list(r_str[:-2])])
    if list(r_shape) != list(p.bshape) or not (r_str[-1] == 1 or p.n == 1):
        return None
    return r_str[-2], collapsed[3][0] if p.bshape else 0


def matmul_path(backend, a: Layout, b: Layout, out: Layout, tf32: bool) -> str:
    """The kernel family (gemm_plan's names) that computes out = a @ b."""
    return _path(backend, view(a, b, out).problem, tf32)


def expected_ns(backend, a: Layout, b: Layout, out: Layout) -> int:
    """What out = a @ b is expected to take (gemm_plan.expected_ns on its kernel family)."""
    p = view(a, b, out).problem
    return gemm_plan.expected_ns(p, _path(backend, p, False))


def _path(backend, p: gemm_plan.Problem, tf32: bool) -> str:
    return gemm_plan.matmul_path(p, backend.device.compute_capability, backend.sm90a, tf32)


def describe_paths(backend, tf32: bool) -> str:
    return gemm_plan.describe_paths(backend.device.compute_capability, backend.sm90a, tf32)


def plan_matmul(backend, a: Layout, b: Layout, out: Layout, bias, row_block, activation=None,
                residual=None, tf32=False, lower=False):  # fmt: skip
    """out = activation(a @ b + bias) + residual: bias 1-D of out's dtype along the last axis,
    activation one of kernels.ACTIVATIONS' names, residual of out's shape (broadcast strides
    allowed) and a floating dtype; `tf32`: float32 products may round their operands to TF32.
    Args: a, b (, bias) (, residual). Allocates out (contiguous). `row_block`: launch at most
    that many output rows at a time (a few more where an operand's alignment needs), each
    launch computing its rows exactly as one launch would. `lower`: only the lower triangle of
    each output matrix is needed (the float32 and float64 kernels skip tiles above it, whose
    outputs are then left unwritten; the others compute everything)."""
    if row_block is not None and row_block < 1:
        raise ValueError(f"matmul: row_block must be at least 1, got {row_block}")
    if activation not in kernels.ACTIVATIONS:
        raise ValueError(f"matmul: unknown activation {activation!r}")
    v = view(a, b, out)
    p = v.problem
    arguments = "aa" + "a" * (bias is not None) + "a" * (residual is not None)
    builder = PlanBuilder(backend, arguments, outputs=[out.size * out.dtype.itemsize])
    args = gemm.Args(0, 1, builder.output(0), 2 if bias is not None else None, None)
    if residual is not None:
        args = args._replace(residual=len(arguments) - 1)
    if p.m == 0 or p.n == 0 or p.batch == 0:
        return builder.build()
    bias_stride = strides.element_strides(bias, bias.shape)[0] if bias is not None else 0
    path = _path(backend, p, tf32)
    if path == gemm_plan.SM90 and p.dtype == "float32":
        path, a, b, args, v = _tf32_operands(builder, a, b, out, args, v)
        p = v.problem
    res_strides = None
    if residual is not None and residual.dtype == out.dtype:
        res_strides = _residual_strides(residual, v)
    fused = False
    if path == gemm_plan.SM90:
        epi = gemm.Epilogue(bias_stride, activation, res_strides)
        gemm.emit_sm90(builder, p, args, epi, row_block)
        fused = True
    elif path == gemm_plan.SIMT_F32:
        epi = gemm.Epilogue(bias_stride, activation, res_strides)
        gemm.emit_f32(builder, p, args, epi, row_block, lower)
        fused = True
    elif path == gemm_plan.DMMA_F64:  # no activation in its epilogue: then bias only
        fused = activation is None
        epi = gemm.Epilogue(bias_stride, None, res_strides if fused else None)
        gemm.emit_f64(builder, p, args, epi, row_block, lower)
    elif path == gemm_plan.GEMV and p.dtype in kernels.GEMV_DTYPES:
        if p.batch > 1:  # rows folded from a batch: the residual is added afterwards
            res_strides = None
        gemm.emit_gemv(builder, p, args, gemm.Epilogue(bias_stride, activation, res_strides))
        fused = True
    elif path == gemm_plan.GEMV:
        _emit_skinny(builder, a, b, p, args, bias_stride)
    else:
        _emit_tiled(builder, a, b, out, args, bias_stride, row_block, path == gemm_plan.SM80)
    dense = _contiguous(out)
    loop = _F64 if out.dtype == _F64 else _F32
    if activation is not None and not fused:
        emit(builder, activation, loop, [(dense, args.out)], (dense, args.out))
    if residual is not None and not (fused and res_strides is not None):
        emit(
            builder, "add", loop, [(dense, args.out), (residual, args.residual)], (dense, args.out)
        )
    return builder.build()


def _k_major_copy(x: Layout, is_a: bool) -> Layout:
    """A copy's layout of operand `x` with K contiguous and each row's start 16-byte aligned
    (what TMA reads TF32 from), batch axes outermost."""
    item = x.dtype.itemsize
    if x.ndim == 1:
        return Layout(x.dtype, x.shape, (item,))
    rows, cols = x.shape[-2:]
    k, outer = (cols, rows) if is_a else (rows, cols)
    lead = -(-max(k, 1) * item // 16) * 16
    matrix = (lead, item) if is_a else (item, lead)
    batch_strides, step = [], outer * lead
    for d in reversed(x.shape[:-2]):
        batch_strides.append(step)
        step *= max(d, 1)
    return Layout(x.dtype, x.shape, (*reversed(batch_strides), *matrix), 16)


def _layout_bytes(x: Layout) -> int:
    if x.size == 0:
        return 0
    return sum((d - 1) * s for d, s in zip(x.shape, x.strides, strict=True)) + x.dtype.itemsize


def _tf32_operands(builder, a, b, out, args, v: View):
    """The sm_90a GEMM reads TF32 operands K-major with 16-byte aligned rows: copies of those
    that are not (scratch, made before the product). Returns (path, a, b, args, view); the
    exact float32 kernel's path and the operands as they were if the copies would not do."""
    p = v.problem
    copy_a, copy_b = (not ok for ok in gemm_plan.tf32_in_place(p))
    new_a = _k_major_copy(a, True) if copy_a else a
    new_b = _k_major_copy(b, False) if copy_b else b
    nv = view(new_a, new_b, out)
    q = nv.problem
    x, y = q.matrices()
    if len(q.bshape) > 1 or gemm_plan.sm90_supported("float32", q.m, q.n, q.k, q.batch, x, y, True):
        return gemm_plan.SIMT_F32, a, b, args, v
    if copy_a:
        scratch = builder.add_scratch(_layout_bytes(new_a))
        emit_copy(builder, a, args.a, new_a, scratch)
        args = args._replace(a=scratch)
    if copy_b:
        scratch = builder.add_scratch(_layout_bytes(new_b))
        emit_copy(builder, b, args.b, new_b, scratch)
        args = args._replace(b=scratch)
    return gemm_plan.SM90, new_a, new_b, args, nv


# --- the sm_80 tensor-core kernel, the tiled kernel, the float64 skinny kernel ----------------


def _unit_stride_2d(x: Layout) -> bool:
    """Whether one of the matrix axes of `x` (the last two; a 1-D array is one row) is
    contiguous, as the tensor-core kernel's tile loads need."""
    if x.ndim == 1:
        return x.shape[0] <= 1 or x.strides[0] == x.dtype.itemsize
    rows, cols = x.shape[-2:]
    s_rows, s_cols = (s // x.dtype.itemsize for s in x.strides[-2:])
    return cols <= 1 or rows <= 1 or s_cols == 1 or s_rows == 1


def _aligned16(align: int, displacement: int) -> bool:
    return align >= 16 and displacement % 16 == 0


def _emit_skinny(builder, a: Layout, b: Layout, p, args, bias_stride) -> None:
    """kernels/matmul_skinny.cu (float64): a warp per output column, the weight read once."""
    g = gemm_plan.gemv_rows(p)
    v = 16 // a.dtype.itemsize
    vec = (
        g.sx_k == 1
        and p.k % v == 0
        and (g.rows == 1 or g.sx_m % v == 0)
        and (p.n == 1 or p.sb[1] % v == 0)
        and a.align >= 16
        and b.align >= 16
    )
    backend = builder.backend
    fn = backend.function(*kernels.matmul_skinny(a.dtype, vec), "gk_matmul_skinny")
    warps = _C["GK_SKINNY_WARPS"]
    fields = {
        "k": p.k,
        "n": p.n,
        "s_bias": bias_stride,
        "m": g.rows,
        "sa_m": g.sx_m,
        "sa_k": g.sx_k,
        "sb_k": p.sb[0],
        "sb_n": p.sb[1],
        "so_m": g.so_m,
        "so_n": 1,
    }
    align = 16 if vec else 1
    addresses = [("a", args.a, 0, align), ("b", args.b, 0, align), ("out", args.out, 0, 1)]
    if args.bias is not None:
        addresses.append(("bias", args.bias, 0, 1))
    builder.launch(fn, -(-p.n // warps), warps * _C["GK_LANES"], "gk_matmul_args", fields,
                   addresses=addresses)  # fmt: skip


def _emit_tiled(builder, a, b, out, args, bias_stride, row_block, mma: bool) -> None:
    """kernels/matmul_mma.cu (`mma`: float16/bfloat16 on sm_80+) or kernels/matmul.cu, in row
    slices of at most `row_block` rows. The tensor-core kernel reads a unit-stride axis of each
    operand: one with neither is copied first."""
    backend = builder.backend
    a_arg, b_arg = args.a, args.b
    for x in [x for x in (a, b) if mma and not _unit_stride_2d(x)]:
        dense = _contiguous(x)
        scratch = builder.add_scratch(x.size * x.dtype.itemsize)
        emit_copy(builder, x, a_arg if x is a else b_arg, dense, scratch)
        if x is a:
            a, a_arg = dense, scratch
        else:
            b, b_arg = dense, scratch
    p = view(a, b, out).problem
    m, n, k = p.m, p.n, p.k
    bshape, ba, bb, bo = p.bshape, p.ba, p.bb, p.bo
    if len(bshape) > _C["GK_MAX_BATCH_DIMS"]:
        raise ValueError(
            f"matmul: at most {_C['GK_MAX_BATCH_DIMS']} batch dimensions are supported, "
            f"got {len(bshape)}"
        )
    sa, sb, so = p.sa, p.sb, p.so
    tile = kernels.matmul_tile(out.dtype)
    # The tiled kernel's grid has one row of blocks per tile of rows, at most 65535 of them.
    step = min(row_block or m, tile * _MAX_ROW_TILES)
    n_batch = p.batch
    fields = {
        "k": k,
        "n": n,
        "s_bias": bias_stride,
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
    for r0 in range(0, m, step):
        rows = min(step, m - r0)
        a_at = r0 * sa[0] * a.dtype.itemsize
        out_at = r0 * so[0] * out.dtype.itemsize
        align = 1
        if mma:
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
            mma_type = kernels.MMA_TYPES[p.dtype]
            defines = kernels.matmul_mma(mma_type, a_trans, b_trans, vec, args.bias is not None)
            fn = backend.function("matmul_mma.cu", defines[1], "gk_matmul_mma")
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
            ("out", args.out, out_at, align),
        ]
        if args.bias is not None:
            addresses.append(("bias", args.bias, 0, 1))
        builder.launch(fn, grid, block, "gk_matmul_args", {**fields, "m": rows}, shared=shared,
                       addresses=addresses)  # fmt: skip
