// Attention forward for Hopper (sm_90a), FlashAttention-3 arrangement, 16-bit q, k, v without a
// mask. An item is a tile of GK_ATTN_SM90_ROWS query rows of one (batch, q head). Without
// GK_FA_PERSIST a block per item, the row tiles of a head next to each other (the blocks running
// at once share their heads' K and V in L2), the heaviest causal tiles of a head first. With
// GK_FA_PERSIST a block per SM walks the items in the same order by a static stride over work
// units: a row tile, or under causal a pair of a head's i-th heaviest and i-th lightest tiles
// (every pair needs about the same key tiles, so the stride balances the blocks); the K / V ring
// and the consumers' turns run on across items, so the next item's loads overlap the current
// one's last tiles and output. Warpgroup 0 produces: one thread loads each item's Q tile (with
// GK_FA_PERSIST another thread, each consumer's half as soon as that consumer's last S = Q K^T is
// done), one thread K and V tiles of kBN keys with TMA (128-byte swizzled, 64-column chunks; rows
// past the sequence read as zeros) into a ring of kStages stages, K and V each with a `full` and
// an `empty` mbarrier (K goes back to the producer once S is computed, V once P V is). Each
// consumer warpgroup owns 64 query rows: S = Q K^T with wgmma from shared memory, the online
// softmax in registers in log2 units (exp2, the scale folded into the scores), P rounded to the
// element type in registers as the A operand of O += P V (V N-major from shared memory). With
// GK_FA_PIPE the consumer issues tile t's S = Q K^T and tile t - 1's P V together and runs tile
// t's softmax while P V is in flight. With GK_FA_PINGPONG the two consumer warpgroups take turns
// issuing their products (named barriers), so that one's softmax runs while the other's products
// do. Key tiles past the causal diagonal are skipped; only tiles that the diagonal or the end of
// the keys cut are masked. A row that sees no key gives zeros. GQA: q head h reads kv head
// h / (hq / hkv). The output is staged in the warpgroup's part of the Q tile and written in
// 16-byte pieces; with GK_FA_PERSIST written from registers (that part of the Q tile already holds
// the next item's rows). Every output row is the same sequence of operations in either form.
// Defines: GK_MMA_TYPE (f16 | bf16), GK_FA_D (64 | 128 | 256, the head_dim), GK_FA_BN (keys per
// tile: 64 or 128), GK_FA_STAGES, GK_FA_PIPE (0 | 1), GK_FA_PINGPONG (0 | 1), GK_FA_PERSIST
// (0 | 1; the grid: the items, or at most one block per SM), GK_FA_FOLD (0 | 1; 1 only for a
// positive scale: the scores stay unscaled and each exponent is one FFMA, x * scale - max, where
// 0 scales the scores first, then subtracts), GK_FA_SMEM (the dynamic shared memory the launch
// gives).
#define GK_TC_D GK_FA_D
#define GK_TC_MASK 0
#include "attention_tc.cuh"
#include "sm90.cuh"
#define GK_WGMMA_AB GK_MMA16_STR(GK_MMA_TYPE)
#include "wgmma.cuh"

constexpr int kD = GK_FA_D;
constexpr int kBN = GK_FA_BN;
constexpr int kStages = GK_FA_STAGES;
constexpr int kBM = GK_ATTN_SM90_ROWS;
constexpr int kConsumers = kBM / 64;
constexpr int kChunks = kD / 64;  // 64-column (128-byte) chunks of a row
constexpr int kRow = GK_SM90_ROW_BYTES;
constexpr unsigned kQBytes = kBM * kD * 2;
constexpr unsigned kKVBytes = kBN * kD * 2;                 // K (or V) of one stage
constexpr int kSAcc = kBN / 2;                              // S accumulators per thread
constexpr int kOAcc = kD / 2;                               // O accumulators per thread
constexpr int kQBars = GK_FA_PERSIST ? 2 * kConsumers : 1;  // q_full (and q_empty) per consumer
constexpr bool kFold = GK_FA_FOLD;
static_assert(kD == 64 || kD == 128 || kD == 256, "GK_FA_D: 64, 128 or 256");
static_assert(kBN == 64 || kBN == 128, "GK_FA_BN: 64 or 128");
static_assert(kRow == 128 && kBM % 64 == 0, "128-byte swizzled rows, 64-row warpgroups");
static_assert(kQBytes + 2 * kStages * kKVBytes + GK_SM90_SMEM_EXTRA <= GK_FA_SMEM,
              "the tiles do not fit the shared memory the launch gives");
