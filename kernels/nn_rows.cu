// gpukit.nn row kernels: softmax, log_softmax, layer_norm, rms_norm along one axis, and the norms'
// fused residual form (h = x + residual is written out and normalized). Defines: GK_T (input and
// output), GK_ACC_T (float for 16-bit floats, else GK_T), GK_VECS (16-byte vectors of the row
// each thread holds in registers; 0: rows too long for that).
// gk_<kind>_rows: a group of threads per row (a warp, or the whole block: args.group). With
//   GK_VECS > 0 the group holds the row in registers: one read, exact two-pass statistics from
//   the registers, one write. With GK_VECS == 0 it streams the row twice: one-pass statistics
//   (a running max and sum of exponentials; sums shifted by the row's first element), then the
//   output, the second read mostly from L1 or L2.
// gk_<kind>_rows_staged: a block per row, the row (and its residual) first copied whole into
//   dynamic shared memory (every load in flight at once, no registers held), then the streamed
//   statistics and output read it from there.
// gk_<kind>_split_stats / gk_<kind>_split_apply: a row cut into args.splits pieces, a block per
//   piece: the pieces' statistics go to args.partial, then every piece merges its row's in order
//   and writes its output. For very long rows that are too few to fill the GPU otherwise.
// Statistics are merged in a fixed order, so results are the same bits on every run.
#include "args.cuh"
#include "staging.cuh"
#include "vec_convert.cuh"

typedef GK_T T;
typedef GK_ACC_T acc_t;
#ifndef GK_VECS
#define GK_VECS 0
#endif
// 16-byte loads in flight per thread while the statistics stream (a multiple of 4): 8 for 16-bit
// elements (fewer registers a vector once widened); 4 for wider ones, whose 512-thread blocks
// would fit one to an SM with 8 (measured slower). GK_ROWS_WRITE_BATCH: per step of the output.
#define GK_ROWS_BATCH (sizeof(T) == 2 ? 8 : 4)
#define GK_ROWS_WRITE_BATCH 2
// The staged kernel's output reads the row from shared memory: a batch of 1 holds fewer registers
// (more blocks per SM) and measured faster for the norms, whose weight and bias loads it waits on.
#define GK_ROWS_STAGED_WRITE_BATCH 1

static const int GK_V = gk_vec16<T>::N;
typedef gk_vec16<T> vec_t;

enum { GK_SOFTMAX, GK_LOG_SOFTMAX, GK_LAYER_NORM, GK_RMS_NORM };

__device__ inline bool gk_aligned16(const void* p) {
    return reinterpret_cast<gk_u64>(p) % GK_VEC_BYTES == 0;
}

__device__ inline acc_t gk_nan_max(acc_t a, acc_t b) { return (b != b || b > a) ? b : a; }

// The sum (or max) over a row's group of G threads; every thread gets the same bits.
template <bool MAX>
__device__ inline acc_t gk_group_fold(acc_t v, int G) {
    for (int m = GK_LANES / 2; m > 0; m /= 2) {
        const acc_t o = gk_shfl_xor(v, m);
        v = MAX ? gk_nan_max(v, o) : v + o;
    }
    if (G > GK_LANES) {
        __shared__ acc_t part[32];
        const int nw = blockDim.x / GK_LANES;
        __syncthreads();  // part[] may still be read by the previous fold
        if (threadIdx.x % GK_LANES == 0) part[threadIdx.x / GK_LANES] = v;
        __syncthreads();
        v = part[0];
        for (int w = 1; w < nw; ++w) v = MAX ? gk_nan_max(v, part[w]) : v + part[w];
    }
    return v;
}

// One row's pointers. res_out has out's layout.
struct gk_row {
    const T* in;
    T* out;
    const T* res;
    T* res_out;
    const T* w;
    const T* b;
    gk_i64 n, in_step, out_step, res_step;
    bool vec;  // 16-byte accesses everywhere (contiguous, aligned, n a multiple of GK_V)
};

