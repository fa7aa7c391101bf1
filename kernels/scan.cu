// Inclusive running sums (cumsum) along one axis. Defines: GK_IN_T, GK_ACC_T (float for 16-bit
// floats), GK_OUT_T.
// gk_scan_tiles: one pass over rows whose scanned axis is contiguous (or any, element by element),
//   with decoupled look-back. Tiles of GK_SCAN_THREADS * GK_SCAN_CHUNKS 16-byte chunks are handed
//   out in order by a ticket and staged in shared memory (all of a tile's loads in flight at
//   once). A tile publishes its sum, then the sum of the row up to and including it (its
//   inclusive prefix). Its carry is the left fold inclusive(k) + sum(k + 1) + ... + sum(q - 1)
//   from the nearest earlier tile k that published its inclusive prefix, and inclusive(k) was
//   itself such a fold: whatever k the timing gives, the carry is the same float additions, so
//   the result is the same bits on every run.
// gk_scan_columns / gk_scan_columns_vec: rows whose scanned axis is strided (e.g. axis 0 of a
//   C-ordered matrix): threads walk neighbouring rows (coalesced) down one piece of the axis each,
//   starting from the sums of the pieces above them (a reduction wrote those beforehand).
#include "args.cuh"
#include "staging.cuh"
#include "warp.cuh"

typedef GK_IN_T in_t;
typedef GK_ACC_T acc_t;
typedef GK_OUT_T out_t;

// Nanoseconds a look-back waits before it reads a tile's state again; windows of GK_LANES tiles
// it keeps while looking for a prefix.
#define GK_SCAN_BACKOFF 0
#define GK_SCAN_DEPTH 8

#define GK_T GK_SCAN_THREADS
#define GK_R GK_SCAN_CHUNKS
#define GK_WARPS (GK_SCAN_THREADS / GK_LANES)
static const int GK_V = gk_vec16<in_t>::N;  // elements of one chunk
// Entries of the run-by-warp table (GK_R * GK_WARPS) each lane of warp 0 scans.
static const int GK_E = (GK_R * GK_WARPS + GK_LANES - 1) / GK_LANES;

enum { GK_FLAG_NONE = 0, GK_FLAG_SUM = 1, GK_FLAG_PREFIX = 2 };

__device__ inline bool gk_aligned16(const void* p) {
    return reinterpret_cast<gk_u64>(p) % GK_VEC_BYTES == 0;
}

__device__ inline void gk_pause() {
#if GK_SCAN_BACKOFF > 0
#ifdef GK_HIP
    __builtin_amdgcn_s_sleep(1);
#else
    __nanosleep(GK_SCAN_BACKOFF);
#endif
#endif
}

// A tile's state: its flag and the value it stands for (sum or inclusive prefix).
struct gk_tile_state {
    int flag;
    acc_t value;
};

#if !defined(GK_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
#define GK_SCAN_RELAXED 1
#endif

// A 4-byte accumulator's state as one 8-byte word: the flag above the value's bits (called for
// 4-byte accumulators only).
__device__ inline gk_u64 gk_state_word(int flag, acc_t v) {
    union {
        acc_t v;
        gk_u32 u;
    } bits;
    bits.v = v;
    return ((gk_u64)flag << 32) | bits.u;
}

// 4-byte accumulators: flag and value in one 8-byte word (flags[tile]), stored and read at once.
// Wider ones: the value in sums[tile] or prefs[tile], a fence, then the 4-byte flag.
__device__ inline void gk_state_publish(const gk_scan_args& a, gk_i64 tile, int flag, acc_t v) {
    if constexpr (sizeof(acc_t) == 4) {
        const gk_u64 w = gk_state_word(flag, v);
        gk_u64* p = reinterpret_cast<gk_u64*>(a.flags) + tile;
#ifdef GK_SCAN_RELAXED
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
#else
        *reinterpret_cast<volatile gk_u64*>(p) = w;
#endif
    } else {
        volatile acc_t* values =
            reinterpret_cast<volatile acc_t*>(flag == GK_FLAG_PREFIX ? a.prefs : a.sums);
        values[tile] = v;
        __threadfence();
        reinterpret_cast<volatile gk_i32*>(a.flags)[tile] = flag;
    }
}

// The sum published ahead, only over a state still unpublished: the scan's prefix may have come
// first, and must stay.
__device__ inline void gk_state_publish_sum_ahead(const gk_scan_args& a, gk_i64 tile, acc_t v) {
    if constexpr (sizeof(acc_t) == 4) {
        const unsigned long long w = gk_state_word(GK_FLAG_SUM, v);
        atomicCAS(reinterpret_cast<unsigned long long*>(a.flags) + tile, 0ull, w);
    } else {
        reinterpret_cast<volatile acc_t*>(a.sums)[tile] = v;
        __threadfence();
        atomicCAS(reinterpret_cast<int*>(a.flags) + tile, (int)GK_FLAG_NONE, (int)GK_FLAG_SUM);
    }
}

