// Householder QR panels for decompositions._blocked_qr (LAPACK geqrf's structure): gk_qr_panel
// factors the first nb <= GK_QR_NB columns of a stack of trailing matrices, one block of
// GK_QR_THREADS threads per matrix, and writes the panel's reflectors V (unit lower trapezoid),
// R11 and -T of the compact WY form H_1 ... H_nb = I - V T V^T (LAPACK's larft, forward and
// columnwise); the front end applies I - V T^T V^T to the trailing matrix and forms Q through
// gpukit's products. The reflectors are LAPACK's larfg: beta = -sign(alpha) ||x||, so R's
// diagonal has the signs LAPACK (and NumPy) give. Every sum has a fixed order: the same bits on
// every run.
//
// Defines: GK_T (float or double).
#include "args.cuh"
#include "cluster.cuh"
#include "linalg.cuh"
#include "warp.cuh"

#define QR_LD (GK_QR_NB + 1)  // padded row: the warp's 32 rows hit 32 banks
#define QR_WARPS (GK_QR_THREADS / GK_LANES)
static_assert(GK_QR_NB == GK_LANES, "a lane per column of the panel");

// One step of the warp's column sums: lanes with bit H set keep columns H..2H-1 of their
// first 2H partial sums, the others 0..H-1, each adding its partner lane's share of them.
template <int H>
__device__ __forceinline__ void qr_fold(la_t (&acc)[GK_QR_NB], bool upper) {
#pragma unroll
    for (int i = 0; i < H; ++i) {
        const la_t send = upper ? acc[i] : acc[i + H];
        const la_t keep = upper ? acc[i + H] : acc[i];
        acc[i] = keep + gk_shfl_xor(send, H);
    }
}

// The warp's sums of acc[c], lane c ending with column c's (31 shuffles for 32 columns).
__device__ __forceinline__ la_t qr_warp_columns(la_t (&acc)[GK_QR_NB]) {
    const int lane = threadIdx.x % GK_LANES;
    qr_fold<16>(acc, (lane & 16) != 0);
    qr_fold<8>(acc, (lane & 8) != 0);
    qr_fold<4>(acc, (lane & 4) != 0);
    qr_fold<2>(acc, (lane & 2) != 0);
    qr_fold<1>(acc, (lane & 1) != 0);
    return acc[0];
}

// Row r of the panel being factored: in shared memory (the first smem_rows rows) or in w, stored
// by column, so that a warp's lanes, on consecutive rows, touch consecutive words of each column.
struct qr_row_ref {
    la_t* p;
    gk_i64 step;
    __device__ la_t& operator[](int c) const { return p[c * step]; }
};
__device__ inline qr_row_ref qr_row(la_t* s, la_t* w, int r, int smem_rows, int w_rows) {
    if (r < smem_rows) return {s + r * QR_LD, 1};
    return {w + (r - smem_rows), w_rows};
}

// larfg's reflector for column j: alpha = A[j][j], sigma = ||A[j+1:, j]||^2; v = x * scale.
struct qr_reflector {
    la_t tau, beta, scale;
};
__device__ inline qr_reflector qr_make_reflector(la_t alpha, la_t sigma) {
    qr_reflector h = {0, alpha, 0};  // x = 0: H = I (larfg)
    if (sigma != (la_t)0) {
        const la_t norm = gkm_sqrt(alpha * alpha + sigma);
        h.beta = alpha >= (la_t)0 ? -norm : norm;
        h.tau = (h.beta - alpha) / h.beta;
        h.scale = (la_t)1 / (alpha - h.beta);
    }
    return h;
}

// Row p (panel row `diag`: row j itself) under H: its column j becomes v's entry (beta on the
// diagonal), the columns after j lose tau v_r (v^T A[:, c]) = f dots[c].
template <class Row>
__device__ inline void qr_update_row(const Row& p, int j, int nb, bool diag, qr_reflector h,
                                     const la_t* dots) {
    const la_t vr = diag ? (la_t)1 : p[j] * h.scale;
    const la_t f = h.tau * vr;
#pragma unroll
    for (int c = 0; c < GK_QR_NB; ++c)
        if (c > j && c < nb) p[c] -= f * dots[c];
    p[j] = diag ? h.beta : vr;
}

// T's column j (thread i < j: T[i][j] = -tau sum_{l=i}^{j-1} T[i][l] (V^T v_j)_l, in l order).
__device__ inline void qr_t_column(la_t* ts, const la_t* dots, la_t tau, int j, int tid) {
    if (tid < j) {
        la_t acc_t = 0;
        for (int l = tid; l < j; ++l) acc_t += ts[tid * QR_LD + l] * dots[l];
        ts[tid * QR_LD + j] = -tau * acc_t;
    } else if (tid == j) {
        ts[j * QR_LD + j] = tau;
    }
}

