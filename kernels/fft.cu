// Forward FFTs of rows of GK_FFT_N complex values, generated for the length at hand: one Stockham
// autosort pass per radix of GK_FFT_RADICES (each thread's butterflies in registers, the exchange
// between passes through shared memory, results in natural order). GK_FFT_TPR threads serve a
// row; a block takes GK_FFT_ROWS rows; GK_FFT_THREADS (a multiple of 32) is the block. Rows
// contiguous in memory (step 1) are read by the first pass and written by the last straight from
// and to global memory (consecutive lanes on consecutive elements); strided rows (the columns of a
// four-step pass) are staged in shared memory, consecutive threads on consecutive rows. Inverses
// conjugate on the way in and out; the four-step passes twiddle their output (gk_fft_args).
// What the plan knows of a launch is compiled in (runtime/fft_plan.py: Flow), so that the common
// case carries no run-time tests or multiplies per element: GK_FFT_DIRECT_IN / _OUT (in_step /
// out_step == 1), GK_FFT_CONJ_IN / _OUT, GK_FFT_SCALED (scale != 1), GK_FFT_TWIDDLED (tw_n != 0),
// GK_FFT_CROPPED (out_len < N) and GK_FFT_NDIM (batch_ndim); the arguments must agree with them.
// Twiddles: exp(-2 pi i k / N) = lo[k mod L] hi[k / L], L the power of two at or above sqrt(N),
// both tables filled by each block in shared memory with sincospi of exact rational angles.
// The four-step twiddle of a staged (column) pass: the output k = k0 + c S that thread t copies
// (k0 = t / ROWS, S = THREADS / ROWS) of the row whose index along dimension 0 is b is twiddled
// by exp(-2 pi i b k0 / tw_n), the thread's own, times exp(-2 pi i b S c / tw_n) from a table of
// ROWS x ceil(N / S) entries the block fills (one sincospi a thread where 256 threads take 16
// rows of 256, instead of one an element).
// Dynamic shared memory: GK_FFT_ROWS * (pitch * sizeof(gk_cpx) + GK_FFT_ROW_EXTRA_BYTES), the
// pitch N + N / 2^GK_FFT_PAD_SHIFT + 1, plus the tables' L + ceil(N / L) values when there is
// more than one pass (runtime/fft_plan.py: table_length), plus the twiddle steps' ROWS x
// ceil(N / S) values for a twiddled column pass (fft_plan.block reserves ROWS x ceil(N / TPR)).
#include "fft.cuh"

constexpr int kN = GK_FFT_N;
constexpr int kRadices[] = {GK_FFT_RADICES};
constexpr int kPasses = sizeof(kRadices) / sizeof(kRadices[0]);
constexpr int kTpr = GK_FFT_TPR;
constexpr int kRows = GK_FFT_ROWS;
constexpr int kThreads = GK_FFT_THREADS;
static_assert(kThreads % 32 == 0 && kThreads >= kRows * kTpr, "GK_FFT_THREADS");
static_assert(kThreads % kRows == 0, "GK_FFT_ROWS must divide GK_FFT_THREADS");
constexpr bool kDirectIn = GK_FFT_DIRECT_IN, kDirectOut = GK_FFT_DIRECT_OUT;
constexpr bool kConjIn = GK_FFT_CONJ_IN, kConjOut = GK_FFT_CONJ_OUT;
constexpr bool kScaled = GK_FFT_SCALED, kTwiddled = GK_FFT_TWIDDLED, kCropped = GK_FFT_CROPPED;
constexpr int kNdim = GK_FFT_NDIM;
static_assert(kNdim >= 0 && kNdim <= GK_FFT_BATCH_DIMS, "GK_FFT_NDIM");

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
constexpr int kPadPeriod = 1 << GK_FFT_PAD_SHIFT;
GK_DEV int gk_pad(int i) { return i + (i >> GK_FFT_PAD_SHIFT); }
constexpr int kPitch = kN + (kN >> GK_FFT_PAD_SHIFT) + 1;

// gk_pad(base + r * S) = gk_pad(base) + r * kPadStep<S> for 0 <= r < R when S is a multiple of
// the padding period, or S = 1 with base a multiple of R and R dividing the period (the first
// pass's writes): then a thread's R addresses are one register plus constant offsets.
template <int S, int R>
struct gk_pad_step {
    static constexpr bool folds = S % kPadPeriod == 0 || (S == 1 && kPadPeriod % R == 0);
    static constexpr int value = S + S / kPadPeriod;
};

