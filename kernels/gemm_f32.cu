// Exact float32 matrix product (no TF32): out = epilogue(a @ b), batched over blockIdx.z.
// Blocks of 256 threads compute 128 x 128 tiles, each thread an 8 x 8 register block (rows
// ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns likewise with tx), so every shared-memory read
// of 16 bytes feeds 16 multiply-adds. K advances 8 at a time through two shared-memory buffers:
// the next slice is read from global memory into registers while the current one is multiplied.
// Both operands sit in shared memory K-major-by-rows ([k][m] and [k][n], rows padded by 4 floats
// so the transposing stores of a K-contiguous operand do not collide in banks).
// Split-K (p.splits > 1, for products whose tiles leave most SMs idle): blockIdx.z also names a
// range of K; the block stores its partial sums in p.workspace and gk_gemm_f32_reduce adds them
// in range order and applies the epilogue (the same bits every run).
//
// Defines: GK_A_MN (a(m, k) is contiguous along m: sa_m == 1; else along k), GK_B_MN (b(k, n)
// contiguous along n; else along k), GK_VEC (16-byte loads: aligned operands, contiguous extents
// and leading strides multiples of 4; else element loads with any strides), GK_F32_SPLIT (1: the
// split-K instance, storing partial sums; a separate instance because the workspace's addressing,
// live through the K loop, pushes ptxas to sink the next slice's loads next to their stores and
// to spill: 38 against 44 TFLOP/s at 4096^3 on the H100), GK_EPI_*.
#include "args.cuh"
#define GK_EPI_OUT GK_OUT_F32
#include "epilogue.cuh"

#define GK_F32_BM GK_F32_TILE
#define GK_F32_LD (GK_F32_BM + 4)
static_assert(
    GK_F32_TILE == 128 && GK_F32_BK == 8 && GK_F32_THREADS == 256,
    "the thread mapping below is written for 128 x 128 tiles, 8-deep slices, 256 threads");
#ifndef GK_F32_MIN_BLOCKS
#define GK_F32_MIN_BLOCKS 1  // blocks per SM the register budget must allow
#endif

#if defined(GK_HIP)
#undef GK_F32_ASYNC
#define GK_F32_ASYNC 0
#elif !defined(GK_F32_ASYNC)
#define GK_F32_ASYNC 1  // cp.async stages (sm_80+); HIP stages through registers
#endif
#if GK_F32_ASYNC
#define GK_F32_BUFS GK_F32_STAGES
#else
#define GK_F32_BUFS 2
#endif

struct alignas(16) gk_f4 {
    float v[4];
};

// Four elements of an operand run along its contiguous axis into registers: `g` points at the
// first, `step` is the run's element stride, `live` says the run's row is inside the matrix and
// `left` how many of its elements are (the rest read as 0).
__device__ inline gk_f4 gk_load4(const float* g, gk_i64 step, bool live, gk_i64 left) {
    gk_f4 r;
#if GK_VEC
    // The run's extent is a multiple of 4: a run lies wholly inside or wholly outside.
#pragma unroll
    for (int i = 0; i < 4; ++i) r.v[i] = 0.f;
#ifdef GK_HIP
    if (live && left > 0) r = *reinterpret_cast<const gk_f4*>(g);
#else
    // A volatile load stays where it is written: at the top of the K step, so that its latency
    // hides behind the multiply-adds (the compiler otherwise sinks it next to its use).
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " @p ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%5];\n}\n"
        : "+f"(r.v[0]), "+f"(r.v[1]), "+f"(r.v[2]), "+f"(r.v[3])
        : "r"((int)(live && left > 0)), "l"(g));
#endif
#else
#pragma unroll
    for (int i = 0; i < 4; ++i) r.v[i] = (live && i < left) ? g[i * step] : 0.f;
#endif
    return r;
}

#if GK_F32_ASYNC
__device__ inline unsigned gk_f32_smem(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
// Asynchronous copies into shared memory; `live` false writes zeros and reads nothing (the
// source must still be a valid address).
__device__ inline void gk_cp4(unsigned dst, const float* src, bool live) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(live ? 4 : 0));
}
__device__ inline void gk_cp16(unsigned dst, const float* src, bool live) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(live ? 16 : 0));
}
#endif

#if GK_VEC && !defined(GK_HIP)
// A thread's 4 loaded values into shared memory at the 32-bit address `at`: one 16-byte store
// when they lie along the stored row (MN), else one float a row, GK_F32_LD floats apart.
template <bool MN>
__device__ inline void gk_f32_put(unsigned at, const gk_f4& r) {
    if constexpr (MN) {
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(at), "f"(r.v[0]),
                     "f"(r.v[1]), "f"(r.v[2]), "f"(r.v[3])
                     : "memory");
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i)
            asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(at + i * GK_F32_LD * 4), "f"(r.v[i])
                         : "memory");
    }
}
#endif

