// What the FFT kernels (fft.cu, fft_aux.cu) share: complex values of GK_FFT_REAL (float or
// double) as NumPy lays them out, twiddle factors computed in registers, and the butterflies of
// radix 2, 4, 8, 16 (split in registers, constant twiddles) and 3, 5, 7, 11, 13 (direct sums with
// constant roots). Every transform is a forward one (exp(-2 pi i jk / n)): inverses conjugate
// their input and output. Built with GK_EMULATE, the same code runs on the host
// (tests/gpu/emulator/gk_emulate.h).
#pragma once
#include "args.cuh"

#ifdef GK_EMULATE
#include "gk_emulate.h"
#define GK_FFT_KERNEL extern "C"
#include <cmath>
inline void gk_sincospi(double x, double* s, double* c) {
    *s = std::sin(M_PI * x);
    *c = std::cos(M_PI * x);
}
inline void gk_sincospi(float x, float* s, float* c) {
    *s = (float)std::sin(M_PI * (double)x);
    *c = (float)std::cos(M_PI * (double)x);
}
#define gk_fft_sync() gk_sync_block()
#define gk_fft_smem() gk_dynamic_smem()
#else
#define GK_DEV __device__ __forceinline__
#define GK_FFT_KERNEL extern "C" __global__
GK_DEV void gk_sincospi(double x, double* s, double* c) { sincospi(x, s, c); }
GK_DEV void gk_sincospi(float x, float* s, float* c) { sincospif(x, s, c); }
#define gk_fft_sync() __syncthreads()
GK_DEV unsigned char* gk_fft_smem() {
    extern __shared__ __align__(16) unsigned char gk_fft_shared[];
    return gk_fft_shared;
}
#endif

typedef GK_FFT_REAL gk_real;
struct alignas(2 * sizeof(gk_real)) gk_cpx {
    gk_real re, im;
};

