// What builds on sorted keys: binary search (searchsorted, digitize, isin), the distinct values of
// a sorted array with their first index, inverse and counts (unique), and histograms.
//
// Defines: GK_KEY_T, GK_KEY_KIND, GK_KEY_INF (the keys' raw bits and kind, sort_common.cuh).
// Blocks of GK_BLOCK threads; unique's tiles give each thread GK_UNIQUE_ITEMS keys (geometry.cuh).
#include "args.cuh"
#include "sort_common.cuh"

typedef GK_KEY_T raw_key;

#define UNIQUE_TILE (GK_BLOCK * GK_UNIQUE_ITEMS)

extern __shared__ __align__(16) unsigned char gk_search_smem[];

__device__ inline raw_key ordered(raw_key k) {
    return gk_order_bits<GK_KEY_KIND>(k, (raw_key)GK_KEY_INF);
}

// Elements of ordered bits `keys` [0, n) that go before q: those < q, or <= q when `right`.
__device__ inline gk_i64 insertion_point(const raw_key* keys, gk_i64 n, raw_key q, bool right) {
    gk_i64 lo = 0, hi = n;
    while (lo < hi) {
        const gk_i64 mid = lo + (hi - lo) / 2;
        const raw_key v = ordered(keys[mid]);
        if (right ? v <= q : v < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

GK_KERNEL void gk_searchsorted(const gk_search_args a) {
    const raw_key* sorted = reinterpret_cast<const raw_key*>(a.sorted);
    const gk_i64* sorter = reinterpret_cast<const gk_i64*>(a.sorter);
    const raw_key* queries = reinterpret_cast<const raw_key*>(a.queries);
    gk_i64* out = reinterpret_cast<gk_i64*>(a.out);
    const gk_i64 stride = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.m; i += stride) {
        const raw_key q = ordered(queries[i]);
        if (sorter == nullptr) {
            out[i] = insertion_point(sorted, a.n, q, a.right);
            continue;
        }
        gk_i64 lo = 0, hi = a.n;
        while (lo < hi) {
            const gk_i64 mid = lo + (hi - lo) / 2;
            gk_i64 at = sorter[mid];
            if (at < 0 || at >= a.n) {  // NumPy refuses such a sorter; read nothing out of range
                if (a.err) *reinterpret_cast<int*>(a.err) = 1;
                at = at < 0 ? 0 : a.n - 1;
            }
            const raw_key v = ordered(sorted[at]);
            if (a.right ? v <= q : v < q)
                lo = mid + 1;
            else
                hi = mid;
        }
        out[i] = lo;
    }
}

// ---------------------------------------------------------------------------------------------
// unique over sorted keys, three launches: gk_unique_count (runs starting in each tile, and which
// keys start them), then gk_unique_scan (their running sum; the total is the only number the host
// reads), then gk_unique_write; gk_unique_counts turns run starts into counts.

// A tile is laid out warp by warp: warp w holds 32 * GK_UNIQUE_ITEMS consecutive keys, item i
// of lane l being element i * 32 + l of its run, so that every load is coalesced. Bit i of the
// result: whether this lane's item i starts a run (its neighbour comes by shuffle).
__device__ inline unsigned run_starts(const gk_unique_args& a, const raw_key* keys, gk_i64 run) {
    const int lane = gk_lane();
    const raw_key nan = (raw_key) ~(raw_key)0;
    gk_u64 carry = run > lane && run - lane - 1 < a.n ? (gk_u64)ordered(keys[run - lane - 1]) : 0;
    unsigned flags = 0;
#pragma unroll
    for (int i = 0; i < GK_UNIQUE_ITEMS; ++i) {
        const gk_i64 e = run + (gk_i64)i * GK_LANES;
        const gk_u64 k = e < a.n ? (gk_u64)ordered(keys[e]) : 0;
        const gk_u64 up = gk_shfl(k, lane == 0 ? GK_LANES - 1 : lane - 1);
        const gk_u64 prev = lane == 0 ? carry : up;
        carry = up;  // lane 0 gets the last lane's key of this item
        bool start = e == 0 || k != prev;
        if (GK_KEY_KIND == GK_KEY_FLOAT && a.nan_distinct && k == (gk_u64)nan) start = true;
        if (e < a.n && start) flags |= 1u << i;
    }
    return flags;
}

// Exclusive running sum of v over the block; *total gets the sum.
__device__ inline gk_i64 block_exclusive_sum(gk_i64 v, gk_i64* warp_sums, gk_i64* total) {
    const int lane = gk_lane(), warp = threadIdx.x / GK_LANES, warps = blockDim.x / GK_LANES;
    gk_i64 incl = v;
    for (int o = 1; o < GK_LANES; o *= 2) {
        const gk_i64 up = gk_shfl(incl, lane >= o ? lane - o : lane);
        if (lane >= o) incl += up;
    }
    if (lane == GK_LANES - 1) warp_sums[warp] = incl;
    __syncthreads();
    gk_i64 before = 0, all = 0;
    for (int w = 0; w < warps; ++w) {
        before += w < warp ? warp_sums[w] : 0;
        all += warp_sums[w];
    }
    __syncthreads();  // warp_sums may be reused by the caller
    *total = all;
    return before + incl - v;
}

__device__ inline gk_i64 unique_run(int warp, int lane) {
    return (gk_i64)blockIdx.x * UNIQUE_TILE + (gk_i64)warp * GK_LANES * GK_UNIQUE_ITEMS + lane;
}

// Counts the runs starting in each tile and keeps, per warp and item, the lanes whose key
// starts one (a.run_flags), so that gk_unique_write reads no key but the distinct ones.
GK_KERNEL void gk_unique_count(const gk_unique_args a) {
    __shared__ gk_i64 warp_sums[GK_BLOCK / GK_LANES];
    const raw_key* keys = reinterpret_cast<const raw_key*>(a.keys);
    const int lane = gk_lane(), warp = threadIdx.x / GK_LANES;
    const unsigned flags = run_starts(a, keys, unique_run(warp, lane));
    unsigned mine = 0;
#pragma unroll
    for (int i = 0; i < GK_UNIQUE_ITEMS; ++i) {
        const unsigned item_starts = gk_ballot(flags >> i & 1u);
        if (lane == i) mine = item_starts;
    }
    const gk_i64 warp_id = (gk_i64)blockIdx.x * (GK_BLOCK / GK_LANES) + warp;
    if (lane < GK_UNIQUE_ITEMS)
        reinterpret_cast<unsigned*>(a.run_flags)[warp_id * GK_UNIQUE_ITEMS + lane] = mine;
    gk_i64 total;
    block_exclusive_sum(__popc(flags), warp_sums, &total);
    if (threadIdx.x == 0) reinterpret_cast<gk_i64*>(a.tile_counts)[blockIdx.x] = total;
}

// One block: tile_counts[0, tiles) becomes its exclusive running sum, tile_counts[tiles] the total.
GK_KERNEL void gk_unique_scan(const gk_unique_args a) {
    __shared__ gk_i64 warp_sums[GK_BLOCK / GK_LANES];
    gk_i64* counts = reinterpret_cast<gk_i64*>(a.tile_counts);
    const gk_i64 tiles = (a.n + UNIQUE_TILE - 1) / UNIQUE_TILE;
    gk_i64 carry = 0;
    for (gk_i64 start = 0; start < tiles; start += GK_BLOCK) {
        const gk_i64 i = start + threadIdx.x;
        const gk_i64 v = i < tiles ? counts[i] : 0;
        gk_i64 total;
        const gk_i64 before = block_exclusive_sum(v, warp_sums, &total);
        if (i < tiles) counts[i] = carry + before;
        carry += total;
    }
    if (threadIdx.x == 0) counts[tiles] = carry;
}

GK_KERNEL void gk_unique_write(const gk_unique_args a) {
    __shared__ gk_i64 warp_sums[GK_BLOCK / GK_LANES];
    const raw_key* keys = reinterpret_cast<const raw_key*>(a.keys);
    const gk_i64* perm = reinterpret_cast<const gk_i64*>(a.perm);
    const int lane = gk_lane(), warp = threadIdx.x / GK_LANES;
    const gk_i64 run = unique_run(warp, lane);
    const gk_i64 warp_id = (gk_i64)blockIdx.x * (GK_BLOCK / GK_LANES) + warp;
    const unsigned mine =
        lane < GK_UNIQUE_ITEMS
            ? reinterpret_cast<const unsigned*>(a.run_flags)[warp_id * GK_UNIQUE_ITEMS + lane]
            : 0u;
    unsigned starts_of_lane = 0;  // this lane's starts, item by item
#pragma unroll
    for (int i = 0; i < GK_UNIQUE_ITEMS; ++i) starts_of_lane += gk_shfl(mine, i) >> lane & 1u;
    // The warp's first new value's place: the tile's, then the warps' before this one.
    gk_i64 total;
    const gk_i64 before = block_exclusive_sum(starts_of_lane, warp_sums, &total);
    gk_i64 pos = reinterpret_cast<const gk_i64*>(a.tile_counts)[blockIdx.x] +
                 gk_shfl(before, 0);  // lane 0's share starts the warp's
    const unsigned lt = gk_lanemask_lt();
    for (int i = 0; i < GK_UNIQUE_ITEMS; ++i) {
        const gk_i64 e = run + (gk_i64)i * GK_LANES;
        const unsigned item_starts = gk_shfl(mine, i);
        const unsigned starts = item_starts >> lane & 1u;
        // The run of element e: the number of starts up to and including it, minus one.
        const gk_i64 at = pos + __popc(item_starts & lt);
        if (e < a.n) {
            if (starts) {
                if (a.values) reinterpret_cast<raw_key*>(a.values)[at] = keys[e];
                if (a.index) reinterpret_cast<gk_i64*>(a.index)[at] = perm[e];
                if (a.starts) reinterpret_cast<gk_i64*>(a.starts)[at] = e;
            }
            if (a.inverse) reinterpret_cast<gk_i64*>(a.inverse)[perm[e]] = at + starts - 1;
        }
        pos += __popc(item_starts);
    }
}

GK_KERNEL void gk_unique_counts(const gk_unique_args a) {
    const gk_i64* starts = reinterpret_cast<const gk_i64*>(a.starts);
    gk_i64* counts = reinterpret_cast<gk_i64*>(a.counts);
    const gk_i64 stride = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 j = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; j < a.n_unique; j += stride)
        counts[j] = (j + 1 < a.n_unique ? starts[j + 1] : a.n) - starts[j];
}

// ---------------------------------------------------------------------------------------------
// Histograms. A value's bin: bin k holds [edges[k], edges[k+1]), the last bin its right edge
// too; NaN and values outside [edges[0], edges[nbins]] belong to none (nbins).

__device__ inline gk_i64 bin_of(const gk_hist_args& a, raw_key x) {
    const raw_key* edges = reinterpret_cast<const raw_key*>(a.edges);
    const raw_key q = ordered(x);
    const raw_key last = ordered(edges[a.nbins]);
    if (q < ordered(edges[0]) || q > last) return a.nbins;  // NaN is above every edge
    if (q == last) return a.nbins - 1;
    return insertion_point(edges, a.nbins + 1, q, true) - 1;
}

// Counts in shared memory when a.shared_bins (dynamic shared memory of nbins counters), else
// straight into a.counts; integer atomics, so the result is the same on every run.
GK_KERNEL void gk_histogram(const gk_hist_args a) {
    unsigned* local = reinterpret_cast<unsigned*>(gk_search_smem);
    gk_u64* counts = reinterpret_cast<gk_u64*>(a.counts);
    const raw_key* x = reinterpret_cast<const raw_key*>(a.x);
    gk_i64* bins = reinterpret_cast<gk_i64*>(a.bins);
    if (a.shared_bins) {
        for (gk_i64 b = threadIdx.x; b < a.nbins; b += blockDim.x) local[b] = 0;
        __syncthreads();
    }
    const gk_i64 stride = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += stride) {
        const gk_i64 b = bin_of(a, x[i]);
        if (bins) bins[i] = b;
        if (!counts || b == a.nbins) continue;
        if (a.shared_bins)
            atomicAdd(&local[b], 1u);
        else
            atomicAdd(&counts[b], 1ull);
    }
    if (counts && a.shared_bins) {
        __syncthreads();
        for (gk_i64 b = threadIdx.x; b < a.nbins; b += blockDim.x)
            if (local[b]) atomicAdd(&counts[b], (gk_u64)local[b]);
    }
}

