// Forward FFTs of rows of GK_FFT_N complex values, generated for the length at hand: one Stockham
// autosort pass per radix of GK_FFT_RADICES (each thread's butterflies in registers, the exchange
// between passes through shared memory, results in natural order). GK_FFT_TPR threads serve a
// row; a block takes GK_FFT_ROWS rows; GK_FFT_THREADS (a multiple of 32) is the block. Rows
// contiguous in memory (step 1) are read by the first pass and written by the last straight from
// and to global memory (consecutive lanes on consecutive elements); strided rows (the columns of a
// four-step pass) are staged in shared memory, consecutive threads on consecutive rows. Inverses
// conjugate on the way in and out; the four-step passes twiddle their output (gk_fft_args).
// Twiddles: exp(-2 pi i k / N) = lo[k mod L] hi[k / L], L the power of two at or above sqrt(N),
// both tables filled by each block in shared memory with sincospi of exact rational angles.
// Dynamic shared memory: GK_FFT_ROWS * (pitch * sizeof(gk_cpx) + GK_FFT_ROW_EXTRA_BYTES), the
// pitch N + N / 2^GK_FFT_PAD_SHIFT + 1, plus the tables' L + ceil(N / L) values when there is
// more than one pass (runtime/fft_plan.py: table_length).
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
template <int N>
struct gk_log2_ceil {
    static constexpr int value = 1 + gk_log2_ceil<(N + 1) / 2>::value;
};
template <>
struct gk_log2_ceil<1> {
    static constexpr int value = 0;
};
constexpr int kLoBits = (gk_log2_ceil<kN>::value + 1) / 2;
constexpr int kLo = 1 << kLoBits;
constexpr int kHi = (kN + kLo - 1) / kLo;

// exp(-2 pi i k / N) for 0 <= k < N from the two tables.
GK_DEV gk_cpx gk_table_twiddle(const gk_cpx* table, int k) {
    return table[k & (kLo - 1)] * table[kLo + (k >> kLoBits)];
}

// Rows in shared memory are padded: an element every 2^GK_FFT_PAD_SHIFT, and one more per row,
// so that the passes' writes (a stride of their radix) and the column copies (a stride of a row)
// fall in different banks.
GK_DEV int gk_pad(int i) { return i + (i >> GK_FFT_PAD_SHIFT); }
constexpr int kPitch = kN + (kN >> GK_FFT_PAD_SHIFT) + 1;

// Pass P (radix R, Ns = the product of the radices before it): butterfly j reads elements
// j + r * N / R, twiddled by exp(-2 pi i (j % Ns) r / (Ns R)), and writes its outputs to
// (j / Ns) * Ns * R + j % Ns + r * Ns. The first pass reads through `load` when `direct_in`
// (else from the row in shared memory), the last writes through `store` when `direct_out`.
// A barrier stands between a pass's reads of the row and its writes, and after its writes.
template <int P, class Load, class Store>
GK_DEV void gk_fft_passes(gk_cpx* row, const gk_cpx* table, int lane, bool active, bool direct_in,
                          bool direct_out, Load load, Store store) {
    if constexpr (P < kPasses) {
        constexpr int R = kRadices[P];
        constexpr int Ns = gk_radix_product<P>::value;
        constexpr int B = kN / R;
        constexpr int kPer = (B + kTpr - 1) / kTpr;
        constexpr bool kLast = P + 1 == kPasses;
        const bool from_global = P == 0 && direct_in, to_global = kLast && direct_out;
        gk_cpx v[kPer][R];
        if (active) {
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int j = lane + i * kTpr;
                if (kPer * kTpr == B || j < B) {
                    const int jm = j % Ns;
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        gk_cpx x = from_global ? load(j + r * B) : row[gk_pad(j + r * B)];
                        if (Ns > 1 && r > 0)
                            x = x * gk_table_twiddle(table, jm * r * (kN / (Ns * R)));
                        v[i][r] = x;
                    }
                    gk_dft<R>(v[i]);
                }
            }
        }
        if (!from_global && !to_global) gk_fft_sync();
        if (active) {
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int j = lane + i * kTpr;
                if (kPer * kTpr == B || j < B) {
                    const int base = (j / Ns) * Ns * R + j % Ns;
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        if (to_global) {
                            store(base + r * Ns, v[i][r]);
                        } else {
                            row[gk_pad(base + r * Ns)] = v[i][r];
                        }
                    }
                }
            }
        }
        if (!to_global) gk_fft_sync();
        gk_fft_passes<P + 1>(row, table, lane, active, direct_in, direct_out, load, store);
    } else {
        (void)row, (void)table, (void)lane, (void)active, (void)direct_in, (void)direct_out;
        (void)load, (void)store;
    }
}

GK_FFT_KERNEL void __launch_bounds__(kThreads) gk_fft_rows(const gk_fft_args a) {
    unsigned char* smem = gk_fft_smem();
    gk_cpx* table = (gk_cpx*)smem;
    gk_cpx* data = table + (kTable ? kLo + kHi : 0);
    long long* in_off = (long long*)(data + kRows * kPitch);
    long long* out_off = in_off + kRows;
    long long* batch0 = out_off + kRows;
    const int t = threadIdx.x;
    if (kTable) {
        for (int e = t; e < kLo + kHi; e += kThreads) {
            table[e] = e < kLo ? gk_twiddle(e, kN) : gk_twiddle((long long)(e - kLo) * kLo, kN);
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
    gk_cpx* out = (gk_cpx*)a.out;
    const gk_real scale = (gk_real)a.scale;
    const double tw_inv = a.tw_n ? 1.0 / (double)a.tw_n : 0.0;
    // What every output goes through on its way to memory: element k of row r.
    auto finish = [&](int r, int k, gk_cpx x) {
        if (a.tw_n) x = x * gk_twiddle_inv(batch0[r] * k, tw_inv);  // b k < tw_n
        if (a.conj_out) x = gk_conj(x);
        out[out_off[r] + k * a.out_step] = gk_scale(x, scale);
    };
    const bool direct_in = a.in_step == 1, direct_out = a.out_step == 1;
    if (!direct_in) {
        for (int e = t; e < kRows * kN; e += kThreads) {
            const int r = e % kRows, k = e / kRows;
            if (r < live) {
                gk_cpx x = in[in_off[r] + k * a.in_step];
                data[r * kPitch + gk_pad(k)] = a.conj_in ? gk_conj(x) : x;
            }
        }
        gk_fft_sync();
    }
    const int lane = t % kTpr, mine = t / kTpr < kRows ? t / kTpr : 0;
    const gk_cpx* src = in + (mine < live ? in_off[mine] : 0);
    auto load = [&](int k) { return a.conj_in ? gk_conj(src[k]) : src[k]; };
    auto store = [&](int k, gk_cpx x) {
        if (k < a.out_len) finish(mine, k, x);
    };
    gk_fft_passes<0>(data + mine * kPitch, table, lane, t / kTpr < kRows && mine < live, direct_in,
                     direct_out, load, store);
    if (!direct_out) {
        for (int e = t; e < kRows * kN; e += kThreads) {
            const int r = e % kRows, k = e / kRows;
            if (r < live && k < a.out_len) finish(r, k, data[r * kPitch + gk_pad(k)]);
        }
    }
}
