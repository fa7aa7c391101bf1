// Reductions over any set of axes, instantiated by defines:
//   GK_RED       the reducer: gk_red_sum, gk_red_prod, gk_red_max, gk_red_min, gk_red_argmax,
//                gk_red_argmin, gk_red_var, gk_red_std (any / all are max / min into bool)
//   GK_IN_T, GK_ACC_T, GK_OUT_T   element types (16-bit floats accumulate in float)
// Kernels (the host's plan picks one, and its grid; see gk_reduce_args in args.cuh):
//   gk_red_inner_warp / gk_red_inner_block  a warp or a block per (output, split) piece of the
//       reduced range; 16-byte loads, GK_RED_UNROLL in flight, when the reduced range is contiguous
//   gk_red_outer / gk_red_outer_vec  threads along the outputs, the reduced range over blockDim.y
//       and splits; _vec reads 16 bytes of neighbouring outputs (their kept axis contiguous)
//   gk_red_finish_thread / gk_red_finish_block  combine the splits' partial states
// Every combination happens in an order fixed by the plan, so results are the same bits on every
// run. Sums are trees of partials: loads are added pairwise, a thread's chains are restarted every
// GK_ROUND steps, and threads, warps and splits are merged as trees.
#include "args.cuh"
#include "warp.cuh"

typedef GK_IN_T in_t;
typedef GK_ACC_T acc_t;
typedef GK_OUT_T out_t;

#define GK_U GK_RED_UNROLL
#define GK_ROUND 8  // unrolled steps a thread accumulates before merging them into its total
static_assert(GK_U == 4, "the reducers' lanes() take four loads at a time");

template <typename X>
__device__ inline X gk_xor_any(X v, int m) {
    if constexpr (sizeof(X) < 4) {
        return (X)gk_shfl_xor((int)v, m);
    } else {
        return gk_shfl_xor(v, m);
    }
}

// gk_cast (complex.cuh): the value reducers are compiled in every instance, argmax / argmin over
// complex values (an integer out_t) included.
__device__ inline out_t gk_scaled(acc_t v, double scale) {
    if (scale != 1.0) v = (acc_t)(v * scale);
    return gk_cast<out_t>(v);
}

// A reducer: its state st, init(), add(st&, x, index), merge(a, b), shfl_xor, finish(st, scale),
// and lanes(s, x, i0, du, dk): x[u][k] (index i0 + u * du + k * dk) added into s[k].
struct gk_red_sum {
    typedef acc_t st;
    __device__ static st init() { return (acc_t)0; }
    __device__ static void add(st& s, acc_t x, gk_i64) { s = (acc_t)(s + x); }
    __device__ static st merge(st a, st b) { return (acc_t)(a + b); }
    __device__ static st shfl_xor(st s, int m) { return gk_xor_any(s, m); }
    template <int N>
    __device__ static void lanes(st (&s)[N], const acc_t (&x)[GK_U][N], gk_i64, gk_i64, gk_i64) {
        for (int k = 0; k < N; ++k) {
            const acc_t lo = (acc_t)(x[0][k] + x[1][k]), hi = (acc_t)(x[2][k] + x[3][k]);
            s[k] = (acc_t)(s[k] + (acc_t)(lo + hi));
        }
    }
    __device__ static out_t finish(st s, double scale) { return gk_scaled(s, scale); }
};

struct gk_red_prod {
    typedef acc_t st;
    __device__ static st init() { return (acc_t)1; }
    __device__ static void add(st& s, acc_t x, gk_i64) { s = (acc_t)(s * x); }
    __device__ static st merge(st a, st b) { return (acc_t)(a * b); }
    __device__ static st shfl_xor(st s, int m) { return gk_xor_any(s, m); }
    template <int N>
    __device__ static void lanes(st (&s)[N], const acc_t (&x)[GK_U][N], gk_i64, gk_i64, gk_i64) {
        for (int k = 0; k < N; ++k) {
            const acc_t lo = (acc_t)(x[0][k] * x[1][k]), hi = (acc_t)(x[2][k] * x[3][k]);
            s[k] = (acc_t)(s[k] * (acc_t)(lo * hi));
        }
    }
    __device__ static out_t finish(st s, double) { return gk_cast<out_t>(s); }
};

