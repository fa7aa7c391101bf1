// Small dense factorizations, one block per matrix of a stack (n <= GK_LA_MAX_N): Cholesky
// (gk_chol_small, rows of any stride, the matrix in registers, with -L^-T, the negated transpose
// of the lower factor's inverse, when asked: what the blocked Cholesky multiplies its panel by,
// the diagonal blocks read in place) and LU with partial
// pivoting, the matrix in shared memory, followed by what is asked of it (gk_lu_small: solve,
// inverse, determinant, log-determinant). Every sum is taken in one fixed order (no atomics):
// the same bits on every run.
//
// Defines: GK_T (float or double). Blocks of GK_LA_THREADS threads (geometry.cuh).
#include "args.cuh"
#include "linalg.cuh"

#define LA_LD (GK_LA_MAX_N + 1)  // padded row: a column walk does not hit one bank

__device__ inline la_t la_inf() { return gk_inf((la_t)0); }

// gk_chol_small: the matrix in registers (linalg.cuh's 16 x 16 layout). Each column of the
// factor is published in a shared row of its own, so one barrier per column suffices (no
// buffer is ever rewritten while it is read).

// a[r][q] where q is only known at run time (registers are indexed by constants).
__device__ inline la_t la_pick(const la_t (&a)[LA_PER], int q) {
    la_t v = a[0];
#pragma unroll
    for (int k = 1; k < LA_PER; ++k)
        if (q == k) v = a[k];
    return v;
}

GK_KERNEL void gk_chol_small(const gk_linalg_args args) {
    static_assert(GK_LA_THREADS == LA_SIDE * LA_SIDE, "a 16 x 16 thread layout");
    // col[j][i]: column j of A after the updates of columns < j (unscaled; L = col * inv[j]).
    __shared__ la_t col[GK_LA_MAX_N][LA_LD];
    __shared__ la_t root[GK_LA_MAX_N], inv[GK_LA_MAX_N];
    __shared__ la_t xrow[2][GK_LA_MAX_N];
    const int n = args.n, tx = threadIdx.x % LA_SIDE, ty = threadIdx.x / LA_SIDE;
    const bool upper = args.upper != 0;
    const gk_i64 mat = blockIdx.x;
    const la_t* src = reinterpret_cast<const la_t*>(args.a) + mat * args.stride;
    const gk_i64 ld = args.ld;
    la_t a[LA_PER][LA_PER];
#pragma unroll
    for (int r = 0; r < LA_PER; ++r)
#pragma unroll
        for (int q = 0; q < LA_PER; ++q) {
            const int i = ty + LA_SIDE * r, c = tx + LA_SIDE * q;
            a[r][q] = (la_t)0;
            if (i < n && c <= i) a[r][q] = upper ? src[c * ld + i] : src[i * ld + c];
        }
    bool failed = false;
    for (int j = 0; j < n; ++j) {
        if (tx == j % LA_SIDE)
#pragma unroll
            for (int r = 0; r < LA_PER; ++r) {
                const int i = ty + LA_SIDE * r;
                if (i >= j && i < n) col[j][i] = la_pick(a[r], j / LA_SIDE);
            }
        __syncthreads();
        const la_t d = col[j][j];
        if (!(d > (la_t)0)) {  // also NaN; every thread reads the same d
            failed = true;
            break;
        }
        const la_t sq = gkm_sqrt(d), rs = (la_t)1 / sq;
        if (threadIdx.x == 0) root[j] = sq, inv[j] = rs;
#pragma unroll
        for (int r = 0; r < LA_PER; ++r) {
            const int i = ty + LA_SIDE * r;
            if (i <= j || i >= n) continue;
            const la_t li = col[j][i] * rs;
#pragma unroll
            for (int q = 0; q < LA_PER; ++q) {
                const int c = tx + LA_SIDE * q;
                if (c > j && c <= i) a[r][q] -= li * (col[j][c] * rs);
            }
        }
    }
    __syncthreads();
    la_t* out = reinterpret_cast<la_t*>(args.out) + mat * n * n;
#pragma unroll
    for (int r = 0; r < LA_PER; ++r)
#pragma unroll
        for (int q = 0; q < LA_PER; ++q) {
            const int i = ty + LA_SIDE * r, c = tx + LA_SIDE * q;
            if (i >= n || c >= n) continue;
            const int lo = upper ? c : i, hi = upper ? i : c;  // L[lo][hi], lo >= hi
            la_t v = (la_t)0;
            if (failed)
                v = la_inf() - la_inf();
            else if (lo == hi)
                v = root[lo];
            else if (lo > hi)
                v = col[hi][lo] * inv[hi];
            out[i * n + c] = v;
        }
    if (threadIdx.x == 0) reinterpret_cast<gk_i32*>(args.info)[mat] = failed;
    if (!args.mode || failed) return;
    // mode 1: also -X^T, X = L^-1 (lower), into out2, L scaled in place first (col[j][i] = L[i][j])
    // once every thread has written its part of the factor from it.
    __syncthreads();
    for (int e = threadIdx.x; e < n * n; e += blockDim.x) {
        const int j = e / n, i = e % n;
        if (i > j) col[j][i] *= inv[j];
        if (i == j) col[j][j] = root[j];
    }
    __syncthreads();
    la_identity(a);
    la_invert_rows(a, n, xrow, &col[0][0], 1, LA_LD, false);
    la_t* x_out = reinterpret_cast<la_t*>(args.out2) + mat * n * n;
#pragma unroll
    for (int r = 0; r < LA_PER; ++r)
#pragma unroll
        for (int q = 0; q < LA_PER; ++q) {
            const int i = ty + LA_SIDE * r, c = tx + LA_SIDE * q;
            if (i < n && c < n) x_out[c * n + i] = c <= i ? -a[r][q] : (la_t)0;
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