// R11 (the first nb rows of s, upper triangle) and -T of matrix `mat`.
__device__ inline void qr_write_rt(const gk_qr_args& args, gk_i64 mat, const la_t* s,
                                   const la_t* ts, int nb, int threads) {
    la_t* r_out = reinterpret_cast<la_t*>(args.r) + mat * nb * nb;
    la_t* t_out = reinterpret_cast<la_t*>(args.t) + mat * nb * nb;
    for (int e = threadIdx.x; e < nb * nb; e += threads) {
        const int i = e / nb, c = e % nb;
        r_out[e] = c >= i ? s[i * QR_LD + c] : (la_t)0;
        t_out[e] = c >= i ? -ts[i * QR_LD + c] : (la_t)0;
    }
}

// Per column j: the sums g_c = x^T A[j+1:, c] for every column c (x = A[j+1:, j]; the columns
// before j hold their reflectors there, so the same sums give V^T v_j), then the reflector
// (tau, beta, v = x / (alpha - beta)), v^T A[j:, c] for every c, the update of the columns after
// j and T's column j = -tau T (V^T v_j).
GK_KERNEL void __launch_bounds__(GK_QR_THREADS) gk_qr_panel(const gk_qr_args args) {
    __shared__ la_t red[QR_WARPS][GK_QR_NB];
    __shared__ la_t sums[GK_QR_NB], dots[GK_QR_NB];
    __shared__ la_t ts[GK_QR_NB * QR_LD];
    la_t* s = la_smem();
    const int m = args.m, nb = args.nb, srows = args.smem_rows;
    const int tid = threadIdx.x, lane = tid % GK_LANES, warp = tid / GK_LANES;
    const gk_i64 mat = blockIdx.x;
    const la_t* a = reinterpret_cast<const la_t*>(args.a) + mat * args.stride;
    la_t* v = reinterpret_cast<la_t*>(args.v) + mat * (gk_i64)m * nb;
    const int w_rows = m > srows ? m - srows : 0;
    la_t* w = reinterpret_cast<la_t*>(args.w) + mat * (gk_i64)w_rows * nb;
    for (gk_i64 e = tid; e < (gk_i64)m * nb; e += GK_QR_THREADS) {
        const int r = (int)(e / nb), c = (int)(e % nb);
        qr_row(s, w, r, srows, w_rows)[c] = a[r * args.ld + c];
    }
    __syncthreads();
    for (int j = 0; j < nb; ++j) {
        la_t acc[GK_QR_NB];
#pragma unroll
        for (int c = 0; c < GK_QR_NB; ++c) acc[c] = 0;
        for (int r = j + 1 + tid; r < m; r += GK_QR_THREADS) {
            const qr_row_ref p = qr_row(s, w, r, srows, w_rows);
            const la_t x = p[j];
#pragma unroll
            for (int c = 0; c < GK_QR_NB; ++c)
                if (c < nb) acc[c] += x * p[c];
        }
        red[warp][lane] = qr_warp_columns(acc);
        __syncthreads();
        if (tid < nb) {  // the warps' sums in warp order
            la_t g = 0;
            for (int q = 0; q < QR_WARPS; ++q) g += red[q][tid];
            sums[tid] = g;
        }
        __syncthreads();
        const la_t* pj = s + j * QR_LD;  // row j < nb <= smem_rows
        const qr_reflector h = qr_make_reflector(pj[j], sums[j]);
        if (tid < nb) dots[tid] = pj[tid] + sums[tid] * h.scale;
        __syncthreads();  // every thread has read row j before its owner updates it
        for (int r = j + tid; r < m; r += GK_QR_THREADS)
            qr_update_row(qr_row(s, w, r, srows, w_rows), j, nb, r == j, h, dots);
        qr_t_column(ts, dots, h.tau, j, tid);
        __syncthreads();
    }
    qr_write_rt(args, mat, s, ts, nb, GK_QR_THREADS);
    for (gk_i64 e = tid; e < (gk_i64)m * nb; e += GK_QR_THREADS) {
        const int r = (int)(e / nb), c = (int)(e % nb);
        v[e] = r < c ? (la_t)0 : r == c ? (la_t)1 : qr_row(s, w, r, srows, w_rows)[c];
    }
}

#if GK_HAS_CLUSTERS
#define QR_CLUSTER_WARPS (GK_QR_CLUSTER_THREADS / GK_LANES)

