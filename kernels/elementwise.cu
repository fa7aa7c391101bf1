// Elementwise operations with broadcasting, instantiated per use. The operation is the functor
// gk_op, generated from gpukit's op table (gpukit/runtime/ops.py) into the source ahead of this
// file: `template <typename T> __device__ auto operator()(T a, ...) const { return EXPR; }`,
// applied in GK_COMP_T. Defines:
//   GK_NIN       number of inputs (1 to 3; gk_ew_contig serves up to 2)
//   GK_OUT_T, GK_COMP_T, GK_IN0_T, GK_IN1_T, GK_IN2_T   element types
//   GK_LOOP_T    the stored type of NumPy's loop dtype (what nextafter steps in)
//   GK_SCALAR0..2 1 where that input is a scalar held in the argument block
//   GK_SCALAR_INT            1 to read scalars from scalar_i (integer compute types); else
//                            scalar_f (and scalar_im, the imaginary part, for complex ones)
// Conversions are NumPy's casts (gk_cast: complex to real keeps the real part).
// gk_ew_contig serves contiguous operands (16-byte loads when aligned), gk_ew_strided any strides.
#include "args.cuh"
#include "compat.cuh"

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
        return gk_from_parts<comp_t>(a.scalar_f[operand], a.scalar_im[operand]);
#endif
    }
    return gk_cast<comp_t>(reinterpret_cast<const T*>(a.ptr[operand])[offset]);
}

template <typename Args>
__device__ inline out_t gk_apply(const Args& a, gk_i64 off1, gk_i64 off2, gk_i64 off3) {
#if GK_NIN == 1
    (void)off2;
    (void)off3;
    return gk_cast<out_t>(gk_op()(gk_read<GK_IN0_T, GK_SCALAR0>(a, 1, off1)));
#elif GK_NIN == 2
    (void)off3;
    return gk_cast<out_t>(gk_op()(gk_read<GK_IN0_T, GK_SCALAR0>(a, 1, off1),
                                  gk_read<GK_IN1_T, GK_SCALAR1>(a, 2, off2)));
#else
    return gk_cast<out_t>(gk_op()(gk_read<GK_IN0_T, GK_SCALAR0>(a, 1, off1),
                                  gk_read<GK_IN1_T, GK_SCALAR1>(a, 2, off2),
                                  gk_read<GK_IN2_T, GK_SCALAR2>(a, 3, off3)));
#endif
}

// Elements per vector access: GK_VEC_BYTES of the widest operand (scalars count as the
// compute type's input type).
static const int GK_IN_BYTES = sizeof(GK_IN0_T) > sizeof(GK_IN1_T) ? sizeof(GK_IN0_T)
                                                                   : sizeof(GK_IN1_T);
static const int GK_VEC =
    GK_VEC_BYTES / (GK_IN_BYTES > sizeof(out_t) ? GK_IN_BYTES : sizeof(out_t));

template <typename T>
struct alignas(sizeof(T) * GK_VEC) gk_vec {
    T v[GK_VEC];
};

// One input's vector at a vector index: loaded first, converted when the result is computed.
template <typename T, int IS_SCALAR>
struct gk_in_vec {
    gk_vec<T> raw;
    __device__ void load(const gk_ew_contig_args& a, int operand, gk_i64 v) {
        if (!IS_SCALAR) raw = reinterpret_cast<const gk_vec<T>*>(a.ptr[operand])[v];
    }
    __device__ void get(const gk_ew_contig_args& a, int operand, comp_t* out) const {
        if (IS_SCALAR) {
            const comp_t s = gk_read<T, 1>(a, operand, 0);
            for (int k = 0; k < GK_VEC; ++k) out[k] = s;
        } else {
            for (int k = 0; k < GK_VEC; ++k) out[k] = gk_cast<comp_t>(raw.v[k]);
        }
    }
};

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

// The inputs' vectors at one vector index.
struct gk_in_vecs {
    gk_in_vec<GK_IN0_T, GK_SCALAR0> x;
#if GK_NIN > 1
    gk_in_vec<GK_IN1_T, GK_SCALAR1> y;
#endif
    __device__ void load(const gk_ew_contig_args& a, gk_i64 v) {
        x.load(a, 1, v);
#if GK_NIN > 1
        y.load(a, 2, v);
#endif
    }
    __device__ gk_vec<out_t> result(const gk_ew_contig_args& a) const {
        comp_t xs[GK_VEC];
        x.get(a, 1, xs);
        gk_vec<out_t> r;
#if GK_NIN == 1
        for (int k = 0; k < GK_VEC; ++k) r.v[k] = gk_cast<out_t>(gk_op()(xs[k]));
#else
        comp_t ys[GK_VEC];
        y.get(a, 2, ys);
        for (int k = 0; k < GK_VEC; ++k) r.v[k] = gk_cast<out_t>(gk_op()(xs[k], ys[k]));
#endif
        return r;
    }
};

// GK_EW_UNROLL vectors per thread per step, all their loads issued before the first result.
GK_KERNEL void gk_ew_contig(const gk_ew_contig_args a) {
    const int U = GK_EW_UNROLL;
    const gk_i64 n = a.n;
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    const gk_i64 first = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x;
    const gk_i64 nvec = gk_vector_aligned(a) ? n / GK_VEC : 0;
    gk_vec<out_t>* vout = reinterpret_cast<gk_vec<out_t>*>(a.ptr[0]);
    for (gk_i64 v = first; v < nvec; v += U * step) {
        gk_in_vecs in[U];
        for (int u = 0; u < U; ++u) {
            if (v + u * step < nvec) in[u].load(a, v + u * step);
        }
        for (int u = 0; u < U; ++u) {
            if (v + u * step < nvec) vout[v + u * step] = in[u].result(a);
        }
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
