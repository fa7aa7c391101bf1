// Reductions over any set of axes in one pass, instantiated by defines:
//   GK_RED       gk_red_sum, gk_red_prod, gk_red_max or gk_red_min (combine and identity)
//   GK_IN_T, GK_ACC_T, GK_OUT_T   element types (float16 accumulates in float)
//   GK_ARG       set (1: argmax, 0: argmin) for the index kernels gk_argreduce_*
// gk_reduce_block: a block per output, threads stride over the reduced elements (for long
//   reductions). gk_reduce_thread: a thread per output (for short ones, or when the kept axis is
//   the fast one, so that neighbouring threads read neighbouring elements).
#include "args.cuh"
#include "compat.cuh"

typedef GK_ACC_T acc_t;

struct gk_red_sum {
    __device__ static acc_t identity() { return (acc_t)0; }
    __device__ static acc_t combine(acc_t a, acc_t b) { return a + b; }
};
struct gk_red_prod {
    __device__ static acc_t identity() { return (acc_t)1; }
    __device__ static acc_t combine(acc_t a, acc_t b) { return (acc_t)(a * b); }
};
struct gk_red_max {
    __device__ static acc_t identity() { return gk_limits<acc_t>::lowest(); }
    // NaN wins, as in NumPy.
    __device__ static acc_t combine(acc_t a, acc_t b) { return (a != a || a > b) ? a : b; }
};
struct gk_red_min {
    __device__ static acc_t identity() { return gk_limits<acc_t>::highest(); }
    __device__ static acc_t combine(acc_t a, acc_t b) { return (a != a || a < b) ? a : b; }
};

__device__ inline gk_i64 gk_offset(gk_i64 i, int ndim, const gk_i64* shape, const gk_i64* stride) {
    gk_i64 off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
        off += (i % shape[d]) * stride[d];
        i /= shape[d];
    }
    return off;
}

__device__ inline acc_t gk_load(const gk_reduce_args& a, gk_i64 base, gk_i64 r) {
    const GK_IN_T* in = reinterpret_cast<const GK_IN_T*>(a.in);
    return (acc_t)in[base + gk_offset(r, a.red_ndim, a.red_shape, a.red_stride)];
}

#ifndef GK_ARG
// Argmax/argmin write indices, never the (possibly complex) value: only value reductions store.
__device__ inline void gk_store(const gk_reduce_args& a, gk_i64 o, acc_t v) {
    if (a.scale != 1.0) v = (acc_t)(v * a.scale);
    reinterpret_cast<GK_OUT_T*>(a.out)[o] = (GK_OUT_T)v;
}

GK_KERNEL void gk_reduce_block(const gk_reduce_args a) {
    __shared__ acc_t partial[GK_BLOCK];
    for (gk_i64 o = blockIdx.x; o < a.n_out; o += gridDim.x) {
        const gk_i64 base = gk_offset(o, a.out_ndim, a.out_shape, a.out_stride);
        acc_t acc = GK_RED::identity();
        for (gk_i64 r = threadIdx.x; r < a.n_red; r += GK_BLOCK) {
            acc = GK_RED::combine(acc, gk_load(a, base, r));
        }
        partial[threadIdx.x] = acc;
        __syncthreads();
        for (int width = GK_BLOCK / 2; width > 0; width /= 2) {
            if ((int)threadIdx.x < width) {
                partial[threadIdx.x] =
                    GK_RED::combine(partial[threadIdx.x], partial[threadIdx.x + width]);
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) gk_store(a, o, partial[0]);
        __syncthreads();  // partial[] is reused by the next output
    }
}

GK_KERNEL void gk_reduce_thread(const gk_reduce_args a) {
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 o = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; o < a.n_out; o += step) {
        const gk_i64 base = gk_offset(o, a.out_ndim, a.out_shape, a.out_stride);
        acc_t acc = GK_RED::identity();
        for (gk_i64 r = 0; r < a.n_red; ++r) acc = GK_RED::combine(acc, gk_load(a, base, r));
        gk_store(a, o, acc);
    }
}
#else  // GK_ARG: argmax (1) or argmin (0), the index of the first best element

// Whether (a, ia) beats (b, ib): NaN first (as NumPy), then the larger (smaller) value, then the
// lower index; ib < 0 marks "nothing yet".
__device__ inline bool gk_better(acc_t a, gk_i64 ia, acc_t b, gk_i64 ib) {
    if (ib < 0) return true;
    if (ia < 0) return false;
    const bool a_nan = a != a, b_nan = b != b;
    if (a_nan || b_nan) return a_nan && (!b_nan || ia < ib);
#if GK_ARG
    if (a != b) return a > b;
#else
    if (a != b) return a < b;
#endif
    return ia < ib;
}

GK_KERNEL void gk_argreduce_block(const gk_reduce_args a) {
    __shared__ acc_t best_v[GK_BLOCK];
    __shared__ gk_i64 best_i[GK_BLOCK];
    for (gk_i64 o = blockIdx.x; o < a.n_out; o += gridDim.x) {
        const gk_i64 base = gk_offset(o, a.out_ndim, a.out_shape, a.out_stride);
        acc_t v = (acc_t)0;
        gk_i64 vi = -1;
        for (gk_i64 r = threadIdx.x; r < a.n_red; r += GK_BLOCK) {
            const acc_t x = gk_load(a, base, r);
            if (gk_better(x, r, v, vi)) {
                v = x;
                vi = r;
            }
        }
        best_v[threadIdx.x] = v;
        best_i[threadIdx.x] = vi;
        __syncthreads();
        for (int width = GK_BLOCK / 2; width > 0; width /= 2) {
            const int t = threadIdx.x;
            if (t < width &&
                gk_better(best_v[t + width], best_i[t + width], best_v[t], best_i[t])) {
                best_v[t] = best_v[t + width];
                best_i[t] = best_i[t + width];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) reinterpret_cast<gk_i64*>(a.out)[o] = best_i[0];
        __syncthreads();
    }
}

GK_KERNEL void gk_argreduce_thread(const gk_reduce_args a) {
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 o = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; o < a.n_out; o += step) {
        const gk_i64 base = gk_offset(o, a.out_ndim, a.out_shape, a.out_stride);
        acc_t v = (acc_t)0;
        gk_i64 vi = -1;
        for (gk_i64 r = 0; r < a.n_red; ++r) {
            const acc_t x = gk_load(a, base, r);
            if (gk_better(x, r, v, vi)) {
                v = x;
                vi = r;
            }
        }
        reinterpret_cast<gk_i64*>(a.out)[o] = vi;
    }
}
#endif