// max / min: NaN wins, as in NumPy.
template <bool MAX>
struct gk_red_extreme {
    typedef acc_t st;
    __device__ static st init() {
        return MAX ? gk_limits<acc_t>::lowest() : gk_limits<acc_t>::highest();
    }
    __device__ static st merge(st a, st b) {
        if (MAX) return (a != a || a > b) ? a : b;
        return (a != a || a < b) ? a : b;
    }
    __device__ static void add(st& s, acc_t x, gk_i64) { s = merge(x, s); }
    __device__ static st shfl_xor(st s, int m) { return gk_xor_any(s, m); }
    template <int N>
    __device__ static void lanes(st (&s)[N], const acc_t (&x)[GK_U][N], gk_i64, gk_i64, gk_i64) {
        for (int k = 0; k < N; ++k) {
            s[k] = merge(s[k], merge(merge(x[0][k], x[1][k]), merge(x[2][k], x[3][k])));
        }
    }
    __device__ static out_t finish(st s, double) { return gk_cast<out_t>(s); }
};
typedef gk_red_extreme<true> gk_red_max;
typedef gk_red_extreme<false> gk_red_min;

// argmax / argmin: the index of the first best element; NaN is best, as in NumPy.
template <bool MAX>
struct gk_red_arg {
    struct st {
        acc_t v;
        gk_i64 i;  // -1: nothing yet
    };
    // Whether (a, ia) beats (b, ib): NaN first, then the larger (smaller) value, then the lower
    // index. The answer does not depend on the order the pairs meet in.
    __device__ static bool better(acc_t a, gk_i64 ia, acc_t b, gk_i64 ib) {
        if (ib < 0) return true;
        if (ia < 0) return false;
        const bool a_nan = a != a, b_nan = b != b;
        if (a_nan || b_nan) return a_nan && (!b_nan || ia < ib);
        if (a != b) return MAX ? a > b : a < b;
        return ia < ib;
    }
    __device__ static st init() { return st{(acc_t)0, -1}; }
    __device__ static void add(st& s, acc_t x, gk_i64 i) {
        if (better(x, i, s.v, s.i)) s = st{x, i};
    }
    __device__ static st merge(st a, st b) { return better(b.v, b.i, a.v, a.i) ? b : a; }
    __device__ static st shfl_xor(st s, int m) {
        return st{gk_xor_any(s.v, m), gk_shfl_xor(s.i, m)};
    }
    template <int N>
    __device__ static void lanes(st (&s)[N], const acc_t (&x)[GK_U][N], gk_i64 i0, gk_i64 du,
                                 gk_i64 dk) {
        for (int u = 0; u < GK_U; ++u) {
            for (int k = 0; k < N; ++k) add(s[k], x[u][k], i0 + u * du + k * dk);
        }
    }
    __device__ static out_t finish(st s, double) { return (out_t)s.i; }
};
typedef gk_red_arg<true> gk_red_argmax;
typedef gk_red_arg<false> gk_red_argmin;

// var / std in one pass: Welford's update per element, Chan's merge of partial moments.
template <bool ROOT>
struct gk_red_moments {
    struct st {
        acc_t n, mean, m2;
    };
    __device__ static st init() { return st{(acc_t)0, (acc_t)0, (acc_t)0}; }
    __device__ static void add(st& s, acc_t x, gk_i64) {
        s.n = s.n + (acc_t)1;
        const acc_t d = x - s.mean;
        s.mean = s.mean + d / s.n;
        s.m2 = s.m2 + d * (x - s.mean);
    }
    __device__ static st merge(st a, st b) {
        if (b.n == (acc_t)0) return a;
        if (a.n == (acc_t)0) return b;
        const acc_t n = a.n + b.n, d = b.mean - a.mean, f = b.n / n;
        return st{n, a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f};
    }
    __device__ static st shfl_xor(st s, int m) {
        return st{gk_shfl_xor(s.n, m), gk_shfl_xor(s.mean, m), gk_shfl_xor(s.m2, m)};
    }
    // The lanes of one thread have seen equally many elements: one reciprocal serves them all.
    template <int N>
    __device__ static void lanes(st (&s)[N], const acc_t (&x)[GK_U][N], gk_i64, gk_i64, gk_i64) {
        for (int u = 0; u < GK_U; ++u) {
            const acc_t n = s[0].n + (acc_t)1, inv = (acc_t)1 / n;
            for (int k = 0; k < N; ++k) {
                const acc_t d = x[u][k] - s[k].mean;
                s[k].n = n;
                s[k].mean = s[k].mean + d * inv;
                s[k].m2 = s[k].m2 + d * (x[u][k] - s[k].mean);
            }
        }
    }
    __device__ static out_t finish(st s, double scale) {
        acc_t v = (acc_t)(s.m2 * scale);
        // In double: the same correctly rounded root, and a call that resolves for every acc_t
        // (gk_cast: hiprtc checks this body in complex instances too, which never use it).
        if (ROOT) v = (acc_t)gkm_sqrt(gk_cast<double>(v));
        return gk_cast<out_t>(v);
    }
};
typedef gk_red_moments<false> gk_red_var;
typedef gk_red_moments<true> gk_red_std;

