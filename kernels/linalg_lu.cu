// The blocked LU with partial pivoting (n > GK_LA_MAX_N; LAPACK getrf's structure), the kernels
// between the products the front end runs through gpukit's matmul (decompositions.py):
// gk_lu_panel factors the first nb columns of a stack of trailing matrices T in place, one launch
// per column; gk_lu_trinv inverts a panel's diagonal block (the unit-lower L11, negated, or U11);
// gk_lu_swap applies a panel's row interchanges to right-hand sides; gk_lu_det multiplies U's
// diagonal. Every reduction has a fixed shape (no float atomics): the same bits on every run.
//
// gk_lu_panel_coop factors a whole panel in one cooperative launch (a grid-wide barrier per
// column) where every block's rows fit in its shared memory.
//
// Defines: GK_T (float or double).
#include "args.cuh"
#include "cluster.cuh"
#include "linalg.cuh"
#include "warp.cuh"

#define LU_LD (GK_LU_NB + 1)  // padded row: a column walk does not hit one bank
// Elements of a panel step's update per thread: a block's rows times the panel's columns.
#define LU_UPDATE (GK_LU_ROWS * GK_LU_NB / GK_LU_THREADS)
#define LU_SWAP 8  // columns of the pivot swap per thread and round trip
static_assert(LU_UPDATE * GK_LU_THREADS == GK_LU_ROWS * GK_LU_NB, "whole update per thread");

// Whether candidate (v, i) beats (bv, bi): a larger |value|, or as large at an earlier row (row
// -1: no candidate; NaN never wins). A total order, so any reduction tree picks the same row:
// the first row of largest magnitude.
__device__ inline bool lu_better(la_t v, int i, la_t bv, int bi) {
    if (i < 0 || v != v) return false;
    if (bi < 0) return true;
    return v > bv || (v == bv && i < bi);
}

// The block's best (v, i) over its threads' candidates, in sv[0], si[0].
__device__ inline void lu_block_best(la_t* sv, int* si, la_t v, int i) {
    sv[threadIdx.x] = v;
    si[threadIdx.x] = i;
    __syncthreads();
    for (int half = GK_LU_THREADS / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) {
            const int o = threadIdx.x + half;
            if (lu_better(sv[o], si[o], sv[threadIdx.x], si[threadIdx.x])) {
                sv[threadIdx.x] = sv[o];
                si[threadIdx.x] = si[o];
            }
        }
        __syncthreads();
    }
}

// Step `col` of the factorization of T's first nb columns (grid: (blocks of GK_LU_ROWS rows,
// matrices)). First the multipliers of column col - 1 (divided by its pivot) and its rank-1
// update of columns col..nb-1, each block over its rows; then each block's best pivot candidate
// in column col. The last block to finish picks the pivot among the blocks' candidates, records
// it (piv, diag, info) and swaps the two rows across all of T's columns, so that the next
// launch finds the pivot row in place. A zero pivot leaves its column (LAPACK's getrf goes on).
GK_KERNEL void gk_lu_panel(const gk_lu_args args) {
    __shared__ la_t sv[GK_LU_THREADS];
    __shared__ int si[GK_LU_THREADS];
    __shared__ la_t prow[GK_LU_NB], lrow[GK_LU_ROWS];  // the pivot row, the block's multipliers
    __shared__ int last;
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.y;
    const gk_i64 ld = args.ld;
    const int j = args.col, nb = args.nb, m = args.m;
    la_t* t = reinterpret_cast<la_t*>(args.a) + mat * args.stride;
    const int r0 = (int)blockIdx.x * GK_LU_ROWS;
    const int r1 = r0 + GK_LU_ROWS < m ? r0 + GK_LU_ROWS : m;
    if (j > 0) {
        const int p = j - 1;
        const la_t d = t[p * ld + p];
        const int lo = r0 > j ? r0 : j;
        if (d != (la_t)0) {
            const la_t inv_d = (la_t)1 / d;
            for (int r = lo + threadIdx.x; r < r1; r += blockDim.x) {
                const la_t l = t[r * ld + p] * inv_d;
                t[r * ld + p] = l;
                lrow[r - r0] = l;
            }
            for (int c = j + threadIdx.x; c < nb; c += blockDim.x) prow[c] = t[p * ld + c];
            __syncthreads();
            // The update of rows lo..r1-1, columns j..nb-1: every load issued before any store
            // (a store between them would keep the next load waiting: a round trip each).
            const int w = nb - j, total = (r1 - lo) * w;
            la_t v[LU_UPDATE];
#pragma unroll
            for (int u = 0; u < LU_UPDATE; ++u) {
                const int e = threadIdx.x + u * GK_LU_THREADS;
                if (e < total) v[u] = t[(lo + e / w) * ld + j + e % w];
            }
#pragma unroll
            for (int u = 0; u < LU_UPDATE; ++u) {
                const int e = threadIdx.x + u * GK_LU_THREADS;
                if (e < total) {
                    const int r = lo + e / w, c = j + e % w;
                    t[r * ld + c] = v[u] - lrow[r - r0] * prow[c];
                }
            }
        }
        __syncthreads();
    }
    if (j == nb) return;
    __threadfence();  // this thread's updates before the ticket: the last block reads them
    la_t bv = 0;
    int bi = -1;
    for (int r = (r0 > j ? r0 : j) + threadIdx.x; r < r1; r += blockDim.x) {
        const la_t v = la_abs(t[r * ld + j]);
        if (lu_better(v, r, bv, bi)) bv = v, bi = r;
    }
    lu_block_best(sv, si, bv, bi);
    const gk_i64 slot = (gk_i64)blockIdx.y * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0) {
        reinterpret_cast<volatile la_t*>(args.out)[slot] = sv[0];
        reinterpret_cast<volatile int*>(args.out2)[slot] = si[0];
        __threadfence();
        unsigned* counter = reinterpret_cast<unsigned*>(args.counter) + mat;
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    // The last block: the blocks' candidates, in a fixed tree.
    const volatile la_t* pv = reinterpret_cast<const volatile la_t*>(args.out) + slot - blockIdx.x;
    const volatile int* pi = reinterpret_cast<const volatile int*>(args.out2) + slot - blockIdx.x;
    bv = 0;
    bi = -1;
    for (int b = threadIdx.x; b < (int)gridDim.x; b += blockDim.x)
        if (lu_better(pv[b], pi[b], bv, bi)) bv = pv[b], bi = pi[b];
    lu_block_best(sv, si, bv, bi);
    const int p = si[0] < 0 ? j : si[0];  // no candidate (all NaN): no swap, as getf2 keeps j
    // Plain loads: the fence after the ticket orders them after every block's writes (the rows
    // were read in this launch only by the blocks that own them); volatile ones would wait for
    // each other.
    if (threadIdx.x == 0) {
        const gk_i64 at = mat * args.n + args.k + j;
        reinterpret_cast<gk_i32*>(args.piv)[at] = args.k + p;
        reinterpret_cast<la_t*>(args.diag)[at] = t[p * ld + j];
        if (si[0] >= 0 && sv[0] == (la_t)0) reinterpret_cast<gk_i32*>(args.info)[mat] = 1;
        *reinterpret_cast<volatile unsigned*>(reinterpret_cast<unsigned*>(args.counter) + mat) = 0;
    }
    __syncthreads();  // diag read before the swap
    if (p == j) return;
    for (int c0 = threadIdx.x; c0 < m; c0 += LU_SWAP * GK_LU_THREADS) {
        la_t x[LU_SWAP], y[LU_SWAP];
#pragma unroll
        for (int u = 0; u < LU_SWAP; ++u) {
            const int c = c0 + u * GK_LU_THREADS;
            if (c < m) x[u] = t[j * ld + c], y[u] = t[p * ld + c];
        }
#pragma unroll
        for (int u = 0; u < LU_SWAP; ++u) {
            const int c = c0 + u * GK_LU_THREADS;
            if (c < m) t[j * ld + c] = y[u], t[p * ld + c] = x[u];
        }
    }
}

