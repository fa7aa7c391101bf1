// Inclusive running sums (cumsum) along one axis. Defines: GK_IN_T, GK_ACC_T (float for 16-bit
// floats), GK_OUT_T.
// gk_scan_tiles: one pass over rows whose scanned axis is contiguous (or any, element by element).
//   Tiles of GK_SCAN_THREADS * GK_SCAN_ITEMS elements are handed out in order by a ticket; a tile
//   scans itself in registers and shared memory and publishes its sum. Its carry is the prefix of
//   the windows (GK_SCAN_WINDOW tiles) before its own plus a fixed scan of the sums of the earlier
//   tiles of its window. A window's prefix is the left fold prefix(k) + sum(k + 1) + ... from the
//   nearest window k that published one, and prefix(k) was itself such a fold: whatever k the
//   timing gives, the carry is the same float additions, so the result is the same bits on every
//   run. The sequential fold runs per window, not per tile, so it keeps up with the tiles.
// gk_scan_columns / gk_scan_columns_vec: rows whose scanned axis is strided (e.g. axis 0 of a
//   C-ordered matrix): threads walk neighbouring rows (coalesced) down one piece of the axis each,
//   starting from the sums of the pieces above them (a reduction wrote those beforehand).
#include "args.cuh"
#include "warp.cuh"

typedef GK_IN_T in_t;
typedef GK_ACC_T acc_t;
typedef GK_OUT_T out_t;

#define GK_T GK_SCAN_THREADS
#define GK_WARPS (GK_SCAN_THREADS / GK_LANES)
#define GK_TILE (GK_SCAN_THREADS * GK_SCAN_ITEMS)
static const int GK_V = gk_vec16<in_t>::N;  // elements of one 16-byte load
static const int GK_R = GK_SCAN_ITEMS / GK_V;
static_assert(GK_SCAN_ITEMS % GK_V == 0, "a thread's items are whole 16-byte loads");

enum { GK_FLAG_NONE = 0, GK_FLAG_SUM = 1, GK_FLAG_PREFIX = 2 };

__device__ inline bool gk_aligned16(const void* p) {
    return reinterpret_cast<gk_u64>(p) % GK_VEC_BYTES == 0;
}

// y[0, GK_V) to dst (16-byte aligned) with 16-byte stores where out_t is at least as wide as in_t.
__device__ inline void gk_store_run(out_t* dst, const acc_t (&y)[GK_V]) {
    const int OV = gk_vec16<out_t>::N;
    if constexpr (GK_V % gk_vec16<out_t>::N == 0) {
        for (int c = 0; c < GK_V / OV; ++c) {
            gk_vec16<out_t> w;
            for (int j = 0; j < OV; ++j) w.v[j] = (out_t)y[c * OV + j];
            gk_store16(reinterpret_cast<gk_vec16<out_t>*>(dst) + c, w);
        }
    } else {
        for (int j = 0; j < GK_V; ++j) dst[j] = (out_t)y[j];
    }
}

// The nearest earlier window of the row (windows from `first`) with a published prefix, waiting
// for the sums of the windows in between; returns the left fold prefix(k) + sum(k + 1) + ... +
// sum(win - 1), which is itself how prefix(win - 1) is defined: the same bits whatever k is.
__device__ inline acc_t gk_window_lookback(const gk_scan_args& a, gk_i64 win, gk_i64 first,
                                           int lane) {
    volatile gk_i32* flags = reinterpret_cast<volatile gk_i32*>(a.win_flags);
    volatile acc_t* sums = reinterpret_cast<volatile acc_t*>(a.win_sums);
    volatile acc_t* prefs = reinterpret_cast<volatile acc_t*>(a.win_prefs);
    gk_i64 pos = win - 1, from;
    while (true) {
        const gk_i64 j = pos - lane;
        int f = GK_FLAG_PREFIX;  // windows before `first` are never read
        if (j >= first) {
            do {
                f = flags[j];
            } while (f == GK_FLAG_NONE);
        }
        const unsigned found = gk_ballot(f == GK_FLAG_PREFIX);
        if (found) {
            from = pos - (__ffs(found) - 1);
            break;
        }
        pos -= GK_LANES;
    }
    __threadfence();
    acc_t carry = prefs[from];
    for (gk_i64 c = from + 1; c < win; c += GK_LANES) {
        const gk_i64 j = c + lane;
        const acc_t v = j < win ? (acc_t)sums[j] : (acc_t)0;
        const gk_i64 count = win - c;
        for (int l = 0; l < GK_LANES; ++l) {
            const acc_t w = gk_shfl(v, l);
            if (l < count) carry = carry + w;
        }
    }
    return carry;
}

