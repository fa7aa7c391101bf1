// Small dense factorizations, one block per matrix of a stack (n <= GK_LA_MAX_N): Cholesky
// (gk_chol_small, rows of any stride, on one or two warps, with -L^-T, the negated transpose
// of the lower factor's inverse, when asked: what the blocked Cholesky multiplies its panel by,
// the diagonal blocks read in place) and LU with partial
// pivoting, the matrix in shared memory, followed by what is asked of it (gk_lu_small: solve,
// inverse, determinant, log-determinant). Every sum is taken in one fixed order (no atomics):
// the same bits on every run.
//
// Defines: GK_T (float or double). Blocks of GK_LA_THREADS threads (geometry.cuh).
#include "args.cuh"
#include "linalg.cuh"
#include "warp.cuh"

#define LA_LD (GK_LA_MAX_N + 1)  // padded row: a column walk does not hit one bank

__device__ inline la_t la_inf() { return gk_inf((la_t)0); }

// gk_chol_small, one block per matrix, the work on one or two warps (rows or columns in lanes,
// exchanged by shuffles and shared memory behind __syncwarp): no block-wide barrier per column.
// The matrix is padded to p = 8, 16, 32 or 64 rows with the identity (which factors and inverts
// to itself and leaves the real rows alone), so every loop below runs a constant count. n <= 32:
// warp 0 factors the p x p block (rows in lanes), then inverts it (columns in lanes). n > 32, as
// 32 + 32: warp 0 factors L11 and L21 = A21 L11^-T together; every thread takes L21 L21^T off
// A22; warp LA_W2 factors L22 while warps 0 and 1 invert L11 (X11) and form -L21 X11 (16 rows
// each); then warp 0 solves X21 = L22^-1 (-L21 X11) and warp LA_W2 inverts L22 (X22). Four
// block barriers in all.
// S holds A, then L (lower, row-major); X = L^-1 goes into S's upper half, X[i][c] at
// S[c][i + 1], so that -X^T (what GK_LA_CHOL_INVERSE writes) is read by rows. Per column of the
// factor the dependent chain is a shuffle of the next diagonal, its reciprocal square root, one
// product and one FMA.
#define LA_W2 2  // the second working warp: another wavefront than warp 0 on AMD (64 lanes)

// 1 / sqrt(x) within about an ulp: float's hardware estimate and one Newton step (the correctly
// rounded __frsqrt_rn is twice as long a chain); CUDA's double rsqrt refines its own.
__device__ inline float la_rsqrt(float x) {
    const float r = rsqrtf(x), e = 1.0f - x * r * r;
    return x < GK_INF_F ? r + 0.5f * r * e : r;  // x = inf: 0, not 0 * inf
}
__device__ inline double la_rsqrt(double x) { return rsqrt(x); }

// The column loops below run in chunks of LA_CHUNK columns: a chunk's columns unrolled (every
// register index a constant), the chunks a loop whose registers shift by LA_CHUNK between
// rounds. Unrolled whole, the 64-row path was ~9 K (float32) / ~18 K (float64) instructions run
// once a launch, fetched from L2 as they ran. With each column's values broadcast through
// shared memory (la_chol_rows), chunks of 8 won in both dtypes (H100, 64 rows with -L^-T:
// float32 26.2 -> 22.7 us, float64 35.2 -> 29.4; notes/linalg.md, 2026-12-07).
#define LA_CHUNK 8

// 16 bytes of la_t: la_chol_rows's broadcast loads.
#define LA_VEC (int)(16 / sizeof(la_t))
struct alignas(16) la_vec {
    la_t v[LA_VEC];
};

