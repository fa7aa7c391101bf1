"""The arguments of kernels/gather.cu for one advanced-indexing operation: the dense side's
dimensions merged where every operand allows, the strides in elements, and the width of the
words moved (wider than the dtype when whole rows of the source move together)."""

from __future__ import annotations

from dataclasses import dataclass

from . import _shapes, _strides


@dataclass
class GatherPlan:
    width: int  # bytes per moved word (the dtype's size, or up to 16 for whole rows)
    shape: list  # the dense side's dimensions, in words
    src_walk: list  # src's stride (words) along each of them
    idx_walks: list  # per index array, its stride (elements) along each of them
    axis_size: list  # per index array, the size of the dimension it indexes
    axis_stride: list  # per index array, that dimension's stride in src (words)


def plan(src, src_offset: int, indices, positions, layout) -> GatherPlan:
    """`src` (shape, strides in bytes, dtype; `src_offset` bytes from an aligned base) indexed by
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
