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

// Small triangles in registers: thread (ty, tx) of a 16 x 16 layout holds the elements
// (ty + 16 r, tx + 16 q), r, q < LA_PER, of a matrix of at most GK_LA_MAX_N rows (cyclic, so
// every thread keeps work as a triangle shrinks).
#define LA_SIDE 16
#define LA_PER (GK_LA_MAX_N / LA_SIDE)
static_assert(GK_LA_MAX_N == LA_PER * LA_SIDE, "a 16 x 16 layout over the largest matrix");

// X = L^-1 of the n x n lower triangle L into x (identity on entry), by rows: X[j] = (e_j -
// sum_{k<j} L[j][k] X[k]) / L[j][j], each finished row taken out of the rows below it at once.
// L[i][j] at l[i * si + j * sj] (a unit diagonal, not read, with `unit`); `rows`: two buffers of
// GK_LA_MAX_N that alternate, so one barrier per row suffices. Every thread of a 16 x 16 block
// calls it.
__device__ inline void la_invert_rows(la_t (&x)[LA_PER][LA_PER], int n, la_t (*rows)[GK_LA_MAX_N],
                                      const la_t* l, int si, int sj, bool unit) {
    const int tx = threadIdx.x % LA_SIDE, ty = threadIdx.x / LA_SIDE;
    for (int j = 0; j < n; ++j) {
        la_t* xj = rows[j & 1];
        if (ty == j % LA_SIDE) {
            const la_t d = unit ? (la_t)1 : (la_t)1 / l[j * (si + sj)];
            // Every r computed and the one of row j kept: a branch on r == j / LA_SIDE would let
            // the compiler index x by it, which puts x in local memory.
#pragma unroll
            for (int r = 0; r < LA_PER; ++r) {
                const bool row_j = r == j / LA_SIDE;
#pragma unroll
                for (int q = 0; q < LA_PER; ++q) {
                    const la_t v = x[r][q] * d;
                    x[r][q] = row_j ? v : x[r][q];
                    if (row_j) xj[tx + LA_SIDE * q] = v;
                }
            }
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < LA_PER; ++r) {
            const int i = ty + LA_SIDE * r;
            if (i <= j || i >= n) continue;
            const la_t lij = l[i * si + j * sj];
#pragma unroll
            for (int q = 0; q < LA_PER; ++q) x[r][q] -= lij * xj[tx + LA_SIDE * q];
        }
    }
}

// The identity in the layout's registers.
__device__ inline void la_identity(la_t (&x)[LA_PER][LA_PER]) {
    const int tx = threadIdx.x % LA_SIDE, ty = threadIdx.x / LA_SIDE;
#pragma unroll
    for (int r = 0; r < LA_PER; ++r)
#pragma unroll
        for (int q = 0; q < LA_PER; ++q)
            x[r][q] = ty + LA_SIDE * r == tx + LA_SIDE * q ? (la_t)1 : (la_t)0;
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
