// Batched 16-bit matrix product on tensor cores (sm_80+): out = a @ b (+ bias[n]), fp32 accumulate.
// A block of 8 warps computes a 128x128 tile of out; warps are laid out 2 (m) x 4 (n), each owning
// 64x32 (4 x 4 mma.m16n8k16 tiles). K advances in 32-wide slices through a 4-stage cp.async ring
// in shared memory; fragments come from ldmatrix (with .trans where the operand's contiguous
// dimension is not the one the mma fragment walks).
// Operands are raw 16-bit storage; the mma's element type is a define, so one source serves f16
// and bf16. Defines:
//   GK_MMA_TYPE  f16 | bf16
//   GK_A_TRANS   0: a(m, k) at a[m * sa_m + k]; 1: at a[k * sa_k + m] (a is the .T view of a
//                contiguous (k, m) matrix)
//   GK_B_TRANS   0: b(k, n) at b[k * sb_k + n]; 1: at b[n * sb_n + k] (the .T of an (n, k) matrix,
//                as in x @ weight.T)
//   GK_MMA_VEC   1: 16-byte cp.async copies; needs 16-byte aligned operands, leading strides and
//                contiguous extents that are multiples of 8. 0: guarded 2-byte loads (any shape).
//   GK_BIAS      1: adds bias[n * s_bias] (same 16-bit type) in fp32 before rounding.
// Tile sizes are in args.cuh. Needs GK_MMA_SMEM bytes of dynamic shared memory (above the 48 KB
// default: the launcher raises the limit).
#include "args.cuh"
#include "compat.cuh"

#define gk_mma_kind_f16 1
#define gk_mma_kind_bf16 2
#define GK_CAT2(a, b) a##b
#define GK_CAT(a, b) GK_CAT2(a, b)
#define GK_STR2(x) #x
#define GK_STR(x) GK_STR2(x)
#define GK_MMA_KIND GK_CAT(gk_mma_kind_, GK_MMA_TYPE)
#if GK_MMA_KIND != 1 && GK_MMA_KIND != 2
#error "GK_MMA_TYPE must be f16 or bf16"
#endif

// A tile row of W 16-byte chunks; the chunk index is XORed with the row so that the 8 rows one
// ldmatrix phase reads (same logical chunk) fall in 8 different 16-byte bank groups.
template <int W>
__device__ __forceinline__ unsigned gk_swizzle(int row, int chunk) {
    const int x = W == 4 ? ((row >> 1) & 3) : (row & 7);
    return (unsigned)(row * W + (chunk ^ x)) * 16u;
}

__device__ __forceinline__ unsigned gk_shared_address(const void* p) {
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

__device__ __forceinline__ void gk_cp_async_commit() { asm volatile("cp.async.commit_group;\n"); }

template <int N>
__device__ __forceinline__ void gk_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Copies a tile of R = 512 / W rows (outer index) by W chunks of 8 elements (inner index, the
// contiguous one) into shared memory at `dst`; elements outside [0, outer_n) x [0, inner_n) are 0.
template <int W>
__device__ __forceinline__ void gk_load_tile(unsigned dst, const gk_u16* g, gk_i64 ld,
                                             gk_i64 outer0, gk_i64 outer_n, gk_i64 inner0,
                                             gk_i64 inner_n, int tid) {
#pragma unroll
    for (int i = 0; i < (GK_MMA_TILE_BYTES / 16) / GK_MMA_THREADS; ++i) {
        const int id = tid + GK_MMA_THREADS * i;
        const int row = id / W, chunk = id % W;
        const gk_i64 o = outer0 + row, in = inner0 + chunk * 8;
        const unsigned at = dst + gk_swizzle<W>(row, chunk);
#if GK_MMA_VEC
        // The contiguous extent is a multiple of 8: a chunk is wholly inside or wholly outside.
        const bool inside = o < outer_n && in < inner_n;
        const gk_u16* src = inside ? g + o * ld + in : g;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(at), "l"(src),
                     "r"(inside ? 16 : 0));
#else
        unsigned w[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const gk_u16 lo = (o < outer_n && in + 2 * e < inner_n) ? g[o * ld + in + 2 * e] : 0;
            const gk_u16 hi =
                (o < outer_n && in + 2 * e + 1 < inner_n) ? g[o * ld + in + 2 * e + 1] : 0;
            w[e] = (unsigned)lo | ((unsigned)hi << 16);
        }
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(at), "r"(w[0]), "r"(w[1]),
                     "r"(w[2]), "r"(w[3]));
#endif
    }
}

