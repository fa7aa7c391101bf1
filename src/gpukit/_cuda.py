"""The CUDA backend: the driver through gpukit._native, kernels from kernels/ compiled by NVRTC,
memory from the Rust pool over the driver's allocator table."""

from __future__ import annotations

import math
import threading

import numpy as np

from . import _core, _gather_plan, _kernels, _libs, _native, _shapes, _strides, jit
from ._nn_cuda import CudaNnOps
from .errors import BackendUnavailableError, CudaError


class _ThreadState(threading.local):
    # A class default: a missing thread-local attribute would cost an exception on every op.
    stream = None


def _integral(dtype) -> bool:
    return dtype.kind in "biu"


def _unit_stride_2d(arr) -> bool:
    """Whether one of the matrix axes of `arr` (the last two; a 1-D array is one row) is
    contiguous, as the tensor-core kernel's tile loads need."""
    if arr.ndim == 1:
        return arr.shape[0] <= 1 or arr.strides[0] == arr.dtype.itemsize
    rows, cols = arr.shape[-2:]
    s_rows, s_cols = (s // arr.dtype.itemsize for s in arr.strides[-2:])
    return cols <= 1 or rows <= 1 or s_cols == 1 or s_rows == 1


def _skinny_rows(a, b, out, m, sa, sb, so, bshape, ba, bb, bo):
    """(rows, a's row stride, out's row stride, a's k stride) when the product is a few rows of
    floats times a b with contiguous columns and no batch of b (decode's linear), the batch of a
    folded into its rows; None when kernels/matmul_skinny.cu does not apply."""
    if not (a.dtype == b.dtype == out.dtype) or a.dtype.kind not in "fV" or sb[0] != 1:
        return None
    if any(bb) or so[1] != 1:
        return None
    items = int(np.prod(bshape)) if len(bshape) else 1
    row_sa, row_so = sa[0], so[0]
    if items > 1:
        if len(bshape) != 1:
            return None
        if m == 1:
            row_sa, row_so = ba[0], bo[0]
        elif ba[0] != m * sa[0] or bo[0] != m * so[0]:
            return None
    rows = m * items
    return (rows, row_sa, row_so, sa[1]) if 0 < rows <= _kernels.SKINNY_ROWS else None


def _mma_strides(rows: int, cols: int, s_rows: int, s_cols: int) -> list[int]:
    """A matrix's element strides for the tensor-core kernel, which takes the contiguous one as 1:
    the stride of a size-1 axis is free, so it is made 1 (or 0) where that helps."""
    if cols <= 1:
        s_cols = 1
    if rows <= 1:
        s_rows = 1 if s_cols != 1 else 0
    return [s_rows, s_cols]


def _mma_vectorizable(pointers, inner_extents, leading_strides, batch_strides) -> bool:
    """Whether the tensor-core kernel may copy 16-byte chunks: every pointer 16-byte aligned,
    each operand's contiguous extent, leading stride and batch stride multiples of 8 elements."""
    return (
        all(p % 16 == 0 for p in pointers)
        and all(e % 8 == 0 for e in inner_extents)
        and all(s % 8 == 0 for s in (*leading_strides, *batch_strides))
    )


class CudaRuntime(CudaNnOps):
    name = "cuda"

    def __init__(self, ordinal: int = 0):
        found, detail = _native.probe_library(_libs.CUDA_DRIVER)
        if not found:
            raise BackendUnavailableError(f"CUDA driver not found: {_libs.CUDA_DRIVER} ({detail})")
        try:
            count = _native.CudaDevice.count(_libs.CUDA_DRIVER)
            if count == 0:
                raise BackendUnavailableError(f"the CUDA driver at {detail} sees no GPU")
            self.device = _native.CudaDevice.open(_libs.CUDA_DRIVER, ordinal)
        except CudaError as e:
            raise BackendUnavailableError(f"the CUDA driver at {detail} failed: {e}") from None
        compiler, self.compiler_origin = jit.open_compiler("nvrtc")
        self.jit = jit.Jit(
            compiler, jit.nvrtc_arch_options(compiler, self.device.compute_capability)
        )
        self.pool = _core.Pool(self.device.allocator_table())
        self.default_stream = self.device.default_stream
        self._local = _ThreadState()
        self._modules: dict = {}
        self._functions: dict = {}
        self._mma_ready: set = set()
        self._lock = threading.Lock()

    def describe(self) -> str:
        d = self.device
        major, minor = d.compute_capability
        return (
            f"{d.name} (device {d.ordinal}, sm_{major}{minor}, {d.sm_count} SMs, "
            f"{d.total_memory / 2**30:.1f} GiB, L2 {d.l2_bytes // 2**20} MiB, driver "
            f"{d.driver_version // 1000}.{d.driver_version % 1000 // 10})"
        )

    # --- streams ----------------------------------------------------------------------------------
    @property
    def stream(self) -> int:
        """The calling thread's current stream."""
        return self._local.stream or self.default_stream

    def set_stream(self, stream: int | None) -> None:
        self._local.stream = self.default_stream if stream is None else stream

    def synchronize(self) -> None:
        self.device.synchronize(self.stream)

    # --- kernels ----------------------------------------------------------------------------------
    def module(self, name: str, source: str, options=()) -> int:
        key = (name, source, tuple(options))
        module = self._modules.get(key)
        if module is None:
            image = self.jit.build(name, source, options)
            with self._lock:
                module = self._modules.get(key)
                if module is None:
                    module = self._modules[key] = self.device.load_module(image)
        return module

    def function(self, file: str, defines: tuple, name: str) -> int:
        key = (file, defines, name)
        fn = self._functions.get(key)
        if fn is None:
            options = tuple(f"-D{d}" for d in defines)
            module = self.module(file, jit.kernel_source(file), options)
            fn = self._functions[key] = self.device.function(module, name)
        return fn

    def addresses(self, arrays, stream) -> list[int]:
        """Device addresses of `arrays` for work on `stream` (spilled buffers come back first;
        the pool keeps them pinned until this thread's next request)."""
        ptrs = self.pool.device_ptrs(tuple(a._buf for a in arrays), stream)
        return [p + a._offset for p, a in zip(ptrs, arrays, strict=True)]

    # --- data movement ----------------------------------------------------------------------------
    def upload(self, host: np.ndarray, out) -> None:
        stream = self.stream
        (dst,) = self.addresses((out,), stream)
        self.device.copy_to_device(dst, host.reshape(-1).view(np.uint8), stream)

    def download(self, arr) -> np.ndarray:
        src = arr if arr.is_contiguous else arr.copy()
        host = np.empty(src.shape, src.dtype)
        if host.size:
            stream = self.stream
            (ptr,) = self.addresses((src,), stream)
            self.device.copy_to_host(host.reshape(-1).view(np.uint8), ptr, stream)
        return host

    def copy(self, src, out) -> None:
        if src.dtype == out.dtype and src.is_contiguous and out.is_contiguous:
            stream = self.stream
            src_ptr, out_ptr = self.addresses((src, out), stream)
            self.device.copy_device(out_ptr, src_ptr, out.nbytes, stream)
        else:
            self.elementwise("identity", [src], out, out.dtype)

    def fill(self, out, value) -> None:
        if isinstance(value, np.generic):  # NumPy and ml_dtypes scalars go in as Python ones
            value = value.item()
        self.elementwise("identity", [value], out, out.dtype)

    def arange(self, start, step, out) -> None:
        fn = self.function(*_kernels.arange(out.dtype), "gk_arange")
        stream = self.stream
        self.device.arange(
            fn,
            stream,
            self.addresses((out,), stream)[0],
            out.size,
            float(start),
            float(step),
            int(start) if _integral(out.dtype) else 0,
            int(step) if _integral(out.dtype) else 0,
        )

    # --- ops --------------------------------------------------------------------------------------
    def elementwise(self, ufunc_name: str, operands, out, loop) -> None:
        self.plan_elementwise(ufunc_name, operands, loop, out.dtype, out.shape, out.strides)(
            operands, out
        )

    def plan_elementwise(self, ufunc_name, operands, loop, dtype, shape, out_strides=None):
        """A launcher `(operands, out) -> None` for operands described like `operands` (same kinds,
        dtypes, shapes, strides), computing in `loop` dtype, and an output of `dtype` and `shape`
        (C-contiguous unless `out_strides`, in bytes, says otherwise)."""
        is_array = tuple(not isinstance(x, (bool, int, float)) for x in operands)
        arrays = [x for x in operands if not isinstance(x, (bool, int, float))]
        in_types = tuple(x.dtype if a else None for x, a in zip(operands, is_array, strict=True))
        file, defines = _kernels.elementwise(ufunc_name, loop, dtype, in_types)
        n = math.prod(shape)
        item = dtype.itemsize
        if out_strides is None:
            out_strides = _shapes.contiguous_strides(shape, item)
        out_el = tuple(
            0 if d == 1 else st // item for d, st in zip(shape, out_strides, strict=True)
        )
        cshape, strides = _strides.collapse(
            shape, [out_el, *(_strides.element_strides(a, shape) for a in arrays)]
        )
        device, local, default = self.device, self._local, self.default_stream
        device_ptrs = self.pool.device_ptrs
        if len(cshape) <= 1 and all(st in ([], [1]) for st in strides) and len(operands) <= 2:
            fn = self.function(file, defines, "gk_ew_contig")
            launch = device.elementwise_contig
            if is_array == (True, True):

                def run(ops, out):
                    a, b = ops
                    stream = local.stream or default
                    pa, pb, po = device_ptrs((a._buf, b._buf, out._buf), stream)
                    launch(
                        fn, stream, n, po + out._offset, pa + a._offset, pb + b._offset, None, None
                    )

                return run

            def run(ops, out):
                stream = local.stream or default
                arrays = [x for x, arr in zip(ops, is_array, strict=True) if arr]
                addresses = iter(self.addresses([*arrays, out], stream))
                ptrs, scalars = [0, 0], [None, None]
                for i, (x, arr) in enumerate(zip(ops, is_array, strict=True)):
                    if arr:
                        ptrs[i] = next(addresses)
                    else:
                        scalars[i] = x
                launch(fn, stream, n, next(addresses), ptrs[0], ptrs[1], scalars[0], scalars[1])

            return run

        fn = self.function(file, defines, "gk_ew_strided")
        it = iter(strides[1:])
        slot_strides = [strides[0]] + [next(it) if a else [0] * len(cshape) for a in is_array]

        def run(ops, out):
            stream = local.stream or default
            arrays = [x for x, arr in zip(ops, is_array, strict=True) if arr]
            addresses = iter(self.addresses([out, *arrays], stream))
            ptrs = [next(addresses)] + [next(addresses) if a else 0 for a in is_array]
            scalars = tuple(None if a else x for x, a in zip(ops, is_array, strict=True))
            device.elementwise(fn, stream, n, ptrs, scalars, cshape, slot_strides)

        return run

    def reduce(self, name: str, src, axes: tuple[int, ...], out) -> None:
        file, defines = _kernels.reduction(name, src.dtype, out.dtype)
        strides = _strides.element_strides(src, src.shape)
        kept = [i for i in range(src.ndim) if i not in axes]
        out_shape, (out_stride,) = _strides.collapse(
            [src.shape[i] for i in kept], [[strides[i] for i in kept]]
        )
        red_shape, (red_stride,) = _strides.collapse(
            [src.shape[i] for i in axes], [[strides[i] for i in axes]]
        )
        n_red = math.prod(src.shape[i] for i in axes)
        scale = 1.0 / n_red if name == "mean" and n_red else 1.0
        if name == "mean" and n_red == 0:
            scale = math.nan  # NumPy: the mean of nothing is NaN
        block_fn, thread_fn = (
            self.function(file, defines, k) for k in _kernels.kernels_of(file, defines)
        )
        stream = self.stream
        src_ptr, out_ptr = self.addresses((src, out), stream)
        self.device.reduce(
            block_fn,
            thread_fn,
            stream,
            src_ptr,
            out_ptr,
            out_shape,
            out_stride,
            red_shape,
            red_stride,
            scale,
        )

    def cumsum(self, src, axis: int, out) -> None:
        """out (contiguous, src's shape) = running sum of src along `axis`."""
        file, defines = _kernels.cumsum(src.dtype, out.dtype)
        fn = self.function(file, defines, "gk_cumsum")
        in_el = _strides.element_strides(src, src.shape)
        out_el = _shapes.contiguous_strides(src.shape, 1)
        rows = [i for i in range(src.ndim) if i != axis]
        row_shape, (in_rows, out_rows) = _strides.collapse(
            [src.shape[i] for i in rows], [[in_el[i] for i in rows], [out_el[i] for i in rows]]
        )
        stream = self.stream
        src_ptr, out_ptr = self.addresses((src, out), stream)
        self.device.cumsum(
            fn,
            stream,
            src_ptr,
            out_ptr,
            src.shape[axis],
            in_el[axis],
            out_el[axis],
            row_shape,
            in_rows,
            out_rows,
        )

    def matmul(self, a, b, out, row_block=None, bias=None) -> None:
        """out = a @ b (+ bias along the last axis: 1-D, of out's dtype). `row_block`: launch at
        most that many output rows at a time (each launch computes its rows exactly as one launch
        would), so that a scheduler can slice the work into short kernels; multiples of 128 keep
        every launch's tiles full."""
        if row_block is not None and row_block < 1:
            raise ValueError(f"matmul: row_block must be at least 1, got {row_block}")
        if row_block is None:  # best-effort work beside guaranteed work launches in row slices
            row_block = _core.slice_rows() or None
        mma = self._mma_type(a, b, out)
        if mma is not None:
            a = a if _unit_stride_2d(a) else a.copy()
            b = b if _unit_stride_2d(b) else b.copy()
        a_shape, a_str = list(a.shape), list(_strides.element_strides(a, a.shape))
        b_shape, b_str = list(b.shape), list(_strides.element_strides(b, b.shape))
        if a.ndim == 1:
            a_shape, a_str = [1, *a_shape], [0, *a_str]
        if b.ndim == 1:
            b_shape, b_str = [*b_shape, 1], [*b_str, 0]
        m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
        batch = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
        o_str = list(_strides.contiguous_like(batch, m, n))

        def batch_strides(shape, strides):
            pad = len(batch) - len(shape)
            return [0] * pad + [s if d != 1 else 0 for d, s in zip(shape, strides, strict=True)]

        bshape, (ba, bb, bo) = _strides.collapse(
            list(batch),
            [
                batch_strides(a_shape[:-2], a_str[:-2]),
                batch_strides(b_shape[:-2], b_str[:-2]),
                o_str[:-2],
            ],
        )
        if len(bshape) > 4:
            raise ValueError(f"matmul: at most 4 batch dimensions are supported, got {len(bshape)}")
        sa, sb, so = a_str[-2:], b_str[-2:], o_str[-2:]
        skinny = _skinny_rows(a, b, out, m, sa, sb, so, bshape, ba, bb, bo)
        if skinny is not None and (row_block is None or row_block >= skinny[0]):
            self._matmul_skinny(a, b, out, bias, skinny, n, k, sb)
            return
        if mma is not None:
            sa, sb = _mma_strides(m, k, *sa), _mma_strides(k, n, *sb)
        stream = self.stream
        operands = (a, b, out) if bias is None else (a, b, out, bias)
        ptrs = self.addresses(operands, stream)
        a_ptr, b_ptr, out_ptr = ptrs[:3]
        bias_ptr = ptrs[3] if bias is not None else 0
        bias_stride = _strides.element_strides(bias, bias.shape)[0] if bias is not None else 0
        # The tiled kernel's grid has one row of blocks per tile of rows, at most 65535 of them.
        step = min(row_block or m, _kernels.matmul_tile(out.dtype) * 65535) if m else 1
        if mma is not None:
            a_trans, b_trans = sa[1] != 1, sb[1] != 1
        for r0 in range(0, max(m, 1), step):
            rows = min(step, m - r0)
            a_at = a_ptr + r0 * sa[0] * a.dtype.itemsize
            out_at = out_ptr + r0 * so[0] * out.dtype.itemsize
            if mma is not None:
                vec = _mma_vectorizable(
                    (a_at, b_ptr, out_at),
                    (rows if a_trans else k, k if b_trans else n),
                    (sa[1] if a_trans else sa[0], sb[1] if b_trans else sb[0]),
                    (*ba, *bb),
                )
                defines = _kernels.matmul_mma(mma, a_trans, b_trans, vec, bias is not None)[1]
                fn = self._mma_function(defines)
            else:
                fn = self.function(*_kernels.matmul(a.dtype, b.dtype, out.dtype), "gk_matmul")
            self.device.matmul(
                fn,
                mma is not None,
                _kernels.matmul_tile(out.dtype),
                stream,
                a_at,
                b_ptr,
                out_at,
                bias_ptr,
                bias_stride,
                rows,
                n,
                k,
                sa,
                sb,
                so,
                bshape,
                ba,
                bb,
                bo,
            )

    def _matmul_skinny(self, a, b, out, bias, skinny, n, k, sb) -> None:
        rows, row_sa, row_so, sa_k = skinny
        stream = self.stream
        ptrs = self.addresses((a, b, out) if bias is None else (a, b, out, bias), stream)
        v = 16 // a.dtype.itemsize
        vec = (
            sa_k == 1
            and k % v == 0
            and (rows == 1 or row_sa % v == 0)
            and (n == 1 or sb[1] % v == 0)
            and all(p % 16 == 0 for p in ptrs[:2])
        )
        fn = self.function(*_kernels.matmul_skinny(a.dtype, vec), "gk_matmul_skinny")
        bias_stride = _strides.element_strides(bias, bias.shape)[0] if bias is not None else 0
        self.device.matmul_skinny(
            fn,
            stream,
            *ptrs[:3],
            ptrs[3] if bias is not None else 0,
            bias_stride,
            rows,
            n,
            k,
            [row_sa, sa_k],
            sb,
            [row_so, 1],
        )

    def _mma_type(self, a, b, out) -> str | None:
        """The tensor-core kernel's element type for this product, or None for the tiled kernel
        (other dtypes, mixed dtypes, GPUs before sm_80)."""
        if not (a.dtype == b.dtype == out.dtype) or self.device.compute_capability[0] < 8:
            return None
        return _kernels.MMA_TYPES.get(a.dtype.name)

    def _mma_function(self, defines: tuple) -> int:
        fn = self.function("matmul_mma.cu", defines, "gk_matmul_mma")
        if fn not in self._mma_ready:  # above the 48 KB of shared memory a launch gets unasked
            self.device.set_dynamic_shared(fn, _kernels.MATMUL_MMA_SHARED_BYTES)
            self._mma_ready.add(fn)
        return fn

    def gather(self, src, out, indices, positions, layout, check, scatter=False):
        """out = src[idx] (scatter: src[idx] = out) for int64 index arrays at `positions` of
        src's dimensions; out is contiguous (see _gather_plan.plan for `layout`). With `check`,
        returns the number of an index array holding an index out of range (or None): the
        kernel clamps such an index, so nothing is read or written out of bounds."""
        from .array import empty

        p = _gather_plan.plan(src, src._offset, indices, positions, layout)
        fn = self.function(*_kernels.gather(p.width), "gk_scatter" if scatter else "gk_gather")
        err = empty((1,), np.dtype("int32"), self) if check else None
        if err is not None:
            self.fill(err, 0)
        stream = self.stream
        ptrs = self.addresses((src, out, *indices, *([err] if err is not None else [])), stream)
        self.device.gather(
            fn,
            stream,
            ptrs[0],
            ptrs[1],
            ptrs[-1] if err is not None else 0,
            p.shape,
            p.src_walk,
            ptrs[2 : 2 + len(indices)],
            p.idx_walks,
            p.axis_size,
            p.axis_stride,
        )
        if err is None:
            return None
        flag = int(self.download(err)[0])
        return flag - 1 if flag else None

    def nonzero(self, mask):
        """An int64 (ndim, count) array: the coordinates of mask's (bool) true elements. The
        count is read back to the host once."""
        from .array import empty

        i64 = np.dtype("int64")
        if not mask.is_contiguous:
            mask = mask.copy()
        n = mask.size
        if n == 0:
            return empty((mask.ndim, 0), i64, self)
        tiles = -(-n // _COMPACT_TILE)
        counts, prefix = empty((tiles,), i64, self), empty((tiles,), i64, self)
        count_fn, write_fn = (
            self.function(*_kernels.compact(), k) for k in ("gk_count_tiles", "gk_write_nonzero")
        )
        stream = self.stream
        m, c, p = self.addresses((mask, counts, prefix), stream)
        self.device.compact(count_fn, stream, m, c, p, 0, n, 0, list(mask.shape))
        self.cumsum(counts, 0, prefix)
        total = int(self.download(prefix[tiles - 1 :])[0])
        out = empty((mask.ndim, total), i64, self)
        if total:
            m, c, p, o = self.addresses((mask, counts, prefix, out), stream)
            self.device.compact(write_fn, stream, m, c, p, o, n, total, list(mask.shape))
        return out

    def philox(self, kernel: str, out, seed: int, offset: int, **params) -> None:
        """Fills out (contiguous) with kernel `kernel` of kernels/philox.cu."""
        from ._philox import PER_GROUP

        fn = self.function(*_kernels.philox(out.dtype), kernel)
        stream = self.stream
        (ptr,) = self.addresses((out,), stream)
        self.device.philox(
            fn,
            stream,
            ptr,
            out.size,
            PER_GROUP[kernel],
            seed,
            offset,
            params.get("lo", 0.0),
            params.get("scale", 1.0),
            params.get("affine", False),
            params.get("low", 0),
            params.get("range", 0),
        )


_COMPACT_TILE = 4096  # GK_TILE of kernels/compact.cu
