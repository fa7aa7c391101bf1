// Float64 matrix product on the FP64 tensor cores: out = a @ b (+ bias[n]) (+ residual[m, n]),
// batched over blockIdx.z. Blocks of 256 threads compute square tiles of GK_F64_BT (128, or 64
// for products too small to fill the GPU with 128s): eight warps in 2 x 4, each a (BT / 2) x
// (BT / 4) block of accumulator fragments. The MMA shape is the widest the architecture has:
// m16n8k8 on sm_90 (PTX 7.8's FP64 shapes; m8n8k4 runs at a fraction of their rate there),
// m8n8k4 on sm_80 (GK_F64_MMA_K: 4, 8 or 16 picks one). K advances GK_F64_BK at a time through
// a ring of GK_F64_STAGES cp.async stages. Each operand sits in shared memory as it lies in
// global memory (rows along its contiguous axis), rows padded by GK_F64_PAD doubles so that the 16
// lanes of a half-warp read 16 different banks. Every output is one fixed chain of MMAs in K order:
// the same bits every run, whatever the tile (a fragment's chain does not depend on it).
//
// Defines: GK_A_MN (a(m, k) contiguous along m: sa_m == 1; else along k), GK_B_MN (b(k, n)
// contiguous along n; else along k), GK_VEC (16-byte copies: aligned operands, contiguous
// extents and leading strides even; else 8-byte copies with any strides), GK_F64_BT,
// GK_EPI_BIAS, GK_EPI_RESIDUAL (no activation: the planner applies one after the product).
#include "args.cuh"
#include "compat.cuh"

#ifndef GK_F64_BT
#define GK_F64_BT GK_F64_TILE
#endif
#define GK_F64_WM (GK_F64_BT / 2)  // a warp's rows
#define GK_F64_WN (GK_F64_BT / 4)  // a warp's columns
#ifndef GK_F64_MMA_K
#if __CUDA_ARCH__ >= 900
#define GK_F64_MMA_K 8
#else
#define GK_F64_MMA_K 4
#endif
#endif
#define GK_F64_FM (GK_F64_MMA_K == 4 ? 8 : 16)                // a fragment's rows
#define GK_F64_AN (GK_F64_MMA_K == 4 ? 1 : GK_F64_MMA_K / 2)  // doubles of a's fragment
#define GK_F64_BN (GK_F64_MMA_K / 4)                          // of b's
#define GK_F64_CN (GK_F64_FM / 4)                             // of the accumulator's
#define GK_F64_MI (GK_F64_WM / GK_F64_FM)                     // fragments down a warp's block
#define GK_F64_NI (GK_F64_WN / 8)                             // fragments across it
#define GK_F64_LD_K (GK_F64_BK + GK_F64_PAD)                  // a row along K
#define GK_F64_LD_X (GK_F64_BT + GK_F64_PAD)                  // a row along m or n
#define GK_F64_OPERAND                                                           \
    (GK_F64_BT * GK_F64_LD_K > GK_F64_BK * GK_F64_LD_X ? GK_F64_BT * GK_F64_LD_K \
                                                       : GK_F64_BK * GK_F64_LD_X)
static_assert(GK_F64_THREADS == 256 && GK_F64_BK == 16 && (GK_F64_BT == 128 || GK_F64_BT == 64),
              "the thread mapping below is written for 256 threads, 16-deep slices and tiles of "
              "64 or 128");
#ifndef GK_EPI_BIAS
#define GK_EPI_BIAS 0
#endif
#ifndef GK_EPI_RESIDUAL
#define GK_EPI_RESIDUAL 0
#endif

__device__ inline unsigned gk_f64_smem(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// `bytes` (8 or 16) from src into shared memory; `live` false writes zeros and reads nothing
// (src must still be a valid address).
template <int Bytes>
__device__ inline void gk_f64_cp(unsigned dst, const double* src, bool live) {
    if (Bytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                     "r"(live ? 16 : 0));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src),
                     "r"(live ? 8 : 0));
}

