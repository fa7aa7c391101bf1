"""The CPU backend: NumPy computes, over memory that the Rust pool hands out. Its plans are
Python functions over NumPy views of that memory (see gpukit.runtime.backend)."""

from __future__ import annotations

import math
import os
import time

import numpy as np

from ... import _core, _native
from ...base.dtypes import EXPONENT_RULES, bfloat16
from ...base.shapes import contiguous_strides
from .. import capture, philox
from ..args import arg_struct
from ..backend import Capabilities, Layout
from ..ops import ELEMENTWISE
from . import decode, graphs, nn
from . import linalg as _linalg
from . import sort as _sort

CAPABILITIES = Capabilities(
    device_streams=False,
    compiles_kernels=False,
    memory_info=False,
    launch_pacing=False,
    cuda_array_interface=False,
)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)


class _HostMemory:
    """Lends pool memory to NumPy; the array's .base keeps the pool buffer alive. bfloat16 is
    lent as uint16 (the array interface has no type string for it) and viewed back."""

    __slots__ = ("__array_interface__", "_buffer")

    def __init__(self, buffer, address: int, layout: Layout):
        self._buffer = buffer
        self.__array_interface__ = {
            "data": (address, False),
            "shape": layout.shape,
            "strides": layout.strides,
            "typestr": "<u2" if layout.dtype == bfloat16 else layout.dtype.str,
            "version": 3,
        }


def _as_f32(x):
    """NumPy has few bfloat16 loops: bfloat16 data is computed on in float32 (exactly)."""
    return x.astype(np.float32) if isinstance(x, np.ndarray) and x.dtype == bfloat16 else x


def _compute_into(out: np.ndarray, compute) -> None:
    """compute(dest), with a bfloat16 `out` computed in float32 and rounded once when stored."""
    if out.dtype != bfloat16:
        compute(out)
        return
    tmp = np.empty(out.shape, np.float32)
    compute(tmp)
    np.copyto(out, tmp, casting="unsafe")


def _compute_into32(out: np.ndarray, compute) -> None:
    """compute(dest), with a 16-bit float `out` computed in float32 and rounded once."""
    if out.dtype not in (np.float16, bfloat16):
        compute(out)
        return
    tmp = np.empty(out.shape, np.float32)
    compute(tmp)
    np.copyto(out, tmp, casting="unsafe")


def _identity(name: str, dtype: np.dtype):
    """The identity of max (the lowest value) or min (the highest) in `dtype`."""
    if dtype == np.bool_:
        return name == "min"
    if dtype.kind == "f":
        return -np.inf if name == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if name == "max" else info.max


def _strides(layout: Layout) -> tuple:
    """C-contiguous byte strides of an int64 array of layout's shape."""
    return contiguous_strides(layout.shape, 8)


def _contiguous(layout: Layout) -> Layout:
    strides = contiguous_strides(layout.shape, layout.dtype.itemsize)
    return Layout(layout.dtype, layout.shape, strides)


class _Thread:
    stream = 0  # work is synchronous: there is one stream


