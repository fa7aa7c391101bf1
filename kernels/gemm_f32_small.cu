// Exact float32 matrix product for products too small to fill the GPU with gemm_f32.cu's
// 128 x 128 tiles: out = epilogue(a @ b), batched over blockIdx.z. Blocks of 16 x 16 threads
// compute 32 x 32 tiles, each thread a 2 x 2 block (rows ty and ty + 16, columns tx and tx + 16),
// through 32-deep slices of K in shared memory. Each output is the same chain of multiply-adds in
// K order as in gemm_f32.cu, so both kernels give the same bits.
//
// Any strides: an operand is read along whichever of its axes is contiguous. Defines: GK_EPI_*.
#include "args.cuh"
#define GK_EPI_OUT GK_OUT_F32
#include "epilogue.cuh"

#define GK_S GK_F32_SMALL_TILE
static_assert(GK_S == 32 && GK_F32_SMALL_THREADS == 256,
              "the thread mapping below is written for 32 x 32 tiles and 16 x 16 threads");
#define GK_S_LOADS (GK_S * GK_S / GK_F32_SMALL_THREADS)  // elements of each operand per thread

GK_KERNEL void __launch_bounds__(GK_F32_SMALL_THREADS) gk_gemm_f32_small(const gk_gemm_args p) {
    // [k][m] and [k][n], rows padded by one float: the transposing stores do not collide.
    __shared__ float as[GK_S][GK_S + 1];
    __shared__ float bs[GK_S][GK_S + 1];
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const gk_i64 m0 = (gk_i64)blockIdx.y * GK_S, n0 = (gk_i64)blockIdx.x * GK_S;
    if (p.lower && n0 > p.row0 + m0 + GK_S - 1) return;  // wholly above the diagonal
    // Consecutive threads read consecutive elements of each operand's contiguous axis.
    const bool a_k_inner = p.sa_k == 1, b_n_inner = p.sb_k != 1;

    for (gk_i64 z = blockIdx.z; z < p.batch; z += gridDim.z) {
        const float* a = reinterpret_cast<const float*>(p.a) + z * p.sa_z;
        const float* b = reinterpret_cast<const float*>(p.b) + z * p.sb_z;
        float acc[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
        for (gk_i64 k0 = 0; k0 < p.k; k0 += GK_S) {
#pragma unroll
            for (int r = 0; r < GK_S_LOADS; ++r) {
                const int l = tid + r * GK_F32_SMALL_THREADS, outer = l / GK_S, inner = l % GK_S;
                const int am = a_k_inner ? outer : inner, ak = a_k_inner ? inner : outer;
                const gk_i64 row = m0 + am, ka = k0 + ak;
                as[ak][am] = row < p.m && ka < p.k ? a[row * p.sa_m + ka * p.sa_k] : 0.f;
                const int bn = b_n_inner ? inner : outer, bk = b_n_inner ? outer : inner;
                const gk_i64 col = n0 + bn, kb = k0 + bk;
                bs[bk][bn] = col < p.n && kb < p.k ? b[kb * p.sb_k + col * p.sb_n] : 0.f;
            }
            __syncthreads();
#pragma unroll 8
            for (int kk = 0; kk < GK_S; ++kk) {
                const float av[2] = {as[kk][ty], as[kk][ty + 16]};
                const float bv[2] = {bs[kk][tx], bs[kk][tx + 16]};
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) acc[i][j] += av[i] * bv[j];
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const gk_i64 row = m0 + ty + 16 * i;
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const gk_i64 col = n0 + tx + 16 * j;
                if (row >= p.m || col >= p.n) continue;
                float x = acc[i][j];
#if GK_EPI_BIAS
                x += reinterpret_cast<const float*>(p.bias)[col * p.s_bias];
#endif
                x = gk_activate(x);
#if GK_EPI_RESIDUAL
                x += reinterpret_cast<const float*>(p.residual)[z * p.sr_z + row * p.sr_m + col];
#endif
                reinterpret_cast<float*>(p.out)[z * p.so_z + row * p.so_m + col] = x;
            }
        }
    }
}