// One operand's slice of K into a stage: `outer` rows (m or n) from outer0, K from k0 of k_len.
// OuterMajor: the operand is contiguous along m / n (stage rows along K hold BT elements);
// else along K (stage rows along m / n hold BK elements).
template <bool OuterMajor>
__device__ inline void gk_f64_stage(double* stage, const double* base, gk_i64 outer0,
                                    gk_i64 outer_len, gk_i64 k0, gk_i64 k_len, gk_i64 s_outer,
                                    gk_i64 s_k, int tid) {
    constexpr int per = GK_VEC ? 2 : 1;  // elements a copy
    constexpr int copies = GK_F64_BT * GK_F64_BK / per / GK_F64_THREADS;
#pragma unroll
    for (int i = 0; i < copies; ++i) {
        const int c = tid + i * GK_F64_THREADS;
        int o, kk;
        if (OuterMajor) {
            kk = c / (GK_F64_BT / per);
            o = c % (GK_F64_BT / per) * per;
        } else {
            o = c / (GK_F64_BK / per);
            kk = c % (GK_F64_BK / per) * per;
        }
        const bool live = outer0 + o < outer_len && k0 + kk < k_len;
        const double* src = live ? base + (outer0 + o) * s_outer + (k0 + kk) * s_k : base;
        double* dst = OuterMajor ? stage + kk * GK_F64_LD_X + o : stage + o * GK_F64_LD_K + kk;
        gk_f64_cp<per * 8>(gk_f64_smem(dst), src, live);
    }
}

// A stage's element (outer index o, K index kk) of an operand laid out as gk_f64_stage left it.
template <bool OuterMajor>
__device__ inline double gk_f64_at(const double* stage, int o, int kk) {
    return OuterMajor ? stage[kk * GK_F64_LD_X + o] : stage[o * GK_F64_LD_K + kk];
}

// c += a b on one fragment. Element e of a is (row g + 8 (e % 2), k t + 4 (e / 2)) (m8n8k4: (g,
// t)), of b (k t + 4 e, column g), of c (row g + 8 (e / 2), column 2 t + e % 2), with g = lane / 4
// and t = lane % 4: PTX's fragment layouts of these shapes.
__device__ inline void gk_f64_mma(double (&c)[GK_F64_CN], const double (&a)[GK_F64_AN],
                                  const double (&b)[GK_F64_BN]) {
#if GK_F64_MMA_K == 4
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(c[0]), "+d"(c[1])
                 : "d"(a[0]), "d"(b[0]));
#elif GK_F64_MMA_K == 8
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, "
        "%9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif
}

