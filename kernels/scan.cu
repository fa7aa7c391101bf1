// Inclusive running sum along one axis (cumsum): a block per row, the row walked in chunks of
// GK_BLOCK elements, each chunk scanned in shared memory (Hillis-Steele) and offset by the carry of
// the chunks before it. Defines: GK_IN_T, GK_ACC_T (float for float16), GK_OUT_T.
#include "args.cuh"
#include "warp.cuh"

typedef GK_ACC_T acc_t;

GK_KERNEL void gk_cumsum(const gk_scan_args a) {
    __shared__ acc_t buf[GK_BLOCK];
    const GK_IN_T* in = reinterpret_cast<const GK_IN_T*>(a.in);
    GK_OUT_T* out = reinterpret_cast<GK_OUT_T*>(a.out);
    const int t = threadIdx.x;
    for (gk_i64 row = blockIdx.x; row < a.n_rows; row += gridDim.x) {
        const gk_i64 in_base = gk_nd_offset(row, a.row_ndim, a.row_shape, a.in_row_stride);
        const gk_i64 out_base = gk_nd_offset(row, a.row_ndim, a.row_shape, a.out_row_stride);
        acc_t carry = (acc_t)0;
        for (gk_i64 start = 0; start < a.n; start += GK_BLOCK) {
            const gk_i64 i = start + t;
            buf[t] = i < a.n ? (acc_t)in[in_base + i * a.in_step] : (acc_t)0;
            __syncthreads();
            for (int width = 1; width < GK_BLOCK; width *= 2) {
                const acc_t add = t >= width ? buf[t - width] : (acc_t)0;
                __syncthreads();
                buf[t] = (acc_t)(buf[t] + add);
                __syncthreads();
            }
            if (i < a.n) out[out_base + i * a.out_step] = (GK_OUT_T)(acc_t)(carry + buf[t]);
            carry = (acc_t)(carry + buf[GK_BLOCK - 1]);
            __syncthreads();  // buf is refilled by the next chunk
        }
    }
}
