"""FFT plans on CUDA (kernels/fft.cu, fft_aux.cu; geometry in runtime/fft_plan.py): a length
one block holds is one launch over all rows; a longer smooth length runs as four-step passes
(columns of n1 transformed and twiddled, then rows of n2, recursively), each pass reading
several adjacent columns per block; a length with a prime factor above 13 runs Bluestein's
chirp-z transform over a power-of-two length. Real transforms of even length run as complex ones
of half the length with a post- (or pre-) processing pass; odd ones widen to complex first.
Inverse transforms conjugate their input and output around forward ones."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...base import strides as _strides
from .. import fft_plan
from ..args import CONSTANTS
from ..backend import Layout
from .elementwise import emit_copy
from .plans import PlanBuilder

_BATCH_DIMS = CONSTANTS["GK_FFT_BATCH_DIMS"]
_AUX_BLOCK = CONSTANTS["GK_BLOCK"]
_STATIC_SHARED = 48 * 1024


@dataclass(frozen=True)
class View:
    """Where rows live: argument number, element stride along the transform, and the element
    strides of the batch dimensions (dimension 0 fastest)."""

    arg: int
    step: int
    strides: tuple


class _Emitter:
    def __init__(self, backend, b: PlanBuilder, dtype: np.dtype, limit: int | None):
        self.backend, self.b = backend, b
        self.item = dtype.itemsize
        self.real = "float" if dtype == np.complex64 else "double"
        self.shared_limit = backend.device.max_shared_per_block_optin
        self.limit = limit or fft_plan.max_block_length(self.item, self.shared_limit)

    # --- launches -------------------------------------------------------------------------------
    def rows(self, n, shape, src: View, dst: View, conj_in, conj_out, scale, tw_n=0, out_len=None):
        """One gk_fft_rows launch: rows of n (batch `shape`) from src to dst."""
        columns = src.step != 1 or dst.step != 1
        if dst.step != 1 and not tw_n and len(shape) > 1:
            # A block takes adjacent rows along batch dimension 0: for strided writes, the
            # dimension whose rows lie nearest in the output (the last pass of three: its rows'
            # outputs interleave along the outermost dimension, not the pass's own). The
            # twiddled passes keep theirs (the twiddle's index is dimension 0's). A dimension of
            # one row (stride 0) is nobody's neighbour: 2^24's second pass, (1, 4096) rows, took
            # one row a block, 8-byte writes 32 KiB apart.
            live = [i for i in range(len(shape)) if shape[i] > 1] or [0]
            d = min(live, key=lambda i: abs(dst.strides[i]))
            order = (d, *(i for i in range(len(shape)) if i != d))
            shape = tuple(shape[i] for i in order)
            src = View(src.arg, src.step, tuple(src.strides[i] for i in order))
            dst = View(dst.arg, dst.step, tuple(dst.strides[i] for i in order))
        blk = fft_plan.block(n, self.item, columns, shape[0] if shape else 1, self.shared_limit)
        out_len = n if out_len is None else out_len
        if not 0 < out_len <= n:
            raise ValueError(f"FFT rows of {n} cut to {out_len} outputs")
        flow = fft_plan.Flow(
            direct_in=src.step == 1,
            direct_out=dst.step == 1,
            conj_in=bool(conj_in),
            conj_out=bool(conj_out),
            scaled=float(scale) != 1.0,
            twiddled=tw_n != 0,
            cropped=out_len != n,
            ndim=len(shape),
        )
        fn = self.backend.function("fft.cu", fft_plan.defines(blk, self.real, flow), "gk_fft_rows")
        if blk.shared > _STATIC_SHARED:
            self.backend.allow_shared(fn, blk.shared)
        rows = math.prod(shape)
        fields = {
            "rows": rows,
            "in_step": src.step,
            "out_step": dst.step,
            "out_len": out_len,
            "tw_n": tw_n,
            "batch_shape": list(shape),
            "in_batch": list(src.strides),
            "out_batch": list(dst.strides),
            "scale": float(scale),
            "batch_ndim": len(shape),
            "conj_in": int(conj_in),
            "conj_out": int(conj_out),
        }
        self.b.launch(fn, -(-rows // blk.rows), blk.threads, "gk_fft_args", fields,
                      shared=blk.shared,
                      addresses=[("in", src.arg, 0, 1), ("out", dst.arg, 0, 1)])  # fmt: skip

    def aux(self, kernel, total, *, src=None, shape=(), out, n=0, m=0, filt=None, scale=1.0,
            conj=False):  # fmt: skip
        fn = self.backend.function("fft_aux.cu", fft_plan.aux_defines(self.real), kernel)
        fields = {
            "rows": math.prod(shape),
            "n": n,
            "m": m,
            "in_step": src.step if src else 1,
            "batch_shape": list(shape),
            "in_batch": list(src.strides) if src else [],
            "scale": float(scale),
            "batch_ndim": len(shape),
            "conj": int(conj),
        }
        addresses = [("out", out, 0, 1)]
        if src is not None:
            addresses.append(("in", src.arg, 0, 1))
        if filt is not None:
            addresses.append(("filter", filt, 0, 1))
        grid = self.backend.blocks_for(total, _AUX_BLOCK)
        self.b.launch(fn, grid, _AUX_BLOCK, "gk_fft_aux_args", fields, addresses=addresses)

    def scratch(self, elements: int) -> int:
        return self.b.add_scratch(elements * self.item)

    # --- transforms -----------------------------------------------------------------------------
    def c2c(self, n, shape, src: View, dst: View, conj_in, conj_out, scale, out_len=None):
        """dst = the forward transform (conjugated around when asked, scaled) of src's rows;
        with out_len, only the first out_len outputs of each row (dst's step must be 1 then)."""
        if not fft_plan.is_smooth(n):
            self.bluestein(n, shape, src, dst, conj_in, conj_out, scale, out_len)
        elif n <= self.limit:
            self.rows(n, shape, src, dst, conj_in, conj_out, scale, out_len=out_len)
        elif out_len is not None and out_len != n:
            rows = math.prod(shape)
            full = self.scratch(rows * n)
            self.c2c(n, shape, src, View(full, 1, _contiguous(shape, n)), conj_in, conj_out, scale)
            self._crop(full, rows, n, out_len, dst)
        else:
            self.four_step(n, shape, src, dst, conj_in, conj_out, scale)

    def four_step(self, n, shape, src: View, dst: View, conj_in, conj_out, scale):
        """x[n2 + N2 n1] -> columns of n1 transformed and twiddled into y[k1][n2], then rows of
        n2 into X[k1 + N1 k2]."""
        n1, n2 = fft_plan.split(n, self.limit, self.item)
        rows = math.prod(shape)
        y = self.scratch(rows * n)
        outer = _contiguous(shape, n)
        self.rows(n1, (n2, *shape), View(src.arg, src.step * n2, (src.step, *src.strides)),
                  View(y, n2, (1, *outer)), conj_in, False, 1.0, tw_n=n)  # fmt: skip
        self.c2c(n2, (n1, *shape), View(y, 1, (n2, *outer)),
                 View(dst.arg, dst.step * n1, (dst.step, *dst.strides)), False, conj_out,
                 scale)  # fmt: skip

    def bluestein(self, n, shape, src: View, dst: View, conj_in, conj_out, scale, out_len):
        """X[k] = w[k] sum_j x[j] w[j] conj(w[k - j]), the convolution by transforms of m."""
        m = fft_plan.bluestein_length(n)
        rows = math.prod(shape)
        flat = (rows,)
        a = self.scratch(rows * m)
        self.aux("gk_fft_chirp_pre", rows * m, src=src, shape=shape, out=a, n=n, m=m,
                 conj=conj_in)  # fmt: skip
        h = self.scratch(m)
        self.aux("gk_fft_chirp_filter", m, out=h, n=n, m=m)
        fh = self.scratch(m)
        self.c2c(m, (1,), View(h, 1, (m,)), View(fh, 1, (m,)), False, False, 1.0)
        fa = self.scratch(rows * m)
        self.c2c(m, flat, View(a, 1, (m,)), View(fa, 1, (m,)), False, False, 1.0)
        self.aux("gk_fft_chirp_mul", rows * m, src=View(fa, 1, (m,)), shape=flat, out=a, n=n,
                 m=m, filt=fh)  # fmt: skip
        self.c2c(m, flat, View(a, 1, (m,)), View(fa, 1, (m,)), False, False, 1.0)
        direct = (
            out_len in (None, n) and dst.step == 1 and tuple(dst.strides) == _contiguous(shape, n)
        )
        target = dst.arg if direct else self.scratch(rows * n)
        self.aux("gk_fft_chirp_post", rows * n, src=View(fa, 1, (m,)), shape=flat, out=target,
                 n=n, m=m, scale=scale / m, conj=conj_out)  # fmt: skip
        if not direct:
            self._crop(target, rows, n, n if out_len is None else out_len, dst)

    def _crop(self, full: int, rows: int, n: int, out_len: int, dst: View) -> None:
        """dst (contiguous rows of out_len) = the first out_len values of full's rows of n."""
        if dst.step != 1:
            raise AssertionError("cropped FFT output must be contiguous")
        dtype = np.dtype(np.complex64 if self.real == "float" else np.complex128)
        src = Layout(dtype, (rows, out_len), (n * self.item, self.item))
        out = Layout(dtype, (rows, out_len), (out_len * self.item, self.item))
        emit_copy(self.b, src, full, out, dst.arg)


def _contiguous(shape, n: int) -> tuple:
    """Element strides of contiguous rows of n over batch `shape` (dimension 0 fastest)."""
    out, step = [], n
    for d in shape:
        out.append(step)
        step *= d
    return tuple(out)


def _batch(shape, *strides):
    """The batch dimensions (C order in) merged where every operand allows and listed fastest
    first, with each operand's element strides."""
    if not shape:
        return [1], [[0] for _ in strides]
    s, st = _strides.collapse(list(shape), [list(x) for x in strides])
    if not s:
        return [1], [[0] for _ in strides]
    return s[::-1], [x[::-1] for x in st]


def plan_fft(backend, src: Layout, kind: str, n: int, inverse: bool, scale: float, limit=None):
    """Args: src. Allocates the contiguous result (see Backend.plan_fft). `limit`: the longest
    row one block transforms (tests pass a short one to reach the multi-pass paths)."""
    item = src.dtype.itemsize
    batch_shape = src.shape[:-1]
    rows = math.prod(batch_shape)
    el = [s // item for s in src.strides]
    if kind == "c2c":
        cx, out_len, out_item = src.dtype, n, item
    elif kind == "r2c":
        cx = np.dtype(np.complex64 if src.dtype == np.float32 else np.complex128)
        out_len, out_item = n // 2 + 1, cx.itemsize
    else:
        cx, out_len = src.dtype, n
        out_item = item // 2
    b = PlanBuilder(backend, "a", outputs=[rows * out_len * out_item])
    e = _Emitter(backend, b, cx, limit)
    out_arg = b.output(0)
    m = src.shape[-1]
    shape, (in_b, out_b) = _batch(batch_shape, el[:-1], _c_strides(batch_shape, out_len))
    src_view = View(0, el[-1], tuple(in_b))
    # The transform that sees the batch dimensions (others run over flat rows) adds one for
    # each four-step pass.
    seen = n if kind == "c2c" else n // 2 if kind == "r2c" and n % 2 == 0 else 1
    depth = fft_plan.passes(seen, e.limit, e.item) - 1 if fft_plan.is_smooth(seen) else 0
    if len(shape) + depth > _BATCH_DIMS or len(shape) > _BATCH_DIMS:
        # Too many batch dimensions for the kernels' indexing: a contiguous copy first.
        dense = b.add_scratch(rows * m * item)
        copy = Layout(src.dtype, (rows, m), (m * item, item))
        emit_copy(b, Layout(src.dtype, src.shape, src.strides), 0, _reshaped(copy, src), dense)
        shape, src_view = [rows], View(dense, 1, (m,))
        out_b = [out_len]
    shape = tuple(shape)
    dst = View(out_arg, 1, tuple(out_b))
    if kind == "c2c":
        e.c2c(n, shape, src_view, dst, inverse, inverse, scale)
    elif kind == "r2c":
        half = n // 2
        pairs = (
            n % 2 == 0
            and src_view.step == 1
            and all(s % 2 == 0 for s in src_view.strides)
            and src.align >= 2 * item
        )
        if pairs:
            z = e.scratch(rows * half)
            zs = _contiguous(shape, half)
            e.c2c(half, shape, View(src_view.arg, 1, tuple(s // 2 for s in src_view.strides)),
                  View(z, 1, zs), False, False, 1.0)  # fmt: skip
            e.aux("gk_fft_r2c_post", rows * (half + 1), src=View(z, 1, zs), shape=shape,
                  out=out_arg, n=n, scale=scale)  # fmt: skip
        else:
            wide = e.scratch(rows * n)
            e.aux("gk_fft_expand_real", rows * n, src=src_view, shape=shape, out=wide, n=n)
            flat = (rows,)
            e.c2c(n, flat, View(wide, 1, (n,)), View(out_arg, 1, (out_len,)), False, False,
                  scale, out_len=out_len)  # fmt: skip
    else:  # c2r
        half = n // 2
        flat = (rows,)
        if n % 2 == 0:
            z = e.scratch(rows * half)
            e.aux("gk_fft_c2r_pre", rows * half, src=src_view, shape=shape, out=z, n=n)
            # The real result read as complex pairs: rows of half values.
            e.c2c(half, flat, View(z, 1, (half,)), View(out_arg, 1, (half,)), True, True, scale)
        else:
            wide = e.scratch(rows * n)
            e.aux("gk_fft_expand_herm", rows * n, src=src_view, shape=shape, out=wide, n=n)
            spec = e.scratch(rows * n)
            e.c2c(n, flat, View(wide, 1, (n,)), View(spec, 1, (n,)), True, True, scale)
            e.aux("gk_fft_real_part", rows * n, src=View(spec, 1, (n,)), shape=flat,
                  out=out_arg, n=n)  # fmt: skip
    return b.build()


def _c_strides(shape, n: int) -> list:
    """Element strides of the batch dimensions of contiguous rows of n (C order)."""
    out, step = [], n
    for d in reversed(shape):
        out.append(step)
        step *= d
    return out[::-1]


def _reshaped(dense: Layout, src: Layout) -> Layout:
    """dense's memory seen with src's shape (C order)."""
    item = dense.dtype.itemsize
    strides = (*(s * item for s in _c_strides(src.shape[:-1], src.shape[-1])), item)
    return Layout(dense.dtype, src.shape, strides)
