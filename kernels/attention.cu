// Fused scaled dot-product attention (flash-attention style, SIMT): online softmax over tiles of
// 32 keys held in shared memory, float32 (or float64) accumulation, no score matrix in memory.
//
// A block serves up to 16 query rows of one (batch, kv head): the rows of all hq / hkv query
// heads that share that kv head are served together (grouped-query attention reads each k/v tile
// once for the whole group, and decode with sq = 1 still fills a warp). Each warp holds 4 rows;
// for scores, lane j takes key j of the tile (a dot product over head_dim against q rows in
// shared memory); for p @ v, lane c holds output dimensions c, c + 32, ... For long key ranges
// with few blocks (decode), blockIdx.z splits the keys and gk_attention_combine merges.
// Scores are kept in log2 units (q is prescaled by scale * log2(e)) so that exp is exp2.
//
// Defines: GK_T (q, k, v, out), GK_ACC_T (float for 16-bit types), GK_DMAX (32, 64, 128 or 256:
// the largest head_dim served), GK_MASK (0 none, 1 bool, 2 additive, of type GK_T).
#include "args.cuh"
#include "warp.cuh"

typedef GK_T T;
typedef GK_ACC_T acc_t;

#define GK_ROWS GK_ATTN_ROWS  // query rows per warp
#define GK_KEYS GK_ATTN_KEYS  // keys per tile, one per lane
#define GK_DCH (GK_DMAX / GK_LANES)
// k rows in shared memory are padded so that the 32 lanes reading 32 rows hit distinct banks.
#define GK_KPAD (sizeof(T) < GK_ATTN_PAD_BYTES ? GK_ATTN_PAD_BYTES / (int)sizeof(T) : 1)

