// A 16-byte vector widened to its accumulation type and rounded back, whole. For 16-bit floats
// this takes a 32-bit word (two elements) at a time: bfloat16 widens with one shift or mask an
// element, and rounding packs two elements in one cvt, with the NaN check (whose result must
// keep the payload, as the element conversions in compat.cuh do) done once per vector rather
// than per element. The same bits as converting element by element.
#pragma once
#include "warp.cuh"

template <typename T, typename A>
__device__ inline void gk_widen(const gk_vec16<T>& v, A (&x)[gk_vec16<T>::N]) {
#pragma unroll
    for (int k = 0; k < gk_vec16<T>::N; ++k) x[k] = (A)v.v[k];
}

__device__ inline void gk_widen(const gk_vec16<gk_bf16>& v, float (&x)[8]) {
    const gk_u32* w = reinterpret_cast<const gk_u32*>(v.v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        x[2 * i] = gk_f32_from_bits(w[i] << 16);
        x[2 * i + 1] = gk_f32_from_bits(w[i] & 0xffff0000u);
    }
}

template <typename T, typename A>
__device__ inline gk_vec16<T> gk_narrow(const A (&x)[gk_vec16<T>::N]) {
    gk_vec16<T> v;
#pragma unroll
    for (int k = 0; k < gk_vec16<T>::N; ++k) v.v[k] = (T)x[k];
    return v;
}

#if !defined(GK_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// Pairs rounded by cvt.rn.{bf16,f16}x2.f32 (the same rounding as the one-element form) when no
// element is NaN; else element by element.
#define GK_NARROW_PAIRS(T, CVT)                                                      \
    template <>                                                                      \
    __device__ inline gk_vec16<T> gk_narrow<T, float>(const float (&x)[8]) {         \
        bool nan = false;                                                            \
        _Pragma("unroll") for (int k = 0; k < 8; ++k) nan |= x[k] != x[k];           \
        gk_vec16<T> v;                                                               \
        if (nan) {                                                                   \
            _Pragma("unroll") for (int k = 0; k < 8; ++k) v.v[k] = (T)x[k];          \
            return v;                                                                \
        }                                                                            \
        gk_u32* w = reinterpret_cast<gk_u32*>(v.v);                                  \
        _Pragma("unroll") for (int i = 0; i < 4; ++i) {                              \
            asm(CVT " %0, %1, %2;" : "=r"(w[i]) : "f"(x[2 * i + 1]), "f"(x[2 * i])); \
        }                                                                            \
        return v;                                                                    \
    }
GK_NARROW_PAIRS(gk_bf16, "cvt.rn.bf16x2.f32")
GK_NARROW_PAIRS(gk_f16, "cvt.rn.f16x2.f32")
#undef GK_NARROW_PAIRS
#endif