// gk_qr_panel's factorization in one cluster of GK_QR_CLUSTER blocks per matrix, grid
// (GK_QR_CLUSTER, matrices): block b holds rows b r .. b r + r - 1 (args.rows_per rows, r >= nb,
// so that rows 0 .. nb - 1 are block 0's; the last blocks fewer, or none) in dynamic shared
// memory, then GK_QR_CLUSTER_SPARE elements: `part` (2 x GK_QR_NB: its rows' column sums) and
// `jrow` (2 x GK_QR_NB: block 0's row j), by column parity, then the block's own working arrays
// (all in dynamic shared memory, which the host emulator keeps per block). Per column j: each
// block's sums over its rows below j, one cluster barrier, then every block adds the blocks' sums
// in block order and reads row j from block 0 (distributed shared memory), computes the same
// reflector and updates its rows; block 0 keeps T. A block writes column j + 2's slots after
// barrier j + 1, which every block passes only after loading column j's. Every sum has a fixed
// order (the same bits on every run; not the one-block kernel's bits, whose sums run over its warps
// of all rows).
GK_KERNEL void __cluster_dims__(GK_QR_CLUSTER, 1, 1) __launch_bounds__(GK_QR_CLUSTER_THREADS)
    gk_qr_panel_cluster(const gk_qr_args args) {
    la_t* s = la_smem();
    const int m = args.m, nb = args.nb, b = blockIdx.x;
    const int tid = threadIdx.x, lane = tid % GK_LANES, warp = tid / GK_LANES;
    const int r0 = b * args.rows_per,
              mine = m - r0 < args.rows_per ? (m > r0 ? m - r0 : 0) : args.rows_per;
    la_t* part = s + args.rows_per * QR_LD;
    la_t* jrow = part + 2 * GK_QR_NB;
    la_t* red = jrow + 2 * GK_QR_NB;  // [warp][column]
    la_t* sums = red + QR_CLUSTER_WARPS * GK_QR_NB;
    la_t* dots = sums + GK_QR_NB;
    la_t* pj = dots + GK_QR_NB;
    la_t* ts = pj + GK_QR_NB;
    const gk_i64 mat = blockIdx.y;
    const la_t* a = reinterpret_cast<const la_t*>(args.a) + mat * args.stride;
    la_t* v = reinterpret_cast<la_t*>(args.v) + mat * (gk_i64)m * nb;
    for (int e = tid; e < mine * nb; e += GK_QR_CLUSTER_THREADS) {
        const int i = e / nb, c = e % nb;
        s[i * QR_LD + c] = a[(gk_i64)(r0 + i) * args.ld + c];
    }
    __syncthreads();
    for (int j = 0; j < nb; ++j) {
        const int par = j & 1;
        la_t acc[GK_QR_NB];
#pragma unroll
        for (int c = 0; c < GK_QR_NB; ++c) acc[c] = 0;
        for (int i = (j + 1 > r0 ? j + 1 - r0 : 0) + tid; i < mine; i += GK_QR_CLUSTER_THREADS) {
            const la_t* p = s + i * QR_LD;
            const la_t x = p[j];
#pragma unroll
            for (int c = 0; c < GK_QR_NB; ++c)
                if (c < nb) acc[c] += x * p[c];
        }
        red[warp * GK_QR_NB + lane] = qr_warp_columns(acc);
        __syncthreads();
        if (tid < nb) {  // the block's sums in warp order; block 0 publishes row j
            la_t g = 0;
            for (int q = 0; q < QR_CLUSTER_WARPS; ++q) g += red[q * GK_QR_NB + tid];
            part[par * GK_QR_NB + tid] = g;
            if (b == 0) jrow[par * GK_QR_NB + tid] = s[j * QR_LD + tid];
        }
        gk_cluster_sync();
        if (tid < nb) {  // the blocks' sums in block order
            la_t g = 0;
            for (int q = 0; q < GK_QR_CLUSTER; ++q)
                g += gk_dsmem(part + par * GK_QR_NB + tid, (unsigned)q);
            sums[tid] = g;
            pj[tid] = gk_dsmem(jrow + par * GK_QR_NB + tid, 0u);
        }
        __syncthreads();
        const qr_reflector h = qr_make_reflector(pj[j], sums[j]);
        if (tid < nb) dots[tid] = pj[tid] + sums[tid] * h.scale;
        __syncthreads();
        for (int i = (j > r0 ? j - r0 : 0) + tid; i < mine; i += GK_QR_CLUSTER_THREADS)
            qr_update_row(s + i * QR_LD, j, nb, r0 + i == j, h, dots);
        if (b == 0) qr_t_column(ts, dots, h.tau, j, tid);
        __syncthreads();
    }
    if (b == 0) qr_write_rt(args, mat, s, ts, nb, GK_QR_CLUSTER_THREADS);
    for (int e = tid; e < mine * nb; e += GK_QR_CLUSTER_THREADS) {
        const int i = e / nb, c = e % nb, r = r0 + i;
        v[(gk_i64)r * nb + c] = r < c ? (la_t)0 : r == c ? (la_t)1 : s[i * QR_LD + c];
    }
    gk_cluster_sync();  // no block leaves while another may still load its slots
}
#endif  // GK_HAS_CLUSTERS
