"""Elementwise plans on CUDA: kernels/elementwise.cu with the op's functor, the contiguous
kernel when every operand is one dense run, else the strided one over merged dimensions. A copy
into a contiguous array of the same dtype from a view that is contiguous along another dimension
(ascontiguousarray(a.T)) goes through kernels/transpose.cu's shared-memory tiles instead."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...base import shapes, strides
from .. import kernels
from ..args import CONSTANTS
from ..backend import Layout
from ..ops import ELEMENTWISE
from . import copy_geometry
from .plans import Const, PlanBuilder

_BLOCK, _VEC_BYTES = CONSTANTS["GK_BLOCK"], CONSTANTS["GK_VEC_BYTES"]
_MAX_GRID_X = 2**31 - 1  # blocks along x of one launch


def plan_elementwise(backend, op, loop, inputs, out: Layout, allocate: bool):
    """Args: one per input (an array, or a scalar value where `inputs` holds its type), then
    out unless `allocate` (then the call allocates a contiguous out and returns it)."""
    arguments = "".join("a" if isinstance(x, Layout) else "s" for x in inputs)
    if allocate:
        b = PlanBuilder(backend, arguments, outputs=[out.size * out.dtype.itemsize])
        target = (_contiguous(out), b.output(0))
    else:
        b = PlanBuilder(backend, arguments + "a")
        target = (out, len(inputs))
    emit(b, op, loop, [(x, i) for i, x in enumerate(inputs)], target)
    return b.build()


def _contiguous(layout: Layout) -> Layout:
    return Layout(
        layout.dtype, layout.shape, shapes.contiguous_strides(layout.shape, layout.dtype.itemsize)
    )


def emit(b: PlanBuilder, op, loop, inputs, target) -> None:
    """Appends the launch of `op` (computed in `loop`) to `b`: `inputs` are (Layout, arg),
    (scalar type, arg) or (Const(value), None); `target` is (out Layout, arg)."""
    out, out_arg = target
    if isinstance(op, str):
        op = ELEMENTWISE[op]
    n = out.size
    if n == 0:
        return
    backend = b.backend
    if op.name == "identity" and len(inputs) == 1 and _emit_transpose(b, *inputs[0], out, out_arg):
        return
    is_array = [isinstance(x, Layout) for x, _ in inputs]
    in_types = tuple(x.dtype if a else None for (x, _), a in zip(inputs, is_array, strict=True))
    file, defines = kernels.elementwise(op.name, loop, out.dtype, in_types)
    item = out.dtype.itemsize
    out_el = tuple(
        0 if d == 1 else st // item for d, st in zip(out.shape, out.strides, strict=True)
    )
    arrays = [x for (x, _), a in zip(inputs, is_array, strict=True) if a]
    cshape, el_strides = strides.collapse(
        out.shape, [out_el, *(strides.element_strides(a, out.shape) for a in arrays)]
    )
    scalar_fields, floats, ints, imags = {}, [], [], []
    addresses = [(("ptr", 0), out_arg, 0, 1)]
    for i, ((x, arg), a) in enumerate(zip(inputs, is_array, strict=True)):
        if a:
            addresses.append((("ptr", i + 1), arg, 0, 1))
        elif isinstance(x, Const):
            scalar_fields[i + 1] = x.value
        else:
            floats.append((("scalar_f", i + 1), arg))
            ints.append((("scalar_i", i + 1), arg))
            if loop.kind == "c":
                imags.append((("scalar_im", i + 1), arg))
    contiguous = len(cshape) <= 1 and all(st in ([], [1]) for st in el_strides)
    if contiguous and len(inputs) <= 2:
        fn = backend.function(file, defines, "gk_ew_contig")
        fields = {"n": n, **_scalars(scalar_fields, 3)}
        vec = _vector(loop, out.dtype, in_types)
        grid = _contig_grid(backend, -(-n // vec), op.long_math and vec > 4)
        b.launch(fn, grid, _BLOCK, "gk_ew_contig_args", fields, addresses=addresses,
                 floats=floats, ints=ints, imags=imags)  # fmt: skip
        return
    fn = backend.function(file, defines, "gk_ew_strided")
    it = iter(el_strides[1:])
    slot_strides = [el_strides[0]] + [next(it) if a else [0] * len(cshape) for a in is_array]
    fields = {
        "n": n,
        "ndim": len(cshape),
        "shape": cshape,
        "stride": slot_strides,
        **_scalars(scalar_fields, 4),
    }
    b.launch(fn, backend.blocks_for(n, _BLOCK), _BLOCK, "gk_ew_args", fields,
             addresses=addresses, floats=floats, ints=ints, imags=imags)  # fmt: skip


def _emit_transpose(b: PlanBuilder, src, src_arg, out: Layout, out_arg) -> bool:
    """out (src's dtype; contiguous in some order of its axes) = src through shared-memory
    tiles, when src is contiguous along a dimension other than out's innermost; False when
    that does not apply."""
    if not isinstance(src, Layout) or src.dtype != out.dtype:
        return False
    item = out.dtype.itemsize
    # A copy is the same copy with both sides' axes in any one order: out's, outermost first.
    order = sorted(range(len(out.shape)), key=lambda d: -out.strides[d])
    shape = [out.shape[d] for d in order]
    out_strides = [out.strides[d] for d in order]
    if min(out.strides, default=0) < 0 or not shapes.is_contiguous(shape, out_strides, item):
        return False
    src_strides = strides.element_strides(src, out.shape)
    geo = copy_geometry.plan_transpose(
        shape,
        [src_strides[d] for d in order],
        shapes.contiguous_strides(shape, 1),
        item,
        (src.align, out.align),
    )
    if geo is None:
        return False
    fields = {
        "p": geo.p,
        "q": geo.q,
        "in_q_stride": geo.in_q_stride,
        "out_p_stride": geo.out_p_stride,
        "tiles_p": geo.tiles_p,
        "tiles_q": geo.tiles_q,
        "n_tiles": geo.n_tiles,
        "batch_ndim": len(geo.batch_shape),
        "vec": int(geo.vec),
        "batch_shape": geo.batch_shape,
        "in_batch_stride": geo.in_batch_stride,
        "out_batch_stride": geo.out_batch_stride,
    }
    align = _VEC_BYTES if geo.vec else 1
    addresses = [("in", src_arg, 0, align), ("out", out_arg, 0, align)]
    fn = b.backend.function(*kernels.transpose(item), "gk_transpose")
    b.launch(fn, geo.grid, geo.block, "gk_transpose_args", fields, addresses=addresses)
    return True


def _contig_grid(backend, vectors: int, capped: bool) -> int:
    """Blocks of gk_ew_contig for `vectors` vectors: GK_EW_UNROLL a thread; `capped` (an op of
    long math over narrow elements): at most GK_EW_BLOCKS_PER_SM blocks per SM, a grid-stride
    loop doing the rest."""
    blocks = -(-vectors // (_BLOCK * CONSTANTS["GK_EW_UNROLL"]))
    if capped:
        blocks = min(blocks, backend.sm_count * CONSTANTS["GK_EW_BLOCKS_PER_SM"])
    return max(1, min(blocks, _MAX_GRID_X))


def _vector(loop, out, in_types) -> int:
    """Elements per vector access of gk_ew_contig: GK_VEC_BYTES of its widest operand (a scalar
    operand is read as the loop type)."""
    widest = max(out.itemsize, *((loop if t is None else t).itemsize for t in in_types))
    return _VEC_BYTES // widest


def _scalars(values: dict, slots: int) -> dict:
    """The scalar_f / scalar_i fields for constant scalars (slot -> value)."""
    if not values:
        return {}
    f, im, i = [0.0] * slots, [0.0] * slots, [0] * slots
    for slot, v in values.items():
        f[slot] = float(v.real)
        im[slot] = float(v.imag)
        i[slot] = int(v.real)
    return {"scalar_f": f, "scalar_im": im, "scalar_i": i}


def emit_fill_zero(b: PlanBuilder, layout: Layout, arg: int) -> None:
    """Appends a launch that zeroes an array (an error flag before the kernel that may set it)."""
    emit(b, "identity", layout.dtype, [(Const(0), None)], (layout, arg))


_RAW = {n: np.dtype(f"uint{8 * n}") for n in (1, 2, 4, 8)}  # bit-exact moves by width


def emit_copy(b: PlanBuilder, src: Layout, src_arg: int, dst: Layout, dst_arg: int) -> None:
    """Appends dst[...] = src (dtype converted; src broadcast or strided). A copy within one
    dtype moves the bits as they are (as NumPy does: a float16 NaN keeps its sign and payload,
    which a round trip through float would not)."""
    raw = _RAW.get(dst.dtype.itemsize) if src.dtype == dst.dtype else None
    if raw is not None:
        src, dst = replace(src, dtype=raw), replace(dst, dtype=raw)
    emit(b, "identity", dst.dtype, [(src, src_arg)], (dst, dst_arg))
