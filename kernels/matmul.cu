// Batched matrix product out = a @ b (+ bias[n]) for any strides and types, tiled through shared
// memory: a block of 16x16 threads computes a GK_TILE x GK_TILE tile of out, each thread a TM x TM
// grid of it (TM = GK_TILE / 16: rows 4 ty + r, and 64 + 4 ty + r when TM is 8; columns likewise
// with tx), read from shared memory as 4-wide vectors. The next k-slice is fetched into registers
// while the current one is multiplied.
// Defines: GK_A_T, GK_B_T, GK_OUT_T, GK_ACC_T (float16 accumulates in float, integers wrap in the
// output type as in NumPy), GK_TILE: 128, or 64 for 8-byte accumulators (whose 8x8 grid per
// thread would spill registers).
#include "args.cuh"
#include "compat.cuh"

#define GK_BM GK_TILE
#define GK_BN GK_TILE
#define GK_BK 8
#define GK_TM (GK_TILE / GK_MATMUL_THREADS)
#define GK_QUADS (GK_TM / 4)            // 4-wide vectors per thread along m (and n)
#define GK_LOADS (GK_BM * GK_BK / 256)  // elements of each operand a thread fetches per slice

typedef GK_ACC_T acc_t;

// Four consecutive elements of a shared-memory row, aligned so that one vector load reads them.
template <typename T>
struct alignas(4 * sizeof(T)) gk_quad {
    T v[4];
};

// Rows of GK_BM + 4 elements: aligned quads, and the transposing stores of a's tile (8 k per row
// of a) land in distinct banks.
#define GK_QUADS_PER_ROW ((GK_BM + 4) / 4)

GK_KERNEL void gk_matmul(const gk_matmul_args p) {
    __shared__ gk_quad<acc_t> as[GK_BK][GK_QUADS_PER_ROW];
    __shared__ gk_quad<acc_t> bs[GK_BK][GK_QUADS_PER_ROW];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const gk_i64 row0 = (gk_i64)blockIdx.y * GK_BM, col0 = (gk_i64)blockIdx.x * GK_BN;
    // Walk memory in order: along k when a's rows (b's columns) are contiguous, else along m (n).
    const bool a_k_inner = p.sa_k == 1, b_n_inner = p.sb_n == 1;

    for (gk_i64 z = blockIdx.z;
         z < p.batch_shape[0] * p.batch_shape[1] * p.batch_shape[2] * p.batch_shape[3];
         z += gridDim.z) {
        gk_i64 rem = z, off_a = 0, off_b = 0, off_o = 0;
        for (int d = p.batch_ndim - 1; d >= 0; --d) {
            const gk_i64 idx = rem % p.batch_shape[d];
            rem /= p.batch_shape[d];
            off_a += idx * p.batch_sa[d];
            off_b += idx * p.batch_sb[d];
            off_o += idx * p.batch_so[d];
        }
        const GK_A_T* a = reinterpret_cast<const GK_A_T*>(p.a) + off_a;
        const GK_B_T* b = reinterpret_cast<const GK_B_T*>(p.b) + off_b;
        GK_OUT_T* out = reinterpret_cast<GK_OUT_T*>(p.out) + off_o;

        acc_t acc[GK_TM][GK_TM];
#pragma unroll
        for (int r = 0; r < GK_TM; ++r)
#pragma unroll
            for (int c = 0; c < GK_TM; ++c) acc[r][c] = (acc_t)0;

        acc_t ra[GK_LOADS], rb[GK_LOADS];
        auto fetch = [&](gk_i64 k0) {
#pragma unroll
            for (int j = 0; j < GK_LOADS; ++j) {
                const int id = tid + 256 * j;
                const int i = a_k_inner ? id / GK_BK : id % GK_BM;
                const int kk = a_k_inner ? id % GK_BK : id / GK_BM;
                const gk_i64 gi = row0 + i, gk = k0 + kk;
                ra[j] = (gi < p.m && gk < p.k) ? (acc_t)a[gi * p.sa_m + gk * p.sa_k] : (acc_t)0;
                const int jj = b_n_inner ? id % GK_BN : id / GK_BK;
                const int kb = b_n_inner ? id / GK_BN : id % GK_BK;
                const gk_i64 gj = col0 + jj, gkb = k0 + kb;
                rb[j] = (gj < p.n && gkb < p.k) ? (acc_t)b[gkb * p.sb_k + gj * p.sb_n] : (acc_t)0;
            }
        };
        fetch(0);
        for (gk_i64 k0 = 0; k0 < p.k; k0 += GK_BK) {
#pragma unroll
            for (int j = 0; j < GK_LOADS; ++j) {
                const int id = tid + 256 * j;
                const int i = a_k_inner ? id / GK_BK : id % GK_BM;
                const int kk = a_k_inner ? id % GK_BK : id / GK_BM;
                as[kk][i >> 2].v[i & 3] = ra[j];
                const int jj = b_n_inner ? id % GK_BN : id / GK_BK;
                const int kb = b_n_inner ? id / GK_BN : id % GK_BK;
                bs[kb][jj >> 2].v[jj & 3] = rb[j];
            }
            __syncthreads();
            if (k0 + GK_BK < p.k) fetch(k0 + GK_BK);  // in flight while this slice multiplies
#pragma unroll
            for (int kk = 0; kk < GK_BK; ++kk) {
                acc_t av[GK_TM], bv[GK_TM];
#pragma unroll
                for (int q = 0; q < GK_QUADS; ++q) {
                    const gk_quad<acc_t> aq = as[kk][16 * q + ty], bq = bs[kk][16 * q + tx];
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        av[4 * q + e] = aq.v[e];
                        bv[4 * q + e] = bq.v[e];
                    }
                }
#pragma unroll
                for (int r = 0; r < GK_TM; ++r)
#pragma unroll
                    for (int c = 0; c < GK_TM; ++c) acc[r][c] = (acc_t)(acc[r][c] + av[r] * bv[c]);
            }
            __syncthreads();
        }
        const GK_OUT_T* bias = reinterpret_cast<const GK_OUT_T*>(p.bias);
#pragma unroll
        for (int r = 0; r < GK_TM; ++r) {
            const gk_i64 gi = row0 + 64 * (r >> 2) + 4 * ty + (r & 3);
            if (gi >= p.m) continue;
#pragma unroll
            for (int c = 0; c < GK_TM; ++c) {
                const gk_i64 gj = col0 + 64 * (c >> 2) + 4 * tx + (c & 3);
                if (gj >= p.n) continue;
                acc_t v = acc[r][c];
                if (bias) v = (acc_t)(v + (acc_t)bias[gj * p.s_bias]);
                out[gi * p.so_m + gj * p.so_n] = (GK_OUT_T)v;
            }
        }
    }
}
