"""Planning of matrix products on CUDA: which kernel family serves a product (by compute
capability, dtypes and layouts), and for the sm_90a GEMM (kernels/gemm_sm90.cu) its tile, split of
K, grid and the TMA tensor maps of its operands; for the GEMV and exact-float32 kernels their
grids. Pure functions of shapes, strides and device facts that return descriptions; gemm.py turns
them into a plan's launches. Shared constants come from kernels/geometry.cuh through
gpukit._native, never retyped here."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import kernels
from ..args import CONSTANTS

_C = CONSTANTS

# Kernel families, as gpukit.info() and gpukit.linalg.matmul_path() name them.
SM90 = "sm90a-wgmma-tma"
SM80 = "sm80-mma"
GENERIC = "generic"
GEMV = "gemv"
SIMT_F32 = "f32-simt"
DMMA_F64 = "f64-dmma"

# Products of at most this many rows go to the GEMV kernels; on sm_90 the GEMM is faster from 4
# rows (measured on an H100: 4 x 4096 -> 11008 bf16 ran 1928 GB/s on the sm_90a GEMM, 1826 on
# the GEMV; notes/gemm.md). Elsewhere (not measured) as far as the skinny kernel went before.
# Rates that the scheduler's expected durations assume (its cap on best-effort work in flight),
# from the H100 figures in notes/gemm.md: TFLOP/s per kernel family, and HBM bytes per ns.
EXPECTED_TFLOPS = {
    SM90: 700.0,
    SM80: 230.0,
    SIMT_F32: 43.0,
    DMMA_F64: 40.0,
    GEMV: 100.0,
    GENERIC: 20.0,
}
EXPECTED_BYTES_PER_NS = 2500.0
GEMV_MAX_ROWS_SM90 = 3
GEMV_MAX_ROWS_OTHER = 8

# cuda.h's CUtensorMapDataType codes by dtype name ("tf32": float32 rounded to TF32 while copied),
# and the modes every operand map takes: no interleave, 128-byte swizzle (the stage rows' span),
# 128-byte L2 promotion, out-of-bounds elements read as zero.
_TMA_DTYPE = {"float16": 6, "bfloat16": 9, "float32": 7, "tf32": 11}
_TMA_MODES = (0, 3, 2, 0)


def tma_dtype(dtype: str) -> int:
    """cuda.h's CUtensorMapDataType code of a 16-bit float dtype name (or "tf32")."""
    return _TMA_DTYPE[dtype]


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def item_bytes(dtype: str) -> int:
    return 4 if dtype == "float32" else 2


@dataclass(frozen=True)
class Matrix:
    """One operand of a (batched) product as the kernel sees it: element strides of its two matrix
    axes and of the one (collapsed) batch axis (0: broadcast), and whether its address is 16-byte
    aligned."""

    s_row: int
    s_col: int
    s_batch: int
    aligned: bool


@dataclass(frozen=True)
class TensorMap:
    """Arguments of cuTensorMapEncodeTiled for one operand (the address comes at launch): rank 3
    (contiguous axis, strided axis, batch), innermost first; strides in bytes of axes 1 and 2."""

    dtype_code: int
    dims: tuple[int, int, int]
    strides: tuple[int, int]
    box: tuple[int, int, int]

    def descriptor(self) -> tuple:
        """The launch table's gk_tensor_map_desc as a tensor-map slot takes it: (data type, rank,
        global dims [5], global strides [4], box [5], element strides [5], (interleave, swizzle,
        L2 promotion, out-of-bounds fill))."""
        rank = len(self.dims)

        def pad(values, n):
            return (*values, *[0] * (n - len(values)))

        return (
            self.dtype_code,
            rank,
            pad(self.dims, 5),
            pad(self.strides, 4),
            pad(self.box, 5),
            pad((1,) * rank, 5),
            _TMA_MODES,
        )


@dataclass(frozen=True)
class Sm90Plan:
    file: str
    defines: tuple[str, ...]
    bm: int
    bn: int
    shared_bytes: int
    grid: int
    threads: int
    splits: int
    k_tiles: int
    k_tiles_per_split: int
    tiles_m: int
    tiles_n: int
    total_tiles: int
    map_a: TensorMap
    map_b: TensorMap
    a_batched: bool
    b_batched: bool
    workspace_bytes: int  # fp32 split-K partials; 0 without a split
    bulk: bool  # the bulk-store epilogue (GK_GEMM_BULK_STORE), else the staged one