// Warp 0 of tile q of `row` (sum: the tile's) publishes what later tiles need and returns the sum
// of the row's elements before the tile: the prefix of the windows before its own, plus the sum of
// the earlier tiles of its window (a fixed scan over the window's lanes).
__device__ inline acc_t gk_carry_in(const gk_scan_args& a, gk_i64 row, gk_i64 q, acc_t sum,
                                    int lane) {
    volatile gk_i32* flags = reinterpret_cast<volatile gk_i32*>(a.flags);
    volatile acc_t* sums = reinterpret_cast<volatile acc_t*>(a.sums);
    volatile gk_i32* win_flags = reinterpret_cast<volatile gk_i32*>(a.win_flags);
    volatile acc_t* win_sums = reinterpret_cast<volatile acc_t*>(a.win_sums);
    volatile acc_t* win_prefs = reinterpret_cast<volatile acc_t*>(a.win_prefs);
    const gk_i64 tile = row * a.tiles_per_row + q;
    const int p = (int)(q % GK_SCAN_WINDOW);
    const gk_i64 w = q / GK_SCAN_WINDOW;
    const gk_i64 first_win = row * ((a.tiles_per_row + GK_SCAN_WINDOW - 1) / GK_SCAN_WINDOW);
    const gk_i64 win = first_win + w;
    if (lane == 0 && p < GK_SCAN_WINDOW - 1) {
        sums[tile] = sum;
        __threadfence();
        flags[tile] = GK_FLAG_SUM;
    }
    acc_t v = (acc_t)0;
    if (lane < p) {
        while (flags[tile - p + lane] == GK_FLAG_NONE) {
        }
        __threadfence();
        v = sums[tile - p + lane];
    } else if (lane == p) {
        v = sum;
    }
    acc_t inc = v;  // lane i: the window's tiles 0..i (Hillis-Steele: depends on lanes <= i only)
    for (int d = 1; d < GK_LANES; d *= 2) {
        const acc_t o = gk_shfl_up(inc, d);
        if (lane >= d) inc = o + inc;
    }
    const acc_t before = gk_shfl(inc, p > 0 ? p - 1 : 0);
    const acc_t in_window = p > 0 ? before : (acc_t)0;
    const bool last = p == GK_SCAN_WINDOW - 1;
    const acc_t win_sum = gk_shfl(inc, GK_SCAN_WINDOW - 1);
    if (last && w > 0 && lane == 0) {  // the window's sum first: later windows may fold it
        win_sums[win] = win_sum;
        __threadfence();
        win_flags[win] = GK_FLAG_SUM;
    }
    const acc_t carry = w > 0 ? gk_window_lookback(a, win, first_win, lane) : (acc_t)0;
    if (last && lane == 0) {
        win_prefs[win] = carry + win_sum;
        __threadfence();
        win_flags[win] = GK_FLAG_PREFIX;
    }
    return carry + in_window;
}

// Tile layout: GK_R runs of GK_T loads; thread t holds elements (r * GK_T + t) * GK_V + k.
GK_KERNEL void __launch_bounds__(GK_T) gk_scan_tiles(const gk_scan_args a) {
    __shared__ gk_i64 s_tile;
    __shared__ acc_t s_warp[GK_R][GK_WARPS];
    __shared__ acc_t s_carry;
    const int t = threadIdx.x, lane = t % GK_LANES, warp = t / GK_LANES;
    if (t == 0) {
        s_tile = (gk_i64)atomicAdd(reinterpret_cast<unsigned long long*>(a.ticket), 1ull);
    }
    __syncthreads();
    const gk_i64 tile = s_tile;
    const gk_i64 row = tile / a.tiles_per_row;
    const gk_i64 start = (tile % a.tiles_per_row) * GK_TILE;
    const in_t* in = reinterpret_cast<const in_t*>(a.in) +
                     gk_nd_offset(row, a.row_ndim, a.row_shape, a.in_row_stride);
    out_t* out = reinterpret_cast<out_t*>(a.out) +
                 gk_nd_offset(row, a.row_ndim, a.row_shape, a.out_row_stride);
    const bool vec = a.in_step == 1 && a.out_step == 1 && start + GK_TILE <= a.n &&
                     gk_aligned16(in + start) && gk_aligned16(out + start);
    acc_t x[GK_R][GK_V];
    if (vec) {
        const gk_vec16<in_t>* src = reinterpret_cast<const gk_vec16<in_t>*>(in + start);
        gk_vec16<in_t> raw[GK_R];
        for (int r = 0; r < GK_R; ++r) raw[r] = src[r * GK_T + t];
        for (int r = 0; r < GK_R; ++r) {
            for (int k = 0; k < GK_V; ++k) x[r][k] = (acc_t)raw[r].v[k];
        }
    } else {
        for (int r = 0; r < GK_R; ++r) {
            for (int k = 0; k < GK_V; ++k) {
                const gk_i64 i = start + (gk_i64)(r * GK_T + t) * GK_V + k;
                x[r][k] = i < a.n ? (acc_t)in[i * a.in_step] : (acc_t)0;
            }
        }
    }
    // Each run: scans within the thread, the warp (shuffles) and the block (the warps' sums).
    acc_t inc[GK_R];
    for (int r = 0; r < GK_R; ++r) {
        for (int k = 1; k < GK_V; ++k) x[r][k] = (acc_t)(x[r][k - 1] + x[r][k]);
        inc[r] = x[r][GK_V - 1];
    }
    for (int d = 1; d < GK_LANES; d *= 2) {
        for (int r = 0; r < GK_R; ++r) {
            const acc_t o = gk_shfl_up(inc[r], d);
            if (lane >= d) inc[r] = (acc_t)(o + inc[r]);
        }
    }
    acc_t before[GK_R];  // the run's elements before this thread's, within the warp
    for (int r = 0; r < GK_R; ++r) {
        const acc_t o = gk_shfl_up(inc[r], 1);
        before[r] = lane == 0 ? (acc_t)0 : o;
        if (lane == GK_LANES - 1) s_warp[r][warp] = inc[r];
    }
    __syncthreads();
    acc_t sum = (acc_t)0;  // the tile's elements before run r, then the tile's sum
    for (int r = 0; r < GK_R; ++r) {
        acc_t warps_before = (acc_t)0, run = (acc_t)0;
        for (int w = 0; w < GK_WARPS; ++w) {
            if (w < warp) warps_before = (acc_t)(warps_before + s_warp[r][w]);
            run = (acc_t)(run + s_warp[r][w]);
        }
        before[r] = (acc_t)(sum + (acc_t)(warps_before + before[r]));
        sum = (acc_t)(sum + run);
    }
    if (warp == 0) {
        const acc_t carry = gk_carry_in(a, row, tile % a.tiles_per_row, sum, lane);
        if (lane == 0) s_carry = carry;
    }
    __syncthreads();
    const acc_t carry = s_carry;
    if (vec) {
        for (int r = 0; r < GK_R; ++r) {
            acc_t y[GK_V];
            for (int k = 0; k < GK_V; ++k) y[k] = (acc_t)(carry + (acc_t)(before[r] + x[r][k]));
            gk_store_run(out + start + (gk_i64)(r * GK_T + t) * GK_V, y);
        }
    } else {
        for (int r = 0; r < GK_R; ++r) {
            for (int k = 0; k < GK_V; ++k) {
                const gk_i64 i = start + (gk_i64)(r * GK_T + t) * GK_V + k;
                if (i < a.n) out[i * a.out_step] = (out_t)(carry + (acc_t)(before[r] + x[r][k]));
            }
        }
    }
}