GK_KERNEL void gk_attention(const gk_attn_args a) {
    extern __shared__ __align__(16) unsigned char gk_smem[];
    const acc_t NEG_INF = -(acc_t)GK_INF_F;
    const gk_i64 group = a.hq / a.hkv;
    const gk_i64 m_total = group * a.sq;  // query rows served per (batch, kv head)
    const int warps = (int)blockDim.x / GK_LANES;
    const int warp = (int)threadIdx.x / GK_LANES, lane = (int)threadIdx.x % GK_LANES;
    const int block_rows = warps * GK_ROWS;
    const gk_i64 b = blockIdx.y / a.hkv, kvh = blockIdx.y % a.hkv;
    const gk_i64 row0 = (gk_i64)blockIdx.x * block_rows;
    const int d = (int)a.d;
    const int dp = d + GK_KPAD;
    acc_t* q_s = reinterpret_cast<acc_t*>(gk_smem);       // [block_rows][d]
    T* k_s = reinterpret_cast<T*>(q_s + block_rows * d);  // [GK_KEYS][dp]
    T* v_s = k_s + GK_KEYS * dp;                          // [GK_KEYS][d]
    const T* q = reinterpret_cast<const T*>(a.q);
    const T* k = reinterpret_cast<const T*>(a.k) + b * a.k_stride[0] + kvh * a.k_stride[1];
    const T* v = reinterpret_cast<const T*>(a.v) + b * a.v_stride[0] + kvh * a.v_stride[1];

    for (int e = threadIdx.x; e < block_rows * d; e += blockDim.x) {
        const int rr = e / d, c = e % d;
        const gk_i64 gr = row0 + rr;
        acc_t val = (acc_t)0;
        if (gr < m_total) {
            const gk_i64 h = kvh * group + gr / a.sq, i = gr % a.sq;
            val = (acc_t)q[b * a.q_stride[0] + h * a.q_stride[1] + i * a.q_stride[2] +
                           c * a.q_stride[3]] *
                  (acc_t)a.scale_log2;
        }
        q_s[e] = val;
    }

    // Causal, aligned to the end: query i sees keys j <= i + skv - sq (none past skv).
    auto key_end_of = [&](gk_i64 gr) -> gk_i64 {
        if (gr >= m_total) return 0;
        gk_i64 end = a.causal ? gr % a.sq + a.skv - a.sq + 1 : a.skv;
        return end < 0 ? 0 : (end > a.skv ? a.skv : end);
    };
    gk_i64 block_key_end = 0;
    for (int rr = 0; rr < block_rows; ++rr) {
        const gk_i64 end = key_end_of(row0 + rr);
        block_key_end = end > block_key_end ? end : block_key_end;
    }
    // This warp's rows: query head, position, and the end of the keys each may see.
    gk_i64 head[GK_ROWS], pos[GK_ROWS], key_end[GK_ROWS];
    for (int r = 0; r < GK_ROWS; ++r) {
        const gk_i64 gr = row0 + warp * GK_ROWS + r;
        head[r] = gr < m_total ? kvh * group + gr / a.sq : 0;
        pos[r] = gr < m_total ? gr % a.sq : 0;
        key_end[r] = key_end_of(gr);
    }
    const gk_i64 n_tiles = (block_key_end + GK_KEYS - 1) / GK_KEYS;
    const gk_i64 t_first = (gk_i64)blockIdx.z * a.tiles_per_split;
    gk_i64 t_last = t_first + a.tiles_per_split;
    t_last = t_last < n_tiles ? t_last : n_tiles;

    acc_t m[GK_ROWS], l[GK_ROWS], acc[GK_ROWS][GK_DCH];
    for (int r = 0; r < GK_ROWS; ++r) {
        m[r] = NEG_INF;
        l[r] = (acc_t)0;
        for (int t = 0; t < GK_DCH; ++t) acc[r][t] = (acc_t)0;
    }
    const acc_t* q_rows = q_s + warp * GK_ROWS * d;
    // 16-byte loads of k / v rows where they are contiguous and aligned.
    const int V = gk_vec16<T>::N;
    const bool vec = a.k_stride[3] == 1 && a.v_stride[3] == 1 && d % V == 0 &&
                     a.k_stride[2] % V == 0 && a.v_stride[2] % V == 0 &&
                     reinterpret_cast<gk_u64>(k) % 16 == 0 && reinterpret_cast<gk_u64>(v) % 16 == 0;

    for (gk_i64 tile = t_first; tile < t_last; ++tile) {
        const gk_i64 j0 = tile * GK_KEYS;
        __syncthreads();  // q_s is written; the previous tile is no longer read
        if (vec) {
            const int dv = d / V;
            for (int e = threadIdx.x; e < GK_KEYS * dv; e += blockDim.x) {
                const int jj = e / dv, c = (e % dv) * V;
                const gk_i64 key = j0 + jj;
                gk_vec16<T> kx, vx;
                if (key < a.skv) {
                    kx = *reinterpret_cast<const gk_vec16<T>*>(k + key * a.k_stride[2] + c);
                    vx = *reinterpret_cast<const gk_vec16<T>*>(v + key * a.v_stride[2] + c);
                } else {
                    for (int i = 0; i < V; ++i) kx.v[i] = vx.v[i] = (T)0.0f;
                }
                for (int i = 0; i < V; ++i) {
                    k_s[jj * dp + c + i] = kx.v[i];
                    v_s[jj * d + c + i] = vx.v[i];
                }
            }
        } else {
            for (int e = threadIdx.x; e < GK_KEYS * d; e += blockDim.x) {
                const int jj = e / d, c = e % d;
                const gk_i64 key = j0 + jj;
                T kv = (T)0.0f, vv = (T)0.0f;
                if (key < a.skv) {
                    kv = k[key * a.k_stride[2] + c * a.k_stride[3]];
                    vv = v[key * a.v_stride[2] + c * a.v_stride[3]];
                }
                k_s[jj * dp + c] = kv;
                v_s[jj * d + c] = vv;
            }
        }
        __syncthreads();

        const gk_i64 key = j0 + lane;
        acc_t s[GK_ROWS];
        for (int r = 0; r < GK_ROWS; ++r) s[r] = (acc_t)0;
        const T* k_row = k_s + lane * dp;
        for (int c = 0; c < d; ++c) {
            const acc_t kc = (acc_t)k_row[c];
            for (int r = 0; r < GK_ROWS; ++r) s[r] += q_rows[r * d + c] * kc;
        }
        acc_t p[GK_ROWS];
        for (int r = 0; r < GK_ROWS; ++r) {
            bool ok = key < key_end[r];
#if GK_MASK
            if (ok) {
                const gk_i64 off = b * a.mask_stride[0] + head[r] * a.mask_stride[1] +
                                   pos[r] * a.mask_stride[2] + key * a.mask_stride[3];
#if GK_MASK == 1
                ok = reinterpret_cast<const bool*>(a.mask)[off];
#else
                s[r] += (acc_t) reinterpret_cast<const T*>(a.mask)[off] * (acc_t)GK_LOG2E;
#endif
            }
#endif
            s[r] = ok ? s[r] : NEG_INF;
            const acc_t tile_max = gk_lanes_max(s[r]);
            const acc_t m_new = tile_max > m[r] ? tile_max : m[r];
            if (m_new == NEG_INF) {  // nothing visible yet (the same on every lane)
                p[r] = (acc_t)0;
                continue;
            }
            const acc_t alpha = gkm_exp2(m[r] - m_new);
            p[r] = gkm_exp2(s[r] - m_new);
            l[r] = l[r] * alpha + gk_lanes_sum(p[r]);
            m[r] = m_new;
            for (int t = 0; t < GK_DCH; ++t) acc[r][t] *= alpha;
        }
        const gk_i64 left = a.skv - j0;
        const int keys_here = left < GK_KEYS ? (int)left : GK_KEYS;
        for (int jj = 0; jj < keys_here; ++jj) {
            acc_t vv[GK_DCH];
            for (int t = 0; t < GK_DCH; ++t) {
                const int c = lane + t * GK_LANES;
                vv[t] = c < d ? (acc_t)v_s[jj * d + c] : (acc_t)0;
            }
            for (int r = 0; r < GK_ROWS; ++r) {
                const acc_t pj = gk_shfl(p[r], jj);
                for (int t = 0; t < GK_DCH; ++t) acc[r][t] += pj * vv[t];
            }
        }
    }

    const gk_i64 rows_total = a.batch * a.hq * a.sq;
    for (int r = 0; r < GK_ROWS; ++r) {
        if (row0 + warp * GK_ROWS + r >= m_total) break;
        const gk_i64 out_row = (b * a.hq + head[r]) * a.sq + pos[r];
        if (a.n_splits == 1) {
            // A row that sees no key at all (fully masked) is zeros.
            const acc_t inv = l[r] > (acc_t)0 ? (acc_t)1 / l[r] : (acc_t)0;
            T* o = reinterpret_cast<T*>(a.out) + out_row * d;
            for (int t = 0; t < GK_DCH; ++t) {
                const int c = lane + t * GK_LANES;
                if (c < d) o[c] = (T)(acc[r][t] * inv);
            }
        } else {
            const gk_i64 w = (gk_i64)blockIdx.z * rows_total + out_row;
            acc_t* o = reinterpret_cast<acc_t*>(a.ws_o) + w * d;
            for (int t = 0; t < GK_DCH; ++t) {
                const int c = lane + t * GK_LANES;
                if (c < d) o[c] = acc[r][t];
            }
            if (lane == 0) {
                reinterpret_cast<acc_t*>(a.ws_ml)[2 * w] = m[r];
                reinterpret_cast<acc_t*>(a.ws_ml)[2 * w + 1] = l[r];
            }
        }
    }
}

