"""Launch shapes of kernels/reduce.cu and kernels/scan.cu: which kernel, its grid and block, how a
reduced (or scanned) range is cut into pieces over blocks, and the scratch memory that needs.
Pure functions of shapes, element strides, element sizes, alignments and the multiprocessor
count, with the kernels' constants from kernels/geometry.cuh (gpukit.runtime.args.CONSTANTS)."""

from __future__ import annotations

import math
from typing import NamedTuple

from ...base import strides as _strides
from ..args import CONSTANTS as _C
from ..backend import address_align

_RESIDENT_THREADS = 1024  # threads of a reduction kernel per multiprocessor (register-bound)
_LANES, _VEC_BYTES = _C["GK_LANES"], _C["GK_VEC_BYTES"]
_RED_THREADS, _RED_UNROLL = _C["GK_RED_THREADS"], _C["GK_RED_UNROLL"]


class Launch(NamedTuple):
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


class ReducePlan(NamedTuple):
    """The fields of gk_red_args and the launches: `main`, then `finish` when splits > 1."""

    main: Launch
    finish: Launch | None
    n_out: int
    n_red: int
    chunk: int
    splits: int
    part_out_stride: int
    part_split_stride: int
    out_shape: list
    out_stride: list
    red_shape: list
    red_stride: list
    in_offset: int  # elements from the input's first element to where the kernel starts
    scratch_bytes: int


class ScanPlan(NamedTuple):
    """gk_scan_args fields and launches: gk_scan_tiles (`shared` bytes of dynamic shared memory),
    with a scratch holding the ticket and the tiles' states (the first zero_bytes, zeroed first)
    and, for accumulators wider than 4 bytes, the tiles' sums and prefixes, at `offsets`; or
    gk_scan_columns after `reduce` (when pieces > 1) wrote the pieces' sums."""

    main: Launch
    reduce: ReducePlan | None
    n_rows: int
    n: int
    in_step: int
    out_step: int
    tiles_per_row: int
    lead: int
    chunk: int
    vec: bool
    row_shape: list
    in_row_stride: list
    out_row_stride: list
    scratch_bytes: int
    zero_bytes: int
    offsets: tuple  # byte offsets of ticket, flags, sums, prefs
    shared: int


