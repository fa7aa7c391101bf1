// One-sided (Hestenes) Jacobi for decompositions' svd and eigh: the k rows of x (len elements
// each, k <= len) are made mutually orthogonal by plane rotations, and the same rotations are
// applied to the rows of r (k x k; the identity at first, so that r ends as the product of the
// rotations). A pair (p, q) rotates when |x_p . x_q| > tol ||x_p|| ||x_q||, by
// t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2)), zeta = (||x_q||^2 - ||x_p||^2) / (2 x_p . x_q)
// (LAPACK's gesvj), which makes the two rows orthogonal. A row of norm at most `negligible`
// (the front end's eps ||x||_F per matrix) is set to zero when its pair is examined, and rows
// of zero norm are not rotated: a zero singular value's row is noise of that size, which
// rotations only cancel to eps of itself, again and again (never converging where the rows
// span a subspace exactly, as with repeated columns; slowly, past GK_LA_SWEEPS, otherwise).
//
// gk_svj: a block per pair of row blocks of rows / 2 rows (grid (blocks / 2, matrices); round
// `round` of a round robin over `blocks` blocks, so that a launch's pairs are disjoint and the
// blocks - 1 rounds of a sweep meet every pair of blocks once) holds the pair's rows of x in
// shared memory and sweeps over every pair of them once (a round robin again, rows / 2 pairs at
// once, a few warps per pair; after a sweep's first round, which meets each block's own pairs,
// only the pairs across the two blocks), the rotations accumulated in J (rows x rows); then writes
// the rows back and the pair's rows of r become J times them. With `whole` (k <= rows: one pair
// holds every row) it sweeps until a sweep rotates nothing, at most GK_LA_SWEEPS (else info = 1),
// and writes its results with the rows ordered by descending norm: the norms, x's rows divided by
// them, and r (written, not read) = J's rows, the rotations of the identity.
// Every sum has a fixed order: the same bits on every run.
//
// Defines: GK_T (float or double).
#include "args.cuh"
#include "linalg.cuh"
#include "warp.cuh"

#define GK_SVJ_WARPS (GK_SVJ_THREADS / GK_LANES)

// The sum over the warp, the same bits in every lane (each step adds two equal halves' sums).
__device__ inline la_t svj_warp_sum(la_t v) {
#pragma unroll
    for (int h = GK_LANES / 2; h > 0; h /= 2) v += gk_shfl_xor(v, h);
    return v;
}

// The rotation's tangent for the pair's squared norms (pp, qq) and product pq.
__device__ inline la_t svj_tangent(la_t pp, la_t qq, la_t pq) {
    const la_t zeta = (qq - pp) / (2 * pq);
    const la_t az = la_abs(zeta);
    // Past 1 / eps, zeta^2 may overflow while t = 1 / (2 zeta) to working precision.
    const la_t t =
        az > (la_t)1 / la_eps() ? (la_t)0.5 / az : (la_t)1 / (az + gkm_sqrt(1 + az * az));
    return zeta < (la_t)0 ? -t : t;
}

// f(i, c) for every element of a rows x cols array, the block's threads on consecutive elements
// (the row and column followed as the index steps, without a division per element).
template <class F>
__device__ inline void svj_each(int rows, int cols, F f) {
    const int step_i = blockDim.x / cols, step_c = blockDim.x % cols;
    int i = threadIdx.x / cols, c = threadIdx.x % cols;
    while (i < rows) {
        f(i, c);
        i += step_i, c += step_c;
        if (c >= cols) c -= cols, ++i;
    }
}

// a comes before b in descending order: NaN first (then the front end raises), ties by index,
// so that the ranks are a permutation whatever the values.
__device__ inline bool svj_before(la_t a, int i, la_t b, int j) {
    const bool na = a != a, nb = b != b;
    if (na != nb) return na;
    return (na || a == b) ? i < j : a > b;
}

