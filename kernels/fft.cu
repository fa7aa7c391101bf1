// Forward FFTs of rows of GK_FFT_N complex values, generated for the length at hand: a block
// copies GK_FFT_ROWS rows into shared memory, runs one Stockham autosort pass per radix of
// GK_FFT_RADICES (each thread's butterflies in registers, the exchange between passes through
// shared memory, results in natural order), then stores them. GK_FFT_TPR threads serve a row;
// GK_FFT_THREADS (a multiple of 32) is the block. Inverses conjugate on the way in and out; the
// four-step passes of a long transform twiddle their output (gk_fft_args).
// The passes' twiddles come from a table that each block computes once in shared memory
// (sincospi in the working precision, exact rational angles): pass P's exp(-2 pi i jm r / (Ns R))
// at (r - 1) Ns + jm past the passes before it, so the lanes of a warp (consecutive jm) read
// consecutive words instead of one bank. N - R0 entries; the host reserves N.
// Dynamic shared memory: GK_FFT_ROWS * (pitch * sizeof(gk_cpx) + GK_FFT_ROW_EXTRA_BYTES), the
// pitch N + N / 2^GK_FFT_PAD_SHIFT + 1, plus GK_FFT_N * sizeof(gk_cpx) for the table when there is
// more than one pass.
#include "fft.cuh"

constexpr int kN = GK_FFT_N;
constexpr int kRadices[] = {GK_FFT_RADICES};
constexpr int kPasses = sizeof(kRadices) / sizeof(kRadices[0]);
constexpr int kTpr = GK_FFT_TPR;
constexpr int kRows = GK_FFT_ROWS;
constexpr int kThreads = GK_FFT_THREADS;
static_assert(kThreads % 32 == 0 && kThreads >= kRows * kTpr, "GK_FFT_THREADS");

template <int P>
struct gk_radix_product {
    static constexpr int value = kRadices[P - 1] * gk_radix_product<P - 1>::value;
};
template <>
struct gk_radix_product<0> {
    static constexpr int value = 1;
};
static_assert(gk_radix_product<kPasses>::value == kN, "GK_FFT_RADICES must multiply to GK_FFT_N");
constexpr bool kTable = kPasses > 1;
// Pass P's twiddles start at sum over passes 1..P-1 of Ns (R - 1), which telescopes to Ns - R0.
template <int P>
constexpr int kTableOffset = gk_radix_product<P>::value - kRadices[0];

// Rows in shared memory are padded: an element every 2^GK_FFT_PAD_SHIFT, and one more per row,
// so that the first pass's writes (a stride of its radix) and the column copies (a stride of a
// row) fall in different banks.
GK_DEV int gk_pad(int i) { return i + (i >> GK_FFT_PAD_SHIFT); }
constexpr int kPitch = kN + (kN >> GK_FFT_PAD_SHIFT) + 1;

// Pass P (radix R, Ns = the product of the radices before it): butterfly j reads elements
// j + r * N / R, twiddled by exp(-2 pi i (j % Ns) r / (Ns R)), and writes its outputs to
// (j / Ns) * Ns * R + j % Ns + r * Ns.
template <int P>
GK_DEV void gk_fft_passes(gk_cpx* row, const gk_cpx* table, int lane, bool active) {
    if constexpr (P < kPasses) {
        constexpr int R = kRadices[P];
        constexpr int Ns = gk_radix_product<P>::value;
        constexpr int B = kN / R;
        constexpr int kPer = (B + kTpr - 1) / kTpr;
        gk_cpx v[kPer][R];
        if (active) {
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int j = lane + i * kTpr;
                if (kPer * kTpr == B || j < B) {
                    const int jm = j % Ns;
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        gk_cpx x = row[gk_pad(j + r * B)];
                        if (Ns > 1 && r > 0) x = x * table[kTableOffset<P> + (r - 1) * Ns + jm];
                        v[i][r] = x;
                    }
                    gk_dft<R>(v[i]);
                }
            }
        }
        gk_fft_sync();
        if (active) {
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int j = lane + i * kTpr;
                if (kPer * kTpr == B || j < B) {
                    const int base = (j / Ns) * Ns * R + j % Ns;
#pragma unroll
                    for (int r = 0; r < R; ++r) row[gk_pad(base + r * Ns)] = v[i][r];
                }
            }
        }
        gk_fft_sync();
        gk_fft_passes<P + 1>(row, table, lane, active);
    } else {
        (void)row, (void)table, (void)lane, (void)active;
    }
}

