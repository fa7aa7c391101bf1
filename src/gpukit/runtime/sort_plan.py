"""How the sorting kernels (kernels/sort.cu, kernels/search.cu) are run: which instance, which
launches in which order, and what scratch memory they need. Pure functions of shapes, dtypes and
the GPU's multiprocessor count; the CUDA backend (runtime/cuda/sort.py) turns a plan into a
gpukit._core.Plan, binding the buffer names to arguments, outputs and scratch.

Buffer names in a plan's launches: "keys_in" (the contiguous input), "keys_out" / "vals_out"
(the outputs: sorted keys, int64 indices), and the scratch buffers of `SortPlan.scratch`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..base.dtypes import bfloat16
from .args import CONSTANTS

RADIX_BITS = CONSTANTS["GK_SORT_RADIX_BITS"]
RADIX = 1 << RADIX_BITS
PORTION_KEYS = CONSTANTS["GK_SORT_PORTION_KEYS"]  # at most this many keys per onesweep launch
SEARCH_THREADS = CONSTANTS["GK_BLOCK"]  # search.cu's blocks
UNIQUE_TILE = SEARCH_THREADS * CONSTANTS["GK_UNIQUE_ITEMS"]
HIST_THREADS = 256  # the sort histogram's blocks (any multiple of 32)
MAX_ROW_WARPS = 8  # the row sort's largest block

# (raw C type, kind, +inf bits) of a key dtype; kinds as in kernels/sort_common.cuh.
_KEY_UINT, _KEY_INT, _KEY_FLOAT = 0, 1, 2
_RAW = {1: "gk_u8", 2: "gk_u16", 4: "gk_u32", 8: "gk_u64"}
_FLOAT_INF = {
    np.dtype("float16"): 0x7C00,
    bfloat16: 0x7F80,
    np.dtype("float32"): 0x7F800000,
    np.dtype("float64"): 0x7FF0000000000000,
}


def key_type(dtype) -> tuple[str, int, int]:
    """(raw C type, key kind, +inf bits) for sorting `dtype`."""
    dtype = np.dtype(dtype)
    if dtype in _FLOAT_INF:
        return _RAW[dtype.itemsize], _KEY_FLOAT, _FLOAT_INF[dtype]
    if dtype.kind == "b":
        return "gk_u8", _KEY_UINT, 0
    if dtype.kind in "iu":
        return _RAW[dtype.itemsize], _KEY_INT if dtype.kind == "i" else _KEY_UINT, 0
    raise TypeError(f"sorting has no kernels for {dtype}")


@dataclass(frozen=True)
class Tuning:
    threads: int  # onesweep block
    items: int  # keys per thread of a onesweep tile
    min_blocks: int  # onesweep blocks per multiprocessor the registers are capped for
    row_items: int  # keys per thread of the row sort
    lookback: int = 1  # predecessors the onesweep look-back reads at once
    masks: int = 1  # 1: the onesweep ranks through shared-memory masks; 0: warp matches

    @property
    def tile(self) -> int:
        return self.threads * self.items


def tuning(itemsize: int, values: bool) -> Tuning:
    """Tile sizes by key width and whether int64 values travel with the keys. Measured on the
    H100 for 2^26 float32 keys (notes/sort.md), ranking through shared-memory masks: keys alone
    512x12, 2 blocks per multiprocessor, 2.62 ms (256x12/4 2.76, 256x16/3 3.02, 384x16/2 3.03,
    256x20/2 3.77, 512x16/1 3.82); with values 256x15, 2 blocks (5.23 ms; 256x12/2 6.05 with
    matches). 8-byte keys: the tiles measured with warp matches (float64 alone, 5.64 ms for
    2^25), not re-measured with masks."""
    if itemsize == 8:
        return Tuning(256, 12, 2, 8) if values else Tuning(384, 12, 1, 8)
    return Tuning(256, 15, 2, 16) if values else Tuning(512, 12, 2, 16)


def sort_defines(dtype, values: bool, tune: Tuning) -> tuple[str, tuple]:
    """(file, defines) of the sort instance for keys of `dtype`."""
    raw, kind, inf = key_type(dtype)
    return "sort.cu", (
        f"GK_KEY_T={raw}",
        f"GK_KEY_KIND={kind}",
        f"GK_KEY_INF={inf:#x}ull",
        f"GK_VALUES={int(values)}",
        f"GK_THREADS={tune.threads}",
        f"GK_ITEMS={tune.items}",
        f"GK_MIN_BLOCKS={tune.min_blocks}",
        f"GK_ROW_ITEMS={tune.row_items}",
        f"GK_LOOKBACK={tune.lookback}",
        f"GK_RANK_MASKS={tune.masks}",
    )


def search_defines(dtype) -> tuple[str, tuple]:
    """(file, defines) of searchsorted / unique / histogram over keys of `dtype`."""
    raw, kind, inf = key_type(dtype)
    return "search.cu", (f"GK_KEY_T={raw}", f"GK_KEY_KIND={kind}", f"GK_KEY_INF={inf:#x}ull")


@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple[int, int]
    block: int
    shared: int  # dynamic shared memory, bytes
    args: dict  # gk_sort_args fields: ints, and buffer names (str) or None for the pointers


@dataclass
class SortPlan:
    file: str
    defines: tuple
    scratch: dict = field(default_factory=dict)  # name -> bytes
    launches: list = field(default_factory=list)

    @property
    def max_shared(self) -> int:
        return max((x.shared for x in self.launches), default=0)


def _destinations(passes: int, final: str | None, scratch: tuple[str, str]) -> list:
    """Where each pass writes: the last pass into `final` (None: not written), earlier passes
    alternating so that no pass reads the buffer it writes (the output serves as one side)."""
    out = []
    for p in range(passes):
        after = passes - 1 - p
        if after == 0:
            out.append(final)
        elif final is not None:
            out.append(scratch[0] if after % 2 else final)
        else:
            out.append(scratch[(after - 1) % 2])
    return out


def row_capacity(itemsize: int, values: bool) -> int:
    """The longest row gk_sort_rows sorts in one block."""
    return MAX_ROW_WARPS * 32 * tuning(itemsize, values).row_items


def plan_sort(
    rows: int,
    seg_len: int,
    dtype,
    *,
    want_keys: bool = True,
    want_index: bool = False,
    descending: bool = False,
    sm_count: int = 132,
    key_bits: int | None = None,
    portion_keys: int = PORTION_KEYS,
    onesweep: bool | None = None,
    values_in: bool = False,
) -> SortPlan:
    """Sorting `rows` rows of `seg_len` contiguous keys each (stably; NumPy's order, NaN last):
    the sorted keys into "keys_out" (`want_keys`) and each key's index within its row into
    "vals_out" (`want_index`). `key_bits` (unsigned keys only): the keys are known to be below
    2**key_bits, so fewer passes suffice. `onesweep` forces (True) or forbids (False) the
    device-wide sort; by default rows that fit a block are sorted in shared memory.
    `values_in`: 8-byte payloads ("vals_in") travel with the keys into "vals_out" instead of
    the indices (one row, device-wide)."""
    dtype = np.dtype(dtype)
    if not (want_keys or want_index):
        raise ValueError("plan_sort: nothing to write")
    itemsize = dtype.itemsize
    total = rows * seg_len
    bits = 8 * itemsize if key_bits is None else max(1, min(key_bits, 8 * itemsize))
    if key_bits is not None and key_type(dtype)[1] != _KEY_UINT:
        raise ValueError("plan_sort: key_bits applies to unsigned keys only")
    key_passes = -(-bits // RADIX_BITS)
    key_xor = (1 << (8 * itemsize)) - 1 if descending else 0
    fits_block = seg_len <= row_capacity(itemsize, want_index)
    if values_in and (rows != 1 or not want_index):
        raise ValueError("plan_sort: values_in needs one row and want_index")
    if onesweep is None:
        onesweep = not fits_block or values_in
    if not onesweep and not fits_block:
        raise ValueError(f"plan_sort: rows of {seg_len} keys do not fit one block")

    if not onesweep:
        tune = tuning(itemsize, want_index)
        file, defines = sort_defines(dtype, want_index, tune)
        plan = SortPlan(file, defines)
        if total == 0:
            return plan
        warps = min(MAX_ROW_WARPS, max(1, -(-seg_len // (32 * tune.row_items))))
        slot = max(itemsize, 8 if want_index else itemsize)
        shared = warps * RADIX * 4 + warps * 32 * tune.row_items * slot
        args = dict(
            keys_in="keys_in",
            keys_out="keys_out" if want_keys else None,
            vals_out="vals_out" if want_index else None,
            n=total,
            seg_len=seg_len,
            key_xor=key_xor,
            key_passes=key_passes,
            passes=key_passes,
        )
        grid = min(rows, 2**31 - 1)
        plan.launches.append(Launch("gk_sort_rows", (grid, 1), warps * 32, shared, args))
        return plan

    row_passes = -(-(rows - 1).bit_length() // RADIX_BITS) if rows > 1 else 0
    passes = key_passes + row_passes
    values = want_index or row_passes > 0
    tune = tuning(itemsize, values)
    file, defines = sort_defines(dtype, values, tune)
    plan = SortPlan(file, defines)
    if total == 0:
        return plan
    tile = tune.tile
    tiles = -(-total // tile)
    portion_tiles = max(1, min(portion_keys, PORTION_KEYS) // tile)
    portions = -(-tiles // portion_tiles)
    portion_len = min(total, portion_tiles * tile)
    hist_blocks = max(1, min(2 * sm_count, -(-portion_len // (HIST_THREADS * 64))))
    scratch = plan.scratch
    scratch["block_counts"] = portions * hist_blocks * passes * RADIX * 4
    scratch["digit_starts"] = passes * portions * RADIX * 8
    scratch["status"] = tiles * RADIX * 4
    scratch["tile_counters"] = passes * portions * 4
    key_dst = _destinations(passes, "keys_out" if want_keys else None, ("keys_a", "keys_b"))
    val_dst = _destinations(passes, "vals_out" if want_index else None, ("vals_a", "vals_b"))
    if not values:
        val_dst = [None] * passes
    for name in {*key_dst, *val_dst} - {None, "keys_out", "vals_out"}:
        scratch[name] = total * (8 if name.startswith("vals") else itemsize)
    common = dict(
        block_counts="block_counts",
        digit_starts="digit_starts",
        status="status",
        tile_counters="tile_counters",
        key_xor=key_xor,
        n=total,
        seg_len=seg_len,
        portion_tiles=portion_tiles,
        status_words=tiles * RADIX,
        counter_words=passes * portions,
        passes=passes,
        key_passes=key_passes,
        portions=portions,
        hist_blocks=hist_blocks,
    )
    hist_args = dict(common, keys_in="keys_in")
    plan.launches.append(
        Launch(
            "gk_sort_histogram",
            (hist_blocks, portions),
            HIST_THREADS,
            passes * RADIX * 4,
            hist_args,
        )
    )
    plan.launches.append(Launch("gk_sort_scan", (passes, 1), 4 * RADIX, 0, dict(common)))
    exchange = tile * max(itemsize, 8 if values else itemsize)
    for p in range(passes):
        args = dict(
            common,
            keys_in="keys_in" if p == 0 else key_dst[p - 1],
            keys_out=key_dst[p],
            vals_in=("vals_in" if values_in else None) if p == 0 else val_dst[p - 1],
            vals_out=val_dst[p],
            **{"pass": p},
            local_index=int(want_index and p == passes - 1 and row_passes > 0),
        )
        for portion in range(portions):
            n_tiles = min(portion_tiles, tiles - portion * portion_tiles)
            plan.launches.append(
                Launch(
                    "gk_sort_onesweep",
                    (n_tiles, 1),
                    tune.threads,
                    exchange,
                    dict(args, portion=portion),
                )
            )
    return plan


def unique_tiles(n: int) -> int:
    return max(1, -(-n // UNIQUE_TILE))


# Shared-memory counters of a histogram / bincount block: 4 bytes each, at most this many bins.
SHARED_BINS = 12 * 1024


def histogram_shared(nbins: int) -> int:
    """Dynamic shared memory of gk_histogram / gk_bincount for `nbins` bins (0: count in global
    memory)."""
    return nbins * 4 if nbins <= SHARED_BINS else 0


def sort_bits_for(count: int) -> int:
    """Bits of the largest of `count` non-negative values below `count` (at least 1)."""
    return max(1, (max(count, 1) - 1).bit_length())


def floor_bytes(n: int, itemsize: int, index: bool, keys: bool = True) -> int:
    """Fewest bytes a device-wide LSD sort of n keys moves (the histogram's read, then per pass
    each key (and value) read and written once; the first pass reads no values, the last writes
    only what is asked for)."""
    passes = math.ceil(8 * itemsize / RADIX_BITS)
    if not index:
        return n * itemsize * (1 + 2 * passes)
    per = itemsize + 8
    total = n * itemsize  # histogram
    for p in range(passes):
        read = itemsize if p == 0 else per
        write = (itemsize if keys else 0) + 8 if p == passes - 1 else per
        total += n * (read + write)
    return total
