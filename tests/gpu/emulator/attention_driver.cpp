// Host build of the tensor-core attention kernels over gk_emulate.h (force-included), called
// from Python (ctypes). Compiled with the kernel's defines and GK_ATTN_KERNEL=1 (attention_tc.cu)
// or 2 (attention_decode.cu).
#if GK_ATTN_KERNEL == 1
#include "attention_tc.cu"
#else
#include "attention_decode.cu"
#endif

GK_EMU_EXPORT_LAYOUT(gk_attn_tc_args, GK_ATTN_TC_ARGS)

// kernel 0: the main kernel, 1: gk_attn_combine (attention_decode.cu). Null, or what went wrong.
extern "C" const char* gk_emu_run(const gk_attn_tc_args* a, int kernel, unsigned gx, unsigned gy,
                                  unsigned gz, unsigned threads, unsigned smem, unsigned seed) {
    const int kind = GK_MMA16_KIND;
#if GK_ATTN_KERNEL == 1
    if (kernel != 0) return "attention_tc.cu has one kernel";
    return gkemu::launch(gk_attn_tc, {gx, gy, gz}, {threads, 1, 1}, smem, *a, kind, seed);
#else
    auto* fn = kernel == 0 ? gk_attn_decode : gk_attn_combine;
    return gkemu::launch(fn, {gx, gy, gz}, {threads, 1, 1}, smem, *a, kind, seed);
#endif
}
