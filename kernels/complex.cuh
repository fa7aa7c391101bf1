// Complex arithmetic and math for gk_c64 / gk_c128 (kernels/types.cuh), with NumPy's semantics:
// its division and reciprocal (Smith's scaling), its power (repeated multiplication for small
// integer exponents), lexicographic order with NaN handling for maximum / minimum / max / argmax,
// and C99 Annex G's special values for exp, log, sqrt and the hyperbolic functions. The inverse
// functions use the classic formulas, arranged so that no cancellation occurs away from their
// branch points, with the special values of Annex G.
#pragma once
#include "compat.cuh"

#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)

template <typename C>
struct gk_complex_parts;
template <>
struct gk_complex_parts<gk_c64> {
    typedef float real;
    // Beyond this magnitude z*z (or exp of the real part) would overflow; see the users.
    __device__ static float big() { return 4096.0f; }  // 1 / sqrt(FLT_EPSILON)
    __device__ static float exp_max() { return 88.72283f; }
    __device__ static float tanh_huge() { return 11.0f; }
    __device__ static float sqrt_thresh() { return 1.4084789e38f; }  // FLT_MAX / (1 + sqrt 2)
};
template <>
struct gk_complex_parts<gk_c128> {
    typedef double real;
    __device__ static double big() { return 67108864.0; }  // 1 / sqrt(DBL_EPSILON)
    __device__ static double exp_max() { return 709.782712893384; }
    __device__ static double tanh_huge() { return 22.0; }
    __device__ static double sqrt_thresh() { return 7.446288774449766e307; }
};

template <typename T>
struct gk_is_complex {
    static const bool value = false;
};
template <>
struct gk_is_complex<gk_c64> {
    static const bool value = true;
};
template <>
struct gk_is_complex<gk_c128> {
    static const bool value = true;
};

// --- conversions --------------------------------------------------------------------------------
// Complex to real keeps the real part (NumPy's cast, which warns); to bool: whether nonzero.
template <typename To>
__device__ inline To gk_cast(gk_c64 z) {
    if constexpr (gk_is_complex<To>::value || gk_is_same<To, bool>::value) {
        return (To)z;
    } else {
        return (To)z.re;
    }
}
template <typename To>
__device__ inline To gk_cast(gk_c128 z) {
    if constexpr (gk_is_complex<To>::value || gk_is_same<To, bool>::value) {
        return (To)z;
    } else {
        return (To)z.re;
    }
}

// A scalar operand from its real and imaginary parts (real types take the real part).
template <typename T>
__device__ inline T gk_from_parts(double re, double im) {
    if constexpr (gk_is_complex<T>::value) {
        return T(re, im);
    } else {
        (void)im;
        return gk_cast<T>(re);
    }
}

// --- arithmetic ---------------------------------------------------------------------------------
#define GK_COMPLEX_ARITHMETIC(C, R)                                                             \
    __device__ inline C operator+(C a) { return a; }                                            \
    __device__ inline C operator-(C a) { return C(-a.re, -a.im); }                              \
    __device__ inline C operator+(C a, C b) { return C(a.re + b.re, a.im + b.im); }             \
    __device__ inline C operator-(C a, C b) { return C(a.re - b.re, a.im - b.im); }             \
    __device__ inline C operator*(C a, C b) {                                                   \
        return C(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);                         \
    }                                                                                           \
    __device__ inline C operator*(C a, R s) { return C(a.re * s, a.im * s); }                   \
    __device__ inline C operator/(C a, C b) { return gk_cdiv(a, b); }                           \
    __device__ inline C& operator+=(C& a, C b) { return a = a + b; }                            \
    __device__ inline bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; }        \
    __device__ inline bool operator!=(C a, C b) { return !(a == b); }                           \
    /* NumPy's order: by the real part, then the imaginary; a NaN compares false */             \
    __device__ inline bool operator>(C a, C b) {                                                \
        return (a.re > b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im > b.im);  \
    }                                                                                           \
    __device__ inline bool operator<(C a, C b) { return b > a; }                                \
    __device__ inline bool operator>=(C a, C b) {                                               \
        return (a.re > b.re && a.im == a.im && b.im == b.im) || (a.re == b.re && a.im >= b.im); \
    }                                                                                           \
    __device__ inline bool operator<=(C a, C b) { return b >= a; }                              \
    __device__ inline R gk_absolute(C z) { return gkm_hypot(z.re, z.im); }                      \
    __device__ inline bool gk_isnan(C z) { return z.re != z.re || z.im != z.im; }               \
    __device__ inline bool gk_isinf(C z) { return gk_isinf(z.re) || gk_isinf(z.im); }           \
    __device__ inline bool gk_isfinite(C z) { return gk_isfinite(z.re) && gk_isfinite(z.im); }  \
    __device__ inline C gk_conj(C z) { return C(z.re, -z.im); }                                 \
    __device__ inline R gk_angle(C z) { return gkm_atan2(z.im, z.re); }                         \
    __device__ inline C gkm_rint(C z) { return C(gkm_rint(z.re), gkm_rint(z.im)); }             \
    __device__ inline C gk_scale(C v, double s) { return C((R)(v.re * s), (R)(v.im * s)); }

