// The fused epilogue of the matrix-product kernels: out = act(acc + bias[n]) + residual[m, n],
// computed in float before the one rounding to the output type. GK_EPI_ACT names one of the
// GK_ACT_* codes below (the host passes the name, e.g. -DGK_EPI_ACT=GK_ACT_GELU); the
// activations are torch's (relu keeps NaN), as gpukit.nn computes them.
#pragma once
#include "compat.cuh"

// The output (and bias / residual) type: GK_EPI_OUT is GK_OUT_F16, GK_OUT_BF16 or GK_OUT_F32.
#define GK_OUT_F16 1
#define GK_OUT_BF16 2
#define GK_OUT_F32 3

#define GK_ACT_NONE 0
#define GK_ACT_RELU 1
#define GK_ACT_GELU 2
#define GK_ACT_GELU_TANH 3
#define GK_ACT_SILU 4

#ifndef GK_EPI_ACT
#define GK_EPI_ACT GK_ACT_NONE
#endif

__device__ inline float gk_activate(float x) {
#if GK_EPI_ACT == GK_ACT_RELU
    return (x > 0.f || x != x) ? x : 0.f;
#elif GK_EPI_ACT == GK_ACT_GELU
    return 0.5f * x * (1.f + gkm_erf(x * 0.7071067811865476f));
#elif GK_EPI_ACT == GK_ACT_GELU_TANH
    return 0.5f * x * (1.f + gkm_tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
#elif GK_EPI_ACT == GK_ACT_SILU
    // x * sigmoid(x), sigmoid from t = exp(-|x|) in [0, 1]: the division's operands and quotient
    // stay in range (x / (1 + exp(-x)) takes IEEE division's slow path wherever exp(-x) is near
    // overflow, x below about -87, and with it whole warps), and t * s underflows as it should.
    const float t = gkm_exp(-gkm_fabs(x));
    const float s = 1.f / (1.f + t);
    return x * (x >= 0.f ? s : t * s);
#else
    return x;
#endif
}

// 16-bit storage <-> float: bfloat16 when the output is, else float16 (round to nearest even).
__device__ inline float gk_h2f(gk_u16 h) {
#if GK_EPI_OUT == GK_OUT_BF16
    return gk_bf16_bits_to_f32(h);
#else
    return gk_f16_bits_to_f32(h);
#endif
}

__device__ inline gk_u16 gk_f2h(float f) {
#if GK_EPI_OUT == GK_OUT_BF16
    return gk_f32_to_bf16_bits(f);
#else
    return gk_f32_to_f16_bits(f);
#endif
}

// Two values rounded and packed, `lo` at the lower address.
__device__ inline unsigned gk_f2h2(float lo, float hi) {
#if defined(GK_HIP)
    return (unsigned)gk_f2h(lo) | ((unsigned)gk_f2h(hi) << 16);
#else
    unsigned r;
#if GK_EPI_OUT == GK_OUT_BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
#endif
}

struct alignas(8) gk_float2 {
    float x, y;
};

#if GK_EPI_OUT == GK_OUT_F32
typedef float gk_out_t;
__device__ inline float gk_load_out(const float* p) { return *p; }
// dst[0] = v0 and, when `both`, dst[1] = v1; `pair`: dst is 8-byte aligned (one 8-byte store).
__device__ inline void gk_store_out2(float* dst, float v0, float v1, bool both, int pair) {
    if (both && pair) {
        gk_float2 v;
        v.x = v0;
        v.y = v1;
        *reinterpret_cast<gk_float2*>(dst) = v;
    } else {
        dst[0] = v0;
        if (both) dst[1] = v1;
    }
}
#else
typedef gk_u16 gk_out_t;
__device__ inline float gk_load_out(const gk_u16* p) { return gk_h2f(*p); }
__device__ inline void gk_store_out2(gk_u16* dst, float v0, float v1, bool both, int pair) {
    if (both && pair) {
        *reinterpret_cast<unsigned*>(dst) = gk_f2h2(v0, v1);
    } else {
        dst[0] = gk_f2h(v0);
        if (both) dst[1] = gk_f2h(v1);
    }
}
#endif

// Split-K's second pass: out = epilogue(sum over s of the float partials in p.workspace (splits,
// batch, m, n)), added in split order (the same bits every run), over a grid-stride loop. `Args`:
// a product's argument block (gk_gemm_sm90_args, gk_gemm_args).
template <typename Args>
__device__ inline void gk_splitk_reduce(const Args& p) {
    const gk_i64 per_item = p.m * p.n, count = per_item * p.batch;
    const float* ws = reinterpret_cast<const float*>(p.workspace);
    for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (gk_i64)gridDim.x * blockDim.x) {
        float v = 0.f;
        for (int s = 0; s < p.splits; ++s) v += ws[s * count + i];
        const gk_i64 z = i / per_item, rest = i - z * per_item;
        const gk_i64 row = rest / p.n, col = rest - row * p.n;
#if GK_EPI_BIAS
        v += gk_load_out(reinterpret_cast<const gk_out_t*>(p.bias) + col * p.s_bias);
#endif
        v = gk_activate(v);
#if GK_EPI_RESIDUAL
        v += gk_load_out(reinterpret_cast<const gk_out_t*>(p.residual) + z * p.sr_z + row * p.sr_m +
                         col);
#endif
        gk_out_t* dst = reinterpret_cast<gk_out_t*>(p.out) + z * p.so_z + row * p.so_m + col;
        gk_store_out2(dst, v, 0.f, false, 0);
    }
}
