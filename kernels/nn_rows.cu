// gpukit.nn row kernels: softmax, log_softmax, layer_norm, rms_norm along one axis. A group of
// threads per row (a 32-lane warp for short rows, the whole block for long ones): one pass for
// the row's statistics (online max and sum of exponentials; shifted sum and sum of squares), a
// second that writes, both with 16-byte loads where the row is contiguous and aligned.
// Defines: GK_T (input and output), GK_ACC_T (float for 16-bit floats, else GK_T).
#include "args.cuh"
#include "warp.cuh"

typedef GK_T T;
typedef GK_ACC_T acc_t;

struct gk_pair {
    acc_t a, b;
};

// Combines the pairs of all threads of a row's group (every thread gets the result).
template <typename C>
__device__ inline gk_pair gk_group_reduce(gk_pair v, int group, C combine) {
    for (int m = GK_LANES / 2; m > 0; m /= 2) {
        const gk_pair o{gk_shfl_xor(v.a, m), gk_shfl_xor(v.b, m)};
        v = combine(v, o);
    }
    if (group > GK_LANES) {
        __shared__ gk_pair part[GK_BLOCK / GK_LANES];
        __syncthreads();  // part[] may still be read by the previous row's reduction
        if (threadIdx.x % GK_LANES == 0) part[threadIdx.x / GK_LANES] = v;
        __syncthreads();
        v = part[0];
        for (int w = 1; w < (int)blockDim.x / GK_LANES; ++w) v = combine(v, part[w]);
    }
    return v;
}

__device__ inline bool gk_aligned16(const void* p) { return reinterpret_cast<gk_u64>(p) % 16 == 0; }

// f(i, x) for the row's elements i = first, first + width, ... (x converted to acc_t).
template <typename F>
__device__ inline void gk_visit(const T* row, gk_i64 n, gk_i64 step, int first, int width, F f) {
    const int V = gk_vec16<T>::N;
    if (step == 1 && gk_aligned16(row)) {
        const gk_i64 nv = n / V;
        const gk_vec16<T>* vrow = reinterpret_cast<const gk_vec16<T>*>(row);
        for (gk_i64 v = first; v < nv; v += width) {
            const gk_vec16<T> x = vrow[v];
            for (int k = 0; k < V; ++k) f(v * V + k, (acc_t)x.v[k]);
        }
        for (gk_i64 i = nv * V + first; i < n; i += width) f(i, (acc_t)row[i]);
    } else {
        for (gk_i64 i = first; i < n; i += width) f(i, (acc_t)row[i * step]);
    }
}

// out[i] = f(i, in[i]) over the row.
template <typename F>
__device__ inline void gk_map(const T* in, T* out, gk_i64 n, gk_i64 in_step, gk_i64 out_step,
                              int first, int width, F f) {
    const int V = gk_vec16<T>::N;
    if (in_step == 1 && out_step == 1 && gk_aligned16(in) && gk_aligned16(out)) {
        const gk_i64 nv = n / V;
        for (gk_i64 v = first; v < nv; v += width) {
            const gk_vec16<T> x = reinterpret_cast<const gk_vec16<T>*>(in)[v];
            gk_vec16<T> y;
            for (int k = 0; k < V; ++k) y.v[k] = (T)f(v * V + k, (acc_t)x.v[k]);
            reinterpret_cast<gk_vec16<T>*>(out)[v] = y;
        }
        for (gk_i64 i = nv * V + first; i < n; i += width) out[i] = (T)f(i, (acc_t)in[i]);
    } else {
        for (gk_i64 i = first; i < n; i += width) {
            out[i * out_step] = (T)f(i, (acc_t)in[i * in_step]);
        }
    }
}

// Calls body(in_row, out_row, first, width) for each row this thread's group serves.
template <typename B>
__device__ inline void gk_for_rows(const gk_rows_args& a, B body) {
    const int group = a.group;
    const int rows_per_block = (int)blockDim.x / group;
    const int first = (int)threadIdx.x % group;
    const gk_i64 step = (gk_i64)gridDim.x * rows_per_block;
    const T* in = reinterpret_cast<const T*>(a.in);
    T* out = reinterpret_cast<T*>(a.out);
    for (gk_i64 row = (gk_i64)blockIdx.x * rows_per_block + threadIdx.x / group; row < a.n_rows;
         row += step) {
        const gk_i64 in_off = gk_nd_offset(row, a.row_ndim, a.row_shape, a.in_row_stride);
        const gk_i64 out_off = gk_nd_offset(row, a.row_ndim, a.row_shape, a.out_row_stride);
        body(in + in_off, out + out_off, first, group);
    }
}

