// The next token of each row of logits on the device (gk_sample_args), a block per row, so that
// decoding reads back at most the tokens, not the logits. Greedy is an argmax. A draw keeps the
// logits at or above a threshold found by radix selection over the logits' order-preserving
// 32-bit keys (8-bit digits from the top, per-warp histograms in shared memory): the top_k-th
// largest, then the smallest whose weight mass reaches top_p. Weights are exp((z - max) / T) in
// float32, as integers in units of 2^-32 (a weight under 2^-32 of the largest is 0), so that
// every sum is an integer sum: the same bits in any order, and the same as the CPU backend's
// NumPy. The token is where u * (sum of kept weights) falls in their running sum in vocabulary
// order, u from Philox4x32-10 (key seed, counter (row, position)).
// Defines: GK_T (the logits' type).
#include "args.cuh"
#include "philox.cuh"
#include "warp.cuh"

typedef GK_T T;
#define GK_WARPS (GK_BLOCK / GK_LANES)
#define GK_DIGITS 256

// Larger floats give larger keys; NaN is above +inf (as NumPy's argmax finds it first).
__device__ inline gk_u32 gk_order_key(float f) {
    const gk_u32 u = gk_f32_bits(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ inline float gk_key_value(gk_u32 k) {
    return gk_f32_from_bits((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

struct gk_sample_shared {
    gk_u64 hist[GK_WARPS][GK_DIGITS];
    gk_u64 part[GK_BLOCK];
    gk_u64 pick[2];
};

// Sum (or max) over the block; every thread gets it.
__device__ inline gk_u64 gk_block_sum(gk_u64 v, gk_sample_shared& sh, bool max) {
    sh.part[threadIdx.x] = v;
    __syncthreads();
    for (int w = GK_BLOCK / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) {
            const gk_u64 o = sh.part[threadIdx.x + w];
            sh.part[threadIdx.x] = max ? (o > sh.part[threadIdx.x] ? o : sh.part[threadIdx.x])
                                       : sh.part[threadIdx.x] + o;
        }
        __syncthreads();
    }
    const gk_u64 out = sh.part[0];
    __syncthreads();
    return out;
}

// The largest key kappa such that the weights of the elements with keys >= kappa add up to at
// least `need` (1 <= need <= their total); weight(i) == 0 leaves element i out.
template <typename Key, typename Weight>
__device__ inline gk_u32 gk_select(gk_i64 n, Key key, Weight weight, gk_u64 need,
                                   gk_sample_shared& sh) {
    gk_u32 prefix = 0;
    const int warp = (int)threadIdx.x / GK_LANES;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int i = threadIdx.x; i < GK_WARPS * GK_DIGITS; i += GK_BLOCK) {
            sh.hist[i / GK_DIGITS][i % GK_DIGITS] = 0;
        }
        __syncthreads();
        const gk_u32 high = shift == 24 ? 0u : 0xffffffffu << (shift + 8);
        for (gk_i64 i = threadIdx.x; i < n; i += GK_BLOCK) {
            const gk_u32 k = key(i);
            if ((k & high) != prefix) continue;
            const gk_u64 w = weight(i, k);
            if (w) atomicAdd(&sh.hist[warp][(k >> shift) & 255u], (unsigned long long)w);
        }
        __syncthreads();
        for (int d = threadIdx.x; d < GK_DIGITS; d += GK_BLOCK) {
            gk_u64 total = 0;
            for (int w = 0; w < GK_WARPS; ++w) total += sh.hist[w][d];
            sh.hist[0][d] = total;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            gk_u64 above = 0;
            int digit = 0;
            for (int d = GK_DIGITS - 1; d >= 0; --d) {
                if (above + sh.hist[0][d] >= need) {
                    digit = d;
                    break;
                }
                above += sh.hist[0][d];
            }
            sh.pick[0] = (gk_u64)digit;
            sh.pick[1] = need - above;
        }
        __syncthreads();
        prefix |= (gk_u32)sh.pick[0] << shift;
        need = sh.pick[1];
        __syncthreads();
    }
    return prefix;
}

GK_KERNEL void gk_sample(const gk_sample_args a) {
    __shared__ gk_sample_shared sh;
    const gk_sample_params& p = *reinterpret_cast<const gk_sample_params*>(a.params);
    const gk_i64 row = blockIdx.x, n = a.vocab;
    const T* z = reinterpret_cast<const T*>(a.logits) + row * a.row_stride;
    gk_i32* finished = reinterpret_cast<gk_i32*>(a.finished);
    const gk_i64 position = *reinterpret_cast<const gk_i32*>(a.length);
    auto key = [&](gk_i64 i) { return gk_order_key((float)z[i]); };

    // The largest key, the first index holding it: (key, ~index) packed.
    gk_u64 best = 0;
    for (gk_i64 i = threadIdx.x; i < n; i += GK_BLOCK) {
        const gk_u64 packed = ((gk_u64)key(i) << 32) | (gk_u64)(0xffffffffu - (gk_u32)i);
        best = packed > best ? packed : best;
    }
    best = gk_block_sum(best, sh, true);
    gk_i64 token = (gk_i64)(0xffffffffu - (gk_u32)best);
    const float top = gk_key_value((gk_u32)(best >> 32));
    const bool done = p.eos >= 0 && finished[row] != 0;
    // A draw needs finite logits at the top; NaN or all -inf fall back to the argmax.
    const bool draw = !done && p.temperature > 0.0 && top > -GK_INF_F && top < GK_INF_F;
    if (draw) {
        const float temperature = (float)p.temperature;
        auto weight_of = [&](gk_u32 k) -> gk_u64 {
            const float w = expf((gk_key_value(k) - top) / temperature);
            return w >= 0.0f ? (gk_u64)((double)w * 4294967296.0) : 0;  // NaN: 0
        };
        gk_u32 floor_key = 0;
        if (p.top_k > 0 && p.top_k < n) {
            auto one = [](gk_i64, gk_u32) -> gk_u64 { return 1; };
            floor_key = gk_select(n, key, one, (gk_u64)p.top_k, sh);
        }
        auto kept = [&](gk_i64, gk_u32 k) -> gk_u64 { return k >= floor_key ? weight_of(k) : 0; };
        gk_u64 mass = 0;
        for (gk_i64 i = threadIdx.x; i < n; i += GK_BLOCK) mass += kept(i, key(i));
        mass = gk_block_sum(mass, sh, false);
        if (p.top_p < 1.0) {
            double want = ceil(p.top_p * (double)mass);
            gk_u64 need = want < 1.0 ? 1 : want >= (double)mass ? mass : (gk_u64)want;
            floor_key = gk_select(n, key, kept, need, sh);
            mass = 0;
            for (gk_i64 i = threadIdx.x; i < n; i += GK_BLOCK) mass += kept(i, key(i));
            mass = gk_block_sum(mass, sh, false);
        }
        const gk_words r =
            gk_philox4x32((gk_u32)row, (gk_u32)(row >> 32), (gk_u32)position,
                          (gk_u32)((gk_u64)position >> 32), (gk_u32)p.seed, (gk_u32)(p.seed >> 32));
        const double u =
            (double)(((((gk_u64)r.w[0]) << 32) | r.w[1]) >> 11) * (1.0 / 9007199254740992.0);
        gk_u64 target = (gk_u64)(u * (double)mass);
        target = target < mass ? target : mass - 1;
        // Each thread's own run of the vocabulary, then the runs' offsets in order.
        const gk_i64 chunk = (n + GK_BLOCK - 1) / GK_BLOCK;
        const gk_i64 lo = (gk_i64)threadIdx.x * chunk;
        const gk_i64 hi = lo + chunk < n ? lo + chunk : n;
        gk_u64 own = 0;
        for (gk_i64 i = lo; i < hi; ++i) own += kept(i, key(i));
        sh.part[threadIdx.x] = own;
        __syncthreads();
        if (threadIdx.x == 0) {
            gk_u64 run = 0;
            for (int t = 0; t < GK_BLOCK; ++t) {
                const gk_u64 w = sh.part[t];
                sh.part[t] = run;
                run += w;
            }
        }
        __syncthreads();
        gk_u64 at = sh.part[threadIdx.x];
        if (at <= target && target < at + own) {
            for (gk_i64 i = lo; i < hi; ++i) {
                at += kept(i, key(i));
                if (target < at) {
                    sh.pick[0] = (gk_u64)i;
                    break;
                }
            }
        }
        __syncthreads();
        token = (gk_i64)sh.pick[0];
    }
    if (threadIdx.x != 0) return;
    if (done) token = p.eos;
    reinterpret_cast<gk_i64*>(a.next_ids)[row * a.ids_stride] = token;
    if (position >= 0 && position < a.capacity) {
        reinterpret_cast<gk_i64*>(a.tokens)[row * a.tokens_stride + position] = token;
    }
    if (p.eos >= 0 && token == p.eos) finished[row] = 1;
}
