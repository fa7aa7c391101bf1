// Fixed-width integer types for kernels and the C++ layer alike (run-time compilers have no
// <stdint.h>).
#pragma once

typedef signed char gk_i8;
typedef short gk_i16;
typedef int gk_i32;
typedef long long gk_i64;
typedef unsigned char gk_u8;
typedef unsigned short gk_u16;
typedef unsigned int gk_u32;
typedef unsigned long long gk_u64;

// 16 bytes moved as they are (the raw element of gather.cu and transpose.cu for 16-byte dtypes).
struct alignas(16) gk_b128 {
    gk_u64 lo, hi;
};

// Complex numbers as NumPy lays them out (the real part first). Only run-time compilers see them:
// the host never computes on complex data. Arithmetic and math live in compat.cuh; conversions
// to real types go through gk_cast (NumPy's complex -> real cast keeps the real part).
#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
struct gk_c128;
struct alignas(8) gk_c64 {
    float re, im;
    gk_c64() = default;
    __device__ constexpr gk_c64(float r, float i = 0.0f) : re(r), im(i) {}
    __device__ explicit gk_c64(const gk_c128& z);
    __device__ explicit operator bool() const { return re != 0.0f || im != 0.0f; }
};
struct alignas(16) gk_c128 {
    double re, im;
    gk_c128() = default;
    __device__ constexpr gk_c128(double r, double i = 0.0) : re(r), im(i) {}
    __device__ explicit gk_c128(const gk_c64& z) : re(z.re), im(z.im) {}
    __device__ explicit operator bool() const { return re != 0.0 || im != 0.0; }
};
__device__ inline gk_c64::gk_c64(const gk_c128& z) : re((float)z.re), im((float)z.im) {}
#endif