__device__ inline gk_row gk_row_at(const gk_rows_args& a, gk_i64 row) {
    gk_row r;
    const gk_i64 out_off = gk_nd_offset(row, a.row_ndim, a.row_shape, a.out_row_stride);
    r.in = reinterpret_cast<const T*>(a.in) +
           gk_nd_offset(row, a.row_ndim, a.row_shape, a.in_row_stride);
    r.out = reinterpret_cast<T*>(a.out) + out_off;
    r.res = nullptr;
    r.res_out = nullptr;
    if (a.residual) {
        r.res = reinterpret_cast<const T*>(a.residual) +
                gk_nd_offset(row, a.row_ndim, a.row_shape, a.res_row_stride);
        r.res_out = reinterpret_cast<T*>(a.residual_out) + out_off;
    }
    r.w = reinterpret_cast<const T*>(a.weight);
    r.b = reinterpret_cast<const T*>(a.bias);
    r.n = a.n;
    r.in_step = a.in_step;
    r.out_step = a.out_step;
    r.res_step = a.res_step;
    r.vec = a.in_step == 1 && a.out_step == 1 && a.n % GK_V == 0 && gk_aligned16(r.in) &&
            gk_aligned16(r.out) && (!r.w || gk_aligned16(r.w)) && (!r.b || gk_aligned16(r.b)) &&
            (!r.res || (a.res_step == 1 && gk_aligned16(r.res) && gk_aligned16(r.res_out)));
    return r;
}

// The row r as staged in shared memory at s (contiguous, 16-byte aligned): its input there, with
// the residual already added.
__device__ inline gk_row gk_row_staged(const gk_row& r, const T* s) {
    gk_row g = r;
    g.in = s;
    g.res = nullptr;
    g.res_out = nullptr;
    g.in_step = 1;
    g.vec = r.out_step == 1 && r.n % GK_V == 0 && gk_aligned16(r.out) &&
            (!r.w || gk_aligned16(r.w)) && (!r.b || gk_aligned16(r.b));
    return g;
}

__device__ inline T gk_add_residual(T x, T r) { return (T)((acc_t)x + (acc_t)r); }

// Derived statistics a kind's output needs: softmax (a: max, b: 1 / sum), log_softmax (a: max,
// b: log sum), layer_norm (c: shift, a: mean of x - c, b: 1 / std), rms_norm (b: 1 / rms).
struct gk_prep {
    acc_t a, b, c;
};

// The output before weight and bias.
template <int KIND>
__device__ inline acc_t gk_apply(const gk_prep& p, acc_t x) {
    if (KIND == GK_SOFTMAX) return gkm_exp(x - p.a) * p.b;
    // (x - m) - log(s), not x - (m + log(s)): m + log(s) would round at m's scale.
    if (KIND == GK_LOG_SOFTMAX) return (x - p.a) - p.b;
    // Likewise the shift and the mean are not added first.
    if (KIND == GK_LAYER_NORM) return ((x - p.c) - p.a) * p.b;
    return x * p.b;
}

// y = f(x) * weight + bias, element by element.
__device__ inline acc_t gk_affine(const gk_row& r, gk_i64 i, acc_t y) {
    if (r.w && r.b) return gkm_fma(y, (acc_t)r.w[i], (acc_t)r.b[i]);
    if (r.w) y *= (acc_t)r.w[i];
    if (r.b) y += (acc_t)r.b[i];
    return y;
}

// ---------------------------------------------------------------------------------------------
// The row in registers: thread `first` of G holds vectors j * G + first, j < GK_VECS.