// --- the panel in one cooperative launch ---------------------------------------------------------

// Every block of the launch (gridDim.x of them per matrix, all resident: a cooperative launch)
// waits here until all have arrived; what each wrote before is visible to all after (loads of it
// through lu_load, past L1). `count`: zero between barriers (the last to arrive sets it back);
// `gen`: bumped once per barrier, any value to start with.
#ifdef GK_HOST_EMULATION
__device__ inline void lu_grid_sync(unsigned*, unsigned*, unsigned) { gk_emu_grid_sync(); }
#else
__device__ inline void lu_grid_sync(unsigned* count, unsigned* gen, unsigned blocks) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned* vgen = gen;
        const unsigned g = *vgen;  // before arriving: the last to arrive bumps it after
        __threadfence();           // the block's writes (ordered by the barrier above) first
        if (atomicAdd(count, 1u) == blocks - 1) {
            atomicExch(count, 0u);
            __threadfence();
            atomicAdd(gen, 1u);
        } else {
            while (*vgen == g) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}
#endif

template <typename T>
__device__ inline T lu_load(const T* p) {
#ifdef GK_HIP
    return *reinterpret_cast<const volatile T*>(p);
#else
    return __ldcg(p);  // L2: another block wrote it in this launch
#endif
}

// The warp's best (v, i) (lu_better's order), in every lane: a butterfly (every lane reaches the
// same best: the order is total).
__device__ inline void lu_warp_best(la_t& v, int& i) {
    for (int o = 16; o > 0; o /= 2) {
        const la_t ov = gk_shfl_xor(v, o);
        const int oi = gk_shfl_xor(i, o);
        if (lu_better(ov, oi, v, i)) v = ov, i = oi;
    }
}

// The block's best (v, i) (lu_better's order) in every thread: a warp butterfly (every lane
// reaches the same best: the order is total), then the warps' bests in warp order. wv, wi:
// GK_LU_THREADS / 32 slots, not to be written again before the block's next barrier.
__device__ inline void lu_block_best_all(la_t& v, int& i, la_t* wv, int* wi) {
    lu_warp_best(v, i);
    if (threadIdx.x % 32 == 0) wv[threadIdx.x / 32] = v, wi[threadIdx.x / 32] = i;
    __syncthreads();
    v = wv[0];
    i = wi[0];
    for (int w = 1; w < GK_LU_THREADS / 32; ++w)
        if (lu_better(wv[w], wi[w], v, i)) v = wv[w], i = wi[w];
}

// The block's rows r0 .. r0 + rows - 1 of the panel (nb columns of t, ld apart) to and from its
// copy s in shared memory (LU_LD apart).
__device__ inline void lu_rows_in(la_t* s, const la_t* t, int r0, int rows, int nb, gk_i64 ld) {
    for (int e = (int)threadIdx.x; e < rows * nb; e += GK_LU_THREADS) {
        const int i = e / nb, c = e % nb;
        s[i * LU_LD + c] = t[(r0 + i) * ld + c];
    }
}

__device__ inline void lu_rows_out(la_t* t, const la_t* s, int r0, int rows, int nb, gk_i64 ld) {
    for (int e = (int)threadIdx.x; e < rows * nb; e += GK_LU_THREADS) {
        const int i = e / nb, c = e % nb;
        t[(r0 + i) * ld + c] = s[i * LU_LD + c];
    }
}

// The block's candidate (bv, bi) for column j's pivot among its rows at or below j, in every
// thread (lu_block_best_all's wv, wi).
__device__ inline void lu_rows_best(const la_t* s, int j, int r0, int rows, la_t* wv, int* wi,
                                    la_t& bv, int& bi) {
    bv = 0;
    bi = -1;
    for (int i = (j > r0 ? j - r0 : 0) + (int)threadIdx.x; i < rows; i += GK_LU_THREADS) {
        const la_t v = la_abs(s[i * LU_LD + j]);
        if (lu_better(v, r0 + i, bv, bi)) bv = v, bi = r0 + i;
    }
    lu_block_best_all(bv, bi, wv, wi);
}

// Rows j and p interchanged where the block holds them: u, the pivot row's values; rj, row j's.
__device__ inline void lu_rows_interchange(la_t* s, const la_t* u, const la_t* rj, int j, int p,
                                           int r0, int rows, int nb) {
    if (p == j) return;
    if (j >= r0 && j < r0 + rows)
        for (int c = (int)threadIdx.x; c < nb; c += GK_LU_THREADS) s[(j - r0) * LU_LD + c] = u[c];
    if (p >= r0 && p < r0 + rows)
        for (int c = (int)threadIdx.x; c < nb; c += GK_LU_THREADS) s[(p - r0) * LU_LD + c] = rj[c];
}

// Column j of the block's rows below row j times 1 / d; returns the first of those rows (local).
__device__ inline int lu_rows_scale(la_t* s, int j, int r0, int rows, la_t d) {
    const la_t inv_d = (la_t)1 / d;
    const int lo = j + 1 > r0 ? j + 1 - r0 : 0;
    for (int i = lo + (int)threadIdx.x; i < rows; i += GK_LU_THREADS) s[i * LU_LD + j] *= inv_d;
    __syncthreads();
    return lo;
}

