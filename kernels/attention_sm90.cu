// Attention forward for Hopper (sm_90a), FlashAttention-3 arrangement, 16-bit q, k, v without a
// mask: a block per (tile of GK_ATTN_SM90_ROWS query rows, batch * q head), the row tiles of a
// head next to each other (the blocks running at once share their heads' K and V in L2), the
// heaviest causal tiles of a head first. Warpgroup 0 produces: one thread loads the Q tile once,
// then K and V tiles of kBN keys with TMA (128-byte swizzled, 64-column chunks; rows past the
// sequence read as zeros) into a ring of kStages stages, K and V each with a `full` and an
// `empty` mbarrier (K goes back to the producer once S is computed, V once P V is). Each
// consumer warpgroup owns 64 query rows: S = Q K^T with wgmma from shared memory, the online
// softmax in registers in log2 units (exp2, the scale folded into the scores), P rounded to the
// element type in registers as the A operand of O += P V (V N-major from shared memory). With
// GK_FA_PIPE the consumer issues tile t's S = Q K^T and tile t - 1's P V together and runs tile
// t's softmax while P V is in flight. With GK_FA_PINGPONG the two consumer warpgroups take turns
// issuing their products (named barriers), so that one's softmax runs while the other's products
// do. Key tiles past the causal diagonal are skipped; only tiles that the diagonal or the end of
// the keys cut are masked. A row that sees no key gives zeros. GQA: q head h reads kv head
// h / (hq / hkv). The output is staged in the warpgroup's part of the Q tile and written in
// 16-byte pieces.
// Defines: GK_MMA_TYPE (f16 | bf16), GK_FA_D (64 | 128 | 256, the head_dim), GK_FA_BN (keys per
// tile: 64 or 128), GK_FA_STAGES, GK_FA_PIPE (0 | 1), GK_FA_PINGPONG (0 | 1), GK_FA_SMEM (the
// dynamic shared memory the launch gives).
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
constexpr unsigned kKVBytes = kBN * kD * 2;  // K (or V) of one stage
constexpr int kSAcc = kBN / 2;               // S accumulators per thread
constexpr int kOAcc = kD / 2;                // O accumulators per thread
static_assert(kD == 64 || kD == 128 || kD == 256, "GK_FA_D: 64, 128 or 256");
static_assert(kBN == 64 || kBN == 128, "GK_FA_BN: 64 or 128");
static_assert(kRow == 128 && kBM % 64 == 0, "128-byte swizzled rows, 64-row warpgroups");
static_assert(kQBytes + 2 * kStages * kKVBytes + GK_SM90_SMEM_EXTRA <= GK_FA_SMEM,
              "the tiles do not fit the shared memory the launch gives");
static_assert(1024 + 8 * (1 + 4 * kStages) <= GK_SM90_SMEM_EXTRA, "barriers beyond the extra");
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
    const unsigned q_full = bars;  // then k_full[S], v_full[S], k_empty[S], v_empty[S]
    auto k_full = [&](int s) { return bars + 8 * (1 + s); };
    auto v_full = [&](int s) { return bars + 8 * (1 + kStages + s); };
    auto k_empty = [&](int s) { return bars + 8 * (1 + 2 * kStages + s); };
    auto v_empty = [&](int s) { return bars + 8 * (1 + 3 * kStages + s); };
    auto k_stage = [&](int s) { return kv_s + (unsigned)s * 2 * kKVBytes; };

    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) & 3, lane = threadIdx.x & 31;
    const gk_i64 b = blockIdx.y / a.hq, h = blockIdx.y % a.hq, kvh = h / (a.hq / a.hkv);
    const gk_i64 m0 = (gk_i64)(gridDim.x - 1 - blockIdx.x) * kBM;
    const gk_i64 n_keys = gk_tc_valid_keys(a, b);
    const gk_i64 shift = n_keys - a.sq;  // causal: row i sees keys j <= i + shift
    gk_i64 key_end = n_keys;             // keys any row of the block sees: [0, key_end)
    if (a.causal) {
        const gk_i64 last_row = (m0 + kBM < a.sq ? m0 + kBM : a.sq) - 1;
        key_end = last_row + shift + 1 < key_end ? last_row + shift + 1 : key_end;
    }
    const int n_tiles = key_end > 0 ? (int)((key_end + kBN - 1) / kBN) : 0;

    if (threadIdx.x == 0) {
        gk_mbar_init(q_full, 1);
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
        if (warp == 0 && lane == 0) {
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map_q) : "memory");
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map_k) : "memory");
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map_v) : "memory");
            gk_mbar_expect_tx(q_full, kQBytes);