#if GK_VECS > 0
template <int KIND>
__device__ inline void gk_rows_regs(const gk_rows_args& a) {
    const int K = GK_VECS;
    const int G = a.group;
    const int first = threadIdx.x % G;
    const gk_i64 row = (gk_i64)blockIdx.x * (blockDim.x / G) + threadIdx.x / G;
    if (row >= a.n_rows) return;  // the same for a whole group
    const gk_row r = gk_row_at(a, row);
    const gk_i64 n = r.n;
    vec_t h[K];
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const gk_i64 vi = (gk_i64)j * G + first;
        if (r.vec) {
            if (vi * GK_V < n) h[j] = reinterpret_cast<const vec_t*>(r.in)[vi];
        } else {
#pragma unroll
            for (int k = 0; k < GK_V; ++k) {
                const gk_i64 i = vi * GK_V + k;
                if (i < n) h[j].v[k] = r.in[i * r.in_step];
            }
        }
    }
    if (r.res) {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const gk_i64 vi = (gk_i64)j * G + first;
            if (r.vec) {
                if (vi * GK_V < n) {
                    const vec_t rv = reinterpret_cast<const vec_t*>(r.res)[vi];
#pragma unroll
                    for (int k = 0; k < GK_V; ++k) h[j].v[k] = gk_add_residual(h[j].v[k], rv.v[k]);
                    reinterpret_cast<vec_t*>(r.res_out)[vi] = h[j];
                }
            } else {
#pragma unroll
                for (int k = 0; k < GK_V; ++k) {
                    const gk_i64 i = vi * GK_V + k;
                    if (i < n) {
                        h[j].v[k] = gk_add_residual(h[j].v[k], r.res[i * r.res_step]);
                        r.res_out[i * r.out_step] = h[j].v[k];
                    }
                }
            }
        }
    }
#define GK_EACH(BODY)                                      \
    _Pragma("unroll") for (int j = 0; j < K; ++j) {        \
        _Pragma("unroll") for (int k = 0; k < GK_V; ++k) { \
            if (((gk_i64)j * G + first) * GK_V + k < n) {  \
                const acc_t x = (acc_t)h[j].v[k];          \
                BODY;                                      \
            }                                              \
        }                                                  \
    }
    gk_prep p;
    p.c = (acc_t)0;
    if (KIND == GK_SOFTMAX || KIND == GK_LOG_SOFTMAX) {
        acc_t m = -(acc_t)GK_INF_F;
        GK_EACH(m = gk_nan_max(m, x));
        m = gk_group_fold<true>(m, G);
        acc_t s = (acc_t)0;
        GK_EACH(s += gkm_exp(x - m));
        s = gk_group_fold<false>(s, G);
        p.a = m;
        p.b = KIND == GK_SOFTMAX ? (acc_t)1 / s : gkm_log(s);
    } else if (KIND == GK_LAYER_NORM) {
        acc_t s = (acc_t)0;
        GK_EACH(s += x);
        const acc_t mean = gk_group_fold<false>(s, G) / (acc_t)n;
        acc_t q = (acc_t)0;
        GK_EACH(q += (x - mean) * (x - mean));
        const acc_t var = gk_group_fold<false>(q, G) / (acc_t)n;
        p.a = mean;
        p.b = gkm_rsqrt(var + (acc_t)a.eps);
    } else {
        acc_t q = (acc_t)0;
        GK_EACH(q += x * x);
        p.a = (acc_t)0;
        p.b = gkm_rsqrt(gk_group_fold<false>(q, G) / (acc_t)n + (acc_t)a.eps);
    }
#undef GK_EACH
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const gk_i64 vi = (gk_i64)j * G + first;
        if (r.vec) {
            if (vi * GK_V >= n) continue;
            vec_t wv, bv, y;
            if (r.w) wv = reinterpret_cast<const vec_t*>(r.w)[vi];
            if (r.b) bv = reinterpret_cast<const vec_t*>(r.b)[vi];
#pragma unroll
            for (int k = 0; k < GK_V; ++k) {
                const acc_t v = gk_apply<KIND>(p, (acc_t)h[j].v[k]);
                if (r.w && r.b) {
                    y.v[k] = (T)gkm_fma(v, (acc_t)wv.v[k], (acc_t)bv.v[k]);
                } else {
                    y.v[k] = (T)(r.w ? v * (acc_t)wv.v[k] : r.b ? v + (acc_t)bv.v[k] : v);
                }
            }
            reinterpret_cast<vec_t*>(r.out)[vi] = y;
        } else {
#pragma unroll
            for (int k = 0; k < GK_V; ++k) {
                const gk_i64 i = vi * GK_V + k;
                if (i < n) {
                    r.out[i * r.out_step] = (T)gk_affine(r, i, gk_apply<KIND>(p, (acc_t)h[j].v[k]));
                }
            }
        }
    }
}
#endif

