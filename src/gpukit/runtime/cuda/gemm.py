"""The launches of the matrix-product kernels with a fused epilogue, appended to a plan: the
sm_90a GEMM (kernels/gemm_sm90.cu: TMA tensor-map parameters encoded per call by the plan from
the operands' addresses, at the offsets the driver reports, then its argument block; split-K
through a scratch workspace and a reduction launch), the GEMV kernels (kernels/gemv.cu) and the
exact float32 GEMMs (kernels/gemm_f32.cu, gemm_f32_small.cu) and the float64 tensor-core GEMM
(kernels/gemm_f64.cu). gemm_plan decides; this module packs."""

from __future__ import annotations

import math
from typing import NamedTuple

from ... import _native
from ..args import CONSTANTS, arg_struct
from . import gemm_plan
from .plans import PlanBuilder

_C = CONSTANTS


class Args(NamedTuple):
    """A product's argument numbers in its plan (bias and residual: None when absent) and the
    byte displacements of a, b, out and the residual in theirs (matrices inside a plan's own
    buffers: the blocked Cholesky's; the exact float32 and float64 GEMMs honour them)."""

    a: int
    b: int
    out: int
    bias: int | None
    residual: int | None
    at: tuple[int, int, int, int] = (0, 0, 0, 0)


class Epilogue(NamedTuple):
    """What a kernel's epilogue applies: the bias's element stride (with Args.bias), the
    activation's name (or None), and the residual's (row, batch) element strides, None when it
    is not read in the epilogue."""

    bias_stride: int
    activation: str | None
    residual: tuple[int, int] | None

    def flags(self, args: Args) -> tuple[bool, str | None, bool]:
        """(bias, activation, residual) as kernels.gemm_* take them."""
        return args.bias is not None, self.activation, self.residual is not None


def _epilogue_fields(args: Args, epi: Epilogue, batched: bool = True) -> dict:
    """The epilogue's fields of an argument block; the GEMV's block has no batch stride (its
    batch is folded into the rows)."""
    fields = {"s_bias": epi.bias_stride if args.bias is not None else 0}
    if epi.residual is not None:
        fields["sr_m"] = epi.residual[0]
        if batched:
            fields["sr_z"] = epi.residual[1]
    return fields


def _epilogue_addresses(args: Args, epi: Epilogue, residual_at: int) -> list:
    out = []
    if args.bias is not None:
        out.append(("bias", args.bias, 0, 1))
    if epi.residual is not None:
        out.append(("residual", args.residual, args.at[3] + residual_at, 1))
    return out


