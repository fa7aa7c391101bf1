// What the tensor-core attention kernels (attention_tc.cu, attention_decode.cu) share: the valid
// key count, tile copies into swizzled shared memory, masking of scores, the online softmax and
// O += P V, the output conversion. Defines: GK_MMA_TYPE (f16 | bf16), GK_TC_D (64, 96, 128 or 256:
// the head_dim the tiles hold; a smaller head_dim that is a multiple of 8 runs zero-padded),
// GK_TC_MASK (0 none, 1 bool, 2 additive of the element type).
#pragma once
#include "args.cuh"
#include "mma16.cuh"

#define GK_TC_LOG2E 1.4426950408889634f

constexpr int kTcD = GK_TC_D;
constexpr int kTcChunks = kTcD / 8;  // 16-byte chunks per row
constexpr int kTcKSteps = kTcD / 16;
static_assert(kTcD % 32 == 0 && kTcD <= 256, "GK_TC_D: 64, 96, 128 or 256");

// Keys of batch entry b that the kernel may read: kv_len (when given) clamped to [0, skv].
GK_DEV gk_i64 gk_tc_valid_keys(const gk_attn_tc_args& a, gk_i64 b) {
    if (a.kv_len_size == 0) return a.skv;
    const gk_i64 at = b * a.kv_len_stride;
    const gk_i64 n = a.kv_len_size == 4 ? (gk_i64) reinterpret_cast<const gk_i32*>(a.kv_len)[at]
                                        : reinterpret_cast<const gk_i64*>(a.kv_len)[at];
    return n < 0 ? 0 : (n > a.skv ? a.skv : n);
}