// Merges the key splits: a warp per output row, out = sum_s 2^(m_s - M) o_s / sum_s 2^(m_s - M)
// l_s.
GK_KERNEL void gk_attention_combine(const gk_attn_args a) {
    const acc_t NEG_INF = -(acc_t)GK_INF_F;
    const gk_i64 rows_total = a.batch * a.hq * a.sq;
    const acc_t* ws_o = reinterpret_cast<const acc_t*>(a.ws_o);
    const acc_t* ws_ml = reinterpret_cast<const acc_t*>(a.ws_ml);
    T* out = reinterpret_cast<T*>(a.out);
    const int lane = (int)threadIdx.x % GK_LANES;
    const gk_i64 warps = (gk_i64)blockDim.x / GK_LANES;
    for (gk_i64 row = blockIdx.x * warps + threadIdx.x / GK_LANES; row < rows_total;
         row += (gk_i64)gridDim.x * warps) {
        acc_t big = NEG_INF;
        for (int s = 0; s < a.n_splits; ++s) {
            const acc_t ms = ws_ml[2 * (s * rows_total + row)];
            big = ms > big ? ms : big;
        }
        acc_t total = (acc_t)0;
        if (big != NEG_INF) {
            for (int s = 0; s < a.n_splits; ++s) {
                const gk_i64 w = s * rows_total + row;
                total += ws_ml[2 * w + 1] * gkm_exp2(ws_ml[2 * w] - big);
            }
        }
        const acc_t inv = total > (acc_t)0 ? (acc_t)1 / total : (acc_t)0;
        for (gk_i64 c = lane; c < a.d; c += GK_LANES) {
            acc_t sum = (acc_t)0;
            if (big != NEG_INF) {
                for (int s = 0; s < a.n_splits; ++s) {
                    const gk_i64 w = s * rows_total + row;
                    sum += gkm_exp2(ws_ml[2 * w] - big) * ws_o[w * a.d + c];
                }
            }
            out[row * a.d + c] = (T)(sum * inv);
        }
    }
}
