// Portability layer: the same kernel sources compile with NVRTC (CUDA) and hiprtc (HIP).
// Run-time compilers have no standard headers, so fixed-width types are defined here.
#pragma once

#if defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define GK_HIP 1
#endif

typedef signed char gk_i8;
typedef short gk_i16;
typedef int gk_i32;
typedef long long gk_i64;
typedef unsigned char gk_u8;
typedef unsigned int gk_u32;
typedef unsigned long long gk_u64;

#define GK_KERNEL extern "C" __global__
