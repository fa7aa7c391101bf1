// Attention for few query rows against a long KV cache (decode), on tensor cores (sm_80+): the
// keys split across blocks (flash-decoding). A block serves one (key split, batch entry, kv
// head): its query rows are the hq / hkv query heads of that kv head times the sq positions
// (at most 16 * kMT rows, one m16 tile each), so each K/V byte is read once for the whole group.
// Each warp streams its own contiguous share of the split's keys through a private ring of
// kStages cp.async stages of kKT keys (no block barrier in the loop) with its own online softmax;
// the warps' partial states merge in shared memory at the end. One split writes the output; with
// several, each writes (m, l, unnormalized o) to the workspace and gk_attn_combine merges them in
// split order (deterministic). The valid key count may come from the device (kv_len): the grid
// and the split count depend only on the capacity skv, so a captured step replays unchanged.
// Defines (besides attention_tc.cuh's): GK_DEC_WARPS, GK_DEC_KT (keys per warp step, a multiple
// of 16), GK_DEC_STAGES (>= 2), GK_DEC_MT (m16 row tiles). keys_per_split must be a multiple of
// GK_DEC_WARPS * GK_DEC_KT. Dynamic shared memory: (16 * kMT + kWarps * kStages * 2 * kKT) *
// GK_TC_D * 2 bytes.
#include "attention_tc.cuh"

constexpr int kWarps = GK_DEC_WARPS;
constexpr int kKT = GK_DEC_KT;
constexpr int kStages = GK_DEC_STAGES;
constexpr int kMT = GK_DEC_MT;
constexpr int kRows = 16 * kMT;
constexpr int kThreads = 32 * kWarps;
constexpr int kNT = kKT / 8;
constexpr int kDT = kTcD / 8;
constexpr unsigned kQBytes = kRows * kTcD * 2;
constexpr unsigned kTileBytes = kKT * kTcD * 2;                   // K (or V) of one stage
constexpr unsigned kWarpBytes = kStages * 2 * kTileBytes;         // one warp's ring
constexpr unsigned kMergeBytes = (kRows * kTcD + 2 * kRows) * 4;  // one warp's state, as floats
static_assert(kKT % 16 == 0 && kStages >= 2 && kMergeBytes <= kWarpBytes, "decode geometry");
// Blocks of this shared memory that fit an SM of 227 KiB (sm_90; the planner counts the same from
// the device's limit), at most 2: registers are capped (at 256) so that 2 fit by registers too.
// (3 blocks of 128 threads would cap them at 168: the 2-stage d128 kernel then spills.)
constexpr int kSmBlocks = (227 * 1024) / (kQBytes + kWarps * kWarpBytes + 1024);
constexpr int kMinBlocks = kSmBlocks < 1 ? 1 : (kSmBlocks > 2 ? 2 : kSmBlocks);

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
    gk_attn_decode(const gk_attn_tc_args a) {
    unsigned char* smem_p = gk_dynamic_smem();
    const unsigned q_s = gk_smem_addr(smem_p);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t4 = lane & 3, r8 = lane & 7, j8 = lane >> 3;
    const int split = blockIdx.x;
    const gk_i64 b = blockIdx.y / a.hkv, kvh = blockIdx.y % a.hkv;
    const gk_i64 group = a.hq / a.hkv;
    const int n_rows = (int)(group * a.sq);  // <= kRows (the host's choice of kMT)
    const int d = (int)a.d;
    const gk_i64 n_keys = gk_tc_valid_keys(a, b);
    const gk_i64 shift = n_keys - a.sq;  // causal: position i sees keys j <= i + shift

    // Query rows: row r is q head kvh * group + r / sq at position r % sq.
    const gk_u16* q = reinterpret_cast<const gk_u16*>(a.q);
    for (int id = tid; id < kRows * kTcChunks; id += kThreads) {
        const int r = id / kTcChunks, c = id % kTcChunks;
        const bool ok = r < n_rows && c * 8 < d;
        const gk_i64 off = ok ? b * a.q_stride[0] + (kvh * group + r / a.sq) * a.q_stride[1] +
                                    (r % a.sq) * a.q_stride[2] + c * 8
                              : 0;
        gk_cp16(q_s + gk_swz<kTcChunks>(r, c), q + off, ok);
    }
    gk_cp_commit();

    // This warp's keys: [k_lo, k_hi).
    const gk_i64 per_warp = a.keys_per_split / kWarps;
    const gk_i64 k_lo = split * a.keys_per_split + warp * per_warp;
    const gk_i64 k_hi = k_lo + per_warp < n_keys ? k_lo + per_warp : n_keys;
    const int n_tiles = k_hi > k_lo ? (int)((k_hi - k_lo + kKT - 1) / kKT) : 0;
    const unsigned ring = q_s + kQBytes + warp * kWarpBytes;
    const gk_u16* kg = reinterpret_cast<const gk_u16*>(a.k) + b * a.k_stride[0] +
                       kvh * a.k_stride[1] + k_lo * a.k_stride[2];
    const gk_u16* vg = reinterpret_cast<const gk_u16*>(a.v) + b * a.v_stride[0] +
                       kvh * a.v_stride[1] + k_lo * a.v_stride[2];
    auto load_kv = [&](int tile) {
        const unsigned st = ring + (unsigned)(tile % kStages) * 2 * kTileBytes;
        const gk_i64 j0 = (gk_i64)tile * kKT;
        gk_tc_load_tile<kKT, 32>(st, kg + j0 * a.k_stride[2], (int)a.k_stride[2], k_hi - k_lo - j0,
                                 d, lane);
        gk_tc_load_tile<kKT, 32>(st + kTileBytes, vg + j0 * a.v_stride[2], (int)a.v_stride[2],
                                 k_hi - k_lo - j0, d, lane);
    };
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < n_tiles) load_kv(s);
        gk_cp_commit();
    }

    // The Q group is the oldest of this thread's; the Q tile is read (ldmatrix) at every step.
    gk_cp_wait<kStages - 1>();
    gk_sync_block();

    // Per accumulator row: the end of the keys it sees (relative to k_lo; 0 for a row past
    // n_rows) and its mask offset.
    int lim[kMT][2];
    gk_i64 mask_row[kMT][2];
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            const int r = i * 16 + g + 8 * hh;
            const gk_i64 pos = r < n_rows ? r % a.sq : 0;
            gk_i64 end = r < n_rows ? k_hi : k_lo;
            if (a.causal && pos + shift + 1 < end) end = pos + shift + 1;
            lim[i][hh] = end > k_lo ? (int)(end - k_lo) : 0;
            mask_row[i][hh] =
                GK_TC_MASK && r < n_rows ? gk_tc_mask_row(a, b, kvh * group + r / a.sq, pos) : 0;
        }

    float o[kMT][kDT][4], m_run[kMT][2], l_run[kMT][2];