// The whole sweep's results, rows ordered by descending norm: x's rows divided by their norms
// (zero rows stay zero), r = J's rows (the rotations of the identity), and the norms.
// norm_s and rank_s: shared memory for k values each.
__device__ inline void svj_sorted_out(const la_t* xs, const la_t* js, int rows, int len, int k,
                                      la_t* x, la_t* r, la_t* norms, la_t* norm_s, int* rank_s) {
    const int lane = threadIdx.x % GK_LANES, warps = blockDim.x / GK_LANES;
    for (int i = threadIdx.x / GK_LANES; i < k; i += warps) {
        la_t ss = 0;
        for (int c = lane; c < len; c += GK_LANES) ss += xs[i * len + c] * xs[i * len + c];
        ss = svj_warp_sum(ss);
        if (lane == 0) norm_s[i] = gkm_sqrt(ss);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
        int rank = 0;
        for (int j = 0; j < k; ++j) rank += svj_before(norm_s[j], j, norm_s[i], i);
        rank_s[i] = rank;
        norms[rank] = norm_s[i];
    }
    __syncthreads();
    svj_each(k, len, [&](int i, int c) {
        const la_t s = norm_s[i];
        x[(gk_i64)rank_s[i] * len + c] = s > (la_t)0 ? xs[i * len + c] / s : (la_t)0;
    });
    svj_each(k, k, [&](int i, int c) { r[(gk_i64)rank_s[i] * k + c] = js[i * rows + c]; });
}

