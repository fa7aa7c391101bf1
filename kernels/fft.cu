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
// pitch N + N / 2^GK_FFT_PAD_SHIFT + 1, twice over with GK_FFT_PIPE (two row buffers), plus the
// tables' L + ceil(N / L) values when there is more than one pass (runtime/fft_plan.py:
// table_length). Blocks loop over groups of rows (grid-stride), so any grid is right.
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
template <int P, class Load, class Store, class Hook>
GK_DEV void gk_fft_passes(gk_cpx* row, const gk_cpx* table, int lane, bool active, bool direct_in,
                          bool direct_out, bool in_place, Load load, Store store, Hook hook) {
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
        if (P == 0 && in_place) {  // `load` read the row's own buffer: a barrier, then the hook
            gk_fft_sync();
            hook();
        } else if (!from_global && !to_global) {
            gk_fft_sync();
        }
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
        gk_fft_passes<P + 1>(row, table, lane, active, direct_in, direct_out, false, load, store,
                             hook);
    } else {
        (void)row, (void)table, (void)lane, (void)active, (void)direct_in, (void)direct_out;
        (void)in_place, (void)load, (void)store, (void)hook;
    }
}

// 16 bytes from global to shared memory without registers (cp.async on sm_80+; the emulator's
// copies land only when waited for), and the wait for this thread's copies.
GK_DEV void gk_fft_copy16(gk_cpx* dst, const gk_cpx* src) {
#if defined(GK_EMULATE)
    gk_cp16(gk_smem_addr(dst), src, true);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(GK_HIP)
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
#else
    dst[0] = src[0];
    if (sizeof(gk_cpx) < 16) dst[1] = src[1];
#endif
}
GK_DEV void gk_fft_copy_wait() {
#if defined(GK_EMULATE)
    gk_cp_commit();
    gk_cp_wait<0>();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(GK_HIP)
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
#endif
}

