// Products of a few rows (decode: m <= GK_GEMV_ROWS <= 16) by a weight that is read once from
// memory: out (m, n) = epilogue(x (m, k) @ w). Bound by reading w, so every load is 16 bytes and
// each thread keeps GK_GEMV_UNROLL of them in flight before the first multiply-add.
//
//  gk_gemv_nk  w (n, k) row-major, the product x @ w.T (linear's layout): a warp per
//              GK_GEMV_CPW output columns, its lanes striding along the contiguous k.
//  gk_gemv_kn  w (k, n) row-major, the product x @ w: a block per GK_GEMV_CW * V columns
//              (V elements per 16 bytes); its threads split k in 256 / GK_GEMV_CW phases and
//              their partial sums are added in a fixed order through shared memory.
// With p.splits > 1, blockIdx.y takes a range of k and the block writes float partial sums to
// p.workspace (splits, m, n); gk_gemv_reduce adds them in split order and applies the epilogue.
// Every sum is taken in the same order on every run.
//
// Defines: GK_T (gk_bf16 | gk_f16 | float, with GK_EPI_OUT to match), GK_GEMV_ROWS (1, 2, 4, 8
// or 16: registers for that many rows), GK_GEMV_CPW, GK_GEMV_CW, GK_GEMV_UNROLL (tuning), GK_VEC
// (1: w's and, for gk_gemv_nk, x's rows are 16-byte aligned with k (nk) or n (kn) a multiple of V;
// 0: element loads, any strides), GK_EPI_*.
#include "args.cuh"
#include "epilogue.cuh"
#include "warp.cuh"

#ifndef GK_GEMV_CPW
#define GK_GEMV_CPW GK_GEMV_CPW_DEFAULT
#endif
#ifndef GK_GEMV_CW
#define GK_GEMV_CW GK_GEMV_CW_DEFAULT
#endif
#ifndef GK_GEMV_UNROLL
#define GK_GEMV_UNROLL 4
#endif

typedef GK_T T;
#define GK_V (16 / (int)sizeof(T))

struct alignas(16) gk_u32x4 {
    gk_u32 w[4];
};

#ifndef GK_GEMV_HINT
#define GK_GEMV_HINT 0
#endif

// 16 bytes of the weight, read once: with GK_GEMV_HINT (CUDA), past L1 and with a 256-byte L2
// fetch, as a stream wants.
__device__ inline gk_u32x4 gk_ldw(const gk_u32x4* p) {
#if GK_GEMV_HINT && !defined(GK_HIP)
    gk_u32x4 r;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
                 : "l"(p));
    return r;
#else
    return *p;
#endif
}

// The GK_V values of a 16-byte chunk as floats.
__device__ inline void gk_unpack(const gk_u32x4& c, float (&f)[GK_V]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if (sizeof(T) == 4) {
            f[i] = gk_f32_from_bits(c.w[i]);
        } else if (GK_EPI_OUT == GK_OUT_BF16) {
            f[2 * i] = gk_f32_from_bits(c.w[i] << 16);
            f[2 * i + 1] = gk_f32_from_bits(c.w[i] & 0xffff0000u);
        } else {
            f[2 * i] = gk_f16_bits_to_f32((gk_u16)(c.w[i] & 0xffffu));
            f[2 * i + 1] = gk_f16_bits_to_f32((gk_u16)(c.w[i] >> 16));
        }
    }
}

__device__ inline void gk_gemv_store(const gk_gemv_args& p, gk_i64 r, gk_i64 col, float v) {
    if (p.splits > 1) {
        reinterpret_cast<float*>(p.workspace)[((gk_i64)blockIdx.y * p.m + r) * p.n + col] = v;
        return;
    }
#if GK_EPI_BIAS
    v += gk_load_out(reinterpret_cast<const gk_out_t*>(p.bias) + col * p.s_bias);
#endif
    v = gk_activate(v);
#if GK_EPI_RESIDUAL
    v += gk_load_out(reinterpret_cast<const gk_out_t*>(p.residual) + r * p.sr_m + col);
#endif
    gk_store_out2(reinterpret_cast<gk_out_t*>(p.out) + r * p.so_m + col, v, 0.f, false, 0);
}

