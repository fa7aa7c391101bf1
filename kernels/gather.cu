// Advanced indexing: a thread per element of the dense side (the result of a[idx], or the values
// of a[idx] = v), the offset into the indexed array from the element's coordinates and the int64
// index arrays. gk_gather reads a[idx] into out; gk_scatter writes out's values to a[idx]. Elements
// move as raw bits of GK_T (an unsigned type of the element's size, or a wider one when the inner
// run allows), so one instance serves every dtype of that size. A negative index counts from the
// end; an index out of range is clamped (nothing is read out of bounds) and *err records which
// array held it.
#include "args.cuh"
#include "compat.cuh"

typedef GK_T elem_t;

// I: the index type of the coordinate arithmetic (32-bit division is far cheaper than 64-bit).
template <typename I>
__device__ inline gk_i64 gk_source_offset(const gk_gather_args& a, gk_i64 i) {
    I coord[GK_MAX_DIMS];
    I rest = (I)i;
#pragma unroll
    for (int d = GK_MAX_DIMS - 1; d >= 0; --d) {
        coord[d] = 0;
        if (d < a.ndim) {
            const I n = (I)a.shape[d];
            coord[d] = rest % n;
            rest /= n;
        }
    }
    gk_i64 off = 0;
#pragma unroll
    for (int d = 0; d < GK_MAX_DIMS; ++d) {
        if (d < a.ndim) off += (gk_i64)coord[d] * a.src_stride[d];
    }
#pragma unroll
    for (int k = 0; k < GK_MAX_DIMS; ++k) {
        if (k < a.n_idx) {
            gk_i64 at = 0;
#pragma unroll
            for (int d = 0; d < GK_MAX_DIMS; ++d) {
                if (d < a.ndim) at += (gk_i64)coord[d] * a.idx_stride[k][d];
            }
            gk_i64 v = reinterpret_cast<const gk_i64*>(a.idx[k])[at];
            const gk_i64 size = a.axis_size[k];
            if (v < 0) v += size;
            if (v < 0 || v >= size) {
                if (a.err) *reinterpret_cast<gk_i32*>(a.err) = k + 1;
                v = v < 0 ? 0 : size - 1;
            }
            off += v * a.axis_stride[k];
        }
    }
    return off;
}

GK_KERNEL void gk_gather(const gk_gather_args a) {
    const elem_t* src = reinterpret_cast<const elem_t*>(a.src);
    elem_t* out = reinterpret_cast<elem_t*>(a.out);
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a.n <= 0x7fffffff) {
        for (; i < a.n; i += step) out[i] = src[gk_source_offset<gk_u32>(a, i)];
    } else {
        for (; i < a.n; i += step) out[i] = src[gk_source_offset<gk_i64>(a, i)];
    }
}

// Duplicate indices: one of the values lands, which one is unspecified.
GK_KERNEL void gk_scatter(const gk_gather_args a) {
    elem_t* dst = reinterpret_cast<elem_t*>(a.src);
    const elem_t* values = reinterpret_cast<const elem_t*>(a.out);
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a.n <= 0x7fffffff) {
        for (; i < a.n; i += step) dst[gk_source_offset<gk_u32>(a, i)] = values[i];
    } else {
        for (; i < a.n; i += step) dst[gk_source_offset<gk_i64>(a, i)] = values[i];
    }
}
