// Stable LSD radix sort of keys of any gpukit dtype, optionally carrying int64 values (argsort).
//
// Device-wide ("onesweep"): gk_sort_histogram counts every pass's digits in one read of the keys
// (16-byte loads), gk_sort_scan turns the counts into each digit's first output position, and one
// gk_sort_onesweep launch per pass moves the keys: a block takes the next tile (a counter gives
// tiles out in launch order, so every earlier tile is running or done), ranks its digits stably
// (warp matching), publishes its digit counts and adds up those of the tiles before it
// (decoupled look-back over integer counts, so the result is the same on every run), and
// scatters through shared memory so that each digit's run is written contiguously.
//
// Rows that fit in one block (gk_sort_rows) are sorted entirely in shared memory, a block per row.
//
// Defines: GK_KEY_T (raw bits: gk_u8, gk_u16, gk_u32, gk_u64), GK_KEY_KIND and GK_KEY_INF
// (sort_common.cuh), GK_VALUES (int64 values carried), GK_THREADS, GK_ITEMS and GK_MIN_BLOCKS
// (the onesweep tile and blocks per SM), GK_LOOKBACK (predecessors read at once by the
// look-back), GK_RANK_MASKS (the onesweep ranks with shared-memory masks, else warp matches),
// GK_ROW_ITEMS (keys
// per thread of the row sort), all
// chosen by gpukit/runtime/sort_plan.py. The digit width is GK_SORT_RADIX_BITS (geometry.cuh).
#include "args.cuh"
#include "sort_common.cuh"

typedef GK_KEY_T raw_key;

#define RADIX (1 << GK_SORT_RADIX_BITS)
#define TILE (GK_THREADS * GK_ITEMS)
#define WARPS (GK_THREADS / GK_LANES)
#define KEY_PASSES \
    ((int)(sizeof(raw_key) * 8 / GK_SORT_RADIX_BITS))  // at most; a.key_passes are run
#define FLAG_AGGREGATE 1u  // a tile's own counts; inclusive counts carry 2 + (pass & 1)
#define COUNT_MASK 0x3fffffffu

static_assert(GK_THREADS >= RADIX, "the look-back takes a thread per digit");
static_assert((sizeof(raw_key) * 8) % GK_SORT_RADIX_BITS == 0, "digits tile the key");
static_assert(GK_SORT_PORTION_KEYS < (1 << 30), "a portion's counts fit the look-back words");

extern __shared__ __align__(16) unsigned char gk_sort_smem[];

__device__ inline raw_key ordered(raw_key k, gk_u64 key_xor) {
    return (raw_key)(gk_order_bits<GK_KEY_KIND>(k, (raw_key)GK_KEY_INF) ^ (raw_key)key_xor);
}

__device__ inline unsigned digit_of(gk_u64 bits, int shift) {
    return (unsigned)((bits >> shift) & (RADIX - 1));
}

// ---------------------------------------------------------------------------------------------
// Histogram of every pass over a part of one portion (blockIdx.y), written per block.

__device__ inline void count_key(unsigned* hist, raw_key k, const gk_sort_args& a) {
    const gk_u64 o = ordered(k, a.key_xor);
#pragma unroll
    for (int p = 0; p < KEY_PASSES; ++p)
        if (p < a.key_passes) atomicAdd(&hist[p * RADIX + digit_of(o, p * GK_SORT_RADIX_BITS)], 1u);
}

