// Batched matrix product out = a @ b for any strides, tiled through shared memory: a block of
// 16x16 threads computes a 64x64 tile of out, each thread a 4x4 grid of it (rows ty + 16 r, columns
// tx + 16 c, so that shared-memory reads are conflict-free and global writes coalesce).
// Defines: GK_A_T, GK_B_T, GK_OUT_T, GK_ACC_T (float16 accumulates in float, integers wrap in the
// output type as in NumPy).
#include "args.cuh"
#include "compat.cuh"

#define GK_BM 64
#define GK_BN 64
#define GK_BK 16

typedef GK_ACC_T acc_t;

GK_KERNEL void gk_matmul(const gk_matmul_args p) {
    __shared__ acc_t as[GK_BK][GK_BM + 1];
    __shared__ acc_t bs[GK_BK][GK_BN + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const gk_i64 row0 = (gk_i64)blockIdx.y * GK_BM, col0 = (gk_i64)blockIdx.x * GK_BN;

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

        acc_t acc[4][4];
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c) acc[r][c] = (acc_t)0;

        for (gk_i64 k0 = 0; k0 < p.k; k0 += GK_BK) {
            for (int j = 0; j < 4; ++j) {
                const int id = tid + 256 * j;
                // Walk memory in order: along k when a's rows are contiguous, along m otherwise.
                const int i = p.sa_k == 1 ? id / GK_BK : id % GK_BM;
                const int kk = p.sa_k == 1 ? id % GK_BK : id / GK_BM;
                const gk_i64 gi = row0 + i, gk = k0 + kk;
                as[kk][i] = (gi < p.m && gk < p.k) ? (acc_t)a[gi * p.sa_m + gk * p.sa_k] : (acc_t)0;
                const int jj = p.sb_n == 1 ? id % GK_BN : id / GK_BK;
                const int kb = p.sb_n == 1 ? id / GK_BN : id % GK_BK;
                const gk_i64 gj = col0 + jj, gkb = k0 + kb;
                bs[kb][jj] =
                    (gj < p.n && gkb < p.k) ? (acc_t)b[gkb * p.sb_k + gj * p.sb_n] : (acc_t)0;
            }
            __syncthreads();
            for (int kk = 0; kk < GK_BK; ++kk) {
                acc_t av[4], bv[4];
                for (int r = 0; r < 4; ++r) av[r] = as[kk][ty + 16 * r];
                for (int c = 0; c < 4; ++c) bv[c] = bs[kk][tx + 16 * c];
                for (int r = 0; r < 4; ++r)
                    for (int c = 0; c < 4; ++c) acc[r][c] = (acc_t)(acc[r][c] + av[r] * bv[c]);
            }
            __syncthreads();
        }
        for (int r = 0; r < 4; ++r) {
            const gk_i64 gi = row0 + ty + 16 * r;
            for (int c = 0; c < 4; ++c) {
                const gk_i64 gj = col0 + tx + 16 * c;
                if (gi < p.m && gj < p.n) out[gi * p.so_m + gj * p.so_n] = (GK_OUT_T)acc[r][c];
            }
        }
    }
}