// The factorization of T's first nb columns (as gk_lu_panel's nb + 1 launches) in one
// cooperative launch, grid (blocks, matrices): block b holds rows b r .. b r + r - 1 (args.r rows;
// the last block fewer) of the panel in dynamic shared memory ((r GK_LU_NB + 1) + GK_LU_COOP_SPARE
// elements). Per column j: each block's best candidate (lu_better: the first row of largest
// magnitude) and that row's nb values go to a slot of `out` (per matrix 2 x (blocks + 1) slots of
// GK_LU_NB + 1 elements, double-buffered by column: a block can be one column ahead of another,
// never two), its row to `out2` (per matrix 2 x blocks ints, then the barrier's generation word),
// row j's owner also publishes row j; a grid barrier; then every block reduces the candidates in
// the same order to the same pivot row p, the owners of rows j and p interchange them in shared
// memory, and every block scales its rows' column j by 1 / pivot and updates its rows' columns
// j + 1 .. nb - 1 (gk_lu_panel's arithmetic). piv, diag and info as gk_lu_panel records them; a
// zero pivot leaves its column. The interchanges are applied to T's columns nb.. afterwards
// (gk_lu_swap).
GK_KERNEL void gk_lu_panel_coop(const gk_lu_args args) {
    const int rows_per = args.r, nb = args.nb, m = args.m, blocks = (int)gridDim.x;
    const int b = (int)blockIdx.x, tid = (int)threadIdx.x, r0 = b * rows_per;
    const int rows = m - r0 < rows_per ? m - r0 : rows_per;
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.y;
    const gk_i64 ld = args.ld;
    la_t* t = reinterpret_cast<la_t*>(args.a) + mat * args.stride;
    la_t* s = reinterpret_cast<la_t*>(gk_shared_dynamic());  // rows x LU_LD
    la_t* u = s + rows_per * LU_LD;                          // the pivot row: row j's new values
    la_t* rj = u + GK_LU_NB;                                 // row j's values before
    la_t* wv = rj + GK_LU_NB;                                // 2 x 8 warps' bests
    int* wi = reinterpret_cast<int*>(wv + 16);
    const int slot = GK_LU_NB + 1;
    la_t* cand = reinterpret_cast<la_t*>(args.out) + mat * 2 * (blocks + 1) * slot;
    int* crow = reinterpret_cast<int*>(args.out2) + mat * (2 * blocks + 2);
    unsigned* gen = reinterpret_cast<unsigned*>(crow + 2 * blocks);
    unsigned* count = reinterpret_cast<unsigned*>(args.counter) + mat;
    lu_rows_in(s, t, r0, rows, nb, ld);
    __syncthreads();
    for (int j = 0; j < nb; ++j) {
        la_t* slots = cand + (j & 1) * (blocks + 1) * slot;
        int* srow = crow + (j & 1) * blocks;
        la_t bv;
        int bi;
        lu_rows_best(s, j, r0, rows, wv, wi, bv, bi);
        if (bi >= 0)
            for (int c = tid; c < nb; c += GK_LU_THREADS)
                slots[b * slot + c] = s[(bi - r0) * LU_LD + c];
        if (tid == 0) {
            slots[b * slot + GK_LU_NB] = bv;
            srow[b] = bi;
        }
        if (j >= r0 && j < r0 + rows)
            for (int c = tid; c < nb; c += GK_LU_THREADS)
                slots[blocks * slot + c] = s[(j - r0) * LU_LD + c];
        lu_grid_sync(count, gen, blocks);
        // The pivot: the blocks' candidates in a fixed order, the same in every block.
        la_t pv = 0;
        int p = -1;
        for (int q = tid; q < blocks; q += GK_LU_THREADS) {
            const int qi = lu_load(srow + q);
            const la_t qv = lu_load(slots + q * slot + GK_LU_NB);
            if (lu_better(qv, qi, pv, p)) pv = qv, p = qi;
        }
        for (int c = tid; c < nb; c += GK_LU_THREADS) rj[c] = lu_load(slots + blocks * slot + c);
        lu_block_best_all(pv, p, wv + 8, wi + 8);
        const bool found = p >= 0;
        if (!found) p = j;  // no candidate (all NaN): no interchange, as getf2 keeps j
        const la_t* prow = slots + (p / rows_per) * slot;  // p's owner published it
        for (int c = tid; c < nb; c += GK_LU_THREADS) u[c] = p == j ? rj[c] : lu_load(prow + c);
        __syncthreads();
        if (b == 0 && tid == 0) {
            const gk_i64 at = mat * args.n + args.k + j;
            reinterpret_cast<gk_i32*>(args.piv)[at] = args.k + p;
            reinterpret_cast<la_t*>(args.diag)[at] = u[j];
            if (found && pv == (la_t)0) reinterpret_cast<gk_i32*>(args.info)[mat] = 1;
        }
        lu_rows_interchange(s, u, rj, j, p, r0, rows, nb);
        __syncthreads();
        const la_t d = u[j];
        if (d == (la_t)0) continue;  // a zero pivot leaves its column (uniform in the block)
        const int lo = lu_rows_scale(s, j, r0, rows, d), w = nb - j - 1;
        for (int e = tid; e < (rows - lo) * w; e += GK_LU_THREADS) {
            const int i = lo + e / w, c = j + 1 + e % w;
            s[i * LU_LD + c] = s[i * LU_LD + c] - s[i * LU_LD + j] * u[c];
        }
        __syncthreads();
    }
    lu_rows_out(t, s, r0, rows, nb, ld);
}

// --- the panel in one thread-block cluster (sm_90+) ----------------------------------------------

#if GK_HAS_CLUSTERS