#pragma unroll
            for (int c = 0; c < kChunks; ++c)
                gk_tma_load_4d(q_s + c * kBM * kRow, &map_q, q_full, 64 * c, (int)m0, (int)h,
                               (int)b);
            for (int t = 0; t < n_tiles; ++t) {
                const int stage = t % kStages;
                const unsigned phase = (unsigned)(t / kStages) & 1u;
                const unsigned ks = k_stage(stage), vs = ks + kKVBytes;
                gk_mbar_wait(k_empty(stage), phase ^ 1u);
                gk_mbar_expect_tx(k_full(stage), kKVBytes);
#pragma unroll
                for (int c = 0; c < kChunks; ++c)
                    gk_tma_load_4d(ks + c * kBN * kRow, &map_k, k_full(stage), 64 * c, t * kBN,
                                   (int)kvh, (int)b);
                gk_mbar_wait(v_empty(stage), phase ^ 1u);
                gk_mbar_expect_tx(v_full(stage), kKVBytes);
#pragma unroll
                for (int c = 0; c < kChunks; ++c)
                    gk_tma_load_4d(vs + c * kBN * kRow, &map_v, v_full(stage), 64 * c, t * kBN,
                                   (int)kvh, (int)b);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(GK_SM90_CONSUMER_REGS));
    const int cw = wg - 1;  // rows [row0, row0 + 64) of the block
    const gk_i64 row0 = m0 + 64 * cw;
    const int g = lane >> 2, t4 = lane & 3;  // accumulator rows g, g + 8 of the warp's 16
    // Keys every row of this warpgroup sees: tiles below open_end need no mask.
    gk_i64 open_end = n_keys;
    if (a.causal && row0 + shift + 1 < open_end) open_end = row0 + shift + 1;

    float o[kOAcc], m_run[2], l_run[2];
