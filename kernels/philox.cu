// Random numbers from Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): key = the seed's two 32-bit halves, counter = (group lo, group hi, offset lo,
// offset hi). A thread per group turns its four 32-bit words into per-group elements. The CPU
// backend (gpukit/_philox.py) computes the same words and the same conversions in NumPy.
// Defines: GK_OUT_T (the stored type), GK_BITS (random bits of gk_rand_f's uniforms: 24 for
// float32, 11 for float16, 8 for bfloat16).
#include "args.cuh"
#include "compat.cuh"
#include "philox.cuh"

// Arithmetic that the CPU backend repeats bit for bit: every operation rounded on its own (no
// contraction into fused multiply-adds), so results match NumPy's float64 operations exactly.
#ifdef GK_HIP
#pragma clang fp contract(off)
#define GK_DMUL(x, y) ((x) * (y))
#define GK_DADD(x, y) ((x) + (y))
#define GK_DSUB(x, y) ((x) - (y))
#define GK_DDIV(x, y) ((x) / (y))
#else
#define GK_DMUL(x, y) __dmul_rn((x), (y))
#define GK_DADD(x, y) __dadd_rn((x), (y))
#define GK_DSUB(x, y) __dsub_rn((x), (y))
#define GK_DDIV(x, y) __ddiv_rn((x), (y))
#endif

__device__ inline gk_words gk_philox(const gk_philox_args& a, gk_u64 group) {
    return gk_philox4x32((gk_u32)group, (gk_u32)(group >> 32), (gk_u32)a.offset,
                         (gk_u32)(a.offset >> 32), a.key0, a.key1);
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
    if (a.affine) v = (T)GK_DADD(a.lo, GK_DMUL(a.scale, (double)v));
    reinterpret_cast<GK_OUT_T*>(a.out)[e] = (GK_OUT_T)v;
}

#define GK_GROUPS(PER)                                                              \
    for (gk_i64 g = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; g * (PER) < a.n; \
         g += (gk_i64)gridDim.x * blockDim.x)

GK_KERNEL void gk_rand_f(const gk_philox_args a) {
    GK_GROUPS(GK_PHILOX_PER_GROUP_32) {
        const gk_words r = gk_philox(a, (gk_u64)g);
#pragma unroll
        for (int j = 0; j < 4; ++j)
            gk_store<float>(a, 4 * g + j, gk_uniform_f(r.w[j], GK_BITS, false));
    }
}

GK_KERNEL void gk_rand_d(const gk_philox_args a) {
    GK_GROUPS(GK_PHILOX_PER_GROUP_64) {
        const gk_words r = gk_philox(a, (gk_u64)g);
        gk_store<double>(a, 2 * g, gk_uniform_d(r.w[0], r.w[1], false));
        gk_store<double>(a, 2 * g + 1, gk_uniform_d(r.w[2], r.w[3], false));
    }
}

// Box-Muller in float64 from two uniforms (the first in (0, 1], so the log is finite), with a
// log and a sine/cosine of only +, -, *, / and sqrt (each correctly rounded, so the CPU backend
// repeats them exactly; about 1e-16 relative error). The float path draws 24-bit uniforms.

// log(u) for u in (0, 1]: u = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| < 0.172, a series in s^2 to 1e-17.
__device__ inline double gk_log_unit(double u) {
    int e;
    double m = frexp(u, &e);
    if (m < 0.7071067811865476) {
        m = GK_DMUL(m, 2.0);
        e -= 1;
    }
    const double s = GK_DDIV(GK_DSUB(m, 1.0), GK_DADD(m, 1.0));
    const double z = GK_DMUL(s, s);
    const double c[12] = {1.0,
                          0.3333333333333333,
                          0.2,
                          0.14285714285714285,
                          0.1111111111111111,
                          0.09090909090909091,
                          0.07692307692307693,
                          0.06666666666666667,
                          0.058823529411764705,
                          0.05263157894736842,
                          0.047619047619047616,
                          0.043478260869565216};
    double p = c[11];
#pragma unroll
    for (int k = 10; k >= 0; --k) p = GK_DADD(GK_DMUL(p, z), c[k]);
    return GK_DADD(GK_DMUL((double)e, 0.6931471805599453), GK_DMUL(GK_DMUL(2.0, s), p));
}

