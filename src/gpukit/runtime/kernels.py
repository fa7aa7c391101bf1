"""Which built-in kernel serves which operation and dtypes: the file in kernels/, the defines that
instantiate it, the kernel names, and the source and options an instance compiles from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base.dtypes import bfloat16, is_floating
from . import fft_plan
from .args import CONSTANTS
from .ops import ELEMENTWISE, functor_source
from .philox import uniform_bits
from .sort_plan import search_defines, sort_defines, tuning

C_TYPES = {
    np.dtype("bool"): "bool",
    np.dtype("int8"): "gk_i8",
    np.dtype("int16"): "gk_i16",
    np.dtype("int32"): "gk_i32",
    np.dtype("int64"): "gk_i64",
    np.dtype("uint8"): "gk_u8",
    np.dtype("uint16"): "gk_u16",
    np.dtype("uint32"): "gk_u32",
    np.dtype("uint64"): "gk_u64",
    np.dtype("float16"): "gk_f16",
    np.dtype("float32"): "float",
    np.dtype("float64"): "double",
    bfloat16: "gk_bf16",
    np.dtype("complex64"): "gk_c64",
    np.dtype("complex128"): "gk_c128",
}


def arith_type(dtype: np.dtype) -> str:
    """The C type arithmetic on `dtype` is done in: float16 and bfloat16 compute in float."""
    return "float" if dtype in (np.float16, bfloat16) else C_TYPES[dtype]


def _float_acc(out: np.dtype) -> str:
    """The accumulator of sums and products into a float or complex `out`: double for float64,
    the complex type itself for complex, else float."""
    if out.kind == "c":
        return C_TYPES[out]
    return "double" if out == np.float64 else "float"


def is_integral(dtype: np.dtype) -> bool:
    return dtype.kind in "biu"


def elementwise(op: str, loop: np.dtype, out: np.dtype, inputs: tuple) -> tuple[str, tuple]:
    """(file, defines) for elementwise `op` computed in NumPy's `loop` dtype and stored as `out`;
    `inputs` holds dtypes, or None for a scalar operand."""
    if op not in ELEMENTWISE:
        raise NotImplementedError(f"no GPU kernel for {op}")
    copy = len(inputs) == 1 and inputs[0] is not None and inputs[0] == out  # float64 == None holds
    if op == "identity" and copy and loop == out and out.itemsize <= 8:
        # A copy within a dtype moves bits, as NumPy's does: a float16 through float would lose
        # a NaN's payload, a bfloat16 sNaN would come back quiet.
        loop = out = np.dtype(f"uint{8 * out.itemsize}")
        inputs = (out,)
    defines = [f"GK_OP={op}", f"GK_NIN={len(inputs)}", f"GK_OUT_T={C_TYPES[out]}"]
    defines.append(f"GK_COMP_T={arith_type(loop)}")
    defines.append(f"GK_LOOP_T={C_TYPES[loop]}")
    defines.append(f"GK_SCALAR_INT={int(is_integral(loop))}")
    for i, dt in enumerate(inputs):
        defines.append(f"GK_IN{i}_T={C_TYPES[loop] if dt is None else C_TYPES[dt]}")
        defines.append(f"GK_SCALAR{i}={int(dt is None)}")
    return "elementwise.cu", tuple(defines)


# Kernel reducer of each reduction (kernels/reduce.cu): mean is a scaled sum, any / all are max /
# min into bool.
_REDUCERS = {"mean": "sum", "any": "max", "all": "min"}


def reduction(name: str, src: np.dtype, out: np.dtype) -> tuple[str, tuple]:
    """(file, defines) for sum mean prod max min argmax argmin var std any all of `src` into
    `out`. 16-bit floats accumulate in float; integer sums in the (64-bit) result type."""
    red = _REDUCERS.get(name, name)
    if name in ("any", "all"):
        acc = "bool"
    elif red in ("max", "min", "argmax", "argmin"):
        acc = arith_type(src)
    elif is_integral(out):
        acc = C_TYPES[out]
    elif out == np.float64 or src == np.float64:
        acc = "double"
    else:
        acc = _float_acc(out)
    defines = (
        f"GK_RED=gk_red_{red}",
        f"GK_IN_T={C_TYPES[src]}",
        f"GK_ACC_T={acc}",
        f"GK_OUT_T={C_TYPES[out]}",
    )
    return "reduce.cu", defines


def acc_bytes(defines: tuple) -> int:
    """Bytes of the accumulator of a reduction or cumsum instance (GK_ACC_T)."""
    acc = next(d.split("=", 1)[1] for d in defines if d.startswith("GK_ACC_T="))
    sizes = {"double": 8, "gk_i64": 8, "gk_u64": 8, "bool": 1, "gk_c64": 8, "gk_c128": 16}
    return sizes.get(acc, 4)


def transpose_tile(itemsize: int) -> int:
    """The side of kernels/transpose.cu's square tiles: GK_TRANSPOSE_TILE, halved for 16-byte
    items, whose padded 64 x 65 tile (65 KiB) would pass the 48 KiB of static shared memory."""
    tile = CONSTANTS["GK_TRANSPOSE_TILE"]
    return tile if itemsize <= 8 else tile // 2


def transpose(itemsize: int) -> tuple[str, tuple]:
    """kernels/transpose.cu moving elements of `itemsize` bytes (any dtype of that size)."""
    return "transpose.cu", (f"GK_T={_RAW_TYPES[itemsize]}", f"GK_TILE={transpose_tile(itemsize)}")


def matmul_tile(out: np.dtype) -> int:
    """The output tile of kernels/matmul.cu's blocks: 64 for accumulators of 8 bytes or more (an
    8x8 grid of them per thread spills registers), else 128."""
    if is_integral(out) or out.kind == "c":
        acc_bytes = out.itemsize
    else:
        acc_bytes = 8 if out == np.float64 else 4
    return 64 if acc_bytes >= 8 else 128


def matmul(a: np.dtype, b: np.dtype, out: np.dtype) -> tuple[str, tuple]:
    acc = C_TYPES[out] if is_integral(out) else _float_acc(out)
    defines = (
        f"GK_A_T={C_TYPES[a]}",
        f"GK_B_T={C_TYPES[b]}",
        f"GK_OUT_T={C_TYPES[out]}",
        f"GK_ACC_T={acc}",
        f"GK_TILE={matmul_tile(out)}",
    )
    return "matmul.cu", defines


def matmul_skinny(dtype: np.dtype, vec: bool) -> tuple[str, tuple]:
    """The product of at most GK_SKINNY_M rows by a b with contiguous columns (decode's linear)."""
    acc = "double" if dtype == np.float64 else "float"
    return "matmul_skinny.cu", (f"GK_T={C_TYPES[dtype]}", f"GK_ACC_T={acc}", f"GK_VEC={int(vec)}")


# Dtypes (by name) the tensor-core kernel multiplies, and the mma element type of each.
MMA_TYPES = {"float16": "f16", "bfloat16": "bf16"}


def matmul_mma(
    mma_type: str, a_trans: bool, b_trans: bool, vec: bool, bias: bool
) -> tuple[str, tuple]:
    """The tensor-core matmul (sm_80+) over 16-bit operands of `mma_type` ("f16" or "bf16");
    `a_trans` / `b_trans`: the operand is the .T of a row-major matrix; `vec`: 16-byte copies
    (aligned operands, leading dimensions multiples of 8); `bias`: fused bias along n."""
    defines = (
        f"GK_MMA_TYPE={mma_type}",
        f"GK_A_TRANS={int(a_trans)}",
        f"GK_B_TRANS={int(b_trans)}",
        f"GK_MMA_VEC={int(vec)}",
        f"GK_BIAS={int(bias)}",
    )
    return "matmul_mma.cu", defines


# The matrix-product kernels' fused epilogue (kernels/epilogue.cuh): activation by name, and the
# output type (bias and residual share it) by dtype name.
ACTIVATIONS = {
    None: "GK_ACT_NONE",
    "relu": "GK_ACT_RELU",
    "gelu": "GK_ACT_GELU",
    "gelu_tanh": "GK_ACT_GELU_TANH",
    "silu": "GK_ACT_SILU",
}
_EPI_OUT = {"float16": "GK_OUT_F16", "bfloat16": "GK_OUT_BF16", "float32": "GK_OUT_F32"}
# The sm_90a GEMM's operand types by dtype name (float32 multiplies as TF32).
_SM90_TYPE = {"float16": "GK_GEMM_F16", "bfloat16": "GK_GEMM_BF16", "float32": "GK_GEMM_TF32"}
NO_EPILOGUE = (False, None, False)


def _epilogue(epilogue) -> tuple[str, ...]:
    """(bias, activation name or None, residual) as the GK_EPI_* defines."""
    bias, activation, residual = epilogue
    return (
        f"GK_EPI_BIAS={int(bias)}",
        f"GK_EPI_ACT={ACTIVATIONS[activation]}",
        f"GK_EPI_RESIDUAL={int(residual)}",
    )


def sm90_epilogue_bytes(bm: int, bn: int, bulk: bool = False) -> int:
    """Shared memory of one consumer warpgroup's epilogue: a 64 x 64 float chunk, or with `bulk`
    (GK_GEMM_BULK_STORE) its bm / 2 rows of 16-bit outputs, each padded by GK_SM90_ROW_PAD bytes."""
    c = CONSTANTS
    if not bulk:
        return c["GK_SM90_EPI_BYTES"]
    return bm // 2 * (2 * bn + c["GK_SM90_ROW_PAD"])


def sm90_stages(bm: int, bn: int, bulk: bool = False) -> tuple[int, int]:
    """(pipeline stages, dynamic shared bytes) of the sm_90a GEMM with a bm x bn tile: as many
    K slices as the shared-memory budget holds beside the two consumers' epilogues."""
    c = CONSTANTS
    stage = (bm + bn) * c["GK_SM90_ROW_BYTES"]
    epilogue = 2 * sm90_epilogue_bytes(bm, bn, bulk)
    stages = min(c["GK_SM90_MAX_STAGES"], (c["GK_SM90_SMEM_BUDGET"] - epilogue) // stage)
    return stages, stages * stage + epilogue + c["GK_SM90_SMEM_EXTRA"]


def gemm_sm90(
    dtype: str,
    bm: int,
    bn: int,
    a_mn: bool,
    b_mn: bool,
    wait1: bool,
    epilogue=NO_EPILOGUE,
    preempt: bool = False,
    bulk: bool = False,
) -> tuple[str, tuple]:
    """The sm_90a GEMM (wgmma + TMA) over `dtype` ("float16", "bfloat16"; "float32" as TF32) with
    bm x bn tiles; `a_mn` / `b_mn`: a is M-major, b N-major (else K-major); `wait1`: consumers
    keep one wgmma group in flight; `epilogue`: (bias, activation, residual); `preempt`: the
    preemptible form (tiles from a counter, yields while a preemption word is raised); `bulk`:
    the output rows leave shared memory by bulk copies (16-bit types, no epilogue, not
    preemptible)."""
    stages, shared = sm90_stages(bm, bn, bulk)
    return "gemm_sm90.cu", (
        *(("GK_GEMM_PREEMPT=1",) if preempt else ()),
        *(("GK_GEMM_BULK_STORE=1",) if bulk else ()),
        f"GK_GEMM_TYPE={_SM90_TYPE[dtype]}",
        f"GK_GEMM_BM={bm}",
        f"GK_GEMM_BN={bn}",
        f"GK_GEMM_STAGES={stages}",
        f"GK_GEMM_SMEM={shared}",
        f"GK_A_MN={int(a_mn)}",
        f"GK_B_MN={int(b_mn)}",
        f"GK_GEMM_WAIT1={int(wait1)}",
        *_epilogue(epilogue),
    )


GEMV_DTYPES = ("float16", "bfloat16", "float32")


def gemv_rows_compiled(m: int) -> int:
    """The row count a GEMV instance is compiled for (1, 2, 4, 8 or 16) to serve m rows."""
    return 1 << (m - 1).bit_length()


def gemv_tune(layout: str, tune=None) -> tuple[int, int, int]:
    """(columns per warp (nk) or 16-byte column chunks per block (kn), 16-byte loads in flight,
    streaming-load hint) of a GEMV instance: `tune`, else geometry.cuh's defaults."""
    c = CONSTANTS
    if tune is not None:
        return tuple(tune)
    if layout == "nk":
        return c["GK_GEMV_CPW_DEFAULT"], c["GK_GEMV_NK_UNROLL_DEFAULT"], c["GK_GEMV_HINT_DEFAULT"]
    return c["GK_GEMV_CW_DEFAULT"], c["GK_GEMV_KN_UNROLL_DEFAULT"], c["GK_GEMV_HINT_DEFAULT"]


def gemv(
    dtype: str, layout: str, rows: int, vec: bool, tune=None, epilogue=NO_EPILOGUE
) -> tuple[str, tuple]:
    """The GEMV kernels (kernels/gemv.cu) over `dtype` (GEMV_DTYPES) for a weight in `layout`
    ("nk": w (n, k), linear's; "kn": w (k, n)), compiled for `rows` rows (1, 2, 4, 8, 16);
    `vec`: 16-byte loads; `tune`: as gemv_tune takes it."""
    width, unroll, hint = gemv_tune(layout, tune)
    return "gemv.cu", (
        f"GK_T={C_TYPES[np.dtype(bfloat16 if dtype == 'bfloat16' else dtype)]}",
        f"GK_EPI_OUT={_EPI_OUT[dtype]}",
        f"GK_GEMV_ROWS={rows}",
        f"GK_VEC={int(vec)}",
        f"GK_GEMV_CPW={width}" if layout == "nk" else f"GK_GEMV_CW={width}",
        f"GK_GEMV_UNROLL={unroll}",
        f"GK_GEMV_HINT={hint}",
        *_epilogue(epilogue),
    )


def gemm_f32(
    a_mn: bool, b_mn: bool, vec: bool, tune=None, epilogue=NO_EPILOGUE, split: bool = False
) -> tuple[str, tuple]:
    """The exact float32 GEMM (kernels/gemm_f32.cu): `a_mn` / `b_mn`: a contiguous along m, b
    along n (else along k); `vec`: 16-byte loads; `tune`: (blocks per SM the registers must
    allow, cp.async stages (1) or register staging (0)) instead of geometry.cuh's defaults;
    `split`: the instance of split-K launches (partial sums to the workspace)."""
    min_blocks, async_copies = tune or (
        CONSTANTS["GK_F32_MIN_BLOCKS_DEFAULT"],
        CONSTANTS["GK_F32_ASYNC_DEFAULT"],
    )
    return "gemm_f32.cu", (
        f"GK_A_MN={int(a_mn)}",
        f"GK_B_MN={int(b_mn)}",
        f"GK_VEC={int(vec)}",
        f"GK_F32_MIN_BLOCKS={min_blocks}",
        f"GK_F32_ASYNC={async_copies}",
        f"GK_F32_SPLIT={int(split)}",
        *_epilogue(epilogue),
    )


def gemm_f64(a_mn: bool, b_mn: bool, vec: bool, tile: int, bias: bool, residual: bool):
    """The float64 GEMM on the FP64 tensor cores (kernels/gemm_f64.cu, sm_80+): `a_mn` / `b_mn`
    as gemm_f32 takes them, `vec`: 16-byte copies, `tile`: GK_F64_TILE or GK_F64_SMALL_TILE;
    the epilogue adds a bias and / or a residual (no activation)."""
    return "gemm_f64.cu", (
        f"GK_A_MN={int(a_mn)}",
        f"GK_B_MN={int(b_mn)}",
        f"GK_VEC={int(vec)}",
        f"GK_F64_BT={tile}",
        f"GK_EPI_BIAS={int(bias)}",
        f"GK_EPI_RESIDUAL={int(residual)}",
    )


def gemm_f32_small(epilogue=NO_EPILOGUE) -> tuple[str, tuple]:
    """The exact float32 GEMM of 32 x 32 tiles (kernels/gemm_f32_small.cu), for products too small
    to fill the GPU with gemm_f32's; any strides."""
    return "gemm_f32_small.cu", _epilogue(epilogue)


def cumsum(src: np.dtype, out: np.dtype) -> tuple[str, tuple]:
    """scan.cu for a running sum of `src` into `out` (16-bit floats accumulate in float)."""
    acc = C_TYPES[out] if is_integral(out) else ("double" if out == np.float64 else "float")
    return "scan.cu", (f"GK_IN_T={C_TYPES[src]}", f"GK_ACC_T={acc}", f"GK_OUT_T={C_TYPES[out]}")


def cumsum_pieces(src: np.dtype, out: np.dtype) -> tuple[str, tuple]:
    """The reduction that sums pieces of a strided cumsum's axis, with the scan's accumulator."""
    return "reduce.cu", ("GK_RED=gk_red_sum", *cumsum(src, out)[1])


def arange(out: np.dtype) -> tuple[str, tuple]:
    return "fill.cu", (f"GK_OUT_T={C_TYPES[out]}", f"GK_ARANGE_INT={int(is_integral(out))}")


# Raw element types of gather.cu by size in bytes (16: two 64-bit words, for widened rows).
_RAW_TYPES = {1: "gk_u8", 2: "gk_u16", 4: "gk_u32", 8: "gk_u64", 16: "gk_b128"}


def gather(width: int) -> tuple[str, tuple]:
    """gather.cu moving elements of `width` bytes (any dtype of that size)."""
    return "gather.cu", (f"GK_T={_RAW_TYPES[width]}",)


def compact() -> tuple[str, tuple]:
    return "compact.cu", ()


def philox(out: np.dtype) -> tuple[str, tuple]:
    """philox.cu storing `out`; uniforms of the float path carry as many bits as out's
    significand (24 for float32 and wider types, whose double path is used for float64)."""
    return "philox.cu", (f"GK_OUT_T={C_TYPES[out]}", f"GK_BITS={uniform_bits(out)}")


def _nn_types(dtype) -> tuple[str, str]:
    """(element C type, accumulator C type) of a gpukit.nn kernel over `dtype`: 16-bit floats
    accumulate in float."""
    c_type = C_TYPES.get(dtype)
    if c_type is None or not is_floating(dtype):
        raise TypeError(f"gpukit.nn has no kernels for {dtype}")
    return c_type, "double" if c_type == "double" else "float"


def nn_rows(dtype, vecs: int = 0) -> tuple[str, tuple]:
    """softmax, log_softmax, layer_norm, rms_norm over rows of `dtype`, each thread holding
    `vecs` 16-byte vectors of its row in registers (0: rows streamed, and split rows)."""
    t, acc = _nn_types(dtype)
    return "nn_rows.cu", (f"GK_T={t}", f"GK_ACC_T={acc}", f"GK_VECS={vecs}")


def embedding(ids: np.dtype, table) -> tuple[str, tuple]:
    t, acc = _nn_types(table)
    return "nn_gather.cu", (f"GK_T={t}", f"GK_ACC_T={acc}", f"GK_ID_T={C_TYPES[ids]}")


def rope(dtype) -> tuple[str, tuple]:
    return embedding(np.dtype("int64"), dtype)


def qkv_cache(dtype) -> tuple[str, tuple]:
    """The decode step's rotary embedding fused with the KV-cache write."""
    t, acc = _nn_types(dtype)
    return "qkv_cache.cu", (f"GK_T={t}", f"GK_ACC_T={acc}")


def sample(dtype) -> tuple[str, tuple]:
    """The next token of rows of logits of `dtype`."""
    t, _ = _nn_types(dtype)
    return "sample.cu", (f"GK_T={t}",)


ATTENTION_HEAD_DIMS = (32, 64, 128, 256)  # instances by the largest head_dim they serve


def attention(dtype, head_dim: int, mask: str) -> tuple[str, tuple]:
    """Fused attention for head_dim up to 256; mask is "none", "bool" or "additive"."""
    dmax = next(m for m in ATTENTION_HEAD_DIMS if head_dim <= m)
    kind = {"none": 0, "bool": 1, "additive": 2}[mask]
    t, acc = _nn_types(dtype)
    return "attention.cu", (f"GK_T={t}", f"GK_ACC_T={acc}", f"GK_DMAX={dmax}", f"GK_MASK={kind}")


@dataclass(frozen=True)
class AttentionPrefillTiles:
    """kernels/attention_tc.cu's blocks: `warps` warps, each owning 16 * m_tiles query rows;
    `keys` keys per tile through `stages` cp.async stages; q_regs: the Q fragments are held in
    registers (else read from shared memory at every tile)."""

    warps: int
    m_tiles: int
    keys: int
    stages: int
    q_regs: bool

    @property
    def rows(self) -> int:
        return 16 * self.m_tiles * self.warps


@dataclass(frozen=True)
class AttentionDecodeTiles:
    """kernels/attention_decode.cu's blocks: `warps` warps, each streaming `keys` keys per step
    through `stages` stages of its own."""

    warps: int
    keys: int
    stages: int


# The tensor-core attention kernels' tile configurations by head-dim class (the head_dim the
# tiles hold), as kernels/geometry.cuh lists them.
ATTENTION_TC_HEAD_DIMS = tuple(CONSTANTS["GK_ATTN_TC_HEAD_DIMS"])
ATTENTION_PREFILL_TILES = {
    c: AttentionPrefillTiles(*CONSTANTS[f"GK_ATTN_TC_PREFILL_D{c}"]) for c in ATTENTION_TC_HEAD_DIMS
}
ATTENTION_DECODE_TILES = {
    c: AttentionDecodeTiles(*CONSTANTS[f"GK_ATTN_TC_DECODE_D{c}"]) for c in ATTENTION_TC_HEAD_DIMS
}
_MASK_KINDS = {"none": 0, "bool": 1, "additive": 2}


def attention_tc_head_dim(head_dim: int) -> int | None:
    """The head-dim class whose tiles serve `head_dim` (a multiple of 8, zero-padded up to the
    class), or None when no tensor-core tile does."""
    if head_dim <= 0 or head_dim % 8:
        return None
    return next((c for c in ATTENTION_TC_HEAD_DIMS if head_dim <= c), None)


def _attention_tc_common(mma_type: str, head_dim_class: int, mask: str) -> tuple:
    return (
        f"GK_MMA_TYPE={mma_type}",
        f"GK_TC_D={head_dim_class}",
        f"GK_TC_MASK={_MASK_KINDS[mask]}",
    )


def attention_tc_prefill(mma_type: str, head_dim_class: int, mask: str) -> tuple[str, tuple]:
    """The tensor-core prefill (sm_80+) over `mma_type` ("f16" or "bf16") in the class's shipped
    tiles; mask is "none", "bool" or "additive"."""
    t = ATTENTION_PREFILL_TILES[head_dim_class]
    defines = (
        *_attention_tc_common(mma_type, head_dim_class, mask),
        f"GK_TC_WARPS={t.warps}",
        f"GK_TC_MW={t.m_tiles}",
        f"GK_TC_BN={t.keys}",
        f"GK_TC_STAGES={t.stages}",
        f"GK_TC_QREG={int(t.q_regs)}",
    )
    return "attention_tc.cu", defines


@dataclass(frozen=True)
class AttentionSm90Tiles:
    """kernels/attention_sm90.cu's blocks for one head dim: `keys` keys per K/V tile through
    `stages` TMA stages; `pipe`: consumers overlap a tile's softmax with the previous tile's P V;
    `pingpong`: the two consumer warpgroups take turns issuing their products; `persist`: a
    persistent grid (a block per SM walking the row tiles) instead of a block per row tile;
    `fold`: for a positive scale, each exponent's argument is one FFMA of the unscaled score
    (calls with another scale take the tiles without it)."""

    keys: int
    stages: int
    pipe: bool
    pingpong: bool
    persist: bool = False
    fold: bool = False


ATTENTION_SM90_HEAD_DIMS = tuple(CONSTANTS["GK_ATTN_SM90_HEAD_DIMS"])
ATTENTION_SM90_ROWS = CONSTANTS["GK_ATTN_SM90_ROWS"]
ATTENTION_SM90_TILES = {  # calls without a mask
    d: AttentionSm90Tiles(*CONSTANTS[f"GK_ATTN_SM90_D{d}"]) for d in ATTENTION_SM90_HEAD_DIMS
}
ATTENTION_SM90_CAUSAL_TILES = {
    d: AttentionSm90Tiles(*CONSTANTS[f"GK_ATTN_SM90_D{d}_CAUSAL"]) for d in ATTENTION_SM90_HEAD_DIMS
}


def attention_sm90_shared(head_dim: int, tiles: AttentionSm90Tiles) -> int:
    """Dynamic shared memory of an sm_90a prefill block: the Q tile, the K and V stages, the
    alignment slack and the mbarriers."""
    stage = tiles.keys * head_dim * 2
    q = ATTENTION_SM90_ROWS * head_dim * 2
    return q + 2 * tiles.stages * stage + CONSTANTS["GK_SM90_SMEM_EXTRA"]


def attention_sm90(mma_type: str, head_dim: int, tiles=None) -> tuple[str, tuple]:
    """The sm_90a prefill (wgmma + TMA, no mask) over `mma_type` ("f16" or "bf16") for head_dim
    64, 128 or 256, in the shipped tiles of that head dim unless `tiles` says otherwise."""
    t = tiles or ATTENTION_SM90_TILES[head_dim]
    return "attention_sm90.cu", (
        f"GK_MMA_TYPE={mma_type}",
        f"GK_FA_D={head_dim}",
        f"GK_FA_BN={t.keys}",
        f"GK_FA_STAGES={t.stages}",
        f"GK_FA_PIPE={int(t.pipe)}",
        f"GK_FA_PINGPONG={int(t.pingpong)}",
        f"GK_FA_PERSIST={int(t.persist)}",
        f"GK_FA_FOLD={int(t.fold)}",
        f"GK_FA_SMEM={attention_sm90_shared(head_dim, t)}",
    )


def attention_decode_holds(head_dim_class: int, m_tiles: int) -> bool:
    """Whether the decode kernel exists for `m_tiles` m16 row tiles of this class: each warp's
    ring must hold the warp's partial state (floats) for the merge (its static_assert)."""
    t = ATTENTION_DECODE_TILES[head_dim_class]
    rows = 16 * m_tiles
    return (
        1 <= m_tiles <= CONSTANTS["GK_ATTN_TC_DECODE_MAX_MT"]
        and t.stages * t.keys * head_dim_class >= rows * head_dim_class + 2 * rows
    )


def attention_tc_decode(
    mma_type: str,
    head_dim_class: int,
    mask: str,
    m_tiles: int,
    tiles: AttentionDecodeTiles | None = None,
) -> tuple[str, tuple]:
    """The tensor-core split-KV decode (sm_80+) and its combine kernel, for blocks of `m_tiles`
    m16 tiles of query rows, in the class's shipped tiles (or `tiles`)."""
    t = tiles or ATTENTION_DECODE_TILES[head_dim_class]
    defines = (
        *_attention_tc_common(mma_type, head_dim_class, mask),
        f"GK_DEC_WARPS={t.warps}",
        f"GK_DEC_KT={t.keys}",
        f"GK_DEC_STAGES={t.stages}",
        f"GK_DEC_MT={m_tiles}",
    )
    return "attention_decode.cu", defines


def _linalg_defines(dtype) -> tuple:
    return (f"GK_T={'double' if np.dtype(dtype).itemsize == 8 else 'float'}",)


def linalg_small(dtype) -> tuple[str, tuple]:
    """One-block-per-matrix factorizations (n <= GK_LA_MAX_N) in float32 or float64."""
    return "linalg_small.cu", _linalg_defines(dtype)


def linalg_lu(dtype) -> tuple[str, tuple]:
    """The blocked LU's panel, diagonal-block inverse, row swap and determinant kernels."""
    return "linalg_lu.cu", _linalg_defines(dtype)


def linalg_qr(dtype) -> tuple[str, tuple]:
    """The blocked Householder QR's panel kernel."""
    return "linalg_qr.cu", _linalg_defines(dtype)


def linalg_svj(dtype) -> tuple[str, tuple]:
    """One-sided Jacobi (svd, eigh)."""
    return "linalg_svj.cu", _linalg_defines(dtype)


KERNEL_NAMES = {
    "elementwise.cu": ("gk_ew_contig", "gk_ew_strided"),
    "reduce.cu": (
        "gk_red_inner_warp",
        "gk_red_inner_block",
        "gk_red_outer_1",
        "gk_red_outer_vec",
        "gk_red_finish_thread",
        "gk_red_finish_block",
    ),
    "matmul.cu": ("gk_matmul",),
    "matmul_skinny.cu": ("gk_matmul_skinny",),
    "matmul_mma.cu": ("gk_matmul_mma",),
    "fill.cu": ("gk_arange",),
    "scan.cu": ("gk_scan_tiles", "gk_scan_columns", "gk_scan_columns_vec"),
    "transpose.cu": ("gk_transpose",),
    "gather.cu": ("gk_gather", "gk_scatter"),
    "compact.cu": ("gk_count_tiles", "gk_write_nonzero"),
    "philox.cu": (
        "gk_rand_f",
        "gk_rand_d",
        "gk_randn_f",
        "gk_randn_d",
        "gk_randint_32",
        "gk_randint_64",
    ),
    "nn_rows.cu": tuple(
        f"gk_{kind}_{part}"
        for kind in ("softmax", "log_softmax", "layer_norm", "rms_norm")
        for part in ("rows", "rows_staged", "split_stats", "split_apply")
    ),
    "nn_gather.cu": ("gk_embedding", "gk_rope"),
    "attention.cu": ("gk_attention", "gk_attention_combine"),
    "attention_tc.cu": ("gk_attn_tc",),
    "attention_decode.cu": ("gk_attn_decode", "gk_attn_combine"),
    "attention_sm90.cu": ("gk_attn_sm90",),
    "qkv_cache.cu": ("gk_qkv_cache",),
    "sample.cu": ("gk_sample",),
    "sort.cu": ("gk_sort_histogram", "gk_sort_scan", "gk_sort_onesweep", "gk_sort_rows"),
    "search.cu": (
        "gk_searchsorted",
        "gk_unique_count",
        "gk_unique_scan",
        "gk_unique_write",
        "gk_unique_counts",
        "gk_histogram",
        "gk_bincount",
        "gk_bin_sums",
    ),
    "gemv.cu": ("gk_gemv_nk", "gk_gemv_kn", "gk_gemv_reduce"),
    "gemm_f32.cu": ("gk_gemm_f32", "gk_gemm_f32_reduce"),
    "gemm_f32_small.cu": ("gk_gemm_f32_small",),
    "gemm_f64.cu": ("gk_gemm_f64",),
    "gemm_sm90.cu": ("gk_gemm_sm90", "gk_gemm_splitk_reduce"),
    "fft.cu": ("gk_fft_rows",),
    "fft_aux.cu": (
        "gk_fft_expand_real",
        "gk_fft_expand_herm",
        "gk_fft_real_part",
        "gk_fft_r2c_post",
        "gk_fft_c2r_pre",
        "gk_fft_chirp_pre",
        "gk_fft_chirp_filter",
        "gk_fft_chirp_mul",
        "gk_fft_chirp_post",
    ),
    "linalg_small.cu": ("gk_chol_small", "gk_lu_small", "gk_eigh_jacobi"),
    "linalg_lu.cu": ("gk_lu_panel", "gk_lu_panel_coop", "gk_lu_trinv", "gk_lu_swap", "gk_lu_det"),
    "linalg_qr.cu": ("gk_qr_panel",),
    "linalg_svj.cu": ("gk_svj",),
}


# Files that use NVIDIA-only instructions (inline PTX), with the oldest architecture they need.
CUDA_MIN_ARCH = {
    "matmul_mma.cu": 80,
    "gemm_f64.cu": 80,
    "gemm_sm90.cu": 90,
    "attention_tc.cu": 80,
    "attention_decode.cu": 80,
    "attention_sm90.cu": 90,
}
# Files built for sm_90a alone (wgmma, setmaxnreg: no other architecture runs them), by a JIT of
# their own on sm_90 devices; their instances are sm90a_instances(), not representative ones.
SM90A_FILES = ("gemm_sm90.cu", "attention_sm90.cu")


def source(file: str, defines: tuple, sources: dict) -> str:
    """The text an instance compiles: the file, after the functor of its op for elementwise.cu
    (`sources`: the built-in files by name)."""
    if file == "elementwise.cu":
        return functor_source(ELEMENTWISE[defines[0].split("=", 1)[1]]) + sources[file]
    return sources[file]


def options(defines: tuple) -> tuple[str, ...]:
    """The compiler options of an instance (GK_OP names elementwise.cu's functor, not a macro)."""
    return tuple(f"-D{d}" for d in defines if not d.startswith("GK_OP="))


def kernels_of(file: str, defines: tuple) -> tuple[str, ...]:
    """The kernels an instance defines (three-input elementwise ops have no contiguous one)."""
    if file == "elementwise.cu" and "GK_NIN=3" in defines:
        return ("gk_ew_strided",)
    return KERNEL_NAMES[file]


def representative_instances(target: str = "cuda", arch: int = 90) -> list[tuple[str, tuple]]:
    """A few instances of every built-in kernel file, covering each C type: what `jit.warmup()`
    precompiles and what the compile tests build for every architecture. `target` "hip" leaves out
    the NVIDIA-only files; for "cuda", those that need an architecture newer than `arch`."""
    f16, f32, f64, i64, b = (
        np.dtype(t) for t in ("float16", "float32", "float64", "int64", "bool")
    )
    u8, i32, bf16 = np.dtype("uint8"), np.dtype("int32"), bfloat16
    instances = [
        matmul_skinny(f16, True),
        matmul_skinny(bf16, True),
        matmul_skinny(f32, False),
        matmul_skinny(f64, True),
        elementwise("add", f32, f32, (f32, f32)),
        elementwise("multiply", f16, f16, (f16, None)),
        elementwise("true_divide", f64, f64, (i64, i64)),
        elementwise("identity", b, b, (u8,)),
        elementwise("subtract", i32, i32, (None, i32)),
        elementwise("less", f64, b, (f64, None)),
        elementwise("floor_divide", i64, i64, (i64, i64)),
        elementwise("remainder", f32, f32, (f32, f32)),
        elementwise("power", i32, i32, (i32, None)),
        elementwise("erf", f32, f32, (f32,)),
        elementwise("sigmoid", f16, f16, (f16,)),
        elementwise("absolute", i32, i32, (i32,)),
        elementwise("where", f32, f32, (b, f32, None)),
        elementwise("clip", i64, i64, (i64, None, None)),
        reduction("sum", f32, f32),
        reduction("mean", f16, f16),
        reduction("max", i64, i64),
        reduction("sum", b, i64),
        reduction("prod", i32, i64),
        reduction("argmax", f32, i64),
        reduction("argmin", u8, i64),
        reduction("min", f16, f16),
        reduction("var", f32, f32),
        reduction("std", f64, f64),
        reduction("var", i32, f64),
        reduction("any", f32, b),
        reduction("all", u8, b),
        cumsum(f32, f32),
        cumsum(i64, i64),  # nonzero's running count of hits per tile
        cumsum_pieces(f32, f32),
        cumsum_pieces(i32, i64),
        transpose(1),
        transpose(2),
        transpose(4),
        transpose(8),
        transpose(16),
        matmul(f32, f32, f32),
        matmul(f16, f16, f16),
        matmul(f64, i64, f64),
        matmul(i64, i64, i64),
        matmul(b, b, b),
        matmul_mma("f16", False, False, True, False),
        matmul_mma("f16", True, True, True, True),
        matmul_mma("f16", False, True, False, True),
        matmul_mma("f16", True, False, False, False),
        matmul_mma("bf16", False, False, True, True),
        matmul_mma("bf16", False, True, True, False),
        cumsum(i32, i64),
        cumsum(f16, f16),
        arange(f32),
        arange(i64),
        gather(1),
        gather(2),
        gather(4),
        gather(8),
        gather(16),
        compact(),
        philox(f32),
        philox(f16),
        philox(f64),
        philox(i64),
        philox(u8),
        philox(np.dtype("uint64")),
        elementwise("add", f32, bf16, (bf16, bf16)),
        elementwise("multiply", f32, bf16, (bf16, None)),
        elementwise("identity", bf16, bf16, (f64,)),
        elementwise("identity", i32, i32, (bf16,)),
        elementwise("less", f32, b, (bf16, i32)),
        elementwise("where", f32, bf16, (b, bf16, None)),
        elementwise("clip", f32, bf16, (bf16, None, None)),
        elementwise("exp", f32, bf16, (bf16,)),
        reduction("sum", bf16, bf16),
        reduction("max", bf16, bf16),
        reduction("argmax", bf16, i64),
        matmul(bf16, bf16, bf16),
        matmul(bf16, f16, f32),
        elementwise("identity", bf16, bf16, (None,)),
        elementwise("identity", f16, f16, (bf16,)),
        elementwise("identity", bf16, bf16, (f16,)),
        elementwise("identity", b, b, (bf16,)),
        elementwise("remainder", f32, bf16, (bf16, bf16)),
        elementwise("maximum", f32, bf16, (bf16, bf16)),
        elementwise("add", f32, f32, (bf16, f16)),
        reduction("mean", bf16, bf16),
        reduction("min", bf16, bf16),
        reduction("prod", bf16, bf16),
        reduction("argmin", bf16, i64),
        cumsum(bf16, bf16),
        arange(bf16),
        elementwise("relu", f32, f32, (f32,)),
        elementwise("silu", f16, f16, (f16,)),
        elementwise("gelu", f64, f64, (f64,)),
        elementwise("gelu_tanh", f32, f32, (f32,)),
        nn_rows(f16, 2),
        nn_rows(f32, 8),
        nn_rows(f32),
        nn_rows(f64),
        nn_rows(f64, 8),
        embedding(i64, f16),
        embedding(i32, f32),
        embedding(u8, f64),
        rope(f16),
        rope(f64),
        attention(f16, 128, "none"),
        attention(f32, 64, "bool"),
        attention(f16, 256, "additive"),
        attention(f64, 32, "none"),
        nn_rows(bf16, 4),
        nn_rows(bf16),
        reduction("var", bf16, bf16),
        embedding(i64, bf16),
        rope(bf16),
        attention(bf16, 128, "none"),
        attention(bf16, 64, "additive"),
        attention(bf16, 256, "bool"),
        qkv_cache(f16),
        qkv_cache(bf16),
        qkv_cache(f32),
        qkv_cache(f64),
        sample(f16),
        sample(bf16),
        sample(f32),
        sample(f64),
        *(sort_defines(t, v, tuning(t.itemsize, v)) for t in (f32, b, f64) for v in (False, True)),
        sort_defines(np.dtype("int16"), True, tuning(2, True)),
        sort_defines(bf16, False, tuning(2, False)),
        search_defines(f32),
        search_defines(i64),
        search_defines(bf16),
        search_defines(u8),
        gemv("bfloat16", "nk", 1, True),
        gemv("bfloat16", "kn", 1, True),
        gemv("float16", "nk", 4, True, epilogue=(True, "gelu", True)),
        gemv("float32", "kn", 16, False, epilogue=(False, "silu", True)),
        gemv("float32", "nk", 2, False, (2, 4, 0)),
        gemm_f32(False, True, True),
        gemm_f32(True, False, False, epilogue=(True, "gelu_tanh", True)),
        gemm_f32(True, True, True, (1, 1), (False, "relu", False)),
        gemm_f32(False, True, True, epilogue=(True, "gelu", False), split=True),
        gemm_f32_small(),
        gemm_f32_small((True, "gelu_tanh", True)),
        gemm_f64(False, False, True, 128, False, True),
        gemm_f64(True, True, False, 64, True, False),
        gemm_f64(False, True, True, 64, False, False),
        gemm_f64(True, False, True, 128, True, True),
        # Tensor-core attention: the prefill of every head-dim class (d96's rows of 12 chunks
        # take the swizzle's other branch), decode with one and two m16 row tiles; both types,
        # every mask kind.
        attention_tc_prefill("bf16", 64, "bool"),
        attention_tc_prefill("f16", 96, "additive"),
        attention_tc_prefill("bf16", 128, "none"),
        attention_tc_prefill("f16", 256, "none"),
        attention_tc_decode("bf16", 128, "none", 1),
        attention_tc_decode("f16", 96, "bool", 2),
        attention_tc_decode("f16", 256, "additive", 1),
        linalg_small(f32),
        linalg_small(f64),
        linalg_lu(f32),
        linalg_lu(f64),
        linalg_qr(f32),
        linalg_qr(f64),
        linalg_svj(f32),
        linalg_svj(f64),
        *_complex_and_newer_instances(),
        *_fft_instances(),
    ]
    if target == "hip":
        return [x for x in instances if x[0] not in CUDA_MIN_ARCH]
    return [x for x in instances if CUDA_MIN_ARCH.get(x[0], 0) <= arch]


def _complex_and_newer_instances() -> list[tuple[str, tuple]]:
    """Instances over complex64 / complex128 (kernels/complex.cuh) and of the ops that need a
    helper of their own (nextafter in each stored format, integer-only ops, ldexp's mixed
    operands)."""
    c64, c128 = np.dtype("complex64"), np.dtype("complex128")
    f16, f32, f64 = (np.dtype(t) for t in ("float16", "float32", "float64"))
    i8, i16, i32, i64 = (np.dtype(t) for t in ("int8", "int16", "int32", "int64"))
    u32, b = np.dtype("uint32"), np.dtype("bool")
    return [
        elementwise("add", c64, c64, (c64, None)),
        elementwise("multiply", c128, c128, (c128, c128)),
        elementwise("true_divide", c64, c64, (c64, f32)),
        elementwise("power", c128, c128, (c128, None)),
        elementwise("exp", c64, c64, (c64,)),
        elementwise("log", c128, c128, (c128,)),
        elementwise("sqrt", c64, c64, (c64,)),
        elementwise("tanh", c128, c128, (c128,)),
        elementwise("arcsinh", c64, c64, (c64,)),
        elementwise("arccosh", c128, c128, (c128,)),
        elementwise("arctanh", c64, c64, (c64,)),
        elementwise("sign", c64, c64, (c64,)),
        elementwise("absolute", c64, f32, (c64,)),
        elementwise("angle", c128, f64, (c128,)),
        elementwise("maximum", c64, c64, (c64, c64)),
        elementwise("isnan", c128, b, (c128,)),
        elementwise("equal", c64, b, (c64, None)),
        elementwise("logical_and", c128, b, (c128, c128)),
        elementwise("identity", f32, f32, (c64,)),
        elementwise("identity", b, b, (c128,)),
        elementwise("identity", c128, c128, (f16,)),
        elementwise("identity", c64, c64, (None,)),
        elementwise("identity", c64, c64, (bfloat16,)),
        elementwise("nextafter", f16, f16, (f16, f16)),
        elementwise("nextafter", bfloat16, bfloat16, (bfloat16, None)),
        elementwise("nextafter", f64, f64, (f64, f64)),
        elementwise("gcd", i64, i64, (i64, i64)),
        elementwise("lcm", i8, i8, (i8, None)),
        elementwise("left_shift", i8, i8, (i8, i8)),
        elementwise("right_shift", u32, u32, (u32, None)),
        elementwise("ldexp", f32, f32, (f32, i32)),
        elementwise("logaddexp", f64, f64, (f64, f64)),
        elementwise("reciprocal", i32, i32, (i32,)),
        elementwise("fmod", i16, i16, (i16, i16)),
        elementwise("heaviside", f32, f16, (f16, f16)),
        elementwise("signbit", f64, b, (i32,)),
        reduction("sum", c64, c64),
        reduction("mean", c128, c128),
        reduction("prod", c128, c128),
        reduction("max", c64, c64),
        reduction("argmin", c128, i64),
        matmul(c64, c64, c64),
        matmul(c128, c128, c128),
        matmul(c64, f32, c64),
    ]


def _fft_instances() -> list[tuple[str, tuple]]:
    """FFT instances: the longest one-block rows of each precision (radix 16), columns of a
    four-step pass, every odd radix, short rows several to a block; the auxiliary kernels."""
    flow = fft_plan.Flow
    inverse = flow(conj_in=True, conj_out=True, scaled=True)
    column = flow(direct_in=False, direct_out=False, twiddled=True, ndim=2)
    blocks = [
        (fft_plan.block(8192, 8, False, 1), "float", flow()),
        (fft_plan.block(4096, 8, False, 1), "float", flow(direct_out=False, ndim=2)),
        (fft_plan.block(4096, 16, False, 1), "double", inverse),
        (fft_plan.block(4096, 8, True, 4096), "float", column),
        (fft_plan.block(4096, 16, True, 4096), "double", flow(direct_in=False, ndim=3)),
        (fft_plan.block(5 * 7 * 11 * 13, 8, False, 1), "float", flow(cropped=True)),
        (fft_plan.block(12, 16, False, 64), "double", flow(ndim=4)),
    ]
    return [("fft.cu", fft_plan.defines(b, real, f)) for b, real, f in blocks] + [
        ("fft_aux.cu", fft_plan.aux_defines(real)) for real in ("float", "double")
    ]


def sm90a_instances() -> list[tuple[str, tuple]]:
    """Instances of the sm_90a GEMM that products commonly take (jit.warmup on sm_90, the
    compile and SASS tests): a @ b and x @ w.T of row-major operands and an M-major a over a long
    K (the bulk-store epilogue), a @ b whose output rows it cannot copy (n % 8 != 0: staged), the
    128 x 128 tile with the bulk-store epilogue, a fused epilogue, TF32, the small tile of split-K
    products, and the preemptible form of long best-effort products."""
    return [
        gemm_sm90("bfloat16", 128, 256, False, True, True, bulk=True),
        gemm_sm90("bfloat16", 128, 256, False, False, True, bulk=True),
        gemm_sm90("float16", 256, 128, True, True, False, bulk=True),
        gemm_sm90("bfloat16", 128, 256, False, True, True),
        gemm_sm90("float16", 128, 128, False, True, True, bulk=True),
        gemm_sm90("bfloat16", 128, 256, False, False, True, (True, "gelu", True)),
        gemm_sm90("float32", 128, 256, False, False, True),
        gemm_sm90("bfloat16", 128, 64, False, True, True, (False, "silu", True)),
        gemm_sm90("float16", 128, 128, True, False, False, (True, None, False)),
        gemm_sm90("bfloat16", 128, 256, False, True, False, NO_EPILOGUE, preempt=True),
        gemm_sm90("bfloat16", 128, 256, False, False, False, NO_EPILOGUE, preempt=True),
        *dict.fromkeys(  # the causal tiles and the unmasked ones, each instance once
            attention_sm90(t, d, tiles[d])
            for tiles in (ATTENTION_SM90_TILES, ATTENTION_SM90_CAUSAL_TILES)
            for t in ("bf16", "f16")
            for d in ATTENTION_SM90_HEAD_DIMS
        ),
    ]