// bincount of int64 bins in [0, nbins) (checked by the caller), as gk_histogram counts.
GK_KERNEL void gk_bincount(const gk_hist_args a) {
    unsigned* local = reinterpret_cast<unsigned*>(gk_search_smem);
    gk_u64* counts = reinterpret_cast<gk_u64*>(a.counts);
    const gk_i64* x = reinterpret_cast<const gk_i64*>(a.x);
    if (a.shared_bins) {
        for (gk_i64 b = threadIdx.x; b < a.nbins; b += blockDim.x) local[b] = 0;
        __syncthreads();
    }
    const gk_i64 stride = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += stride) {
        if (a.shared_bins)
            atomicAdd(&local[x[i]], 1u);
        else
            atomicAdd(&counts[x[i]], 1ull);
    }
    if (a.shared_bins) {
        __syncthreads();
        for (gk_i64 b = threadIdx.x; b < a.nbins; b += blockDim.x)
            if (local[b]) atomicAdd(&counts[b], (gk_u64)local[b]);
    }
}

// sums[b] = the sum of the weights of bin b, the elements sorted by bin (a.x: int64 bins in
// increasing order, a.weights alike): a block per bin, each thread summing a strided share in
// order, then a fixed tree, so that the result is the same on every run.
GK_KERNEL void gk_bin_sums(const gk_hist_args a) {
    __shared__ double partial[GK_BLOCK];
    const gk_i64* bins = reinterpret_cast<const gk_i64*>(a.x);
    const double* w = reinterpret_cast<const double*>(a.weights);
    for (gk_i64 b = blockIdx.x; b < a.nbins; b += gridDim.x) {
        gk_i64 lo = 0, hi = a.n;  // first element of bin >= b
        while (lo < hi) {
            const gk_i64 mid = lo + (hi - lo) / 2;
            if (bins[mid] < b)
                lo = mid + 1;
            else
                hi = mid;
        }
        gk_i64 end = lo, top = a.n;  // first element of bin > b
        while (end < top) {
            const gk_i64 mid = end + (top - end) / 2;
            if (bins[mid] <= b)
                end = mid + 1;
            else
                top = mid;
        }
        double s = 0.0;
        for (gk_i64 i = lo + threadIdx.x; i < end; i += GK_BLOCK) s += w[i];
        partial[threadIdx.x] = s;
        __syncthreads();
        for (int width = GK_BLOCK / 2; width > 0; width /= 2) {
            if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
            __syncthreads();
        }
        if (threadIdx.x == 0) reinterpret_cast<double*>(a.sums)[b] = partial[0];
        __syncthreads();
    }
}
