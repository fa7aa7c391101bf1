// Pieces the linear-algebra kernels share (linalg_small.cu, linalg_lu.cu, linalg_qr.cu,
// linalg_svj.cu). Defines: GK_T (float or double).
#pragma once
#include "compat.cuh"
#include "staging.cuh"

typedef GK_T la_t;

__device__ inline la_t la_abs(la_t x) { return x < (la_t)0 ? -x : x; }
// 1 / x correctly rounded: the bits of (la_t)1 / x, which CUDA's reciprocal gives without the
// division's slow-path call (whose saved registers spill a kernel holding a row in registers).
#ifdef GK_HIP
__device__ inline la_t la_rcp(la_t x) { return (la_t)1 / x; }
#else
__device__ inline float la_rcp(float x) { return __frcp_rn(x); }
__device__ inline double la_rcp(double x) { return __drcp_rn(x); }
#endif

// The elements (r, k) of a rows x cols matrix, at most kPer a thread of the block (element e =
// r cols + k to thread e % blockDim.x), loaded by load(r, k), then handed to store(r, k, v):
// every load is issued before any store. Interleaved, each load would wait for the stores before
// it (a store to shared memory may alias a generic pointer's load), a memory latency each.
template <int kPer, class Load, class Store>
__device__ inline void la_stage(int rows, int cols, Load load, Store store) {
    const int step = (int)blockDim.x, dr = step / cols, dk = step - dr * cols;
    const int r0 = (int)threadIdx.x / cols, k0 = (int)threadIdx.x - r0 * cols;
    la_t v[kPer];
    int r = r0, k = k0;
#pragma unroll
    for (int h = 0; h < kPer; ++h) {
        if (r < rows) v[h] = load(r, k);
        r += dr + (k + dk >= cols);
        k += dk - (k + dk >= cols ? cols : 0);
    }
    r = r0, k = k0;
#pragma unroll
    for (int h = 0; h < kPer; ++h) {
        if (r < rows) store(r, k, v[h]);
        r += dr + (k + dk >= cols);
        k += dk - (k + dk >= cols ? cols : 0);
    }
}

// The pair of round `r` at slot `k` of a round-robin over m (even) indices: every pair of
// indices meets once in m - 1 rounds, the pairs of one round disjoint (index 0 stays put, the
// others rotate). With 0 <= k < m / 2 and 0 <= r < m - 1 both sums stay below 2 (m - 1), so one
// subtraction reduces them (no integer division).
__device__ inline void la_pair(int k, int r, int m, int* p, int* q) {
    const int a0 = k - 1 + r, b0 = m - 2 - k + r;
    const int a = k == 0 ? 0 : (a0 >= m - 1 ? a0 - (m - 1) : a0) + 1;
    const int b = (b0 >= m - 1 ? b0 - (m - 1) : b0) + 1;
    *p = a < b ? a : b;
    *q = a < b ? b : a;
}

// The block's dynamic shared memory.
__device__ inline la_t* la_smem() { return reinterpret_cast<la_t*>(gk_shared_dynamic()); }

__device__ inline la_t la_eps() {
    return sizeof(la_t) == 4 ? (la_t)1.1920929e-07 : (la_t)2.220446049250313e-16;
}