// gk_lu_panel_coop's factorization (the same arithmetic, pivots and records: the same bits) in
// one cluster of GK_LU_CLUSTER blocks per matrix, grid (GK_LU_CLUSTER, matrices): block b holds
// rows b r .. b r + r - 1 (args.r rows; the last blocks fewer, or none) of the panel in dynamic
// shared memory, then GK_LU_CLUSTER_SPARE elements: `slot` (2 x LU_LD: the block's best
// candidate's row and its |value| at GK_LU_NB, by column parity), `jslot` (2 x LU_LD: row j, by
// its owner), `all` (GK_LU_CLUSTER x LU_LD: every block's slot, gathered), `rj` (row j,
// gathered), the warps' bests, then ints: the slots' rows (2), the gathered rows
// (GK_LU_CLUSTER), the warps' rows. Per column: the block's candidate to its slot (row j's owner
// also row j), one cluster barrier, then every block loads every block's slot and row j through
// distributed shared memory, each warp reduces the candidates (lu_better's total order: the
// same pivot everywhere) and the pivot row is at hand, no second round trip. The slots alternate
// by column parity: a block writes column j + 2's slot after barrier j + 1, which every block
// passes only after loading column j's. A last barrier keeps every block's shared memory until
// all have loaded.
GK_KERNEL void __cluster_dims__(GK_LU_CLUSTER, 1, 1) gk_lu_panel_cluster(const gk_lu_args args) {
    const int rows_per = args.r, nb = args.nb, m = args.m;
    const int b = (int)blockIdx.x, tid = (int)threadIdx.x, r0 = b * rows_per;
    const int rows = m - r0 < rows_per ? (m - r0 > 0 ? m - r0 : 0) : rows_per;
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.y;
    const gk_i64 ld = args.ld;
    la_t* t = reinterpret_cast<la_t*>(args.a) + mat * args.stride;
    la_t* s = reinterpret_cast<la_t*>(gk_shared_dynamic());  // rows x LU_LD
    la_t* slot = s + rows_per * LU_LD;
    la_t* jslot = slot + 2 * LU_LD;
    la_t* all = jslot + 2 * LU_LD;
    la_t* rj = all + GK_LU_CLUSTER * LU_LD;
    la_t* wv = rj + LU_LD;
    la_t* rdiag = wv + 16;  // U's diagonal, then the pivot rows
    int* rpiv = reinterpret_cast<int*>(rdiag + GK_LU_NB);
    int* sidx = rpiv + GK_LU_NB;
    int* aidx = sidx + 2;
    int* wi = aidx + GK_LU_CLUSTER;
    bool zero = false;  // thread 0: a zero pivot met
    lu_rows_in(s, t, r0, rows, nb, ld);
    __syncthreads();
    for (int j = 0; j < nb; ++j) {
        const int par = j & 1;
        la_t bv;
        int bi;
        lu_rows_best(s, j, r0, rows, wv, wi, bv, bi);
        la_t* mine = slot + par * LU_LD;
        if (bi >= 0)
            for (int c = tid; c < nb; c += GK_LU_THREADS) mine[c] = s[(bi - r0) * LU_LD + c];
        if (tid == 0) {
            mine[GK_LU_NB] = bv;
            sidx[par] = bi;
        }
        const int jowner = j / rows_per;
        if (b == jowner)
            for (int c = tid; c < nb; c += GK_LU_THREADS)
                jslot[par * LU_LD + c] = s[(j - r0) * LU_LD + c];
        gk_cluster_sync();
        // Every block's slot and row j: all loads first (independent), then the stores.
        constexpr int kGather = (GK_LU_CLUSTER * LU_LD + GK_LU_THREADS - 1) / GK_LU_THREADS;
        la_t g[kGather];
#pragma unroll
        for (int x = 0; x < kGather; ++x) {
            const int e = tid + x * GK_LU_THREADS, q = e / LU_LD, c = e % LU_LD;
            if (e < GK_LU_CLUSTER * LU_LD && (c < nb || c == GK_LU_NB))
                g[x] = gk_dsmem(mine + c, (unsigned)q);
        }
        const int gi = tid < GK_LU_CLUSTER ? gk_dsmem(sidx + par, (unsigned)tid) : -1;
        const la_t gj = tid < nb ? gk_dsmem(jslot + par * LU_LD + tid, (unsigned)jowner) : (la_t)0;
#pragma unroll
        for (int x = 0; x < kGather; ++x) {
            const int e = tid + x * GK_LU_THREADS, c = e % LU_LD;
            if (e < GK_LU_CLUSTER * LU_LD && (c < nb || c == GK_LU_NB)) all[e] = g[x];
        }
        if (tid < GK_LU_CLUSTER) aidx[tid] = gi;
        if (tid < nb) rj[tid] = gj;
        __syncthreads();
        // The pivot: every warp reduces the cluster's candidates to the same (total order).
        const int lane = tid % 32;
        la_t pv = lane < GK_LU_CLUSTER ? all[lane * LU_LD + GK_LU_NB] : (la_t)0;
        int p = lane < GK_LU_CLUSTER ? aidx[lane] : -1;
        lu_warp_best(pv, p);
        const bool found = p >= 0;
        if (!found) p = j;  // no candidate (all NaN): no interchange, as getf2 keeps j
        // The pivot row: row p's owner's candidate (p won), or row j itself.
        const la_t* u = p == j ? rj : all + (p / rows_per) * LU_LD;
        if (tid == 0) {  // written to global memory after the loop (no store for the barrier's
                         // release to wait on)
            rpiv[j] = args.k + p;
            rdiag[j] = u[j];
            zero |= found && pv == (la_t)0;
        }
        lu_rows_interchange(s, u, rj, j, p, r0, rows, nb);
        __syncthreads();
        const la_t d = u[j];
        if (d == (la_t)0) continue;  // a zero pivot leaves its column (uniform in the cluster)
        const int lo = lu_rows_scale(s, j, r0, rows, d);
        // The update, a lane per column (u[c] in a register) and a warp per row in turn: no
        // index division (a block holds 8x the rows of the cooperative kernel's).
        // Four rows' loads before their stores (a store would keep the next loads waiting).
        constexpr int kStep = GK_LU_THREADS / 32;
        for (int c = j + 1 + lane; c - lane < nb; c += 32) {
            if (c >= nb) continue;
            const la_t uc = u[c];
            int i = lo + tid / 32;
            for (; i + 3 * kStep < rows; i += 4 * kStep) {
                la_t x[4], l[4];
#pragma unroll
                for (int h = 0; h < 4; ++h) {
                    x[h] = s[(i + h * kStep) * LU_LD + c];
                    l[h] = s[(i + h * kStep) * LU_LD + j];
                }
#pragma unroll
                for (int h = 0; h < 4; ++h) s[(i + h * kStep) * LU_LD + c] = x[h] - l[h] * uc;
            }
            for (; i < rows; i += kStep)
                s[i * LU_LD + c] = s[i * LU_LD + c] - s[i * LU_LD + j] * uc;
        }
        __syncthreads();
    }
    lu_rows_out(t, s, r0, rows, nb, ld);
    if (b == 0) {  // thread 0's records, behind the loop's block barriers
        const gk_i64 at = mat * args.n + args.k;
        for (int c = tid; c < nb; c += GK_LU_THREADS) {
            reinterpret_cast<gk_i32*>(args.piv)[at + c] = rpiv[c];
            reinterpret_cast<la_t*>(args.diag)[at + c] = rdiag[c];
        }
        if (tid == 0 && zero) reinterpret_cast<gk_i32*>(args.info)[mat] = 1;
    }
    gk_cluster_sync();  // no block leaves while another may still load its slots
}

// A pivot candidate as integers that order as lu_better does, so that a warp reduces them with
// integer maxima, no branches: `key` is |value|'s bits + 2 for a number (the bits of
// non-negative floats order as their values; -0 counts as +0), 1 for the NaN at place j (the
// pivot where no row has a number: getf2 keeps row j), 0 for none; `first` is ~place (the
// earlier place wins a tie), 0 for none.
struct lu_cand {
    gk_u64 key;
    gk_u32 first;
};
static_assert(sizeof(lu_cand) == 16, "a slot's 16-byte header");

__device__ inline lu_cand lu_candidate(la_t v, int place, bool row, bool nan_pivot) {
    gk_u64 key = 0;
    if (row && v == v)
        key = (sizeof(la_t) == 4 ? (gk_u64)(gk_f32_bits((float)v) & 0x7fffffffu)
                                 : gk_f64_bits((double)v) & 0x7fffffffffffffffull) +
              2;
    else if (row && nan_pivot)
        key = 1;
    return lu_cand{key, key ? ~(gk_u32)place : 0u};
}

// The warp's best candidate, in every lane: the largest key, then the largest `first` among the
// lanes that hold it, by the warp's integer max reductions (REDUX) on CUDA; by a butterfly of
// shuffles in the host emulator.
__device__ inline lu_cand lu_warp_best(lu_cand c) {
#ifdef GK_HIP
    for (int o = 16; o > 0; o /= 2) {
        const lu_cand x{gk_shfl_xor(c.key, o), gk_shfl_xor(c.first, o)};
        // bitwise, not short-circuit: && and || here compile to branches
        const bool take = (x.key > c.key) | ((x.key == c.key) & (x.first > c.first));
        c.key = take ? x.key : c.key;
        c.first = take ? x.first : c.first;
    }
    return c;
#else
    const unsigned all = 0xffffffffu;
    gk_u64 key = __reduce_max_sync(all, (unsigned)c.key);  // float keys fit 32 bits
    if (sizeof(la_t) == 8) {
        key = (gk_u64)__reduce_max_sync(all, (unsigned)(c.key >> 32)) << 32;
        key |= __reduce_max_sync(all, c.key >> 32 == key >> 32 ? (unsigned)c.key : 0u);
    }
    return lu_cand{key, __reduce_max_sync(all, c.key == key ? c.first : 0u)};
#endif
}

// The place of a candidate (-1: none).
__device__ inline int lu_cand_place(const lu_cand& c) { return c.key ? (int)~c.first : -1; }

// Whether the candidate is a number equal to zero (a zero pivot).
__device__ inline bool lu_cand_zero(const lu_cand& c) { return c.key == 2; }