def _pow2_at_least(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _full_wave(sm_count: int, threads: int) -> int:
    """Blocks of `threads` that one wave over the GPU holds."""
    return max(sm_count, 1) * max(_RESIDENT_THREADS // threads, 1)


def reduction_dims(shape, strides, axes, keep_order: bool):
    """(out_shape, out_stride, red_shape, red_stride, in_offset): kept and reduced dimensions,
    each merged where memory allows. Unless `keep_order` (argmax / argmin, whose index counts in
    C order), reduced dimensions are walked smallest stride innermost and forwards in memory, so
    that transposed and reversed views read contiguously (in_offset moves the start)."""
    kept = [i for i in range(len(shape)) if i not in axes]
    red = sorted(axes)
    offset = 0
    red_strides = {i: strides[i] for i in red}
    if not keep_order:
        for i in red:
            if red_strides[i] < 0 and shape[i] > 0:
                offset += (shape[i] - 1) * red_strides[i]
                red_strides[i] = -red_strides[i]
        red.sort(key=lambda i: -red_strides[i])
    out_shape, (out_stride,) = _strides.collapse(
        [shape[i] for i in kept], [[strides[i] for i in kept]]
    )
    red_shape, (red_stride,) = _strides.collapse(
        [shape[i] for i in red], [[red_strides[i] for i in red]]
    )
    return out_shape, out_stride, red_shape, red_stride, offset


def plan_reduce(
    shape, strides, axes, itemsize: int, align: int, sm_count: int, keep_order=False
) -> ReducePlan | None:
    """The plan for reducing an input of `shape` / element `strides` (element size `itemsize`,
    its first element's address a multiple of `align`, a power of two up to 16) over `axes`;
    None when there is no output."""
    out_shape, out_stride, red_shape, red_stride, offset = reduction_dims(
        shape, strides, axes, keep_order
    )
    n_out, n_red = math.prod(out_shape), math.prod(red_shape)
    if n_out == 0:
        return None
    align = min(align, address_align(offset * itemsize))
    dims = (out_shape, out_stride, red_shape, red_stride, offset)
    red_contig = len(red_shape) == 1 and red_stride[0] == 1
    kept_contig = bool(out_shape) and out_stride[-1] == 1
    if (red_contig and n_red >= _LANES) or (not kept_contig and n_red >= _RED_THREADS):
        return _inner(n_out, n_red, red_contig, itemsize, sm_count, dims)
    vec = _outer_vec(out_shape, out_stride, red_stride, itemsize, align)
    return _outer(n_out, n_red, vec, itemsize, sm_count, dims)


def _inner(n_out, n_red, contig, itemsize, sm_count, dims) -> ReducePlan:
    threads, unroll = _RED_THREADS, _RED_UNROLL
    v = _VEC_BYTES // itemsize if contig else 1
    if n_out * _LANES * 2 >= sm_count * 2048:  # warps enough to fill half the GPU: one per row
        per_block = threads // _LANES
        main = Launch("gk_red_inner_warp", (_ceil(n_out, per_block), 1, 1), (threads, 1, 1))
        return _plan(main, None, n_out, n_red, max(n_red, 1), 1, dims)
    wave = _full_wave(sm_count, threads)
    step = threads * v * unroll  # elements one round of the block's loads covers
    splits = 1 if n_out >= wave else _ceil(wave, n_out)
    splits = max(1, min(splits, n_red // (2 * step)))
    chunk = _ceil(_ceil(max(n_red, 1), splits), step) * step
    splits = max(1, _ceil(n_red, chunk))
    main = Launch("gk_red_inner_block", (n_out * splits, 1, 1), (threads, 1, 1))
    return _plan(main, _finish(n_out, splits), n_out, n_red, chunk, splits, dims, inner=True)


def _outer_vec(out_shape, out_stride, red_stride, itemsize, align) -> bool:
    """Whether gk_red_outer_vec may read 16 bytes of neighbouring outputs at a time."""
    v = _VEC_BYTES // itemsize
    return (
        v > 1
        and bool(out_shape)
        and out_stride[-1] == 1
        and out_shape[-1] % v == 0
        and align >= _VEC_BYTES
        and all(s % v == 0 for s in (*out_stride[:-1], *red_stride))
    )


def _outer(n_out, n_red, vec, itemsize, sm_count, dims, splits=None) -> ReducePlan:
    threads, unroll = _RED_THREADS, _RED_UNROLL
    per_thread = _VEC_BYTES // itemsize if vec else 1
    cols = _ceil(n_out, per_thread)
    tx = min(threads, _pow2_at_least(cols))
    ty = threads // tx
    col_blocks = _ceil(cols, tx)
    if splits is None:  # half a wave: longer columns per thread measured 4% faster than a wave
        wave = _full_wave(sm_count, threads) // 2
        splits = 1 if col_blocks >= wave else _ceil(wave, col_blocks)
        splits = max(1, min(splits, n_red // (2 * ty * unroll)))
    chunk = _ceil(max(n_red, 1), splits)
    splits = max(1, _ceil(n_red, chunk))
    if splits > 65535:
        chunk = _ceil(n_red, 65535)
        splits = _ceil(n_red, chunk)
    kernel = "gk_red_outer_vec" if vec else "gk_red_outer_1"
    main = Launch(kernel, (col_blocks, splits, 1), (tx, ty, 1))
    return _plan(main, _finish(n_out, splits), n_out, n_red, chunk, splits, dims)


def _finish(n_out: int, splits: int) -> Launch | None:
    threads = _RED_THREADS
    if splits == 1:
        return None
    if splits >= 64 and n_out <= 1024:  # few outputs with many pieces each: a block per output
        return Launch("gk_red_finish_block", (n_out, 1, 1), (threads, 1, 1))
    return Launch("gk_red_finish_thread", (_ceil(n_out, threads), 1, 1), (threads, 1, 1))


def _plan(main, finish, n_out, n_red, chunk, splits, dims, inner=False) -> ReducePlan:
    out_shape, out_stride, red_shape, red_stride, offset = dims
    part_out, part_split = (splits, 1) if inner else (1, n_out)
    scratch = n_out * splits * _C["GK_RED_STATE_BYTES"] if splits > 1 else 0
    return ReducePlan(
        main,
        finish,
        n_out,
        n_red,
        chunk,
        splits,
        part_out,
        part_split,
        out_shape,
        out_stride,
        red_shape,
        red_stride,
        offset,
        scratch,
    )


def plan_cumsum(
    shape,
    in_strides,
    out_strides,
    axis: int,
    in_itemsize: int,
    out_itemsize: int,
    acc_bytes: int,
    aligns: tuple[int, int],
    sm_count: int,
) -> ScanPlan | None:
    """The plan for a running sum along `axis` (element strides of input and output; `aligns`:
    powers of two up to 16 that their first elements' addresses are multiples of)."""
    n = shape[axis]
    rows = [i for i in range(len(shape)) if i != axis]
    row_shape, (in_rows, out_rows) = _strides.collapse(
        [shape[i] for i in rows], [[in_strides[i] for i in rows], [out_strides[i] for i in rows]]
    )
    n_rows = math.prod(row_shape)
    if n == 0 or n_rows == 0:
        return None
    in_step, out_step = in_strides[axis], out_strides[axis]
    if in_step == 1 or n == 1 or n_rows < _LANES:
        return _scan_tiles(
            n, n_rows, in_step, out_step, row_shape, in_rows, out_rows, in_itemsize, acc_bytes,
            sm_count,
        )  # fmt: skip
    v = _VEC_BYTES // in_itemsize
    vec = (
        v > 1
        and in_rows[-1] == 1
        and out_rows[-1] == 1
        and row_shape[-1] % v == 0
        and all(a >= _VEC_BYTES for a in aligns)
        and all(s * in_itemsize % _VEC_BYTES == 0 for s in (*in_rows[:-1], in_step))
        and all(s * out_itemsize % _VEC_BYTES == 0 for s in (*out_rows[:-1], out_step))
    )
    per_thread = v if vec else 1
    threads = _C["GK_SCAN_THREADS"]
    col_blocks = _ceil(_ceil(n_rows, per_thread), threads)
    wave = _full_wave(sm_count, threads)
    pieces = 1 if col_blocks >= wave else max(1, min(_ceil(wave, col_blocks), n // 16))
    chunk = _ceil(n, pieces)
    pieces = _ceil(n, chunk)
    reduce = None
    if pieces > 1:  # the pieces' sums, [piece][row], from the outer reduction
        dims = (row_shape, in_rows, [n], [in_step], 0)
        reduce = _outer(n_rows, n, vec, in_itemsize, sm_count, dims, splits=pieces)
        reduce = reduce._replace(scratch_bytes=pieces * n_rows * acc_bytes)
    kernel = "gk_scan_columns_vec" if vec else "gk_scan_columns"
    main = Launch(kernel, (col_blocks, pieces, 1), (threads, 1, 1))
    return ScanPlan(
        main,
        reduce,
        n_rows,
        n,
        in_step,
        out_step,
        0,
        0,
        chunk,
        vec,
        row_shape,
        in_rows,
        out_rows,
        reduce.scratch_bytes if reduce else 0,
        0,
        (0,) * 4,
        0,
    )


def scan_tile(in_itemsize: int) -> int:
    """Elements of one tile of gk_scan_tiles."""
    return _C["GK_SCAN_THREADS"] * _C["GK_SCAN_CHUNKS"] * (_VEC_BYTES // in_itemsize)


def scan_lead(tiles: int, sm_count: int) -> int:
    """Tiles by which gk_scan_tiles publishes sums ahead of its scans: GK_SCAN_LEAD once a launch
    has more tiles than the GPU holds at once, else 0."""
    return _C["GK_SCAN_LEAD"] if tiles > _full_wave(sm_count, _C["GK_SCAN_THREADS"]) else 0


def _scan_tiles(
    n, n_rows, in_step, out_step, row_shape, in_rows, out_rows, in_itemsize, acc_bytes, sm_count
):
    per_row = _ceil(n, scan_tile(in_itemsize))
    tiles = n_rows * per_row
    lead = scan_lead(tiles, sm_count)

    def pad(nbytes):
        return _ceil(nbytes, 16) * 16

    flags_at = 16
    sums_at = flags_at + pad(tiles * 8)  # everything before this starts at zero
    if acc_bytes == 4:  # flag and value share a word: no sums or prefixes
        prefs_at = scratch = sums_at
    else:
        prefs_at = sums_at + pad(tiles * acc_bytes)
        scratch = prefs_at + tiles * acc_bytes
    threads = _C["GK_SCAN_THREADS"]
    main = Launch("gk_scan_tiles", (tiles + lead, 1, 1), (threads, 1, 1))
    return ScanPlan(
        main,
        None,
        n_rows,
        n,
        in_step,
        out_step,
        per_row,
        lead,
        0,
        False,
        row_shape,
        in_rows,
        out_rows,
        scratch,
        sums_at,
        (0, flags_at, sums_at, prefs_at),
        threads * _C["GK_SCAN_CHUNKS"] * _VEC_BYTES,
    )