template <bool LOG>
__device__ inline void gk_softmax_impl(const gk_rows_args& a) {
    gk_for_rows(a, [&](const T* in, T* out, int first, int width) {
        // Online max m and sum s of exp(x - m).
        gk_pair ms{-(acc_t)GK_INF_F, (acc_t)0};
        gk_visit(in, a.n, a.in_step, first, width, [&](gk_i64, acc_t x) {
            if (x > ms.a) {
                ms.b = ms.b * gkm_exp(ms.a - x) + (acc_t)1;
                ms.a = x;
            } else if (x != -(acc_t)GK_INF_F) {
                ms.b += gkm_exp(x - ms.a);  // NaN stays NaN
            }
        });
        ms = gk_group_reduce(ms, a.group, [](gk_pair p, gk_pair q) {
            const acc_t m = p.a > q.a ? p.a : q.a;
            if (m == -(acc_t)GK_INF_F) return gk_pair{m, (acc_t)0};
            return gk_pair{m, p.b * gkm_exp(p.a - m) + q.b * gkm_exp(q.a - m)};
        });
        const acc_t m = ms.a;
        if (LOG) {
            // (x - m) - log(s), not x - (m + log(s)): m + log(s) would round at m's scale.
            const acc_t log_sum = gkm_log(ms.b);
            gk_map(in, out, a.n, a.in_step, a.out_step, first, width,
                   [&](gk_i64, acc_t x) { return (x - m) - log_sum; });
        } else {
            const acc_t inv = (acc_t)1 / ms.b;
            gk_map(in, out, a.n, a.in_step, a.out_step, first, width,
                   [&](gk_i64, acc_t x) { return gkm_exp(x - m) * inv; });
        }
    });
}

GK_KERNEL void gk_softmax_rows(const gk_rows_args a) { gk_softmax_impl<false>(a); }

GK_KERNEL void gk_log_softmax_rows(const gk_rows_args a) { gk_softmax_impl<true>(a); }

struct gk_add_pairs {
    __device__ gk_pair operator()(gk_pair p, gk_pair q) const {
        return gk_pair{p.a + q.a, p.b + q.b};
    }
};

GK_KERNEL void gk_layer_norm_rows(const gk_rows_args a) {
    const T* weight = reinterpret_cast<const T*>(a.weight);
    const T* bias = reinterpret_cast<const T*>(a.bias);
    gk_for_rows(a, [&](const T* in, T* out, int first, int width) {
        // Sums of (x - x0) and its square, x0 the row's first element: no cancellation when
        // the mean is large against the spread.
        const acc_t x0 = (acc_t)in[0];
        gk_pair sums{(acc_t)0, (acc_t)0};
        gk_visit(in, a.n, a.in_step, first, width, [&](gk_i64, acc_t x) {
            const acc_t d = x - x0;
            sums.a += d;
            sums.b += d * d;
        });
        sums = gk_group_reduce(sums, a.group, gk_add_pairs());
        const acc_t n = (acc_t)a.n;
        const acc_t mean_shift = sums.a / n;
        acc_t var = (sums.b - sums.a * mean_shift) / n;
        var = var > (acc_t)0 ? var : (acc_t)0;
        const acc_t rstd = gkm_rsqrt(var + (acc_t)a.eps);
        gk_map(in, out, a.n, a.in_step, a.out_step, first, width, [&](gk_i64 i, acc_t x) {
            acc_t y = ((x - x0) - mean_shift) * rstd;  // x0 + mean_shift would round at x0's scale
            if (weight) y *= (acc_t)weight[i];
            if (bias) y += (acc_t)bias[i];
            return y;
        });
    });
}

GK_KERNEL void gk_rms_norm_rows(const gk_rows_args a) {
    const T* weight = reinterpret_cast<const T*>(a.weight);
    gk_for_rows(a, [&](const T* in, T* out, int first, int width) {
        gk_pair sums{(acc_t)0, (acc_t)0};
        gk_visit(in, a.n, a.in_step, first, width, [&](gk_i64, acc_t x) { sums.a += x * x; });
        sums = gk_group_reduce(sums, a.group, gk_add_pairs());
        const acc_t inv = gkm_rsqrt(sums.a / (acc_t)a.n + (acc_t)a.eps);
        gk_map(in, out, a.n, a.in_step, a.out_step, first, width, [&](gk_i64 i, acc_t x) {
            acc_t y = x * inv;
            if (weight) y *= (acc_t)weight[i];
            return y;
        });
    });
}