typedef GK_RED red;
typedef red::st st;
static_assert(sizeof(st) <= GK_RED_STATE_BYTES, "partial states must fit GK_RED_STATE_BYTES");

static const int GK_V = gk_vec16<in_t>::N;

__device__ inline gk_i64 gk_red_offset(const gk_reduce_args& a, gk_i64 r) {
    if (a.red_ndim == 1) return r * a.red_stride[0];
    return gk_nd_offset(r, a.red_ndim, a.red_shape, a.red_stride);
}

__device__ inline void gk_red_emit(const gk_reduce_args& a, gk_i64 o, gk_i64 s, st v) {
    if (a.splits == 1) {
        reinterpret_cast<out_t*>(a.out)[o] = red::finish(v, a.scale);
    } else {
        reinterpret_cast<st*>(a.partial)[o * a.part_out_stride + s * a.part_split_stride] = v;
    }
}

template <int N>
__device__ inline st gk_merge_tree(st (&s)[N]) {
    for (int w = N / 2; w > 0; w /= 2) {
        for (int k = 0; k < w; ++k) s[k] = red::merge(s[k], s[k + w]);
    }
    return s[0];
}

__device__ inline st gk_warp_merge(st v) {
    for (int m = GK_LANES / 2; m > 0; m /= 2) v = red::merge(v, red::shfl_xor(v, m));
    return v;
}

// The merge of the states of a group of G threads (a warp, or the whole block), in thread 0.
template <int G>
__device__ inline st gk_group_merge(st v) {
    v = gk_warp_merge(v);
    if (G > GK_LANES) {
        __shared__ st part[GK_RED_THREADS / GK_LANES];
        const int w = threadIdx.x / GK_LANES, lane = threadIdx.x % GK_LANES;
        if (lane == 0) part[w] = v;
        __syncthreads();
        if (w == 0) v = gk_warp_merge(lane < G / GK_LANES ? part[lane] : red::init());
    }
    return v;
}

// A group's share of a contiguous piece p[0, len) whose first element has reduced index r0:
// lane `lane` of G. Elements before the first 16-byte boundary and after the last are edges.
template <int G>
__device__ inline st gk_inner_contig(const in_t* p, gk_i64 len, gk_i64 r0, int lane) {
    const gk_u64 addr = reinterpret_cast<gk_u64>(p);
    gk_i64 head = len;
    if (addr % sizeof(in_t) == 0) {
        head = (gk_i64)((GK_VEC_BYTES - addr % GK_VEC_BYTES) % GK_VEC_BYTES / sizeof(in_t));
        if (head > len) head = len;
    }
    st edge = red::init();
    for (gk_i64 i = lane; i < head; i += G) red::add(edge, (acc_t)p[i], r0 + i);
    const gk_i64 nv = (len - head) / GK_V;
    const gk_vec16<in_t>* vp = reinterpret_cast<const gk_vec16<in_t>*>(p + head);
    const gk_i64 vr0 = r0 + head;
    st lanes[GK_V];
    for (int k = 0; k < GK_V; ++k) lanes[k] = red::init();
    gk_i64 v = lane;
    while (v + (GK_U - 1) * G < nv) {
        st loc[GK_V];
        for (int k = 0; k < GK_V; ++k) loc[k] = red::init();
        for (int it = 0; it < GK_ROUND && v + (GK_U - 1) * G < nv; ++it, v += GK_U * G) {
            gk_vec16<in_t> raw[GK_U];
            for (int u = 0; u < GK_U; ++u) raw[u] = vp[v + u * G];
            acc_t x[GK_U][GK_V];
            for (int u = 0; u < GK_U; ++u) {
                for (int k = 0; k < GK_V; ++k) x[u][k] = (acc_t)raw[u].v[k];
            }
            red::lanes(loc, x, vr0 + v * GK_V, (gk_i64)G * GK_V, 1);
        }
        for (int k = 0; k < GK_V; ++k) lanes[k] = red::merge(lanes[k], loc[k]);
    }
    for (; v < nv; v += G) {
        const gk_vec16<in_t> raw = vp[v];
        for (int k = 0; k < GK_V; ++k) red::add(lanes[k], (acc_t)raw.v[k], vr0 + v * GK_V + k);
    }
    for (gk_i64 i = head + nv * GK_V + lane; i < len; i += G) red::add(edge, (acc_t)p[i], r0 + i);
    return red::merge(gk_merge_tree(lanes), edge);
}