static_assert(1024 + 8 * (kQBars + 4 * kStages) <= GK_SM90_SMEM_EXTRA, "barriers beyond the extra");
static_assert(128 * (1 + kConsumers) == GK_SM90_THREADS, "a producer and the consumers");

GK_DEV void gk_fa_ss(float (&d)[kSAcc], gk_u64 da, gk_u64 db, int accumulate) {
#if GK_FA_BN == 128
    gk_wgmma_ss_n128_z(d, da, db, accumulate);
#else
    gk_wgmma_ss_n64_z(d, da, db, accumulate);
#endif
}

GK_DEV void gk_fa_rs(float (&d)[kOAcc], const unsigned (&a)[4], gk_u64 db) {
#if GK_FA_D == 256
    gk_wgmma_rs_n256(d, a, db);
#elif GK_FA_D == 128
    gk_wgmma_rs_n128(d, a, db);
#else
    gk_wgmma_rs_n64(d, a, db);
#endif
}

// Keeps the compiler from moving accesses of wgmma operand registers across this point.
template <int N>
GK_DEV void gk_fa_pin(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// Query rows [m0, m0 + kBM) of q head h (kv head kvh) of batch b, and the key tiles they need.
struct gk_fa_item {
    gk_i64 b, h, kvh, m0, n_keys;
    gk_i64 shift;  // causal: row i sees keys j <= i + shift
    int n_tiles;
};

GK_DEV gk_fa_item gk_fa_locate(const gk_attn_tc_args& a, gk_i64 bh, gk_i64 row_tile) {
    gk_fa_item it;
    it.b = bh / a.hq;
    it.h = bh % a.hq;
    it.kvh = it.h / (a.hq / a.hkv);
    it.m0 = row_tile * kBM;
    it.n_keys = gk_tc_valid_keys(a, it.b);
    it.shift = it.n_keys - a.sq;
    gk_i64 key_end = it.n_keys;  // keys any row of the item sees: [0, key_end)
    if (a.causal) {
        const gk_i64 last_row = (it.m0 + kBM < a.sq ? it.m0 + kBM : a.sq) - 1;
        key_end = last_row + it.shift + 1 < key_end ? last_row + it.shift + 1 : key_end;
    }
    it.n_tiles = key_end > 0 ? (int)((key_end + kBN - 1) / kBN) : 0;
    return it;
}

// The items of this block in order: its one item, or (GK_FA_PERSIST) the work units u = blockIdx.x,
// blockIdx.x + gridDim.x, ... of (batch * q head)-major order, each a row tile (heaviest first,
// as the non-persistent grid launches them) or under causal the pair of a head's tiles
// rows - 1 - p and p. Every thread of the block walks the same sequence.
class gk_fa_items {
   public:
    GK_DEV explicit gk_fa_items(const gk_attn_tc_args& a) : a_(a) {
#if !GK_FA_PERSIST
        one_ = gk_fa_locate(a_, blockIdx.y, (gk_i64)(gridDim.x - 1 - blockIdx.x));
#endif
    }
    // Calls f(n) with `it` set to the block's item n, for each item in turn.
    template <class F>
    GK_DEV void each(gk_fa_item& it, F&& f) {
#if GK_FA_PERSIST
        const int rows = (int)((a_.sq + kBM - 1) / kBM);
        const int per_head = a_.causal ? (rows + 1) / 2 : rows;
        const int units = per_head * (int)(a_.batch * a_.hq);
        bool second = false;
        unsigned n = 0;
        for (int u = blockIdx.x; u < units; ++n) {
            const int p = u % per_head;
            it = gk_fa_locate(a_, u / per_head, second ? p : rows - 1 - p);
            second = !second && a_.causal && 2 * p + 1 < rows;
            if (!second) u += (int)gridDim.x;
            f(n);
        }
#else
        it = one_;
        f(0u);
#endif
    }

   private:
    const gk_attn_tc_args& a_;
#if !GK_FA_PERSIST
    gk_fa_item one_;
#endif
};

extern "C" __global__ void __launch_bounds__(GK_SM90_THREADS, 1)
    gk_attn_sm90(const __grid_constant__ gk_tensor_map map_q,
                 const __grid_constant__ gk_tensor_map map_k,
                 const __grid_constant__ gk_tensor_map map_v, const gk_attn_tc_args a) {
    extern __shared__ __align__(1024) unsigned char gk_smem_raw[];
    // The 128-byte swizzle repeats every 1024 bytes: tiles start on such a boundary.
    const unsigned raw = gk_smem_u32(gk_smem_raw);
    const unsigned base = (raw + 1023u) & ~1023u;
    const unsigned q_s = base;             // chunk c of row r at q_s + c * kBM * 128 + r * 128
    const unsigned kv_s = base + kQBytes;  // stage s: K at kv_s + 2 s kKVBytes, V after it
    const unsigned bars = kv_s + 2 * kStages * kKVBytes;
    // q_full: the Q tile's (GK_FA_PERSIST: consumer c's half's, and q_empty of that half); then
    // k_full[S], v_full[S], k_empty[S], v_empty[S].
    auto q_full = [&](int c) { return bars + 8 * (GK_FA_PERSIST ? c : 0); };
    auto q_empty = [&](int c) { return bars + 8 * (kConsumers + c); };
    auto k_full = [&](int s) { return bars + 8 * (kQBars + s); };
    auto v_full = [&](int s) { return bars + 8 * (kQBars + kStages + s); };
    auto k_empty = [&](int s) { return bars + 8 * (kQBars + 2 * kStages + s); };
    auto v_empty = [&](int s) { return bars + 8 * (kQBars + 3 * kStages + s); };
    auto k_stage = [&](int s) { return kv_s + (unsigned)s * 2 * kKVBytes; };

    // Warpgroup and warp as lane 0 has them: so broadcast, ptxas knows them uniform across the
    // warp and keeps what follows from them (the items, the ring's stages) in uniform registers.
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
    const int warp = __shfl_sync(0xffffffffu, (threadIdx.x / 32) & 3, 0), lane = threadIdx.x & 31;
    gk_fa_items items(a);
    gk_fa_item it;

    if (threadIdx.x == 0) {
        for (int c = 0; c < kQBars; ++c)  // a q_full: the producer's expect_tx; a q_empty: 4 warps
            gk_mbar_init(bars + 8 * c, GK_FA_PERSIST && c >= kConsumers ? 4 : 1);
        for (int s = 0; s < kStages; ++s) {
            gk_mbar_init(k_full(s), 1);  // the producer's expect_tx
            gk_mbar_init(v_full(s), 1);
            gk_mbar_init(k_empty(s), 4 * kConsumers);  // each consumer warp
            gk_mbar_init(v_empty(s), 4 * kConsumers);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(GK_SM90_PRODUCER_REGS));
        // Loads the Q rows [m0, m0 + rows) at q_s + at; rows past the sequence read as zeros.
        auto load_q = [&](unsigned bar, unsigned at, unsigned rows, const gk_fa_item& x) {
            gk_mbar_expect_tx(bar, rows * kD * 2);
#pragma unroll
            for (int c = 0; c < kChunks; ++c)
                gk_tma_load_4d(q_s + c * kBM * kRow + at, &map_q, bar, 64 * c, (int)x.m0, (int)x.h,
                               (int)x.b);
        };
        if (warp == 0 && lane == 0) {
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map_q) : "memory");
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map_k) : "memory");
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map_v) : "memory");
            unsigned g0 = 0;  // K / V tiles of the earlier items: the ring's position
            items.each(it, [&](unsigned) {
                if (!GK_FA_PERSIST) load_q(q_full(0), 0, kBM, it);
                for (int t = 0; t < it.n_tiles; ++t) {
                    const unsigned g = g0 + (unsigned)t;
                    const int stage = (int)(g % kStages);
                    const unsigned phase = (g / kStages) & 1u;
                    const unsigned ks = k_stage(stage), vs = ks + kKVBytes;
                    gk_mbar_wait(k_empty(stage), phase ^ 1u);
                    gk_mbar_expect_tx(k_full(stage), kKVBytes);
#pragma unroll
                    for (int c = 0; c < kChunks; ++c)
                        gk_tma_load_4d(ks + c * kBN * kRow, &map_k, k_full(stage), 64 * c, t * kBN,
                                       (int)it.kvh, (int)it.b);
                    gk_mbar_wait(v_empty(stage), phase ^ 1u);
                    gk_mbar_expect_tx(v_full(stage), kKVBytes);
#pragma unroll
                    for (int c = 0; c < kChunks; ++c)
                        gk_tma_load_4d(vs + c * kBN * kRow, &map_v, v_full(stage), 64 * c, t * kBN,
                                       (int)it.kvh, (int)it.b);
                }
                g0 += (unsigned)it.n_tiles;
            });
        }