class CpuBackend:
    kind = "cpu"
    index = 0
    name = "cpu"
    capabilities = CAPABILITIES
    dlpack_device = (1, 0)  # kDLCPU
    stream = 0
    thread = _Thread()

    def __init__(self, index: int = 0):
        if index != 0:
            from ...errors import BackendUnavailableError

            raise BackendUnavailableError(f"the cpu backend has one device (cpu), not cpu:{index}")
        self.pool = _core.Pool(_native.host_allocator_table())
        self.total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        self._events: dict[int, float | None] = {}
        self._next_event = 0

    def describe(self) -> str:
        return "CPU (NumPy over the gpukit pool)"

    # --- streams and events: synchronous work, events read the host clock ------------------------
    # Inside a capture the CPU refuses what a GPU would, so that code runs the same on both.
    def set_stream(self, stream) -> None:
        pass

    def synchronize(self, stream=None) -> None:
        capture.refuse("synchronize")

    def create_stream(self, priority: int) -> int:
        return 0

    def stream_priority_range(self) -> tuple[int, int]:
        return (0, 0)

    def create_event(self, timing: bool = True) -> int:
        self._next_event += 1
        self._events[self._next_event] = None
        return self._next_event

    def destroy_event(self, event: int) -> None:
        self._events.pop(event, None)

    def record_event(self, event: int, stream: int) -> None:
        capture.refuse("recording an event")
        self._events[event] = time.perf_counter()

    def wait_event(self, stream: int, event: int) -> None:
        pass

    def event_done(self, event: int) -> bool:
        capture.refuse("querying an event")
        return True

    def synchronize_event(self, event: int) -> None:
        capture.refuse("waiting for an event")

    def elapsed_ms(self, start: int, end: int) -> float:
        capture.refuse("reading an event's time")
        t0, t1 = self._events.get(start), self._events.get(end)
        if t0 is None or t1 is None:
            raise ValueError("elapsed_ms: both events must have been recorded")
        return (t1 - t0) * 1e3

    def memory_info(self):
        return None

    # --- memory -------------------------------------------------------------------------------
    def views(self, items) -> list[np.ndarray]:
        """NumPy arrays over (buffer, byte offset, layout) items, from one pool call, so that
        restoring one spilled buffer never spills another of the same operation."""
        return [self.view_at(a, layout, buffer) for a, (buffer, _, layout) in self._at(items)]

    def _at(self, items) -> list:
        """(address, item) of each (buffer, byte offset, layout) item, from one pool call."""
        addresses = self.pool.device_ptrs(tuple(b for b, _, _ in items), 0)
        return [(a + item[1], item) for a, item in zip(addresses, items, strict=True)]

    @staticmethod
    def view_at(address: int, layout: Layout, buffer=None) -> np.ndarray:
        """A NumPy array over pool memory at `address` (kept alive by `buffer`, or by the graph
        that recorded the address)."""
        view = np.asarray(_HostMemory(buffer, address, layout))
        return view.view(bfloat16) if layout.dtype == bfloat16 else view

    @staticmethod
    def run_compute(compute, operands) -> None:
        with np.errstate(all="ignore"):  # silent, as the GPU is: 1/0 is inf, not a warning
            compute(*operands)

    def upload(self, host: np.ndarray, buffer, offset: int) -> None:
        capture.refuse("copying host data to the device (asarray, from_numpy)")
        layout = Layout(np.dtype(np.uint8), (host.nbytes,), (1,))
        (view,) = self.views([(buffer, offset, layout)])
        view[...] = host.reshape(-1).view(np.uint8)

    def download(self, host: np.ndarray, buffer, offset: int) -> None:
        capture.refuse("reading data back (to_numpy, item, a count or error flag)")
        layout = Layout(np.dtype(np.uint8), (host.nbytes,), (1,))
        (view,) = self.views([(buffer, offset, layout)])
        host.reshape(-1).view(np.uint8)[...] = view

    def copy_from_file(self, file, copies, report) -> None:
        """Copies (file offset, bytes, address) ranges of a SafeTensorsFile into pool memory."""
        capture.refuse("loading a file")
        file.copy_to_host(copies, 0, report)

    def _plan(self, inputs, outputs, compute):
        """A plan over array arguments described by `inputs` (Layouts, or scalar types taken as
        values), allocating `outputs` (contiguous Layouts); compute(*views and values, *output
        views) does the work."""
        allocate, at, view_at, run = self.pool.allocate, self._at, self.view_at, self.run_compute
        sizes = [o.size * o.dtype.itemsize for o in outputs]

        def plan(stream, quota, *args):
            items, values, it = [], [], iter(args)
            for x in inputs:
                if isinstance(x, Layout):
                    buffer = next(it)
                    items.append((buffer, next(it), x))
                    values.append(None)
                else:
                    values.append(next(it))
            made = [allocate(n, stream, quota) for n in sizes]
            items += [(b, 0, o) for b, o in zip(made, outputs, strict=True)]
            placed = at(items) if items else []
            token = capture.current()
            if token is not None and token.backend is self:
                # Recorded, not run: a capture only records work, as on a GPU.
                token.record(compute, values, [(a, i[2]) for a, i in placed])
            else:
                run(compute, _operands(values, [view_at(a, i[2], i[0]) for a, i in placed]))
            return None if not made else made[0] if len(made) == 1 else tuple(made)

        return plan

    # --- graphs (gpukit.graphs) ----------------------------------------------------------------
    begin_capture = graphs.begin_capture
    end_capture = graphs.end_capture
    replay_graph = graphs.replay
    release_graph = graphs.release
    graph_held_bytes = graphs.held_bytes

    # --- plans ----------------------------------------------------------------------------------
    def plan_elementwise(self, op, loop, inputs, out: Layout, allocate: bool):
        ufunc = None if op.cpu is not None else getattr(np, op.name)

        def run(*args, out):
            if out.dtype == np.bool_ and not out.flags.c_contiguous:
                # NumPy 2.4's isnan, isinf, isfinite and signbit skip elements of a strided
                # bool output: every bool result goes through a dense one.
                dense = np.empty(out.shape, np.bool_)
                run(*args, out=dense)
                out[...] = dense
            elif ufunc is None:
                op.cpu(*args, out)
            else:
                ufunc(*args, out=out, casting="same_kind")

        arrays = [x for x in inputs if isinstance(x, Layout)]
        if op.name == "identity" and arrays and arrays[0].dtype == out.dtype:

            def compute(src, dest):  # a copy within one dtype moves the bits as they are
                np.copyto(dest, src)

        elif op.storage and loop == bfloat16:
            # Computed on bfloat16 itself (ml_dtypes' loops), scalars taken as bfloat16 first.
            def compute(*views):
                *ins, dest = views
                ins = [x if isinstance(x, np.ndarray) else np.asarray(x, loop) for x in ins]
                run(*ins, out=dest)

        elif bfloat16 in (out.dtype, *(x.dtype for x in arrays)):
            # Array operands are converted to the loop dtype (float32 for bfloat16), as the GPU
            # kernels read them; where's condition and ldexp's exponents keep their types.
            compute_dt = _F32 if loop == bfloat16 else loop
            first = 1 if op.name == "where" else 0
            last = 1 if op.rule in EXPONENT_RULES else len(inputs)

            def convert(i, x):
                if isinstance(x, np.ndarray) and first <= i < last and x.dtype != compute_dt:
                    return x.astype(compute_dt)
                return x

            def compute(*views):
                *ins, dest = views
                ins = [convert(i, x) for i, x in enumerate(ins)]
                _compute_into(dest, lambda d: run(*ins, out=d))

        else:

            def compute(*views):
                *ins, dest = views
                run(*ins, out=dest)

        if allocate:
            return self._plan(inputs, [_contiguous(out)], compute)
        return self._plan((*inputs, out), [], compute)

    def plan_reduce(self, name: str, src: Layout, axes: tuple, out: Layout, ddof=0):
        def compute(s, o):
            if s.dtype in (np.float16, bfloat16):  # 16-bit floats accumulate in float32, as on GPUs
                s = s.astype(np.float32)
                _compute_into32(o, lambda dest: _reduce(name, s, axes, dest, ddof))
            else:
                _reduce(name, s, axes, o, ddof)

        return self._plan((src,), [out], compute)

    def plan_cumsum(self, src: Layout, axis: int, out: Layout):
        def compute(s, o):
            if o.dtype in (np.float16, bfloat16):  # 16-bit floats accumulate in float32
                np.copyto(o, np.cumsum(_as_f32(s), axis=axis, dtype=np.float32), casting="unsafe")
            else:
                np.cumsum(s, axis=axis, out=o)

        return self._plan((src,), [out], compute)

    def plan_matmul(self, a: Layout, b: Layout, out: Layout, bias, row_block, activation=None,
                    residual=None, tf32=False, lower=False):  # fmt: skip
        """out = activation(a @ b + bias) + residual; floating results in float32 (float64 stays
        float64) rounded once when stored, as the GPU kernels' epilogue does; integer ones exact.
        `row_block` is checked and otherwise ignored: the product is one NumPy call (which
        releases the GIL), since BLAS rounds a row differently with the number of rows in the
        call (OpenBLAS 0.3.31: small-matrix kernels), and row blocks must give the same bits.
        `tf32` changes nothing here: NumPy multiplies in full float32; `lower` neither: every
        element is computed."""
        if row_block is not None and row_block < 1:
            raise ValueError(f"matmul: row_block must be at least 1, got {row_block}")
        act = ELEMENTWISE[activation].cpu if activation is not None else None
        floating = out.dtype.kind == "f" or out.dtype == bfloat16
        acc = _F64 if out.dtype == _F64 else _F32

        def compute(va, vb, *rest):
            *extra, vo = rest
            vbias = extra[0] if bias is not None else None
            vres = extra[-1] if residual is not None else None
            if floating:
                va, vb = va.astype(acc, copy=False), vb.astype(acc, copy=False)
            dest = np.empty(vo.shape, acc) if floating else vo
            np.matmul(va, vb, out=dest)
            if vbias is not None:
                np.add(dest, vbias.astype(acc) if floating else vbias, out=dest)
            if act is not None:
                act(dest, dest)
            if vres is not None:
                np.add(dest, vres.astype(acc) if floating else vres, out=dest)
            if floating:
                np.copyto(vo, dest, casting="unsafe")

        inputs = (a, b, *(x for x in (bias, residual) if x is not None))
        return self._plan(inputs, [out], compute)

    def matmul_path(self, a: Layout, b: Layout, out: Layout, tf32: bool) -> str:
        return "numpy"

    def describe_matmul(self, tf32: bool) -> str:
        return "numpy (16-bit floats multiplied in float32)"

    def plan_arange(self, out: Layout):
        def compute(start, step, o):
            o[...] = start + step * np.arange(o.size)

        return self._plan((float, float), [out], compute)

    def plan_philox(self, kernel: str, out: Layout, affine: bool):
        bits = philox.uniform_bits(out.dtype)

        def compute(seed, offset, lo, scale, low, range_, o):
            values = philox.generate(
                kernel, o.size, o.dtype, seed, offset, bits,
                lo=lo, scale=scale, affine=affine, low=low, range=range_,
            )  # fmt: skip
            o[...] = values.reshape(o.shape)

        return self._plan((int, int, float, float, int, int), [out], compute)

    def plan_gather(self, src: Layout, out: Layout, indices, positions, layout, check, scatter):
        """Gather: args src, *indices; outputs out and (with `check`) an int32 flag: k + 1 for
        the first index array k holding an index out of range, before anything moves. Scatter:
        args src, values (`out`), *indices; no outputs."""

        def move(s, o, idx):
            key = [slice(None)] * s.ndim
            for p, v in zip(positions, idx, strict=True):
                key[p] = v
            if scatter:
                s[tuple(key)] = o
            else:
                o[...] = s[tuple(key)]

        if scatter:
            return self._plan((src, out, *indices), [], lambda s, o, *idx: move(s, o, idx))

        def compute(s, *rest):
            if check:
                *idx, o, flag = rest
                flag[...] = 0
                for k, (v, p) in enumerate(zip(idx, positions, strict=True)):
                    n = s.shape[p]
                    if v.size and (v.min() < -n or v.max() >= n):
                        flag[...] = k + 1
                        return
            else:
                *idx, o = rest
            move(s, o, idx)

        flag = [Layout(_I32, (1,), (4,))] if check else []
        return self._plan((src, *indices), [out, *flag], compute)

    def plan_nn_rows(self, kind, src: Layout, axis: int, out: Layout, weight, bias, residual=None):
        """Args: src, weight, bias, residual (those given), eps. Allocates out, and with a
        residual h = src + residual (rounded to src's dtype, as the GPU stores it), normalized."""
        given = [p is not None for p in (weight, bias, residual)]
        params = [p for p in (weight, bias, residual) if p is not None]

        def compute(s, *rest):
            if residual is not None:
                *ps, eps, o, h = rest
            else:
                (*ps, eps, o), h = rest, None
            it = iter(ps)
            w, b, r = (next(it) if g else None for g in given)
            nn.rows(kind, s, axis, w, b, eps, o, r, h)

        outputs = [out, out] if residual is not None else [out]
        return self._plan((src, *params, float), outputs, compute)

    def plan_embedding(self, ids: Layout, table: Layout, out: Layout):
        def compute(i, t, o, flag):
            flag[...] = 0 if nn.embedding(i, t, o) else 1

        return self._plan((ids, table), [out, Layout(_I32, (1,), (4,))], compute)

    def plan_rope(self, x: Layout, cos: Layout, sin: Layout, out: Layout, interleaved: bool):
        return self._plan(
            (x, cos, sin), [out], lambda xv, c, s, o: nn.rope(xv, c, s, o, interleaved)
        )

    def plan_attention(self, q, k, v, mask, kv_length, out: Layout, causal: bool, scale: float):
        def compute(qv, kv, vv, *rest):
            *given, o = rest
            it = iter(given)
            m = next(it) if mask is not None else None
            lengths = next(it) if kv_length is not None else None
            nn.attention(qv, kv, vv, m, lengths, o, causal, scale)

        arrays = [x for x in (q, k, v, mask, kv_length) if x is not None]
        return self._plan(arrays, [out], compute)

    # --- gpukit.models' decode step -------------------------------------------------------------
    def plan_qkv_cache(self, qkv, cos, sin, length, cache, q_out, hq: int, hkv: int):
        rotary = cos is not None

        def compute(*views):
            if rotary:
                x, c, s, n, k, v, q = views
            else:
                (x, n, k, v, q), c, s = views, None, None
            decode.qkv_cache(x, c, s, n, q, k, v, hq, hkv, rotary)

        tables = (cos, sin) if rotary else ()
        return self._plan((qkv, *tables, length, cache, cache), [q_out], compute)

    def plan_sample(self, logits, next_ids, tokens):
        params = Layout(np.dtype(np.uint8), (arg_struct("gk_sample_params").size,), (1,))
        flag = Layout(_I32, (logits.shape[0],), (4,))
        return self._plan(
            (logits, params, Layout(_I32, (1,), (4,)), flag, next_ids, tokens), [], decode.sample
        )

    # --- sorting (gpukit.sorting) ---------------------------------------------------------------
    def plan_sort(self, src: Layout, keys: bool, index: bool, descending: bool):
        outs = ([_contiguous(src)] if keys else []) + [Layout(_I64, src.shape, _strides(src))]

        def compute(s, *o):
            idx = _sort.argsort_rows(s, descending)
            if keys:
                o[0][...] = np.take_along_axis(s, idx, -1)
            if index:
                o[-1][...] = idx

        return self._plan((src,), outs if index else outs[:1], compute)

    def plan_searchsorted(self, a: Layout, v: Layout, right: bool, sorter):
        outs = [Layout(_I64, v.shape, _strides(v))]
        if sorter is None:
            return self._plan(
                (a, v), outs, lambda va, vv, o: _sort.searchsorted(va, vv, right, None, o, None)
            )
        outs.append(Layout(_I32, (1,), (4,)))
        return self._plan(
            (a, v, sorter), outs, lambda va, vv, s, o, f: _sort.searchsorted(va, vv, right, s, o, f)
        )

    def unique(self, x: Layout, buffer, offset, index, inverse, counts, equal_nan, stream, quota):
        capture.refuse("unique (the number of values sizes the result)")
        (v,) = self.views([(buffer, offset, x)])
        found = _sort.unique(v, index, inverse, counts, equal_nan)
        total = found[0].size
        made = []
        for i, arr in enumerate(found):
            if arr is None:
                made.append(None)
                continue
            arr = arr.astype(x.dtype if i == 0 else _I64, copy=False)
            buf = self.pool.allocate(arr.nbytes, stream, quota)
            layout = Layout(arr.dtype, arr.shape, contiguous_strides(arr.shape, arr.itemsize))
            if arr.size:
                (o,) = self.views([(buf, 0, layout)])
                o[...] = arr
            made.append(buf)
        return (*made, total)

    def plan_histogram(self, x: Layout, edges: Layout, counts: bool, bins: bool):
        nbins = edges.size - 1
        outs = [Layout(_I64, (nbins,), (8,))] if counts else []
        outs += [Layout(_I64, (x.size,), (8,))] if bins else []

        def compute(xv, ev, *o):
            b = _sort.bins_of(xv, ev)
            if counts:
                o[0][...] = np.bincount(b, minlength=nbins + 1)[:nbins]
            if bins:
                o[-1][...] = b

        return self._plan((x, edges), outs, compute)

    def plan_bincount(self, x: Layout, nbins: int, weights):
        if weights is None:

            def count(xv, o):
                o[...] = np.bincount(xv, minlength=nbins)

            return self._plan((x,), [Layout(_I64, (nbins,), (8,))], count)

        def weigh(xv, wv, o):
            o[...] = np.bincount(xv, weights=wv, minlength=nbins)

        return self._plan((x, weights), [Layout(np.dtype(np.float64), (nbins,), (8,))], weigh)

    # --- discrete Fourier transforms (gpukit.fft) ----------------------------------------------
    def plan_fft(self, src: Layout, kind: str, n: int, inverse: bool, scale: float):
        """numpy.fft's transforms, in src's precision (NumPy 2 keeps complex64 and float32)."""
        if kind == "c2c":
            dtype, out_len = src.dtype, n
        elif kind == "r2c":
            dtype, out_len = (
                np.dtype(np.complex64 if src.dtype == _F32 else np.complex128),
                n // 2 + 1,
            )
        else:
            dtype, out_len = (_F32 if src.dtype == np.complex64 else _F64), n
        shape = (*src.shape[:-1], out_len)
        out = Layout(dtype, shape, contiguous_strides(shape, dtype.itemsize))

        def compute(s, o):
            if kind == "c2c":
                r = np.fft.ifft(s, axis=-1, norm="forward") if inverse else np.fft.fft(s, axis=-1)
            elif kind == "r2c":
                r = np.fft.rfft(s, axis=-1)
            else:
                r = np.fft.irfft(s, n=n, axis=-1, norm="forward")
            if scale != 1.0:
                r *= scale
            o[...] = r

        return self._plan((src,), [out], compute)

    def plan_linalg(self, op: str, inputs, outputs, options: tuple):
        """gpukit.runtime.backend.Backend.plan_linalg, by NumPy's LAPACK (runtime/cpu/linalg)."""
        fn, kw = _linalg.OPS[op], dict(options)
        return self._plan(tuple(inputs), tuple(outputs), lambda *v: fn(*v, **kw))

    def linalg_max_n(self, op: str, dtype) -> int | None:
        return None  # LAPACK takes any size

    def nonzero(self, mask: Layout, buffer, offset: int, stream, quota):
        """(buffer, count): the int64 (ndim, count) coordinates of mask's true elements."""
        capture.refuse("nonzero (the count sizes the result)")
        (m,) = self.views([(buffer, offset, mask)])
        coords = np.nonzero(m)
        count = coords[0].size
        layout = Layout(_I64, (mask.ndim, count), (8 * count, 8))
        out = self.pool.allocate(8 * mask.ndim * count, stream, quota)
        if count:
            (o,) = self.views([(out, 0, layout)])
            o[...] = coords
        return out, count


