// arange: out[i] = start + i * step, computed in double (GK_ARANGE_INT: in 64-bit integers).
#include "args.cuh"
#include "compat.cuh"

GK_KERNEL void gk_arange(const gk_arange_args a) {
    GK_OUT_T* out = reinterpret_cast<GK_OUT_T*>(a.out);
    const gk_i64 stride = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += stride) {
#if GK_ARANGE_INT
        out[i] = (GK_OUT_T)(a.istart + i * a.istep);
#else
        out[i] = (GK_OUT_T)(a.start + (double)i * a.step);
#endif
    }
}