// Factors the NB x NB diagonal block at S[r0][r0] in place (L, but the pivot d_j where L_jj =
// sqrt(d_j) belongs), lane i holding row r0 + i (lanes past NB idle); with `TWO` also L21 =
// A21 L^-T for the 32 rows below it (r0 = 0, NB = 32), lane i holding row 32 + i. Per column j:
// l_ij = a_ij / sqrt(d_j), l_j broadcast through `col` (2 x GK_LANES values of shared memory),
// a_ic -= l_ij l_cj. rinv[r0 + j] = 1 / L_jj; *bad set where a pivot is not > 0 (or NaN). In
// round q, a[c] holds column q + c: those past NB are scratch (their broadcasts read other
// lanes' scratch, never a finished value).
template <int NB, bool TWO>
__device__ inline void la_chol_rows(la_t* S, int r0, la_t* rinv, int* bad, la_t* col) {
    constexpr int kChunk = NB < LA_CHUNK ? NB : LA_CHUNK;
    static_assert(NB % kChunk == 0, "whole chunks");
    const int lane = threadIdx.x % GK_LANES;
    const bool row = lane < NB;
    la_t a[NB], b[NB];  // b: unused (and dropped) without TWO
    la_t* mine = S + (r0 + lane) * LA_LD + r0;
    la_t* below = S + (GK_LANES + lane) * LA_LD;  // (TWO: r0 = 0)
#pragma unroll
    for (int c = 0; c < NB; ++c) a[c] = row && c <= lane ? mine[c] : (la_t)0;
    if (TWO)
#pragma unroll
        for (int c = 0; c < NB; ++c) b[c] = below[c];
    bool fail = false;
    la_t d = gk_shfl(a[0], 0);
#pragma unroll 1
    for (int q = 0; q < NB; q += kChunk) {
#pragma unroll
        for (int t = 0; t < kChunk; ++t) {
            const int j = q + t;
            fail |= !(d > (la_t)0);  // d is the same in every lane
            const la_t rs = la_rsqrt(d), li = a[t] * rs;
            if (lane == j) rinv[r0 + j] = rs;
            a[t] = lane == j ? d : li;  // sqrt(d), off the chain, is taken when L is written out
            la_t bi = 0;
            if (TWO) b[t] = bi = b[t] * rs;
            // The next pivot first (lane j + 1's own l_{j+1,j}): the chain does not wait for
            // its shuffle; a[t + 1] below gets the same value in that lane.
            if (t + 1 < NB) d = gk_shfl(a[t + 1] - li * li, j + 1);
            // The column's l values to every lane through `col` (two buffers, alternating: a
            // lane stores column j + 2's only after the barrier of column j + 1, which every
            // lane passes after its reads of column j), read LA_VEC at a time: one 16-byte
            // broadcast load where a shuffle moved one value. Column q + c wraps to buffer
            // slot (q + c) % 32, as a shuffle's lane would: past NB only scratch reads it.
            la_t* buf = col + (t % 2) * GK_LANES;
            buf[lane] = li;
            gk_syncwarp();
#pragma unroll
            for (int g = (t + 1) / LA_VEC * LA_VEC; g < NB; g += LA_VEC) {
                const la_vec v = *reinterpret_cast<const la_vec*>(buf + ((q + g) & (GK_LANES - 1)));
#pragma unroll
                for (int e = 0; e < LA_VEC; ++e) {
                    const int c = g + e;
                    if (c <= t || c >= NB) continue;
                    a[c] -= li * v.v[e];
                    if (TWO) b[c] -= bi * v.v[e];
                }
            }
        }
#pragma unroll
        for (int t = 0; t < kChunk; ++t) {
            if (row && q + t <= lane) mine[q + t] = a[t];
            if (TWO) below[q + t] = b[t];
        }
#pragma unroll
        for (int c = 0; c + kChunk < NB; ++c) {
            a[c] = a[c + kChunk];
            if (TWO) b[c] = b[c + kChunk];
        }
    }
    if (lane == 0 && fail) *bad = 1;
}

// x <- L^-1 x, L the NB x NB diagonal block at S[r0][r0] (unit-free, 1 / L_ii in rinv), every
// lane its own vector: forward substitution by columns, L's values broadcast from S. In round
// q, x[c] holds row q + c for c < NB - q and the rows finished before q after them; each round
// rotates its finished rows to the end, so that x is in order again after the last.
template <int NB>
__device__ inline void la_forward(la_t (&x)[GK_LANES], const la_t* S, int r0, const la_t* rinv) {
    constexpr int kChunk = NB < LA_CHUNK ? NB : LA_CHUNK;
    static_assert(NB % kChunk == 0, "whole chunks");
#pragma unroll 1
    for (int q = 0; q < NB; q += kChunk) {
        const la_t* l = S + (r0 + q) * LA_LD + r0 + q;  // L[r0 + q + r][r0 + q + t]: l[r LD + t]
#pragma unroll
        for (int t = 0; t < kChunk; ++t) {
            x[t] *= rinv[r0 + q + t];
#pragma unroll
            for (int r = t + 1; r < NB; ++r)
                if (r < NB - q) x[r] -= l[r * LA_LD + t] * x[t];
        }
        la_t done[kChunk];
#pragma unroll
        for (int t = 0; t < kChunk; ++t) done[t] = x[t];
#pragma unroll
        for (int c = 0; c + kChunk < NB; ++c) x[c] = x[c + kChunk];
#pragma unroll
        for (int t = 0; t < kChunk; ++t) x[NB - kChunk + t] = done[t];
    }
}

// Column `lane` of the inverse of the NB x NB diagonal block at S[r0][r0], into S's upper half.
template <int NB>
__device__ inline void la_invert_cols(la_t* S, int r0, const la_t* rinv) {
    const int lane = threadIdx.x % GK_LANES;
    la_t x[GK_LANES];
#pragma unroll
    for (int i = 0; i < GK_LANES; ++i) x[i] = (la_t)(i == lane);
    la_forward<NB>(x, S, r0, rinv);
    la_t* dst =
        S + (r0 + lane) * LA_LD + r0 + 1;  // X[r0 + i][r0 + lane] at S[r0 + lane][r0 + i + 1]
#pragma unroll
    for (int i = 0; i < NB; ++i)
        if (lane < NB && i >= lane) dst[i] = x[i];
}

// n <= 32: the factor of the p x p block and, with `inverse`, its inverse, by warp 0.
template <int NB>
__device__ inline void la_chol_leaf(la_t* S, la_t* rinv, int* bad, la_t* col, bool inverse) {
    la_chol_rows<NB, false>(S, 0, rinv, bad, col);
    if (!inverse) return;
    gk_syncwarp();
    la_invert_cols<NB>(S, 0, rinv);
}

