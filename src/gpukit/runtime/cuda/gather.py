"""Advanced indexing and nonzero on CUDA: kernels/gather.cu (the dense side's dimensions merged
where every operand allows, words wider than the dtype when whole rows of the source move
together) and kernels/compact.cu."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...base import shapes as _shapes
from ...base import strides as _strides
from .. import capture, kernels
from ..args import CONSTANTS
from ..backend import Layout
from .elementwise import emit_fill_zero
from .plans import PlanBuilder
from .reduce import emit_cumsum

_BLOCK = CONSTANTS["GK_BLOCK"]
_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)


@dataclass
class GatherPlan:
    width: int  # bytes per moved word (the dtype's size, or up to 16 for whole rows)
    shape: list  # the dense side's dimensions, in words
    src_walk: list  # src's stride (words) along each of them
    idx_walks: list  # per index array, its stride (elements) along each of them
    axis_size: list  # per index array, the size of the dimension it indexes
    axis_stride: list  # per index array, that dimension's stride in src (words)


def plan(src, src_offset: int, indices, positions, layout) -> GatherPlan:
    """`src` (shape, strides in bytes, dtype; its first element `src_offset` bytes past a
    16-byte aligned address) indexed by
    `indices` (int64 arrays, broadcast together) at `positions` of its dimensions. The dense side
    is C-contiguous with a dimension per `layout` entry: ("v", d) walks src's dimension d,
    ("b", j) dimension j of the broadcast index shape."""
    item = src.dtype.itemsize
    index_shape = _shapes.broadcast(*(x.shape for x in indices))
    shape = [src.shape[d] if kind == "v" else index_shape[d] for kind, d in layout]
    src_el = [st // item for st in src.strides]
    idx_el = [_strides.element_strides(x, index_shape) for x in indices]
    walks = [[src_el[d] if kind == "v" else 0 for kind, d in layout]]
    walks += [[0 if kind == "v" else st[d] for kind, d in layout] for st in idx_el]
    dense = list(_shapes.contiguous_strides(shape, 1))
    cshape, (_, src_walk, *idx_walks) = _strides.collapse(shape, [dense, *walks])
    axis_size = [src.shape[p] for p in positions]
    axis_stride = [src_el[p] for p in positions]
    width = _width(item, src_offset, cshape, src_walk, idx_walks, axis_stride)
    if width != item:  # the innermost run moves as words of f elements
        f = width // item
        cshape[-1] //= f
        src_walk = [st // f for st in src_walk[:-1]] + [1]
        axis_stride = [st // f for st in axis_stride]
    return GatherPlan(width, cshape, src_walk, idx_walks, axis_size, axis_stride)


def _width(item, src_offset, shape, src_walk, idx_walks, axis_stride) -> int:
    """Bytes moved per kernel element: wider than the dtype (up to 16) when the innermost
    dimension is a run of src that no index array walks, and every stride and the run's start
    stay aligned to the wider word."""
    if not shape or src_walk[-1] != 1 or any(w[-1] for w in idx_walks):
        return item
    for width in (16, 8, 4, 2):
        if width <= item:
            break
        f = width // item
        if (
            shape[-1] % f == 0
            and src_offset % width == 0
            and all(st % f == 0 for st in src_walk[:-1])
            and all(st % f == 0 for st in axis_stride)
        ):
            return width
    return item


def plan_gather(backend, src: Layout, out: Layout, indices, positions, layout, check, scatter):
    """Gather (out = src[idx]): args src, *indices; allocates out (contiguous) and, with
    `check`, an int32 flag set to k + 1 when index array k holds an index out of range (the
    kernel clamps it: nothing is read out of bounds). Scatter (src[idx] = values): args src,
    values (contiguous, `out`'s layout), *indices; allocates nothing."""
    p = plan(src, src.align % 16, indices, positions, layout)
    n_idx = len(indices)
    if scatter:
        b = PlanBuilder(backend, "aa" + "a" * n_idx)
        src_arg, out_arg, first_index = 0, 1, 2
    else:
        outputs = [out.size * out.dtype.itemsize] + ([4] if check else [])
        b = PlanBuilder(backend, "a" + "a" * n_idx, outputs=outputs)
        src_arg, out_arg, first_index = 0, b.output(0), 1
        if check:
            emit_fill_zero(b, Layout(_I32, (1,), (4,)), b.output(1))
    n = math.prod(p.shape)
    if n:
        max_dims = CONSTANTS["GK_MAX_DIMS"]
        if n_idx > max_dims:
            raise IndexError(f"at most {max_dims} index arrays are supported, got {n_idx}")
        fn = backend.function(*kernels.gather(p.width), "gk_scatter" if scatter else "gk_gather")
        fields = {
            "n": n,
            "ndim": len(p.shape),
            "n_idx": n_idx,
            "shape": p.shape,
            "src_stride": p.src_walk,
            "idx_stride": p.idx_walks,
            "axis_size": p.axis_size,
            "axis_stride": p.axis_stride,
        }
        addresses = [("src", src_arg, 0, 1), ("out", out_arg, 0, 1)]
        addresses += [(("idx", k), first_index + k, 0, 1) for k in range(n_idx)]
        if check and not scatter:
            addresses.append(("err", b.output(1), 0, 1))
        grid = backend.blocks_for(n, _BLOCK)
        b.launch(fn, grid, _BLOCK, "gk_gather_args", fields, addresses=addresses)
    return b.build()


_COUNTS: dict = {}


def _count_plan(backend, mask: Layout):
    """Args: mask (contiguous bool). Allocates counts (hits per tile) and their running sum."""
    key = (id(backend), mask.shape)
    found = _COUNTS.get(key)
    if found is not None:
        return found
    n = mask.size
    tiles = -(-n // CONSTANTS["GK_COMPACT_TILE"])
    b = PlanBuilder(backend, "a", outputs=[8 * tiles, 8 * tiles])
    fn = backend.function(*kernels.compact(), "gk_count_tiles")
    b.launch(fn, tiles, CONSTANTS["GK_COMPACT_THREADS"], "gk_compact_args",
             {"n": n, "ndim": mask.ndim, "shape": list(mask.shape)},
             addresses=[("mask", 0, 0, 1), ("counts", b.output(0), 0, 1)])  # fmt: skip
    counts = Layout(_I64, (tiles,), (8,))
    emit_cumsum(b, counts, b.output(0), 0, counts, b.output(1))
    if len(_COUNTS) > 256:
        _COUNTS.clear()
    _COUNTS[key] = b.build()
    return _COUNTS[key]


def nonzero(backend, mask: Layout, buffer, offset: int, stream, quota):
    """(buffer, count): the int64 (ndim, count) coordinates of the true elements of a
    contiguous bool mask. The count is read back to the host once."""
    capture.refuse("nonzero (the count sizes the result)")
    n = mask.size
    if n == 0:
        return backend.pool.allocate(0, stream, quota), 0
    counts, prefix = _count_plan(backend, mask)(stream, quota, buffer, offset)
    tiles = -(-n // CONSTANTS["GK_COMPACT_TILE"])
    total = np.empty(1, _I64)
    backend.download(total, prefix, 8 * (tiles - 1))
    total = int(total[0])
    b = PlanBuilder(backend, "aaa", outputs=[8 * mask.ndim * total])
    if total:
        fn = backend.function(*kernels.compact(), "gk_write_nonzero")
        fields = {"n": n, "total": total, "ndim": mask.ndim, "shape": list(mask.shape)}
        addresses = [("mask", 0, 0, 1), ("counts", 1, 0, 1), ("prefix", 2, 0, 1)]
        addresses.append(("out", b.output(0), 0, 1))
        b.launch(fn, tiles, CONSTANTS["GK_COMPACT_THREADS"], "gk_compact_args", fields,
                 addresses=addresses)  # fmt: skip
    out = b.build()(stream, quota, buffer, offset, counts, 0, prefix, 0)
    return out, total
