"""Launch geometry of the tensor-core attention kernels (kernels/attention_tc.cu for prefill,
kernels/attention_sm90.cu for unmasked prefill on sm_90a, kernels/attention_decode.cu for few
query rows against many keys): which kernel serves a call, the TMA tensor maps of the sm_90a one,
its instance, grid, block and shared memory, the key splits and the split workspace. Pure
functions of shapes and device facts; the tile configurations are kernels/geometry.cuh's (through
gpukit.runtime.kernels)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .. import kernels
from ..args import CONSTANTS
from .gemm_plan import TensorMap, tma_dtype

MAX_GRID_YZ = 65535  # blocks along y (and z) of one launch
_SM_REGISTERS = 65536  # 32-bit registers of an SM (sm_80 to sm_90)
_MAX_SPLITS = CONSTANTS["GK_ATTN_MAX_SPLITS"]
_COMBINE_THREADS = CONSTANTS["GK_ATTN_COMBINE_THREADS"]
_MAX_DECODE_ROWS = 16 * CONSTANTS["GK_ATTN_TC_DECODE_MAX_MT"]
# The tiles index rows with 32-bit offsets (row * stride): tiles of up to 256 rows, twice over.
_MAX_ROW_STRIDE = (1 << 31) // 512


@dataclass(frozen=True)
class Launch:
    file: str
    defines: tuple
    kernel: str
    grid: tuple
    block: int
    shared: int  # bytes of dynamic shared memory


@dataclass(frozen=True)
class TensorCoreAttention:
    main: Launch
    combine: Launch | None  # the split merge (decode with several splits)
    n_splits: int
    keys_per_split: int
    workspace: tuple  # float32 element counts of (ws_o, ws_ml); (0, 0) without splits


def prefill_shared(tiles: kernels.AttentionPrefillTiles, head_dim_class: int) -> int:
    """Dynamic shared memory of a prefill block: the Q tile and kStages K and V tiles."""
    return (tiles.rows + 2 * tiles.stages * tiles.keys) * head_dim_class * 2


def decode_shared(tiles: kernels.AttentionDecodeTiles, m_tiles: int, head_dim_class: int) -> int:
    """Dynamic shared memory of a decode block: the Q tile and each warp's ring of K and V."""
    return (16 * m_tiles + tiles.warps * tiles.stages * 2 * tiles.keys) * head_dim_class * 2


def decode_m_tiles(hq: int, hkv: int, sq: int) -> int:
    """m16 row tiles of a decode block: it serves the hq / hkv * sq rows of one kv head."""
    return 1 if hq // hkv * sq <= 16 else 2


