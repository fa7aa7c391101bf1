// Host build of the tensor-core attention kernels over gk_emulate.h, called from Python (ctypes).
// Compiled with the kernel's defines and GK_ATTN_KERNEL=1 (attention_tc.cu) or 2
// (attention_decode.cu).
#include <cstddef>
#include <cstdint>
#include <cstring>
#if GK_ATTN_KERNEL == 1
#include "attention_tc.cu"
#else
#include "attention_decode.cu"
#endif

extern "C" unsigned gk_emu_args_size() { return sizeof(gk_attn_tc_args); }

// The byte offset of a field of gk_attn_tc_args as this compiler lays it out (-1: no such field).
#define GK_EMU_OFFSET(T, NAME) \
    if (std::strcmp(field, #NAME) == 0) return (long)offsetof(gk_attn_tc_args, NAME);
#define GK_EMU_OFFSET_ARRAY(T, NAME, N) GK_EMU_OFFSET(T, NAME)
#define GK_EMU_OFFSET_MATRIX(T, NAME, R, C) GK_EMU_OFFSET(T, NAME)
extern "C" long gk_emu_field_offset(const char* field) {
    GK_ATTN_TC_ARGS(GK_EMU_OFFSET, GK_EMU_OFFSET_ARRAY, GK_EMU_OFFSET_MATRIX)
    return -1;
}

extern "C" void gk_emu_run(const gk_attn_tc_args* a, int kernel, unsigned gx, unsigned gy,
                           unsigned gz, unsigned threads, unsigned smem, unsigned seed) {
    const int kind = GK_MMA16_KIND;
#if GK_ATTN_KERNEL == 1
    (void)kernel;
    gkemu::launch(gk_attn_tc, {gx, gy, gz}, {threads, 1, 1}, smem, *a, kind, seed);
#else
    if (kernel == 0)
        gkemu::launch(gk_attn_decode, {gx, gy, gz}, {threads, 1, 1}, smem, *a, kind, seed);
    else
        gkemu::launch(gk_attn_combine, {gx, gy, gz}, {threads, 1, 1}, smem, *a, kind, seed);
#endif
}
