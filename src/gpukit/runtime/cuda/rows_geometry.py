"""Launch shapes of kernels/nn_rows.cu: a warp per row with the row held in registers (how many
16-byte vectors per thread: the GK_VECS instance), a block per row streaming longer rows (staged
whole in shared memory when it fits GK_ROWS_STAGED_BYTES), or a row cut into pieces over blocks
when the rows are too few to fill the GPU.
Pure functions of the row length, the row count, the element size and the multiprocessor count,
with the kernels' constants from kernels/geometry.cuh (gpukit.runtime.args.CONSTANTS)."""

from __future__ import annotations

from typing import NamedTuple

from ..args import CONSTANTS as _C

_LANES, _VEC_BYTES = _C["GK_LANES"], _C["GK_VEC_BYTES"]
_MAX_THREADS, _MAX_ITEMS = _C["GK_ROWS_MAX_THREADS"], _C["GK_ROWS_MAX_ITEMS"]


class RowsPlan(NamedTuple):
    vecs: int  # GK_VECS of the instance (0: streaming and split kernels)
    split: bool  # gk_<kind>_split_stats then gk_<kind>_split_apply; else gk_<kind>_rows
    group: int  # threads per row (GK_LANES or the block)
    grid: int
    block: int
    splits: int
    chunk: int
    scratch_bytes: int
    shared: int = 0  # dynamic shared memory of gk_<kind>_rows_staged (0: not staged)


def _pow2_at_least(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def plan_rows(
    n: int, n_rows: int, itemsize: int, sm_count: int, residual: bool = False
) -> RowsPlan:
    """The plan for `n_rows` rows of `n` elements of `itemsize` bytes (and a residual of the
    same). Rows a warp can hold in registers get a warp each (many rows in flight per
    multiprocessor); longer ones a block each, with eight 16-byte vectors per thread and row,
    that reads the row twice: from shared memory where the row (and its residual) fit
    GK_ROWS_STAGED_BYTES, copied there at once; else streamed from memory twice (few registers,
    the second read from L1/L2). Rows too few to fill the GPU are cut into pieces over blocks."""
    v = _VEC_BYTES // itemsize
    nv = _ceil(n, v)
    max_threads = _MAX_THREADS
    max_vecs = max(1, min(8, _MAX_ITEMS // v))
    if nv <= _LANES * max_vecs:  # a warp per row, the row in registers
        vecs = _pow2_at_least(_ceil(nv, _LANES))
        block = 256 if n_rows >= sm_count * 16 else 64
        return RowsPlan(vecs, False, _LANES, _ceil(n_rows, block // _LANES), block, 1, n, 0)
    # Eight 16-byte vectors per thread: the fastest measured (notes/memory_bound.md).
    threads = min(max_threads, max(64, _pow2_at_least(_ceil(nv, 8))))
    if n_rows * 2 >= sm_count or n < 8192:  # a block per row
        staged = n * itemsize * (2 if residual else 1)
        shared = staged if staged <= _C["GK_ROWS_STAGED_BYTES"] else 0
        return RowsPlan(0, False, threads, n_rows, threads, 1, n, 0, shared)
    per_block = max_threads * v * 4  # elements one round of a block's loads covers
    splits = max(2, min(_ceil(2 * sm_count, n_rows), _ceil(n, per_block)))
    chunk = _ceil(_ceil(n, splits), v) * v
    splits = _ceil(n, chunk)
    scratch = n_rows * splits * _C["GK_ROWS_STATE_BYTES"]
    return RowsPlan(0, True, max_threads, n_rows * splits, max_threads, splits, chunk, scratch)