GK_KERNEL void __launch_bounds__(GK_GEMV_THREADS) gk_gemv_nk(const gk_gemv_args p) {
    const int lane = (int)threadIdx.x % GK_LANES, warp = (int)threadIdx.x / GK_LANES;
    const gk_i64 n0 = ((gk_i64)blockIdx.x * (GK_GEMV_THREADS / GK_LANES) + warp) * GK_GEMV_CPW;
    if (n0 >= p.n) return;
    const gk_i64 kb = (gk_i64)blockIdx.y * p.k_per_split;
    const gk_i64 ke = kb + p.k_per_split < p.k ? kb + p.k_per_split : p.k;
    const T* x = reinterpret_cast<const T*>(p.x);
    const T* w = reinterpret_cast<const T*>(p.w);
    float acc[GK_GEMV_CPW][GK_GEMV_ROWS];
#pragma unroll
    for (int c = 0; c < GK_GEMV_CPW; ++c)
#pragma unroll
        for (int r = 0; r < GK_GEMV_ROWS; ++r) acc[c][r] = 0.f;
    // Columns past n read the last one again (never stored): no branch in the loads.
    const T* wrow[GK_GEMV_CPW];
#pragma unroll
    for (int c = 0; c < GK_GEMV_CPW; ++c) wrow[c] = w + (n0 + c < p.n ? n0 + c : p.n - 1) * p.sw;
#if GK_VEC
    const gk_i64 c1 = ke / GK_V;
    for (gk_i64 ch = kb / GK_V + lane; ch < c1; ch += GK_LANES * GK_GEMV_UNROLL) {
        gk_u32x4 wv[GK_GEMV_UNROLL][GK_GEMV_CPW];
#pragma unroll
        for (int u = 0; u < GK_GEMV_UNROLL; ++u) {
            const gk_i64 at = ch + u * GK_LANES < c1 ? ch + u * GK_LANES : ch;
#pragma unroll
            for (int c = 0; c < GK_GEMV_CPW; ++c)
                wv[u][c] = gk_ldw(reinterpret_cast<const gk_u32x4*>(wrow[c]) + at);
        }
#pragma unroll
        for (int u = 0; u < GK_GEMV_UNROLL; ++u) {
            if (ch + u * GK_LANES >= c1) break;
            float wf[GK_GEMV_CPW][GK_V];
#pragma unroll
            for (int c = 0; c < GK_GEMV_CPW; ++c) gk_unpack(wv[u][c], wf[c]);
#pragma unroll
            for (int r = 0; r < GK_GEMV_ROWS; ++r) {
                if (r >= p.m) break;
                const gk_u32x4 xv =
                    reinterpret_cast<const gk_u32x4*>(x + r * p.sx_m)[ch + u * GK_LANES];
                float xf[GK_V];
                gk_unpack(xv, xf);
#pragma unroll
                for (int c = 0; c < GK_GEMV_CPW; ++c)
#pragma unroll
                    for (int e = 0; e < GK_V; ++e) acc[c][r] += xf[e] * wf[c][e];
            }
        }
    }
#else
    for (gk_i64 kk = kb + lane; kk < ke; kk += GK_LANES) {
        float wf[GK_GEMV_CPW];
#pragma unroll
        for (int c = 0; c < GK_GEMV_CPW; ++c) wf[c] = (float)wrow[c][kk * p.swk];
#pragma unroll
        for (int r = 0; r < GK_GEMV_ROWS; ++r) {
            if (r >= p.m) break;
            const float xv = (float)x[r * p.sx_m + kk * p.sx_k];
#pragma unroll
            for (int c = 0; c < GK_GEMV_CPW; ++c) acc[c][r] += xv * wf[c];
        }
    }
#endif
#pragma unroll
    for (int c = 0; c < GK_GEMV_CPW; ++c)
#pragma unroll
        for (int r = 0; r < GK_GEMV_ROWS; ++r) acc[c][r] = gk_lanes_sum(acc[c][r]);
#pragma unroll
    for (int c = 0; c < GK_GEMV_CPW; ++c)
#pragma unroll
        for (int r = 0; r < GK_GEMV_ROWS; ++r)
            if (lane == (c * GK_GEMV_ROWS + r) % GK_LANES && r < p.m && n0 + c < p.n)
                gk_gemv_store(p, r, n0 + c, acc[c][r]);
}

#define GK_KN_PHASES (GK_GEMV_THREADS / GK_GEMV_CW)
#define GK_KN_COLS (GK_GEMV_CW * GK_V)

