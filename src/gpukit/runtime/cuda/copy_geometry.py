"""Launch shape of kernels/transpose.cu for a copy into a contiguous array whose fastest
dimension the source is not contiguous along. Pure function of shapes, element strides, the
element size and the two operands' alignments, with the kernel's constants from
kernels/geometry.cuh (gpukit.runtime.args.CONSTANTS)."""

from __future__ import annotations

import math
from typing import NamedTuple

from ...base import strides as _strides
from ..args import CONSTANTS as _C
from ..kernels import transpose_tile


class TransposePlan(NamedTuple):
    grid: int
    block: int
    p: int
    q: int
    in_q_stride: int
    out_p_stride: int
    tiles_p: int
    tiles_q: int
    n_tiles: int
    vec: bool
    batch_shape: list
    in_batch_stride: list
    out_batch_stride: list


def plan_transpose(
    shape, in_strides, out_strides, itemsize: int, aligns: tuple[int, int]
) -> TransposePlan | None:
    """The plan, or None when the copy is no transpose: the source is contiguous along the
    output's last dimension already, or along no dimension at all. `aligns`: powers of two up
    to 16 that the two first elements' addresses are multiples of."""
    cshape, (ins, outs) = _strides.collapse(list(shape), [list(in_strides), list(out_strides)])
    if len(cshape) < 2 or outs[-1] != 1 or ins[-1] == 1:
        return None
    q = len(cshape) - 1
    p = next((i for i in range(q) if ins[i] == 1), None)
    if p is None:
        return None
    tile = transpose_tile(itemsize)
    batch = [i for i in range(len(cshape)) if i not in (p, q)]
    tiles_p, tiles_q = -(-cshape[p] // tile), -(-cshape[q] // tile)
    n_tiles = tiles_p * tiles_q * math.prod(cshape[i] for i in batch)
    strides = [ins[q], outs[p], *(ins[i] for i in batch), *(outs[i] for i in batch)]
    vb = _C["GK_VEC_BYTES"]
    vec = all(a >= vb for a in aligns) and all(s * itemsize % vb == 0 for s in strides)
    return TransposePlan(
        min(n_tiles, 2**31 - 1),
        _C["GK_TRANSPOSE_THREADS"],
        cshape[p],
        cshape[q],
        ins[q],
        outs[p],
        tiles_p,
        tiles_q,
        n_tiles,
        vec,
        [cshape[i] for i in batch],
        [ins[i] for i in batch],
        [outs[i] for i in batch],
    )