// Pass P (radix R, Ns = the product of the radices before it): butterfly j reads elements
// j + r * N / R, twiddled by exp(-2 pi i (j % Ns) r / (Ns R)), and writes its outputs to
// (j / Ns) * Ns * R + j % Ns + r * Ns. The first pass reads through `load` (element j + r N / R
// as load(j, r N / R)) when kDirectIn, else from the row in shared memory, and then calls `ready`
// (every thread, active or not: the twiddle table's fill, overlapping the loads in flight); the
// last writes through `store` (store(base, r Ns, value)) when kDirectOut. A barrier stands
// between a pass's reads of the row and its writes, and after its writes.
template <int P, class Load, class Store, class Ready>
GK_DEV void gk_fft_passes(gk_cpx* row, const gk_cpx* table, int lane, bool active, Load load,
                          Store store, Ready ready) {
    if constexpr (P < kPasses) {
        constexpr int R = kRadices[P];
        constexpr int Ns = gk_radix_product<P>::value;
        constexpr int B = kN / R;
        constexpr int kPer = (B + kTpr - 1) / kTpr;
        constexpr bool kLast = P + 1 == kPasses;
        constexpr bool from_global = P == 0 && kDirectIn, to_global = kLast && kDirectOut;
        constexpr int kTwStep = kN / (Ns * R);  // twiddle r of j: table entry (j % Ns) r kTwStep
        gk_cpx v[kPer][R];
        if (active) {
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int j = lane + i * kTpr;
                if (kPer * kTpr == B || j < B) {
                    const int jm = j % Ns;
                    const gk_cpx* src = row + gk_pad(j);
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        gk_cpx x;
                        if constexpr (from_global) {
                            x = load(j, r * B);
                        } else if constexpr (gk_pad_step<B, R>::folds) {
                            x = src[r * gk_pad_step<B, R>::value];
                        } else {
                            x = row[gk_pad(j + r * B)];
                        }
                        if (Ns > 1 && r > 0) x = x * gk_table_twiddle(table, jm * r * kTwStep);
                        v[i][r] = x;
                    }
                }
            }
        }
        if constexpr (P == 0) ready();
        if (active) {
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int j = lane + i * kTpr;
                if (kPer * kTpr == B || j < B) gk_dft<R>(v[i]);
            }
        }
        if (!from_global && !to_global) gk_fft_sync();
        if (active) {
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int j = lane + i * kTpr;
                if (kPer * kTpr == B || j < B) {
                    const int base = (j / Ns) * Ns * R + j % Ns;
                    gk_cpx* dst = row + gk_pad(base);
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        if constexpr (to_global) {
                            store(base, r * Ns, v[i][r]);
                        } else if constexpr (gk_pad_step<Ns, R>::folds) {
                            dst[r * gk_pad_step<Ns, R>::value] = v[i][r];
                        } else {
                            row[gk_pad(base + r * Ns)] = v[i][r];
                        }
                    }
                }
            }
        }
        if (!to_global) gk_fft_sync();
        gk_fft_passes<P + 1>(row, table, lane, active, load, store, ready);
    } else {
        (void)row, (void)table, (void)lane, (void)active, (void)load, (void)store, (void)ready;
    }
}

// Where a row lives: its first element in the input and the output, and its index along batch
// dimension 0 (the four-step twiddle's). The last dimension needs no division (row < rows).
struct gk_fft_place {
    long long in, out, b0;
};
GK_DEV gk_fft_place gk_fft_locate(const gk_fft_args& a, long long row) {
    gk_fft_place p = {0, 0, 0};
#pragma unroll
    for (int d = 0; d < kNdim; ++d) {
        long long i = row;
        if (d + 1 < kNdim) {
            const long long n = a.batch_shape[d], q = gk_fft_quot(row, n);
            i = row - q * n;
            row = q;
        }
        if (d == 0) p.b0 = i;
        p.in += i * a.in_batch[d];
        p.out += i * a.out_batch[d];
    }
    return p;
}

// The copies of strided rows (kRows side by side): thread t always takes row t % kRows, its
// elements t / kRows + c kCopyStride.
constexpr int kCopyStride = kThreads / kRows;
constexpr int kCopies = (kN + kCopyStride - 1) / kCopyStride;
// The four-step twiddle by steps (a column pass, staged both ways): kRows x kCopies values.
constexpr bool kSteps = kTwiddled && !kDirectIn && !kDirectOut;
constexpr int kStepValues = kSteps ? kRows * kCopies : 0;