#pragma unroll
    for (int i = 0; i < kMT; ++i) {
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
            for (int e = 0; e < 4; ++e) o[i][dt][e] = 0.f;
        m_run[i][0] = m_run[i][1] = gk_neg_inf();
        l_run[i][0] = l_run[i][1] = 0.f;
    }

    for (int t = 0; t < n_tiles; ++t) {
        gk_cp_wait<kStages - 2>();
        gk_sync_warp();  // tile t is in for every lane; the stage refilled next is free
        if (t + kStages - 1 < n_tiles) load_kv(t + kStages - 1);
        gk_cp_commit();
        const unsigned k_st = ring + (unsigned)(t % kStages) * 2 * kTileBytes;
        const unsigned v_st = k_st + kTileBytes;

        float s[kMT][kNT][4];
#pragma unroll
        for (int i = 0; i < kMT; ++i)
#pragma unroll
            for (int j = 0; j < kNT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) s[i][j][e] = 0.f;
#pragma unroll
        for (int kk = 0; kk < kTcKSteps; ++kk) {
            unsigned qa[kMT][4];
#pragma unroll
            for (int i = 0; i < kMT; ++i)
                gk_ldsm_x4(q_s + gk_swz<kTcChunks>(i * 16 + (lane & 15), kk * 2 + (lane >> 4)),
                           qa[i]);
#pragma unroll
            for (int jp = 0; jp < kKT / 16; ++jp) {
                unsigned r[4];
                gk_ldsm_x4(
                    k_st + gk_swz<kTcChunks>(jp * 16 + r8 + (j8 >> 1) * 8, kk * 2 + (j8 & 1)), r);
#pragma unroll
                for (int i = 0; i < kMT; ++i) {
                    gk_mma16816(s[i][2 * jp], qa[i], r[0], r[1]);
                    gk_mma16816(s[i][2 * jp + 1], qa[i], r[2], r[3]);
                }
            }
        }

        const gk_i64 j0 = (gk_i64)t * kKT;  // relative to k_lo
#pragma unroll
        for (int i = 0; i < kMT; ++i)
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                const int left = lim[i][hh] - t * kKT;
                const int lim_here = left < 0 ? 0 : (left > kKT ? kKT : left);
#pragma unroll
                for (int j = 0; j < kNT; ++j)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int key = j * 8 + 2 * t4 + e;
                        s[i][j][2 * hh + e] =
                            gk_tc_masked(s[i][j][2 * hh + e] * a.scale_log2, key < lim_here, a,
                                         mask_row[i][hh], k_lo + j0 + key);
                    }
            }

        gk_tc_softmax_pv(s, m_run, l_run, o, v_st, r8, j8);
    }
    gk_cp_wait<0>();

    // Each warp leaves (o, m, l) of its rows in its own ring, as floats; then the block merges.
    gk_sync_warp();
    float* wo = reinterpret_cast<float*>(smem_p + kQBytes + warp * kWarpBytes);
    float* wm = wo + kRows * kTcD;
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float l = l_run[i][hh];
            l += gk_shfl_xor_f(l, 1);
            l += gk_shfl_xor_f(l, 2);
            const int r = i * 16 + g + 8 * hh;
