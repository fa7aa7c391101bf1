// Shared by the sorting kernels (sort.cu, search.cu): keys as order-preserving unsigned bits,
// 32-lane matching (CUDA and HIP; ballots are warp.cuh's), and the stable rank of a tile's digits.
#pragma once
#include "warp.cuh"

// Key kinds (GK_KEY_KIND): how a key's raw bits map to bits that sort as NumPy orders values.
#define GK_KEY_UINT 0   // unsigned integers and bool
#define GK_KEY_INT 1    // two's complement integers
#define GK_KEY_FLOAT 2  // IEEE-style floats; `inf` is +infinity's bit pattern

// Bits whose unsigned order is NumPy's order of the values: for floats -0.0 and +0.0 are equal
// and every NaN (any sign or payload) is one value above +inf, so that a stable sort keeps them
// in input order, last, as NumPy's stable sort does.
template <int KIND, typename U>
__device__ inline U gk_order_bits(U u, U inf) {
    const U sign = (U)((U)1 << (sizeof(U) * 8 - 1));
    if (KIND == GK_KEY_UINT) return u;
    if (KIND == GK_KEY_INT) return (U)(u ^ sign);
    const U mag = (U)(u & (U)~sign);
    if (mag > inf) return (U) ~(U)0;
    if (mag == 0) return sign;
    return (u & sign) ? (U)~u : (U)(u | sign);
}

__device__ inline int gk_lane() { return (int)(threadIdx.x & (GK_LANES - 1)); }

__device__ inline unsigned gk_lanemask_lt() { return (1u << gk_lane()) - 1u; }

// Lanes of this group holding the same `bits`-bit value v.
__device__ inline unsigned gk_match(unsigned v, int bits) {
#ifdef GK_HIP
    unsigned peers = 0xffffffffu;
    for (int b = 0; b < bits; ++b) {
        const bool set = (v >> b) & 1u;
        const unsigned lanes = gk_ballot(set);
        peers &= set ? lanes : ~lanes;
    }
    return peers;
#else
    (void)bits;
    return __match_any_sync(0xffffffffu, v);
#endif
}

// Inclusive running sum over the 32 lanes.
__device__ inline unsigned gk_lanes_inclusive_sum(unsigned v) {
    const int lane = gk_lane();
    for (int o = 1; o < GK_LANES; o *= 2) {
        const unsigned up = gk_shfl(v, lane >= o ? lane - o : lane);
        if (lane >= o) v += up;
    }
    return v;
}

// A tile's element is ranked through one word: its digit in the low 16 bits (the value `radix`
// marks padding, ranked nowhere), then its position in the high 16 bits.
#define GK_SLOT_DIGIT(s) ((s) & 0xffffu)
#define GK_SLOT_POS(s) ((s) >> 16)

// Stable ranks of ITEMS digits per thread, the tile laid out warp by warp: warp w holds a run of
// 32 * ITEMS elements, item i of lane l being element i * 32 + l of its run. On return each
// slot's position is the number of the warp's elements before it with the same digit, and
// counts (this warp's `radix` counters, zero on entry) holds the warp's totals.
template <int ITEMS>
__device__ inline void gk_rank_in_warp(unsigned (&slot)[ITEMS], unsigned* counts, unsigned radix,
                                       int digit_bits) {
    const unsigned lt = gk_lanemask_lt();
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const unsigned d = GK_SLOT_DIGIT(slot[i]);
        const unsigned peers = gk_match(d, digit_bits + 1);
        const unsigned before = d < radix ? counts[d] : 0u;
        slot[i] |= (before + (unsigned)__popc(peers & lt)) << 16;
        gk_syncwarp();  // every peer has read counts[d] before its first lane adds to it
        if (d < radix && (peers & lt) == 0) counts[d] = before + (unsigned)__popc(peers);
        gk_syncwarp();
    }
}

// gk_rank_in_warp with the lanes of one digit found through shared memory rather than a warp
// match (match.any is slow: the onesweep took 3.86 ms for 2^26 float32 keys with it, 3.10 ms
// this way, H100): each lane sets its bit in masks[digit] (radix + 1 words, zero on entry and on
// return; padding meets in masks[radix]), and the group's last lane moves the digit's counter.
template <int ITEMS>
__device__ inline void gk_rank_in_warp_masks(unsigned (&slot)[ITEMS], unsigned* counts,
                                             unsigned* masks, unsigned radix) {
    const int lane = gk_lane();
    const unsigned lt = gk_lanemask_lt();
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const unsigned d = GK_SLOT_DIGIT(slot[i]);
        atomicOr(&masks[d], 1u << lane);
        gk_syncwarp();
        const unsigned peers = masks[d];
        const int last = 31 - __clz(peers);
        gk_syncwarp();  // every peer has read masks[d] before the last lane clears it
        unsigned before = 0;
        if (lane == last) {
            if (d < radix) {
                before = counts[d];
                counts[d] = before + (unsigned)__popc(peers);
            }
            masks[d] = 0;
        }
        before = gk_shfl(before, last);
        gk_syncwarp();
        slot[i] |= (before + (unsigned)__popc(peers & lt)) << 16;
    }
}

// counts holds `warps` rows of `radix` per-warp totals. Each becomes the number of elements of
// its digit in the warps before it; totals[d] gets the tile's count of digit d.
__device__ inline void gk_scan_over_warps(unsigned* counts, int warps, unsigned* totals,
                                          int radix) {
    for (int d = threadIdx.x; d < radix; d += blockDim.x) {
        unsigned sum = 0;
        for (int w = 0; w < warps; ++w) {
            const unsigned c = counts[w * radix + d];
            counts[w * radix + d] = sum;
            sum += c;
        }
        totals[d] = sum;
    }
}

// Exclusive running sum of v[0, radix) in place, by the first warp (radix a multiple of 32,
// at most 32 * 32).
__device__ inline void gk_scan_digits(unsigned* v, int radix) {
    if (threadIdx.x >= GK_LANES) return;
    const int per = radix / GK_LANES;
    const int lane = gk_lane();
    unsigned sum = 0;
    for (int j = 0; j < per; ++j) sum += v[lane * per + j];
    unsigned run = gk_lanes_inclusive_sum(sum) - sum;
    for (int j = 0; j < per; ++j) {
        const unsigned c = v[lane * per + j];
        v[lane * per + j] = run;
        run += c;
    }
}
