// Attention forward on tensor cores (sm_80+, mma.sync m16n8k16, fp32 accumulate), in the
// FlashAttention-2 arrangement: a block per (batch * q head, tile of kBM query rows), the heaviest
// causal tiles launched first; each warp owns 16 * kMW query rows. K and V tiles of kBN keys
// stream through a ring of kStages cp.async stages in swizzled shared memory; S = Q K^T and
// O += P V are m16n8k16 products fed by ldmatrix (.trans for V); the online softmax stays in
// registers, in log2 units (exp2, the scale folded into the scores), P going from the S
// accumulators to A fragments without shared memory. Key tiles past the causal diagonal are
// skipped; only tiles that the diagonal, the end of the keys or a mask cut are masked. A row that
// sees no key gives zeros. GQA: q head h reads kv head h / (hq / hkv).
// Defines (besides attention_tc.cuh's): GK_TC_WARPS, GK_TC_MW (m16 row tiles per warp),
// GK_TC_BN (keys per tile, a multiple of 16), GK_TC_STAGES (>= 2), GK_TC_QREG (1: the Q
// fragments are loaded into registers once; 0: read from shared memory at every tile).
// Dynamic shared memory: (kBM + 2 * kStages * kBN) * GK_TC_D * 2 bytes.
#include "attention_tc.cuh"

constexpr int kWarps = GK_TC_WARPS;
constexpr int kMW = GK_TC_MW;
constexpr int kBN = GK_TC_BN;
constexpr int kStages = GK_TC_STAGES;
constexpr int kBM = 16 * kMW * kWarps;
constexpr int kThreads = 32 * kWarps;
constexpr int kNT = kBN / 8;   // n8 tiles of S per m16 tile
constexpr int kDT = kTcD / 8;  // n8 tiles of O per m16 tile
constexpr unsigned kQBytes = kBM * kTcD * 2;
constexpr unsigned kKVBytes = kBN * kTcD * 2;  // K (or V) of one stage
static_assert(kBN % 16 == 0 && kStages >= 2, "GK_TC_BN, GK_TC_STAGES");

extern "C" __global__ void __launch_bounds__(kThreads) gk_attn_tc(const gk_attn_tc_args a) {
    unsigned char* smem_p = gk_dynamic_smem();
    const unsigned q_s = gk_smem_addr(smem_p);
    const unsigned kv_s = q_s + kQBytes;  // stage s: K at kv_s + 2 s kKVBytes, V after it
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t4 = lane & 3, r8 = lane & 7, j8 = lane >> 3;
    const int wrow = warp * 16 * kMW;  // this warp's first row in the tile
    const gk_i64 b = blockIdx.x / a.hq, h = blockIdx.x % a.hq, kvh = h / (a.hq / a.hkv);
    const gk_i64 m0 = (gk_i64)(gridDim.y - 1 - blockIdx.y) * kBM;
    const int d = (int)a.d;
    const gk_i64 n_keys = gk_tc_valid_keys(a, b);
    const gk_i64 shift = n_keys - a.sq;  // causal: row i sees keys j <= i + shift

    // Keys any row of the tile sees: [0, key_end); every row sees [0, open_end).
    gk_i64 key_end = n_keys, open_end = n_keys;
    if (a.causal) {
        const gk_i64 last_row = (m0 + kBM < a.sq ? m0 + kBM : a.sq) - 1;
        key_end = last_row + shift + 1 < key_end ? last_row + shift + 1 : key_end;
        open_end = m0 + shift + 1 < open_end ? m0 + shift + 1 : open_end;
    }
    const int n_tiles = key_end > 0 ? (int)((key_end + kBN - 1) / kBN) : 0;

    const gk_u16* qg = reinterpret_cast<const gk_u16*>(a.q) + b * a.q_stride[0] + h * a.q_stride[1];
    const gk_u16* kg =
        reinterpret_cast<const gk_u16*>(a.k) + b * a.k_stride[0] + kvh * a.k_stride[1];
    const gk_u16* vg =
        reinterpret_cast<const gk_u16*>(a.v) + b * a.v_stride[0] + kvh * a.v_stride[1];
    auto load_kv = [&](int tile) {
        const unsigned st = kv_s + (unsigned)(tile % kStages) * 2 * kKVBytes;
        const gk_i64 j0 = (gk_i64)tile * kBN;
        gk_tc_load_tile<kBN, kThreads>(st, kg + j0 * a.k_stride[2], (int)a.k_stride[2], n_keys - j0,
                                       d, tid);
        gk_tc_load_tile<kBN, kThreads>(st + kKVBytes, vg + j0 * a.v_stride[2], (int)a.v_stride[2],
                                       n_keys - j0, d, tid);
    };

    // Groups: Q, then one per tile; tile t is waited for with kStages - 2 younger groups pending.
    gk_tc_load_tile<kBM, kThreads>(q_s, qg + m0 * a.q_stride[2], (int)a.q_stride[2], a.sq - m0, d,
                                   tid);
    gk_cp_commit();
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < n_tiles) load_kv(s);
        gk_cp_commit();
    }

    float o[kMW][kDT][4], m_run[kMW][2], l_run[kMW][2];
#pragma unroll
    for (int i = 0; i < kMW; ++i) {
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
            for (int e = 0; e < 4; ++e) o[i][dt][e] = 0.f;
        m_run[i][0] = m_run[i][1] = gk_neg_inf();
        l_run[i][0] = l_run[i][1] = 0.f;
    }
#if GK_TC_QREG
    unsigned qf[kMW][kTcKSteps][4];
    gk_cp_wait<kStages - 1>();
    gk_sync_block();
#pragma unroll
    for (int i = 0; i < kMW; ++i)