GK_KERNEL void __launch_bounds__(GK_F32_THREADS, GK_F32_MIN_BLOCKS)
    gk_gemm_f32(const gk_gemm_args p) {
    __shared__ __align__(16) float as[GK_F32_BUFS][GK_F32_BK][GK_F32_LD];
    __shared__ __align__(16) float bs[GK_F32_BUFS][GK_F32_BK][GK_F32_LD];
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const gk_i64 m0 = (gk_i64)blockIdx.y * GK_F32_BM, n0 = (gk_i64)blockIdx.x * GK_F32_BM;
    if (p.lower && n0 > p.row0 + m0 + GK_F32_BM - 1) return;  // wholly above the diagonal

    // What each thread loads per slice: a run of 4 along the operand's contiguous axis.
#if GK_A_MN
    const int a_k = tid / 32, a_m = (tid % 32) * 4;  // 4 rows m at one k
#else
    const int a_m = tid / 2, a_k = (tid % 2) * 4;  // 4 k of one row m
#endif
#if GK_B_MN
    const int b_k = tid / 32, b_n = (tid % 32) * 4;
#else
    const int b_n = tid / 2, b_k = (tid % 2) * 4;
#endif

    for (gk_i64 item = blockIdx.z; item < p.batch * p.splits; item += gridDim.z) {
        const gk_i64 z = item % p.batch, k_begin = item / p.batch * p.k_per_split;
        const gk_i64 k_len = p.splits > 1 ? min(p.k - k_begin, p.k_per_split) : p.k;
        const int k_tiles = (int)((k_len + GK_F32_BK - 1) / GK_F32_BK);
        const float* a = reinterpret_cast<const float*>(p.a) + z * p.sa_z + k_begin * p.sa_k;
        const float* b = reinterpret_cast<const float*>(p.b) + z * p.sb_z + k_begin * p.sb_k;
        float acc[8][8];
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

        // Each thread's run of a and of b, and how far they move per slice of K.
#if GK_A_MN
        const float* ga = a + (gk_i64)a_k * p.sa_k + (m0 + a_m) * p.sa_m;
        const gk_i64 a_step = p.sa_m, a_next = GK_F32_BK * p.sa_k, a_left = p.m - (m0 + a_m);
#else
        const float* ga = a + (m0 + a_m) * p.sa_m + (gk_i64)a_k * p.sa_k;
        const gk_i64 a_step = p.sa_k, a_next = GK_F32_BK * p.sa_k;
        const bool a_live = m0 + a_m < p.m;
#endif
#if GK_B_MN
        const float* gb = b + (gk_i64)b_k * p.sb_k + (n0 + b_n) * p.sb_n;
        const gk_i64 b_step = p.sb_n, b_next = GK_F32_BK * p.sb_k, b_left = p.n - (n0 + b_n);
#else
        const float* gb = b + (n0 + b_n) * p.sb_n + (gk_i64)b_k * p.sb_k;
        const gk_i64 b_step = p.sb_k, b_next = GK_F32_BK * p.sb_k;
        const bool b_live = n0 + b_n < p.n;
#endif
#if GK_F32_ASYNC
        // Slice kt of a and b into stage `st`: each thread copies its run of 4 (16 bytes when
        // the run is contiguous in both places, else element by element).
        auto issue = [&](int kt, int st) {
            const gk_i64 k0 = (gk_i64)kt * GK_F32_BK;
            const float* ra = ga + kt * a_next;
            const float* rb = gb + kt * b_next;
            (void)a_step;
            (void)b_step;
#if GK_A_MN
            const bool a_in = k0 + a_k < k_len;
#if GK_VEC
            gk_cp16(gk_f32_smem(&as[st][a_k][a_m]), a_in && a_left > 0 ? ra : a,
                    a_in && a_left > 0);
#else
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const bool ok = a_in && i < a_left;
                gk_cp4(gk_f32_smem(&as[st][a_k][a_m + i]), ok ? ra + i * a_step : a, ok);
            }
#endif
#else
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const bool ok = a_live && k0 + a_k + i < k_len;
                gk_cp4(gk_f32_smem(&as[st][a_k + i][a_m]), ok ? ra + i * a_step : a, ok);
            }
#endif
#if GK_B_MN
            const bool b_in = k0 + b_k < k_len;
#if GK_VEC
            gk_cp16(gk_f32_smem(&bs[st][b_k][b_n]), b_in && b_left > 0 ? rb : b,
                    b_in && b_left > 0);
#else
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const bool ok = b_in && i < b_left;
                gk_cp4(gk_f32_smem(&bs[st][b_k][b_n + i]), ok ? rb + i * b_step : b, ok);
            }
