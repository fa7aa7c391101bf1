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
template <typename T>
__device__ inline T gk_shfl_up(T v, int delta) {
    return __shfl_up(v, delta, GK_LANES);
}
__device__ inline void gk_syncwarp() { __builtin_amdgcn_wave_barrier(); }
// The 32 lanes of this thread's half of the wavefront.
__device__ inline unsigned gk_ballot(bool p) {
    return (unsigned)(__ballot(p) >> (threadIdx.x & 32));
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
template <typename T>
__device__ inline T gk_shfl_up(T v, int delta) {
    return __shfl_up_sync(0xffffffffu, v, delta, GK_LANES);
}
__device__ inline unsigned gk_ballot(bool p) { return __ballot_sync(0xffffffffu, p); }
__device__ inline void gk_syncwarp() { __syncwarp(); }
#endif

// Complex values move part by part: the intrinsics take arithmetic types. (types.cuh declares
// the complex types for the run-time compilers only.)
#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
#define GK_COMPLEX_SHUFFLES(C)                                      \
    __device__ inline C gk_shfl_xor(C v, int mask) {                \
        return C(gk_shfl_xor(v.re, mask), gk_shfl_xor(v.im, mask)); \
    }                                                               \
    __device__ inline C gk_shfl(C v, int src) {                     \
        return C(gk_shfl(v.re, src), gk_shfl(v.im, src));           \
    }                                                               \
    __device__ inline C gk_shfl_up(C v, int delta) {                \
        return C(gk_shfl_up(v.re, delta), gk_shfl_up(v.im, delta)); \
    }
GK_COMPLEX_SHUFFLES(gk_c64)
GK_COMPLEX_SHUFFLES(gk_c128)
#undef GK_COMPLEX_SHUFFLES
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

// GK_VEC_BYTES (16) bytes of T, for vector loads and stores.
static_assert(GK_VEC_BYTES == 16, "gk_vec16 and gk_store16 move 16 bytes");
template <typename T>
struct alignas(GK_VEC_BYTES) gk_vec16 {
    static const int N = GK_VEC_BYTES / sizeof(T);
    T v[GK_VEC_BYTES / sizeof(T)];
};

// One 16-byte store of v at dst (16-byte aligned). A plain struct store is at times split into
// element stores by the compiler; this one is not.
template <typename T>
__device__ inline void gk_store16(gk_vec16<T>* dst, const gk_vec16<T>& v) {
    union {
        gk_vec16<T> v;
        uint4 w;
    } u;
    u.v = v;
#ifdef GK_HIP
    *reinterpret_cast<uint4*>(dst) = u.w;
#else
    __stwb(reinterpret_cast<uint4*>(dst), u.w);
#endif
}

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