def _operands(values: list, views: list) -> list:
    """A plan's compute arguments: its inputs in order (the array views where `values` holds
    None, the scalars as they are), then the outputs' views."""
    it = iter(views)
    return [next(it) if v is None else v for v in values] + list(it)


def _reduce(name: str, s: np.ndarray, axes: tuple, o: np.ndarray, ddof=0) -> None:
    o = o.reshape(tuple(1 if i in axes else n for i, n in enumerate(s.shape)))
    if name in ("argmax", "argmin"):
        if len(axes) == s.ndim:  # the flat index, as NumPy gives for axis=None
            o[...] = getattr(np, name)(s)
        else:
            getattr(np, name)(s, axis=axes[0], keepdims=True, out=o)
        return
    n = math.prod(s.shape[i] for i in axes)
    if name in ("mean", "var", "std") and n == 0:  # NaN, without NumPy's warning
        o[...] = np.nan
        return
    if name in ("var", "std"):
        if n <= ddof:  # NumPy: m2 / 0, inf (NaN where m2 is 0), as the GPU's 1 / 0 scale gives
            m2 = np.var(s, axis=axes, keepdims=True) * n
            np.copyto(o, np.sqrt(m2 * np.inf) if name == "std" else m2 * np.inf, "unsafe")
        else:
            getattr(np, name)(s, axis=axes, keepdims=True, out=o, ddof=ddof)
        return
    if name in ("any", "all"):
        getattr(np, name)(s, axis=axes, keepdims=True, out=o)
        return
    extra = {}
    if name in ("max", "min") and s.size == 0:  # nothing (the front end refuses it): the identity
        extra["initial"] = _identity(name, s.dtype)
    getattr(np, name)(s, axis=axes, keepdims=True, out=o, **extra)


__all__ = ["CpuBackend"]
