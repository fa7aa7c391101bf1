// The decode step's rotary embedding fused with the KV-cache write: one launch takes the fused
// q/k/v projection and leaves q rotated for attention and k (rotated), v in the caches at the
// positions the device's length gives, so that the launch is the same at every position (a
// captured step replays unchanged). See gk_qkv_cache_args. The rotation is gk_rope's ("half"
// pairs j and j + d/2, the same arithmetic). Defines: GK_T (element type), GK_ACC_T.
#include "args.cuh"
#include "compat.cuh"

typedef GK_T T;
typedef GK_ACC_T acc_t;

// A thread per pair (j, j + d/2) of one head of one token: q and k heads rotate theirs, v heads
// copy theirs.
GK_KERNEL void gk_qkv_cache(const gk_qkv_cache_args a) {
    const T* qkv = reinterpret_cast<const T*>(a.qkv);
    const T* cs = reinterpret_cast<const T*>(a.cos);
    const T* sn = reinterpret_cast<const T*>(a.sin);
    T* q_out = reinterpret_cast<T*>(a.q_out);
    T* k_cache = reinterpret_cast<T*>(a.k_cache);
    T* v_cache = reinterpret_cast<T*>(a.v_cache);
    const gk_i64 half = a.d / 2, heads = a.hq + 2 * a.hkv;
    const gk_i64 first = (gk_i64)(*reinterpret_cast<const gk_i32*>(a.length)) - a.s;
    const gk_i64 n = a.batch * a.s * heads * half;
    const gk_i64 step = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 p = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += step) {
        const gk_i64 j = p % half;
        gk_i64 rest = p / half;
        const gk_i64 h = rest % heads;
        rest /= heads;
        const gk_i64 t = rest % a.s, b = rest / a.s;
        const gk_i64 pos = first + t;
        const bool placed = pos >= 0 && pos < a.capacity && (!a.rotary || pos < a.positions);
        const T* src = qkv + b * a.qkv_batch_stride + t * a.qkv_seq_stride + h * a.d;
        acc_t lo = (acc_t)src[j], hi = (acc_t)src[j + half];
        if (h < a.hq + a.hkv && a.rotary && placed) {
            const acc_t c = (acc_t)cs[pos * half + j], s = (acc_t)sn[pos * half + j];
            const acc_t x_lo = lo, x_hi = hi;
            lo = x_lo * c - x_hi * s;
            hi = x_hi * c + x_lo * s;
        }
        if (h < a.hq) {
            T* o = q_out + ((b * a.hq + h) * a.s + t) * a.d;
            o[j] = placed ? (T)lo : (T)0.0f;
            o[j + half] = placed ? (T)hi : (T)0.0f;
            continue;
        }
        if (!placed) continue;
        const bool is_k = h < a.hq + a.hkv;
        const gk_i64 kv_head = is_k ? h - a.hq : h - a.hq - a.hkv;
        T* dst = (is_k ? k_cache : v_cache) + b * a.cache_stride[0] + kv_head * a.cache_stride[1] +
                 pos * a.cache_stride[2];
        dst[j] = (T)lo;
        dst[j + half] = (T)hi;
    }
}
