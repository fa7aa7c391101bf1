// Host build of kernels/fft.cu (GK_FFT_EMU_AUX=0, with a length's defines) or fft_aux.cu
// (GK_FFT_EMU_AUX=1) over gk_emulate.h, called from Python (ctypes).
#include <cstddef>
#include <cstring>
#if GK_FFT_EMU_AUX
#include "fft_aux.cu"
typedef gk_fft_aux_args gk_emu_args;
#define GK_EMU_FIELDS GK_FFT_AUX_ARGS
#else
#include "fft.cu"
typedef gk_fft_args gk_emu_args;
#define GK_EMU_FIELDS GK_FFT_ARGS
#endif

extern "C" unsigned gk_emu_args_size() { return sizeof(gk_emu_args); }

// The byte offset of a field as this compiler lays it out (-1: no such field).
#define GK_EMU_OFFSET(T, NAME) \
    if (std::strcmp(field, #NAME) == 0) return (long)offsetof(gk_emu_args, NAME);
#define GK_EMU_OFFSET_ARRAY(T, NAME, N) GK_EMU_OFFSET(T, NAME)
#define GK_EMU_OFFSET_MATRIX(T, NAME, R, C) GK_EMU_OFFSET(T, NAME)
extern "C" long gk_emu_field_offset(const char* field) {
    GK_EMU_FIELDS(GK_EMU_OFFSET, GK_EMU_OFFSET_ARRAY, GK_EMU_OFFSET_MATRIX)
    return -1;
}

// Runs kernel `name` of this build; 0 when done, 1 for a name it does not have.
extern "C" int gk_emu_run(const gk_emu_args* a, const char* name, unsigned gx, unsigned gy,
                          unsigned gz, unsigned threads, unsigned smem, unsigned seed) {
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
    if (kernel == nullptr) return 1;
    gkemu::launch(kernel, {gx, gy, gz}, {threads, 1, 1}, smem, *a, 0, seed);
    return 0;
}
