// Coordinates of the true elements of a contiguous bool array (nonzero, boolean-mask indexing),
// a tile of GK_COMPACT_TILE elements per block, in three launches: gk_count_tiles counts each
// tile's hits, the counts' running sum is taken (the cumsum kernel), and gk_write_nonzero recounts
// its tile and writes each hit's coordinates in order: row k of the (ndim, total) int64 output is
// coordinate k. A tile is staged through shared memory so that global reads are coalesced while
// each thread owns GK_COMPACT_ITEMS consecutive elements (order is kept by a block-wide exclusive
// scan).
#include "args.cuh"
#include "compat.cuh"

// Bit j of the result: element tile_start + threadIdx.x * GK_COMPACT_ITEMS + j is true.
__device__ inline unsigned gk_tile_bits(const gk_compact_args& a, gk_i64 tile_start,
                                        gk_u64* stage) {
    const gk_u8* mask = reinterpret_cast<const gk_u8*>(a.mask);
    gk_u8* bytes = reinterpret_cast<gk_u8*>(stage);
    const int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < GK_COMPACT_ITEMS; ++i) {
        const gk_i64 e = tile_start + i * GK_COMPACT_THREADS + t;
        bytes[i * GK_COMPACT_THREADS + t] = e < a.n ? (gk_u8)(mask[e] != 0) : (gk_u8)0;
    }
    __syncthreads();
    const gk_u64 lo = stage[2 * t], hi = stage[2 * t + 1];  // this thread's 16 flags
    unsigned bits = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        bits |= (unsigned)((lo >> (8 * j)) & 1) << j;
        bits |= (unsigned)((hi >> (8 * j)) & 1) << (j + 8);
    }
    return bits;
}

// Exclusive scan of v over the block (Hillis-Steele in shared memory); *total gets the sum.
__device__ inline int gk_block_exclusive_scan(int v, int* buf, int* total) {
    const int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int width = 1; width < GK_COMPACT_THREADS; width *= 2) {
        const int add = t >= width ? buf[t - width] : 0;
        __syncthreads();
        buf[t] += add;
        __syncthreads();
    }
    *total = buf[GK_COMPACT_THREADS - 1];
    return buf[t] - v;
}

GK_KERNEL void gk_count_tiles(const gk_compact_args a) {
    __shared__ gk_u64 stage[GK_COMPACT_TILE / 8];
    __shared__ int buf[GK_COMPACT_THREADS];
    const gk_i64 tile = blockIdx.x;
    const unsigned bits = gk_tile_bits(a, tile * GK_COMPACT_TILE, stage);
    int total;
    gk_block_exclusive_scan(__popc(bits), buf, &total);
    if (threadIdx.x == 0) reinterpret_cast<gk_i64*>(a.counts)[tile] = total;
}

GK_KERNEL void gk_write_nonzero(const gk_compact_args a) {
    __shared__ gk_u64 stage[GK_COMPACT_TILE / 8];
    __shared__ int buf[GK_COMPACT_THREADS];
    const gk_i64 tile = blockIdx.x;
    const gk_i64 tile_start = tile * GK_COMPACT_TILE;
    unsigned bits = gk_tile_bits(a, tile_start, stage);
    int total;
    const int before = gk_block_exclusive_scan(__popc(bits), buf, &total);
    const gk_i64* prefix = reinterpret_cast<const gk_i64*>(a.prefix);
    gk_i64 pos = prefix[tile] - total + before;  // prefix is inclusive
    gk_i64* out = reinterpret_cast<gk_i64*>(a.out);
    while (bits) {
        const int j = __ffs(bits) - 1;
        bits &= bits - 1;
        gk_i64 flat = tile_start + (gk_i64)threadIdx.x * GK_COMPACT_ITEMS + j;
        for (int d = a.ndim - 1; d >= 0; --d) {
            out[d * a.total + pos] = flat % a.shape[d];
            flat /= a.shape[d];
        }
        ++pos;
    }
}
