// Portability layer: the same kernel sources compile with NVRTC (CUDA) and hiprtc (HIP).
// Run-time compilers ship no standard headers, so the few types kernels need are defined here.
#pragma once

#if defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define GK_HIP 1
#endif

#include "types.cuh"

#define GK_KERNEL extern "C" __global__

// IEEE half precision, stored as bits; arithmetic happens in float (as NumPy does for float16).
__device__ inline gk_u16 gk_f32_to_f16_bits(float f) {
#ifdef GK_HIP
    _Float16 h = (_Float16)f;
    return __builtin_bit_cast(gk_u16, h);
#else
    gk_u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#endif
}

__device__ inline float gk_f16_bits_to_f32(gk_u16 h) {
#ifdef GK_HIP
    return (float)__builtin_bit_cast(_Float16, h);
#else
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#endif
}

struct gk_f16 {
    gk_u16 bits;
    gk_f16() = default;
    __device__ gk_f16(float f) : bits(gk_f32_to_f16_bits(f)) {}
    __device__ operator float() const { return gk_f16_bits_to_f32(bits); }
};

// bfloat16 (the top half of a float32), stored as bits: a plain 16-bit struct so that tensor-core
// code can reinterpret arrays of it; arithmetic happens in float. Conversion from float rounds to
// nearest even and keeps NaN a (quiet) NaN, as ml_dtypes does.
__device__ inline gk_u32 gk_f32_bits(float f) {
#ifdef GK_HIP
    return __builtin_bit_cast(gk_u32, f);
#else
    return __float_as_uint(f);
#endif
}

__device__ inline float gk_f32_from_bits(gk_u32 u) {
#ifdef GK_HIP
    return __builtin_bit_cast(float, u);
#else
    return __uint_as_float(u);
#endif
}

