// Host build of one kernel of kernels/ over gk_emulate.h (force-included), called from Python
// (ctypes): GK_EMU_SOURCE (the file), GK_EMU_KERNEL (its name) and GK_EMU_ARGS (its argument
// struct) come as defines, with the kernel's own.
#define GK_EMU_STR2(x) #x
#define GK_EMU_STR(x) GK_EMU_STR2(x)
#include GK_EMU_STR(GK_EMU_SOURCE)

// Null, or what went wrong.
extern "C" const char* gk_emu_run(const void* args, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned threads, unsigned smem, unsigned seed) {
    const GK_EMU_ARGS a = *static_cast<const GK_EMU_ARGS*>(args);
    return gkemu::launch(GK_EMU_KERNEL, {gx, gy, gz}, {threads, 1, 1}, smem, a, 0, seed);
}

// The same launch, cooperative (every block resident at once: grid barriers).
extern "C" const char* gk_emu_run_grid(const void* args, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned threads, unsigned smem, unsigned seed) {
    const GK_EMU_ARGS a = *static_cast<const GK_EMU_ARGS*>(args);
    return gkemu::launch_cooperative(GK_EMU_KERNEL, {gx, gy, gz}, {threads, 1, 1}, smem, a, seed);
}
