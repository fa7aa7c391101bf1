// Skinny products, as in decoding: out (m x n, m <= GK_SKINNY_M rows) = a @ b (+ bias[n]), for a
// b whose columns are contiguous (b = w.T of a row-major weight w (n, k), as linear() passes it).
// Such a product is bound by reading b once: a warp per output column streams that column (16-byte
// loads where GK_VEC allows), keeps the m dot products in registers and sums them across the warp.
// a (m x k, small) is read through the cache by every warp.
// Defines: GK_T (a, b, out and bias), GK_ACC_T (float, or double for double), GK_VEC (1: a's rows
// and b's columns are contiguous, 16-byte aligned, and k is a multiple of 16 bytes of T).
#include "args.cuh"
#include "warp.cuh"

typedef GK_T T;
typedef GK_ACC_T acc_t;

GK_KERNEL void gk_matmul_skinny(const gk_matmul_args p) {
    const int lane = (int)threadIdx.x % GK_LANES;
    const gk_i64 col = (gk_i64)blockIdx.x * GK_SKINNY_WARPS + (gk_i64)threadIdx.x / GK_LANES;
    if (col >= p.n) return;
    const T* a = reinterpret_cast<const T*>(p.a);
    const T* b = reinterpret_cast<const T*>(p.b) + col * p.sb_n;
    acc_t acc[GK_SKINNY_M];
#pragma unroll
    for (int r = 0; r < GK_SKINNY_M; ++r) acc[r] = (acc_t)0;
#if GK_VEC
    const int V = gk_vec16<T>::N;
    const gk_vec16<T>* bv = reinterpret_cast<const gk_vec16<T>*>(b);
#pragma unroll 4
    for (gk_i64 kv = lane; kv < p.k / V; kv += GK_LANES) {
        const gk_vec16<T> y = bv[kv];
#pragma unroll
        for (int r = 0; r < GK_SKINNY_M; ++r) {
            if (r < p.m) {
                const gk_vec16<T> x = reinterpret_cast<const gk_vec16<T>*>(a + r * p.sa_m)[kv];
#pragma unroll
                for (int e = 0; e < V; ++e) acc[r] += (acc_t)x.v[e] * (acc_t)y.v[e];
            }
        }
    }
#else
#pragma unroll 4
    for (gk_i64 kk = lane; kk < p.k; kk += GK_LANES) {
        const acc_t y = (acc_t)b[kk * p.sb_k];
#pragma unroll
        for (int r = 0; r < GK_SKINNY_M; ++r) {
            if (r < p.m) acc[r] += (acc_t)a[r * p.sa_m + kk * p.sa_k] * y;
        }
    }
#endif
#pragma unroll
    for (int r = 0; r < GK_SKINNY_M; ++r) acc[r] = gk_lanes_sum(acc[r]);
    if (lane != 0) return;
    const acc_t bias =
        p.bias ? (acc_t) reinterpret_cast<const T*>(p.bias)[col * p.s_bias] : (acc_t)0;
    T* out = reinterpret_cast<T*>(p.out);
#pragma unroll
    for (int r = 0; r < GK_SKINNY_M; ++r) {
        if (r < p.m) out[r * p.so_m + col * p.so_n] = (T)(acc[r] + bias);
    }
}