#endif
#else
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const bool ok = b_live && k0 + b_k + i < k_len;
                gk_cp4(gk_f32_smem(&bs[st][b_k + i][b_n]), ok ? rb + i * b_step : b, ok);
            }
#endif
        };
        // Ring of GK_F32_STAGES: slice t lives in stage t % STAGES. Each step waits for its slice,
        // then refills the stage every thread finished reading in the step before.
#pragma unroll
        for (int st = 0; st < GK_F32_STAGES - 1; ++st) {
            if (st < k_tiles) issue(st, st);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
        for (int kt = 0; kt < k_tiles; ++kt) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(GK_F32_STAGES - 2) : "memory");
            __syncthreads();
            const int next = kt + GK_F32_STAGES - 1;
            if (next < k_tiles) issue(next, next % GK_F32_STAGES);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
            const int buf = kt % GK_F32_STAGES;
#pragma unroll
            for (int kk = 0; kk < GK_F32_BK; ++kk) {
                const gk_f4 a0 = *reinterpret_cast<const gk_f4*>(&as[buf][kk][ty * 4]);
                const gk_f4 a1 = *reinterpret_cast<const gk_f4*>(&as[buf][kk][64 + ty * 4]);
                const gk_f4 b0 = *reinterpret_cast<const gk_f4*>(&bs[buf][kk][tx * 4]);
                const gk_f4 b1 = *reinterpret_cast<const gk_f4*>(&bs[buf][kk][64 + tx * 4]);
                float av[8], bv[8];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    av[i] = a0.v[i];
                    av[4 + i] = a1.v[i];
                    bv[i] = b0.v[i];
                    bv[4 + i] = b1.v[i];
                }
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) acc[i][j] += av[i] * bv[j];
            }
        }
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
        __syncthreads();  // the next batch item's first copies overwrite the stages
#else
        gk_f4 ra, rb;
#if GK_VEC
        // 16-byte loads: each thread's runs as running pointers (one 64-bit add a slice, not a
        // multiply a slice) and the slices its run is read in as one 32-bit bound each (slice kt
        // is live for kt < a_end: its run lies inside the matrix). Past the range the loads are
        // predicated off, so the last step's fetch of slice k_tiles reads nothing. Fewer live
        // values than `ga + kt * a_next` with 64-bit bounds: ptxas 13.0 then keeps the store
        // addresses instead of rematerializing them from the thread index before every slice's
        // stores (16 fewer instructions in the K loop, the same multiply-adds).
        const float* pa = ga;
        const float* pb = gb;
#if GK_A_MN
        const bool a_run = a_left > 0;
#else
        const bool a_run = a_live;
#endif
#if GK_B_MN
        const bool b_run = b_left > 0;
#else
        const bool b_run = b_live;
#endif
        const int a_end = a_run ? (int)((k_len - a_k + GK_F32_BK - 1) / GK_F32_BK) : 0;
        const int b_end = b_run ? (int)((k_len - b_k + GK_F32_BK - 1) / GK_F32_BK) : 0;
        auto fetch = [&](int kt) {
#if GK_A_MN
            ra = gk_load4(pa, a_step, kt < a_end, a_left);
#else
            ra = gk_load4(pa, a_step, kt < a_end, 1);
#endif
#if GK_B_MN
            rb = gk_load4(pb, b_step, kt < b_end, b_left);
#else
            rb = gk_load4(pb, b_step, kt < b_end, 1);
#endif
        };
        auto advance = [&] {
            pa += a_next;
            pb += b_next;
        };
#else
        auto fetch = [&](int kt) {
            const gk_i64 k0 = (gk_i64)kt * GK_F32_BK;
#if GK_A_MN
            ra = gk_load4(ga + kt * a_next, a_step, k0 + a_k < k_len, a_left);
#else
            ra = gk_load4(ga + kt * a_next, a_step, a_live, k_len - (k0 + a_k));
#endif
#if GK_B_MN
            rb = gk_load4(gb + kt * b_next, b_step, k0 + b_k < k_len, b_left);
#else
            rb = gk_load4(gb + kt * b_next, b_step, b_live, k_len - (k0 + b_k));
#endif
        };
        auto advance = [] {};