// ---------------------------------------------------------------------------------------------
// Streaming: one-pass statistics per thread (sums and maxima: nothing divides per element),
// added a batch of loads at a time and merged over the group in a fixed order.

struct gk_softmax_stats {  // running max m and sum s of exp(x - m)
    acc_t m, s;
    __device__ static gk_softmax_stats init() { return {-(acc_t)GK_INF_F, (acc_t)0}; }
    // One rescale per batch: the batch's max first, then its exponentials.
    template <int N>
    __device__ void add(const acc_t (&x)[N], int count, acc_t) {
        acc_t mb = -(acc_t)GK_INF_F;
        for (int i = 0; i < N; ++i) {
            if (i < count) mb = gk_nan_max(mb, x[i]);
        }
        if (mb != mb || mb > m) {
            if (m != -(acc_t)GK_INF_F) s *= gkm_exp(m - mb);  // NaN stays NaN
            m = mb;
        }
        if (m == -(acc_t)GK_INF_F) return;  // nothing but -inf so far
        for (int i = 0; i < N; ++i) {
            if (i < count) s += gkm_exp(x[i] - m);
        }
    }
    __device__ static gk_softmax_stats merge(gk_softmax_stats p, gk_softmax_stats q) {
        const acc_t m = gk_nan_max(p.m, q.m);
        if (m == -(acc_t)GK_INF_F) return {m, (acc_t)0};
        return {m, p.s * gkm_exp(p.m - m) + q.s * gkm_exp(q.m - m)};
    }
    __device__ gk_softmax_stats shfl_xor(int lane_mask) const {
        return {gk_shfl_xor(m, lane_mask), gk_shfl_xor(s, lane_mask)};
    }
};

struct gk_shifted_stats {  // sums of d = x - x0 and of d * d, x0 the row's first element
    acc_t s1, s2;
    __device__ static gk_shifted_stats init() { return {(acc_t)0, (acc_t)0}; }
    template <int N>
    __device__ void add(const acc_t (&x)[N], int count, acc_t x0) {
        for (int i = 0; i < N; ++i) {
            if (i < count) {
                const acc_t d = x[i] - x0;
                s1 += d;
                s2 += d * d;
            }
        }
    }
    __device__ static gk_shifted_stats merge(gk_shifted_stats p, gk_shifted_stats q) {
        return {p.s1 + q.s1, p.s2 + q.s2};
    }
    __device__ gk_shifted_stats shfl_xor(int lane_mask) const {
        return {gk_shfl_xor(s1, lane_mask), gk_shfl_xor(s2, lane_mask)};
    }
};

struct gk_square_stats {  // sum of squares
    acc_t q;
    __device__ static gk_square_stats init() { return {(acc_t)0}; }
    template <int N>
    __device__ void add(const acc_t (&x)[N], int count, acc_t) {
        for (int i = 0; i < N; ++i) {
            if (i < count) q += x[i] * x[i];
        }
    }
    __device__ static gk_square_stats merge(gk_square_stats p, gk_square_stats q) {
        return {p.q + q.q};
    }
    __device__ gk_square_stats shfl_xor(int lane_mask) const { return {gk_shfl_xor(q, lane_mask)}; }
};

template <int KIND>
struct gk_stats_of {
    typedef gk_softmax_stats type;
};
template <>
struct gk_stats_of<GK_LAYER_NORM> {
    typedef gk_shifted_stats type;
};
template <>
struct gk_stats_of<GK_RMS_NORM> {
    typedef gk_square_stats type;
};

