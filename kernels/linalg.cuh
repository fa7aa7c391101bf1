// Pieces the linear-algebra kernels share (linalg_small.cu, linalg_lu.cu, linalg_qr.cu,
// linalg_svj.cu). Defines: GK_T (float or double).
#pragma once
#include "compat.cuh"
#include "staging.cuh"

typedef GK_T la_t;

__device__ inline la_t la_abs(la_t x) { return x < (la_t)0 ? -x : x; }

// The inverse of the n x n lower triangle held in shared memory `s` (row stride LD), in place,
// last column first (LAPACK's trti2): X[j+1:, j] = -X[j+1:, j+1:] L[j+1:, j] / L[j][j]. With
// invert_diagonal false the diagonal is taken as ones (a unit-lower triangle, its ones stored).
// `col`: n elements of shared scratch. Every thread of the block calls it.
template <int LD>
__device__ inline void la_invert_lower(la_t* s, int n, la_t* col, bool invert_diagonal) {
    for (int j = n - 1; j >= 0; --j) {
        for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) col[i] = s[i * LD + j];
        if (threadIdx.x == 0 && invert_diagonal) s[j * LD + j] = (la_t)1 / s[j * LD + j];
        __syncthreads();
        const la_t neg = -s[j * LD + j];
        for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) {
            la_t acc = 0;
            for (int k = j + 1; k <= i; ++k) acc += s[i * LD + k] * col[k];
            s[i * LD + j] = neg * acc;
        }
        __syncthreads();
    }
}

// The pair of round `r` at slot `k` of a round-robin over m (even) indices: every pair of
// indices meets once in m - 1 rounds, the pairs of one round disjoint (index 0 stays put, the
// others rotate).
__device__ inline void la_pair(int k, int r, int m, int* p, int* q) {
    const int a = k == 0 ? 0 : (k - 1 + r) % (m - 1) + 1;
    const int b = (m - 2 - k + r) % (m - 1) + 1;
    *p = a < b ? a : b;
    *q = a < b ? b : a;
}

// The block's dynamic shared memory.
__device__ inline la_t* la_smem() { return reinterpret_cast<la_t*>(gk_shared_dynamic()); }

__device__ inline la_t la_eps() {
    return sizeof(la_t) == 4 ? (la_t)1.1920929e-07 : (la_t)2.220446049250313e-16;
}