GK_KERNEL void gk_sort_histogram(const gk_sort_args a) {
    unsigned* hist = reinterpret_cast<unsigned*>(gk_sort_smem);  // passes * RADIX
    const int t = threadIdx.x;
    for (int i = t; i < a.passes * RADIX; i += blockDim.x) hist[i] = 0;
    // The passes that follow need their look-back words and tile counters zeroed.
    const gk_i64 threads = (gk_i64)gridDim.x * gridDim.y * blockDim.x;
    const gk_i64 me = ((gk_i64)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + t;
    unsigned* status = reinterpret_cast<unsigned*>(a.status);
    unsigned* counters = reinterpret_cast<unsigned*>(a.tile_counters);
    for (gk_i64 i = me; i < a.status_words; i += threads) status[i] = 0;
    for (gk_i64 i = me; i < a.counter_words; i += threads) counters[i] = 0;
    __syncthreads();

    const gk_i64 portion_len = a.portion_tiles * TILE;
    const gk_i64 start = (gk_i64)blockIdx.y * portion_len;
    const gk_i64 len = min(portion_len, a.n - start);
    const gk_i64 vec = gk_vec16<raw_key>::N;
    const gk_i64 chunk = ((len + gridDim.x - 1) / gridDim.x + vec - 1) / vec * vec;
    const gk_i64 lo = start + min(len, (gk_i64)blockIdx.x * chunk);
    const gk_i64 hi = start + min(len, (gk_i64)(blockIdx.x + 1) * chunk);
    const raw_key* keys = reinterpret_cast<const raw_key*>(a.keys_in);
    gk_i64 tail = lo;
    if ((reinterpret_cast<gk_u64>(keys + lo) & 15) == 0) {
        const gk_i64 nv = (hi - lo) / vec;
        const gk_vec16<raw_key>* kv = reinterpret_cast<const gk_vec16<raw_key>*>(keys + lo);
        constexpr int UNROLL = 4;  // loads in flight per thread
        for (gk_i64 v0 = t; v0 < nv; v0 += UNROLL * blockDim.x) {
            gk_vec16<raw_key> x[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
                if (v0 + u * blockDim.x < nv) x[u] = kv[v0 + u * blockDim.x];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
                if (v0 + u * blockDim.x < nv)
#pragma unroll
                    for (int j = 0; j < gk_vec16<raw_key>::N; ++j) count_key(hist, x[u].v[j], a);
        }
        tail = lo + nv * vec;
    }
    for (gk_i64 e = tail + t; e < hi; e += blockDim.x) count_key(hist, keys[e], a);

    if (a.passes > a.key_passes && lo < hi) {  // row digits: each row adds its overlap
        for (gk_i64 r = lo / a.seg_len + t; r <= (hi - 1) / a.seg_len; r += blockDim.x) {
            const gk_i64 overlap = min(hi, (r + 1) * a.seg_len) - max(lo, r * a.seg_len);
            for (int p = a.key_passes; p < a.passes; ++p) {
                const unsigned d = digit_of((gk_u64)r, (p - a.key_passes) * GK_SORT_RADIX_BITS);
                atomicAdd(&hist[p * RADIX + d], (unsigned)overlap);
            }
        }
    }
    __syncthreads();
    unsigned* out = reinterpret_cast<unsigned*>(a.block_counts) +
                    ((gk_i64)blockIdx.y * gridDim.x + blockIdx.x) * a.passes * RADIX;
    for (int i = t; i < a.passes * RADIX; i += blockDim.x) out[i] = hist[i];
}

// ---------------------------------------------------------------------------------------------
// digit_starts[pass][0][d]: the number of keys of smaller digits in pass `pass` (the later
// portions' starts are written by the last tile of the portion before). A block of 4 * RADIX
// threads per pass; sums run in a fixed order.

GK_KERNEL void gk_sort_scan(const gk_sort_args a) {
    constexpr int GROUPS = 4;  // blockDim.x == GROUPS * RADIX: each group sums a share of blocks
    __shared__ gk_i64 s_part[GROUPS][RADIX];
    __shared__ gk_i64 s_run[RADIX];
    const int d = threadIdx.x % RADIX, g = threadIdx.x / RADIX, pass = blockIdx.x;
    const unsigned* counts = reinterpret_cast<const unsigned*>(a.block_counts);
    const gk_i64 blocks = (gk_i64)a.portions * a.hist_blocks;
    gk_i64 part = 0;
#pragma unroll 8
    for (gk_i64 b = g; b < blocks; b += GROUPS) part += counts[(b * a.passes + pass) * RADIX + d];
    s_part[g][d] = part;
    __syncthreads();
    if (g == 0) {
        gk_i64 total = 0;
        for (int k = 0; k < GROUPS; ++k) total += s_part[k][d];
        s_run[d] = total;
        s_part[0][d] = total;
    }
    __syncthreads();
    for (int width = 1; width < RADIX; width *= 2) {  // inclusive running sum over the digits
        const gk_i64 add = g == 0 && d >= width ? s_run[d - width] : 0;
        __syncthreads();
        if (g == 0) s_run[d] += add;
        __syncthreads();
    }
    if (g == 0)
        reinterpret_cast<gk_i64*>(a.digit_starts)[(gk_i64)pass * a.portions * RADIX + d] =
            s_run[d] - s_part[0][d];
}

// ---------------------------------------------------------------------------------------------
// One pass over one portion.

// A tile's digit count goes out as soon as the tile is ranked (tile 0's as inclusive at once).
__device__ inline void publish(const gk_sort_args& a, gk_i64 tile, unsigned count, int d) {
    volatile unsigned* status = reinterpret_cast<volatile unsigned*>(a.status) +
                                (gk_i64)a.portion * a.portion_tiles * RADIX + d;
    const unsigned flag = tile == 0 ? 2u + (unsigned)(a.pass & 1) : FLAG_AGGREGATE;
    status[tile * RADIX] = flag << 30 | count;
}

// The number of keys of digit d in the portion's tiles before `tile`; publishes this tile's
// inclusive count. The predecessors are read GK_LOOKBACK at a time (independent loads), nearest
// first, summed up to the first inclusive one; an unpublished one is read again.
__device__ inline unsigned look_back(const gk_sort_args& a, gk_i64 tile, unsigned count, int d) {
    if (tile == 0) return 0;
    volatile unsigned* status = reinterpret_cast<volatile unsigned*>(a.status) +
                                (gk_i64)a.portion * a.portion_tiles * RADIX + d;
    const unsigned inclusive = 2u + (unsigned)(a.pass & 1);
    unsigned before = 0;
    for (gk_i64 q = tile - 1;;) {  // tile 0 is inclusive, so q stays >= 0
        unsigned w[GK_LOOKBACK];
#pragma unroll
        for (int k = 0; k < GK_LOOKBACK; ++k) w[k] = q - k >= 0 ? status[(q - k) * RADIX] : 0u;
        bool found = false, blocked = false;
        int taken = 0;
#pragma unroll
        for (int k = 0; k < GK_LOOKBACK; ++k) {
            const unsigned flag = w[k] >> 30;
            if (!found && !blocked) {
                if (flag == FLAG_AGGREGATE || flag == inclusive) {
                    before += w[k] & COUNT_MASK;
                    ++taken;
                    found = flag == inclusive;
                } else {
                    blocked = true;  // not yet published this pass
                }
            }
        }
        if (found) break;
        q -= taken;
    }
    status[tile * RADIX] = inclusive << 30 | (before + count);
    return before;
}

GK_KERNEL void __launch_bounds__(GK_THREADS, GK_MIN_BLOCKS) gk_sort_onesweep(const gk_sort_args a) {
    __shared__ unsigned s_counts[WARPS * RADIX];
    __shared__ unsigned s_first[RADIX];  // where the digit's run starts in the sorted tile
    __shared__ gk_i64 s_out[RADIX];      // output position of the run's element 0, minus s_first
    __shared__ unsigned s_tile;
    const int t = threadIdx.x, lane = gk_lane(), warp = t / GK_LANES;
    const bool row_pass = a.pass >= a.key_passes;
    const int shift = (row_pass ? a.pass - a.key_passes : a.pass) * GK_SORT_RADIX_BITS;
    if (t == 0) {
        unsigned* counter = reinterpret_cast<unsigned*>(a.tile_counters) + a.pass * a.portions;
        s_tile = atomicAdd(counter + a.portion, 1u);
    }
    for (int i = t; i < WARPS * RADIX; i += GK_THREADS) s_counts[i] = 0;
#if GK_RANK_MASKS
    __shared__ unsigned s_masks[WARPS * (RADIX + 1)];
    for (int i = t; i < WARPS * (RADIX + 1); i += GK_THREADS) s_masks[i] = 0;
#endif
    gk_i64* starts = reinterpret_cast<gk_i64*>(a.digit_starts) +
                     ((gk_i64)a.pass * a.portions + a.portion) * RADIX + t;
    const gk_i64 start = t < RADIX ? *starts : 0;  // read while the tile loads
    __syncthreads();
    const gk_i64 tile = s_tile;
    const gk_i64 tile_start = ((gk_i64)a.portion * a.portion_tiles + tile) * TILE;
    const gk_i64 run = tile_start + (gk_i64)warp * GK_LANES * GK_ITEMS + lane;
    const gk_i64 left = a.n - run;  // item i is in the input when i * 32 < left

    const raw_key* keys_in = reinterpret_cast<const raw_key*>(a.keys_in) + run;
    raw_key keys[GK_ITEMS];
    unsigned slot[GK_ITEMS];
#if GK_VALUES
    const gk_i64* vals_in = a.vals_in ? reinterpret_cast<const gk_i64*>(a.vals_in) + run : nullptr;
    gk_i64 vals[GK_ITEMS];
#endif
#pragma unroll
    for (int i = 0; i < GK_ITEMS; ++i) {
        const bool in = i * GK_LANES < left;
        keys[i] = in ? keys_in[i * GK_LANES] : (raw_key)0;
#if GK_VALUES
        vals[i] = in ? (vals_in ? vals_in[i * GK_LANES] : run + i * GK_LANES) : 0;
        const gk_u64 bits = row_pass ? (gk_u64)(vals[i] / a.seg_len) : ordered(keys[i], a.key_xor);
#else
        const gk_u64 bits = ordered(keys[i], a.key_xor);
#endif
        slot[i] = in ? digit_of(bits, shift) : (unsigned)RADIX;
    }
#if GK_RANK_MASKS
    gk_rank_in_warp_masks(slot, s_counts + warp * RADIX, s_masks + warp * (RADIX + 1), RADIX);
#else
    gk_rank_in_warp(slot, s_counts + warp * RADIX, RADIX, GK_SORT_RADIX_BITS);
#endif
    __syncthreads();
    gk_scan_over_warps(s_counts, WARPS, s_first, RADIX);
    __syncthreads();
    const unsigned count = t < RADIX ? s_first[t] : 0u;
    if (t < RADIX) publish(a, tile, count, t);
    __syncthreads();
    // The tile's own order, while the predecessors' counts arrive.
    gk_scan_digits(s_first, RADIX);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < GK_ITEMS; ++i) {
        const unsigned d = GK_SLOT_DIGIT(slot[i]);
        if (d < RADIX) slot[i] += (s_first[d] + s_counts[warp * RADIX + d]) << 16;
    }

    // Through shared memory in sorted order, so that each digit's run is written contiguously;
    // the digit of each sorted slot (j = t + k * GK_THREADS) is kept for the second exchange.
    const int tile_len = (int)min((gk_i64)TILE, a.n - tile_start);
    unsigned char slot_digit[GK_ITEMS];
    raw_key* s_keys = reinterpret_cast<raw_key*>(gk_sort_smem);
    raw_key* keys_out = reinterpret_cast<raw_key*>(a.keys_out);
#if GK_VALUES
    gk_i64* s_vals = reinterpret_cast<gk_i64*>(gk_sort_smem);
    if (row_pass) {
#pragma unroll
        for (int i = 0; i < GK_ITEMS; ++i)
            if (GK_SLOT_DIGIT(slot[i]) < RADIX) s_vals[GK_SLOT_POS(slot[i])] = vals[i];
    } else
#endif
    {
#pragma unroll
        for (int i = 0; i < GK_ITEMS; ++i)
            if (GK_SLOT_DIGIT(slot[i]) < RADIX) s_keys[GK_SLOT_POS(slot[i])] = keys[i];
    }
    if (t < RADIX) {
        const gk_i64 out = start + look_back(a, tile, count, t);
        // The next portion (the next launch) starts where this one's runs end.
        if (tile == gridDim.x - 1 && a.portion + 1 < a.portions) starts[RADIX] = out + count;
        s_out[t] = out - s_first[t];
    }
    __syncthreads();
#if GK_VALUES
    gk_i64* vals_out = reinterpret_cast<gk_i64*>(a.vals_out);
    if (row_pass) {
#pragma unroll
        for (int k = 0; k < GK_ITEMS; ++k) {
            const int j = t + k * GK_THREADS;
            if (j < tile_len) {
                gk_i64 v = s_vals[j];
                const gk_i64 row = v / a.seg_len;
                const unsigned d = digit_of((gk_u64)row, shift);
                slot_digit[k] = (unsigned char)d;
                if (a.local_index) v -= row * a.seg_len;
                if (vals_out) vals_out[s_out[d] + j] = v;
            }
        }
        __syncthreads();
        if (keys_out) {
#pragma unroll
            for (int i = 0; i < GK_ITEMS; ++i)
                if (GK_SLOT_DIGIT(slot[i]) < RADIX) s_keys[GK_SLOT_POS(slot[i])] = keys[i];
            __syncthreads();
#pragma unroll
            for (int k = 0; k < GK_ITEMS; ++k) {
                const int j = t + k * GK_THREADS;
                if (j < tile_len) keys_out[s_out[slot_digit[k]] + j] = s_keys[j];
            }
        }
        return;
    }
#endif
#pragma unroll
    for (int k = 0; k < GK_ITEMS; ++k) {
        const int j = t + k * GK_THREADS;
        if (j < tile_len) {
            const raw_key key = s_keys[j];
            const unsigned d = digit_of(ordered(key, a.key_xor), shift);
            slot_digit[k] = (unsigned char)d;
            if (keys_out) keys_out[s_out[d] + j] = key;
        }
    }
#if GK_VALUES
    if (vals_out) {
        __syncthreads();
#pragma unroll
        for (int i = 0; i < GK_ITEMS; ++i)
            if (GK_SLOT_DIGIT(slot[i]) < RADIX) s_vals[GK_SLOT_POS(slot[i])] = vals[i];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < GK_ITEMS; ++k) {
            const int j = t + k * GK_THREADS;
            if (j < tile_len) vals_out[s_out[slot_digit[k]] + j] = s_vals[j];
        }
    }
#else
    (void)slot_digit;
#endif
}