template <int KIND, typename S>
__device__ inline gk_prep gk_prepare(const S& s, gk_i64 n, double eps, acc_t x0) {
    gk_prep p;
    p.c = (acc_t)0;
    if constexpr (KIND == GK_SOFTMAX) {
        p.a = s.m;
        p.b = (acc_t)1 / s.s;
    } else if constexpr (KIND == GK_LOG_SOFTMAX) {
        p.a = s.m;
        p.b = gkm_log(s.s);
    } else if constexpr (KIND == GK_LAYER_NORM) {
        const acc_t mean = s.s1 / (acc_t)n;
        const acc_t var = s.s2 / (acc_t)n - mean * mean;
        p.c = x0;
        p.a = mean;
        // Rounding can leave var just below 0; NaN (a NaN or an infinity in the row) stays NaN.
        p.b = gkm_rsqrt((var < (acc_t)0 ? (acc_t)0 : var) + (acc_t)eps);
    } else {
        p.a = (acc_t)0;
        p.b = gkm_rsqrt(s.q / (acc_t)n + (acc_t)eps);
    }
    return p;
}

// The row's first element, as the statistics see it (h when there is a residual).
template <int KIND>
__device__ inline acc_t gk_shift(const gk_row& r) {
    if (KIND != GK_LAYER_NORM) return (acc_t)0;
    return (acc_t)(r.res ? gk_add_residual(r.in[0], r.res[0]) : r.in[0]);
}

// The merge over a group of G threads (a warp, or the block); every thread gets the same bits:
// each pair is merged lower lane first, the warps in order.
template <typename S>
__device__ inline S gk_group_merge(S v, int G) {
    const int lane = threadIdx.x % GK_LANES;
    for (int m = GK_LANES / 2; m > 0; m /= 2) {
        const S o = v.shfl_xor(m);
        v = (lane & m) ? S::merge(o, v) : S::merge(v, o);
    }
    if (G > GK_LANES) {
        __shared__ S part[32];
        __syncthreads();
        if (lane == 0) part[threadIdx.x / GK_LANES] = v;
        __syncthreads();
        v = part[0];
        for (int w = 1; w < (int)blockDim.x / GK_LANES; ++w) v = S::merge(v, part[w]);
    }
    return v;
}

// Adds the elements [lo, hi) of the row that thread `first` of G serves (lo and hi multiples of
// GK_V, or hi == n) to s, GK_ROWS_BATCH 16-byte loads in flight (added four at a time, as with
// fewer in flight: the same bits); with a residual, the elements are h = in + residual, also
// written to residual_out.
template <typename S>
__device__ inline void gk_row_stream(const gk_row& r, gk_i64 lo, gk_i64 hi, int first, int G, S& s,
                                     acc_t x0) {
    if (r.vec) {
        const vec_t* vin = reinterpret_cast<const vec_t*>(r.in);
        const vec_t* vres = reinterpret_cast<const vec_t*>(r.res);
        vec_t* vres_out = reinterpret_cast<vec_t*>(r.res_out);
        const gk_i64 v1 = hi / GK_V;
        gk_i64 v = lo / GK_V + first;
        constexpr int B = GK_ROWS_BATCH;
        static_assert(B % 4 == 0, "loads are added four at a time");
        for (; v + (B - 1) * G < v1; v += B * G) {
            vec_t x[B];
            for (int u = 0; u < B; ++u) x[u] = vin[v + u * G];
            if (r.res) {
                vec_t rv[B];
                for (int u = 0; u < B; ++u) rv[u] = vres[v + u * G];
                for (int u = 0; u < B; ++u) {
                    for (int k = 0; k < GK_V; ++k)
                        x[u].v[k] = gk_add_residual(x[u].v[k], rv[u].v[k]);
                    vres_out[v + u * G] = x[u];
                }
            }
            for (int q = 0; q < B; q += 4) {
                acc_t xs[4][GK_V];
                for (int u = 0; u < 4; ++u) gk_widen(x[q + u], xs[u]);
                s.add(reinterpret_cast<acc_t(&)[4 * GK_V]>(xs), 4 * GK_V, x0);
            }
        }
        for (; v + 3 * G < v1; v += 4 * G) {
            vec_t x[4];
            for (int u = 0; u < 4; ++u) x[u] = vin[v + u * G];
            if (r.res) {
                vec_t rv[4];
                for (int u = 0; u < 4; ++u) rv[u] = vres[v + u * G];
                for (int u = 0; u < 4; ++u) {
                    for (int k = 0; k < GK_V; ++k)
                        x[u].v[k] = gk_add_residual(x[u].v[k], rv[u].v[k]);
                    vres_out[v + u * G] = x[u];
                }
            }
            acc_t xs[4][GK_V];
            for (int u = 0; u < 4; ++u) gk_widen(x[u], xs[u]);
            s.add(reinterpret_cast<acc_t(&)[4 * GK_V]>(xs), 4 * GK_V, x0);
        }
        for (; v < v1; v += G) {
            vec_t x = vin[v];
            if (r.res) {
                const vec_t rv = vres[v];
                for (int k = 0; k < GK_V; ++k) x.v[k] = gk_add_residual(x.v[k], rv.v[k]);
                vres_out[v] = x;
            }
            acc_t xs[GK_V];
            gk_widen(x, xs);
            s.add(xs, GK_V, x0);
        }
    } else {
        for (gk_i64 i = lo + first; i < hi; i += 4 * G) {
            acc_t xs[4];
            int count = 0;
            for (int u = 0; u < 4; ++u) {
                const gk_i64 at = i + u * G;
                if (at < hi) {
                    T x = r.in[at * r.in_step];
                    if (r.res) {
                        x = gk_add_residual(x, r.res[at * r.res_step]);
                        r.res_out[at * r.out_step] = x;
                    }
                    xs[u] = (acc_t)x;
                    count = u + 1;
                }
            }
            s.add(xs, count, x0);
        }
    }
}