#endif
#if GK_VEC && !defined(GK_HIP)
        // Each thread's store addresses in shared memory, kept as 32-bit offsets: the stores of
        // a slice add the buffer's offset (uniform) and an immediate.
        const unsigned a_st = (unsigned)__cvta_generic_to_shared(&as[0][a_k][a_m]);
        const unsigned b_st = (unsigned)__cvta_generic_to_shared(&bs[0][b_k][b_n]);
        constexpr unsigned buf_bytes = sizeof(as[0]);
        auto stash = [&](int buf) {
            const unsigned off = (unsigned)buf * buf_bytes;
            gk_f32_put<GK_A_MN>(a_st + off, ra);
            gk_f32_put<GK_B_MN>(b_st + off, rb);
        };
#else
        auto stash = [&](int buf) {
#if GK_A_MN
            *reinterpret_cast<gk_f4*>(&as[buf][a_k][a_m]) = ra;
#else
#pragma unroll
            for (int i = 0; i < 4; ++i) as[buf][a_k + i][a_m] = ra.v[i];
#endif
#if GK_B_MN
            *reinterpret_cast<gk_f4*>(&bs[buf][b_k][b_n]) = rb;
#else
#pragma unroll
            for (int i = 0; i < 4; ++i) bs[buf][b_k + i][b_n] = rb.v[i];
#endif
        };

#endif
        fetch(0);
        stash(0);
        __syncthreads();
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int buf = kt & 1;
            // Unconditional (element loads: the last step refetches its own slice, unused; 16-byte
            // loads: predicated off past the range): a branch here would let the compiler sink
            // the loads next to the stores below.
            advance();
            fetch(GK_VEC || kt + 1 < k_tiles ? kt + 1 : kt);
            asm volatile("" ::: "memory");
#pragma unroll
            for (int kk = 0; kk < GK_F32_BK; ++kk) {
                const gk_f4 a0 = *reinterpret_cast<const gk_f4*>(&as[buf][kk][ty * 4]);
                const gk_f4 a1 = *reinterpret_cast<const gk_f4*>(&as[buf][kk][64 + ty * 4]);
                const gk_f4 b0 = *reinterpret_cast<const gk_f4*>(&bs[buf][kk][tx * 4]);
                const gk_f4 b1 = *reinterpret_cast<const gk_f4*>(&bs[buf][kk][64 + tx * 4]);
                float av[8], bv[8];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    av[i] = a0.v[i];
                    av[4 + i] = a1.v[i];
                    bv[i] = b0.v[i];
                    bv[4 + i] = b1.v[i];
                }
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) acc[i][j] += av[i] * bv[j];
            }
            if (kt + 1 < k_tiles) stash(buf ^ 1);
            __syncthreads();
        }
        __syncthreads();  // the next batch item's first stores overwrite the buffers
#endif

        // A split's partial sums go to its slice of the workspace as they are (n-wide rows).
        constexpr bool partial = GK_F32_SPLIT;
        float* const out = partial ? reinterpret_cast<float*>(p.workspace) + item * p.m * p.n
                                   : reinterpret_cast<float*>(p.out) + z * p.so_z;
        const gk_i64 out_ld = partial ? p.n : p.so_m;
        const int pairs = partial ? (int)(p.n % 2 == 0) : p.out_pairs;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const gk_i64 row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
            if (row >= p.m) continue;
#pragma unroll
            for (int jh = 0; jh < 2; ++jh) {
                const gk_i64 col = n0 + jh * 64 + tx * 4;
                float v[4];
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    float x = acc[i][jh * 4 + j];
                    if (!partial) {
#if GK_EPI_BIAS
                        if (col + j < p.n)
                            x += reinterpret_cast<const float*>(p.bias)[(col + j) * p.s_bias];
#endif
                        x = gk_activate(x);
#if GK_EPI_RESIDUAL
                        if (col + j < p.n)
                            x += reinterpret_cast<const float*>(
                                p.residual)[z * p.sr_z + row * p.sr_m + col + j];
#endif
                    }
                    v[j] = x;
                }
                float* dst = out + row * out_ld + col;
#pragma unroll
                for (int j = 0; j < 4; j += 2) {
                    if (col + j < p.n)
                        gk_store_out2(dst + j, v[j], v[j + 1], col + j + 1 < p.n, pairs);
                }
            }
        }
    }
}

// out = epilogue(sum over s of workspace[s]) in range order: the same bits every run.
GK_KERNEL void __launch_bounds__(GK_SPLITK_THREADS) gk_gemm_f32_reduce(const gk_gemm_args p) {
    gk_splitk_reduce(p);
}