// Thread: rows [q0, q0 + VC) (VC > 1: neighbours in memory, 16-byte aligned), elements of piece
// blockIdx.y. Loads run GK_RED_UNROLL elements ahead of the additions.
template <int VC>
__device__ inline void gk_scan_columns_impl(const gk_scan_args& a) {
    const gk_i64 q0 = ((gk_i64)blockIdx.x * blockDim.x + threadIdx.x) * VC;
    if (q0 >= a.n_rows) return;
    const gk_i64 i0 = (gk_i64)blockIdx.y * a.chunk;
    const gk_i64 i1 = i0 + a.chunk < a.n ? i0 + a.chunk : a.n;
    const in_t* in = reinterpret_cast<const in_t*>(a.in) +
                     gk_nd_offset(q0, a.row_ndim, a.row_shape, a.in_row_stride);
    out_t* out = reinterpret_cast<out_t*>(a.out) +
                 gk_nd_offset(q0, a.row_ndim, a.row_shape, a.out_row_stride);
    const acc_t* part = reinterpret_cast<const acc_t*>(a.partial);
    acc_t acc[VC];
    for (int c = 0; c < VC; ++c) acc[c] = (acc_t)0;
    for (gk_i64 p = 0; p < blockIdx.y; ++p) {
        for (int c = 0; c < VC; ++c) acc[c] = (acc_t)(acc[c] + part[p * a.n_rows + q0 + c]);
    }
    const int U = GK_RED_UNROLL;
    for (gk_i64 i = i0; i < i1; i += U) {
        acc_t x[U][VC];
        for (int u = 0; u < U; ++u) {
            if (i + u >= i1) break;
            const in_t* at = in + (i + u) * a.in_step;
            if constexpr (VC == 1) {
                x[u][0] = (acc_t)at[0];
            } else {
                const gk_vec16<in_t> raw = *reinterpret_cast<const gk_vec16<in_t>*>(at);
                for (int c = 0; c < VC; ++c) x[u][c] = (acc_t)raw.v[c];
            }
        }
        for (int u = 0; u < U; ++u) {
            if (i + u >= i1) break;
            for (int c = 0; c < VC; ++c) acc[c] = (acc_t)(acc[c] + x[u][c]);
            out_t* dst = out + (i + u) * a.out_step;
            if constexpr (VC == 1) {
                dst[0] = (out_t)acc[0];
            } else {
                gk_store_run(dst, acc);
            }
        }
    }
}

GK_KERNEL void gk_scan_columns(const gk_scan_args a) { gk_scan_columns_impl<1>(a); }

GK_KERNEL void gk_scan_columns_vec(const gk_scan_args a) { gk_scan_columns_impl<GK_V>(a); }