// ---------------------------------------------------------------------------------------------
// Rows of seg_len <= blockDim.x * GK_ROW_ITEMS keys, a block per row, every pass in shared
// memory. vals_out (optional) gets each key's index within its row. Dynamic shared memory:
// (blockDim.x / 32) * RADIX counters, then blockDim.x * GK_ROW_ITEMS slots of the wider of a key
// and (with values) an int64.

GK_KERNEL void gk_sort_rows(const gk_sort_args a) {
    const int warps = blockDim.x / GK_LANES;
    const int t = threadIdx.x, lane = gk_lane(), warp = t / GK_LANES;
    unsigned* s_counts = reinterpret_cast<unsigned*>(gk_sort_smem);
    unsigned char* s_slots = gk_sort_smem + warps * RADIX * sizeof(unsigned);
    __shared__ unsigned s_first[RADIX];
    raw_key* s_keys = reinterpret_cast<raw_key*>(s_slots);
    const gk_i64 rows = a.n / a.seg_len;
    const int len = (int)a.seg_len;
    const int run = warp * GK_LANES * GK_ROW_ITEMS + lane;  // item i of this thread: run + 32 i
    for (gk_i64 row = blockIdx.x; row < rows; row += gridDim.x) {
        const raw_key* in = reinterpret_cast<const raw_key*>(a.keys_in) + row * a.seg_len;
        raw_key keys[GK_ROW_ITEMS];
#if GK_VALUES
        gk_i64* s_vals = reinterpret_cast<gk_i64*>(s_slots);
        gk_i64 vals[GK_ROW_ITEMS];
#endif
#pragma unroll
        for (int i = 0; i < GK_ROW_ITEMS; ++i) {
            const int e = run + i * GK_LANES;
            keys[i] = e < len ? in[e] : (raw_key)0;
#if GK_VALUES
            vals[i] = e;
#endif
        }
        for (int pass = 0; pass < a.key_passes; ++pass) {
            const int shift = pass * GK_SORT_RADIX_BITS;
            unsigned slot[GK_ROW_ITEMS];
#pragma unroll
            for (int i = 0; i < GK_ROW_ITEMS; ++i) {
                const bool in_row = run + i * GK_LANES < len;
                slot[i] = in_row ? digit_of(ordered(keys[i], a.key_xor), shift) : (unsigned)RADIX;
            }
            for (int d = lane; d < RADIX; d += GK_LANES) s_counts[warp * RADIX + d] = 0;
            gk_syncwarp();
            gk_rank_in_warp(slot, s_counts + warp * RADIX, RADIX, GK_SORT_RADIX_BITS);
            __syncthreads();
            gk_scan_over_warps(s_counts, warps, s_first, RADIX);
            __syncthreads();
            gk_scan_digits(s_first, RADIX);
            __syncthreads();
#pragma unroll
            for (int i = 0; i < GK_ROW_ITEMS; ++i) {
                const unsigned d = GK_SLOT_DIGIT(slot[i]);
                if (d < RADIX) {
                    slot[i] += (s_first[d] + s_counts[warp * RADIX + d]) << 16;
                    s_keys[GK_SLOT_POS(slot[i])] = keys[i];
                }
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < GK_ROW_ITEMS; ++i) keys[i] = s_keys[run + i * GK_LANES];
#if GK_VALUES
            __syncthreads();
#pragma unroll
            for (int i = 0; i < GK_ROW_ITEMS; ++i)
                if (GK_SLOT_DIGIT(slot[i]) < RADIX) s_vals[GK_SLOT_POS(slot[i])] = vals[i];
            __syncthreads();
#pragma unroll
            for (int i = 0; i < GK_ROW_ITEMS; ++i) vals[i] = s_vals[run + i * GK_LANES];
#endif
            __syncthreads();  // the next pass (or row) overwrites counters and slots
        }
        raw_key* keys_out = reinterpret_cast<raw_key*>(a.keys_out);
#if GK_VALUES
        gk_i64* vals_out = reinterpret_cast<gk_i64*>(a.vals_out);
#endif
#pragma unroll
        for (int i = 0; i < GK_ROW_ITEMS; ++i) {
            const int e = run + i * GK_LANES;
            if (e < len) {
                if (keys_out) keys_out[row * a.seg_len + e] = keys[i];
#if GK_VALUES
                if (vals_out) vals_out[row * a.seg_len + e] = vals[i];
#endif
            }
        }
    }
}