// gk_lu_panel_cluster's factorization (the same arithmetic, pivots and records: the same bits)
// with each of the panel's rows in one thread's registers, where the rows fit one a thread
// (blocks of up to GK_LU_REGS_THREADS_F32 / _F64, GK_LU_CLUSTER of them per matrix): the search
// reads a register, the update is a thread's row in registers against the pivot row's broadcast
// loads, no shared-memory sweep over the rows. Columns go in groups of kGroup, unrolled, so that
// every register index is a constant (r[jj] is column j0 + jj) while the loop over groups stays a
// loop; after a group the row moves kGroup registers left. A row never moves in memory: `pos` is
// its place in the interchanged panel (the row at place j takes place p when row p is the pivot);
// the multipliers and, for the pivot row, U's row go to the thread's row of `stage`, written to T
// at `pos` after the loop (and to args.out, contiguous, where set). Per column: the candidates
// reduced in each warp (lu_warp_best), one block barrier, the block's best (its row to `slot`),
// one cluster barrier, every block's slot gathered through distributed shared memory, one block
// barrier. Dynamic shared memory: stage (threads x LU_LD), GK_LU_REGS_SPARE elements (the slots,
// the gathered slots, the warps' candidates, U's diagonal, then ints), then an int a thread.
template <int kGroup>
__device__ inline void lu_regs_columns(la_t (&r)[GK_LU_NB], int j0, const gk_lu_args& args,
                                       la_t* stage, la_t* slot, la_t* all, lu_cand* wc, la_t* rdiag,
                                       int* rpiv, bool& active, int& pos, bool& zero) {
    constexpr int kNb = GK_LU_NB, kQ = GK_LU_CLUSTER, kVec = 16 / sizeof(la_t);
    constexpr int kSlot = kNb + kVec, kRowVecs = kNb / kVec;
    constexpr int kLoads = (kQ * kRowVecs + 255) / 256;  // blocks of >= 256 threads
    const int nb = args.nb, threads = (int)blockDim.x, tid = (int)threadIdx.x;
    const int lane = tid % 32, warp = tid / 32;
#pragma unroll
    for (int jj = 0; jj < kGroup; ++jj) {
        const int j = j0 + jj;
        if (j >= nb) break;
        la_t* mine = slot + (j & 1) * kSlot;
        lu_cand c = lu_warp_best(lu_candidate(r[jj], pos, active, pos == j));
        if (lane == 0) wc[warp] = c;
        __syncthreads();
        c = lu_warp_best(lane < threads / 32 ? wc[lane] : lu_cand{0, 0});
        const int ci = lu_cand_place(c);
        if (active && pos == ci) {  // the block's best: its row (from column j0) to the slot
#pragma unroll
            for (int k = 0; k < kNb; k += kVec) {
                union {
                    gk_vec16<la_t> v;
                    uint4 w;
                } x16;
#pragma unroll
                for (int x = 0; x < kVec; ++x) x16.v.v[x] = r[k + x];
                if (k + kVec > jj) *reinterpret_cast<uint4*>(mine + k) = x16.w;
            }
        }
        if (tid == 0) *reinterpret_cast<lu_cand*>(mine + kNb) = c;
        gk_cluster_sync();
        // Every block's slot, 16 bytes a load (the row's columns j.., and the header): all
        // loads first (independent), then the stores.
        uint4 g[kLoads], h;
#pragma unroll
        for (int x = 0; x < kLoads; ++x) {
            const int e = tid + x * threads, q = e / kRowVecs, v = e % kRowVecs;
            if (e < kQ * kRowVecs && (v + 1) * kVec > jj && v * kVec < nb - j0)
                g[x] = gk_dsmem(reinterpret_cast<const uint4*>(mine) + v, (unsigned)q);
        }
        if (tid < kQ) h = gk_dsmem(reinterpret_cast<const uint4*>(mine + kNb), (unsigned)tid);
#pragma unroll
        for (int x = 0; x < kLoads; ++x) {
            const int e = tid + x * threads, q = e / kRowVecs, v = e % kRowVecs;
            if (e < kQ * kRowVecs && (v + 1) * kVec > jj && v * kVec < nb - j0)
                reinterpret_cast<uint4*>(all + q * kSlot)[v] = g[x];
        }
        if (tid < kQ) *reinterpret_cast<uint4*>(all + tid * kSlot + kNb) = h;
        __syncthreads();
        const lu_cand lane_c =
            lane < kQ ? *reinterpret_cast<const lu_cand*>(all + lane * kSlot + kNb) : lu_cand{0, 0};
        c = lu_warp_best(lane_c);
        const int q =
            __ffs(gk_ballot(lane < kQ && lane_c.key == c.key && lane_c.first == c.first)) - 1;
        const int p = lu_cand_place(c);   // never -1: place j has a row
        const la_t* u = all + q * kSlot;  // the pivot row from column j0 on
        const la_t d = u[jj];
        if (blockIdx.x == 0 && tid == 0) {
            rpiv[j] = args.k + p;
            rdiag[j] = d;
            zero |= lu_cand_zero(c);
        }
        const unsigned won = gk_ballot(active && pos == p);
        if (won) {  // the pivot's warp: U's row into the pivot's row of stage
            la_t* row = stage + (warp * 32 + __ffs(won) - 1) * LU_LD + j0;
            for (int c = jj + lane; c < nb - j0; c += 32) row[c] = u[c];
        }
        if (!active) continue;
        if (pos == p) {  // the pivot row: U's row j from now on
            active = false;
            pos = j;
            continue;
        }
        if (pos == j) pos = p;
        if (d == (la_t)0) {  // a zero pivot leaves its column (uniform in the cluster)
            stage[tid * LU_LD + j] = r[jj];
            continue;
        }
        const la_t l = r[jj] * la_rcp(d);
        stage[tid * LU_LD + j] = l;
        // kAtOnce 16-byte loads of the pivot row at a time (32 floats, 8 doubles): loaded all at
        // once, they would take as many registers as the row (the compiler hoists them) and
        // spill it.
        constexpr int kAtOnce = sizeof(la_t) == 4 ? 8 : 4;
#pragma unroll
        for (int k0 = jj / kVec * kVec; k0 < kNb; k0 += kAtOnce * kVec) {
            gk_vec16<la_t> v[kAtOnce];
#pragma unroll
            for (int h = 0; h < kAtOnce; ++h)
                if (k0 + h * kVec < kNb)
                    v[h] = *reinterpret_cast<const gk_vec16<la_t>*>(u + k0 + h * kVec);
#pragma unroll
            for (int h = 0; h < kAtOnce; ++h)
#pragma unroll
                for (int x = 0; x < kVec; ++x) {
                    const int k = k0 + h * kVec + x;
                    if (k > jj && k < kNb) r[k] = r[k] - l * v[h].v[x];
                }
            asm volatile("" ::: "memory");
        }
    }
}

