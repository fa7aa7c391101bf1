// Elementwise operations with broadcasting, instantiated per use by defines:
//   GK_OP        functor below (gk_add, ...), applied in GK_COMP_T
//   GK_NIN       number of inputs (1 to 3; gk_ew_contig serves up to 2)
//   GK_OUT_T, GK_COMP_T, GK_IN0_T, GK_IN1_T   element types
//   GK_SCALAR0..2 1 where that input is a scalar held in the argument block
//   GK_SCALAR_INT            1 to read scalars from scalar_i (integer compute types)
// gk_ew_contig serves contiguous operands (16-byte loads when aligned), gk_ew_strided any strides.
#include "args.cuh"
#include "compat.cuh"

// Operations, applied in the compute type T (NumPy's loop type; float for float16).
#define GK_UNARY(NAME, EXPR)                    \
    struct NAME {                               \
        template <typename T>                   \
        __device__ auto operator()(T a) const { \
            return EXPR;                        \
        }                                       \
    };
#define GK_BINARY(NAME, EXPR)                        \
    struct NAME {                                    \
        template <typename T>                        \
        __device__ auto operator()(T a, T b) const { \
            return EXPR;                             \
        }                                            \
    };

GK_UNARY(gk_identity, a)
GK_UNARY(gk_negative, (T)(-a))
GK_UNARY(gk_positive, a)
GK_UNARY(gk_logical_not, !a)
GK_UNARY(gk_exp, gkm_exp(a))
GK_UNARY(gk_log, gkm_log(a))
GK_UNARY(gk_sqrt, gkm_sqrt(a))
GK_UNARY(gk_rsqrt, gkm_rsqrt(a))
GK_UNARY(gk_sin, gkm_sin(a))
GK_UNARY(gk_cos, gkm_cos(a))
GK_UNARY(gk_tanh, gkm_tanh(a))
GK_UNARY(gk_erf, gkm_erf(a))
GK_UNARY(gk_sigmoid, (T)1 / ((T)1 + gkm_exp(-a)))
GK_UNARY(gk_sign, (a != a) ? a : (T)((a > (T)0) - (a < (T)0)))
// Activations (gpukit.nn), with torch's definitions; relu keeps NaN.
GK_UNARY(gk_relu, (a > (T)0 || a != a) ? a : (T)0)
GK_UNARY(gk_silu, a / ((T)1 + gkm_exp(-a)))
GK_UNARY(gk_gelu, (T)0.5 * a * ((T)1 + gkm_erf(a * (T)0.7071067811865476)))
GK_UNARY(gk_gelu_tanh,
         (T)0.5 * a * ((T)1 + gkm_tanh((T)0.7978845608028654 * (a + (T)0.044715 * a * a * a))))
GK_BINARY(gk_add, (T)(a + b))
GK_BINARY(gk_subtract, (T)(a - b))
GK_BINARY(gk_multiply, (T)(a * b))
GK_BINARY(gk_true_divide, a / b)
GK_BINARY(gk_equal, a == b)
GK_BINARY(gk_not_equal, a != b)
GK_BINARY(gk_less, a < b)
GK_BINARY(gk_less_equal, a <= b)
GK_BINARY(gk_greater, a > b)
GK_BINARY(gk_greater_equal, a >= b)
GK_BINARY(gk_logical_and, a&& b)
GK_BINARY(gk_logical_or, a || b)
GK_BINARY(gk_logical_xor, (bool)a != (bool)b)
GK_BINARY(gk_bitwise_and, (T)(a & b))
GK_BINARY(gk_bitwise_or, (T)(a | b))
GK_BINARY(gk_bitwise_xor, (T)(a ^ b))
// NaN propagates through maximum and minimum, as in NumPy.
GK_BINARY(gk_maximum, (a != a || a > b) ? a : b)
GK_BINARY(gk_minimum, (a != a || a < b) ? a : b)
#undef GK_UNARY
#undef GK_BINARY

struct gk_invert {
    template <typename T>
    __device__ T operator()(T a) const {
        return (T)(~a);
    }
    __device__ bool operator()(bool a) const { return !a; }  // NumPy: ~ on bool is logical not
};

struct gk_absolute {
    template <typename T>
    __device__ T operator()(T a) const {
        if constexpr (gk_is_float<T>::value) {
            return gkm_fabs(a);
        } else {
            return a < (T)0 ? (T)(-a) : a;
        }
    }
};

struct gk_floor {
    template <typename T>
    __device__ T operator()(T a) const {
        if constexpr (gk_is_float<T>::value) return gkm_floor(a);
        return a;
    }
};

struct gk_ceil {
    template <typename T>
    __device__ T operator()(T a) const {
        if constexpr (gk_is_float<T>::value) return gkm_ceil(a);
        return a;
    }
};