// Division by Smith's scaling, as NumPy divides; a zero divisor gives inf or NaN parts.
template <typename C>
__device__ inline C gk_cdiv(C a, C b) {
    typedef typename gk_complex_parts<C>::real R;
    const R abs_re = gkm_fabs(b.re), abs_im = gkm_fabs(b.im);
    if (abs_re >= abs_im) {
        if (abs_re == (R)0 && abs_im == (R)0) return C(a.re / abs_re, a.im / abs_im);
        const R rat = b.im / b.re, scl = (R)1 / (b.re + b.im * rat);
        return C((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
    }
    const R rat = b.re / b.im, scl = (R)1 / (b.im + b.re * rat);
    return C((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}

GK_COMPLEX_ARITHMETIC(gk_c64, float)
GK_COMPLEX_ARITHMETIC(gk_c128, double)
#undef GK_COMPLEX_ARITHMETIC

template <typename T>
__device__ inline T gk_scale(T v, double s) {
    return (T)(v * s);
}

template <>
struct gk_limits<gk_c64> {
    __device__ static gk_c64 lowest() { return gk_c64(-GK_INF_F, -GK_INF_F); }
    __device__ static gk_c64 highest() { return gk_c64(GK_INF_F, GK_INF_F); }
};
template <>
struct gk_limits<gk_c128> {
    __device__ static gk_c128 lowest() { return gk_c128(-GK_INF_D, -GK_INF_D); }
    __device__ static gk_c128 highest() { return gk_c128(GK_INF_D, GK_INF_D); }
};

// --- functions NumPy defines for complex arguments ----------------------------------------------
// z / |z| (0 for 0; the Array API's sign, NumPy's since 2.0), with NumPy's infinities.
template <typename C>
__device__ inline C gk_csign(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R nan = gk_inf(z.re) - gk_inf(z.re);
    const R r = gkm_hypot(z.re, z.im);
    if (r != r) return C(nan, nan);
    if (gk_isinf(r)) {
        if (gk_isinf(z.re)) {
            if (gk_isinf(z.im)) return C(nan, nan);
            return C(z.re > (R)0 ? (R)1 : (R)-1, (R)0);
        }
        return C((R)0, z.im > (R)0 ? (R)1 : (R)-1);
    }
    if (r == (R)0) return C((R)0, (R)0);
    return C(z.re / r, z.im / r);
}

// NumPy's reciprocal: Smith's scaling of 1 / z.
template <typename C>
__device__ inline C gk_creciprocal(C z) {
    typedef typename gk_complex_parts<C>::real R;
    if (gkm_fabs(z.im) <= gkm_fabs(z.re)) {
        const R r = z.im / z.re, d = z.re + z.im * r;
        return C((R)1 / d, -r / d);
    }
    const R r = z.re / z.im, d = z.re * r + z.im;
    return C(r / d, (R)-1 / d);
}

template <typename C>
__device__ inline C gk_cexp(C z) {
    typedef typename gk_complex_parts<C>::real R;
    typedef gk_complex_parts<C> P;
    const R x = z.re, y = z.im;
    const R nan = gk_inf(x) - gk_inf(x);
    if (gk_isfinite(x)) {
        if (!gk_isfinite(y)) return C(nan, nan);
        if (y == (R)0) return C(gkm_exp(x), y);
        if (x > P::exp_max()) {  // exp(x) overflows where exp(x) cos(y) may not
            const R h = gkm_exp(x / 2);
            return C(h * gkm_cos(y) * h, h * gkm_sin(y) * h);
        }
        const R e = gkm_exp(x);
        return C(e * gkm_cos(y), e * gkm_sin(y));
    }
    if (x != x) return y == (R)0 ? z : C(x, nan);
    if (x > (R)0) {
        if (y == (R)0) return z;
        if (!gk_isfinite(y)) return C(x, nan);
        return C(x * gkm_cos(y), x * gkm_sin(y));
    }
    if (!gk_isfinite(y)) return C((R)0, (R)0);
    return C((R)0 * gkm_cos(y), (R)0 * gkm_sin(y));
}

// log|z| near |z| = 1 through log1p, where log(hypot) would lose the small difference.
template <typename C>
__device__ inline C gk_clog(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R ax = gkm_fabs(z.re), ay = gkm_fabs(z.im);
    const R h = gkm_hypot(ax, ay);
    R rr;
    if (h >= (R)0.71 && h <= (R)1.73) {
        const R big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
        rr = gkm_log1p((big - (R)1) * (big + (R)1) + small * small) / (R)2;
    } else {
        rr = gkm_log(h);
    }
    return C(rr, gkm_atan2(z.im, z.re));
}

template <typename C>
__device__ inline C gk_csqrt(C z) {
    typedef typename gk_complex_parts<C>::real R;
    R a = z.re, b = z.im;
    const R inf = gk_inf(a);
    if (a == (R)0 && b == (R)0) return C((R)0, b);
    if (gk_isinf(b)) return C(inf, b);
    if (a != a) return C(a, b - b + a);
    if (gk_isinf(a)) {
        if (a < (R)0) return C(gkm_fabs(b - b), gkm_copysign(inf, b));
        return C(a, gkm_copysign(b - b, b));
    }
    const bool scale = gkm_fabs(a) >= gk_complex_parts<C>::sqrt_thresh() ||
                       gkm_fabs(b) >= gk_complex_parts<C>::sqrt_thresh();
    if (scale) {
        a *= (R)0.25;
        b *= (R)0.25;
    }
    C r;
    if (a >= (R)0) {
        const R t = gkm_sqrt((a + gkm_hypot(a, b)) * (R)0.5);
        r = C(t, b / (2 * t));
    } else {
        const R t = gkm_sqrt((-a + gkm_hypot(a, b)) * (R)0.5);
        r = C(gkm_fabs(b) / (2 * t), gkm_copysign(t, b));
    }
    return scale ? C(r.re * 2, r.im * 2) : r;
}

// NumPy's power: 1 for a zero exponent, 0 or NaN for a zero base, repeated multiplication for
// integer exponents below 100 in magnitude, else exp(b log a).
template <typename C>
__device__ inline C gk_cpow(C a, C b) {
    typedef typename gk_complex_parts<C>::real R;
    if (b.re == (R)0 && b.im == (R)0) return C((R)1, (R)0);
    if (a.re == (R)0 && a.im == (R)0) {
        if (b.re > (R)0) return C((R)0, (R)0);
        const R nan = gk_inf(a.re) - gk_inf(a.re);
        return C(nan, nan);
    }
    if (b.im == (R)0 && b.re > (R)-100 && b.re < (R)100 && (R)(int)b.re == b.re) {
        int n = (int)b.re;
        if (n == 1) return a;
        if (n == 2) return a * a;
        if (n == 3) return a * (a * a);
        if (n < 0) n = -n;
        C acc((R)1, (R)0), p = a;
        for (int mask = 1;; mask <<= 1) {
            if (n & mask) acc = acc * p;
            if (n < (mask << 1)) break;
            p = p * p;
        }
        return b.re < (R)0 ? gk_cdiv(C((R)1, (R)0), acc) : acc;
    }
    return gk_cexp(b * gk_clog(a));
}

template <typename C>
__device__ inline C gk_csinh(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R x = z.re, y = z.im, nan = gk_inf(x) - gk_inf(x);
    if (gk_isfinite(x) && gk_isfinite(y)) {
        if (y == (R)0) return C(gkm_sinh(x), y);
        const R ax = gkm_fabs(x);
        if (ax < gk_complex_parts<C>::exp_max()) {
            return C(gkm_sinh(x) * gkm_cos(y), gkm_cosh(x) * gkm_sin(y));
        }
        // exp(|x|) / 2 as h * e, multiplied into the factors one at a time: no early overflow
        const R e = gkm_exp(ax / 2), h = e * (R)0.5;
        return C(gkm_copysign(h, x) * gkm_cos(y) * e, h * gkm_sin(y) * e);
    }
    if (x == (R)0) return C(x, y - y);       // sinh(+-0 + i inf or NaN)
    if (y == (R)0) return C(x, y);           // sinh(+-inf or NaN + i 0)
    if (gk_isfinite(x)) return C(nan, nan);  // sinh(x + i inf or NaN)
    if (x == x) {                            // sinh(+-inf + iy)
        if (!gk_isfinite(y)) return C(x * x, nan);
        return C(x * gkm_cos(y), gk_inf(x) * gkm_sin(y));
    }
    return C(nan, nan);
}

template <typename C>
__device__ inline C gk_ccosh(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R x = z.re, y = z.im, nan = gk_inf(x) - gk_inf(x);
    if (gk_isfinite(x) && gk_isfinite(y)) {
        if (y == (R)0) return C(gkm_cosh(x), x * y);
        const R ax = gkm_fabs(x);
        if (ax < gk_complex_parts<C>::exp_max()) {
            return C(gkm_cosh(x) * gkm_cos(y), gkm_sinh(x) * gkm_sin(y));
        }
        const R e = gkm_exp(ax / 2), h = e * (R)0.5;
        return C(h * gkm_cos(y) * e, gkm_copysign(h, x) * gkm_sin(y) * e);
    }
    if (x == (R)0) return C(nan, (R)0);                         // cosh(+-0 + i inf/NaN)
    if (y == (R)0) return C(x * x, gkm_copysign((R)0, x) * y);  // cosh(inf/NaN + i 0)
    if (gk_isfinite(x)) return C(nan, nan);
    if (x == x) {
        if (!gk_isfinite(y)) return C(x * x, nan);
        return C((x * x) * gkm_cos(y), x * gkm_sin(y));
    }
    return C(nan, nan);
}

// Kahan's tanh: (beta rho s + i t) / (1 + beta s^2), t = tan y, beta = 1 + t^2, s = sinh x,
// rho = cosh x; for large |x| the result is +-1 + i 4 sin y cos y exp(-2|x|).
template <typename C>
__device__ inline C gk_ctanh(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R x = z.re, y = z.im, nan = gk_inf(x) - gk_inf(x);
    if (!gk_isfinite(x)) {
        if (x != x) return C(x, y == (R)0 ? y : nan);
        return C(gkm_copysign((R)1, x),
                 gkm_copysign((R)0, gk_isinf(y) ? y : gkm_sin(y) * gkm_cos(y)));
    }
    if (!gk_isfinite(y)) return C(x == (R)0 ? x : nan, nan);  // tanh(+-0 + i inf) = +-0 + iNaN
    if (gkm_fabs(x) >= gk_complex_parts<C>::tanh_huge()) {
        const R e = gkm_exp(-gkm_fabs(x));
        return C(gkm_copysign((R)1, x), (R)4 * gkm_sin(y) * gkm_cos(y) * e * e);
    }
    const R t = gkm_tan(y), beta = (R)1 + t * t, s = gkm_sinh(x);
    const R rho = gkm_sqrt((R)1 + s * s), denom = (R)1 + beta * s * s;
    return C((beta * rho * s) / denom, t / denom);
}

// asinh(z) = log(z + sqrt(z^2 + 1)) in the right half-plane (odd symmetry for the left), or
// log(2) + log(z) where z^2 would round 1 away (|z| > 1 / sqrt(eps)).
template <typename C>
__device__ inline C gk_casinh(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R x = z.re, y = z.im, nan = gk_inf(x) - gk_inf(x);
    const R half_pi = (R)1.5707963267948966;
    if (!gk_isfinite(x) || !gk_isfinite(y)) {
        if (gk_isinf(x)) {
            if (y != y) return C(x, y);
            return C(x, gkm_copysign(gk_isinf(y) ? half_pi / 2 : (R)0, y));
        }
        if (gk_isinf(y))
            return C(gkm_copysign(gk_inf(x), x), x != x ? x : gkm_copysign(half_pi, y));
        if (x != x) return C(x, y == (R)0 ? y : nan);
        return C(nan, nan);  // finite x, NaN y
    }
    const bool flip = gk_signbit(x);
    const C w = flip ? C(-x, -y) : z;
    C r;
    if (gkm_fabs(w.re) > gk_complex_parts<C>::big() ||
        gkm_fabs(w.im) > gk_complex_parts<C>::big()) {
        r = gk_clog(w);
        r.re += (R)0.6931471805599453;
    } else {
        r = gk_clog(w + gk_csqrt(w * w + C((R)1, (R)0)));
    }
    return flip ? C(-r.re, -r.im) : r;
}

// asin(z) = -i asinh(i z); acos(z) = pi / 2 - asin(z); atan(z) = -i atanh(i z).
template <typename C>
__device__ inline C gk_casin(C z) {
    const C w = gk_casinh(C(-z.im, z.re));
    return C(w.im, -w.re);
}
template <typename C>
__device__ inline C gk_cacos(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const C w = gk_casin(z);
    return C((R)1.5707963267948966 - w.re, -w.im);
}

// acosh(z) = 2 log(sqrt((z + 1) / 2) + sqrt((z - 1) / 2)) (Kahan): both roots lie in the right
// half-plane with imaginary parts of y's sign, so their sum never cancels.
template <typename C>
__device__ inline C gk_cacosh(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R x = z.re, y = z.im, nan = gk_inf(x) - gk_inf(x);
    const R pi = (R)3.141592653589793;
    if (!gk_isfinite(x) || !gk_isfinite(y)) {
        const R inf = gk_inf(x);
        if (gk_isinf(y)) {
            if (x != x) return C(inf, x);
            const R angle = gk_isinf(x) ? (x > (R)0 ? pi / 4 : 3 * pi / 4) : pi / 2;
            return C(inf, gkm_copysign(angle, y));
        }
        if (gk_isinf(x)) {
            if (y != y) return C(inf, y);
            return C(inf, gkm_copysign(x > (R)0 ? (R)0 : pi, y));
        }
        return C(nan, nan);
    }
    if (gkm_fabs(x) > gk_complex_parts<C>::big() || gkm_fabs(y) > gk_complex_parts<C>::big()) {
        C r = gk_clog(z);  // sqrt(z + 1) sqrt(z - 1) rounds to z: acosh(z) = log(2 z)
        r.re += (R)0.6931471805599453;
        return r;
    }
    const C p = gk_csqrt(C((x + (R)1) / 2, y / 2)), m = gk_csqrt(C((x - (R)1) / 2, y / 2));
    const C r = gk_clog(p + m);
    return C(2 * r.re, 2 * r.im);
}

// atanh(z): Re = log1p(4x / ((1 - x)^2 + y^2)) / 4, Im = atan2(2y, (1 - x)(1 + x) - y^2) / 2;
// for |z| > 1 / sqrt(eps), 1 / z + i pi/2 sign(y).
template <typename C>
__device__ inline C gk_catanh(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R x = z.re, y = z.im, nan = gk_inf(x) - gk_inf(x);
    const R half_pi = (R)1.5707963267948966;
    if (!gk_isfinite(x) || !gk_isfinite(y)) {
        if (gk_isinf(x) || gk_isinf(y)) {
            return C(gkm_copysign((R)0, x), y != y ? y : gkm_copysign(half_pi, y));
        }
        if (x != x) return C(x, nan);
        return C(x == (R)0 ? x : nan, nan);  // finite x, NaN y
    }
    const R ax = gkm_fabs(x), ay = gkm_fabs(y);
    if (ax > gk_complex_parts<C>::big() || ay > gk_complex_parts<C>::big()) {
        const R h = gkm_hypot(x, y);
        return C((x / h) / h, gkm_copysign(half_pi, y));
    }
    const R one_minus = (R)1 - ax;
    const R re = gkm_log1p((R)4 * ax / (one_minus * one_minus + ay * ay)) / (R)4;
    const R im = gkm_atan2((R)2 * y, one_minus * ((R)1 + ax) - ay * ay) / (R)2;
    return C(gkm_copysign(re, x), im);
}
template <typename C>
__device__ inline C gk_catan(C z) {
    const C w = gk_catanh(C(-z.im, z.re));
    return C(w.im, -w.re);
}

// The forms NumPy writes out itself (umath's funcs.inc): log1p, expm1, exp2, log2, log10.
template <typename C>
__device__ inline C gk_clog1p(C z) {
    typedef typename gk_complex_parts<C>::real R;
    return C(gkm_log(gkm_hypot(z.re + (R)1, z.im)), gkm_atan2(z.im, z.re + (R)1));
}
template <typename C>
__device__ inline C gk_cexpm1(C z) {
    typedef typename gk_complex_parts<C>::real R;
    const R s = gkm_sin(z.im / 2);
    return C(gkm_expm1(z.re) * gkm_cos(z.im) - 2 * s * s, gkm_exp(z.re) * gkm_sin(z.im));
}

#define GK_COMPLEX_MATH(C, R)                                                        \
    __device__ inline C gk_sign(C z) { return gk_csign(z); }                         \
    __device__ inline C gk_reciprocal(C z) { return gk_creciprocal(z); }             \
    __device__ inline C gk_power(C a, C b) { return gk_cpow(a, b); }                 \
    __device__ inline C gkm_pow(C a, C b) { return gk_cpow(a, b); }                  \
    __device__ inline C gkm_exp(C z) { return gk_cexp(z); }                          \
    __device__ inline C gkm_log(C z) { return gk_clog(z); }                          \
    __device__ inline C gkm_sqrt(C z) { return gk_csqrt(z); }                        \
    __device__ inline C gkm_rsqrt(C z) { return gk_creciprocal(gk_csqrt(z)); }       \
    __device__ inline C gkm_sinh(C z) { return gk_csinh(z); }                        \
    __device__ inline C gkm_cosh(C z) { return gk_ccosh(z); }                        \
    __device__ inline C gkm_tanh(C z) { return gk_ctanh(z); }                        \
    __device__ inline C gkm_sin(C z) {                                               \
        const C w = gk_csinh(C(-z.im, z.re));                                        \
        return C(w.im, -w.re);                                                       \
    }                                                                                \
    __device__ inline C gkm_cos(C z) { return gk_ccosh(C(-z.im, z.re)); }            \
    __device__ inline C gkm_tan(C z) {                                               \
        const C w = gk_ctanh(C(-z.im, z.re));                                        \
        return C(w.im, -w.re);                                                       \
    }                                                                                \
    __device__ inline C gkm_asinh(C z) { return gk_casinh(z); }                      \
    __device__ inline C gkm_asin(C z) { return gk_casin(z); }                        \
    __device__ inline C gkm_acos(C z) { return gk_cacos(z); }                        \
    __device__ inline C gkm_acosh(C z) { return gk_cacosh(z); }                      \
    __device__ inline C gkm_atanh(C z) { return gk_catanh(z); }                      \
    __device__ inline C gkm_atan(C z) { return gk_catan(z); }                        \
    __device__ inline C gkm_log1p(C z) { return gk_clog1p(z); }                      \
    __device__ inline C gkm_expm1(C z) { return gk_cexpm1(z); }                      \
    __device__ inline C gkm_exp2(C z) { return gk_cexp(z * (R)0.6931471805599453); } \
    __device__ inline C gkm_log2(C z) { return gk_clog(z) * (R)1.4426950408889634; } \
    __device__ inline C gkm_log10(C z) { return gk_clog(z) * (R)0.4342944819032518; }
GK_COMPLEX_MATH(gk_c64, float)
GK_COMPLEX_MATH(gk_c128, double)
#undef GK_COMPLEX_MATH

#endif