// GK_LA_CHOL_LEAF 1 (default): the 64-row path (n > 32) as a blocked right-looking Cholesky of
// the 128 x 64 matrix [A; I] in four steps of LA_SB = 16 columns. The rows under the identity
// come out as L^-T (the factor of [[A, I], [I, C]] has I L^-T below L), so the inverse is made in
// the same sweeps as the factor: no triangular inverse after it. A step's panel is always 80
// rows: its 16 x 16 diagonal block, the 48 - 16 k rows of A below it and the 16 k + 16 rows of
// I that are not zero in it (row i of I is zero left of column i, and stays so). Warps 0..3 each
// factor the diagonal block (lanes 0..15, the same operations in every warp: the same bits) and
// carry 16 of the 64 other rows (lanes 16..31) through the same column sweep, so no warp waits on
// another within a step; then all threads take the panel's product off the 64 rows x 48 - 16 k
// columns still to come (two block barriers a step). Identity row i lives in S's upper half,
// column c >= i at S[i][c + 1]: where the shipped path leaves X^T, what the output reads.
// GK_LA_CHOL_LEAF 2 (default): that leaf with the 64-row path's staging, identity and output
// as la_stage64 / la_out64 (below). 1: the same leaf with the generic staging and output loops.
// 0: the shipped 32 + 32 path with its column-serial inverses (for A/B). All three give the
// same bits.
#ifndef GK_LA_CHOL_LEAF
#define GK_LA_CHOL_LEAF 2
#endif
#define LA_SB 16                         // the sweep's width
#define LA_SWARPS (GK_LA_MAX_N / LA_SB)  // warps in a sweep: 64 other rows, 16 a warp
#define LA_PS (LA_SB + LA_VEC)  // P's row: 16-byte aligned, 8 lanes' rows on distinct banks

// One step's sweep by this warp: the 16 x 16 diagonal block at S[k0][k0] in lanes 0..15 and
// panel rows 16 w .. 16 w + 15 (P's order: the rows of A below the block, then those of I) in
// lanes 16..31. Per column j: l_ij = a_ij / sqrt(d_j) in every lane, the column's l values (the
// diagonal lanes') broadcast through `col`, a_ic -= l_ij l_cj for c > j. Writes the panel rows
// back into S and into P; the block's rows (the pivot d_j on the diagonal) stay in a[] of lanes
// 0..15, for warp 0 to write once every warp has read the block (la_chol_block).
__device__ inline void la_chol_sweep(la_t* S, la_t* P, int k0, la_t* col, bool& fail,
                                     la_t (&a)[LA_SB]) {
    const int lane = threadIdx.x % GK_LANES, warp = threadIdx.x / GK_LANES;
    const int n_a = GK_LA_MAX_N - k0 - LA_SB;  // rows of A below the block
    const bool diag = lane < LA_SB;
    const int p = warp * LA_SB + lane - LA_SB;  // the panel row (lanes past LA_SB)
    la_t* row;
    int lo = 0, hi = LA_SB - 1;  // the columns of the row that are not structurally zero
    if (diag) {
        row = S + (k0 + lane) * LA_LD + k0;
        hi = lane;
    } else if (p < n_a) {
        row = S + (k0 + LA_SB + p) * LA_LD + k0;
    } else {
        const int i = p - n_a;  // row i of I: column k0 + c at S[i][k0 + c + 1], c >= i - k0
        row = S + i * LA_LD + k0 + 1;
        lo = i - k0;
    }
#pragma unroll
    for (int c = 0; c < LA_SB; ++c) a[c] = c >= lo && c <= hi ? row[c] : (la_t)0;
    la_t d = gk_shfl(a[0], 0);
#pragma unroll
    for (int t = 0; t < LA_SB; ++t) {
        fail |= !(d > (la_t)0);  // d is the same in every lane
        const la_t rs = la_rsqrt(d), li = a[t] * rs;
        a[t] = lane == t ? d : li;  // sqrt(d) is taken when L is written out
        if (t + 1 < LA_SB) d = gk_shfl(a[t + 1] - li * li, t + 1);
        // Two buffers, alternating (a lane stores column t + 2's only after the barrier of
        // column t + 1, which every lane passes after its reads of column t).
        la_t* buf = col + (t % 2) * GK_LANES;
        buf[lane] = li;
        gk_syncwarp();
#pragma unroll
        for (int g = (t + 1) / LA_VEC * LA_VEC; g < LA_SB; g += LA_VEC) {
            const la_vec v = *reinterpret_cast<const la_vec*>(buf + g);
#pragma unroll
            for (int e = 0; e < LA_VEC; ++e) {
                const int c = g + e;
                if (c > t) a[c] -= li * v.v[e];
            }
        }
    }
    if (!diag) {
#pragma unroll
        for (int c = 0; c < LA_SB; ++c)
            if (c >= lo) row[c] = a[c];
        la_vec* dst = reinterpret_cast<la_vec*>(P + p * LA_PS);
#pragma unroll
        for (int g = 0; g < LA_SB / LA_VEC; ++g) {
            la_vec v;
#pragma unroll
            for (int e = 0; e < LA_VEC; ++e) v.v[e] = a[g * LA_VEC + e];
            dst[g] = v;
        }
    }
}

// Warp 0's lanes 0..15 after the block barrier that follows the sweep: the block's rows into S.
__device__ inline void la_chol_block(la_t* S, int k0, const la_t (&a)[LA_SB]) {
    const int lane = (int)threadIdx.x;
    if (lane >= LA_SB) return;
    la_t* row = S + (k0 + lane) * LA_LD + k0;
#pragma unroll
    for (int c = 0; c < LA_SB; ++c)
        if (c <= lane) row[c] = a[c];
}

