// Host build of kernels/fft.cu (GK_FFT_EMU_AUX=0, with a length's defines) or fft_aux.cu
// (GK_FFT_EMU_AUX=1) over gk_emulate.h (force-included), called from Python (ctypes).
#if GK_FFT_EMU_AUX
#include "fft_aux.cu"
typedef gk_fft_aux_args gk_emu_args;
GK_EMU_EXPORT_LAYOUT(gk_fft_aux_args, GK_FFT_AUX_ARGS)
#else
#include "fft.cu"
typedef gk_fft_args gk_emu_args;
GK_EMU_EXPORT_LAYOUT(gk_fft_args, GK_FFT_ARGS)
#endif

// Runs kernel `name` of this build: null, or what went wrong.
extern "C" const char* gk_emu_run(const gk_emu_args* a, const char* name, unsigned gx,
                                  unsigned gy, unsigned gz, unsigned threads, unsigned smem,
                                  unsigned seed) {
    void (*kernel)(gk_emu_args) = nullptr;
#if GK_FFT_EMU_AUX
    const struct {
        const char* name;
        void (*fn)(gk_emu_args);
    } kernels[] = {
        {"gk_fft_expand_real", gk_fft_expand_real}, {"gk_fft_expand_herm", gk_fft_expand_herm},
        {"gk_fft_real_part", gk_fft_real_part},     {"gk_fft_r2c_post", gk_fft_r2c_post},
        {"gk_fft_c2r_pre", gk_fft_c2r_pre},         {"gk_fft_chirp_pre", gk_fft_chirp_pre},
        {"gk_fft_chirp_filter", gk_fft_chirp_filter}, {"gk_fft_chirp_mul", gk_fft_chirp_mul},
        {"gk_fft_chirp_post", gk_fft_chirp_post},
    };
    for (const auto& k : kernels)
        if (std::strcmp(name, k.name) == 0) kernel = k.fn;
#else
    if (std::strcmp(name, "gk_fft_rows") == 0) kernel = gk_fft_rows;
#endif
    if (kernel == nullptr) return "no such kernel in this build";
    return gkemu::launch(kernel, {gx, gy, gz}, {threads, 1, 1}, smem, *a, 0, seed);
}