// f(x) * w + b of one vector, weight and bias (when HAS_W, HAS_B) in one rounding when both are
// given, as gk_affine.
template <int KIND, bool HAS_W, bool HAS_B>
__device__ inline vec_t gk_apply_vec(const gk_prep& p, const vec_t& x, const vec_t& w,
                                     const vec_t& b) {
    acc_t y[GK_V], wf[GK_V], bf[GK_V];
    gk_widen(x, y);
    if (HAS_W) gk_widen(w, wf);
    if (HAS_B) gk_widen(b, bf);
#pragma unroll
    for (int k = 0; k < GK_V; ++k) {
        const acc_t t = gk_apply<KIND>(p, y[k]);
        y[k] = HAS_W && HAS_B ? gkm_fma(t, wf[k], bf[k])
               : HAS_W        ? t * wf[k]
               : HAS_B        ? t + bf[k]
                              : t;
    }
    return gk_narrow<T>(y);
}

// The output for vectors [v0, v1) of a vec row, from src.
template <int KIND, int W, bool HAS_W, bool HAS_B>
__device__ inline void gk_row_write_vec(const gk_row& r, const vec_t* src, gk_i64 v0, gk_i64 v1,
                                        int G, const gk_prep& p) {
    const vec_t* w = reinterpret_cast<const vec_t*>(r.w);
    const vec_t* b = reinterpret_cast<const vec_t*>(r.b);
    vec_t* out = reinterpret_cast<vec_t*>(r.out);
    gk_i64 v = v0;
    for (; v + (W - 1) * G < v1; v += W * G) {
        vec_t x[W], wv[W], bv[W];
        for (int u = 0; u < W; ++u) x[u] = src[v + u * G];
        if (HAS_W) {
            for (int u = 0; u < W; ++u) wv[u] = w[v + u * G];
        }
        if (HAS_B) {
            for (int u = 0; u < W; ++u) bv[u] = b[v + u * G];
        }
        for (int u = 0; u < W; ++u)
            out[v + u * G] = gk_apply_vec<KIND, HAS_W, HAS_B>(p, x[u], wv[u], bv[u]);
    }
    for (; v < v1; v += G) {
        vec_t wv, bv;
        if (HAS_W) wv = w[v];
        if (HAS_B) bv = b[v];
        out[v] = gk_apply_vec<KIND, HAS_W, HAS_B>(p, src[v], wv, bv);
    }
}