// (cos, sin) of 2 pi u for u in [0, 1): the quadrant from u exactly, then |x| <= pi / 4 and
// Taylor series to 1e-17.
__device__ inline void gk_cos_sin_turn(double u, double* c_out, double* s_out) {
    const double q = floor(GK_DMUL(u, 4.0));
    const double r = GK_DSUB(u, GK_DMUL(q, 0.25));  // exact, in [0, 1/4)
    const bool flip = r > 0.125;
    const double x = GK_DMUL(6.283185307179586, flip ? GK_DSUB(0.25, r) : r);
    const double x2 = GK_DMUL(x, x);
    const double cs[9] = {1.0,
                          -0.16666666666666666,
                          0.008333333333333333,
                          -0.0001984126984126984,
                          2.7557319223985893e-06,
                          -2.505210838544172e-08,
                          1.6059043836821613e-10,
                          -7.647163731819816e-13,
                          2.8114572543455206e-15};
    const double cc[10] = {1.0,
                           -0.5,
                           0.041666666666666664,
                           -0.001388888888888889,
                           2.48015873015873e-05,
                           -2.755731922398589e-07,
                           2.08767569878681e-09,
                           -1.1470745597729725e-11,
                           4.779477332387385e-14,
                           -1.5619206968586225e-16};
    double ps = cs[8], pc = cc[9];
#pragma unroll
    for (int k = 7; k >= 0; --k) ps = GK_DADD(GK_DMUL(ps, x2), cs[k]);
#pragma unroll
    for (int k = 8; k >= 0; --k) pc = GK_DADD(GK_DMUL(pc, x2), cc[k]);
    const double sx = GK_DMUL(x, ps);
    const double s = flip ? pc : sx, c = flip ? sx : pc;  // of 2 pi r
    const int quadrant = (int)q;
    *c_out = quadrant == 0 ? c : quadrant == 1 ? -s : quadrant == 2 ? -c : s;
    *s_out = quadrant == 0 ? s : quadrant == 1 ? c : quadrant == 2 ? -s : -c;
}

// Two standard normals (radius cos, radius sin) from uniforms u1 in (0, 1], u2 in [0, 1).
__device__ inline void gk_box_muller(double u1, double u2, double* z0, double* z1) {
    const double radius = sqrt(GK_DMUL(-2.0, gk_log_unit(u1)));
    double c, s;
    gk_cos_sin_turn(u2, &c, &s);
    *z0 = GK_DMUL(radius, c);
    *z1 = GK_DMUL(radius, s);
}

GK_KERNEL void gk_randn_f(const gk_philox_args a) {
    GK_GROUPS(GK_PHILOX_PER_GROUP_32) {
        const gk_words r = gk_philox(a, (gk_u64)g);
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            double z0, z1;
            gk_box_muller(gk_uniform_f(r.w[2 * j], 24, true),
                          gk_uniform_f(r.w[2 * j + 1], 24, false), &z0, &z1);
            gk_store<float>(a, 4 * g + 2 * j, (float)z0);
            gk_store<float>(a, 4 * g + 2 * j + 1, (float)z1);
        }
    }
}

GK_KERNEL void gk_randn_d(const gk_philox_args a) {
    GK_GROUPS(GK_PHILOX_PER_GROUP_64) {
        const gk_words r = gk_philox(a, (gk_u64)g);
        double z0, z1;
        gk_box_muller(gk_uniform_d(r.w[0], r.w[1], true), gk_uniform_d(r.w[2], r.w[3], false), &z0,
                      &z1);
        gk_store<double>(a, 2 * g, z0);
        gk_store<double>(a, 2 * g + 1, z1);
    }
}

// Integers in [low, low + range) by multiply-shift (Lemire): the high half of draw * range. For
// range <= 2^32 a 32-bit draw per element (bias below range / 2^32), otherwise a 64-bit draw.
GK_KERNEL void gk_randint_32(const gk_philox_args a) {
    GK_GROUPS(GK_PHILOX_PER_GROUP_32) {
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
    GK_GROUPS(GK_PHILOX_PER_GROUP_64) {
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
