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
        const la_t alpha = pj[j], sigma = sums[j];
        la_t tau = 0, beta = alpha, scale = 0;  // x = 0: H = I (larfg)
        if (sigma != (la_t)0) {
            const la_t norm = gkm_sqrt(alpha * alpha + sigma);
            beta = alpha >= (la_t)0 ? -norm : norm;
            tau = (beta - alpha) / beta;
            scale = (la_t)1 / (alpha - beta);
        }
        if (tid < nb) dots[tid] = pj[tid] + sums[tid] * scale;
        __syncthreads();  // every thread has read row j before its owner updates it
        for (int r = j + tid; r < m; r += GK_QR_THREADS) {
            const qr_row_ref p = qr_row(s, w, r, srows, w_rows);
            const la_t vr = r == j ? (la_t)1 : p[j] * scale;
            const la_t f = tau * vr;
#pragma unroll
            for (int c = 0; c < GK_QR_NB; ++c)
                if (c > j && c < nb) p[c] -= f * dots[c];
            p[j] = r == j ? beta : vr;
        }
        if (tid < j) {  // T[i][j] = -tau sum_{l=i}^{j-1} T[i][l] (V^T v_j)_l, in l order
            la_t acc_t = 0;
            for (int l = tid; l < j; ++l) acc_t += ts[tid * QR_LD + l] * dots[l];
            ts[tid * QR_LD + j] = -tau * acc_t;
        } else if (tid == j) {
            ts[j * QR_LD + j] = tau;
        }
        __syncthreads();
    }
    la_t* r_out = reinterpret_cast<la_t*>(args.r) + mat * nb * nb;
    la_t* t_out = reinterpret_cast<la_t*>(args.t) + mat * nb * nb;
    for (int e = tid; e < nb * nb; e += GK_QR_THREADS) {
        const int i = e / nb, c = e % nb;
        r_out[e] = c >= i ? s[i * QR_LD + c] : (la_t)0;
        t_out[e] = c >= i ? -ts[i * QR_LD + c] : (la_t)0;
    }
    for (gk_i64 e = tid; e < (gk_i64)m * nb; e += GK_QR_THREADS) {
        const int r = (int)(e / nb), c = (int)(e % nb);
        v[e] = r < c ? (la_t)0 : r == c ? (la_t)1 : qr_row(s, w, r, srows, w_rows)[c];
    }
}