// After step k0's sweep: every panel row p (64) minus its products with the panel rows q < n_a
// (the rows of A below the block: the columns k0 + 16 + q still to come), each sum in c order.
// Row p of A (p < n_a) only on and below its diagonal (q <= p): its upper half is row p's of I.
__device__ inline void la_chol_update(la_t* S, const la_t* P, int k0) {
    const int n_a = GK_LA_MAX_N - k0 - LA_SB;
    const int p = threadIdx.x % GK_LA_MAX_N, q0 = threadIdx.x / GK_LA_MAX_N;
    constexpr int kQs = GK_LA_THREADS / GK_LA_MAX_N;  // 4 column sets, q = q0 + kQs m
    static_assert(GK_LA_THREADS % GK_LA_MAX_N == 0 && LA_SB % (4 * kQs) == 0, "whole rounds");
    la_t x[LA_SB];
    const la_vec* mine = reinterpret_cast<const la_vec*>(P + p * LA_PS);
#pragma unroll
    for (int g = 0; g < LA_SB / LA_VEC; ++g) {
        const la_vec v = mine[g];
#pragma unroll
        for (int e = 0; e < LA_VEC; ++e) x[g * LA_VEC + e] = v.v[e];
    }
    const bool is_a = p < n_a;
    // Row p's element of column k0 + 16 + q: S[r][k0 + 16 + q] (A), S[i][k0 + 17 + q] (I).
    la_t* dst =
        is_a ? S + (k0 + LA_SB + p) * LA_LD + k0 + LA_SB : S + (p - n_a) * LA_LD + k0 + LA_SB + 1;
#pragma unroll 1
    for (int q1 = q0; q1 < n_a; q1 += 4 * kQs) {
        la_t acc[4];
        bool on[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int q = q1 + u * kQs;
            on[u] = !is_a || q <= p;
            acc[u] = on[u] ? dst[q] : (la_t)0;
        }
#pragma unroll
        for (int g = 0; g < LA_SB / LA_VEC; ++g) {
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const la_vec v = reinterpret_cast<const la_vec*>(P + (q1 + u * kQs) * LA_PS)[g];
#pragma unroll
                for (int e = 0; e < LA_VEC; ++e) acc[u] -= x[g * LA_VEC + e] * v.v[e];
            }
        }
#pragma unroll
        for (int u = 0; u < 4; ++u)
            if (on[u]) dst[q1 + u * kQs] = acc[u];
    }
}

#if GK_LA_CHOL_LEAF >= 2
// The 64-row path's copies in and out (n > 32, GK_LA_THREADS threads): thread t takes column
// t % 64 of rows t / 64 + LA_RSTEP h, h < LA_SLOTS, so that every index is a shift and every
// offset a constant or one running step, the slots unrolled whole. The generic loops (la_stage
// with 32 slots a thread and its lambdas, the identity loops, the output loops with a division
// and a square root an element) were ~2.9 K instructions a warp run once, cold in the
// instruction cache, 8 warps on 4 schedulers. The values are the same: only copies, the same
// sign product and the same square root.
#define LA_RSTEP (GK_LA_THREADS / GK_LA_MAX_N)
#define LA_SLOTS (GK_LA_MAX_N / LA_RSTEP)

// The lower triangle of A (rows read whole: coalesced) times `sign` into S's, the identity's
// rows past n, and I's rows in S's upper half (row i's column c >= i at S[i][c + 1], as the
// GK_LA_CHOL_LEAF 1 loop put them): every S[r][k] of the 64 x 64 square written once, by one
// unconditional store at a constant offset; the loads predicated, through a running pointer.
__device__ inline void la_stage64(la_t* S, const la_t* src, gk_i64 ld, int n, la_t sign) {
    static_assert(GK_LA_THREADS % GK_LA_MAX_N == 0, "whole rows a step");
    const int r0 = (int)threadIdx.x / GK_LA_MAX_N, k = (int)threadIdx.x % GK_LA_MAX_N;
    const la_t* from = src + r0 * ld + k;
    const gk_i64 step = LA_RSTEP * ld;
    la_t v[LA_SLOTS];
#pragma unroll
    for (int h = 0; h < LA_SLOTS; ++h) {
        const int r = r0 + LA_RSTEP * h;
        v[h] = k <= r && r < n ? *from : (la_t)0;
        from += step;
    }
    la_t* to = S + r0 * LA_LD + k;
#pragma unroll
    for (int h = 0; h < LA_SLOTS; ++h) {
        // A where k <= r < n; else I's row r at column k - 1 above the diagonal (1 where k = r +
        // 1), the identity on and below it in the rows past n (1 where k = r).
        const int r = r0 + LA_RSTEP * h;
        to[h * LA_RSTEP * LA_LD] = k <= r && r < n ? sign * v[h] : (la_t)(k == r || k == r + 1);
    }
    if (threadIdx.x < GK_LA_MAX_N)  // I's column 63: S[i][64]
        S[threadIdx.x * LA_LD + GK_LA_MAX_N] = (la_t)(threadIdx.x == GK_LA_MAX_N - 1);
}