# Tiles the sm_90a kernel is instantiated with (BM, BN), and their relative speed per output
# element when the GPU is full (smaller tiles reload operands more often per multiply-add).
SM90_TILES = {(128, 256): 1.0, (256, 128): 1.0, (128, 128): 0.85, (128, 64): 0.6}

# Costs in units of one 128 x 256 x 64-deep tile step (about 0.7 us on an H100 SM): the
# split-K pass moves 4-byte partials at about 56 bytes per unit and costs a launch (~3 us).
_UNIT_BYTES = 56
_LAUNCH_UNITS = 4


def _tile_cost(m, n, batch, k_tiles, bm, bn, sms, splits=1):
    """Relative time of a tiling: waves of tiles (each a block's share of K) over the tile's
    speed, plus the split-K partials' writes, reads and the extra launch."""
    tiles = batch * math.ceil(m / bm) * math.ceil(n / bn) * splits
    waves = math.ceil(tiles / sms)
    per_tile = bm * bn / (128 * 256) * math.ceil(k_tiles / splits) / SM90_TILES[(bm, bn)]
    if splits == 1:
        return waves * per_tile
    partials = batch * m * n * 4 * (2 * splits + 1) / (_UNIT_BYTES * 128 * 256)
    return waves * per_tile + partials + _LAUNCH_UNITS


def sm90_wait1(k_tiles_per_split: int) -> bool:
    """Whether consumers keep one wgmma group in flight: measured faster for products of up to
    64 K slices (4096 deep: +5% at 4096^3), slower beyond (8192^3)."""
    return k_tiles_per_split <= 64


def sm90_k_tiles(dtype: str, k: int) -> int:
    """K slices of one stage (128 bytes of K) that a product of depth k takes."""
    return _ceil(k * item_bytes(dtype), _C["GK_SM90_ROW_BYTES"])


def choose_sm90_tile(m, n, k_tiles, batch, sms) -> tuple[int, int, int]:
    """(BM, BN, splits) of the cheapest tiling; K is split only when the tiles leave more than
    half the SMs idle and each split keeps at least 8 K slices."""
    best = None
    for bm, bn in SM90_TILES:
        for splits in (1, 2, 3, 4, 6, 8, 12, 16):
            if splits > 1 and (
                batch * math.ceil(m / bm) * math.ceil(n / bn) * 2 > sms or k_tiles < 8 * splits
            ):
                continue
            cost = _tile_cost(m, n, batch, k_tiles, bm, bn, sms, splits)
            if best is None or cost < best[0] - 1e-9:
                best = (cost, bm, bn, splits)
    return best[1:]


def out_rows_bulk(dtype: str, n: int, so_m: int, so_z: int, aligned: bool) -> bool:
    """Whether each output row of a product is a whole number of 16-byte units at a 16-byte
    aligned address (what the bulk-store epilogue's row copies need): 16-bit outputs, n % 8 == 0,
    the address and the row and batch strides aligned."""
    item = item_bytes(dtype)
    return (
        item == 2 and aligned and (n * item) % 16 == 0 and (so_m * item) % 16 == 0
        and (so_z * item) % 16 == 0
    )  # fmt: skip


def sm90_bulk(dtype, splits, epilogue, preempt, out_bulk) -> bool:
    """Whether a product takes the bulk-store epilogue (GK_GEMM_BULK_STORE): plain 16-bit products
    whose output rows it can copy (`out_bulk`: out_rows_bulk), K not split, not the preemptible
    form. The rest keep the staged epilogue. Measured on the batched small-K row 21.5 us against
    26.6 staged, and 1-2% faster on the long-K rows (notes/gemm.md, "batched")."""
    return (
        out_bulk and dtype != "float32" and tuple(epilogue) == kernels.NO_EPILOGUE
        and splits == 1 and not preempt
    )  # fmt: skip


