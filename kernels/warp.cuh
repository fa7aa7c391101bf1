// Helpers shared by kernels: 32-lane group reductions (a CUDA warp; half a wavefront on AMD, where
// width-32 shuffles stay inside each half), 16-byte vector types, row offsets (exp2 is
// compat.cuh's gkm_exp2).
#pragma once
#include "compat.cuh"
#include "geometry.cuh"

#ifdef GK_HIP
template <typename T>
__device__ inline T gk_shfl_xor(T v, int mask) {
    return __shfl_xor(v, mask, GK_LANES);
}
template <typename T>
__device__ inline T gk_shfl(T v, int src) {
    return __shfl(v, src, GK_LANES);
}
#else
template <typename T>
__device__ inline T gk_shfl_xor(T v, int mask) {
    return __shfl_xor_sync(0xffffffffu, v, mask, GK_LANES);
}
template <typename T>
__device__ inline T gk_shfl(T v, int src) {
    return __shfl_sync(0xffffffffu, v, src, GK_LANES);
}
#endif

template <typename T>
__device__ inline T gk_lanes_sum(T v) {
    for (int m = GK_LANES / 2; m > 0; m /= 2) v += gk_shfl_xor(v, m);
    return v;
}

template <typename T>
__device__ inline T gk_lanes_max(T v) {
    for (int m = GK_LANES / 2; m > 0; m /= 2) {
        const T o = gk_shfl_xor(v, m);
        v = o > v ? o : v;
    }
    return v;
}

#define GK_LOG2E 1.4426950408889634
#define GK_LN2 0.6931471805599453

// 16 bytes of T, for vector loads and stores.
template <typename T>
struct alignas(16) gk_vec16 {
    static const int N = 16 / sizeof(T);
    T v[16 / sizeof(T)];
};

// Row offset of row number `row` over dimensions (shape, stride), the last one fastest.
__device__ inline gk_i64 gk_nd_offset(gk_i64 row, int ndim, const gk_i64* shape,
                                      const gk_i64* stride) {
    gk_i64 off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
        off += (row % shape[d]) * stride[d];
        row /= shape[d];
    }
    return off;
}