__device__ inline gk_tile_state gk_state_read(const gk_scan_args& a, gk_i64 tile) {
    gk_tile_state s;
    if constexpr (sizeof(acc_t) == 4) {
        const gk_u64* p = reinterpret_cast<const gk_u64*>(a.flags) + tile;
        gk_u64 w;
#ifdef GK_SCAN_RELAXED
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
#else
        w = *reinterpret_cast<const volatile gk_u64*>(p);
#endif
        union {
            gk_u32 u;
            acc_t v;
        } bits;
        bits.u = (gk_u32)w;
        s.flag = (int)(w >> 32);
        s.value = bits.v;
    } else {
        s.flag = reinterpret_cast<const volatile gk_i32*>(a.flags)[tile];
        if (s.flag != GK_FLAG_NONE) {
            __threadfence();
            const volatile acc_t* values = reinterpret_cast<const volatile acc_t*>(
                s.flag == GK_FLAG_PREFIX ? a.prefs : a.sums);
            s.value = values[tile];
        }
    }
    return s;
}

// Warp 0 of tile q (state index s0 + q): the sum of the row's elements before the tile, the left
// fold from the nearest earlier tile with a published inclusive prefix (before the row's first
// tile: 0). Windows of GK_LANES tiles are read newest first; those without a prefix are kept in
// `stash` (GK_SCAN_DEPTH windows; past that the walk starts again from q - 1, whose prefix comes
// in time).
__device__ inline acc_t gk_lookback(const gk_scan_args& a, gk_i64 s0, gk_i64 q, int lane,
                                    acc_t (*stash)[GK_LANES]) {
    gk_i64 pos = q - 1;
    int depth = 0;
    while (true) {
        const gk_i64 j = pos - lane;
        gk_tile_state st = {GK_FLAG_PREFIX, (acc_t)0};
        if (j >= 0) {
            while ((st = gk_state_read(a, s0 + j)).flag == GK_FLAG_NONE) gk_pause();
        }
        const unsigned prefixes = gk_ballot(st.flag == GK_FLAG_PREFIX);
        if (prefixes) {
            const int k = __ffs(prefixes) - 1;  // the nearest
            acc_t carry = gk_shfl(st.value, k);
            for (int l = GK_LANES - 2; l >= 0; --l) {
                const acc_t w = gk_shfl(st.value, l);
                if (l < k) carry = carry + w;
            }
            for (int d = depth - 1; d >= 0; --d) {
                for (int l = GK_LANES - 1; l >= 0; --l) carry = carry + stash[d][l];
            }
            return carry;
        }
        stash[depth][lane] = st.value;
        gk_syncwarp();
        pos -= GK_LANES;
        if (++depth == GK_SCAN_DEPTH) {
            depth = 0;
            pos = q - 1;
        }
    }
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

// Where tile `tile` (of all rows, in ticket order) reads and writes.
struct gk_tile_ref {
    gk_i64 row, q, start;  // row, tile within it, its first element there
    const in_t* in;
    out_t* out;
    bool in_vec, out_vec;  // whole chunks move 16 bytes at a time
};

__device__ inline gk_tile_ref gk_tile_at(const gk_scan_args& a, gk_i64 tile) {
    gk_tile_ref r;
    r.row = tile / a.tiles_per_row;
    r.q = tile % a.tiles_per_row;
    r.start = r.q * ((gk_i64)GK_T * GK_R * GK_V);
    r.in = reinterpret_cast<const in_t*>(a.in) +
           gk_nd_offset(r.row, a.row_ndim, a.row_shape, a.in_row_stride);
    r.out = reinterpret_cast<out_t*>(a.out) +
            gk_nd_offset(r.row, a.row_ndim, a.row_shape, a.out_row_stride);
    r.in_vec = a.in_step == 1 && gk_aligned16(r.in + r.start);
    r.out_vec = a.out_step == 1 && gk_aligned16(r.out + r.start);
    return r;
}

// Chunk r of thread t (elements (r * GK_T + t) * GK_V + k of the tile), zeros past the row's end.
__device__ inline void gk_stage_chunk(const gk_scan_args& a, const gk_tile_ref& tr, int r, int t,
                                      gk_vec16<in_t>* dst) {
    const gk_i64 i0 = tr.start + (gk_i64)(r * GK_T + t) * GK_V;
    if (tr.in_vec && i0 + GK_V <= a.n) {
        gk_copy16(dst, tr.in + i0);
    } else {
        gk_vec16<in_t> c = {};
        for (int k = 0; k < GK_V; ++k) {
            if (i0 + k < a.n) c.v[k] = tr.in[(i0 + k) * a.in_step];
        }
        *dst = c;
    }
}

// A chunk's elements added in order.
__device__ inline acc_t gk_chunk_sum(const gk_vec16<in_t>& c) {
    acc_t s = (acc_t)c.v[0];
    for (int k = 1; k < GK_V; ++k) s = (acc_t)(s + (acc_t)c.v[k]);
    return s;
}

// Warp 0: the tile's sum from the run-by-warp table ([r * GK_WARPS + w]: warp w's total of run
// r), the entries a lane holds added in order, then the lanes' by a butterfly. The scan's
// inclusive prefix over the lanes gives its last lane the same additions (a perfect tree of
// neighbours; the butterfly's operands are swapped at times, which changes no bits).
__device__ inline acc_t gk_table_total(const acc_t* table, int lane) {
    acc_t mine = (acc_t)0;
    for (int k = 0; k < GK_E; ++k) {
        const int at = lane * GK_E + k;
        mine = (acc_t)(mine + (at < GK_R * GK_WARPS ? table[at] : (acc_t)0));
    }
    for (int d = 1; d < GK_LANES; d *= 2) mine = (acc_t)(mine + gk_shfl_xor(mine, d));
    return mine;
}

// Tile k's sum, published ahead of its scan (a.lead tickets later): the same additions as the
// scan's (each chunk's sum, the runs' over the warp by a butterfly, which ends as the scan's
// last lane does, then the table), so a lead changes no bits. The row's first tile publishes its
// inclusive prefix (0 + sum) at once.
__device__ inline void gk_publish_ahead(const gk_scan_args& a, gk_i64 k, acc_t* table) {
    const gk_tile_ref tr = gk_tile_at(a, k);
    const int t = threadIdx.x, lane = t % GK_LANES, warp = t / GK_LANES;
    // Loads in batches of B chunks: four blocks an SM keep enough of them in flight, in fewer
    // registers than the whole tile's.
    const int B = 4;
    static_assert(GK_R % B == 0, "whole batches");
    acc_t run[GK_R];
    for (int r0 = 0; r0 < GK_R; r0 += B) {
        gk_vec16<in_t> c[B];
        for (int r = 0; r < B; ++r) {
            const gk_i64 i0 = tr.start + (gk_i64)((r0 + r) * GK_T + t) * GK_V;
            if (tr.in_vec && i0 + GK_V <= a.n) {
                c[r] = *reinterpret_cast<const gk_vec16<in_t>*>(tr.in + i0);
            } else {
                c[r] = gk_vec16<in_t>{};
                for (int j = 0; j < GK_V; ++j) {
                    if (i0 + j < a.n) c[r].v[j] = tr.in[(i0 + j) * a.in_step];
                }
            }
        }
        for (int r = 0; r < B; ++r) run[r0 + r] = gk_chunk_sum(c[r]);
    }
    for (int d = 1; d < GK_LANES; d *= 2) {
        for (int r = 0; r < GK_R; ++r) run[r] = (acc_t)(run[r] + gk_shfl_xor(run[r], d));
    }
    if (lane == 0) {
        for (int r = 0; r < GK_R; ++r) table[r * GK_WARPS + warp] = run[r];
    }
    __syncthreads();
    if (warp == 0) {
        const acc_t sum = gk_table_total(table, lane);
        const gk_i64 state = tr.row * a.tiles_per_row + tr.q;
        if (lane == 0) {
            if (tr.q == 0) {
                gk_state_publish(a, state, GK_FLAG_PREFIX, (acc_t)((acc_t)0 + sum));
            } else {
                gk_state_publish_sum_ahead(a, state, sum);
            }
        }
    }
}

// Tile layout: GK_R runs of GK_T chunks; thread t holds chunks r * GK_T + t (elements
// (r * GK_T + t) * GK_V + k), staged in dynamic shared memory (GK_R * GK_T * 16 bytes).
// Ticket k scans tile k - a.lead and, with a.lead > 0, first publishes tile k's sum (its loads
// then reach the tile a.lead tickets before its scan does, so the scan's look-back finds the sums
// it folds already published, and re-reads the tile from L2).
// Four tiles of 4-byte accumulators to an SM (at most 64 registers), three of wider ones.
GK_KERNEL void __launch_bounds__(GK_T, sizeof(acc_t) == 4 ? 4 : 3)
    gk_scan_tiles(const gk_scan_args a) {
    typedef gk_vec16<in_t> chunk_t;
    chunk_t* s_data = reinterpret_cast<chunk_t*>(gk_shared_dynamic());
    __shared__ gk_i64 s_tile;
    __shared__ acc_t s_run[GK_E * GK_LANES];  // [r * GK_WARPS + w]: totals, then prefixes
    __shared__ acc_t s_stash[GK_SCAN_DEPTH][GK_LANES];
    __shared__ acc_t s_carry;
    const int t = threadIdx.x, lane = t % GK_LANES, warp = t / GK_LANES;
    if (t == 0) {
        s_tile = (gk_i64)atomicAdd(reinterpret_cast<unsigned long long*>(a.ticket), 1ull);
    }
    __syncthreads();
    const gk_i64 ticket = s_tile, tile = ticket - a.lead;
    const gk_tile_ref tr = gk_tile_at(a, tile < 0 ? 0 : tile);
    // Each thread stages (and later reads) only its own chunks: no barrier before pass 1.
    if (tile >= 0) {
        for (int r = 0; r < GK_R; ++r) gk_stage_chunk(a, tr, r, t, &s_data[r * GK_T + t]);
    }
    if (a.lead > 0 && ticket < a.n_rows * a.tiles_per_row) gk_publish_ahead(a, ticket, s_run);
    if (tile < 0) return;
    gk_copy_wait();
    // Pass 1: each chunk's sum, scanned over the warp's lanes run by run; the warps' totals of
    // each run to s_run.
    acc_t before[GK_R];  // the run's elements before this thread's chunk, within the warp
    {
        acc_t inc[GK_R];
        for (int r = 0; r < GK_R; ++r) {
            inc[r] = gk_chunk_sum(s_data[r * GK_T + t]);
        }
        for (int d = 1; d < GK_LANES; d *= 2) {
            for (int r = 0; r < GK_R; ++r) {
                const acc_t o = gk_shfl_up(inc[r], d);
                if (lane >= d) inc[r] = (acc_t)(o + inc[r]);
            }
        }
        if (a.lead > 0) __syncthreads();  // gk_publish_ahead's warp 0 is done with s_run
        for (int r = 0; r < GK_R; ++r) {
            const acc_t o = gk_shfl_up(inc[r], 1);
            before[r] = lane == 0 ? (acc_t)0 : o;
            if (lane == GK_LANES - 1) s_run[r * GK_WARPS + warp] = inc[r];
        }
    }
    __syncthreads();
    if (warp == 0) {
        // The table's exclusive prefixes (run by run, warp by warp) and the tile's sum.
        acc_t e[GK_E];
        acc_t mine = (acc_t)0;
        for (int k = 0; k < GK_E; ++k) {
            const int at = lane * GK_E + k;
            const acc_t x = at < GK_R * GK_WARPS ? s_run[at] : (acc_t)0;
            e[k] = mine;
            mine = (acc_t)(mine + x);
        }
        acc_t inc = mine;
        for (int d = 1; d < GK_LANES; d *= 2) {
            const acc_t o = gk_shfl_up(inc, d);
            if (lane >= d) inc = (acc_t)(o + inc);
        }
        const acc_t o = gk_shfl_up(inc, 1);
        const acc_t lanes_before = lane == 0 ? (acc_t)0 : o;
        const acc_t sum = gk_shfl(inc, GK_LANES - 1);
        for (int k = 0; k < GK_E; ++k) {
            const int at = lane * GK_E + k;
            if (at < GK_R * GK_WARPS) s_run[at] = (acc_t)(lanes_before + e[k]);
        }
        const gk_i64 s0 = tr.row * a.tiles_per_row;
        acc_t carry = (acc_t)0;
        if (tr.q > 0) {
            // With a lead, the sum is published already (the same bits): not again.
            if (lane == 0 && a.lead == 0) gk_state_publish(a, s0 + tr.q, GK_FLAG_SUM, sum);
            carry = gk_lookback(a, s0, tr.q, lane, s_stash);
        }
        if (lane == 0) {
            gk_state_publish(a, s0 + tr.q, GK_FLAG_PREFIX, (acc_t)(carry + sum));
            s_carry = carry;
        }
    }
    __syncthreads();
    // Pass 2: the running sums, from the staged chunks.
    const acc_t carry = s_carry;
    for (int r = 0; r < GK_R; ++r) {
        const chunk_t c = s_data[r * GK_T + t];
        const acc_t base = (acc_t)(carry + (acc_t)(s_run[r * GK_WARPS + warp] + before[r]));
        acc_t y[GK_V];
        acc_t s = (acc_t)c.v[0];
        y[0] = (acc_t)(base + s);
        for (int k = 1; k < GK_V; ++k) {
            s = (acc_t)(s + (acc_t)c.v[k]);
            y[k] = (acc_t)(base + s);
        }
        const gk_i64 i0 = tr.start + (gk_i64)(r * GK_T + t) * GK_V;
        if (tr.out_vec && i0 + GK_V <= a.n) {
            gk_store_run(tr.out + i0, y);
        } else {
            for (int k = 0; k < GK_V; ++k) {
                if (i0 + k < a.n) tr.out[(i0 + k) * a.out_step] = (out_t)y[k];
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