__device__ __forceinline__ void gk_ldmatrix_x4(unsigned addr, unsigned (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void gk_ldmatrix_x4_trans(unsigned addr, unsigned (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void gk_mma(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                       unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." GK_STR(GK_MMA_TYPE) "." GK_STR(
                     GK_MMA_TYPE) ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                                  "{%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float gk_mma_to_float(gk_u16 h) {
#if GK_MMA_KIND == 2
    return __uint_as_float((unsigned)h << 16);
#else
    return gk_f16_bits_to_f32(h);
#endif
}

__device__ __forceinline__ gk_u16 gk_mma_from_float(float f) {
    gk_u16 h;
#if GK_MMA_KIND == 2
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
#else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
#endif
    return h;
}

// Two values rounded and packed, `lo` at the lower address.
__device__ __forceinline__ unsigned gk_mma_pack(float lo, float hi) {
    unsigned r;
#if GK_MMA_KIND == 2
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

// Tile geometry in shared memory, per operand: rows are the operand's outer (strided) index,
// each row W chunks of its contiguous index. a: (m, k) rows m, or rows k when transposed;
// b: rows k, or rows n when transposed.
#define GK_A_W (GK_A_TRANS ? GK_MMA_BM / 8 : GK_MMA_BK / 8)
#define GK_B_W (GK_B_TRANS ? GK_MMA_BK / 8 : GK_MMA_BN / 8)

__device__ __forceinline__ void gk_load_stage(unsigned stage, const gk_u16* a, const gk_u16* b,
                                              const gk_matmul_args& p, gk_i64 m0, gk_i64 n0,
                                              gk_i64 k0, int tid) {
#if GK_A_TRANS
    gk_load_tile<GK_A_W>(stage, a, p.sa_k, k0, p.k, m0, p.m, tid);
#else
    gk_load_tile<GK_A_W>(stage, a, p.sa_m, m0, p.m, k0, p.k, tid);
#endif
#if GK_B_TRANS
    gk_load_tile<GK_B_W>(stage + GK_MMA_TILE_BYTES, b, p.sb_n, n0, p.n, k0, p.k, tid);
#else
    gk_load_tile<GK_B_W>(stage + GK_MMA_TILE_BYTES, b, p.sb_k, k0, p.k, n0, p.n, tid);
#endif
}

extern "C" __global__ void __launch_bounds__(GK_MMA_THREADS) gk_matmul_mma(const gk_matmul_args p) {
    extern __shared__ __align__(128) unsigned char gk_smem[];
    const unsigned smem = gk_shared_address(gk_smem);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp >> 2, warp_n = warp & 3;  // 2 x 4 warps of 64 x 32

    // Tiles in groups of 8 tile-rows, column by column inside a group, so that concurrently
    // running blocks share rows of a and columns of b in L2.
    const int tiles_m = (int)((p.m + GK_MMA_BM - 1) / GK_MMA_BM);
    const int tiles_n = (int)((p.n + GK_MMA_BN - 1) / GK_MMA_BN);
    const int per_group = 8 * tiles_n;
    const int group = (int)blockIdx.x / per_group, first_m = group * 8;
    const int group_m = min(tiles_m - first_m, 8);
    const int in_group = (int)blockIdx.x % per_group;
    const gk_i64 m0 = (gk_i64)(first_m + in_group % group_m) * GK_MMA_BM;
    const gk_i64 n0 = (gk_i64)(in_group / group_m) * GK_MMA_BN;
    const int k_tiles = (int)((p.k + GK_MMA_BK - 1) / GK_MMA_BK);

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
        const gk_u16* a = reinterpret_cast<const gk_u16*>(p.a) + off_a;
        const gk_u16* b = reinterpret_cast<const gk_u16*>(p.b) + off_b;
        gk_u16* out = reinterpret_cast<gk_u16*>(p.out) + off_o;

        float acc[4][4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

        // Ring of stages: tile t lives in stage t % STAGES. Each iteration waits for its tile,
        // then refills the stage every warp finished reading in the previous iteration.
#pragma unroll
        for (int s = 0; s < GK_MMA_STAGES - 1; ++s) {
            if (s < k_tiles)
                gk_load_stage(smem + s * 2 * GK_MMA_TILE_BYTES, a, b, p, m0, n0,
                              (gk_i64)s * GK_MMA_BK, tid);
            gk_cp_async_commit();
        }
        for (int kt = 0; kt < k_tiles; ++kt) {
            gk_cp_async_wait<GK_MMA_STAGES - 2>();
            __syncthreads();
            const int next = kt + GK_MMA_STAGES - 1;
            if (next < k_tiles)
                gk_load_stage(smem + (next % GK_MMA_STAGES) * 2 * GK_MMA_TILE_BYTES, a, b, p, m0,
                              n0, (gk_i64)next * GK_MMA_BK, tid);
            gk_cp_async_commit();

            const unsigned sa = smem + (kt % GK_MMA_STAGES) * 2 * GK_MMA_TILE_BYTES;
            const unsigned sb = sa + GK_MMA_TILE_BYTES;
            const int j8 = lane >> 3, r8 = lane & 7;
#pragma unroll
            for (int kk = 0; kk < GK_MMA_BK / 16; ++kk) {
                unsigned af[4][4], bf[4][2];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const int mrow = warp_m * 64 + i * 16;
#if GK_A_TRANS
                    // 8x8 matrices (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15),
                    // (m 8-15, k 8-15), each stored as 8 rows of k: transposed on load.
                    gk_ldmatrix_x4_trans(sa + gk_swizzle<GK_A_W>(kk * 16 + r8 + (j8 >> 1) * 8,
                                                                 (mrow + (j8 & 1) * 8) / 8),
                                         af[i]);
#else
                    // Lanes 0-15 address rows m 0-15 at k 0, lanes 16-31 the same rows at k 8.
                    gk_ldmatrix_x4(
                        sa + gk_swizzle<GK_A_W>(mrow + (lane & 15), kk * 2 + (lane >> 4)), af[i]);
#endif
                }
#pragma unroll
                for (int jp = 0; jp < 2; ++jp) {
                    const int ncol = warp_n * 32 + jp * 16;
                    unsigned r[4];
#if GK_B_TRANS
                    // Matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
                    // stored as rows of n: the mma's column-major b fragment as it lies.
                    gk_ldmatrix_x4(
                        sb + gk_swizzle<GK_B_W>(ncol + r8 + (j8 >> 1) * 8, kk * 2 + (j8 & 1)), r);
#else
                    // The same four matrices stored as rows of k: transposed on load.
                    gk_ldmatrix_x4_trans(sb + gk_swizzle<GK_B_W>(kk * 16 + r8 + (j8 & 1) * 8,
                                                                 (ncol + (j8 >> 1) * 8) / 8),
                                         r);
#endif
                    bf[2 * jp][0] = r[0];
                    bf[2 * jp][1] = r[1];
                    bf[2 * jp + 1][0] = r[2];
                    bf[2 * jp + 1][1] = r[3];
                }
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) gk_mma(acc[i][j], af[i], bf[j][0], bf[j][1]);
            }
        }
        gk_cp_async_wait<0>();
        __syncthreads();  // the next batch item's prologue overwrites the stages

        // Accumulator (i, j): c0, c1 at row g, columns 2t, 2t+1; c2, c3 at row g + 8.
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const gk_i64 col = n0 + warp_n * 32 + j * 8 + 2 * t;
            float b0 = 0.f, b1 = 0.f;
#if GK_BIAS
            const gk_u16* bias = reinterpret_cast<const gk_u16*>(p.bias);
            if (col < p.n) b0 = gk_mma_to_float(bias[col * p.s_bias]);
            if (col + 1 < p.n) b1 = gk_mma_to_float(bias[(col + 1) * p.s_bias]);
#endif
#pragma unroll
            for (int i = 0; i < 4; ++i) {
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const gk_i64 row = m0 + warp_m * 64 + i * 16 + g + 8 * h;
                    if (row >= p.m) continue;
                    const float v0 = acc[i][j][2 * h] + b0, v1 = acc[i][j][2 * h + 1] + b1;
                    gk_u16* dst = out + row * p.so_m + col * p.so_n;
                    if (p.so_n == 1 && col + 1 < p.n && ((gk_u64)dst & 3) == 0) {
                        *reinterpret_cast<unsigned*>(dst) = gk_mma_pack(v0, v1);
                    } else {
                        if (col < p.n) dst[0] = gk_mma_from_float(v0);
                        if (col + 1 < p.n) dst[p.so_n] = gk_mma_from_float(v1);
                    }
                }
            }
        }
    }
}