// L into out (lower), the diagonal's square roots taken by the first n threads; -X^T into x_out
// (n x n, contiguous) when x_out is not null. NaN everywhere where the factor failed. S is read
// at constant offsets (every index inside it), the stores predicated, through running pointers.
__device__ inline void la_out64(const la_t* S, la_t* out, gk_i64 out_ld, la_t* x_out, int n,
                                bool failed) {
    const int r0 = (int)threadIdx.x / GK_LA_MAX_N, c = (int)threadIdx.x % GK_LA_MAX_N;
    const la_t nan = la_inf() - la_inf();
    const la_t* from = S + r0 * LA_LD + c;
    la_t* to = out + r0 * out_ld + c;
    const gk_i64 to_step = LA_RSTEP * out_ld;
#pragma unroll
    for (int h = 0; h < LA_SLOTS; ++h) {
        const int i = r0 + LA_RSTEP * h;
        const la_t v = from[h * LA_RSTEP * LA_LD];
        if (i < n && c < n && i != c) *to = failed ? nan : i > c ? v : (la_t)0;
        to += to_step;
    }
    if ((int)threadIdx.x < n)
        out[threadIdx.x * (out_ld + 1)] = failed ? nan : gkm_sqrt(S[threadIdx.x * (LA_LD + 1)]);
    if (x_out == nullptr) return;
    // -X^T: row c of it is -X[i][c], i >= c, at S[c][i + 1]
    const la_t* x = S + r0 * LA_LD + c + 1;
    la_t* x_to = x_out + r0 * n + c;
#pragma unroll
    for (int h = 0; h < LA_SLOTS; ++h) {
        const int row = r0 + LA_RSTEP * h;
        const la_t v = -x[h * LA_RSTEP * LA_LD];
        if (row < n && c < n) *x_to = failed ? nan : c >= row ? v : (la_t)0;
        x_to += LA_RSTEP * n;
    }
}
#endif