def _operand_map(dtype_code, item, mat: Matrix, rows, cols, batch, box_inner, box_outer,
                 cols_inner) -> TensorMap:  # fmt: skip
    """The tensor map of an operand read as (contiguous axis, other axis, batch). `rows`/`cols`:
    its extents along s_row / s_col; `cols_inner`: the contiguous axis is the second."""
    if cols_inner:
        inner, outer, s_outer = cols, rows, mat.s_row
    else:
        inner, outer, s_outer = rows, cols, mat.s_col
    if outer == 1:  # one row: any legal stride
        s_outer = _ceil(inner * item, 16) * 16 // item
    s_batch = mat.s_batch if batch > 1 and mat.s_batch else 0
    batch_dim = batch if s_batch else 1
    # A broadcast operand's batch axis has extent 1: any legal stride will do.
    batch_stride = s_batch * item if s_batch else _ceil(outer * s_outer * item, 16) * 16
    return TensorMap(
        dtype_code,
        (inner, outer, batch_dim),
        (s_outer * item, batch_stride),
        (box_inner, box_outer, 1),
    )


def sm90_layouts(a: Matrix, b: Matrix):
    """(a is M-major, b is N-major), or None when an operand has neither axis contiguous."""
    if a.s_col == 1:
        a_mn = False
    elif a.s_row == 1:
        a_mn = True
    else:
        return None
    if b.s_row == 1:
        b_mn = False  # b(k, n) at n * ldb + k: K-major
    elif b.s_col == 1:
        b_mn = True
    else:
        return None
    return a_mn, b_mn


TF32_NEEDS_K_MAJOR = "tf32 reads K-major operands only"


def _addressable(mat: Matrix, lead: int, outer: int, item: int, batch: int) -> bool:
    """Whether TMA can address an operand: its address, leading stride (unused for one row)
    and batch stride 16-byte aligned, and the strides positive (0 for a broadcast batch): a
    tensor map walks memory forwards, and a broadcast row (stride 0) is not a tensor."""
    if outer > 1 and lead <= 0:
        return False
    if batch > 1 and mat.s_batch < 0:
        return False
    if outer == 1:
        lead = 0
    batch_ok = batch == 1 or (mat.s_batch * item) % 16 == 0
    return mat.aligned and (lead * item) % 16 == 0 and batch_ok


def sm90_supported(dtype: str, m, n, k, batch, a: Matrix, b: Matrix, tf32: bool) -> str | None:
    """Why the sm_90a kernel cannot take this product (None: it can). TMA needs 16-byte aligned
    addresses and strides; TF32 operands must be K-major (TF32_NEEDS_K_MAJOR: copies would do)."""
    if dtype not in ("float16", "bfloat16") and not (dtype == "float32" and tf32):
        return f"{dtype or 'mixed dtypes'} without tf32"
    if min(m, n, k, batch) < 1:
        return "an empty product"
    if max(m, n, k) >= 2**31 or batch >= 2**31:
        return "extents beyond 2**31"
    layouts = sm90_layouts(a, b)
    if layouts is None:
        return "an operand with no contiguous axis"
    item = item_bytes(dtype)
    a_lead, a_outer = (a.s_row, m) if a.s_col == 1 else (a.s_col, k)
    b_lead, b_outer = (b.s_col, n) if b.s_row == 1 else (b.s_row, k)  # as sm90_layouts reads
    for name, mat, lead, outer in (("a", a, a_lead, a_outer), ("b", b, b_lead, b_outer)):
        if not _addressable(mat, lead, outer, item, batch):
            return f"TMA cannot address {name} (address and strides 16-byte aligned, positive)"
    if dtype == "float32" and layouts != (False, False):
        return TF32_NEEDS_K_MAJOR
    return None


def tf32_in_place(p: Problem) -> tuple[bool, bool]:
    """Whether the sm_90a kernel reads each TF32 operand as it lies: K-major and addressable
    (else the plan copies it)."""
    a, b = p.matrices()
    return (
        a.s_col == 1 and _addressable(a, a.s_row, p.m, 4, p.batch),
        b.s_row == 1 and _addressable(b, b.s_col, p.n, 4, p.batch),
    )