// The output for elements [lo, hi) of the row, from h (residual_out) when there is a residual;
// W vectors a thread per step.
template <int KIND, int W = GK_ROWS_WRITE_BATCH>
__device__ inline void gk_row_write(const gk_row& r, gk_i64 lo, gk_i64 hi, int first, int G,
                                    const gk_prep& p) {
    const T* src = r.res ? r.res_out : r.in;
    const gk_i64 src_step = r.res ? r.out_step : r.in_step;
    if (r.vec) {
        const vec_t* vsrc = reinterpret_cast<const vec_t*>(src);
        const gk_i64 v0 = lo / GK_V + first, v1 = hi / GK_V;
        if (KIND == GK_SOFTMAX || KIND == GK_LOG_SOFTMAX) {
            gk_row_write_vec<KIND, W, false, false>(r, vsrc, v0, v1, G, p);
        } else if (r.w && r.b) {
            gk_row_write_vec<KIND, W, true, true>(r, vsrc, v0, v1, G, p);
        } else if (r.w) {
            gk_row_write_vec<KIND, W, true, false>(r, vsrc, v0, v1, G, p);
        } else if (r.b) {
            gk_row_write_vec<KIND, W, false, true>(r, vsrc, v0, v1, G, p);
        } else {
            gk_row_write_vec<KIND, W, false, false>(r, vsrc, v0, v1, G, p);
        }
    } else {
        for (gk_i64 i = lo + first; i < hi; i += G) {
            r.out[i * r.out_step] = (T)gk_affine(r, i, gk_apply<KIND>(p, (acc_t)src[i * src_step]));
        }
    }
}

template <int KIND>
__device__ inline void gk_rows_stream(const gk_rows_args& a) {
    typedef typename gk_stats_of<KIND>::type S;
    const int G = a.group;
    const int first = threadIdx.x % G;
    const gk_i64 row = (gk_i64)blockIdx.x * (blockDim.x / G) + threadIdx.x / G;
    if (row >= a.n_rows) return;  // the same for a whole group
    const gk_row r = gk_row_at(a, row);
    const acc_t x0 = gk_shift<KIND>(r);
    S s = S::init();
    gk_row_stream(r, 0, r.n, first, G, s, x0);
    if (G <= GK_LANES) gk_syncwarp();  // h written by the group is read back (blocks: the merge)
    s = gk_group_merge(s, G);
    gk_row_write<KIND>(r, 0, r.n, first, G, gk_prepare<KIND>(s, r.n, a.eps, x0));
}

// A block per row (args.group == blockDim.x), staged in dynamic shared memory: n elements (and
// n more for the residual when the row is vec). Vec rows are copied vector by vector by the
// threads that read them back in the passes (v = first + k * G), so no barrier is needed.
template <int KIND>
__device__ inline void gk_rows_staged(const gk_rows_args& a) {
    typedef typename gk_stats_of<KIND>::type S;
    const int G = blockDim.x, first = threadIdx.x;
    const gk_row r = gk_row_at(a, blockIdx.x);
    T* s = reinterpret_cast<T*>(gk_shared_dynamic());
    const gk_i64 n = r.n;
    if (r.vec) {
        vec_t* sx = reinterpret_cast<vec_t*>(s);
        vec_t* sr = sx + n / GK_V;
        const vec_t* vin = reinterpret_cast<const vec_t*>(r.in);
        const vec_t* vres = reinterpret_cast<const vec_t*>(r.res);
        for (gk_i64 v = first; v < n / GK_V; v += G) {
            gk_copy16(&sx[v], &vin[v]);
            if (r.res) gk_copy16(&sr[v], &vres[v]);
        }
        gk_copy_wait();
        if (r.res) {
            vec_t* vres_out = reinterpret_cast<vec_t*>(r.res_out);
            for (gk_i64 v = first; v < n / GK_V; v += G) {
                vec_t h = sx[v];
                const vec_t rv = sr[v];
                for (int k = 0; k < GK_V; ++k) h.v[k] = gk_add_residual(h.v[k], rv.v[k]);
                sx[v] = h;
                vres_out[v] = h;
            }
        }
    } else {
        for (gk_i64 i = first; i < n; i += G) {
            T x = r.in[i * r.in_step];
            if (r.res) {
                x = gk_add_residual(x, r.res[i * r.res_step]);
                r.res_out[i * r.out_step] = x;
            }
            s[i] = x;
        }
        __syncthreads();
    }
    const gk_row g = gk_row_staged(r, s);
    const acc_t x0 = gk_shift<KIND>(r);
    S st = S::init();
    gk_row_stream(g, 0, n, first, G, st, x0);
    st = gk_group_merge(st, G);
    gk_row_write<KIND, GK_ROWS_STAGED_WRITE_BATCH>(g, 0, n, first, G,
                                                   gk_prepare<KIND>(st, n, a.eps, x0));
}

