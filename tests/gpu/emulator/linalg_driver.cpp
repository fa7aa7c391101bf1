// Host build of kernels/linalg_small.cu (compat.cuh's portable path, -DGK_HIP) over
// gk_emulate.h (force-included), called from Python (ctypes). Compiled with -DGK_T=float or
// double.
#include "linalg_small.cu"

GK_EMU_EXPORT_LAYOUT(gk_linalg_args, GK_LINALG_ARGS)

// kernel 0: gk_chol_small, 1: gk_lu_small, 2: gk_eigh_jacobi. Null, or what went wrong.
extern "C" const char* gk_emu_run(const gk_linalg_args* a, int kernel, unsigned grid,
                                  unsigned threads, unsigned seed) {
    void (*const kernels[])(gk_linalg_args) = {gk_chol_small, gk_lu_small, gk_eigh_jacobi};
    if (kernel < 0 || kernel > 2) return "no such kernel";
    return gkemu::launch(kernels[kernel], {grid, 1, 1}, {threads, 1, 1}, 0, *a, 0, seed);
}