def _row_step(p: gemm_plan.Problem, row_block, grain: int) -> int:
    """Rows per launch: all of them, or `row_block` rounded down to a multiple of `grain` (where
    a slice's start keeps the alignment the kernel needs), at least `grain`."""
    if row_block is None or row_block >= p.m:
        return p.m
    return max(grain, row_block // grain * grain)


def _slices(m: int, step: int):
    for r0 in range(0, m, step):
        yield r0, min(step, m - r0)


# --- sm_90a ---------------------------------------------------------------------------------------


def sm90_params(backend, fn) -> tuple[int, int, int]:
    """Byte offsets of gk_gemm_sm90's parameters (a's tensor map, b's, the argument block) in
    its parameter buffer, as the driver reports them (a 64-byte aligned parameter sits where
    the parameter bank's alignment puts it, not where C packing would), checked against the
    sizes the kernel declares."""
    params = backend.param_layout(fn, 3)
    size = arg_struct("gk_gemm_sm90_args").size
    tma = _native.TENSOR_MAP_BYTES
    if [s for _, s in params] != [tma, tma, size]:
        raise RuntimeError(
            f"gk_gemm_sm90's parameters are {params} (offset, size): expected two {tma}-byte "
            f"tensor maps and the {size}-byte gk_gemm_sm90_args"
        )
    return tuple(o for o, _ in params)


def _single_block(backend, fn, struct: str) -> None:
    """Checks that `fn`'s only parameter is argument block `struct`, at offset 0."""
    params = backend.param_layout(fn, 1)
    size = arg_struct(struct).size
    if params != [(0, size)]:
        raise RuntimeError(f"{struct} kernel parameters are {params}, expected [(0, {size})]")


def _launch_splitk_reduce(builder: PlanBuilder, fn, struct: str, items: int, fields: dict,
                          addresses: list) -> None:  # fmt: skip
    """The split-K reduction (epilogue.cuh's gk_splitk_reduce) over `items` outputs: a
    grid-stride loop of GK_SPLITK_THREADS-thread blocks, at most 16 per SM."""
    threads = _C["GK_SPLITK_THREADS"]
    blocks = min(-(-items // threads), builder.backend.sm_count * 16)
    builder.launch(fn, blocks, threads, struct, fields, addresses=addresses)


def emit_sm90(builder: PlanBuilder, p: gemm_plan.Problem, args: Args, epi: Epilogue,
              row_block, preempt=None) -> gemm_plan.Sm90Plan:  # fmt: skip
    """out = epilogue(a @ b) on the sm_90a GEMM. Row slices share the whole product's tile and
    split of K (the same bits as one launch) and start where TMA can address a. `preempt`:
    (address of the preemption words to watch, argument numbers of the control words and of the
    save area, K slices between two checks of the words) for the preemptible form: one launch,
    K never split. Returns the whole product's plan (its tiles, grid and tile shape)."""
    backend = builder.backend
    item = gemm_plan.item_bytes(p.dtype)
    a_mat, b_mat = p.matrices()
    k_tiles = gemm_plan.sm90_k_tiles(p.dtype, p.k)
    tile = gemm_plan.choose_sm90_tile(p.m, p.n, k_tiles, p.batch, backend.sm_count)
    if preempt is not None:
        tile, row_block = (*tile[:2], 1), None
    grain = 16 // math.gcd(16, p.sa[0] * item)
    step = _row_step(p, row_block, grain)
    flags = epi.flags(args)
    preemptible = preempt is not None
    so_z = p.bo[0] if p.bshape else 0
    out_bulk = gemm_plan.out_rows_bulk(p.dtype, p.n, p.so[0], so_z, p.aligned[2])
    whole = gemm_plan.plan_sm90(p.dtype, step, p.n, p.k, p.batch, a_mat, b_mat,
                                backend.sm_count, flags, tile, preempt=preemptible,
                                out_bulk=out_bulk)  # fmt: skip
    workspace = None
    if whole.workspace_bytes:
        workspace = builder.add_scratch(whole.workspace_bytes)
    for r0, rows in _slices(p.m, step):
        plan = gemm_plan.plan_sm90(p.dtype, rows, p.n, p.k, p.batch, a_mat, b_mat,
                                   backend.sm_count, flags, tile, preempt=preemptible,
                                   out_bulk=out_bulk, bulk=whole.bulk)  # fmt: skip
        fn = backend.function(plan.file, plan.defines, "gk_gemm_sm90")
        backend.allow_shared(fn, plan.shared_bytes)
        at_a, at_b, at_args = sm90_params(backend, fn)
        fields = {
            "m": rows,
            "n": p.n,
            "so_m": p.so[0],
            "so_z": so_z,
            "batch": p.batch,
            "splits": plan.splits,
            "k_tiles": plan.k_tiles,
            "k_tiles_per_split": plan.k_tiles_per_split,
            "tiles_m": plan.tiles_m,
            "tiles_n": plan.tiles_n,
            "total_tiles": plan.total_tiles,
            "a_batched": int(plan.a_batched),
            "b_batched": int(plan.b_batched),
            **_epilogue_fields(args, epi),
        }
        res_at = r0 * epi.residual[0] * item if epi.residual is not None else 0
        addresses = [
            # the bulk-store epilogue's row copies need 16-byte aligned rows (out_rows_bulk)
            ("out", args.out, r0 * p.so[0] * item, 16 if whole.bulk else item),
            *_epilogue_addresses(args, epi, res_at),
        ]
        if workspace is not None:
            addresses.append(("workspace", workspace, 0, 8))
        if preempt is not None:
            fields["preempt"] = preempt[0]
            fields["preempt_every"] = preempt[3]
            addresses.append(("next_tile", preempt[1], 0, 4))
            addresses.append(("save", preempt[2], 0, 16))
        tensor_maps = [
            (at_a, args.a, r0 * p.sa[0] * item, plan.map_a.descriptor()),
            (at_b, args.b, 0, plan.map_b.descriptor()),
        ]
        builder.launch(fn, plan.grid, plan.threads, "gk_gemm_sm90_args", fields,
                       shared=plan.shared_bytes, addresses=addresses, at=at_args,
                       tensor_maps=tensor_maps)  # fmt: skip
        if plan.splits > 1:
            reduce = backend.function(plan.file, plan.defines, "gk_gemm_splitk_reduce")
            _single_block(backend, reduce, "gk_gemm_sm90_args")
            _launch_splitk_reduce(builder, reduce, "gk_gemm_sm90_args", p.batch * rows * p.n,
                                  fields, addresses)  # fmt: skip
    return whole


# --- GEMV -----------------------------------------------------------------------------------------


def emit_gemv(builder: PlanBuilder, p: gemm_plan.Problem, args: Args, epi: Epilogue) -> None:
    """out = epilogue(x @ w) for a few rows of x (a's batch folded in): the weight read once.
    One launch whatever row_block says (it is as short as a slice): a product takes the same
    kernel, and gives the same bits, whether or not the scheduler slices it."""
    backend = builder.backend
    g = gemm_plan.gemv_rows(p)
    vec = gemm_plan.gemv_vec(g, p)
    plan = gemm_plan.plan_gemv(g.layout, p.dtype, g.rows, p.n, p.k, vec, backend.sm_count,
                               epi.flags(args))  # fmt: skip
    sw, swk = (p.sb[1], p.sb[0]) if g.layout == "nk" else (p.sb[0], p.sb[1])
    fields = {
        "m": g.rows,
        "n": p.n,
        "k": p.k,
        "sx_m": g.sx_m,
        "sx_k": g.sx_k,
        "sw": sw,
        "swk": swk,
        "so_m": g.so_m,
        "k_per_split": plan.k_per_split,
        "splits": plan.splits,
        **_epilogue_fields(args, epi, batched=False),
    }
    x_align = 16 if vec and g.layout == "nk" else 1
    addresses = [
        ("x", args.a, 0, x_align),
        ("w", args.b, 0, 16 if vec else 1),
        ("out", args.out, 0, 1),
        *_epilogue_addresses(args, epi, 0),
    ]
    if plan.splits > 1:
        addresses.append(("workspace", builder.add_scratch(plan.workspace_bytes), 0, 4))
    fn = backend.function(plan.file, plan.defines, plan.kernel)
    builder.launch(fn, plan.grid, plan.threads, "gk_gemv_args", fields, addresses=addresses)
    if plan.splits > 1:
        reduce = backend.function(plan.file, plan.defines, "gk_gemv_reduce")
        blocks = min(-(-g.rows * p.n // plan.threads), backend.sm_count * 8)
        builder.launch(reduce, blocks, plan.threads, "gk_gemv_args", fields, addresses=addresses)


# --- exact float32 and float64: the register-tiled kernels ----------------------------------------


def _pairs(p: gemm_plan.Problem, args: Args, pair_bytes: int) -> bool:
    """Whether the tiled kernels may store output elements in pairs (`pair_bytes` a pair): every
    row's start, in every matrix, stays a multiple of pair_bytes."""
    even = p.n % 2 == 0 and p.so[0] % 2 == 0 and (p.batch == 1 or p.bo[0] % 2 == 0)
    return even and args.at[2] % pair_bytes == 0


def _tiled_fields(p: gemm_plan.Problem, args: Args, epi: Epilogue, out_pairs: bool,
                  split: tuple[int, int], lower: bool) -> dict:  # fmt: skip
    """gk_gemm_args of a product but the rows of a launch (m, row0)."""
    a_mat, b_mat = p.matrices()
    return {
        "n": p.n,
        "k": p.k,
        "batch": p.batch,
        "sa_m": p.sa[0],
        "sa_k": p.sa[1],
        "sa_z": a_mat.s_batch,
        "sb_k": p.sb[0],
        "sb_n": p.sb[1],
        "sb_z": b_mat.s_batch,
        "so_m": p.so[0],
        "so_z": p.bo[0] if p.bshape else 0,
        "out_pairs": int(out_pairs),
        "splits": split[0],
        "k_per_split": split[1],
        "lower": int(lower),
        **_epilogue_fields(args, epi),
    }


def emit_f32(builder: PlanBuilder, p: gemm_plan.Problem, args: Args, epi: Epilogue,
             row_block, lower: bool = False) -> None:  # fmt: skip
    """out = epilogue(a @ b) in float32 on the register-blocked kernel, in row slices that start
    where its 16-byte loads of a stay aligned; K split as the whole product's shape says, the
    slices' partial sums in one workspace and each slice's reduction launched after it.
    `lower`: tiles wholly above the diagonal are skipped (args.cuh's gk_gemm_args.lower)."""
    backend = builder.backend
    a_mn, b_mn, vec = gemm_plan.tile_layout(p, 4)
    grain = 4 if vec and a_mn else 1  # (K-major a: row strides are multiples of 4 with vec)
    step = _row_step(p, row_block, grain)
    split = gemm_plan.f32_splits(p.m, p.n, p.k, p.batch, backend.sm_count)
    workspace = None
    if split[0] > 1:
        workspace = builder.add_scratch(split[0] * p.batch * min(step, p.m) * p.n * 4)
    out_pairs = _pairs(p, args, 8)
    common = _tiled_fields(p, args, epi, out_pairs, split, lower)
    for r0, rows in _slices(p.m, step):
        plan = gemm_plan.plan_f32(rows, p.n, p.batch, a_mn, b_mn, vec, backend.sm_count,
                                  epi.flags(args), split=split)  # fmt: skip
        fn = backend.function(plan.file, plan.defines, plan.kernel)
        res_at = r0 * epi.residual[0] * 4 if epi.residual is not None else 0
        addresses = [
            ("a", args.a, args.at[0] + r0 * p.sa[0] * 4, 16 if vec else 4),
            ("b", args.b, args.at[1], 16 if vec else 4),
            ("out", args.out, args.at[2] + r0 * p.so[0] * 4, 8 if out_pairs else 4),
            *_epilogue_addresses(args, epi, res_at),
        ]
        if workspace is not None:
            addresses.append(("workspace", workspace, 0, 4))
        fields = {**common, "m": rows, "row0": r0}
        builder.launch(fn, plan.grid, plan.threads, "gk_gemm_args", fields,
                       addresses=addresses)  # fmt: skip
        if workspace is not None:
            reduce = backend.function(plan.file, plan.defines, "gk_gemm_f32_reduce")
            _launch_splitk_reduce(builder, reduce, "gk_gemm_args", p.batch * rows * p.n,
                                  fields, addresses)  # fmt: skip


def emit_f64(builder: PlanBuilder, p: gemm_plan.Problem, args: Args, epi: Epilogue,
             row_block, lower: bool = False) -> None:  # fmt: skip
    """out = a @ b (+ bias) (+ residual) in float64 on the FP64 tensor cores (no activation:
    epi.activation must be None), in row slices that start where its 16-byte copies of a stay
    aligned; every slice takes the whole product's tile. `lower`: as emit_f32's."""
    if epi.activation is not None:
        raise ValueError("gemm_f64.cu applies no activation: apply it after the product")
    backend = builder.backend
    layout = gemm_plan.tile_layout(p, 2)
    a_mn, _, vec = layout
    step = _row_step(p, row_block, 2 if vec and a_mn else 1)
    bias, _, residual = epi.flags(args)
    whole = gemm_plan.plan_f64(p.m, p.n, p.batch, layout, backend.sm_count, bias, residual)
    out_pairs = _pairs(p, args, 16)
    common = _tiled_fields(p, args, epi, out_pairs, (1, p.k), lower)
    for r0, rows in _slices(p.m, step):
        plan = gemm_plan.plan_f64(rows, p.n, p.batch, layout, backend.sm_count, bias, residual,
                                  tile=whole.tile)  # fmt: skip
        fn = backend.function(plan.file, plan.defines, "gk_gemm_f64")
        backend.allow_shared(fn, plan.shared_bytes)
        res_at = r0 * epi.residual[0] * 8 if epi.residual is not None else 0
        addresses = [
            ("a", args.a, args.at[0] + r0 * p.sa[0] * 8, 16 if vec else 8),
            ("b", args.b, args.at[1], 16 if vec else 8),
            ("out", args.out, args.at[2] + r0 * p.so[0] * 8, 16 if out_pairs else 8),
            *_epilogue_addresses(args, epi, res_at),
        ]
        fields = {**common, "m": rows, "row0": r0}
        builder.launch(fn, plan.grid, plan.threads, "gk_gemm_args", fields,
                       shared=plan.shared_bytes, addresses=addresses)  # fmt: skip