GK_KERNEL void __cluster_dims__(GK_LU_CLUSTER, 1, 1)
    __launch_bounds__(sizeof(la_t) == 4 ? GK_LU_REGS_THREADS_F32 : GK_LU_REGS_THREADS_F64)
        gk_lu_panel_regs(const gk_lu_args args) {
    constexpr int kNb = GK_LU_NB, kQ = GK_LU_CLUSTER, kVec = 16 / sizeof(la_t), kGroup = 8;
    constexpr int kSlot = kNb + kVec;  // a row, then its candidate (lu_cand: 16 bytes)
    const int nb = args.nb, m = args.m, threads = (int)blockDim.x, tid = (int)threadIdx.x;
    const int r0 = (int)blockIdx.x * threads;
    const int rows = m - r0 < threads ? (m - r0 > 0 ? m - r0 : 0) : threads;
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.y, ld = args.ld;
    la_t* t = reinterpret_cast<la_t*>(args.a) + mat * args.stride;
    la_t* stage = reinterpret_cast<la_t*>(gk_shared_dynamic());  // threads x LU_LD
    la_t* slot = stage + threads * LU_LD;                        // 2 slots: the block's best
    la_t* all = slot + 2 * kSlot;                                // kQ slots: every block's
    lu_cand* wc = reinterpret_cast<lu_cand*>(all + kQ * kSlot);  // 16: the warps' bests
    la_t* rdiag = reinterpret_cast<la_t*>(wc + 16);              // kNb: U's diagonal
    int* rpiv = reinterpret_cast<int*>(rdiag + kNb);             // kNb: the pivots' places
    int* place = rpiv + kNb;                                     // threads: pos at the end
    for (int e = tid; e < rows * nb; e += threads) {
        const int i = e / nb, c = e % nb;
        stage[i * LU_LD + c] = t[(r0 + i) * ld + c];
    }
    __syncthreads();
    la_t r[kNb];
#pragma unroll
    for (int k = 0; k < kNb; ++k) r[k] = k < nb ? stage[tid * LU_LD + k] : (la_t)0;
    bool active = tid < rows;  // a row not yet a pivot
    int pos = r0 + tid;
    bool zero = false;  // block 0's thread 0: a zero pivot met
    for (int j0 = 0; j0 < nb; j0 += kGroup) {
        lu_regs_columns<kGroup>(r, j0, args, stage, slot, all, wc, rdiag, rpiv, active, pos, zero);
#pragma unroll
        for (int k = 0; k + kGroup < kNb; ++k) r[k] = r[k + kGroup];
    }
    gk_cluster_sync();  // no block leaves while another may still load its slots
    place[tid] = pos;
    __syncthreads();
    // args.out (where set): the factored panel again, contiguous (count x m x nb), for the solve
    la_t* panel = args.out ? reinterpret_cast<la_t*>(args.out) + mat * m * nb : nullptr;
    for (int e = tid; e < rows * nb; e += threads) {
        const int i = e / nb, c = e % nb;
        t[(gk_i64)place[i] * ld + c] = stage[i * LU_LD + c];
        if (panel) panel[(gk_i64)place[i] * nb + c] = stage[i * LU_LD + c];
    }
    if (blockIdx.x == 0) {  // thread 0's records, behind the block barrier above
        const gk_i64 at = mat * args.n + args.k;
        for (int c = tid; c < nb; c += threads) {
            reinterpret_cast<gk_i32*>(args.piv)[at + c] = rpiv[c];
            reinterpret_cast<la_t*>(args.diag)[at + c] = rdiag[c];
        }
        if (tid == 0 && zero) reinterpret_cast<gk_i32*>(args.info)[mat] = 1;
    }
}
#endif

// 16 bytes of la_t: the shared-memory loads of gk_lu_trinv's column walk, one broadcast each.
#define LU_VEC (16 / (int)sizeof(la_t))
#define LU_INV_LD (GK_LU_NB + LU_VEC)  // a column of S^T per row, rows 16-byte aligned
struct alignas(16) lu_vec {
    la_t v[LU_VEC];
};

// The inverse of a diagonal block of the panel at the top left of T (nb x nb, one block of
// GK_LU_NB threads per matrix) into out (count x nb x nb): mode 0, minus the inverse of the
// unit-lower L11 (the strictly lower part of the block); mode 1, the inverse of the upper U11,
// as the transpose of the inverse of S = U11^T. Thread q computes column q of X = S^-1 in its
// registers: for each k in order, x_k *= 1 / S_kk, then x_i -= S_ik x_k below it (S's columns read
// from shared memory by all threads at once), with no barrier between columns. Blocks smaller
// than GK_LU_NB are padded with the identity.
GK_KERNEL void gk_lu_trinv(const gk_lu_args args) {
    static_assert(GK_LU_NB % LU_VEC == 0, "S^T's rows in whole 16-byte loads");
    __shared__ lu_vec st_vec[GK_LU_NB * LU_INV_LD / LU_VEC];
    __shared__ la_t rd[GK_LU_NB];  // 1 / S[i][i]
    la_t* const st = st_vec[0].v;  // st[c][i] = S[i][c], i > c
    const int nb = args.nb, q = threadIdx.x;
    const bool upper = args.mode != 0;
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.x;
    const la_t* t = reinterpret_cast<const la_t*>(args.a) + mat * args.stride;
    // Thread q loads column q of T's block, the identity past nb: every load before any store,
    // as la_stage does, but by hand (la_stage's index stepping over 64 elements a thread costs
    // this kernel registers and, in float64, spills).
    la_t v[GK_LU_NB];
#pragma unroll
    for (int a = 0; a < GK_LU_NB; ++a)
        v[a] = a < nb && q < nb ? t[a * args.ld + q] : (la_t)(a == q);
#pragma unroll
    for (int a = 0; a < GK_LU_NB; ++a) {
        if (a == q) rd[q] = v[a];
        if (upper ? q > a : q < a)  // U[a][q] = S[q][a], or L[a][q] = S[a][q]
            st[upper ? a * LU_INV_LD + q : q * LU_INV_LD + a] = v[a];
    }
    rd[q] = upper ? (la_t)1 / rd[q] : (la_t)1;
    __syncthreads();
    la_t x[GK_LU_NB];
#pragma unroll
    for (int i = 0; i < GK_LU_NB; ++i) x[i] = (la_t)(i == q);
#pragma unroll
    for (int k = 0; k < GK_LU_NB; ++k) {
        x[k] *= rd[k];
        const lu_vec* col = reinterpret_cast<const lu_vec*>(st + k * LU_INV_LD);
#pragma unroll
        for (int c = (k + 1) / LU_VEC; c < GK_LU_NB / LU_VEC; ++c) {
            const lu_vec s = col[c];
#pragma unroll
            for (int h = 0; h < LU_VEC; ++h)
                if (c * LU_VEC + h > k) x[c * LU_VEC + h] -= s.v[h] * x[k];
        }
    }
    la_t* out = reinterpret_cast<la_t*>(args.out) + mat * nb * nb;
    if (!upper) {  // -X[i][q] at (i, q): consecutive threads, consecutive columns
#pragma unroll
        for (int i = 0; i < GK_LU_NB; ++i)
            if (i < nb && q < nb) out[i * nb + q] = q <= i ? -x[i] : (la_t)0;
        return;
    }
    __syncthreads();  // U^-1 = X^T: thread q's column is row q, written through st by rows
#pragma unroll
    for (int c = 0; c < GK_LU_NB / LU_VEC; ++c) {
        lu_vec v;
#pragma unroll
        for (int h = 0; h < LU_VEC; ++h) v.v[h] = x[c * LU_VEC + h];
        reinterpret_cast<lu_vec*>(st + q * LU_INV_LD)[c] = v;
    }
    __syncthreads();
    for (int e = q; e < nb * nb; e += GK_LU_NB) out[e] = st[(e / nb) * LU_INV_LD + e % nb];
}