GK_FFT_KERNEL void __launch_bounds__(kThreads) gk_fft_rows(const gk_fft_args a) {
    unsigned char* smem = gk_fft_smem();
    gk_cpx* table = (gk_cpx*)smem;
    gk_cpx* data = table + (kTable ? kN : 0);
    long long* in_off = (long long*)(data + kRows * kPitch);
    long long* out_off = in_off + kRows;
    long long* batch0 = out_off + kRows;
    const int t = threadIdx.x;
    if (kTable) {
        // Entry e: the pass whose span [Ns - R0, Ns R - R0) holds it, then (r, jm) in it.
        for (int e = t; e < kN - kRadices[0]; e += kThreads) {
            int ns = kRadices[0], radix = kRadices[kPasses > 1 ? 1 : 0];
#pragma unroll
            for (int p = 1; p + 1 < kPasses; ++p) {
                if (e < ns * kRadices[p] - kRadices[0]) break;
                ns *= kRadices[p];
                radix = kRadices[p + 1];
            }
            const int local = e - (ns - kRadices[0]);
            const int r = local / ns + 1, jm = local % ns;
            gk_real sn, cs;
            gk_sincospi((gk_real)(-2 * jm * r) / (gk_real)(ns * radix), &sn, &cs);
            table[e] = gk_cx(cs, sn);
        }
    }
    const long long row0 = (long long)blockIdx.x * kRows;
    if (t < kRows && row0 + t < a.rows) {
        const long long row = row0 + t;
        in_off[t] = gk_fft_row_offset(row, a.batch_ndim, a.batch_shape, a.in_batch);
        out_off[t] = gk_fft_row_offset(row, a.batch_ndim, a.batch_shape, a.out_batch);
        batch0[t] = a.batch_ndim ? row % a.batch_shape[0] : 0;
    }
    gk_fft_sync();
    const int live = (int)(a.rows - row0 < kRows ? a.rows - row0 : kRows);
    const gk_cpx* in = (const gk_cpx*)a.in;
    for (int e = t; e < kRows * kN; e += kThreads) {
        const int r = a.in_rows_fast ? e / kN : e % kRows;
        const int k = a.in_rows_fast ? e % kN : e / kRows;
        if (r < live) {
            gk_cpx x = in[in_off[r] + k * a.in_step];
            data[r * kPitch + gk_pad(k)] = a.conj_in ? gk_conj(x) : x;
        }
    }
    gk_fft_sync();
    const int lane = t % kTpr, mine = t / kTpr;
    gk_fft_passes<0>(data + (mine < kRows ? mine : 0) * kPitch, table, lane, mine < kRows);
    gk_cpx* out = (gk_cpx*)a.out;
    const gk_real scale = (gk_real)a.scale;
    const double tw_inv = a.tw_n ? 1.0 / (double)a.tw_n : 0.0;
    for (int e = t; e < kRows * kN; e += kThreads) {
        const int r = a.out_rows_fast ? e / kN : e % kRows;
        const int k = a.out_rows_fast ? e % kN : e / kRows;
        if (r < live && k < a.out_len) {
            gk_cpx x = data[r * kPitch + gk_pad(k)];
            if (a.tw_n) x = x * gk_twiddle_inv(batch0[r] * k, tw_inv);  // b k < tw_n
            if (a.conj_out) x = gk_conj(x);
            out[out_off[r] + k * a.out_step] = gk_scale(x, scale);
        }
    }
}