#if GK_FA_PERSIST
        if (warp == 1 && lane == 0) {
            // Consumer c's 64 rows as soon as it has released the earlier item's (boxes of 64
            // rows); a half wholly past the sequence reads rows [0, 64) instead, never stored.
            items.each(it, [&](unsigned n) {
#pragma unroll
                for (int c = 0; c < kConsumers; ++c) {
                    gk_fa_item half = it;
                    half.m0 = it.m0 + 64 * c < a.sq ? it.m0 + 64 * c : 0;
                    gk_mbar_wait(q_empty(c), (n & 1u) ^ 1u);
                    load_q(q_full(c), c * 64 * kRow, 64, half);
                }
            });
        }
#endif
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(GK_SM90_CONSUMER_REGS));
    const int cw = wg - 1;                   // rows [row0, row0 + 64) of the item
    const int g = lane >> 2, t4 = lane & 3;  // accumulator rows g, g + 8 of the warp's 16
    gk_i64 row0 = 0, open_end = 0;           // open_end: tiles below it need no mask

    float o[kOAcc], m_run[2], l_run[2];

    // The wgmma descriptors of a slice are the tile's first one plus the slice's byte offset / 16
    // (shared addresses stay under the descriptor field's 2^18 bytes, so the sum never carries out
    // of it): one 64-bit add each rather than the field's masks and shifts.
    const gk_u64 q_desc = gk_desc(q_s + cw * 64 * kRow, 16);
    // S = Q K^T of the tile whose K is in `stage`; committed, not waited for.
    auto qk = [&](float (&s)[kSAcc], int stage) {
        const gk_u64 k_desc = gk_desc(k_stage(stage), 16);
        gk_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kD / 16; ++kk) {
            const unsigned in_chunk = (unsigned)(kk % 4) * 32;
            const unsigned qa = (kk / 4) * kBM * kRow + in_chunk;
            const unsigned kb = (kk / 4) * kBN * kRow + in_chunk;
            gk_fa_ss(s, q_desc + (qa >> 4), k_desc + (kb >> 4), kk > 0);
        }
        gk_wgmma_commit();
    };
    // O += P V with V in `stage`; committed, not waited for.
    auto pv = [&](const unsigned (&p)[kBN / 16][4], int stage) {
        const gk_u64 v_desc = gk_desc(k_stage(stage) + kKVBytes, kBN * kRow);
        gk_wgmma_fence();
        gk_fa_pin(o);
#pragma unroll
        for (int kk = 0; kk < kBN / 16; ++kk) gk_fa_rs(o, p[kk], v_desc + (kk * 16 * kRow >> 4));
        gk_wgmma_commit();
        gk_fa_pin(o);
    };
    // Scores of tile t to log2 units (GK_FA_FOLD: left unscaled), masked where the tile is cut
    // (accumulator 4 j + 2 hh + e: row g + 8 hh of the warp's 16, key 8 j + 2 t4 + e).
    auto scale_mask = [&](float (&s)[kSAcc], int t) {
        const gk_i64 j0 = (gk_i64)t * kBN;
        const float c = a.scale_log2;
        if (j0 + kBN > open_end) {
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                const gk_i64 row = row0 + warp * 16 + g + 8 * hh;
                gk_i64 lim = row < a.sq ? it.n_keys : 0;
                if (a.causal && row + it.shift + 1 < lim) lim = row + it.shift + 1;
                lim -= j0;
                const int here = lim < 0 ? 0 : (lim > kBN ? kBN : (int)lim);
#pragma unroll
                for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        float& x = s[4 * j + 2 * hh + e];
                        x = 8 * j + 2 * t4 + e < here ? (kFold ? x : x * c) : gk_neg_inf();
                    }
            }
        } else if (!kFold) {
#pragma unroll
            for (int i = 0; i < kSAcc; ++i) s[i] *= c;
        }
    };
    // Online softmax of the scaled scores in place (a row's keys are spread over the 4 lanes of
    // a quad); alpha: the factor that brings the rows' O to the new maxima.
    auto softmax = [&](float (&s)[kSAcc], float (&alpha)[2]) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float mx = gk_neg_inf();