// A group's share of reduced indices [r0, r1) of a row at any strides.
template <int G>
__device__ inline st gk_inner_strided(const gk_reduce_args& a, const in_t* row, gk_i64 r0,
                                      gk_i64 r1, int lane) {
    st lanes[GK_U];
    for (int u = 0; u < GK_U; ++u) lanes[u] = red::init();
    gk_i64 r = r0 + lane;
    while (r + (GK_U - 1) * G < r1) {
        st loc[GK_U];
        for (int u = 0; u < GK_U; ++u) loc[u] = red::init();
        for (int it = 0; it < GK_ROUND && r + (GK_U - 1) * G < r1; ++it, r += GK_U * G) {
            acc_t x[GK_U];
            for (int u = 0; u < GK_U; ++u) x[u] = (acc_t)row[gk_red_offset(a, r + u * G)];
            for (int u = 0; u < GK_U; ++u) red::add(loc[u], x[u], r + u * G);
        }
        for (int u = 0; u < GK_U; ++u) lanes[u] = red::merge(lanes[u], loc[u]);
    }
    for (; r < r1; r += G) red::add(lanes[0], (acc_t)row[gk_red_offset(a, r)], r);
    return gk_merge_tree(lanes);
}

template <int G>
__device__ inline void gk_red_inner(const gk_reduce_args& a) {
    const int lane = threadIdx.x % G;
    const gk_i64 seg = ((gk_i64)blockIdx.x * blockDim.x + threadIdx.x) / G;
    if (seg >= a.n_out * a.splits) return;  // the same for every thread of a group
    const gk_i64 o = seg / a.splits, s = seg % a.splits;
    const gk_i64 r0 = s * a.chunk;
    const gk_i64 r1 = r0 + a.chunk < a.n_red ? r0 + a.chunk : a.n_red;
    const in_t* row = reinterpret_cast<const in_t*>(a.in) +
                      gk_nd_offset(o, a.out_ndim, a.out_shape, a.out_stride);
    st acc = red::init();
    if (r0 < r1) {
        acc = a.red_ndim == 1 && a.red_stride[0] == 1
                  ? gk_inner_contig<G>(row + r0, r1 - r0, r0, lane)
                  : gk_inner_strided<G>(a, row, r0, r1, lane);
    }
    acc = gk_group_merge<G>(acc);
    if (lane == 0) gk_red_emit(a, o, s, acc);
}

GK_KERNEL void gk_red_inner_warp(const gk_reduce_args a) { gk_red_inner<GK_LANES>(a); }

GK_KERNEL void __launch_bounds__(GK_RED_THREADS) gk_red_inner_block(const gk_reduce_args a) {
    gk_red_inner<GK_RED_THREADS>(a);
}