GK_KERNEL void __launch_bounds__(GK_SVJ_THREADS) gk_svj(const gk_svj_args args) {
    __shared__ la_t part[GK_SVJ_WARPS][3];  // each warp's share of its pair's three sums
    __shared__ int rotated, any;
    __shared__ la_t norm_s[GK_SVJ_ROWS];  // whole: the rows' norms and ranks at the end
    __shared__ int rank_s[GK_SVJ_ROWS];
    const int rows = args.rows, half = rows / 2, len = args.len, k = args.k;
    const int tid = threadIdx.x, lane = tid % GK_LANES, warp = tid / GK_LANES;
    // blockDim = half * groups warps: `groups` warps per pair, each over every groups-th 32 of
    // the row's elements.
    const int groups = blockDim.x / GK_LANES / half, pair = warp / groups, g = warp % groups;
    const la_t tol = (la_t)args.tol;
    la_t* xs = la_smem();        // rows x len
    la_t* js = xs + rows * len;  // rows x rows
    const gk_i64 mat = blockIdx.y;
    la_t* x = reinterpret_cast<la_t*>(args.x) + mat * k * len;
    la_t* r = reinterpret_cast<la_t*>(args.r) + mat * k * k;
    const la_t negl = reinterpret_cast<const la_t*>(args.negligible)[mat];
    int b0, b1;
    la_pair(blockIdx.x, args.round, args.blocks, &b0, &b1);
    // The pair's row i is row SVJ_ROW(i) of x: block b0's first half rows, then b1's.
    const int first0 = b0 * half, first1 = b1 * half - half;
#define SVJ_ROW(i) ((i) < half ? first0 + (i) : first1 + (i))
    svj_each(rows, len, [&](int i, int c) {
        const int row = SVJ_ROW(i);
        xs[i * len + c] = row < k ? x[(gk_i64)row * len + c] : (la_t)0;
    });
    svj_each(rows, rows, [&](int i, int c) { js[i * rows + c] = (la_t)(i == c); });
    // This thread's elements of a row (c0, c0 + step, ...), counted once: loops over a count
    // known before the sweeps need no division for their trip count each round.
    const int step = GK_LANES * groups, c0 = lane + GK_LANES * g;
    const int n_len = c0 < len ? (len - c0 + step - 1) / step : 0;
    const int n_rows = c0 < rows ? (rows - c0 + step - 1) / step : 0;
    // A sweep's first launch meets every pair of its rows; the later ones only the pairs across
    // their two blocks (half rounds of half pairs): each block's own pairs met once a sweep.
    const bool across = !args.whole && args.round > 0;
    const int inner_rounds = across ? half : rows - 1;
    if (tid == 0) any = 0;
    int sweep = 0;
    for (;;) {
        if (tid == 0) rotated = 0;
        __syncthreads();
        for (int round = 0; round < inner_rounds; ++round) {
            int p = pair, q = pair + round;  // across: row `pair` of b0 with a row of b1
            if (across)
                q = half + (q >= half ? q - half : q);
            else
                la_pair(pair, round, rows, &p, &q);
            const bool live = SVJ_ROW(p) < k && SVJ_ROW(q) < k;  // the same in every lane
            la_t* xp = xs + p * len;
            la_t* xq = xs + q * len;
            la_t sums[3];
            if (live) {
                la_t pp = 0, qq = 0, pq = 0;
#pragma unroll 4
                for (int e = 0, c = c0; e < n_len; ++e, c += step) {
                    const la_t u = xp[c], w = xq[c];
                    pp += u * u;
                    qq += w * w;
                    pq += u * w;
                }
                pp = svj_warp_sum(pp);
                qq = svj_warp_sum(qq);
                pq = svj_warp_sum(pq);
                if (groups > 1 && lane == 0)
                    part[warp][0] = pp, part[warp][1] = qq, part[warp][2] = pq;
                sums[0] = pp, sums[1] = qq, sums[2] = pq;
            }
            if (groups > 1) {  // the pair's warps' shares added in warp order
                __syncthreads();
                if (live) {
                    sums[0] = sums[1] = sums[2] = 0;
                    for (int h = pair * groups; h < (pair + 1) * groups; ++h)
                        sums[0] += part[h][0], sums[1] += part[h][1], sums[2] += part[h][2];
                }
            }
            if (live) {
                const la_t pp = sums[0], qq = sums[1], pq = sums[2];
                const la_t np = gkm_sqrt(pp), nq = gkm_sqrt(qq);
                // A row whose squares underflow (pp == 0) is left as it is: its norm is zero.
                const bool zp = pp > (la_t)0 && np <= negl, zq = qq > (la_t)0 && nq <= negl;
                if (zp || zq) {
                    for (int e = 0, c = c0; e < n_len; ++e, c += step) {
                        if (zp) xp[c] = (la_t)0;
                        if (zq) xq[c] = (la_t)0;
                    }
                    if (c0 == 0) rotated = any = 1;  // the pair's first lane
                } else if (np > negl && nq > negl && la_abs(pq) > tol * np * nq) {
                    // NaN compares false: such a pair is left, and the front end raises.
                    const la_t t = svj_tangent(pp, qq, pq);
                    const la_t cs = (la_t)1 / gkm_sqrt(1 + t * t), sn = cs * t;
#pragma unroll 4
                    for (int e = 0, c = c0; e < n_len; ++e, c += step) {
                        const la_t u = xp[c], w = xq[c];
                        xp[c] = cs * u - sn * w;
                        xq[c] = sn * u + cs * w;
                    }
                    for (int e = 0, c = c0; e < n_rows; ++e, c += step) {
                        const la_t u = js[p * rows + c], w = js[q * rows + c];
                        js[p * rows + c] = cs * u - sn * w;
                        js[q * rows + c] = sn * u + cs * w;
                    }
                    if (c0 == 0) rotated = any = 1;  // the pair's first lane
                }
            }
            __syncthreads();
        }
        const bool again = rotated != 0;
        ++sweep;
        __syncthreads();  // `rotated` read before the next sweep clears it
        if (!args.whole || !again || sweep == GK_LA_SWEEPS) {
            if (args.whole && tid == 0) reinterpret_cast<gk_i32*>(args.info)[mat] = again;
            break;
        }
    }
    if (args.whole) {
        la_t* norms = reinterpret_cast<la_t*>(args.norms) + mat * k;
        svj_sorted_out(xs, js, rows, len, k, x, r, norms, norm_s, rank_s);
        return;
    }
    if (!any) return;  // nothing moved: x and r stay
    if (tid == 0) reinterpret_cast<gk_i32*>(args.flag)[mat] = 1;
    svj_each(rows, len, [&](int i, int c) {
        const int row = SVJ_ROW(i);
        if (row < k) x[(gk_i64)row * len + c] = xs[i * len + c];
    });
    __syncthreads();  // xs free: it takes the pair's rows of r (k <= len)
    svj_each(rows, k, [&](int i, int c) {
        const int row = SVJ_ROW(i);
        xs[i * len + c] = row < k ? r[(gk_i64)row * k + c] : (la_t)0;
    });
    __syncthreads();
    svj_each(rows, k, [&](int i, int c) {
        const int row = SVJ_ROW(i);
        if (row >= k) return;
        la_t acc = 0;
        for (int l = 0; l < rows; ++l) acc += js[i * rows + l] * xs[l * len + c];
        r[(gk_i64)row * k + c] = acc;
    });
#undef SVJ_ROW
}