GK_KERNEL void gk_chol_small(const gk_linalg_args args) {
    static_assert(GK_LA_MAX_N == 2 * GK_LANES, "a 64 x 64 matrix as 32 + 32");
    static_assert(GK_LA_THREADS >= (LA_W2 + 1) * GK_LANES, "warps 0 and LA_W2");
    __shared__ la_t S[GK_LA_MAX_N * LA_LD];
    __shared__ la_t rinv[GK_LA_MAX_N];
    // la_chol_rows's column broadcasts (la_chol_sweep's: one pair of buffers a warp)
    __shared__ la_vec col_vec[(GK_LA_CHOL_LEAF ? LA_SWARPS : 1) * 2 * GK_LANES / LA_VEC];
#if GK_LA_CHOL_LEAF
    __shared__ la_vec P_vec[GK_LA_MAX_N * LA_PS / LA_VEC];  // la_chol_sweep's panel rows
#endif
    __shared__ int bad;
    la_t* col = col_vec[0].v;
    const int n = args.n, tid = threadIdx.x, warp = tid / GK_LANES, lane = tid % GK_LANES;
    const bool upper = args.upper != 0, two = n > GK_LANES;
    const bool inverse = (args.mode & GK_LA_CHOL_INVERSE) != 0;
    const la_t sign = (args.mode & GK_LA_CHOL_NEGATED) ? (la_t)-1 : (la_t)1;
    const int p = two ? GK_LA_MAX_N : n <= 8 ? 8 : n <= 16 ? 16 : GK_LANES;
    const gk_i64 mat = blockIdx.x, ld = args.ld;
    const la_t* src = reinterpret_cast<const la_t*>(args.a) + mat * args.stride;
    // The lower triangle, rows read whole; at most 32 elements a thread (n <= 32 on one warp, or
    // 64 x 64 on GK_LA_THREADS = 256).
    static_assert(GK_LA_MAX_N * GK_LA_MAX_N <= GK_LANES * GK_LA_THREADS, "32 a thread at most");
#if GK_LA_CHOL_LEAF >= 2
    if (two && !upper) {
        la_stage64(S, src, ld, n, sign);
    } else
#endif
    {
        const auto lower = [&](int r, int k) { return upper ? k >= r : k <= r; };
        la_stage<GK_LANES>(
            n, n, [&](int r, int k) { return lower(r, k) ? sign * src[r * ld + k] : (la_t)0; },
            [&](int r, int k, la_t v) {
                if (lower(r, k)) S[upper ? k * LA_LD + r : r * LA_LD + k] = v;
            });
        for (int e = tid; e < (p - n) * p; e += blockDim.x) {  // the identity's rows past n
            const int i = n + e / p, c = e % p;
            if (c <= i) S[i * LA_LD + c] = (la_t)(i == c);
        }
#if GK_LA_CHOL_LEAF
        if (two)  // I's rows in the upper half: row i's column c >= i at S[i][c + 1]
            for (int e = tid; e < GK_LA_MAX_N * GK_LA_MAX_N; e += blockDim.x) {
                const int i = e / GK_LA_MAX_N, c = e % GK_LA_MAX_N;
                if (c >= i) S[i * LA_LD + c + 1] = (la_t)(i == c);
            }
#endif
    }
    if (tid == 0) bad = 0;
    __syncthreads();
    if (!two) {
        if (warp == 0) {
            if (p == 8)
                la_chol_leaf<8>(S, rinv, &bad, col, inverse);
            else if (p == 16)
                la_chol_leaf<16>(S, rinv, &bad, col, inverse);
            else
                la_chol_leaf<GK_LANES>(S, rinv, &bad, col, inverse);
        }
    } else {
#if GK_LA_CHOL_LEAF
        // 4 steps of 16 columns: the sweep (warps 0..3), then the update (all), S and P handed
        // over by block barriers. Every warp's `fail` is the same; warp 0's is kept.
        bool fail = false;
        la_t* P = P_vec[0].v;
#pragma unroll 1
        for (int k0 = 0; k0 < GK_LA_MAX_N; k0 += LA_SB) {
            la_t a[LA_SB];
            if (warp < LA_SWARPS) la_chol_sweep(S, P, k0, col + warp * 2 * GK_LANES, fail, a);
            __syncthreads();
            la_chol_block(S, k0, a);  // rows no other thread touches until the output
            if (k0 + LA_SB == GK_LA_MAX_N) break;
            la_chol_update(S, P, k0);
            __syncthreads();
        }
        if (tid == 0 && fail) bad = 1;
        (void)rinv;
#else
        if (warp == 0) la_chol_rows<GK_LANES, true>(S, 0, rinv, &bad, col);
        __syncthreads();
        // A22 -= L21 L21^T, the whole square (its upper half is scratch until X22 lands there),
        // each sum in k order.
        for (int e = tid; e < GK_LANES * GK_LANES; e += blockDim.x) {
            const int i = GK_LANES + e / GK_LANES, c = GK_LANES + e % GK_LANES;
            la_t acc = S[i * LA_LD + c];
#pragma unroll 8
            for (int k = 0; k < GK_LANES; ++k) acc -= S[i * LA_LD + k] * S[c * LA_LD + k];
            S[i * LA_LD + c] = acc;
        }
        __syncthreads();
        // Warps 0 and 1: column `lane` of X11 (the same bits in both), then rows 16 w .. 16 w + 15
        // of -L21 X11, into X21's place in S.
        la_t x[GK_LANES];
        if (warp < 2 && inverse) {
#pragma unroll
            for (int i = 0; i < GK_LANES; ++i) x[i] = (la_t)(i == lane);
            la_forward<GK_LANES>(x, S, 0, rinv);
            la_t* dst = S + lane * LA_LD + 1;
            if (warp == 0)
#pragma unroll
                for (int i = 0; i < GK_LANES; ++i)
                    if (i >= lane) dst[i] = x[i];
            const int h = GK_LANES / 2, r0 = h * warp;
#pragma unroll 1
            for (int r = r0; r < r0 + h; ++r) {
                const la_t* l21 = S + (GK_LANES + r) * LA_LD;
                la_t acc = 0;
#pragma unroll
                for (int k = 0; k < GK_LANES; ++k) acc += l21[k] * x[k];
                dst[GK_LANES + r] = -acc;
            }
        }
        if (warp == LA_W2) la_chol_rows<GK_LANES, false>(S, GK_LANES, rinv, &bad, col);
        if (inverse) {
            __syncthreads();
            if (warp == 0) {
#pragma unroll
                for (int r = 0; r < GK_LANES; ++r) x[r] = S[lane * LA_LD + GK_LANES + 1 + r];
                la_forward<GK_LANES>(x, S, GK_LANES, rinv);
                la_t* dst = S + lane * LA_LD + GK_LANES + 1;  // X21[r][lane]
#pragma unroll
                for (int r = 0; r < GK_LANES; ++r) dst[r] = x[r];
            }
            if (warp == LA_W2) la_invert_cols<GK_LANES>(S, GK_LANES, rinv);
        }
#endif
    }
    __syncthreads();
    const bool failed = bad != 0;
    const la_t nan = la_inf() - la_inf();
    la_t* out = reinterpret_cast<la_t*>(args.out) + mat * args.out_stride;
#if GK_LA_CHOL_LEAF >= 2
    if (two && !upper) {
        la_t* x_out = inverse ? reinterpret_cast<la_t*>(args.out2) + mat * n * n : nullptr;
        la_out64(S, out, args.out_ld, x_out, n, failed);
        if (tid == 0) {
            gk_i32* info = reinterpret_cast<gk_i32*>(args.info) + mat;
            *info = failed || ((args.mode & GK_LA_CHOL_MERGE_INFO) && *info);
        }
        return;
    }
#endif
    for (int e = tid; e < n * n; e += blockDim.x) {
        const int i = e / n, c = e - i * n;
        const int lo = upper ? c : i, hi = upper ? i : c;  // L[lo][hi], lo >= hi
        const la_t v = lo >= hi ? S[lo * LA_LD + hi] : (la_t)0;
        out[i * args.out_ld + c] = failed ? nan : lo == hi ? gkm_sqrt(v) : v;
    }
    gk_i32* info = reinterpret_cast<gk_i32*>(args.info) + mat;
    if (tid == 0) *info = failed || ((args.mode & GK_LA_CHOL_MERGE_INFO) && *info);
    if (!inverse) return;
    // -X^T: row c of it is -X[i][c], i >= c, at S[c][i + 1] (NaN too where the factor failed).
    la_t* x_out = reinterpret_cast<la_t*>(args.out2) + mat * n * n;
    for (int e = tid; e < n * n; e += blockDim.x) {
        const int c = e / n, i = e - c * n;
        x_out[e] = failed ? nan : i >= c ? -S[c * LA_LD + i + 1] : (la_t)0;
    }
}