// GK_FFT_AHEAD > 0 (rows contiguous in memory): each block first asks the L2 cache for the rows of
// the group GK_FFT_AHEAD groups on (the block the device will run about when this one is done:
// the planner's blocks resident at once), one prefetch of 128 bytes a thread, so that block's
// loads hit L2 instead of waiting on DRAM. A hint only: the results do not depend on it.
#ifndef GK_FFT_AHEAD
#define GK_FFT_AHEAD 0
#endif
GK_DEV void gk_fft_prefetch_l2(const void* p) {
#if !defined(GK_EMULATE) && defined(__CUDA_ARCH__) && !defined(GK_HIP)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

// A block takes groups of kRows rows, blockIdx.x first, then every gridDim.x-th. With GK_FFT_PIPE
// and rows contiguous in memory (in_step 1) the block has two row buffers: while it transforms
// one group, the next group's rows are on their way into the other (16-byte copies issued after
// the first pass has read its inputs, waited for at the top of the next round); the first pass
// reads its group unpadded from the buffer (row r at r * N) and writes its outputs padded into
// the same buffer. The butterflies, twiddles and their order are those of the other schedule.
// Per buffer: kRows rows of kPitch, then in_off, out_off, batch0 of each row (after both buffers).
#ifndef GK_FFT_PIPE
#define GK_FFT_PIPE 0
#endif
constexpr bool kPipe = GK_FFT_PIPE;
constexpr int kBufs = kPipe ? 2 : 1;

// A group's `live` rows (their offsets in_off, visible to all) on their way into buffer buf: row r
// at r * kN, 16 bytes a copy where both ends are aligned, else element by element.
GK_DEV void gk_fft_stage(const gk_cpx* in, const long long* in_off, gk_cpx* buf, int live, int t) {
    constexpr int kPer = 16 / (int)sizeof(gk_cpx);
    if (kN % kPer == 0) {
        constexpr int kChunks = kN / kPer;
        for (int e = t; e < kRows * kChunks; e += kThreads) {
            const int r = e / kChunks, c = e % kChunks;
            if (r < live) {
                const gk_cpx* s = in + in_off[r] + c * kPer;
                gk_cpx* d = buf + r * kN + c * kPer;
                if ((((unsigned long long)s | (unsigned long long)d) & 15) == 0) {
                    gk_fft_copy16(d, s);
                } else {
                    for (int q = 0; q < kPer; ++q) d[q] = s[q];
                }
            }
        }
    } else {
        for (int e = t; e < kRows * kN; e += kThreads) {
            const int r = e / kN, k = e % kN;
            if (r < live) buf[r * kN + k] = in[in_off[r] + k];
        }
    }
}

GK_FFT_KERNEL void __launch_bounds__(kThreads) gk_fft_rows(const gk_fft_args a) {
    unsigned char* smem = gk_fft_smem();
    gk_cpx* table = (gk_cpx*)smem;
    gk_cpx* data0 = table + (kTable ? kLo + kHi : 0);
    long long* meta0 = (long long*)(data0 + kBufs * kRows * kPitch);
    int* zero = (int*)(meta0 + kBufs * 3 * kRows);  // GK_FFT_PIPE: a zero (see the loop)
    const int t = threadIdx.x;
    if (kPipe && t == 0) *zero = 0;
    if (GK_FFT_AHEAD > 0 && a.in_step == 1) {
        // Row offsets in 32-bit divisions (the planner asks for this below 2^31 rows).
        const long long ahead = (long long)blockIdx.x + GK_FFT_AHEAD;
        constexpr int kLines = (int)((kN * sizeof(gk_cpx) + 127) / 128);
        if (ahead * kRows < a.rows) {
            for (int e = t; e < kRows * kLines; e += kThreads) {
                const int r = e / kLines, line = e % kLines;
                const unsigned long long row = (unsigned long long)ahead * kRows + r;
                if (row < (unsigned long long)a.rows) {
                    long long off = 0;
                    unsigned rest = (unsigned)row;
                    for (int d = 0; d < a.batch_ndim; ++d) {
                        const unsigned extent = (unsigned)a.batch_shape[d];
                        off += (long long)(rest % extent) * a.in_batch[d];
                        rest /= extent;
                    }
                    gk_fft_prefetch_l2((const char*)((const gk_cpx*)a.in + off) + line * 128);
                }
            }
        }
    }
    if (kTable) {
        for (int e = t; e < kLo + kHi; e += kThreads) {
            table[e] = e < kLo ? gk_twiddle(e, kN) : gk_twiddle((long long)(e - kLo) * kLo, kN);
        }
    }
    const gk_cpx* in = (const gk_cpx*)a.in;
    gk_cpx* out = (gk_cpx*)a.out;
    const gk_real scale = (gk_real)a.scale;
    const double tw_inv = a.tw_n ? 1.0 / (double)a.tw_n : 0.0;
    const long long groups = (a.rows + kRows - 1) / kRows;
    // GK_FFT_PIPE instances take contiguous rows only (step 1 in and out: the planner's choice).
    const bool direct_in = kPipe || a.in_step == 1, direct_out = kPipe || a.out_step == 1;
    constexpr bool pipe = kPipe;
    auto live_of = [&](long long g) {
        const long long left = a.rows - g * kRows;
        return (int)(left < kRows ? left : kRows);
    };
    // Offsets of group g's rows into buffer b's slots (threads below kRows, one row each).
    auto describe = [&](long long g, int b, int t, long long* meta0) {
        long long* m = meta0 + b * 3 * kRows;
        if (t < kRows && t < live_of(g)) {
            const long long row = g * kRows + t;
            if (kPipe) {  // 32-bit divisions: no division subroutine called in the loop
                long long in_o = 0, out_o = 0;
                unsigned rest = (unsigned)row;
                for (int d = 0; d < a.batch_ndim; ++d) {
                    const unsigned extent = (unsigned)a.batch_shape[d], i = rest % extent;
                    rest /= extent;
                    in_o += (long long)i * a.in_batch[d];
                    out_o += (long long)i * a.out_batch[d];
                }
                m[t] = in_o;
                m[kRows + t] = out_o;
                m[2 * kRows + t] = a.batch_ndim ? (unsigned)row % (unsigned)a.batch_shape[0] : 0;
            } else {
                m[t] = gk_fft_row_offset(row, a.batch_ndim, a.batch_shape, a.in_batch);
                m[kRows + t] = gk_fft_row_offset(row, a.batch_ndim, a.batch_shape, a.out_batch);
                m[2 * kRows + t] = a.batch_ndim ? row % a.batch_shape[0] : 0;
            }
        }
    };
    long long g = blockIdx.x;
    int b = 0;
    if (pipe && g < groups) {
        describe(g, 0, t, meta0);
        gk_fft_sync();
        gk_fft_stage(in, meta0, data0, live_of(g), t);
    }
#if GK_FFT_PIPE
#pragma unroll 1
    for (; g < groups; g += gridDim.x, b ^= 1) {
#else
    if (g < groups) {  // one group a block: the planner's grid covers them
#endif
        const long long next = g + gridDim.x;
        // The thread's index, the launch's switches and the buffers' addresses offset by a zero
        // read from shared memory each round (volatile: the compiler cannot keep it), meant to
        // keep what the passes compute from them from being held across rounds and the body
        // from being copied per combination of switches. It cut 4096 in float from 164 to 128
        // registers, still twice the one-group instance's 62 (NVRTC 13, sm_90; two rounds
        // unrolled by hand hold as many, the cause not found): fft_plan.PIPELINE is off.
        const int z = kPipe ? *(volatile int*)zero : 0;
        const int tr = t + z;
        long long* const mz = meta0 + z;
        gk_cpx* const dz = data0 + z;
        const gk_cpx* const in_z = in + z;
        gk_cpx* const out_z = out + z;
        if (pipe) {
            gk_fft_copy_wait();
        } else {
            if (g != blockIdx.x) gk_fft_sync();  // the last round's reads of the buffer done
            describe(g, b, t, meta0);
        }
        gk_fft_sync();
        if (pipe && next < groups) describe(next, b ^ 1, tr, mz);
        gk_cpx* data = dz + b * kRows * kPitch;
        const long long* in_off = mz + b * 3 * kRows;
        const long long* out_off = in_off + kRows;
        const long long* batch0 = out_off + kRows;
        const int live = live_of(g);
        const int flags = z + ((int)direct_in | (int)direct_out << 1 | a.conj_in << 2 |
                               a.conj_out << 3 | (a.tw_n != 0) << 4);
        const bool d_in = kPipe || (flags & 1), d_out = kPipe || (flags & 2);
        const int lane = tr % kTpr, mine = tr / kTpr < kRows ? tr / kTpr : 0;
        const bool conj_in = flags & 4, conj_out = flags & 8, twiddled = flags & 16;
        const long long out_step = a.out_step, out_len = a.out_len;
        // What every output goes through on its way to memory: element k of row r.
        auto finish = [=](int r, int k, gk_cpx x) {
            if (twiddled) x = x * gk_twiddle_inv(batch0[r] * k, tw_inv);  // b k < tw_n
            if (conj_out) x = gk_conj(x);
            out_z[out_off[r] + k * out_step] = gk_scale(x, scale);
        };
        if (!d_in) {
            for (int e = tr; e < kRows * kN; e += kThreads) {
                const int r = e % kRows, k = e / kRows;
                if (r < live) {
                    gk_cpx x = in_z[in_off[r] + k * a.in_step];
                    data[r * kPitch + gk_pad(k)] = conj_in ? gk_conj(x) : x;
                }
            }
            gk_fft_sync();
        }
        const gk_cpx* src = pipe ? data + mine * kN : in_z + (mine < live ? in_off[mine] : 0);
        auto load = [=](int k) { return conj_in ? gk_conj(src[k]) : src[k]; };
        auto store = [=](int k, gk_cpx x) {
            if (k < out_len) finish(mine, k, x);
        };
        const bool more = pipe && next < groups;
        const int next_live = more ? live_of(next) : 0;
        const long long* next_off = mz + (b ^ 1) * 3 * kRows;
        gk_cpx* next_buf = dz + (b ^ 1) * kRows * kPitch;
        auto hook = [=]() {
            if (more) gk_fft_stage(in_z, next_off, next_buf, next_live, tr);
        };
        gk_fft_passes<0>(data + mine * kPitch, table + z, lane, tr / kTpr < kRows && mine < live,
                         d_in, d_out, pipe, load, store, hook);
        if (!d_out) {
            for (int e = tr; e < kRows * kN; e += kThreads) {
                const int r = e % kRows, k = e / kRows;
                if (r < live && k < a.out_len) finish(r, k, data[r * kPitch + gk_pad(k)]);
            }
        }
    }
}
