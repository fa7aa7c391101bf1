"""Reduction, scan, arange and random-number plans on CUDA (kernels/reduce.cu, scan.cu, fill.cu,
philox.cu). Launch shapes of reductions and scans come from reduce_geometry; a reduction split
over blocks, or a scan that needs the sums of its pieces, is one plan whose launches share a
per-call scratch buffer."""

from __future__ import annotations

import math

import numpy as np

from ...base import shapes, strides
from .. import kernels
from ..args import CONSTANTS
from ..backend import Layout
from ..philox import PER_GROUP
from . import reduce_geometry
from .elementwise import emit_fill_zero
from .plans import PlanBuilder

_BLOCK, _VEC_BYTES = CONSTANTS["GK_BLOCK"], CONSTANTS["GK_VEC_BYTES"]
_U8 = np.dtype(np.uint8)


def plan_reduce(backend, name: str, src: Layout, axes: tuple, out: Layout, ddof=0):
    """Args: src. Allocates out (contiguous, the kept dimensions). `ddof`: var and std divide
    by n - ddof."""
    b = PlanBuilder(backend, "a", outputs=[out.size * out.dtype.itemsize])
    emit_reduce(b, name, src, 0, axes, out, b.output(0), ddof)
    return b.build()


def reduce_scale(name: str, n: int, ddof=0) -> float:
    """What the reduction's result is multiplied by: 1 / n for mean (NaN over nothing, as
    NumPy), 1 / (n - ddof) for var and std (inf when n <= ddof), else 1."""
    if name == "mean":
        return 1.0 / n if n else math.nan
    if name in ("var", "std"):
        return 1.0 / (n - ddof) if n > ddof else math.inf
    return 1.0


def emit_reduce(b: PlanBuilder, name, src: Layout, src_arg, axes, out: Layout, out_arg, ddof=0):
    """Appends out (contiguous) = reduction `name` of src over `axes`: the main launch, and the
    launch that combines the pieces of a split reduction (their states in a scratch buffer)."""
    item = src.dtype.itemsize
    geo = reduce_geometry.plan_reduce(
        src.shape,
        strides.element_strides(src, src.shape),
        axes,
        item,
        src.align,
        b.backend.sm_count,
        keep_order=name in ("argmax", "argmin"),
    )
    if geo is None:
        return
    file, defines = kernels.reduction(name, src.dtype, out.dtype)
    addresses = [("out", out_arg, 0, 1)]
    if geo.splits > 1:
        addresses.append(("partial", b.add_scratch(geo.scratch_bytes), 0, 1))
    fields = _reduce_fields(geo, reduce_scale(name, geo.n_red, ddof))
    _emit_reduce_launches(b, file, defines, geo, fields, (src_arg, geo.in_offset * item), addresses)


def _reduce_fields(geo, scale: float) -> dict:
    return {
        "n_out": geo.n_out,
        "n_red": geo.n_red,
        "chunk": geo.chunk,
        "part_out_stride": geo.part_out_stride,
        "part_split_stride": geo.part_split_stride,
        "splits": geo.splits,
        "out_ndim": len(geo.out_shape),
        "red_ndim": len(geo.red_shape),
        "out_shape": geo.out_shape,
        "out_stride": geo.out_stride,
        "red_shape": geo.red_shape,
        "red_stride": geo.red_stride,
        "scale": scale,
    }


def _emit_reduce_launches(b, file, defines, geo, fields, src, addresses) -> None:
    """geo's main launch (and its finishing launch) reading src = (arg, byte displacement):
    gk_red_outer_vec reads 16 bytes at a time, which the plan's alignment check guards."""
    src_arg, displacement = src
    align = _VEC_BYTES if geo.main.kernel == "gk_red_outer_vec" else 1
    addresses = [("in", src_arg, displacement, align), *addresses]
    for launch in (geo.main, geo.finish):
        if launch is not None:
            fn = b.backend.function(file, defines, launch.kernel)
            b.launch(fn, launch.grid, launch.block, "gk_reduce_args", fields, addresses=addresses)


def plan_cumsum(backend, src: Layout, axis: int, out: Layout):
    """Args: src. Allocates out (contiguous, src's shape)."""
    b = PlanBuilder(backend, "a", outputs=[out.size * out.dtype.itemsize])
    emit_cumsum(b, src, 0, axis, out, b.output(0))
    return b.build()