GK_DEV gk_cpx gk_cx(gk_real re, gk_real im) {
    gk_cpx z;
    z.re = re;
    z.im = im;
    return z;
}
GK_DEV gk_cpx operator+(gk_cpx a, gk_cpx b) { return gk_cx(a.re + b.re, a.im + b.im); }
GK_DEV gk_cpx operator-(gk_cpx a, gk_cpx b) { return gk_cx(a.re - b.re, a.im - b.im); }
GK_DEV gk_cpx operator*(gk_cpx a, gk_cpx b) {
    return gk_cx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
GK_DEV gk_cpx gk_scale(gk_cpx a, gk_real s) { return gk_cx(a.re * s, a.im * s); }
GK_DEV gk_cpx gk_conj(gk_cpx a) { return gk_cx(a.re, -a.im); }
GK_DEV gk_cpx gk_mul_neg_i(gk_cpx a) { return gk_cx(a.im, -a.re); }  // a * -i

// exp(-2 pi i a / b) for 0 <= a < b < 2^31: the angle is a rational of exact integers, rounded
// once; sincospi reduces it exactly.
GK_DEV gk_cpx gk_twiddle(long long a, long long b) {
    gk_real s, c;
    gk_sincospi((gk_real)(-2.0 * (double)a / (double)b), &s, &c);
    return gk_cx(c, s);
}

// exp(-2 pi i a * inv) for inv = 1 / b (the angle's one rounding is the product's).
GK_DEV gk_cpx gk_twiddle_inv(long long a, double inv) {
    gk_real s, c;
    gk_sincospi((gk_real)(-2.0 * (double)a * inv), &s, &c);
    return gk_cx(c, s);
}

// exp(-2 pi i m / R) for a compile-time R and m (after unrolling) from tables of the first half
// of the circle, mirrored, so that roots are exactly symmetric.
template <int R>
GK_DEV gk_cpx gk_root(int m) {
    m %= R;
    const bool mirror = 2 * m > R;
    const int k = mirror ? R - m : m;
    double c, s;
    if constexpr (R == 3) {
        const double cs[] = {1.0, -0.5};
        const double sn[] = {0.0, 0.86602540378443865};
        c = cs[k], s = sn[k];
    } else if constexpr (R == 5) {
        const double cs[] = {1.0, 0.30901699437494742, -0.80901699437494742};
        const double sn[] = {0.0, 0.95105651629515357, 0.58778525229247313};
        c = cs[k], s = sn[k];
    } else if constexpr (R == 7) {
        const double cs[] = {1.0, 0.62348980185873353, -0.22252093395631440, -0.90096886790241913};
        const double sn[] = {0.0, 0.78183148246802981, 0.97492791218182361, 0.43388373911755812};
        c = cs[k], s = sn[k];
    } else if constexpr (R == 11) {
        const double cs[] = {1.0,
                             0.84125353283118117,
                             0.41541501300188643,
                             -0.14231483827328514,
                             -0.65486073394528506,
                             -0.95949297361449739};
        const double sn[] = {0.0,
                             0.54064081745559756,
                             0.90963199535451837,
                             0.98982144188093273,
                             0.75574957435425828,
                             0.28173255684142969};
        c = cs[k], s = sn[k];
    } else if constexpr (R == 13) {
        const double cs[] = {1.0,
                             0.88545602565320989,
                             0.56806474673115581,
                             0.12053668025532305,
                             -0.35460488704253563,
                             -0.74851074817110109,
                             -0.97094181742605203};
        const double sn[] = {0.0,
                             0.46472317204376854,
                             0.82298386589365640,
                             0.99270887409805400,
                             0.93501624268541483,
                             0.66312265824079520,
                             0.23931566428755777};
        c = cs[k], s = sn[k];
    } else {
        static_assert(16 % R == 0, "power-of-two radices up to 16");
        const double c1 = 0.92387953251128674, c3 = 0.38268343236508977, h = 0.70710678118654752;
        const double cs[] = {1.0, c1, h, c3, 0.0, -c3, -h, -c1, -1.0};
        const double sn[] = {0.0, c3, h, c1, 1.0, c1, h, c3, 0.0};
        c = cs[k * (16 / R)], s = sn[k * (16 / R)];
    }
    return gk_cx((gk_real)c, (gk_real)(mirror ? s : -s));
}

// v * exp(-2 pi i m / R), skipping the multiplications by 1 and -i.
template <int R>
GK_DEV gk_cpx gk_rotate(gk_cpx v, int m) {
    m %= R;
    if (m == 0) return v;
    if (4 * m == R) return gk_mul_neg_i(v);
    if (2 * m == R) return gk_cx(-v.re, -v.im);
    return v * gk_root<R>(m);
}

// In-place DFT of R values in registers.
template <int R>
GK_DEV void gk_dft(gk_cpx* v) {
    if constexpr (R == 1) {
        (void)v;
    } else if constexpr (R == 2) {
        const gk_cpx a = v[0], b = v[1];
        v[0] = a + b;
        v[1] = a - b;
    } else if constexpr ((R & (R - 1)) == 0) {  // 4, 8, 16: even and odd halves, then combined
        gk_cpx e[R / 2], o[R / 2];
#pragma unroll
        for (int k = 0; k < R / 2; ++k) e[k] = v[2 * k], o[k] = v[2 * k + 1];
        gk_dft<R / 2>(e);
        gk_dft<R / 2>(o);
#pragma unroll
        for (int k = 0; k < R / 2; ++k) {
            const gk_cpx t = gk_rotate<R>(o[k], k);
            v[k] = e[k] + t;
            v[k + R / 2] = e[k] - t;
        }
    } else {  // an odd prime: the direct sum, over pairs j, R - j sharing cosines and sines
        constexpr int H = (R - 1) / 2;
        gk_cpx a[H + 1], b[H + 1];
        gk_cpx x0 = v[0];
#pragma unroll
        for (int j = 1; j <= H; ++j) {
            a[j] = v[j] + v[R - j];
            b[j] = v[j] - v[R - j];
            x0 = x0 + a[j];
        }
#pragma unroll
        for (int k = 1; k <= H; ++k) {
            gk_cpx p = v[0], q = gk_cx((gk_real)0, (gk_real)0);
#pragma unroll
            for (int j = 1; j <= H; ++j) {
                const gk_cpx w = gk_root<R>(j * k);  // (cos, -sin) of 2 pi jk / R
                p = p + gk_scale(a[j], w.re);
                q = q + gk_scale(b[j], w.im);
            }
            // X[k] = p + i q', X[R - k] = p - i q', q' = sum -sin * b = q.
            v[k] = gk_cx(p.re - q.im, p.im + q.re);
            v[R - k] = gk_cx(p.re + q.im, p.im - q.re);
        }
        v[0] = x0;
    }
}

// a / b for 0 <= a, 0 < b, in 32 bits where both fit (the common case: a 64-bit division is a
// long subroutine, and the kernels run one per element or row).
GK_DEV long long gk_fft_quot(long long a, long long b) {
    return (((unsigned long long)a | (unsigned long long)b) >> 32) == 0
               ? (long long)((unsigned)a / (unsigned)b)
               : a / b;
}

// The element offset of row `row` (numbered with dimension 0 fastest) in a strided batch.
GK_DEV long long gk_fft_row_offset(long long row, int ndim, const gk_i64* shape,
                                   const gk_i64* stride) {
    long long off = 0;
    for (int d = 0; d < ndim; ++d) {
        const long long q = gk_fft_quot(row, shape[d]);
        off += (row - q * shape[d]) * stride[d];
        row = q;
    }
    return off;
}