def plan_sm90(dtype: str, m: int, n: int, k: int, batch: int, a: Matrix, b: Matrix, sms: int,
              epilogue=kernels.NO_EPILOGUE, tile=None, wait1=None, preempt=False,
              out_bulk=False, bulk=None) -> Sm90Plan:  # fmt: skip
    """The launch of gk_gemm_sm90 for out (batch, m, n) = a (batch, m, k) @ b (batch, k, n).
    `epilogue`: (bias, activation name, residual). `tile`: (BM, BN, splits) instead of the
    cheapest. float32 multiplies as TF32 (operands rounded while TMA copies them). `preempt`:
    the preemptible form, which never splits K (its partial sums would not survive a yield).
    `out_bulk`: the output's rows can take the bulk-store epilogue (out_rows_bulk); `bulk`: that
    epilogue (True) or the staged one (False) instead of sm90_bulk's choice. Call sm90_supported
    first."""
    item = item_bytes(dtype)
    bk = _C["GK_SM90_ROW_BYTES"] // item
    k_tiles = sm90_k_tiles(dtype, k)
    bm, bn, splits = tile or choose_sm90_tile(m, n, k_tiles, batch, sms)
    if preempt and splits != 1:
        raise ValueError(f"the preemptible GEMM does not split K (asked for {splits} splits)")
    per_split = _ceil(k_tiles, splits)
    splits = _ceil(k_tiles, per_split)  # no empty split
    if wait1 is None:
        wait1 = sm90_wait1(per_split)
    a_mn, b_mn = sm90_layouts(a, b)
    code = _TMA_DTYPE["tf32" if dtype == "float32" else dtype]
    map_a = _operand_map(
        code, item, a, m, k, batch, 64 if a_mn else bk, bk if a_mn else bm, not a_mn
    )
    map_b = _operand_map(code, item, b, k, n, batch, 64 if b_mn else bk, bk if b_mn else bn, b_mn)
    tiles_m, tiles_n = _ceil(m, bm), _ceil(n, bn)
    total = tiles_m * tiles_n * batch * splits
    allowed = sm90_bulk(dtype, splits, epilogue, preempt, out_bulk)
    if bulk is None:
        bulk = allowed
    elif bulk and not allowed:
        raise ValueError("the bulk-store epilogue takes plain 16-bit products with aligned output "
                         "rows, K not split, not preemptible")  # fmt: skip
    file, defines = kernels.gemm_sm90(dtype, bm, bn, a_mn, b_mn, wait1, epilogue, preempt, bulk)
    return Sm90Plan(
        file=file,
        defines=defines,
        bm=bm,
        bn=bn,
        shared_bytes=kernels.sm90_stages(bm, bn, bulk)[1],
        grid=min(total, sms),
        threads=_C["GK_SM90_THREADS"],
        splits=splits,
        k_tiles=k_tiles,
        k_tiles_per_split=per_split,
        tiles_m=tiles_m,
        tiles_n=tiles_n,
        total_tiles=total,
        map_a=map_a,
        map_b=map_b,
        a_batched=map_a.dims[2] > 1,
        b_batched=map_b.dims[2] > 1,
        workspace_bytes=splits * batch * m * n * 4 if splits > 1 else 0,
        bulk=bulk,
    )


@dataclass(frozen=True)
class GemvPlan:
    """A launch of kernels/gemv.cu: `kernel` over grid (column blocks, K splits)."""

    file: str
    defines: tuple[str, ...]
    kernel: str
    grid: tuple[int, int]
    threads: int
    splits: int
    k_per_split: int
    workspace_bytes: int  # float partials (splits, m, n) when splits > 1