__device__ inline gk_u16 gk_f32_to_bf16_bits(float f) {
    const gk_u32 u = gk_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (gk_u16)((u >> 16) | 0x0040u);
    return (gk_u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

__device__ inline float gk_bf16_bits_to_f32(gk_u16 h) { return gk_f32_from_bits((gk_u32)h << 16); }

struct gk_bf16 {
    gk_u16 bits;
    gk_bf16() = default;
    __device__ gk_bf16(float f) : bits(gk_f32_to_bf16_bits(f)) {}
    __device__ operator float() const { return gk_bf16_bits_to_f32(bits); }
};

#ifdef GK_HIP
#define GK_INF_F __builtin_inff()
#define GK_INF_D __builtin_inf()
#else
#define GK_INF_F __int_as_float(0x7f800000)
#define GK_INF_D __longlong_as_double(0x7ff0000000000000LL)
#endif

// Type traits run-time compilers lack (no <type_traits>).
template <typename T>
struct gk_is_float {
    static const bool value = false;
};
template <>
struct gk_is_float<float> {
    static const bool value = true;
};
template <>
struct gk_is_float<double> {
    static const bool value = true;
};

// Math in float or double, chosen by overload (the CUDA/HIP math libraries are built in).
#define GK_MATH1(NAME, F32, F64)                             \
    __device__ inline float NAME(float x) { return F32(x); } \
    __device__ inline double NAME(double x) { return F64(x); }
GK_MATH1(gkm_exp, expf, exp)
GK_MATH1(gkm_log, logf, log)
GK_MATH1(gkm_sqrt, sqrtf, sqrt)
GK_MATH1(gkm_rsqrt, rsqrtf, rsqrt)
GK_MATH1(gkm_sin, sinf, sin)
GK_MATH1(gkm_cos, cosf, cos)
GK_MATH1(gkm_tanh, tanhf, tanh)
GK_MATH1(gkm_erf, erff, erf)
GK_MATH1(gkm_floor, floorf, floor)
GK_MATH1(gkm_ceil, ceilf, ceil)
GK_MATH1(gkm_fabs, fabsf, fabs)
#undef GK_MATH1
__device__ inline float gkm_fmod(float a, float b) { return fmodf(a, b); }
__device__ inline double gkm_fmod(double a, double b) { return fmod(a, b); }
__device__ inline float gkm_pow(float a, float b) { return powf(a, b); }
__device__ inline double gkm_pow(double a, double b) { return pow(a, b); }
__device__ inline float gkm_copysign(float a, float b) { return copysignf(a, b); }
__device__ inline double gkm_copysign(double a, double b) { return copysign(a, b); }

// Elementwise helpers for ops whose C expression is more than one line (the op table in
// gpukit/runtime/ops.py names them), with NumPy's semantics in the compute type T.
template <typename T>
__device__ inline T gk_invert(T a) {
    return (T)(~a);
}
__device__ inline bool gk_invert(bool a) { return !a; }  // NumPy: ~ on bool is logical not

template <typename T>
__device__ inline T gk_absolute(T a) {
    if constexpr (gk_is_float<T>::value) {
        return gkm_fabs(a);
    } else {
        return a < (T)0 ? (T)(-a) : a;
    }
}

template <typename T>
__device__ inline T gk_floor(T a) {
    if constexpr (gk_is_float<T>::value) return gkm_floor(a);
    return a;
}

template <typename T>
__device__ inline T gk_ceil(T a) {
    if constexpr (gk_is_float<T>::value) return gkm_ceil(a);
    return a;
}

// Python's floor division and modulo (the result takes the divisor's sign), as NumPy computes
// them; integer division by zero gives 0, as NumPy does (with a warning there).
template <typename T>
__device__ inline T gk_floor_divide(T a, T b) {
    if constexpr (gk_is_float<T>::value) {
        if (b == (T)0) return a / b;
        T mod = gkm_fmod(a, b);
        T div = (a - mod) / b;
        if (mod != (T)0 && ((b < (T)0) != (mod < (T)0))) div -= (T)1;
        if (div == (T)0) return gkm_copysign((T)0, a / b);
        T floordiv = gkm_floor(div);
        if (div - floordiv > (T)0.5) floordiv += (T)1;
        return floordiv;
    } else {
        if (b == (T)0) return (T)0;
        T q = (T)(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) q = (T)(q - 1);
        return q;
    }
}

template <typename T>
__device__ inline T gk_remainder(T a, T b) {
    if constexpr (gk_is_float<T>::value) {
        if (b == (T)0) return gkm_fmod(a, b);
        T mod = gkm_fmod(a, b);
        if (mod != (T)0) {
            if ((b < (T)0) != (mod < (T)0)) mod += b;
        } else {
            mod = gkm_copysign((T)0, b);
        }
        return mod;
    } else {
        if (b == (T)0) return (T)0;
        T r = (T)(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
        return r;
    }
}

// Integer powers by squaring. A negative integer exponent gives 0 here; gpukit checks exponents
// and raises ValueError before launching, as NumPy does.
template <typename T>
__device__ inline T gk_power(T a, T b) {
    if constexpr (gk_is_float<T>::value) {
        return gkm_pow(a, b);
    } else {
        if (b < (T)0) return (T)0;
        T result = (T)1;
        while (b) {
            if (b & (T)1) result = (T)(result * a);
            a = (T)(a * a);
            b = (T)(b >> 1);
        }
        return result;
    }
}

// NumPy's minimum(maximum(a, lo), hi): hi wins when hi < lo, and a NaN anywhere wins.
template <typename T>
__device__ inline T gk_clip(T a, T lo, T hi) {
    if (a != a) return a;
    const T r = (a < lo || lo != lo) ? lo : a;
    return (r > hi || hi != hi) ? hi : r;
}

// Limits for reduction identities.
template <typename T>
struct gk_limits;
#define GK_LIMITS(T, LO, HI)                              \
    template <>                                           \
    struct gk_limits<T> {                                 \
        __device__ static T lowest() { return (T)(LO); }  \
        __device__ static T highest() { return (T)(HI); } \
    };
GK_LIMITS(bool, false, true)
GK_LIMITS(gk_i8, -128, 127)
GK_LIMITS(gk_i16, -32768, 32767)
GK_LIMITS(gk_i32, -2147483647 - 1, 2147483647)
GK_LIMITS(gk_i64, -9223372036854775807LL - 1, 9223372036854775807LL)
GK_LIMITS(gk_u8, 0, 255)
GK_LIMITS(gk_u16, 0, 65535)
GK_LIMITS(gk_u32, 0, 4294967295u)
GK_LIMITS(gk_u64, 0, 18446744073709551615ull)
GK_LIMITS(float, -GK_INF_F, GK_INF_F)
GK_LIMITS(double, -GK_INF_D, GK_INF_D)
#undef GK_LIMITS
