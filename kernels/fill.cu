// arange: out[i] = start + i * step, computed in double (GK_ARANGE_INT: in 64-bit integers).
#include "compat.cuh"

GK_KERNEL void gk_arange(GK_OUT_T* out, gk_i64 n, double start, double step, gk_i64 istart,
                         gk_i64 istep) {
    const gk_i64 stride = (gk_i64)gridDim.x * blockDim.x;
    for (gk_i64 i = (gk_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
#if GK_ARANGE_INT
        (void)start;
        (void)step;
        out[i] = (GK_OUT_T)(istart + i * istep);
#else
        (void)istart;
        (void)istep;
        out[i] = (GK_OUT_T)(start + (double)i * step);
#endif
    }
}