def plan_gemv(layout: str, dtype: str, m: int, n: int, k: int, vec: bool, sms: int,
              epilogue=kernels.NO_EPILOGUE, tune=None) -> GemvPlan:  # fmt: skip
    """out (m, n) = x (m, k) @ w for w (n, k) ("nk", linear's weight) or (k, n) ("kn").
    `vec`: 16-byte loads are allowed (see kernels/gemv.cu). K is split over blocks when the
    column blocks alone leave SMs idle. `tune`: as gpukit.runtime.kernels.gemv takes it."""
    file, defines = kernels.gemv(dtype, layout, kernels.gemv_rows_compiled(m), vec, tune, epilogue)
    per_vec = 16 // item_bytes(dtype)
    threads = _C["GK_GEMV_THREADS"]
    width = kernels.gemv_tune(layout, tune)[0]
    cols = threads // _C["GK_LANES"] * width if layout == "nk" else width * per_vec
    blocks = _ceil(n, cols)
    splits = 1
    if blocks < 2 * sms:
        # Each split keeps at least 512 k; vector loads need splits on 16-byte boundaries.
        splits = max(1, min(_ceil(2 * sms, blocks), k // 512))
    grain = per_vec if vec else 1
    per_split = _ceil(_ceil(k, splits), grain) * grain
    splits = _ceil(k, per_split) if k else 1
    return GemvPlan(
        file=file,
        defines=defines,
        kernel=f"gk_gemv_{layout}",
        grid=(blocks, splits),
        threads=threads,
        splits=splits,
        k_per_split=max(per_split, 1),
        workspace_bytes=splits * m * n * 4 if splits > 1 else 0,
    )


@dataclass(frozen=True)
class F32Plan:
    """A launch of kernels/gemm_f32.cu or gemm_f32_small.cu over grid (column tiles, row tiles,
    batch x K ranges), K in `splits` ranges of `k_per_split` (gemm_f32.cu only; unused when
    splits is 1)."""

    file: str
    defines: tuple[str, ...]
    kernel: str
    grid: tuple[int, int, int]
    threads: int
    splits: int
    k_per_split: int


# The shortest range of K a split of the exact float32 product takes: 16 slices of GK_F32_BK, so
# that each block's pipeline runs past its first stages.
F32_SPLIT_K = 128


def f32_splits(m: int, n: int, k: int, batch: int, sms: int) -> tuple[int, int]:
    """(splits, k_per_split) of an exact float32 product: K is split when gemm_f32.cu's 128 x 128
    tiles would leave more than half the SMs idle and K holds two ranges of F32_SPLIT_K, into as
    many ranges as fill the SMs' block slots once (GK_F32_MIN_BLOCKS_DEFAULT a SM). A function
    of the whole product, so that its row slices share it (the same bits whether or not the
    scheduler slices)."""
    tile, bk = _C["GK_F32_TILE"], _C["GK_F32_BK"]
    tiles = _ceil(m, tile) * _ceil(n, tile) * batch
    if tiles * 2 > sms or k < 2 * F32_SPLIT_K:
        return 1, k
    splits = min(sms * _C["GK_F32_MIN_BLOCKS_DEFAULT"] // tiles, k // F32_SPLIT_K)
    per = _ceil(_ceil(k, splits), bk) * bk
    return _ceil(k, per), per


def plan_f32(m: int, n: int, batch: int, a_mn: bool, b_mn: bool, vec: bool, sms: int,
             epilogue=kernels.NO_EPILOGUE, tune=None, split=(1, 0)) -> F32Plan:  # fmt: skip
    """The exact float32 product: `a_mn` / `b_mn` say a is contiguous along m and b along n
    (else along k); `vec`: 16-byte loads are allowed. `tune`: as kernels.gemm_f32 takes it.
    `split`: f32_splits of the whole product. Unsplit products whose 128 x 128 tiles would
    occupy at most a GK_F32_SMALL_SHARE-th of the `sms` SMs take the 32 x 32 tiles of
    gemm_f32_small.cu (the same bits)."""
    tile, z = _C["GK_F32_TILE"], min(batch, 65535)
    splits, per = split
    if splits > 1:
        file, defines = kernels.gemm_f32(a_mn, b_mn, vec, tune, epilogue, split=True)
        grid = (_ceil(n, tile), _ceil(m, tile), min(batch * splits, 65535))
        return F32Plan(file, defines, "gk_gemm_f32", grid, _C["GK_F32_THREADS"], splits, per)
    if tune is None and _ceil(n, tile) * _ceil(m, tile) * z * _C["GK_F32_SMALL_SHARE"] <= sms:
        small = _C["GK_F32_SMALL_TILE"]
        file, defines = kernels.gemm_f32_small(epilogue)
        grid = (_ceil(n, small), _ceil(m, small), z)
        return F32Plan(file, defines, "gk_gemm_f32_small", grid, _C["GK_F32_SMALL_THREADS"], 1, 0)
    file, defines = kernels.gemm_f32(a_mn, b_mn, vec, tune, epilogue)
    grid = (_ceil(n, tile), _ceil(m, tile), z)
    return F32Plan(file, defines, "gk_gemm_f32", grid, _C["GK_F32_THREADS"], 1, 0)


@dataclass(frozen=True)
class Problem:
    """A (batched) product out (batch, m, n) = a (batch, m, k) @ b (batch, k, n) as the CUDA
    backend sees it after collapsing the batch axes: element strides of each operand's matrix
    axes (sa = (m, k), sb = (k, n), so = (m, n)) and of each batch axis, and whether each
    address is 16-byte aligned."""

    dtype: str  # the common dtype name, or "" when the operands' dtypes differ
    m: int
    n: int
    k: int
    bshape: tuple[int, ...]
    sa: tuple[int, int]
    sb: tuple[int, int]
    so: tuple[int, int]
    ba: tuple[int, ...]
    bb: tuple[int, ...]
    bo: tuple[int, ...]
    aligned: tuple[bool, bool, bool]  # a, b, out

    @property
    def batch(self) -> int:
        return math.prod(self.bshape)

    def matrices(self) -> tuple[Matrix, Matrix]:
        one = len(self.bshape) == 1
        return (
            Matrix(*self.sa, self.ba[0] if one else 0, self.aligned[0]),
            Matrix(*self.sb, self.bb[0] if one else 0, self.aligned[1]),
        )


@dataclass(frozen=True)
class F64Plan:
    """A launch of kernels/gemm_f64.cu over grid (column tiles, row tiles, batch) with
    `shared_bytes` of dynamic shared memory (its cp.async stages), square tiles of `tile`."""

    file: str
    defines: tuple[str, ...]
    tile: int
    grid: tuple[int, int, int]
    threads: int
    shared_bytes: int


def plan_f64(m: int, n: int, batch: int, layout: tuple[bool, bool, bool], sms: int,
             bias: bool, residual: bool, tile: int | None = None) -> F64Plan:  # fmt: skip
    """The float64 product of `layout` (tile_layout's): GK_F64_TILE tiles where they fill the
    SMs and the copies are 16 bytes (8-byte copies at that tile spill registers), else
    GK_F64_SMALL_TILE; `tile` forces one. A function of the whole product's shape, so that its
    row slices share it."""
    a_mn, b_mn, vec = layout
    big, small = _C["GK_F64_TILE"], _C["GK_F64_SMALL_TILE"]
    if tile is None:
        tile = big if vec and _ceil(m, big) * _ceil(n, big) * batch >= sms else small
    file, defines = kernels.gemm_f64(a_mn, b_mn, vec, tile, bias, residual)
    bk, pad = _C["GK_F64_BK"], _C["GK_F64_PAD"]
    operand = max(tile * (bk + pad), bk * (tile + pad))  # gemm_f64.cu's GK_F64_OPERAND
    shared = _C["GK_F64_STAGES"] * 2 * operand * 8
    grid = (_ceil(n, tile), _ceil(m, tile), min(batch, 65535))
    return F64Plan(file, defines, tile, grid, _C["GK_F64_THREADS"], shared)


@dataclass(frozen=True)
class GemvRows:
    """A product as the GEMV kernels take it: `rows` rows of x (a's batch folded in) at row
    stride `sx_m`, k stride `sx_k`, out rows at `so_m`, and the weight's layout."""

    layout: str  # "nk": b = w.T of w (n, k) rows contiguous; "kn": b = w (k, n) rows contiguous
    rows: int
    sx_m: int
    sx_k: int
    so_m: int


def gemv_rows(p: Problem) -> GemvRows | None:
    """The GEMV view of a product, when it has one: b without a batch, one of b's axes
    contiguous, out's rows contiguous, and a's batch foldable into rows."""
    if any(p.bb) or p.so[1] != 1 or len(p.bshape) > 1:
        return None
    if p.sb[0] == 1 or p.k == 1:
        layout = "nk"
    elif p.sb[1] == 1 or p.n == 1:
        layout = "kn"
    else:
        return None
    items = p.batch
    sx_m, so_m = p.sa[0], p.so[0]
    if items > 1:
        if p.m == 1:
            sx_m, so_m = p.ba[0], p.bo[0]
        elif p.ba[0] != p.m * p.sa[0] or p.bo[0] != p.m * p.so[0]:
            return None
    return GemvRows(layout, p.m * items, sx_m, p.sa[1], so_m)


def gemv_vec(g: GemvRows, p: Problem) -> bool:
    """Whether the GEMV kernels may load 16 bytes at a time (see kernels/gemv.cu)."""
    per_vec = 16 // item_bytes(p.dtype)
    if not p.aligned[1]:
        return False
    if g.layout == "nk":
        return (
            g.sx_k == 1
            and p.aligned[0]
            and p.k % per_vec == 0
            and p.sb[1] % per_vec == 0
            and (g.rows == 1 or g.sx_m % per_vec == 0)
        )
    return p.n % per_vec == 0 and p.sb[0] % per_vec == 0


def gemv_max_rows(cc: tuple[int, int], sm90a: bool) -> int:
    return min(_C["GK_GEMV_MAX_ROWS"], GEMV_MAX_ROWS_SM90 if sm90a else GEMV_MAX_ROWS_OTHER)


def tile_layout(p: Problem, per_copy: int) -> tuple[bool, bool, bool]:
    """(a M-major, b N-major, 16-byte copies) of the register-tiled kernels (exact float32:
    per_copy 4 elements; float64: 2) for `p`, one batch axis at most (their grid's z): 16-byte
    copies need both operands aligned, their contiguous extents and leading strides multiples
    of per_copy."""
    a, b = p.matrices()
    a_mn = a.s_row == 1 and a.s_col != 1
    b_mn = b.s_col == 1
    a_lead = a.s_col if a_mn else a.s_row
    b_lead = b.s_row if b_mn else b.s_col
    vec = (
        p.aligned[0]
        and p.aligned[1]
        and (p.m if a_mn else p.k) % per_copy == 0
        and (p.n if b_mn else p.k) % per_copy == 0
        and a_lead % per_copy == 0
        and b_lead % per_copy == 0
        and (a.s_row == 1 if a_mn else a.s_col == 1)
        and (b.s_col == 1 if b_mn else b.s_row == 1)
        and (p.batch == 1 or (a.s_batch % per_copy == 0 and b.s_batch % per_copy == 0))
    )
    return a_mn, b_mn, vec


def matmul_path(p: Problem, cc: tuple[int, int], sm90a: bool, tf32: bool) -> str:
    """The kernel family that computes `p` on a CUDA device of compute capability `cc` (`sm90a`:
    the sm_90a GEMM can be built and launched there). Products with nothing to sum (k = 0)
    take the tiled kernels, which write the zeros and the bias."""
    if p.k == 0:
        return SM80 if p.dtype in ("float16", "bfloat16") and cc >= (8, 0) else GENERIC
    if p.dtype in kernels.GEMV_DTYPES:
        g = gemv_rows(p)
        if g is not None and 1 <= g.rows <= gemv_max_rows(cc, sm90a):
            return GEMV
    if p.dtype == "float64":
        g = gemv_rows(p)
        if g is not None and g.layout == "nk" and 1 <= g.rows <= _C["GK_SKINNY_M"]:
            return GEMV  # kernels/matmul_skinny.cu
    if sm90a and len(p.bshape) <= 1 and min(p.m, p.n, p.batch) > 0:
        if p.dtype == "float32" and tf32:
            if max(p.m, p.n, p.k, p.batch) < 2**31:
                return SM90  # (the plan copies operands that TMA cannot read as TF32)
        else:
            a, b = p.matrices()
            if sm90_supported(p.dtype, p.m, p.n, p.k, p.batch, a, b, tf32) is None:
                return SM90
    if p.dtype == "float32" and len(p.bshape) <= 1:
        return SIMT_F32
    if p.dtype == "float64" and len(p.bshape) <= 1 and cc >= (8, 0):
        return DMMA_F64
    if p.dtype in ("float16", "bfloat16") and cc >= (8, 0):
        return SM80
    return GENERIC


def describe_paths(cc: tuple[int, int], sm90a: bool, tf32: bool) -> str:
    """Which kernel family takes which products on a device of compute capability `cc`, for
    gpukit.info() (gpukit.linalg.matmul_path names the one of a given product)."""
    rows = gemv_max_rows(cc, sm90a)
    wide = SM90 if sm90a else SM80 if cc >= (8, 0) else GENERIC
    f32 = f"{SM90} (tf32 allowed)" if sm90a and tf32 else f"{SIMT_F32} (exact)"
    f64 = f"; float64 {DMMA_F64}" if cc >= (8, 0) else ""
    return (
        f"float16/bfloat16 {wide}; float32 {f32}{f64}; up to {rows} rows by a weight {GEMV}; "
        f"other dtypes, mixed dtypes and layouts the fast kernels cannot read {GENERIC}"
    )


def expected_ns(p: Problem, path: str) -> int:
    """A roofline estimate of a product's time on its kernel family: the slower of its multiply-
    adds at the family's rate and its operands' and result's bytes at HBM speed."""
    flops = 2.0 * p.m * p.n * p.k * p.batch
    item = 8 if p.dtype in ("float64", "int64", "uint64") else 4 if p.dtype == "float32" else 2
    moved = (p.m * p.k + p.k * p.n + p.m * p.n) * p.batch * item
    rate = EXPECTED_TFLOPS.get(path, EXPECTED_TFLOPS[GENERIC])
    return int(max(flops / (rate * 1e3), moved / EXPECTED_BYTES_PER_NS))