// A panel's interchanges (row i with row sp[i] >= i, in order, rows counted from the panel's
// first) on columns held in shared memory, row stride ldc: xs the panel's rows, outer[i] the
// values of row sp[i] below the panel, loaded at once. prev[i]: the last earlier interchange
// with the same row below (-1: none), whose outer entry then holds that row; final[i]: no later
// one meets it (its outer entry is what the row keeps).
__device__ inline void lu_pivots(const gk_i32* piv, int k, int w, int* sp, int* prev, int* final) {
    for (int i = threadIdx.x; i < w; i += blockDim.x) sp[i] = piv[i] - k;
    __syncthreads();
    for (int i = threadIdx.x; i < w; i += blockDim.x) {
        int q = -1, f = 1;
        for (int h = 0; h < w && sp[i] >= w; ++h)
            if (sp[h] == sp[i]) {
                if (h < i) q = h;
                if (h > i) f = 0;
            }
        prev[i] = q;
        final[i] = f;
    }
    __syncthreads();
}

// Column c's interchanges, one after another in shared memory (one thread).
__device__ inline void lu_interchange(la_t* xs, la_t* outer, const int* sp, const int* prev, int w,
                                      int c, int ldc) {
    for (int i = 0; i < w; ++i) {
        const int p = sp[i];
        const la_t mine = xs[i * ldc + c];
        if (p < w) {
            xs[i * ldc + c] = xs[p * ldc + c];
            xs[p * ldc + c] = mine;
        } else {
            xs[i * ldc + c] = outer[(prev[i] < 0 ? i : prev[i]) * ldc + c];
            outer[i * ldc + c] = mine;
        }
    }
}

// The interchanges of the panel at row k (nb of them) applied to X, the rows k.. of a stack of
// right-hand sides (m x r, row stride ld), GK_LU_SWAP_COLS columns per block through shared memory.
GK_KERNEL void gk_lu_swap(const gk_lu_args args) {
    __shared__ la_t xs[GK_LU_NB * GK_LU_SWAP_COLS];
    __shared__ la_t outer[GK_LU_NB * GK_LU_SWAP_COLS];
    __shared__ int sp[GK_LU_NB], prev[GK_LU_NB], final[GK_LU_NB];
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.y;
    const int w = args.nb, c0 = (int)blockIdx.x * GK_LU_SWAP_COLS;
    const int cols = args.r - c0 < GK_LU_SWAP_COLS ? args.r - c0 : GK_LU_SWAP_COLS;
    const gk_i64 ld = args.ld;
    la_t* x = reinterpret_cast<la_t*>(args.a) + mat * args.stride + c0;
    lu_pivots(reinterpret_cast<const gk_i32*>(args.piv) + mat * args.n + args.k, args.k, w, sp,
              prev, final);
    for (int e = threadIdx.x; e < w * GK_LU_SWAP_COLS; e += blockDim.x) {
        const int i = e / GK_LU_SWAP_COLS, c = e % GK_LU_SWAP_COLS;
        if (c >= cols) continue;
        xs[e] = x[i * ld + c];
        if (sp[i] >= w) outer[e] = x[sp[i] * ld + c];
    }
    __syncthreads();
    if ((int)threadIdx.x < cols)
        lu_interchange(xs, outer, sp, prev, w, threadIdx.x, GK_LU_SWAP_COLS);
    __syncthreads();
    for (int e = threadIdx.x; e < w * GK_LU_SWAP_COLS; e += blockDim.x) {
        const int i = e / GK_LU_SWAP_COLS, c = e % GK_LU_SWAP_COLS;
        if (c >= cols) continue;
        x[i * ld + c] = xs[e];
        if (sp[i] >= w && final[i]) x[sp[i] * ld + c] = outer[e];
    }
}

// The substitutions of a solve with r <= GK_LU_RHS right-hand sides, in place on X (count x n x
// r, contiguous; `a`), panel by panel. The panel's factors are contiguous stacks: its L11\\U11
// over L21 (count x (n-k) x nb), -inv(L11) (count x nb x nb) and -U12 (count x nb x (n-k-nb)).
// Each kernel is a short chain (its launch is a link of the solve's serial chain of 4 per
// panel): a row of a factor is read by a warp at once, its lanes along the row, and summed by a
// fixed butterfly; the chunks of gk_lu_bwd_sums are added in chunk order: the same bits on
// every run.
static_assert(GK_LU_NB % GK_LANES == 0, "a panel's row in whole loads of the lanes");

// The warp's sum over q < n (n <= kPer GK_LANES) of row[q] v[q * ld + c] for each c < r, taken
// by lane 0 to done(c, sum): row[q] loaded once, coalesced, by lane q % GK_LANES.
template <int kPer, class Done>
__device__ inline void lu_row_dots(const la_t* row, int n, const la_t* v, int ld, int r,
                                   Done done) {
    const int lane = threadIdx.x % GK_LANES;
    la_t a[kPer];
#pragma unroll
    for (int h = 0; h < kPer; ++h) a[h] = lane + GK_LANES * h < n ? row[lane + GK_LANES * h] : 0;
    for (int c = 0; c < r; ++c) {
        la_t p = 0;
#pragma unroll
        for (int h = 0; h < kPer; ++h)
            if (lane + GK_LANES * h < n) p += a[h] * v[(lane + GK_LANES * h) * ld + c];
        p = gk_lanes_sum(p);
        if (lane == 0) done(c, p);
    }
}
#define LU_ROW_LOADS (GK_LU_NB / GK_LANES)  // a panel's row: loads a lane

// Forward, the panel's rows (a block per matrix): its interchanges on rows k.. (in shared
// memory, lu_interchange), then y = inv(L11) x1 = -(-inv(L11)) x1 over rows k..k+nb, a warp a
// row of -inv(L11).
GK_KERNEL void gk_lu_fwd_diag(const gk_lu_args args) {
    __shared__ la_t xs[GK_LU_NB * GK_LU_RHS];
    __shared__ la_t outer[GK_LU_NB * GK_LU_RHS];
    __shared__ int sp[GK_LU_NB], prev[GK_LU_NB], final[GK_LU_NB];
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.x;
    const int w = args.nb, r = args.r;
    la_t* x = reinterpret_cast<la_t*>(args.a) + mat * args.stride + (gk_i64)args.k * r;
    const la_t* nl = reinterpret_cast<const la_t*>(args.out) + mat * w * w;
    lu_pivots(reinterpret_cast<const gk_i32*>(args.piv) + mat * args.n + args.k, args.k, w, sp,
              prev, final);
    for (int e = threadIdx.x; e < w * r; e += blockDim.x) {
        const int i = e / r, c = e % r;
        xs[i * GK_LU_RHS + c] = x[e];
        if (sp[i] >= w) outer[i * GK_LU_RHS + c] = x[(gk_i64)sp[i] * r + c];
    }
    __syncthreads();
    for (int c = threadIdx.x; c < r; c += blockDim.x)
        lu_interchange(xs, outer, sp, prev, w, c, GK_LU_RHS);
    __syncthreads();
    for (int e = threadIdx.x; e < w * r; e += blockDim.x) {
        const int i = e / r, c = e % r;
        if (sp[i] >= w && final[i]) x[(gk_i64)sp[i] * r + c] = outer[i * GK_LU_RHS + c];
    }
    const int warps = (int)blockDim.x / GK_LANES;
    for (int i = (int)threadIdx.x / GK_LANES; i < w; i += warps)
        lu_row_dots<LU_ROW_LOADS>(nl + i * w, i + 1, xs, GK_LU_RHS, r,
                                  [&](int c, la_t s) { x[i * r + c] = -s; });
}