// Python's floor division and modulo (the result takes the divisor's sign), as NumPy computes
// them; integer division by zero gives 0, as NumPy does (with a warning there).
struct gk_floor_divide {
    template <typename T>
    __device__ T operator()(T a, T b) const {
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
};

struct gk_remainder {
    template <typename T>
    __device__ T operator()(T a, T b) const {
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
};

// Integer powers by squaring. A negative integer exponent gives 0 here; gpukit checks exponents
// and raises ValueError before launching, as NumPy does.
struct gk_power {
    template <typename T>
    __device__ T operator()(T a, T b) const {
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
};

struct gk_where {
    template <typename T>
    __device__ T operator()(T c, T a, T b) const {
        return c ? a : b;
    }
};

struct gk_clip {
    template <typename T>
    __device__ T operator()(T a, T lo, T hi) const {
        // NumPy's minimum(maximum(a, lo), hi): hi wins when hi < lo, and a NaN anywhere wins.
        if (a != a) return a;
        const T r = (a < lo || lo != lo) ? lo : a;
        return (r > hi || hi != hi) ? hi : r;
    }
};

#ifndef GK_SCALAR0
#define GK_SCALAR0 0
#endif
#ifndef GK_SCALAR1
#define GK_SCALAR1 0
#endif
#ifndef GK_SCALAR2
#define GK_SCALAR2 0
#endif
#ifndef GK_IN1_T
#define GK_IN1_T GK_IN0_T
#endif
#ifndef GK_IN2_T
#define GK_IN2_T GK_IN0_T
#endif

typedef GK_COMP_T comp_t;
typedef GK_OUT_T out_t;

template <typename T, int IS_SCALAR, typename Args>
__device__ inline comp_t gk_read(const Args& a, int operand, gk_i64 offset) {
    if (IS_SCALAR) {
#if GK_SCALAR_INT
        return (comp_t)a.scalar_i[operand];
#else
        return (comp_t)a.scalar_f[operand];
#endif
    }
    return (comp_t)(reinterpret_cast<const T*>(a.ptr[operand])[offset]);
}

template <typename Args>
__device__ inline out_t gk_apply(const Args& a, gk_i64 off1, gk_i64 off2, gk_i64 off3) {
#if GK_NIN == 1
    (void)off2;
    (void)off3;
    return (out_t)GK_OP()(gk_read<GK_IN0_T, GK_SCALAR0>(a, 1, off1));
#elif GK_NIN == 2
    (void)off3;
    return (out_t)GK_OP()(gk_read<GK_IN0_T, GK_SCALAR0>(a, 1, off1),
                          gk_read<GK_IN1_T, GK_SCALAR1>(a, 2, off2));
#else
    return (out_t)GK_OP()(gk_read<GK_IN0_T, GK_SCALAR0>(a, 1, off1),
                          gk_read<GK_IN1_T, GK_SCALAR1>(a, 2, off2),
                          gk_read<GK_IN2_T, GK_SCALAR2>(a, 3, off3));
#endif
}

#define GK_VEC 4

template <typename T>
struct alignas(sizeof(T) * GK_VEC) gk_vec {
    T v[GK_VEC];
};

template <typename T, int IS_SCALAR>
__device__ inline void gk_read_vec(const gk_ew_contig_args& a, int operand, gk_i64 i, comp_t* out) {
    if (IS_SCALAR) {
        const comp_t s = gk_read<T, 1>(a, operand, 0);
        for (int k = 0; k < GK_VEC; ++k) out[k] = s;
    } else {
        const gk_vec<T> v = reinterpret_cast<const gk_vec<T>*>(a.ptr[operand])[i / GK_VEC];
        for (int k = 0; k < GK_VEC; ++k) out[k] = (comp_t)v.v[k];
    }
}

#if GK_NIN <= 2  // the contiguous kernel serves one or two inputs
// Whether every array operand can be read and written GK_VEC elements at a time.
__device__ inline bool gk_vector_aligned(const gk_ew_contig_args& a) {
    bool ok = a.ptr[0] % (sizeof(out_t) * GK_VEC) == 0;
    if (!GK_SCALAR0) ok = ok && a.ptr[1] % (sizeof(GK_IN0_T) * GK_VEC) == 0;
#if GK_NIN > 1
    if (!GK_SCALAR1) ok = ok && a.ptr[2] % (sizeof(GK_IN1_T) * GK_VEC) == 0;
#endif
    return ok;
}

GK_KERNEL void gk_ew_contig(const gk_ew_contig_args a) {
    const gk_i64 n = a.n;
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    const gk_i64 first = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x;
    const gk_i64 nvec = gk_vector_aligned(a) ? n / GK_VEC : 0;
    for (gk_i64 v = first; v < nvec; v += step) {
        const gk_i64 i = v * GK_VEC;
        comp_t x[GK_VEC];
        gk_read_vec<GK_IN0_T, GK_SCALAR0>(a, 1, i, x);
        gk_vec<out_t> r;
#if GK_NIN == 1
        for (int k = 0; k < GK_VEC; ++k) r.v[k] = (out_t)GK_OP()(x[k]);
#else
        comp_t y[GK_VEC];
        gk_read_vec<GK_IN1_T, GK_SCALAR1>(a, 2, i, y);
        for (int k = 0; k < GK_VEC; ++k) r.v[k] = (out_t)GK_OP()(x[k], y[k]);
#endif
        reinterpret_cast<gk_vec<out_t>*>(a.ptr[0])[v] = r;
    }
    out_t* out = reinterpret_cast<out_t*>(a.ptr[0]);
    for (gk_i64 i = nvec * GK_VEC + first; i < n; i += step) out[i] = gk_apply(a, i, i, i);
}

#endif

GK_KERNEL void gk_ew_strided(const gk_ew_args a) {
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
        gk_i64 rem = i, off0 = 0, off1 = 0, off2 = 0, off3 = 0;
        for (int d = a.ndim - 1; d >= 0; --d) {
            const gk_i64 idx = rem % a.shape[d];
            rem /= a.shape[d];
            off0 += idx * a.stride[0][d];
            off1 += idx * a.stride[1][d];
            off2 += idx * a.stride[2][d];
            off3 += idx * a.stride[3][d];
        }
        reinterpret_cast<out_t*>(a.ptr[0])[off0] = gk_apply(a, off1, off2, off3);
    }
}