def emit_cumsum(b: PlanBuilder, src: Layout, src_arg: int, axis: int, out: Layout, out_arg):
    """Appends out (contiguous) = running sum of src along `axis`: gk_scan_tiles over a scratch
    buffer of tile states (its flags zeroed first), or, for a strided axis, the pieces' sums (a
    reduction into scratch) then gk_scan_columns."""
    file, defines = kernels.cumsum(src.dtype, out.dtype)
    geo = reduce_geometry.plan_cumsum(
        src.shape,
        strides.element_strides(src, src.shape),
        shapes.contiguous_strides(src.shape, 1),
        axis,
        src.dtype.itemsize,
        out.dtype.itemsize,
        kernels.acc_bytes(defines),
        (src.align, out.align),
        b.backend.sm_count,
    )
    if geo is None:
        return
    fields = {
        "n_rows": geo.n_rows,
        "n": geo.n,
        "in_step": geo.in_step,
        "out_step": geo.out_step,
        "tiles_per_row": geo.tiles_per_row,
        "lead": geo.lead,
        "chunk": geo.chunk,
        "row_ndim": len(geo.row_shape),
        "vec": int(geo.vec),
        "row_shape": geo.row_shape,
        "in_row_stride": geo.in_row_stride,
        "out_row_stride": geo.out_row_stride,
    }
    align = _VEC_BYTES if geo.vec else 1
    addresses = [("in", src_arg, 0, align), ("out", out_arg, 0, align)]
    if geo.main.kernel == "gk_scan_tiles":
        state = b.add_scratch(max(geo.scratch_bytes, 16))
        emit_fill_zero(b, Layout(_U8, (geo.zero_bytes,), (1,)), state)
        names = ("ticket", "flags", "sums", "prefs")
        addresses += [(f, state, at, 1) for f, at in zip(names, geo.offsets, strict=True)]
        addresses.append(("partial", state, 0, 1))
    elif geo.reduce is not None:  # the pieces' sums, [piece][row], first (not combined)
        r = geo.reduce._replace(finish=None)
        partial = b.add_scratch(r.scratch_bytes)
        pieces_file, pieces_defines = kernels.cumsum_pieces(src.dtype, out.dtype)
        _emit_reduce_launches(
            b, pieces_file, pieces_defines, r, _reduce_fields(r, 1.0), (src_arg, 0),
            [("partial", partial, 0, 1)],
        )  # fmt: skip
        addresses.append(("partial", partial, 0, 1))
    fn = b.backend.function(file, defines, geo.main.kernel)
    if geo.shared:
        b.backend.allow_shared(fn, geo.shared)
    b.launch(fn, geo.main.grid, geo.main.block, "gk_scan_args", fields, shared=geo.shared,
             addresses=addresses)  # fmt: skip


def plan_arange(backend, out: Layout):
    """Args: start, step (scalars). Allocates out (1-D)."""
    b = PlanBuilder(backend, "ss", outputs=[out.size * out.dtype.itemsize])
    n = out.size
    if n:
        fn = backend.function(*kernels.arange(out.dtype), "gk_arange")
        b.launch(
            fn, backend.blocks_for(n, _BLOCK), _BLOCK, "gk_arange_args", {"n": n},
            addresses=[("out", b.output(0), 0, 1)],
            floats=[("start", 0), ("step", 1)],
            ints=[("istart", 0), ("istep", 1)],
        )  # fmt: skip
    return b.build()


def plan_philox(backend, kernel: str, out: Layout, affine: bool):
    """Args: seed, offset, lo, scale, low, range (scalars; range 0 stands for 2**64).
    Allocates out (contiguous)."""
    b = PlanBuilder(backend, "ssssss", outputs=[out.size * out.dtype.itemsize])
    n = out.size
    if n:
        fn = backend.function(*kernels.philox(out.dtype), kernel)
        groups = -(-n // PER_GROUP[kernel])
        b.launch(
            fn, backend.blocks_for(groups, _BLOCK), _BLOCK, "gk_philox_args",
            {"n": n, "affine": int(affine)},
            addresses=[("out", b.output(0), 0, 1)],
            # key0 and key1 are the seed's low and high words: one 64-bit slot fills both.
            ints=[("key0", 0), ("offset", 1), ("low", 4), ("range", 5)],
            floats=[("lo", 2), ("scale", 3)],
        )  # fmt: skip
    return b.build()
