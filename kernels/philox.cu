// Random numbers from Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): key = the seed's two 32-bit halves, counter = (group lo, group hi, offset lo,
// offset hi). A thread per group turns its four 32-bit words into per-group elements. The CPU
// backend (gpukit/_philox.py) computes the same words and the same conversions in NumPy.
// Defines: GK_OUT_T (the stored type), GK_BITS (random bits of gk_rand_f's uniforms: 24 for
// float32, 11 for float16, 8 for bfloat16).
#include "args.cuh"
#include "compat.cuh"

#define GK_PI_F 3.14159265358979323846f
#define GK_PI_D 3.14159265358979323846

struct gk_words {
    gk_u32 w[4];
};

__device__ inline gk_words gk_philox(const gk_philox_args& a, gk_u64 group) {
    gk_u32 c0 = (gk_u32)group, c1 = (gk_u32)(group >> 32);
    gk_u32 c2 = (gk_u32)a.offset, c3 = (gk_u32)(a.offset >> 32);
    gk_u32 k0 = a.key0, k1 = a.key1;
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        const gk_u64 p0 = (gk_u64)0xD2511F53u * c0, p1 = (gk_u64)0xCD9E8D57u * c2;
        const gk_u32 n0 = (gk_u32)(p1 >> 32) ^ c1 ^ k0, n2 = (gk_u32)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0;
        c1 = (gk_u32)p1;
        c2 = n2;
        c3 = (gk_u32)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    gk_words r = {{c0, c1, c2, c3}};
    return r;
}

// Uniforms: [0, 1) with `bits` (<= 24, float path) or 53 bits (double path); open0: (0, 1].
__device__ inline float gk_uniform_f(gk_u32 w, int bits, bool open0) {
    return (float)((w >> (32 - bits)) + (open0 ? 1u : 0u)) * (1.0f / (float)(1u << bits));
}
__device__ inline double gk_uniform_d(gk_u32 hi, gk_u32 lo, bool open0) {
    const gk_u64 x = ((((gk_u64)hi) << 32) | lo) >> 11;
    return (double)(x + (open0 ? 1u : 0u)) * (1.0 / 9007199254740992.0);
}

template <typename T>
__device__ inline void gk_store(const gk_philox_args& a, gk_i64 e, T v) {
    if (e >= a.n) return;
    if (a.affine) v = (T)(a.lo + a.scale * v);
    reinterpret_cast<GK_OUT_T*>(a.out)[e] = (GK_OUT_T)v;
}

#define GK_GROUPS(PER)                                                                    \
    for (gk_i64 g = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; g * (PER) < a.n;       \
         g += (gk_i64)gridDim.x * blockDim.x)

GK_KERNEL void gk_rand_f(const gk_philox_args a) {
    GK_GROUPS(4) {
        const gk_words r = gk_philox(a, (gk_u64)g);
#pragma unroll
        for (int j = 0; j < 4; ++j) gk_store<float>(a, 4 * g + j, gk_uniform_f(r.w[j], GK_BITS, false));
    }
}

GK_KERNEL void gk_rand_d(const gk_philox_args a) {
    GK_GROUPS(2) {
        const gk_words r = gk_philox(a, (gk_u64)g);
        gk_store<double>(a, 2 * g, gk_uniform_d(r.w[0], r.w[1], false));
        gk_store<double>(a, 2 * g + 1, gk_uniform_d(r.w[2], r.w[3], false));
    }
}

// Box-Muller: a pair of uniforms (the first in (0, 1], so the log is finite) gives two normals;
// the float path draws 24-bit uniforms whatever the stored type.
GK_KERNEL void gk_randn_f(const gk_philox_args a) {
    GK_GROUPS(4) {
        const gk_words r = gk_philox(a, (gk_u64)g);
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const float radius = sqrtf(-2.0f * logf(gk_uniform_f(r.w[2 * j], 24, true)));
            const float theta = 2.0f * GK_PI_F * gk_uniform_f(r.w[2 * j + 1], 24, false);
            gk_store<float>(a, 4 * g + 2 * j, radius * cosf(theta));
            gk_store<float>(a, 4 * g + 2 * j + 1, radius * sinf(theta));
        }
    }
}

GK_KERNEL void gk_randn_d(const gk_philox_args a) {
    GK_GROUPS(2) {
        const gk_words r = gk_philox(a, (gk_u64)g);
        const double radius = sqrt(-2.0 * log(gk_uniform_d(r.w[0], r.w[1], true)));
        const double theta = 2.0 * GK_PI_D * gk_uniform_d(r.w[2], r.w[3], false);
        gk_store<double>(a, 2 * g, radius * cos(theta));
        gk_store<double>(a, 2 * g + 1, radius * sin(theta));
    }
}

// Integers in [low, low + range) by multiply-shift (Lemire): the high half of draw * range. For
// range <= 2^32 a 32-bit draw per element (bias below range / 2^32), otherwise a 64-bit draw.
GK_KERNEL void gk_randint_32(const gk_philox_args a) {
    GK_GROUPS(4) {
        const gk_words r = gk_philox(a, (gk_u64)g);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const gk_i64 e = 4 * g + j;
            if (e < a.n) {
                const gk_u64 v = a.low + (((gk_u64)r.w[j] * a.range) >> 32);
                reinterpret_cast<GK_OUT_T*>(a.out)[e] = (GK_OUT_T)(gk_i64)v;
            }
        }
    }
}

GK_KERNEL void gk_randint_64(const gk_philox_args a) {
    GK_GROUPS(2) {
        const gk_words r = gk_philox(a, (gk_u64)g);
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const gk_i64 e = 2 * g + j;
            if (e < a.n) {
                const gk_u64 x = (((gk_u64)r.w[2 * j]) << 32) | r.w[2 * j + 1];
                const gk_u64 v = a.low + (a.range ? __umul64hi(x, a.range) : x);
                reinterpret_cast<GK_OUT_T*>(a.out)[e] = (GK_OUT_T)(gk_i64)v;
            }
        }
    }
}
