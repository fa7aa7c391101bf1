// gpukit.nn gathers: embedding (rows of a table by integer ids) and rotary position embedding.
// Defines: GK_T (table / x element type), GK_ACC_T (rope arithmetic), GK_ID_T (embedding ids).
#include "args.cuh"
#include "warp.cuh"

typedef GK_T T;
typedef GK_ACC_T acc_t;

// A 32-lane group per id, 16-byte copies where the table's rows allow. An id outside
// [0, num) is never read: its row becomes zeros and *error is set for the host to raise.
GK_KERNEL void gk_embedding(const gk_embed_args a) {
    const GK_ID_T* ids = reinterpret_cast<const GK_ID_T*>(a.ids);
    const T* table = reinterpret_cast<const T*>(a.table);
    T* out = reinterpret_cast<T*>(a.out);
    const int lane = (int)threadIdx.x % GK_LANES;
    const gk_i64 groups = (gk_i64)blockDim.x / GK_LANES;
    const int V = gk_vec16<T>::N;
    const bool vec = a.col_stride == 1 && a.dim % V == 0 && a.row_stride % V == 0 &&
                     a.table % 16 == 0 && a.out % 16 == 0;
    for (gk_i64 i = blockIdx.x * groups + threadIdx.x / GK_LANES; i < a.n_ids;
         i += (gk_i64)gridDim.x * groups) {
        const gk_i64 id = (gk_i64)ids[i];
        T* dst = out + i * a.dim;
        if (id < 0 || id >= a.num) {
            if (lane == 0) *reinterpret_cast<gk_i32*>(a.error) = 1;
            for (gk_i64 c = lane; c < a.dim; c += GK_LANES) dst[c] = (T)0.0f;
            continue;
        }
        const T* src = table + id * a.row_stride;
        if (vec) {
            const gk_vec16<T>* s = reinterpret_cast<const gk_vec16<T>*>(src);
            gk_vec16<T>* d = reinterpret_cast<gk_vec16<T>*>(dst);
            for (gk_i64 c = lane; c < a.dim / V; c += GK_LANES) d[c] = s[c];
        } else {
            for (gk_i64 c = lane; c < a.dim; c += GK_LANES) dst[c] = src[c * a.col_stride];
        }
    }
}

// A thread per rotated pair: "half" pairs j with j + head_dim/2 (GPT-NeoX / LLaMA rotate_half),
// "interleaved" pairs 2j with 2j + 1 (GPT-J). cos/sin hold one angle per pair (head_dim / 2),
// broadcast over x's leading dimensions (strides 0 there). For the pair (lo, hi) of angle j:
//   out[lo] = x[lo] * cos[j] - x[hi] * sin[j],  out[hi] = x[hi] * cos[j] + x[lo] * sin[j].
GK_KERNEL void gk_rope(const gk_rope_args a) {
    const T* x = reinterpret_cast<const T*>(a.x);
    const T* cs = reinterpret_cast<const T*>(a.cos);
    const T* sn = reinterpret_cast<const T*>(a.sin);
    T* out = reinterpret_cast<T*>(a.out);
    const gk_i64 n = a.n_rows * a.half;
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 p = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += step) {
        const gk_i64 row = p / a.half, j = p % a.half;
        gk_i64 xo = 0, co = 0, so = 0, rem = row;
        for (int d = a.ndim - 1; d >= 0; --d) {
            const gk_i64 idx = rem % a.shape[d];
            rem /= a.shape[d];
            xo += idx * a.x_stride[d];
            co += idx * a.cos_stride[d];
            so += idx * a.sin_stride[d];
        }
        const gk_i64 lo = a.interleaved ? 2 * j : j;
        const gk_i64 hi = a.interleaved ? 2 * j + 1 : j + a.half;
        const acc_t x_lo = (acc_t)x[xo + lo * a.x_step], x_hi = (acc_t)x[xo + hi * a.x_step];
        const acc_t c = (acc_t)cs[co + j * a.cos_step], s = (acc_t)sn[so + j * a.sin_step];
        T* o = out + row * 2 * a.half;
        o[lo] = (T)(x_lo * c - x_hi * s);
        o[hi] = (T)(x_hi * c + x_lo * s);
    }
}