// LU of s in place (unit lower L below the diagonal, U on and above), perm[i]: the source row of
// row i of P A. Returns through `singular` whether a pivot was exactly zero (or NaN).
__device__ void la_lu(la_t* s, int n, int* perm, int* singular, int* swaps) {
    __shared__ int pivot;
    if (threadIdx.x == 0) {
        *singular = 0;
        *swaps = 0;
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x) perm[i] = i;
    __syncthreads();
    for (int j = 0; j < n; ++j) {
        if (threadIdx.x == 0) {  // the first row of largest |value| (a fixed choice on ties)
            int p = j;
            la_t best = la_abs(s[j * LA_LD + j]);
            for (int i = j + 1; i < n; ++i) {
                const la_t v = la_abs(s[i * LA_LD + j]);
                if (v > best) best = v, p = i;
            }
            if (best == (la_t)0) *singular = 1;  // as getrf's info (NaN is not flagged)
            if (p != j) {
                *swaps += 1;
                const int t = perm[j];
                perm[j] = perm[p];
                perm[p] = t;
            }
            pivot = p;
        }
        __syncthreads();
        const int p = pivot;
        if (p != j)
            for (int c = threadIdx.x; c < n; c += blockDim.x) {
                const la_t t = s[j * LA_LD + c];
                s[j * LA_LD + c] = s[p * LA_LD + c];
                s[p * LA_LD + c] = t;
            }
        __syncthreads();
        const la_t d = s[j * LA_LD + j];
        if (d != (la_t)0) {  // a zero pivot leaves its column (LAPACK's getrf goes on too)
            const la_t inv_d = (la_t)1 / d;
            for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) s[i * LA_LD + j] *= inv_d;
            __syncthreads();
            const int m = n - j - 1;
            for (int e = threadIdx.x; e < m * m; e += blockDim.x) {
                const int i = j + 1 + e / m, c = j + 1 + e % m;
                s[i * LA_LD + c] -= s[i * LA_LD + j] * s[j * LA_LD + c];
            }
        }
        __syncthreads();
    }
}

// X = U^-1 L^-1 (P B) for GK_LA_RHS columns at a time held in x (n rows of width w).
__device__ void la_substitute(const la_t* s, la_t* x, int n, int w) {
    for (int i = 0; i < n; ++i) {  // forward: L has a unit diagonal
        const int m = n - i - 1;
        for (int e = threadIdx.x; e < m * w; e += blockDim.x) {
            const int r = i + 1 + e / w, c = e % w;
            x[r * GK_LA_RHS + c] -= s[r * LA_LD + i] * x[i * GK_LA_RHS + c];
        }
        __syncthreads();
    }
    for (int i = n - 1; i >= 0; --i) {
        for (int c = threadIdx.x; c < w; c += blockDim.x) x[i * GK_LA_RHS + c] /= s[i * LA_LD + i];
        __syncthreads();
        for (int e = threadIdx.x; e < i * w; e += blockDim.x) {
            const int r = e / w, c = e % w;
            x[r * GK_LA_RHS + c] -= s[r * LA_LD + i] * x[i * GK_LA_RHS + c];
        }
        __syncthreads();
    }
}