GK_FFT_KERNEL void __launch_bounds__(kThreads) gk_fft_rows(const gk_fft_args a) {
    unsigned char* smem = gk_fft_smem();
    gk_cpx* table = (gk_cpx*)smem;
    gk_cpx* steps = table + (kTable ? kLo + kHi : 0);
    gk_cpx* data = steps + kStepValues;
    long long* in_off = (long long*)(data + kRows * kPitch);
    long long* out_off = in_off + kRows;
    long long* batch0 = out_off + kRows;
    const int t = threadIdx.x;
    const long long row0 = (long long)blockIdx.x * kRows;
    const int live = (int)(a.rows - row0 < kRows ? a.rows - row0 : kRows);
    const gk_cpx* in = (const gk_cpx*)a.in;
    gk_cpx* out = (gk_cpx*)a.out;
    auto fill_table = [&] {
        if (kTable) {
            for (int e = t; e < kLo + kHi; e += kThreads) {
                table[e] = e < kLo ? gk_twiddle(e, kN) : gk_twiddle((long long)(e - kLo) * kLo, kN);
            }
        }
    };
    // What every output goes through on its way to memory: element k of a row whose index along
    // batch dimension 0 is b.
    const gk_real scale = kScaled ? (gk_real)a.scale : (gk_real)1;
    const double tw_inv = kTwiddled ? 1.0 / (double)a.tw_n : 0.0;
    auto conj_scale = [&](gk_cpx x) {
        if constexpr (kConjOut) x = gk_conj(x);
        return kScaled ? gk_scale(x, scale) : x;
    };
    auto finish = [&](long long b, int k, gk_cpx x) {
        if constexpr (kTwiddled) x = x * gk_twiddle_inv(b * k, tw_inv);  // b k < tw_n
        return conj_scale(x);
    };
    const int copy_row = t % kRows, copy_k = t / kRows;
    if (!kDirectIn || !kDirectOut) {
        if (t < kRows && row0 + t < a.rows) {
            const gk_fft_place p = gk_fft_locate(a, row0 + t);
            in_off[t] = p.in;
            out_off[t] = p.out;
            batch0[t] = p.b0;
        }
    }
    if constexpr (!kDirectIn) {
        fill_table();
        gk_fft_sync();
        if constexpr (kSteps) {  // b S c < tw_n: b < tw_n / N, S c < N
            for (int e = t; e < kStepValues; e += kThreads) {
                const int r = e / kCopies, c = e % kCopies;
                if (row0 + r < a.rows) {
                    steps[e] = gk_twiddle_inv(batch0[r] * kCopyStride * c, tw_inv);
                }
            }
        }
        if (copy_row < live) {
            const long long step = a.in_step;
            const gk_cpx* src = in + in_off[copy_row] + copy_k * step;
            gk_cpx* dst = data + copy_row * kPitch;
#pragma unroll 8
            for (int c = 0; c < kCopies; ++c) {
                const int k = copy_k + c * kCopyStride;
                if (kCopies * kCopyStride == kN || k < kN) {
                    const gk_cpx x = src[c * kCopyStride * step];
                    dst[gk_pad(k)] = kConjIn ? gk_conj(x) : x;
                }
            }
        }
        gk_fft_sync();
    }
    const int lane = t % kTpr, mine = t / kTpr < kRows ? t / kTpr : 0;
    const bool active = t / kTpr < kRows && mine < live;
    // This thread's row where it reads or writes global memory directly.
    gk_fft_place at = {0, 0, 0};
    if (kDirectIn || kDirectOut) at = gk_fft_locate(a, row0 + (active ? mine : 0));
    const gk_cpx* src = in + at.in;
    gk_cpx* dst = out + at.out;
    // Element j + d of this thread's row (d a compile-time offset after unrolling: one address
    // register per j, the offsets immediate).
    auto load = [&](int j, int d) {
        const gk_cpx x = (src + j)[d];
        return kConjIn ? gk_conj(x) : x;
    };
    auto store = [&](int j, int d, gk_cpx x) {
        if (!kCropped || j + d < a.out_len) (dst + j)[d] = finish(at.b0, j + d, x);
    };
    gk_fft_passes<0>(data + mine * kPitch, table, lane, active, load, store, [&] {
        if (kDirectIn) fill_table();
    });
    if constexpr (!kDirectOut) {
        if (copy_row < live) {
            const long long step = a.out_step, b = batch0[copy_row];
            const int len = kCropped ? (int)a.out_len : kN;
            gk_cpx* to = out + out_off[copy_row] + copy_k * step;
            const gk_cpx* from = data + copy_row * kPitch;
            // kSteps: exp(-2 pi i b copy_k / tw_n) here, the steps in c from the table.
            const gk_cpx base = kSteps ? gk_twiddle_inv(b * copy_k, tw_inv) : gk_cx(1, 0);
            const gk_cpx* step_c = steps + copy_row * kCopies;
#pragma unroll 8
            for (int c = 0; c < kCopies; ++c) {
                const int k = copy_k + c * kCopyStride;
                if ((!kCropped && kCopies * kCopyStride == kN) || k < len) {
                    gk_cpx x = from[gk_pad(k)];
                    to[c * kCopyStride * step] =
                        kSteps ? conj_scale(x * (base * step_c[c])) : finish(b, k, x);
                }
            }
        }
    }
}
