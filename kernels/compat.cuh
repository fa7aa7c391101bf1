// Portability layer: the same kernel sources compile with NVRTC (CUDA) and hiprtc (HIP).
// Run-time compilers ship no standard headers, so the few types kernels need are defined here.
#pragma once

#if defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define GK_HIP 1
#endif

#include "types.cuh"

#define GK_KERNEL extern "C" __global__

// Bits of a float32.
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

// IEEE half precision, stored as bits; arithmetic happens in float (as NumPy does for float16).
__device__ inline gk_u16 gk_f32_to_f16_bits(float f) {
    const gk_u32 u = gk_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: sign and payload's top bits kept, as NumPy
        const gk_u16 payload = (gk_u16)((u >> 13) & 0x3ffu);
        return (gk_u16)(((u >> 16) & 0x8000u) | 0x7c00u | (payload ? payload : 1u));
    }
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
    if ((h & 0x7fffu) > 0x7c00u) {  // NaN: the hardware's conversion would drop sign and payload
        return gk_f32_from_bits(((gk_u32)(h & 0x8000u) << 16) | 0x7f800000u |
                                ((gk_u32)(h & 0x3ffu) << 13));
    }
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
// sm_80 and later round in one instruction (cvt.rn.bf16.f32: the same bits for every non-NaN
// value); the integer form is the portable path.
__device__ inline gk_u16 gk_f32_to_bf16_bits(float f) {
    const gk_u32 u = gk_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (gk_u16)((u >> 16) | 0x0040u);
#if !defined(GK_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    gk_u16 h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    return (gk_u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}

__device__ inline float gk_bf16_bits_to_f32(gk_u16 h) { return gk_f32_from_bits((gk_u32)h << 16); }

struct gk_bf16 {
    gk_u16 bits;
    gk_bf16() = default;
    __device__ gk_bf16(float f) : bits(gk_f32_to_bf16_bits(f)) {}
    __device__ operator float() const { return gk_bf16_bits_to_f32(bits); }
};

__device__ inline gk_u64 gk_f64_bits(double d) {
#ifdef GK_HIP
    return __builtin_bit_cast(gk_u64, d);
#else
    return (gk_u64)__double_as_longlong(d);
#endif
}

__device__ inline double gk_f64_from_bits(gk_u64 u) {
#ifdef GK_HIP
    return __builtin_bit_cast(double, u);
#else
    return __longlong_as_double((long long)u);
#endif
}

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
GK_MATH1(gkm_log1p, log1pf, log1p)
GK_MATH1(gkm_expm1, expm1f, expm1)
GK_MATH1(gkm_log2, log2f, log2)
GK_MATH1(gkm_log10, log10f, log10)
GK_MATH1(gkm_exp2, exp2f, exp2)
GK_MATH1(gkm_sinh, sinhf, sinh)
GK_MATH1(gkm_cosh, coshf, cosh)
GK_MATH1(gkm_tan, tanf, tan)
GK_MATH1(gkm_asin, asinf, asin)
GK_MATH1(gkm_acos, acosf, acos)
GK_MATH1(gkm_atan, atanf, atan)
GK_MATH1(gkm_asinh, asinhf, asinh)
GK_MATH1(gkm_acosh, acoshf, acosh)
GK_MATH1(gkm_atanh, atanhf, atanh)
GK_MATH1(gkm_cbrt, cbrtf, cbrt)
GK_MATH1(gkm_trunc, truncf, trunc)
GK_MATH1(gkm_rint, rintf, rint)  // round half to even, as NumPy's rint
#undef GK_MATH1
#define GK_MATH2(NAME, F32, F64)                                         \
    __device__ inline float NAME(float a, float b) { return F32(a, b); } \
    __device__ inline double NAME(double a, double b) { return F64(a, b); }
GK_MATH2(gkm_fmod, fmodf, fmod)
GK_MATH2(gkm_pow, powf, pow)
GK_MATH2(gkm_copysign, copysignf, copysign)
GK_MATH2(gkm_atan2, atan2f, atan2)
GK_MATH2(gkm_hypot, hypotf, hypot)
#undef GK_MATH2
__device__ inline float gkm_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ inline double gkm_fma(double a, double b, double c) { return fma(a, b, c); }
__device__ inline float gkm_ldexp(float a, int e) { return ldexpf(a, e); }
__device__ inline double gkm_ldexp(double a, int e) { return ldexp(a, e); }
__device__ inline float gk_inf(float) { return GK_INF_F; }
__device__ inline double gk_inf(double) { return GK_INF_D; }

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

// NaN and infinity tests; integers are never NaN or infinite (complex.cuh: either part).
template <typename T>
__device__ inline bool gk_isnan(T a) {
    return a != a;
}
template <typename T>
__device__ inline bool gk_isinf(T a) {
    if constexpr (gk_is_float<T>::value) {
        return gkm_fabs(a) == gk_inf(a);
    } else {
        return false;
    }
}
template <typename T>
__device__ inline bool gk_isfinite(T a) {
    if constexpr (gk_is_float<T>::value) {
        return gkm_fabs(a) < gk_inf(a);
    } else {
        return true;
    }
}
__device__ inline bool gk_signbit(float a) { return (gk_f32_bits(a) >> 31) != 0u; }
__device__ inline bool gk_signbit(double a) { return (gk_f64_bits(a) >> 63) != 0u; }

template <typename T>
__device__ inline bool gk_negative(T a) {
    if constexpr ((T)-1 < (T)0) {
        return a < (T)0;
    } else {
        return false;
    }
}

template <typename T>
__device__ inline T gk_trunc(T a) {
    if constexpr (gk_is_float<T>::value) return gkm_trunc(a);
    return a;
}

template <typename T>
__device__ inline T gk_sign(T a) {
    return (a != a) ? a : (T)((a > (T)0) - (a < (T)0));
}

// NumPy computes an integer's reciprocal as 1.0 / a in double and converts it back: 1 / 0 is
// what x86 makes of infinity, the lowest value for 32- and 64-bit signed integers, else 0.
template <typename T>
__device__ inline T gk_reciprocal(T a) {
    if constexpr (gk_is_float<T>::value) {
        return (T)1 / a;
    } else {
        if (a == (T)0) {
            const bool wide_signed = (T)-1 < (T)0 && sizeof(T) >= 4;
            return wide_signed ? (T)((gk_u64)1 << (8 * sizeof(T) - 1)) : (T)0;
        }
        return (T)(1 / a);
    }
}

// C's fmod (the result takes the dividend's sign); integers by zero give 0, as in NumPy.
template <typename T>
__device__ inline T gk_fmod(T a, T b) {
    if constexpr (gk_is_float<T>::value) {
        return gkm_fmod(a, b);
    } else {
        if (b == (T)0 || (gk_negative(b) && b == (T)-1)) return (T)0;
        return (T)(a % b);
    }
}

// NumPy's fmax / fmin: a NaN loses to a number.
template <typename T>
__device__ inline T gk_fmax(T a, T b) {
    return (gk_isnan(b) || a >= b) ? a : b;
}
template <typename T>
__device__ inline T gk_fmin(T a, T b) {
    return (gk_isnan(b) || a <= b) ? a : b;
}

template <typename T>
__device__ inline T gk_heaviside(T x, T h0) {
    if (x != x) return x;
    if (x == (T)0) return h0;
    return x < (T)0 ? (T)0 : (T)1;
}

// NumPy's logaddexp and logaddexp2: equal arguments (infinities of one sign too) need no
// difference; a NaN difference is the answer.
template <typename T>
__device__ inline T gk_logaddexp(T x, T y) {
    if (x == y) return x + (T)0.6931471805599453;
    const T d = x - y;
    if (d > (T)0) return x + gkm_log1p(gkm_exp(-d));
    if (d <= (T)0) return y + gkm_log1p(gkm_exp(d));
    return d;
}
template <typename T>
__device__ inline T gk_logaddexp2(T x, T y) {
    if (x == y) return x + (T)1;
    const T d = x - y;
    if (d > (T)0) return x + (T)1.4426950408889634 * gkm_log1p(gkm_exp2(-d));
    if (d <= (T)0) return y + (T)1.4426950408889634 * gkm_log1p(gkm_exp2(d));
    return d;
}

// x * 2**e with the integer exponent read in the loop type, clamped to int as NumPy clamps it.
template <typename T>
__device__ inline T gk_ldexp(T x, T e) {
    const int n =
        e >= (T)2147483647.0 ? 2147483647 : (e <= (T)-2147483648.0 ? -2147483647 - 1 : (int)e);
    return gkm_ldexp(x, n);
}

// nextafter steps to the neighbouring value of the loop's stored format S (float16 and bfloat16
// are computed in float, exactly). Equal arguments give y, as C's nextafter (NumPy's float16
// gives x, which differs only for zeros of opposite signs).
template <typename S>
struct gk_step_format;
template <>
struct gk_step_format<float> {
    typedef gk_u32 bits_t;
    static const bool keep_x = false;
    __device__ static bits_t bits(float x) { return gk_f32_bits(x); }
    __device__ static float value(bits_t u) { return gk_f32_from_bits(u); }
};
template <>
struct gk_step_format<double> {
    typedef gk_u64 bits_t;
    static const bool keep_x = false;
    __device__ static bits_t bits(double x) { return gk_f64_bits(x); }
    __device__ static double value(bits_t u) { return gk_f64_from_bits(u); }
};
template <>
struct gk_step_format<gk_f16> {
    typedef gk_u16 bits_t;
    static const bool keep_x = true;
    __device__ static bits_t bits(float x) { return gk_f32_to_f16_bits(x); }
    __device__ static float value(bits_t u) { return gk_f16_bits_to_f32(u); }
};
template <>
struct gk_step_format<gk_bf16> {
    typedef gk_u16 bits_t;
    static const bool keep_x = false;
    __device__ static bits_t bits(float x) { return gk_f32_to_bf16_bits(x); }
    __device__ static float value(bits_t u) { return gk_bf16_bits_to_f32(u); }
};

template <typename S, typename T>
__device__ inline T gk_nextafter(T x, T y) {
    typedef gk_step_format<S> F;
    typedef typename F::bits_t U;
    x = (T)F::value(F::bits(x));  // a scalar operand takes the stored format first
    y = (T)F::value(F::bits(y));
    if (x != x || y != y) return x + y;
    if (x == y) return F::keep_x ? x : y;
    const U sign = (U)((U)1 << (8 * sizeof(U) - 1));
    U u = F::bits(x);
    if (x == (T)0) {
        u = (U)((F::bits(y) & sign) | 1u);  // the smallest subnormal, toward y
    } else {
        u = ((y > x) == (x > (T)0)) ? (U)(u + 1u) : (U)(u - 1u);
    }
    return (T)F::value(u);
}

// gcd and lcm of magnitudes (an integer's magnitude as an unsigned 64-bit value), wrapping in
// T as NumPy's do: gcd(-128, 0) is -128 in int8.
template <typename T>
__device__ inline gk_u64 gk_magnitude(T a) {
    return gk_negative(a) ? (gk_u64)0 - (gk_u64)(gk_i64)a : (gk_u64)a;
}
__device__ inline gk_u64 gk_gcd_u64(gk_u64 a, gk_u64 b) {
    while (b != 0) {
        const gk_u64 r = a % b;
        a = b;
        b = r;
    }
    return a;
}
template <typename T>
__device__ inline T gk_gcd(T a, T b) {
    return (T)gk_gcd_u64(gk_magnitude(a), gk_magnitude(b));
}
template <typename T>
__device__ inline T gk_lcm(T a, T b) {
    const gk_u64 x = gk_magnitude(a), y = gk_magnitude(b), g = gk_gcd_u64(x, y);
    return g == 0 ? (T)0 : (T)(x / g * y);
}

// NumPy's shifts: a count of the width or more (a negative one counts as huge) shifts every bit
// out: 0, or -1 for a negative value shifted right.
template <typename T>
__device__ inline T gk_left_shift(T a, T b) {
    if ((gk_u64)b >= 8 * sizeof(T)) return (T)0;
    return (T)((gk_u64)a << (int)b);
}
template <typename T>
__device__ inline T gk_right_shift(T a, T b) {
    if ((gk_u64)b >= 8 * sizeof(T)) return gk_negative(a) ? (T)-1 : (T)0;
    return (T)(a >> (int)b);
}

// Real arguments of the complex functions (complex.cuh has the complex forms).
template <typename T>
__device__ inline T gk_conj(T a) {
    return a;
}
template <typename T>
__device__ inline T gk_angle(T a) {
    return gkm_atan2((T)0, a);
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

template <typename A, typename B>
struct gk_is_same {
    static const bool value = false;
};
template <typename A>
struct gk_is_same<A, A> {
    static const bool value = true;
};

// Conversion between element types as NumPy casts them (complex.cuh adds complex sources).
template <typename To, typename From>
__device__ inline To gk_cast(From x) {
    return (To)x;
}

#include "complex.cuh"
