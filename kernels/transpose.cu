// Copy of a strided view into a contiguous array whose fastest axis the input is not contiguous
// along (ascontiguousarray(a.T)): tiles of GK_TILE x GK_TILE elements go through shared memory,
// read along p (the input's contiguous axis) and written along q (the output's), with 16-byte
// accesses on full tiles when pointers and strides allow. Defines: GK_T, an unsigned type of the
// element's size (the copy moves bits); GK_TILE, the tiles' side
// (gpukit.runtime.kernels.transpose_tile).
#include "args.cuh"
#include "warp.cuh"

typedef GK_T T;

#define GK_NT GK_TRANSPOSE_THREADS
static const int GK_V = gk_vec16<T>::N < GK_TILE ? gk_vec16<T>::N : GK_TILE;
static const int GK_PAD = sizeof(T) >= 4 ? 1 : 4 / sizeof(T);  // one bank's worth per row
static const int GK_PITCH = GK_TILE + GK_PAD;

GK_KERNEL void __launch_bounds__(GK_NT) gk_transpose(const gk_transpose_args a) {
    __shared__ T tile[GK_TILE * GK_PITCH];  // tile[q * GK_PITCH + p]
    const gk_i64 per_batch = a.tiles_p * a.tiles_q;
    for (gk_i64 id = blockIdx.x; id < a.n_tiles; id += gridDim.x) {
        const gk_i64 batch = id / per_batch, rem = id % per_batch;
        const gk_i64 p0 = rem / a.tiles_q * GK_TILE, q0 = rem % a.tiles_q * GK_TILE;
        const T* in = reinterpret_cast<const T*>(a.in) +
                      gk_nd_offset(batch, a.batch_ndim, a.batch_shape, a.in_batch_stride) + p0 +
                      q0 * a.in_q_stride;
        T* out = reinterpret_cast<T*>(a.out) +
                 gk_nd_offset(batch, a.batch_ndim, a.batch_shape, a.out_batch_stride) +
                 p0 * a.out_p_stride + q0;
        const bool full = p0 + GK_TILE <= a.p && q0 + GK_TILE <= a.q;
        if (a.vec && full) {
            const int per_row = GK_TILE / GK_V;  // 16-byte accesses along a tile row
            const int rows = GK_NT / per_row;    // tile rows a pass covers
            const int c = threadIdx.x % per_row, r0 = threadIdx.x / per_row;
            for (int q = r0; q < GK_TILE; q += rows) {
                const gk_vec16<T> x =
                    *reinterpret_cast<const gk_vec16<T>*>(in + q * a.in_q_stride + c * GK_V);
                for (int k = 0; k < GK_V; ++k) tile[q * GK_PITCH + c * GK_V + k] = x.v[k];
            }
            __syncthreads();
            for (int p = r0; p < GK_TILE; p += rows) {
                gk_vec16<T> y;
                for (int k = 0; k < GK_V; ++k) y.v[k] = tile[(c * GK_V + k) * GK_PITCH + p];
                gk_store16(reinterpret_cast<gk_vec16<T>*>(out + p * a.out_p_stride + c * GK_V), y);
            }
        } else {
            const int np = (int)(a.p - p0 < GK_TILE ? a.p - p0 : GK_TILE);
            const int nq = (int)(a.q - q0 < GK_TILE ? a.q - q0 : GK_TILE);
            for (int e = threadIdx.x; e < GK_TILE * GK_TILE; e += GK_NT) {
                const int q = e / GK_TILE, p = e % GK_TILE;
                if (p < np && q < nq) tile[q * GK_PITCH + p] = in[q * a.in_q_stride + p];
            }
            __syncthreads();
            for (int e = threadIdx.x; e < GK_TILE * GK_TILE; e += GK_NT) {
                const int p = e / GK_TILE, q = e % GK_TILE;
                if (p < np && q < nq) out[p * a.out_p_stride + q] = tile[q * GK_PITCH + p];
            }
        }
        __syncthreads();  // the tile is refilled for the next id
    }
}