def prefill(
    mma_type: str, b: int, hq: int, sq: int, head_dim: int, mask: str
) -> TensorCoreAttention:
    """A block per (batch * q head, tile of query rows)."""
    dclass = kernels.attention_tc_head_dim(head_dim)
    tiles = kernels.ATTENTION_PREFILL_TILES[dclass]
    file, defines = kernels.attention_tc_prefill(mma_type, dclass, mask)
    grid = (b * hq, -(-sq // tiles.rows), 1)
    shared = prefill_shared(tiles, dclass)
    main = Launch(file, defines, "gk_attn_tc", grid, 32 * tiles.warps, shared)
    return TensorCoreAttention(main, None, 1, 0, (0, 0))


# The split rule of decode() when no n_splits is given: "wave" (the most splits whose blocks fit
# the SMs' block slots in one wave: measured faster on an H100 at b1 and b8, notes/attention.md
# "Decode bandwidth"), "fill" (enough splits for a block per slot, rounded up, so a partial
# second wave is possible) or a fixed count. A module setting so that a probe
# (notes/decode_ab.py) switches rules without reinstalling (plans cache the result: drop them
# after a change).
DECODE_SPLITS: str | int = "wave"


def decode_splits(
    b: int, hkv: int, units: int, per_sm: int, threads: int, sm_count: int, rule
) -> int:
    """Key splits asked of decode() (before rounding to whole units of keys), by `rule`, for
    blocks of `threads` threads of which `per_sm` fit an SM by shared memory."""
    if isinstance(rule, int):
        return rule
    if rule == "fill":
        return -(-(sm_count * per_sm) // (b * hkv))
    # By registers: the kernel asks for at most 2 blocks' worth (256 registers a thread at 128
    # threads); assume no more than that fit.
    slots = sm_count * min(per_sm, max(1, _SM_REGISTERS // (256 * threads)))
    # The most splits whose blocks fit the slots in one wave; at least one.
    return max(1, min(units, slots // (b * hkv)))


def decode(
    mma_type: str,
    b: int,
    hq: int,
    hkv: int,
    sq: int,
    skv: int,
    head_dim: int,
    mask: str,
    sm_count: int,
    shared_limit: int,
    n_splits: int | None = None,
) -> TensorCoreAttention:
    """A block per (key split, batch * kv head) serving all hq / hkv * sq rows of that kv head.
    The splits cover the capacity skv (not a device kv_length), enough of them to fill the GPU
    (blocks per SM estimated from `shared_limit`, the shared memory a block may have; the rule is
    DECODE_SPLITS); n_splits overrides the choice (rounded to whole units of keys)."""
    m_tiles = decode_m_tiles(hq, hkv, sq)
    dclass = kernels.attention_tc_head_dim(head_dim)
    tiles = kernels.ATTENTION_DECODE_TILES[dclass]
    shared = decode_shared(tiles, m_tiles, dclass)
    unit = tiles.warps * tiles.keys
    units = max(1, -(-skv // unit))
    if n_splits is None:
        per_sm = max(1, shared_limit // (shared + 1024))
        n_splits = decode_splits(b, hkv, units, per_sm, 32 * tiles.warps, sm_count, DECODE_SPLITS)
    per = -(-units // max(1, min(n_splits, units, _MAX_SPLITS)))
    n_splits, keys_per_split = -(-units // per), per * unit
    file, defines = kernels.attention_tc_decode(mma_type, dclass, mask, m_tiles, tiles)
    grid = (n_splits, b * hkv, 1)
    main = Launch(file, defines, "gk_attn_decode", grid, 32 * tiles.warps, shared)
    combine = None
    workspace = (0, 0)
    if n_splits > 1:
        rows = b * hq * sq
        combine = Launch(file, defines, "gk_attn_combine", (rows, 1, 1), _COMBINE_THREADS, 0)
        workspace = (n_splits * rows * head_dim, n_splits * rows * 2)
    return TensorCoreAttention(main, combine, n_splits, keys_per_split, workspace)


def decode_fits(m_tiles: int, head_dim_class: int, shared_limit: int) -> bool:
    """Whether the decode kernel holds m_tiles row tiles of this class within `shared_limit`."""
    tiles = kernels.ATTENTION_DECODE_TILES[head_dim_class]
    return kernels.attention_decode_holds(head_dim_class, m_tiles) and (
        decode_shared(tiles, m_tiles, head_dim_class) <= shared_limit
    )


def use_decode(hq: int, hkv: int, sq: int, head_dim: int, shared_limit: int) -> bool:
    """The decode kernel serves every call whose query rows per kv head (hq / hkv * sq) fit its
    m16 tiles: it reads each K/V tile once for all of them, where the prefill kernel's tiles of
    64-128 rows of one head would be mostly empty."""
    if hq // hkv * sq > _MAX_DECODE_ROWS:
        return False
    dclass = kernels.attention_tc_head_dim(head_dim)
    return decode_fits(decode_m_tiles(hq, hkv, sq), dclass, shared_limit)


def tensor_core_attention(
    mma_type: str,
    b: int,
    hq: int,
    hkv: int,
    sq: int,
    skv: int,
    head_dim: int,
    mask: str,
    sm_count: int,
    shared_limit: int,
) -> TensorCoreAttention | None:
    """The launches of a call on tensor cores, or None where they do not serve it: a head_dim
    no tile holds, no keys, more shared memory than a block may have, or a grid past its
    limits (the CUDA-core kernel serves those)."""
    if kernels.attention_tc_head_dim(head_dim) is None or skv == 0 or b * hq * sq == 0:
        return None
    if use_decode(hq, hkv, sq, head_dim, shared_limit):
        p = decode(mma_type, b, hq, hkv, sq, skv, head_dim, mask, sm_count, shared_limit)
    else:
        p = prefill(mma_type, b, hq, sq, head_dim, mask)
    if p.main.shared > shared_limit or p.main.grid[0] > 0x7FFFFFFF:
        return None
    if max(p.main.grid[1:]) > MAX_GRID_YZ:
        return None
    return p


def sm90_serves(head_dim: int, mask: str, strides: list, aligned: bool) -> bool:
    """Whether kernels/attention_sm90.cu takes a prefill call: no mask, head_dim 64, 128 or 256,
    and q, k, v that TMA can address (see tma_addressable)."""
    if mask != "none" or head_dim not in kernels.ATTENTION_SM90_HEAD_DIMS:
        return False
    return aligned and all(tma_addressable(s) for s in strides)


def tma_addressable(strides) -> bool:
    """Whether a (batch, heads, seq, d) operand of these element strides is a TMA tensor of
    16-bit elements: d contiguous, every other stride positive and 16-byte aligned, under
    2^40 bytes (extent-1 axes are given legal strides by sm90_map, so pass them as 8)."""
    *outer, col = strides
    return col == 1 and all(x > 0 and (2 * x) % 16 == 0 and 2 * x < 1 << 40 for x in outer)


def sm90_map(dtype: str, shape, strides, box_rows: int) -> TensorMap:
    """The 4-D tensor map (d, seq, heads, batch) of a (batch, heads, seq, d) operand of element
    `strides`, read as boxes of 64 columns (the 128-byte swizzle span) by `box_rows` rows."""
    b, h, n, d = shape
    sb, sh, sn = (2 * x for x in strides[:3])
    # An axis of extent 1 is never stepped along: give it any legal stride.
    sn = sn if n > 1 else -(-2 * d // 16) * 16
    sh = sh if h > 1 else n * sn
    sb = sb if b > 1 else h * sh
    return TensorMap(tma_dtype(dtype), (d, n, h, b), (sn, sh, sb), (64, box_rows, 1, 1))


def sm90_strides(shape, strides) -> list:
    """The element strides that sm90_serves checks: an extent-1 axis's replaced by 8."""
    return [
        x if n > 1 or i == 3 else 8 for i, (n, x) in enumerate(zip(shape, strides, strict=True))
    ]


def sm90_prefill(
    mma_type: str,
    b: int,
    hq: int,
    sq: int,
    head_dim: int,
    *,
    causal: bool,
    sm_count: int,
    tiles=None,
) -> Launch:
    """kernels/attention_sm90.cu: a block per (tile of query rows, batch * q head), the tiles of
    a head launched together; with a persistent tile configuration, a block per SM at most (one
    fits an SM), each walking the work units (sm90_units) by a stride. `tiles`
    (kernels.AttentionSm90Tiles) instead of the head dim's shipped ones."""
    t = tiles or sm90_table(causal)[head_dim]
    file, defines = kernels.attention_sm90(mma_type, head_dim, t)
    if t.persist:
        grid = (min(sm90_units(b, hq, sq, causal), sm_count), 1, 1)
    else:
        grid = (-(-sq // kernels.ATTENTION_SM90_ROWS), b * hq, 1)
    shared = kernels.attention_sm90_shared(head_dim, t)
    return Launch(file, defines, "gk_attn_sm90", grid, CONSTANTS["GK_SM90_THREADS"], shared)


def sm90_table(causal: bool) -> dict:
    """The shipped tiles by head dim for causal calls, or for calls without a mask."""
    return kernels.ATTENTION_SM90_CAUSAL_TILES if causal else kernels.ATTENTION_SM90_TILES


def sm90_tiles(head_dim: int, scale: float, causal: bool) -> kernels.AttentionSm90Tiles:
    """The head dim's tiles (kernels.ATTENTION_SM90_TILES, or ATTENTION_SM90_CAUSAL_TILES) for a
    call of this softmax scale: the folded exponent (`fold`) only for a positive scale, where the
    maximum of the unscaled scores scales to the maximum of the scaled ones."""
    t = sm90_table(causal)[head_dim]
    return t if scale > 0 or not t.fold else dataclasses.replace(t, fold=False)


def sm90_units(b: int, hq: int, sq: int, causal: bool) -> int:
    """Work units of the persistent sm_90a prefill: a tile of query rows of one (batch, q head),
    or under causal a pair of them (a head's i-th heaviest and i-th lightest). The kernel counts
    them in 32 bits."""
    rows = -(-sq // kernels.ATTENTION_SM90_ROWS)
    return (-(-rows // 2) if causal else rows) * b * hq


def sm90_q_rows(tiles: kernels.AttentionSm90Tiles) -> int:
    """Rows of the Q tensor map's box: the block's row tile, or a consumer's half of it in the
    persistent form (each half reloaded as soon as its consumer is done with it)."""
    return 64 if tiles.persist else kernels.ATTENTION_SM90_ROWS


def loadable_strides(strides: list) -> bool:
    """Whether the tiles can load q, k, v of these element strides (batch, head, row, column)
    with 16-byte copies: a unit last stride, the others whole multiples of 8 elements, and a
    row stride whose offsets within a tile stay 32-bit."""
    for batch, head, row, col in strides:
        if col != 1 or batch % 8 or head % 8 or row % 8:
            return False
        if abs(row) >= _MAX_ROW_STRIDE:
            return False
    return True