#pragma unroll
        for (int kk = 0; kk < kTcKSteps; ++kk)
            gk_ldsm_x4(q_s + gk_swz<kTcChunks>(wrow + i * 16 + (lane & 15), kk * 2 + (lane >> 4)),
                       qf[i][kk]);
#endif

    // S = Q K^T of the tile whose K is at k_st.
    auto qk = [&](float (&sc)[kMW][kNT][4], unsigned k_st) {
#pragma unroll
        for (int i = 0; i < kMW; ++i)
#pragma unroll
            for (int j = 0; j < kNT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) sc[i][j][e] = 0.f;
#pragma unroll
        for (int kk = 0; kk < kTcKSteps; ++kk) {
            unsigned qa[kMW][4];
#pragma unroll
            for (int i = 0; i < kMW; ++i) {
#if GK_TC_QREG
#pragma unroll
                for (int e = 0; e < 4; ++e) qa[i][e] = qf[i][kk][e];
#else
                gk_ldsm_x4(
                    q_s + gk_swz<kTcChunks>(wrow + i * 16 + (lane & 15), kk * 2 + (lane >> 4)),
                    qa[i]);
#endif
            }
#pragma unroll
            for (int jp = 0; jp < kBN / 16; ++jp) {
                // Matrices (keys 0-7, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 0-7), (keys
                // 8-15, d 8-15) of K's rows: two n8 B fragments as they lie.
                unsigned r[4];
                gk_ldsm_x4(
                    k_st + gk_swz<kTcChunks>(jp * 16 + r8 + (j8 >> 1) * 8, kk * 2 + (j8 & 1)), r);
#pragma unroll
                for (int i = 0; i < kMW; ++i) {
                    gk_mma16816(sc[i][2 * jp], qa[i], r[0], r[1]);
                    gk_mma16816(sc[i][2 * jp + 1], qa[i], r[2], r[3]);
                }
            }
        }
    };

    // Scores of tile t to log2 units; masked where the tile is cut (accumulator (i, j): elements
    // 0, 1 at row g, keys 2 t4, 2 t4 + 1 of n8 tile j; elements 2, 3 at row g + 8).
    auto scale_mask = [&](float (&sc)[kMW][kNT][4], int t) {
        const gk_i64 j0 = (gk_i64)t * kBN;
        if (GK_TC_MASK != 0 || j0 + kBN > open_end) {
#pragma unroll
            for (int i = 0; i < kMW; ++i)
#pragma unroll
                for (int hh = 0; hh < 2; ++hh) {
                    const gk_i64 row = m0 + wrow + i * 16 + g + 8 * hh;
                    gk_i64 lim = row < a.sq ? n_keys : 0;
                    if (a.causal && row + shift + 1 < lim) lim = row + shift + 1;
                    lim -= j0;
                    const int lim_here = lim < 0 ? 0 : (lim > kBN ? kBN : (int)lim);
                    const gk_i64 mask_row = GK_TC_MASK ? gk_tc_mask_row(a, b, h, row) : 0;
#pragma unroll
                    for (int j = 0; j < kNT; ++j)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const int key = j * 8 + 2 * t4 + e;
                            sc[i][j][2 * hh + e] =
                                gk_tc_masked(sc[i][j][2 * hh + e] * a.scale_log2, key < lim_here, a,
                                             mask_row, j0 + key);
                        }
                }
        } else {
#pragma unroll
            for (int i = 0; i < kMW; ++i)
#pragma unroll
                for (int j = 0; j < kNT; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) sc[i][j][e] *= a.scale_log2;
        }
    };

    auto k_stage = [&](int t) { return kv_s + (unsigned)(t % kStages) * 2 * kKVBytes; };

    for (int t = 0; t < n_tiles; ++t) {
        gk_cp_wait<kStages - 2>();
        gk_sync_block();  // tile t is in; every warp is done with the stage refilled next
        if (t + kStages - 1 < n_tiles) load_kv(t + kStages - 1);
        gk_cp_commit();
        float sc[kMW][kNT][4];
        qk(sc, k_stage(t));
        scale_mask(sc, t);
        gk_tc_softmax_pv(sc, m_run, l_run, o, k_stage(t) + kKVBytes, r8, j8);
    }
    gk_cp_wait<0>();  // nothing lands in the Q tile, which stages this warp's output rows

    // Normalize, stage the warp's rows in its part of the Q tile, write 16-byte chunks.
    gk_sync_warp();
#pragma unroll
    for (int i = 0; i < kMW; ++i)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float l = l_run[i][hh];
            l += gk_shfl_xor_f(l, 1);
            l += gk_shfl_xor_f(l, 2);
            const float inv = l > 0.f ? 1.f / l : 0.f;
            const int row = wrow + i * 16 + g + 8 * hh;
#pragma unroll
            for (int dt = 0; dt < kDT; ++dt)
                *reinterpret_cast<unsigned*>(smem_p + gk_swz<kTcChunks>(row, dt) + 4 * t4) =
                    gk_pack2(o[i][dt][2 * hh] * inv, o[i][dt][2 * hh + 1] * inv);
        }
    gk_sync_warp();
    gk_u16* out = reinterpret_cast<gk_u16*>(a.out) + (b * a.hq + h) * a.sq * a.d;
#pragma unroll
    for (int id = lane; id < 16 * kMW * kTcChunks; id += 32) {
        const int r = id / kTcChunks, c = id % kTcChunks;
        const gk_i64 row = m0 + wrow + r;
        if (row < a.sq && c * 8 < d)
            *reinterpret_cast<uint4*>(out + row * a.d + c * 8) =
                *reinterpret_cast<const uint4*>(smem_p + gk_swz<kTcChunks>(wrow + r, c));
    }
}