// Forward, the rows below the panel (a warp a row): x2 -= L21 y.
GK_KERNEL void gk_lu_fwd_update(const gk_lu_args args) {
    __shared__ la_t ys[GK_LU_NB * GK_LU_RHS];
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.y;
    const int w = args.nb, r = args.r, m = args.m;  // m: rows k.. of X
    la_t* x = reinterpret_cast<la_t*>(args.a) + mat * args.stride + (gk_i64)args.k * r;
    const la_t* l = reinterpret_cast<const la_t*>(args.out) + mat * m * w;
    for (int e = threadIdx.x; e < w * r; e += blockDim.x) ys[e / r * GK_LU_RHS + e % r] = x[e];
    __syncthreads();
    const gk_i64 i = w + (gk_i64)blockIdx.x * (blockDim.x / GK_LANES) + threadIdx.x / GK_LANES;
    if (i >= m) return;
    lu_row_dots<LU_ROW_LOADS>(l + i * w, w, ys, GK_LU_RHS, r,
                              [&](int c, la_t s) { x[i * r + c] -= s; });
}

// Backward, the first half: (-U12) x2 (x2 the rows below the panel, already solved) in partial
// sums over GK_LU_BWD_COLS columns of -U12 per chunk, a warp a row of -U12 (grid: row groups x
// column chunks, matrices), the chunk of x2 staged in shared memory; stored in args.work
// (matrices x chunks x nb x r).
GK_KERNEL void gk_lu_bwd_sums(const gk_lu_args args) {
    __shared__ la_t xs[GK_LU_BWD_COLS * GK_LU_RHS];
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.y;
    const int w = args.nb, r = args.r, m2 = args.m - args.nb, chunks = args.col;
    const int warps = (int)blockDim.x / GK_LANES, chunk = (int)blockIdx.x % chunks;
    const int i = (int)blockIdx.x / chunks * warps + (int)threadIdx.x / GK_LANES;
    const int q0 = chunk * GK_LU_BWD_COLS;
    const int cols = m2 - q0 < GK_LU_BWD_COLS ? m2 - q0 : GK_LU_BWD_COLS;
    const la_t* x2 =
        reinterpret_cast<const la_t*>(args.a) + mat * args.stride + (gk_i64)(args.k + w + q0) * r;
    for (int e = threadIdx.x; e < cols * r; e += blockDim.x) xs[e] = x2[e];  // rows r apart
    __syncthreads();
    if (i >= w) return;
    const la_t* row = reinterpret_cast<const la_t*>(args.out) + mat * w * m2 + (gk_i64)i * m2 + q0;
    la_t* part = reinterpret_cast<la_t*>(args.work) +
                 ((gk_i64)blockIdx.y * chunks + chunk) * w * r + (gk_i64)i * r;
    lu_row_dots<GK_LU_BWD_COLS / GK_LANES>(row, cols, xs, r, r,
                                           [&](int c, la_t s) { part[c] = s; });
}

// Backward, a panel's rows (a block per matrix): t = y + (-U12) x2 (gk_lu_bwd_sums' args.col
// partials added in chunk order), then U11 x1 = t by substitution from the last row up, a warp
// per right-hand side holding t in its lanes (rows lane and lane + GK_LANES), U11 staged from the
// panel's L11\U11 (args.out2), each x_j = t_j (1 / U_jj).
GK_KERNEL void gk_lu_bwd(const gk_lu_args args) {
    __shared__ la_t us[GK_LU_NB][GK_LU_NB + 1];
    __shared__ la_t ts[GK_LU_NB * GK_LU_RHS];
    __shared__ la_t rd[GK_LU_NB];
    const gk_i64 mat = (gk_i64)args.mat0 + blockIdx.x;
    const int w = args.nb, r = args.r, chunks = args.col;
    const int lane = (int)threadIdx.x % GK_LANES, group = (int)threadIdx.x / GK_LANES;
    const int groups = (int)blockDim.x / GK_LANES, hi = lane + GK_LANES;
    la_t* x = reinterpret_cast<la_t*>(args.a) + mat * args.stride + (gk_i64)args.k * r;
    const la_t* u = reinterpret_cast<const la_t*>(args.out2) + mat * (gk_i64)args.m * w;
    const la_t* part =
        reinterpret_cast<const la_t*>(args.work) + (gk_i64)blockIdx.x * chunks * w * r;
    la_stage<GK_LU_NB * GK_LU_NB / GK_LU_THREADS>(
        w, w, [&](int i, int j) { return u[i * w + j]; },
        [&](int i, int j, la_t v) {
            us[i][j] = v;
            if (i == j) rd[i] = la_rcp(v);
        });
    for (int o = threadIdx.x; o < w * r; o += blockDim.x) {
        la_t t = x[o];
        for (int h = 0; h < chunks; ++h) t += part[(gk_i64)h * w * r + o];
        ts[o / r * GK_LU_RHS + o % r] = t;
    }
    __syncthreads();
    for (int c = group; c < r; c += groups) {
        la_t t0 = lane < w ? ts[lane * GK_LU_RHS + c] : (la_t)0;
        la_t t1 = hi < w ? ts[hi * GK_LU_RHS + c] : (la_t)0;
        for (int j = w - 1; j >= 0; --j) {
            const la_t xj = gk_shfl(j < GK_LANES ? t0 : t1, j % GK_LANES) * rd[j];
            if (lane < j) t0 -= us[lane][j] * xj;
            if (lane == j) t0 = xj;
            if (hi < j) t1 -= us[hi][j] * xj;
            if (hi == j) t1 = xj;
        }
        if (lane < w) x[lane * r + c] = t0;
        if (hi < w) x[hi * r + c] = t1;
    }
}

// det (GK_LA_DET) or sign and log|det| (GK_LA_SLOGDET) of each matrix from U's diagonal and the
// pivots' parity, a thread per matrix, in row order (gk_lu_small's formula).
GK_KERNEL void gk_lu_det(const gk_lu_args args) {
    const gk_i64 mat = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (mat >= args.m) return;
    const la_t* d = reinterpret_cast<const la_t*>(args.diag) + mat * args.n;
    const gk_i32* piv = reinterpret_cast<const gk_i32*>(args.piv) + mat * args.n;
    int swaps = 0;
    for (int i = 0; i < args.n; ++i) swaps += piv[i] != i;
    la_t sign = (swaps & 1) ? (la_t)-1 : (la_t)1, det = sign, logabs = 0;
    for (int i = 0; i < args.n; ++i) {
        det *= d[i];
        sign = d[i]<(la_t)0 ? -sign : d[i]>(la_t) 0 ? sign : (la_t)0;
        logabs += gkm_log(la_abs(d[i]));
    }
    la_t* out = reinterpret_cast<la_t*>(args.out);
    if (args.mode == GK_LA_DET) {
        out[mat] = det;
    } else {
        out[mat] = sign;
        reinterpret_cast<la_t*>(args.out2)[mat] = sign == (la_t)0 ? -gk_inf((la_t)0) : logabs;
    }
}