// Copies rows [0, R) of a 16-bit matrix at g (row stride ld elements, R * ld < 2^31) into a
// swizzled shared tile of R rows by kTcChunks chunks at `dst`; rows at or past n_rows and columns
// at or past d are zeros. Run by THREADS threads numbered from `tid`.
template <int R, int THREADS>
GK_DEV void gk_tc_load_tile(unsigned dst, const gk_u16* g, int ld, gk_i64 n_rows, int d, int tid) {
    constexpr int kTotal = R * kTcChunks;
    if constexpr (THREADS % kTcChunks == 0 && (THREADS / kTcChunks) % 8 == 0) {
        // Each thread copies one column of chunks, every kStep rows (the swizzle repeats).
        constexpr int kStep = THREADS / kTcChunks;
        const int r0 = tid / kTcChunks, c = tid % kTcChunks;
        const bool col_ok = c * 8 < d;
        const unsigned at = dst + gk_swz<kTcChunks>(r0, c);
#pragma unroll
        for (int i = 0; i < (kTotal + THREADS - 1) / THREADS; ++i) {
            const int r = r0 + i * kStep;
            if (kTotal % THREADS == 0 || r < R) {
                const bool ok = col_ok && r < n_rows;
                gk_cp16(at + (unsigned)(i * kStep * kTcChunks * 16), g + (ok ? r * ld + c * 8 : 0),
                        ok);
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < (kTotal + THREADS - 1) / THREADS; ++i) {
            const int id = tid + i * THREADS;
            if (kTotal % THREADS == 0 || id < kTotal) {
                const int r = id / kTcChunks, c = id % kTcChunks;
                const bool ok = r < n_rows && c * 8 < d;
                gk_cp16(dst + gk_swz<kTcChunks>(r, c), g + (ok ? r * ld + c * 8 : 0), ok);
            }
        }
    }
}

// The mask's offset of (batch b, q head h, position i, key 0).
GK_DEV gk_i64 gk_tc_mask_row(const gk_attn_tc_args& a, gk_i64 b, gk_i64 h, gk_i64 i) {
    return b * a.mask_stride[0] + h * a.mask_stride[1] + i * a.mask_stride[2];
}

// A score in log2 units (x = q.k * scale * log2 e) after the mask: -inf where the key is hidden
// (`visible` false: causal, past the valid keys, or a row past sq), the additive mask added.
// mask_row: gk_tc_mask_row of the score's row.
GK_DEV float gk_tc_masked(float x, bool visible, const gk_attn_tc_args& a, gk_i64 mask_row,
                          gk_i64 key) {
    if (!visible) return gk_neg_inf();
#if GK_TC_MASK
    const gk_i64 off = mask_row + key * a.mask_stride[3];
#if GK_TC_MASK == 1
    return reinterpret_cast<const unsigned char*>(a.mask)[off] ? x : gk_neg_inf();
#else
    return x + gk_elem_to_float(reinterpret_cast<const gk_u16*>(a.mask)[off]) * GK_TC_LOG2E;
#endif
#else
    (void)a, (void)mask_row, (void)key;
    return x;
#endif
}

GK_DEV gk_u16 gk_tc_to_elem(float x) { return (gk_u16)(gk_pack2(x, 0.f) & 0xffffu); }

// Online softmax of a warp's scores in log2 units (s: MT m16 tiles by NT n8 tiles of keys, a
// row's keys spread over the 4 lanes of a quad), then O += P V with V's NT * 8 keys at v_st: the
// S accumulators of n8 tiles 2 kk and 2 kk + 1 are the A fragment of keys [16 kk, 16 kk + 16);
// r8, j8: the lane's row in its 8 x 8 matrix and which of the four matrices it addresses.
template <int MT, int NT>
GK_DEV void gk_tc_softmax_pv(float (&s)[MT][NT][4], float (&m_run)[MT][2], float (&l_run)[MT][2],
                             float (&o)[MT][kTcD / 8][4], unsigned v_st, int r8, int j8) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float mx = gk_neg_inf();
#pragma unroll
            for (int j = 0; j < NT; ++j)
                mx = fmaxf(mx, fmaxf(s[i][j][2 * hh], s[i][j][2 * hh + 1]));
            mx = fmaxf(mx, gk_shfl_xor_f(mx, 1));
            mx = fmaxf(mx, gk_shfl_xor_f(mx, 2));
            const float m_new = fmaxf(m_run[i][hh], mx);
            const float m_use = m_new == gk_neg_inf() ? 0.f : m_new;
            const float alpha = gk_ex2(m_run[i][hh] - m_use);
            m_run[i][hh] = m_new;
            float sum = 0.f;
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const float p = gk_ex2(s[i][j][2 * hh + e] - m_use);
                    s[i][j][2 * hh + e] = p;
                    sum += p;
                }
            l_run[i][hh] = l_run[i][hh] * alpha + sum;
#pragma unroll
            for (int dt = 0; dt < kTcD / 8; ++dt) {
                o[i][dt][2 * hh] *= alpha;
                o[i][dt][2 * hh + 1] *= alpha;
            }
        }
#pragma unroll
    for (int kk = 0; kk < NT / 2; ++kk) {
        unsigned pa[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            pa[i][0] = gk_pack2(s[i][2 * kk][0], s[i][2 * kk][1]);
            pa[i][1] = gk_pack2(s[i][2 * kk][2], s[i][2 * kk][3]);
            pa[i][2] = gk_pack2(s[i][2 * kk + 1][0], s[i][2 * kk + 1][1]);
            pa[i][3] = gk_pack2(s[i][2 * kk + 1][2], s[i][2 * kk + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < kTcD / 16; ++dp) {
            // Matrices (keys 0-7, d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15), (keys 8-15,
            // d 8-15) stored as rows of keys: transposed on load.
            unsigned r[4];
            gk_ldsm_x4_t(v_st + gk_swz<kTcChunks>(kk * 16 + r8 + (j8 & 1) * 8, dp * 2 + (j8 >> 1)),
                         r);
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                gk_mma16816(o[i][2 * dp], pa[i], r[0], r[1]);
                gk_mma16816(o[i][2 * dp + 1], pa[i], r[2], r[3]);
            }
        }
    }
}