// Thread (tx, ty) of block (bx, s): outputs [o0, o0 + VC) (VC > 1: consecutive in the input, 16
// bytes aligned), reduced indices ty, ty + TY, ... of split s. The TY states of a column are then
// merged as a tree through shared memory, one column after the other.
template <int VC>
__device__ inline void gk_red_outer(const gk_reduce_args& a) {
    const int tx = threadIdx.x, ty = threadIdx.y, tx_n = blockDim.x, ty_n = blockDim.y;
    const gk_i64 o0 = ((gk_i64)blockIdx.x * tx_n + tx) * VC;
    const gk_i64 s = blockIdx.y;
    const gk_i64 r0 = s * a.chunk;
    const gk_i64 r1 = r0 + a.chunk < a.n_red ? r0 + a.chunk : a.n_red;
    st acc[VC];
    for (int c = 0; c < VC; ++c) acc[c] = red::init();
    if (o0 < a.n_out) {
        const in_t* base = reinterpret_cast<const in_t*>(a.in) +
                           gk_nd_offset(o0, a.out_ndim, a.out_shape, a.out_stride);
        gk_i64 r = r0 + ty;
        while (r + (GK_U - 1) * ty_n < r1) {
            st loc[VC];
            for (int c = 0; c < VC; ++c) loc[c] = red::init();
            for (int it = 0; it < GK_ROUND && r + (GK_U - 1) * ty_n < r1; ++it, r += GK_U * ty_n) {
                acc_t x[GK_U][VC];
                if constexpr (VC == 1) {
                    in_t raw[GK_U];
                    for (int u = 0; u < GK_U; ++u) raw[u] = base[gk_red_offset(a, r + u * ty_n)];
                    for (int u = 0; u < GK_U; ++u) x[u][0] = (acc_t)raw[u];
                } else {
                    gk_vec16<in_t> raw[GK_U];
                    for (int u = 0; u < GK_U; ++u) {
                        raw[u] = *reinterpret_cast<const gk_vec16<in_t>*>(
                            base + gk_red_offset(a, r + u * ty_n));
                    }
                    for (int u = 0; u < GK_U; ++u) {
                        for (int c = 0; c < VC; ++c) x[u][c] = (acc_t)raw[u].v[c];
                    }
                }
                red::lanes(loc, x, r, ty_n, 0);
            }
            for (int c = 0; c < VC; ++c) acc[c] = red::merge(acc[c], loc[c]);
        }
        for (; r < r1; r += ty_n) {
            const in_t* at = base + gk_red_offset(a, r);
            for (int c = 0; c < VC; ++c) red::add(acc[c], (acc_t)at[c], r);
        }
    }
    if (ty_n > 1) {  // a column at a time: shared memory for one state per thread
        __shared__ st sm[GK_RED_THREADS];
        const int me = ty * tx_n + tx;
        for (int c = 0; c < VC; ++c) {
            sm[me] = acc[c];
            __syncthreads();
            for (int h = ty_n / 2; h > 0; h /= 2) {
                if (ty < h) sm[me] = red::merge(sm[me], sm[me + h * tx_n]);
                __syncthreads();
            }
            acc[c] = sm[tx];
            __syncthreads();  // sm is rewritten for the next column
        }
    }
    if (ty == 0 && o0 < a.n_out) {
        for (int c = 0; c < VC; ++c) gk_red_emit(a, o0 + c, s, acc[c]);
    }
}

GK_KERNEL void __launch_bounds__(GK_RED_THREADS) gk_red_outer_1(const gk_reduce_args a) {
    gk_red_outer<1>(a);
}

GK_KERNEL void __launch_bounds__(GK_RED_THREADS) gk_red_outer_vec(const gk_reduce_args a) {
    gk_red_outer<GK_V>(a);
}

// A thread per output: its splits merged in order, eight at a time.
GK_KERNEL void gk_red_finish_thread(const gk_reduce_args a) {
    const gk_i64 o = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= a.n_out) return;
    const st* p = reinterpret_cast<const st*>(a.partial) + o * a.part_out_stride;
    st acc = red::init();
    for (gk_i64 s0 = 0; s0 < a.splits; s0 += 8) {
        st loc = red::init();
        for (int k = 0; k < 8; ++k) {
            if (s0 + k < a.splits) loc = red::merge(loc, p[(s0 + k) * a.part_split_stride]);
        }
        acc = red::merge(acc, loc);
    }
    reinterpret_cast<out_t*>(a.out)[o] = red::finish(acc, a.scale);
}

// A block per output: thread t merges splits t, t + GK_RED_THREADS, ..., then the block's tree.
GK_KERNEL void __launch_bounds__(GK_RED_THREADS) gk_red_finish_block(const gk_reduce_args a) {
    const gk_i64 o = blockIdx.x;
    const st* p = reinterpret_cast<const st*>(a.partial) + o * a.part_out_stride;
    st acc = red::init();
    for (gk_i64 s = threadIdx.x; s < a.splits; s += GK_RED_THREADS) {
        acc = red::merge(acc, p[s * a.part_split_stride]);
    }
    acc = gk_group_merge<GK_RED_THREADS>(acc);
    if (threadIdx.x == 0) reinterpret_cast<out_t*>(a.out)[o] = red::finish(acc, a.scale);
}
