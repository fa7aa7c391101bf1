"""gpukit.nn on the CUDA backend: launches of kernels/nn_rows.cu, nn_gather.cu, attention.cu."""

from __future__ import annotations

import numpy as np

from . import _kernels, _shapes, _strides

_KEYS_PER_TILE = 32  # GK_KEYS of attention.cu
_MIN_TILES_PER_SPLIT = 4  # fewer keys per block than this do not pay for the combine pass


def _row_layout(src, axis):
    """(n, in_step, out_step, row_shape, in_row_strides, out_row_strides) of rows along `axis`,
    the output contiguous in src's shape."""
    in_el = _strides.element_strides(src, src.shape)
    out_el = _shapes.contiguous_strides(src.shape, 1)
    rows = [i for i in range(src.ndim) if i != axis]
    row_shape, (in_rows, out_rows) = _strides.collapse(
        [src.shape[i] for i in rows], [[in_el[i] for i in rows], [out_el[i] for i in rows]]
    )
    return src.shape[axis], in_el[axis], out_el[axis], row_shape, in_rows, out_rows


def _splits(device, blocks: int, n_tiles: int) -> tuple[int, int]:
    """(n_splits, tiles_per_split): keys are split over blocks when the grid alone would leave
    most of the GPU idle (decode: one query row per head, long key ranges)."""
    target = 2 * max(device.sm_count, 1)
    if blocks >= target or n_tiles < 2 * _MIN_TILES_PER_SPLIT:
        return 1, max(n_tiles, 1)
    splits = min(-(-target // blocks), n_tiles // _MIN_TILES_PER_SPLIT)
    per = -(-n_tiles // splits)
    return -(-n_tiles // per), per


class CudaNnOps:
    """The gpukit.nn entries of CudaRuntime (mixed into it)."""

    def nn_rows(self, kind, src, axis, out, weight, bias, eps) -> None:
        fn = self.function(*_kernels.nn_rows(src.dtype), f"gk_{kind}_rows")
        n, in_step, out_step, row_shape, in_rows, out_rows = _row_layout(src, axis)
        stream = self.stream
        arrays = [a for a in (src, out, weight, bias) if a is not None]
        ptrs = iter(self.addresses(arrays, stream))
        src_ptr, out_ptr = next(ptrs), next(ptrs)
        w_ptr = next(ptrs) if weight is not None else 0
        b_ptr = next(ptrs) if bias is not None else 0
        self.device.nn_rows(
            fn,
            stream,
            src_ptr,
            out_ptr,
            w_ptr,
            b_ptr,
            n,
            in_step,
            out_step,
            float(eps),
            row_shape,
            in_rows,
            out_rows,
        )

    def embedding(self, ids, table, out) -> None:
        from .array import empty

        fn = self.function(*_kernels.embedding(ids.dtype, table.dtype), "gk_embedding")
        error = empty((1,), np.dtype("int32"), self)
        self.fill(error, 0)
        row_stride, col_stride = _strides.element_strides(table, table.shape)
        stream = self.stream
        ids_ptr, table_ptr, out_ptr, err_ptr = self.addresses((ids, table, out, error), stream)
        num, dim = table.shape
        self.device.embedding(
            fn,
            stream,
            ids_ptr,
            table_ptr,
            out_ptr,
            err_ptr,
            ids.size,
            num,
            dim,
            row_stride,
            col_stride,
        )
        if self.download(error)[0]:  # waits for the kernel, as NumPy's take would raise now
            raise IndexError(f"embedding: an id is out of range for a table of {num} rows")

    def rope(self, x, cos, sin, out, interleaved: bool) -> None:
        fn = self.function(*_kernels.rope(x.dtype), "gk_rope")
        lead, half = x.shape[:-1], x.shape[-1] // 2
        target = (*lead, half)
        xs = _strides.element_strides(x, x.shape)
        cs = _strides.element_strides(cos, target)
        ss = _strides.element_strides(sin, target)
        shape, (x_rows, c_rows, s_rows) = _strides.collapse(
            list(lead), [list(xs[:-1]), list(cs[:-1]), list(ss[:-1])]
        )
        stream = self.stream
        x_ptr, c_ptr, s_ptr, out_ptr = self.addresses((x, cos, sin, out), stream)
        self.device.rope(
            fn,
            stream,
            x_ptr,
            c_ptr,
            s_ptr,
            out_ptr,
            half,
            interleaved,
            [xs[-1], cs[-1], ss[-1]],
            shape,
            x_rows,
            c_rows,
            s_rows,
        )

    def attention(self, q, k, v, mask, out, causal: bool, scale: float) -> None:
        from .array import empty

        b, hq, sq, d = q.shape
        hkv, skv = k.shape[1], k.shape[2]
        kind = "none" if mask is None else "bool" if mask.dtype == np.bool_ else "additive"
        file, defines = _kernels.attention(q.dtype, d, kind)
        fn = self.function(file, defines, "gk_attention")
        combine = self.function(file, defines, "gk_attention_combine")
        full = (b, hq, sq, skv)
        strides = [
            list(_strides.element_strides(q, q.shape)),
            list(_strides.element_strides(k, k.shape)),
            list(_strides.element_strides(v, v.shape)),
            list(_strides.element_strides(mask, full)) if mask is not None else [0, 0, 0, 0],
        ]
        per_kv_head = hq // hkv * sq
        block_rows = self.device.attention_block_rows(per_kv_head)
        blocks = -(-per_kv_head // block_rows) * b * hkv
        n_splits, tiles_per_split = _splits(self.device, blocks, -(-skv // _KEYS_PER_TILE))
        acc = np.dtype(np.float64 if q.dtype == np.float64 else np.float32)
        arrays = [q, k, v, out]
        if mask is not None:
            arrays.append(mask)
        if n_splits > 1:
            rows = b * hq * sq
            arrays += [empty((n_splits, rows, d), acc, self), empty((n_splits, rows, 2), acc, self)]
        stream = self.stream
        ptrs = iter(self.addresses(arrays, stream))
        q_ptr, k_ptr, v_ptr, out_ptr = (next(ptrs) for _ in range(4))
        mask_ptr = next(ptrs) if mask is not None else 0
        ws_o, ws_ml = (next(ptrs), next(ptrs)) if n_splits > 1 else (0, 0)
        self.device.attention(
            fn,
            combine,
            stream,
            [q_ptr, k_ptr, v_ptr, out_ptr, mask_ptr, ws_o, ws_ml],
            [b, hq, hkv, sq, skv, d],
            strides,
            causal,
            float(scale),
            n_splits,
            tiles_per_split,
            q.dtype.itemsize,
            acc.itemsize,
        )