#pragma unroll
            for (int j = 0; j < kBN / 8; ++j)
                mx = fmaxf(mx, fmaxf(s[4 * j + 2 * hh], s[4 * j + 2 * hh + 1]));
            mx = fmaxf(mx, gk_shfl_xor_f(mx, 1));
            mx = fmaxf(mx, gk_shfl_xor_f(mx, 2));
            // (Rounding is monotone: for a positive scale, the scaled maximum is the maximum of
            // the scaled scores.)
            if (kFold) mx *= a.scale_log2;
            const float m_new = fmaxf(m_run[hh], mx);
            const float m_use = m_new == gk_neg_inf() ? 0.f : m_new;
            alpha[hh] = gk_ex2(m_run[hh] - m_use);
            m_run[hh] = m_new;
            float sum = 0.f;
#pragma unroll
            for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    float& x = s[4 * j + 2 * hh + e];
                    x = gk_ex2(kFold ? fmaf(x, a.scale_log2, -m_use) : x - m_use);
                    sum += x;
                }
            l_run[hh] = l_run[hh] * alpha[hh] + sum;
        }
    };
    auto rescale = [&](const float (&alpha)[2]) {
#pragma unroll
        for (int j = 0; j < kD / 8; ++j) {
            o[4 * j] *= alpha[0];
            o[4 * j + 1] *= alpha[0];
            o[4 * j + 2] *= alpha[1];
            o[4 * j + 3] *= alpha[1];
        }
    };
    // P as A fragments: keys [16 kk, 16 kk + 16) are the S accumulators of n8 tiles 2 kk, 2 kk + 1.
    auto to_p = [&](const float (&s)[kSAcc], unsigned (&p)[kBN / 16][4]) {
#pragma unroll
        for (int kk = 0; kk < kBN / 16; ++kk)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                p[kk][r] = gk_pack2(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
    };
    auto release_v = [&](int stage) {
        if (lane == 0) gk_mbar_arrive(v_empty(stage));
    };
    // S of the item's tile t is in: its K stage goes back, and after the last tile this
    // warpgroup's Q rows (GK_FA_PERSIST: the producer loads the next item's there).
    auto s_done = [&](int stage, int t) {
        if (lane == 0) gk_mbar_arrive(k_empty(stage));
        if (GK_FA_PERSIST && t + 1 == it.n_tiles && lane == 0) gk_mbar_arrive(q_empty(cw));
    };

    // Turns (GK_FA_PINGPONG): warpgroup cw issues its products between waiting at barrier 3 + cw
    // and arriving at the other's; warpgroup 1 lets warpgroup 0 go first, and warpgroup 0 takes
    // the last arrival at the end. Both issue the same number of product groups (the same items).
    auto turn_begin = [&]() {
#if GK_FA_PINGPONG
        asm volatile("bar.sync %0, 256;\n" ::"r"(3 + cw) : "memory");
#endif
    };
    auto turn_end = [&]() {
#if GK_FA_PINGPONG
        asm volatile("bar.arrive %0, 256;\n" ::"r"(4 - cw) : "memory");
#endif
    };
#if GK_FA_PINGPONG
    if (cw == 1) asm volatile("bar.arrive 3, 256;\n" ::: "memory");
#endif

    unsigned g0 = 0;  // K / V tiles of the earlier items: the ring's position
    items.each(it, [&](unsigned n) {
        row0 = it.m0 + 64 * cw;
        open_end = it.n_keys;
        if (a.causal && row0 + it.shift + 1 < open_end) open_end = row0 + it.shift + 1;
#pragma unroll
        for (int i = 0; i < kOAcc; ++i) o[i] = 0.f;
        m_run[0] = m_run[1] = gk_neg_inf();
        l_run[0] = l_run[1] = 0.f;
        const int n_tiles = it.n_tiles;
        auto stage_of = [&](int t) { return (int)((g0 + (unsigned)t) % kStages); };
        auto phase_of = [&](int t) { return ((g0 + (unsigned)t) / kStages) & 1u; };

        gk_mbar_wait(q_full(cw), n & 1u);
        if (GK_FA_PERSIST && n_tiles == 0 && lane == 0) gk_mbar_arrive(q_empty(cw));
        float s[kSAcc], alpha[2];
        unsigned p[kBN / 16][4];
#if GK_FA_PIPE
        if (n_tiles > 0) {
            gk_mbar_wait(k_full(stage_of(0)), phase_of(0));
            turn_begin();
            qk(s, stage_of(0));
            turn_end();
            gk_wgmma_wait<0>();
            gk_fa_pin(s);
            s_done(stage_of(0), 0);
            scale_mask(s, 0);
            softmax(s, alpha);
            to_p(s, p);
        }
        for (int t = 1; t < n_tiles; ++t) {
            const int stage = stage_of(t), prev = stage_of(t - 1);
            gk_mbar_wait(k_full(stage), phase_of(t));
            gk_mbar_wait(v_full(prev), phase_of(t - 1));
            turn_begin();
            qk(s, stage);
            pv(p, prev);
            turn_end();
            gk_wgmma_wait<1>();  // S of tile t is in; P V of tile t - 1 may still run
            gk_fa_pin(s);
            s_done(stage, t);
            scale_mask(s, t);
            softmax(s, alpha);
            gk_wgmma_wait<0>();
            gk_fa_pin(o);
            release_v(prev);
            rescale(alpha);
            to_p(s, p);
        }
        if (n_tiles > 0) {
            const int last = stage_of(n_tiles - 1);
            gk_mbar_wait(v_full(last), phase_of(n_tiles - 1));
            turn_begin();
            pv(p, last);
            turn_end();
            gk_wgmma_wait<0>();
            gk_fa_pin(o);
            release_v(last);
        }
#else
        for (int t = 0; t < n_tiles; ++t) {
            const int stage = stage_of(t);
            const unsigned phase = phase_of(t);
            gk_mbar_wait(k_full(stage), phase);
            turn_begin();
            qk(s, stage);
            turn_end();
            gk_wgmma_wait<0>();
            gk_fa_pin(s);
            s_done(stage, t);
            scale_mask(s, t);
            softmax(s, alpha);
            rescale(alpha);
            to_p(s, p);
            gk_mbar_wait(v_full(stage), phase);
            turn_begin();
            pv(p, stage);
            turn_end();
            gk_wgmma_wait<0>();
            gk_fa_pin(o);
            release_v(stage);
        }
#endif
        g0 += (unsigned)n_tiles;

        gk_u16* out = reinterpret_cast<gk_u16*>(a.out) + (it.b * a.hq + it.h) * a.sq * kD;
#if GK_FA_PERSIST
        // Normalize and write the rows from registers (a quad's 16 bytes of a row per column
        // block j).
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float l = l_run[hh];
            l += gk_shfl_xor_f(l, 1);
            l += gk_shfl_xor_f(l, 2);
            const float inv = l > 0.f ? 1.f / l : 0.f;
            const gk_i64 row = row0 + warp * 16 + g + 8 * hh;
            if (row < a.sq) {
#pragma unroll
                for (int j = 0; j < kD / 8; ++j)
                    *reinterpret_cast<unsigned*>(out + row * kD + 8 * j + 2 * t4) =
                        gk_pack2(o[4 * j + 2 * hh] * inv, o[4 * j + 2 * hh + 1] * inv);
            }
        }
#else
        // Normalize and stage the rows in this warpgroup's part of the Q tile (swizzled as TMA
        // wrote it: 16-byte unit u of row r at u ^ (r & 7)), then write 16-byte pieces.
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float l = l_run[hh];
            l += gk_shfl_xor_f(l, 1);
            l += gk_shfl_xor_f(l, 2);
            const float inv = l > 0.f ? 1.f / l : 0.f;
            const int r = cw * 64 + warp * 16 + g + 8 * hh;
#pragma unroll
            for (int j = 0; j < kD / 8; ++j) {
                const unsigned at = q_s - raw + (j / 8) * kBM * kRow + r * kRow +
                                    (((unsigned)(j % 8) ^ (unsigned)(r & 7)) * 16) + 4 * t4;
                *reinterpret_cast<unsigned*>(gk_smem_raw + at) =
                    gk_pack2(o[4 * j + 2 * hh] * inv, o[4 * j + 2 * hh + 1] * inv);
            }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory");  // this warpgroup's rows
        constexpr int kUnits = kD / 8;  // 16-byte units of a row
        const int tid = threadIdx.x - 128 * wg;
#pragma unroll
        for (int id = tid; id < 64 * kUnits; id += 128) {
            const int rr = id / kUnits, u = id % kUnits, r = cw * 64 + rr;
            const gk_i64 row = row0 + rr;
            if (row < a.sq) {
                const unsigned at = q_s - raw + (u / 8) * kBM * kRow + r * kRow +
                                    (((unsigned)(u % 8) ^ (unsigned)(r & 7)) * 16);
                *reinterpret_cast<uint4*>(out + row * kD + u * 8) =
                    *reinterpret_cast<const uint4*>(gk_smem_raw + at);
            }
        }
#endif
    });
#if GK_FA_PINGPONG
    if (cw == 0) asm volatile("bar.sync 3, 256;\n" ::: "memory");
#endif
}
