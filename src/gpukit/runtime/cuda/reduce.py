"""Reduction, scan, arange and random-number plans on CUDA (kernels/reduce.cu, scan.cu, fill.cu,
philox.cu)."""

from __future__ import annotations

import math

from ...base import shapes, strides
from .. import kernels
from ..args import CONSTANTS
from ..backend import Layout
from ..philox import PER_GROUP
from .plans import PlanBuilder

_BLOCK = CONSTANTS["GK_BLOCK"]
_MAX_GRID = 1 << 20  # blocks of the block-per-output kernels; they loop past it


def plan_reduce(backend, name: str, src: Layout, axes: tuple, out: Layout):
    """Args: src. Allocates out (contiguous, the kept dimensions)."""
    b = PlanBuilder(backend, "a", outputs=[out.size * out.dtype.itemsize])
    file, defines = kernels.reduction(name, src.dtype, out.dtype)
    el = strides.element_strides(src, src.shape)
    kept = [i for i in range(src.ndim) if i not in axes]
    out_shape, (out_stride,) = strides.collapse(
        [src.shape[i] for i in kept], [[el[i] for i in kept]]
    )
    red_shape, (red_stride,) = strides.collapse(
        [src.shape[i] for i in axes], [[el[i] for i in axes]]
    )
    n_red = math.prod(src.shape[i] for i in axes)
    n_out = math.prod(out_shape)
    scale = 1.0
    if name == "mean":
        scale = 1.0 / n_red if n_red else math.nan  # NumPy: the mean of nothing is NaN
    if n_out:
        block_fn, thread_fn = (
            backend.function(file, defines, k) for k in kernels.kernels_of(file, defines)
        )
        fields = {
            "n_out": n_out,
            "n_red": n_red,
            "out_ndim": len(out_shape),
            "red_ndim": len(red_shape),
            "out_shape": out_shape,
            "out_stride": out_stride,
            "red_shape": red_shape,
            "red_stride": red_stride,
            "scale": scale,
        }
        # A block per output when the reduction is long and either reads contiguously or there
        # are too few outputs to fill the GPU with a thread each; otherwise a thread per output.
        contiguous_inner = bool(red_stride) and red_stride[-1] == 1
        few_outputs = n_out < backend.sm_count * 64
        if n_red >= 64 and (contiguous_inner or few_outputs):
            fn, grid = block_fn, min(n_out, _MAX_GRID)
        else:
            fn, grid = thread_fn, backend.blocks_for(n_out, _BLOCK)
        addresses = [("in", 0, 0, 1), ("out", b.output(0), 0, 1)]
        b.launch(fn, grid, _BLOCK, "gk_reduce_args", fields, addresses=addresses)
    return b.build()


def plan_cumsum(backend, src: Layout, axis: int, out: Layout):
    """Args: src. Allocates out (contiguous, src's shape)."""
    b = PlanBuilder(backend, "a", outputs=[out.size * out.dtype.itemsize])
    emit_cumsum(b, src, 0, axis, out, b.output(0))
    return b.build()


def emit_cumsum(b: PlanBuilder, src: Layout, src_arg: int, axis: int, out: Layout, out_arg):
    """Appends out (contiguous) = running sum of src along `axis`."""
    file, defines = kernels.cumsum(src.dtype, out.dtype)
    fn = b.backend.function(file, defines, "gk_cumsum")
    in_el = strides.element_strides(src, src.shape)
    out_el = shapes.contiguous_strides(src.shape, 1)
    rows = [i for i in range(src.ndim) if i != axis]
    row_shape, (in_rows, out_rows) = strides.collapse(
        [src.shape[i] for i in rows], [[in_el[i] for i in rows], [out_el[i] for i in rows]]
    )
    n, n_rows = src.shape[axis], math.prod(row_shape)
    if n == 0 or n_rows == 0:
        return
    fields = {
        "n_rows": n_rows,
        "n": n,
        "in_step": in_el[axis],
        "out_step": out_el[axis],
        "row_ndim": len(row_shape),
        "row_shape": row_shape,
        "in_row_stride": in_rows,
        "out_row_stride": out_rows,
    }
    addresses = [("in", src_arg, 0, 1), ("out", out_arg, 0, 1)]
    grid = min(n_rows, _MAX_GRID)
    b.launch(fn, grid, _BLOCK, "gk_scan_args", fields, addresses=addresses)


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