// mode GK_LA_SOLVE: out (n x k) = A^-1 b; GK_LA_INV: out = A^-1 (n x n); GK_LA_DET: out[mat] =
// det A; GK_LA_SLOGDET: out[mat] = sign, out2[mat] = log|det A|. info[mat] = 1 for an exactly
// singular A (solve, inverse).
GK_KERNEL void gk_lu_small(const gk_linalg_args args) {
    __shared__ la_t s[GK_LA_MAX_N * LA_LD];
    __shared__ la_t x[GK_LA_MAX_N * GK_LA_RHS];
    __shared__ int perm[GK_LA_MAX_N];
    __shared__ int singular, swaps;
    const int n = args.n;
    const gk_i64 mat = blockIdx.x;
    const la_t* a = reinterpret_cast<const la_t*>(args.a) + mat * n * n;
    for (int e = threadIdx.x; e < n * n; e += blockDim.x) s[(e / n) * LA_LD + e % n] = a[e];
    __syncthreads();
    la_lu(s, n, perm, &singular, &swaps);
    la_t* out = reinterpret_cast<la_t*>(args.out);
    if (args.mode == GK_LA_DET || args.mode == GK_LA_SLOGDET) {
        if (threadIdx.x != 0) return;
        // Products and log sums in row order: one fixed order.
        la_t sign = (swaps & 1) ? (la_t)-1 : (la_t)1, det = sign, logabs = 0;
        for (int i = 0; i < n; ++i) {
            const la_t d = s[i * LA_LD + i];
            det *= d;
            sign = d<(la_t)0 ? -sign : d>(la_t) 0 ? sign : (la_t)0;
            logabs += gkm_log(la_abs(d));
        }
        if (args.mode == GK_LA_DET) {
            out[mat] = det;
        } else {
            out[mat] = sign;
            reinterpret_cast<la_t*>(args.out2)[mat] = sign == (la_t)0 ? -la_inf() : logabs;
        }
        return;
    }
    const int k = args.k;
    const la_t* b = reinterpret_cast<const la_t*>(args.b) + mat * n * k;
    out += mat * n * k;
    for (int c0 = 0; c0 < k; c0 += GK_LA_RHS) {
        const int w = k - c0 < GK_LA_RHS ? k - c0 : GK_LA_RHS;
        for (int e = threadIdx.x; e < n * w; e += blockDim.x) {
            const int r = e / w, c = e % w, src = perm[r];
            x[r * GK_LA_RHS + c] =
                args.mode == GK_LA_INV ? (la_t)(src == c0 + c) : b[(gk_i64)src * k + c0 + c];
        }
        __syncthreads();
        la_substitute(s, x, n, w);
        for (int e = threadIdx.x; e < n * w; e += blockDim.x) {
            const int r = e / w, c = e % w;
            out[(gk_i64)r * k + c0 + c] = x[r * GK_LA_RHS + c];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) reinterpret_cast<gk_i32*>(args.info)[mat] = singular;
}

// Eigenvalues (ascending, out) and eigenvectors (columns, out2, when mode != 0) of symmetric
// matrices (n <= GK_LA_JACOBI_N) by cyclic two-sided Jacobi with the round-robin order: each
// round rotates n/2 disjoint pairs at once (A <- J^T A J, V <- V J), sweeps until the
// off-diagonal part is below 4 n eps times the whole (Frobenius). Only the lower (upper) triangle
// is read. info[mat] = 1 when GK_LA_SWEEPS sweeps do not converge.
GK_KERNEL void gk_eigh_jacobi(const gk_linalg_args args) {
    __shared__ la_t A[GK_LA_JACOBI_N * (GK_LA_JACOBI_N + 1)];
    __shared__ la_t V[GK_LA_JACOBI_N * (GK_LA_JACOBI_N + 1)];
    __shared__ la_t rot_c[GK_LA_JACOBI_N / 2], rot_s[GK_LA_JACOBI_N / 2];
    __shared__ int order[GK_LA_JACOBI_N];
    __shared__ int more;
    const int ld = GK_LA_JACOBI_N + 1;
    const int n = args.n, m = n + (n & 1), half = m / 2;
    const gk_i64 mat = blockIdx.x;
    const la_t* a = reinterpret_cast<const la_t*>(args.a) + mat * n * n;
    for (int e = threadIdx.x; e < n * n; e += blockDim.x) {
        const int i = e / n, j = e % n;
        if (j <= i) {
            const la_t v = args.upper ? a[j * n + i] : a[i * n + j];
            A[i * ld + j] = v;
            A[j * ld + i] = v;
        }
        V[i * ld + j] = (la_t)(i == j);
    }
    const la_t eps = la_eps();
    __syncthreads();
    for (int sweep = 0; sweep <= GK_LA_SWEEPS; ++sweep) {
        if (threadIdx.x == 0) {  // sums in a fixed order
            la_t off = 0, all = 0;
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) {
                    const la_t v = A[i * ld + j] * A[i * ld + j];
                    all += v;
                    if (i != j) off += v;
                }
            // Rounding leaves each off-diagonal element near eps |A|: stop at 4 n eps.
            const la_t tol = 4 * n * eps;
            more = !(off <= tol * tol * all);  // NaN: never converges (info, as LAPACK)
        }
        __syncthreads();
        if (!more || sweep == GK_LA_SWEEPS) break;
        for (int r = 0; r < m - 1; ++r) {
            for (int k = threadIdx.x; k < half; k += blockDim.x) {
                int p, q;
                la_pair(k, r, m, &p, &q);
                la_t c = 1, s = 0;
                const la_t apq = q < n ? A[p * ld + q] : (la_t)0;
                if (apq != (la_t)0) {
                    const la_t tau = (A[q * ld + q] - A[p * ld + p]) / (2 * apq);
                    const la_t t = (tau >= 0 ? (la_t)1 : (la_t)-1) /
                                   (la_abs(tau) + gkm_sqrt((la_t)1 + tau * tau));
                    c = (la_t)1 / gkm_sqrt((la_t)1 + t * t);
                    s = t * c;
                }
                rot_c[k] = c;
                rot_s[k] = s;
            }
            __syncthreads();
            for (int e = threadIdx.x; e < n * half; e += blockDim.x) {  // columns of A and V
                const int i = e / half, k = e % half;
                int p, q;
                la_pair(k, r, m, &p, &q);
                if (q >= n) continue;
                const la_t c = rot_c[k], s = rot_s[k];
                const la_t ap = A[i * ld + p], aq = A[i * ld + q];
                A[i * ld + p] = c * ap - s * aq;
                A[i * ld + q] = s * ap + c * aq;
                const la_t vp = V[i * ld + p], vq = V[i * ld + q];
                V[i * ld + p] = c * vp - s * vq;
                V[i * ld + q] = s * vp + c * vq;
            }
            __syncthreads();
            for (int e = threadIdx.x; e < n * half; e += blockDim.x) {  // rows of A
                const int j = e / half, k = e % half;
                int p, q;
                la_pair(k, r, m, &p, &q);
                if (q >= n) continue;
                const la_t c = rot_c[k], s = rot_s[k];
                const la_t ap = A[p * ld + j], aq = A[q * ld + j];
                A[p * ld + j] = c * ap - s * aq;
                A[q * ld + j] = s * ap + c * aq;
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == 0) {  // ascending eigenvalues, ties in index order
        for (int i = 0; i < n; ++i) order[i] = i;
        for (int i = 1; i < n; ++i) {
            const int o = order[i];
            int j = i;
            for (; j > 0 && A[order[j - 1] * ld + order[j - 1]] > A[o * ld + o]; --j)
                order[j] = order[j - 1];
            order[j] = o;
        }
        reinterpret_cast<gk_i32*>(args.info)[mat] = more;
    }
    __syncthreads();
    la_t* w = reinterpret_cast<la_t*>(args.out) + mat * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) w[i] = A[order[i] * ld + order[i]];
    if (args.mode) {
        la_t* vec = reinterpret_cast<la_t*>(args.out2) + mat * n * n;
        for (int e = threadIdx.x; e < n * n; e += blockDim.x)
            vec[e] = V[(e / n) * ld + order[e % n]];
    }
}