#pragma unroll
            for (int dt = 0; dt < kDT; ++dt) {
                wo[r * kTcD + dt * 8 + 2 * t4] = o[i][dt][2 * hh];
                wo[r * kTcD + dt * 8 + 2 * t4 + 1] = o[i][dt][2 * hh + 1];
            }
            if (t4 == 0) {
                wm[r] = m_run[i][hh];
                wm[kRows + r] = l;
            }
        }
    gk_sync_block();

    const gk_i64 rows_total = a.batch * a.hq * a.sq;
    for (int id = tid; id < n_rows * d; id += kThreads) {
        const int r = id / d, c = id % d;
        float big = gk_neg_inf();
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const float* m_w =
                reinterpret_cast<const float*>(smem_p + kQBytes + w * kWarpBytes) + kRows * kTcD;
            big = fmaxf(big, m_w[r]);
        }
        float acc = 0.f, total = 0.f;
        if (big != gk_neg_inf()) {
#pragma unroll
            for (int w = 0; w < kWarps; ++w) {
                const float* o_w =
                    reinterpret_cast<const float*>(smem_p + kQBytes + w * kWarpBytes);
                const float f = gk_ex2(o_w[kRows * kTcD + r] - big);
                acc += o_w[r * kTcD + c] * f;
                total += o_w[kRows * kTcD + kRows + r] * f;
            }
        }
        const gk_i64 row = (b * a.hq + kvh * group + r / a.sq) * a.sq + r % a.sq;
        if (a.n_splits == 1) {
            reinterpret_cast<gk_u16*>(a.out)[row * d + c] =
                gk_tc_to_elem(total > 0.f ? acc / total : 0.f);
        } else {
            const gk_i64 w = split * rows_total + row;
            reinterpret_cast<float*>(a.ws_o)[w * d + c] = acc;
            if (c == 0) {
                reinterpret_cast<float*>(a.ws_ml)[2 * w] = big;
                reinterpret_cast<float*>(a.ws_ml)[2 * w + 1] = total;
            }
        }
    }
}

// Merges the splits' partial states in a fixed order: a block per output row; the splits'
// weights 2^(m_s - max) are computed once into shared memory; then the threads form groups of
// d / 4 (each thread 4 columns), group g summing splits g, g + groups, ... with independent loads
// (a few per thread even at hundreds of splits), and the groups' sums are added in group order:
// the same bits on every run.
extern "C" __global__ void __launch_bounds__(GK_ATTN_COMBINE_THREADS)
    gk_attn_combine(const gk_attn_tc_args a) {
    constexpr int kThreadsC = GK_ATTN_COMBINE_THREADS;
    __shared__ float weight[GK_ATTN_MAX_SPLITS], partial[GK_ATTN_MAX_SPLITS];
    __shared__ float sums[4 * kThreadsC];
    const gk_i64 rows_total = a.batch * a.hq * a.sq;
    const gk_i64 row = blockIdx.x;
    const int tid = threadIdx.x;
    const int n = a.n_splits;
    const int d = (int)a.d;
    const float* ws_o = reinterpret_cast<const float*>(a.ws_o);
    const float* ws_ml = reinterpret_cast<const float*>(a.ws_ml);
    for (int s = tid; s < n; s += kThreadsC) {
        weight[s] = ws_ml[2 * (s * rows_total + row)];
        partial[s] = ws_ml[2 * (s * rows_total + row) + 1];
    }
    gk_sync_block();
    float big = gk_neg_inf();
    for (int s = 0; s < n; ++s) big = fmaxf(big, weight[s]);
    gk_sync_block();
    for (int s = tid; s < n; s += kThreadsC)
        weight[s] = big == gk_neg_inf() ? 0.f : gk_ex2(weight[s] - big);
    gk_sync_block();
    float total = 0.f;
    for (int s = 0; s < n; ++s) total += weight[s] * partial[s];
    const float inv = total > 0.f ? 1.f / total : 0.f;
    const int quads = (d + 3) / 4;  // <= kThreadsC: d <= 4 * kThreadsC
    const int groups = kThreadsC / quads, grp = tid / quads, c0 = 4 * (tid % quads);
    const float* o = ws_o + row * a.d;
    const gk_i64 split_step = rows_total * a.d;
    if (grp < groups) {
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 4
        for (int s = grp; s < n; s += groups) {
            const float w = weight[s];
            const float* src = o + s * split_step + c0;
#pragma unroll
            for (int e = 0; e < 4; ++e)
                if (c0 + e < d) acc[e] += w * src[e];
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) sums[grp * 4 * quads + c0 + e] = acc[e];
    }
    gk_sync_block();
    gk_u16* out = reinterpret_cast<gk_u16*>(a.out) + row * a.d;
    for (int c = tid; c < d; c += kThreadsC) {
        float acc = 0.f;
        for (int g = 0; g < groups; ++g) acc += sums[g * 4 * quads + c];
        out[c] = gk_tc_to_elem(acc * inv);
    }
}
