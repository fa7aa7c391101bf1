// Host build of kernels/linalg_small.cu over linalg_emulate.h, called from Python (ctypes).
// Compiled with -DGK_T=float or double.
#include <cstddef>
#include <cstring>

#include "linalg_emulate.h"
// clang-format off
#include "linalg_small.cu"
// clang-format on

extern "C" unsigned gk_emu_args_size() { return sizeof(gk_linalg_args); }

// The byte offset of a field of gk_linalg_args as this compiler lays it out (-1: no such field).
#define GK_EMU_OFFSET(T, NAME) \
    if (std::strcmp(field, #NAME) == 0) return (long)offsetof(gk_linalg_args, NAME);
#define GK_EMU_OFFSET_ARRAY(T, NAME, N) GK_EMU_OFFSET(T, NAME)
#define GK_EMU_OFFSET_MATRIX(T, NAME, R, C) GK_EMU_OFFSET(T, NAME)
extern "C" long gk_emu_field_offset(const char* field) {
    GK_LINALG_ARGS(GK_EMU_OFFSET, GK_EMU_OFFSET_ARRAY, GK_EMU_OFFSET_MATRIX)
    return -1;
}

// kernel 0: gk_chol_small, 1: gk_lu_small, 2: gk_eigh_jacobi.
extern "C" void gk_emu_run(const gk_linalg_args* a, int kernel, unsigned grid, unsigned threads,
                           unsigned seed) {
    void (*const kernels[])(gk_linalg_args) = {gk_chol_small, gk_lu_small, gk_eigh_jacobi};
    gkemu::launch(kernels[kernel], grid, threads, *a, seed);
}