GK_KERNEL void __launch_bounds__(GK_F64_THREADS, 1) gk_gemm_f64(const gk_gemm_args p) {
    extern __shared__ __align__(16) double gk_f64_shared[];
    const int tid = (int)threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, t = lane % 4;  // the fragments' row group and thread in group
    const int wm = warp / 4 * GK_F64_WM, wn = warp % 4 * GK_F64_WN;
    const gk_i64 m0 = (gk_i64)blockIdx.y * GK_F64_BT, n0 = (gk_i64)blockIdx.x * GK_F64_BT;
    if (p.lower && n0 > p.row0 + m0 + GK_F64_BT - 1) return;  // wholly above the diagonal
    const int k_tiles = (int)((p.k + GK_F64_BK - 1) / GK_F64_BK);

    for (gk_i64 z = blockIdx.z; z < p.batch; z += gridDim.z) {
        const double* a = reinterpret_cast<const double*>(p.a) + z * p.sa_z;
        const double* b = reinterpret_cast<const double*>(p.b) + z * p.sb_z;
        double acc[GK_F64_MI][GK_F64_NI][GK_F64_CN];
#pragma unroll
        for (int i = 0; i < GK_F64_MI; ++i)
#pragma unroll
            for (int j = 0; j < GK_F64_NI; ++j)
#pragma unroll
                for (int e = 0; e < GK_F64_CN; ++e) acc[i][j][e] = 0.0;

        auto stage_a = [&](int st) { return gk_f64_shared + st * 2 * GK_F64_OPERAND; };
        auto stage_b = [&](int st) { return stage_a(st) + GK_F64_OPERAND; };
        auto issue = [&](int kt) {
            const int st = kt % GK_F64_STAGES;
            const gk_i64 k0 = (gk_i64)kt * GK_F64_BK;
            gk_f64_stage<GK_A_MN>(stage_a(st), a, m0, p.m, k0, p.k, p.sa_m, p.sa_k, tid);
            gk_f64_stage<GK_B_MN>(stage_b(st), b, n0, p.n, k0, p.k, p.sb_n, p.sb_k, tid);
        };
        // Ring of GK_F64_STAGES: slice t lives in stage t % STAGES. Each step waits for its
        // slice, then refills the stage every thread finished reading in the step before.
#pragma unroll
        for (int st = 0; st < GK_F64_STAGES - 1; ++st) {
            if (st < k_tiles) issue(st);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
        for (int kt = 0; kt < k_tiles; ++kt) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(GK_F64_STAGES - 2) : "memory");
            __syncthreads();
            if (kt + GK_F64_STAGES - 1 < k_tiles) issue(kt + GK_F64_STAGES - 1);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
            const double* as = stage_a(kt % GK_F64_STAGES);
            const double* bs = stage_b(kt % GK_F64_STAGES);
#pragma unroll
            for (int kk = 0; kk < GK_F64_BK; kk += GK_F64_MMA_K) {
                double bf[GK_F64_NI][GK_F64_BN];
#pragma unroll
                for (int j = 0; j < GK_F64_NI; ++j)
#pragma unroll
                    for (int e = 0; e < GK_F64_BN; ++e)
                        bf[j][e] = gk_f64_at<GK_B_MN>(bs, wn + j * 8 + g, kk + t + 4 * e);
#pragma unroll
                for (int i = 0; i < GK_F64_MI; ++i) {
                    double af[GK_F64_AN];
#pragma unroll
                    for (int e = 0; e < GK_F64_AN; ++e)
                        af[e] = gk_f64_at<GK_A_MN>(as, wm + i * GK_F64_FM + g + 8 * (e % 2),
                                                   kk + t + 4 * (e / 2));
#pragma unroll
                    for (int j = 0; j < GK_F64_NI; ++j) gk_f64_mma(acc[i][j], af, bf[j]);
                }
            }
        }
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
        __syncthreads();  // the next batch item's first copies overwrite the stages

        double* out = reinterpret_cast<double*>(p.out) + z * p.so_z;
#pragma unroll
        for (int i = 0; i < GK_F64_MI; ++i)
#pragma unroll
            for (int h = 0; h < GK_F64_CN / 2; ++h) {
                const gk_i64 row = m0 + wm + i * GK_F64_FM + g + 8 * h;
                if (row >= p.m) continue;
#if GK_EPI_RESIDUAL
                // The row's residuals loaded before any of its stores: after a store the compiler
                // cannot move a load (out may alias residual as far as it knows), so loads
                // interleaved with stores would each wait their whole latency in turn.
                double res[GK_F64_NI][2];
                const double* res_row =
                    reinterpret_cast<const double*>(p.residual) + z * p.sr_z + row * p.sr_m;
#pragma unroll
                for (int j = 0; j < GK_F64_NI; ++j) {
                    const gk_i64 col = n0 + wn + j * 8 + 2 * t;
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        if (col + e < p.n) res[j][e] = res_row[col + e];
                }
#endif
#pragma unroll
                for (int j = 0; j < GK_F64_NI; ++j) {
                    const gk_i64 col = n0 + wn + j * 8 + 2 * t;
                    if (col >= p.n) continue;
                    const bool both = col + 1 < p.n;
                    double v[2] = {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        if (e == 1 && !both) break;
#if GK_EPI_BIAS
                        v[e] += reinterpret_cast<const double*>(p.bias)[(col + e) * p.s_bias];
#endif
#if GK_EPI_RESIDUAL
                        v[e] += res[j][e];
#endif
                    }
                    double* dst = out + row * p.so_m + col;
                    if (both && p.out_pairs) {
                        *reinterpret_cast<double2*>(dst) = make_double2(v[0], v[1]);
                    } else {
                        dst[0] = v[0];
                        if (both) dst[1] = v[1];
                    }
                }
            }
    }
}