#pragma unroll
    for (int i = 0; i < kOAcc; ++i) o[i] = 0.f;
    m_run[0] = m_run[1] = gk_neg_inf();
    l_run[0] = l_run[1] = 0.f;

    // S = Q K^T of the tile whose K is in `stage`; committed, not waited for.
    auto qk = [&](float (&s)[kSAcc], int stage) {
        gk_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kD / 16; ++kk) {
            const unsigned in_chunk = (unsigned)(kk % 4) * 32;
            const unsigned qa = q_s + (kk / 4) * kBM * kRow + cw * 64 * kRow + in_chunk;
            const unsigned kb = k_stage(stage) + (kk / 4) * kBN * kRow + in_chunk;
            gk_fa_ss(s, gk_desc(qa, 16), gk_desc(kb, 16), kk > 0);
        }
        gk_wgmma_commit();
    };
    // O += P V with V in `stage`; committed, not waited for.
    auto pv = [&](const unsigned (&p)[kBN / 16][4], int stage) {
        gk_wgmma_fence();
        gk_fa_pin(o);
        const unsigned vb = k_stage(stage) + kKVBytes;
#pragma unroll
        for (int kk = 0; kk < kBN / 16; ++kk)
            gk_fa_rs(o, p[kk], gk_desc(vb + kk * 16 * kRow, kBN * kRow));
        gk_wgmma_commit();
        gk_fa_pin(o);
    };
    // Scores of tile t to log2 units, masked where the tile is cut (accumulator 4 j + 2 hh + e:
    // row g + 8 hh of the warp's 16, key 8 j + 2 t4 + e).
    auto scale_mask = [&](float (&s)[kSAcc], int t) {
        const gk_i64 j0 = (gk_i64)t * kBN;
        const float c = a.scale_log2;
        if (j0 + kBN > open_end) {
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                const gk_i64 row = row0 + warp * 16 + g + 8 * hh;
                gk_i64 lim = row < a.sq ? n_keys : 0;
                if (a.causal && row + shift + 1 < lim) lim = row + shift + 1;
                lim -= j0;
                const int here = lim < 0 ? 0 : (lim > kBN ? kBN : (int)lim);
#pragma unroll
                for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        float& x = s[4 * j + 2 * hh + e];
                        x = 8 * j + 2 * t4 + e < here ? x * c : gk_neg_inf();
                    }
            }
        } else {
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
                    x = gk_ex2(x - m_use);
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
    auto release_k = [&](int stage) {
        if (lane == 0) gk_mbar_arrive(k_empty(stage));
    };
    auto release_v = [&](int stage) {
        if (lane == 0) gk_mbar_arrive(v_empty(stage));
    };

    // Turns (GK_FA_PINGPONG): warpgroup cw issues its products between waiting at barrier 3 + cw
    // and arriving at the other's; warpgroup 1 lets warpgroup 0 go first, and warpgroup 0 takes
    // the last arrival at the end. Both issue the same number of product groups.
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

    gk_mbar_wait(q_full, 0);
    float s[kSAcc], alpha[2];
    unsigned p[kBN / 16][4];
#if GK_FA_PIPE
    if (n_tiles > 0) {
        gk_mbar_wait(k_full(0), 0);
        turn_begin();
        qk(s, 0);
        turn_end();
        gk_wgmma_wait<0>();
        gk_fa_pin(s);
        release_k(0);
        scale_mask(s, 0);
        softmax(s, alpha);
        to_p(s, p);
    }
    for (int t = 1; t < n_tiles; ++t) {
        const int stage = t % kStages, prev = (t - 1) % kStages;
        gk_mbar_wait(k_full(stage), (unsigned)(t / kStages) & 1u);
        gk_mbar_wait(v_full(prev), (unsigned)((t - 1) / kStages) & 1u);
        turn_begin();
        qk(s, stage);
        pv(p, prev);
        turn_end();
        gk_wgmma_wait<1>();  // S of tile t is in; P V of tile t - 1 may still run
        gk_fa_pin(s);
        release_k(stage);
        scale_mask(s, t);
        softmax(s, alpha);
        gk_wgmma_wait<0>();
        gk_fa_pin(o);
        release_v(prev);
        rescale(alpha);
        to_p(s, p);
    }
    if (n_tiles > 0) {
        const int last = (n_tiles - 1) % kStages;
        gk_mbar_wait(v_full(last), (unsigned)((n_tiles - 1) / kStages) & 1u);
        turn_begin();
        pv(p, last);
        turn_end();
        gk_wgmma_wait<0>();
        gk_fa_pin(o);
        release_v(last);
    }
#else
    for (int t = 0; t < n_tiles; ++t) {
        const int stage = t % kStages;
        const unsigned phase = (unsigned)(t / kStages) & 1u;
        gk_mbar_wait(k_full(stage), phase);
        turn_begin();
        qk(s, stage);
        turn_end();
        gk_wgmma_wait<0>();
        gk_fa_pin(s);
        release_k(stage);
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
#if GK_FA_PINGPONG
    if (cw == 0) asm volatile("bar.sync 3, 256;\n" ::: "memory");
#endif

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
    gk_u16* out = reinterpret_cast<gk_u16*>(a.out) + (b * a.hq + h) * a.sq * kD;
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
}