GK_KERNEL void __launch_bounds__(GK_GEMV_THREADS) gk_gemv_kn(const gk_gemv_args p) {
    __shared__ float part[GK_GEMV_THREADS / GK_LANES][GK_GEMV_ROWS][GK_KN_COLS];
    const int tid = (int)threadIdx.x, lane = tid % GK_LANES, warp = tid / GK_LANES;
    const int chunk = tid % GK_GEMV_CW, phase = tid / GK_GEMV_CW;
    const gk_i64 col0 = (gk_i64)blockIdx.x * GK_KN_COLS + chunk * GK_V;
    const gk_i64 kb = (gk_i64)blockIdx.y * p.k_per_split;
    const gk_i64 ke = kb + p.k_per_split < p.k ? kb + p.k_per_split : p.k;
    const T* x = reinterpret_cast<const T*>(p.x);
    const T* w = reinterpret_cast<const T*>(p.w);
    float acc[GK_GEMV_ROWS][GK_V];
#pragma unroll
    for (int r = 0; r < GK_GEMV_ROWS; ++r)
#pragma unroll
        for (int e = 0; e < GK_V; ++e) acc[r][e] = 0.f;
#if GK_VEC
    // n is a multiple of V: a chunk lies wholly inside or wholly past the last column.
    const bool live = col0 < p.n;
    const T* wcol = w + (live ? col0 : 0);
    for (gk_i64 k = kb + phase; k < ke; k += GK_KN_PHASES * GK_GEMV_UNROLL) {
        gk_u32x4 wv[GK_GEMV_UNROLL];
#pragma unroll
        for (int u = 0; u < GK_GEMV_UNROLL; ++u) {
            const gk_i64 kk = k + u * GK_KN_PHASES < ke ? k + u * GK_KN_PHASES : k;
            wv[u] = gk_ldw(reinterpret_cast<const gk_u32x4*>(wcol + kk * p.sw));
        }
#pragma unroll
        for (int u = 0; u < GK_GEMV_UNROLL; ++u) {
            const gk_i64 kk = k + u * GK_KN_PHASES;
            if (kk >= ke) break;
            float wf[GK_V];
            gk_unpack(wv[u], wf);
#pragma unroll
            for (int r = 0; r < GK_GEMV_ROWS; ++r) {
                if (r >= p.m) break;
                const float xv = (float)x[r * p.sx_m + kk * p.sx_k];
#pragma unroll
                for (int e = 0; e < GK_V; ++e) acc[r][e] += xv * wf[e];
            }
        }
    }
#else
    for (gk_i64 k = kb + phase; k < ke; k += GK_KN_PHASES) {
        float wf[GK_V];
#pragma unroll
        for (int e = 0; e < GK_V; ++e)
            wf[e] = col0 + e < p.n ? (float)w[k * p.sw + (col0 + e) * p.swk] : 0.f;
#pragma unroll
        for (int r = 0; r < GK_GEMV_ROWS; ++r) {
            if (r >= p.m) break;
            const float xv = (float)x[r * p.sx_m + k * p.sx_k];
#pragma unroll
            for (int e = 0; e < GK_V; ++e) acc[r][e] += xv * wf[e];
        }
    }
#endif
    // Lanes of a warp that share a chunk hold different phases: add them, then the warps.
#pragma unroll
    for (int r = 0; r < GK_GEMV_ROWS; ++r)
#pragma unroll
        for (int e = 0; e < GK_V; ++e)
            for (int s = GK_GEMV_CW; s < GK_LANES; s *= 2) acc[r][e] += gk_shfl_xor(acc[r][e], s);
    if (lane < GK_GEMV_CW) {
#pragma unroll
        for (int r = 0; r < GK_GEMV_ROWS; ++r)
#pragma unroll
            for (int e = 0; e < GK_V; ++e) part[warp][r][chunk * GK_V + e] = acc[r][e];
    }
    __syncthreads();
    for (int i = tid; i < GK_GEMV_ROWS * GK_KN_COLS; i += GK_GEMV_THREADS) {
        const int r = i / GK_KN_COLS, c = i % GK_KN_COLS;
        const gk_i64 col = (gk_i64)blockIdx.x * GK_KN_COLS + c;
        if (r >= p.m || col >= p.n) continue;
        float v = 0.f;
        for (int wi = 0; wi < GK_GEMV_THREADS / GK_LANES; ++wi) v += part[wi][r][c];
        gk_gemv_store(p, r, col, v);
    }
}

// out = epilogue(sum over s of workspace (splits, m, n)), in split order.
GK_KERNEL void __launch_bounds__(GK_GEMV_THREADS) gk_gemv_reduce(const gk_gemv_args p) {
    const gk_i64 count = p.m * p.n;
    const float* ws = reinterpret_cast<const float*>(p.workspace);
    gk_gemv_args q = p;
    q.splits = 1;
    for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (gk_i64)gridDim.x * blockDim.x) {
        float v = 0.f;
        for (int s = 0; s < p.splits; ++s) v += ws[s * count + i];
        gk_gemv_store(q, i / p.n, i % p.n, v);
    }
}