template <int KIND>
__device__ inline void gk_rows_split_stats(const gk_rows_args& a) {
    typedef typename gk_stats_of<KIND>::type S;
    const gk_i64 row = blockIdx.x / a.splits, piece = blockIdx.x % a.splits;
    const gk_row r = gk_row_at(a, row);
    const gk_i64 lo = piece * a.chunk, hi = lo + a.chunk < r.n ? lo + a.chunk : r.n;
    S s = S::init();
    gk_row_stream(r, lo, hi, threadIdx.x, blockDim.x, s, gk_shift<KIND>(r));
    s = gk_group_merge(s, blockDim.x);
    if (threadIdx.x == 0) reinterpret_cast<S*>(a.partial)[blockIdx.x] = s;
}

template <int KIND>
__device__ inline void gk_rows_split_apply(const gk_rows_args& a) {
    typedef typename gk_stats_of<KIND>::type S;
    static_assert(sizeof(S) <= GK_ROWS_STATE_BYTES, "statistics must fit GK_ROWS_STATE_BYTES");
    const gk_i64 row = blockIdx.x / a.splits, piece = blockIdx.x % a.splits;
    const gk_row r = gk_row_at(a, row);
    const gk_i64 lo = piece * a.chunk, hi = lo + a.chunk < r.n ? lo + a.chunk : r.n;
    const S* part = reinterpret_cast<const S*>(a.partial) + row * a.splits;
    S s = part[0];
    for (int k = 1; k < a.splits; ++k) s = S::merge(s, part[k]);
    gk_row_write<KIND>(r, lo, hi, threadIdx.x, blockDim.x,
                       gk_prepare<KIND>(s, r.n, a.eps, gk_shift<KIND>(r)));
}

#if GK_VECS > 0
#define GK_ROWS_BODY gk_rows_regs
#else
#define GK_ROWS_BODY gk_rows_stream
#endif

#define GK_ROW_KERNELS(NAME, KIND)                                                                 \
    GK_KERNEL void __launch_bounds__(GK_ROWS_MAX_THREADS) gk_##NAME##_rows(const gk_rows_args a) { \
        GK_ROWS_BODY<KIND>(a);                                                                     \
    }                                                                                              \
    GK_KERNEL void __launch_bounds__(GK_ROWS_MAX_THREADS)                                          \
        gk_##NAME##_rows_staged(const gk_rows_args a) {                                            \
        gk_rows_staged<KIND>(a);                                                                   \
    }                                                                                              \
    GK_KERNEL void __launch_bounds__(GK_ROWS_MAX_THREADS)                                          \
        gk_##NAME##_split_stats(const gk_rows_args a) {                                            \
        gk_rows_split_stats<KIND>(a);                                                              \
    }                                                                                              \
    GK_KERNEL void __launch_bounds__(GK_ROWS_MAX_THREADS)                                          \
        gk_##NAME##_split_apply(const gk_rows_args a) {                                            \
        gk_rows_split_apply<KIND>(a);                                                              \
    }

GK_ROW_KERNELS(softmax, GK_SOFTMAX)
GK_ROW_KERNELS(log_softmax, GK_LOG_SOFTMAX)
GK_ROW_KERNELS(layer_norm, GK_LAYER_NORM)
GK_ROW_KERNELS(rms_norm, GK_RMS_NORM)
