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
