// Matrix product for Hopper (sm_90a): out = epilogue(a @ b), fp32 accumulation, batched.
// A persistent grid (one block per SM) walks output tiles in groups of GK_SM90_GROUP_M tile rows
// (neighbouring blocks share rows of a and columns of b in L2). Each block has three warpgroups:
// warpgroup 0 produces (one thread issues TMA bulk tensor copies of a and b K slices into a ring
// of GK_GEMM_STAGES shared-memory stages, each with a `full` and an `empty` mbarrier), warpgroups
// 1 and 2 consume (each multiplies its BM/2 rows of the tile by the whole BN columns with wgmma
// from the swizzled stages, accumulating in registers), then store through the fused epilogue
// (staged through shared memory, see the epilogue section) with masks for tails. TMA zero-fills
// what lies outside the operands, so tails in m, n and k need no special case in the main loop.

//
// Operand layouts (TMA reads them as they are, no copies): a K-major (a(m, k) at m * lda + k) or
// M-major (GK_A_MN: a(m, k) at k * lda + m, the .T of a row-major matrix); b K-major (b(k, n) at
// n * ldb + k: a row-major weight w (n, k) as linear's w.T) or N-major (GK_B_MN: b(k, n) at
// k * ldb + n). Rows of each stage are 128 bytes of the contiguous dimension, 128-byte swizzled;
// an MN-major operand is copied as 64-wide column chunks, each its own swizzle column.
//
// Split-K (p.splits > 1): tile t also names a K range; the block stores fp32 partial sums in
// p.workspace (splits, batch, m, n) and gk_gemm_splitk_reduce adds them in split order (the same
// bits every run) and applies the epilogue.
//
// Preemptible form (GK_GEMM_PREEMPT=1, for best-effort work): tiles come from the counter at
// p.next_tile instead of a fixed stride, handed to the consumers through a 2-slot ring in shared
// memory with its own mbarriers. The producer reads the device's preemption words (p.preempt)
// before taking a tile and every p.preempt_every K slices of it (the plan's default:
// GK_PREEMPT_EVERY). Raised before a tile: it takes
// none. Raised within one: it issues no more loads and puts a stop marker in the next stage of
// the ring (an arrival without bytes, its position in stop_it); the consumers drain the stages
// before it, then store their fp32 accumulators to the block's save slot (p.save) and record the
// tile and its next K slice in the block's record of the control words. Either way the block then
// exits. A relaunch (the same grid) first resumes its block's saved tile: accumulators loaded
// back, the same wgmma chain continued from that K slice, so every tile is the same sequence of
// operations in the same K order as in one uninterrupted launch (the same bits). The host is done
// once the counter passed the last tile and no saved tile waits. Split-K is not used in this form.
// Each launch also stamps the block's record with %globaltimer (geometry.cuh): the producer's
// check that found a word raised, its last that found them lowered, and the consumers' end, so the
// preemption latency (raise -> the launch's last block gone) is measured on the device.
//
// Defines: GK_GEMM_TYPE (GK_GEMM_F16 | GK_GEMM_BF16 | GK_GEMM_TF32), GK_GEMM_BM (128 | 256),
// GK_GEMM_BN (64 | 128 | 192 | 256), GK_GEMM_STAGES, GK_GEMM_SMEM (the dynamic shared memory
// the launch gives), GK_A_MN, GK_B_MN, GK_GEMM_WAIT1 (keep one wgmma group in flight),
// GK_EPI_BIAS, GK_EPI_ACT, GK_EPI_RESIDUAL, GK_GEMM_PREEMPT, GK_GEMM_EPI_UNROLL (epilogue passes
// in flight), GK_GEMM_BULK_STORE (the output rows leave shared memory by bulk copies, see the
// epilogue section).
#include "args.cuh"

#ifndef GK_GEMM_PREEMPT
#define GK_GEMM_PREEMPT 0
#endif
#ifndef GK_GEMM_BULK_STORE
#define GK_GEMM_BULK_STORE 0
#endif

#define GK_GEMM_F16 1
#define GK_GEMM_BF16 2
#define GK_GEMM_TF32 3
#if GK_GEMM_TYPE == GK_GEMM_TF32
#define GK_EPI_OUT GK_OUT_F32
#elif GK_GEMM_TYPE == GK_GEMM_BF16
#define GK_EPI_OUT GK_OUT_BF16
#else
#define GK_EPI_OUT GK_OUT_F16
#endif
#include "epilogue.cuh"

#if GK_GEMM_TYPE == GK_GEMM_TF32
#define GK_ELEM_BYTES 4
#define GK_KSTEP 8
#if GK_A_MN || GK_B_MN
#error "tf32 wgmma reads K-major operands only"
#endif
#else
#define GK_ELEM_BYTES 2
#define GK_KSTEP 16
#if GK_GEMM_TYPE == GK_GEMM_BF16
#define GK_WGMMA_AB "bf16"
#else
#define GK_WGMMA_AB "f16"
#endif
#endif
#include "sm90.cuh"
#include "wgmma.cuh"

#define GK_BK (GK_SM90_ROW_BYTES / GK_ELEM_BYTES)  // K per stage: 64 (16-bit) or 32 (tf32)
#define GK_WG_M (GK_GEMM_BM / 2)                   // rows per consumer warpgroup
#define GK_MI (GK_WG_M / 64)                       // m64 wgmmas per consumer and k step
#define GK_ACC (GK_GEMM_BN / 2)                    // accumulator registers per m64 block
#define GK_A_STAGE (GK_GEMM_BM * GK_SM90_ROW_BYTES)
#define GK_B_STAGE (GK_GEMM_BN * GK_SM90_ROW_BYTES)
#define GK_STAGE_BYTES (GK_A_STAGE + GK_B_STAGE)
#define GK_CHUNK_BYTES (GK_BK * GK_SM90_ROW_BYTES)  // a 64-wide MN chunk of one stage

#if GK_GEMM_BULK_STORE
#if GK_EPI_BIAS || GK_EPI_RESIDUAL || GK_EPI_ACT != GK_ACT_NONE || GK_EPI_OUT == GK_OUT_F32 || \
    GK_GEMM_PREEMPT
#error "the bulk-store epilogue takes plain 16-bit products (not the preemptible form)"
#endif
#define GK_BULK_PITCH (GK_GEMM_BN * 2 + GK_SM90_ROW_PAD)  // bytes of one staged output row
#define GK_EPI_WG_BYTES (GK_WG_M * GK_BULK_PITCH)         // one consumer's rows of outputs
#else
#define GK_EPI_WG_BYTES GK_SM90_EPI_BYTES
#endif
static_assert(GK_GEMM_STAGES * GK_STAGE_BYTES + 2 * GK_EPI_WG_BYTES + GK_SM90_SMEM_EXTRA <=
                  GK_GEMM_SMEM,
              "the stages do not fit the shared memory the launch gives");
// Barriers after the 1024-byte alignment slack: full[S], empty[S], and for GK_GEMM_PREEMPT
// tile_full[2], tile_empty[2], the two (tile, first K slice) slots and stop_it.
static_assert(1024 + 16 * GK_GEMM_STAGES + 56 <= GK_SM90_SMEM_EXTRA, "barriers beyond the extra");
static_assert(GK_GEMM_BN % 64 == 0 && GK_GEMM_BN <= 256, "BN: 64, 128, 192 or 256");
static_assert(GK_GEMM_BM == 128 || GK_GEMM_BM == 256, "BM: 128 or 256");
static_assert(GK_MI * GK_ACC <= 128, "accumulators beyond 128 registers per thread");

__device__ __forceinline__ void gk_wgmma(float (&d)[GK_ACC], gk_u64 da, gk_u64 db) {
#if GK_GEMM_TYPE == GK_GEMM_TF32
#define GK_WGMMA_CALL(N) gk_wgmma_tf32_n##N(d, da, db)
#else
#define GK_WGMMA_CALL(N) gk_wgmma_n##N<GK_A_MN, GK_B_MN>(d, da, db)
#endif
#if GK_GEMM_BN == 256
    GK_WGMMA_CALL(256);
#elif GK_GEMM_BN == 192
    GK_WGMMA_CALL(192);
#elif GK_GEMM_BN == 128
    GK_WGMMA_CALL(128);
#else
    GK_WGMMA_CALL(64);
#endif
}

// Tile t of the schedule: batch item z, split s, tile row tm and column tn. Tiles run through
// groups of GK_SM90_GROUP_M tile rows, down the rows of a group before moving one column right.
struct gk_tile {
    int z, s, tm, tn;
};

__device__ __forceinline__ gk_tile gk_tile_of(int t, const gk_gemm_sm90_args& p) {
    const int per_item = p.tiles_m * p.tiles_n;
    gk_tile r;
    const int item = t / per_item;  // item = s * batch + z
    int rest = t - item * per_item;
    r.s = item / p.batch;
    r.z = item - r.s * p.batch;
    const int per_group = GK_SM90_GROUP_M * p.tiles_n;
    const int group = rest / per_group;
    const int first_m = group * GK_SM90_GROUP_M;
    const int rows = min(p.tiles_m - first_m, GK_SM90_GROUP_M);
    rest -= group * per_group;
    r.tm = first_m + rest % rows;
    r.tn = rest / rows;
    return r;
}

#if GK_GEMM_PREEMPT
// Whether guaranteed work has raised any of the device's preemption words (written by the GPU
// itself, cuStreamWriteValue32): one 16-byte volatile load.
__device__ __forceinline__ bool gk_preempt_raised(const gk_gemm_sm90_args& p) {
    unsigned w0, w1, w2, w3;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(w0), "=r"(w1), "=r"(w2), "=r"(w3)
                 : "l"(p.preempt)
                 : "memory");
    return (w0 | w1 | w2 | w3) != 0u;
}
static_assert(GK_PREEMPT_SLOTS == 4, "gk_preempt_raised reads the words as one 16-byte load");

// The GPU's nanosecond clock (the same on every SM): the preemption stamps.
__device__ __forceinline__ gk_u64 gk_globaltimer() {
    gk_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t)::"memory");
    return t;
}

// The producer's checks of the words: when the last one found them lowered and when one found
// them raised (0: none yet), stamped just before the check's load, so a raise landed after
// `clear` and no later than `seen` plus one load's latency.
struct gk_preempt_check {
    gk_u64 clear, seen;
};

__device__ __forceinline__ bool gk_check_preempt(const gk_gemm_sm90_args& p, gk_preempt_check& c) {
    const gk_u64 now = gk_globaltimer();
    if (gk_preempt_raised(p)) {
        c.seen = now;
        return true;
    }
    c.clear = now;
    return false;
}

// The producer's next tile: the counter's, or -1 (none left, or preempted).
__device__ __forceinline__ int gk_take_tile(const gk_gemm_sm90_args& p, gk_preempt_check& c) {
    if (gk_check_preempt(p, c)) return -1;
    const int t = (int)atomicAdd(reinterpret_cast<unsigned*>(p.next_tile), 1u);
    return t < p.total_tiles ? t : -1;
}

// The control words (geometry.cuh): counter, saved tiles waiting, records unwritten, blocks
// started; then this block's record (saved tile + 1 or 0, its next K slice).
#define GK_CTL_PENDING 1
#define GK_CTL_FRESH 2
#define GK_CTL_STARTED 3

__device__ __forceinline__ gk_u64* gk_record_stamp(const gk_gemm_sm90_args& p, int word) {
    return reinterpret_cast<gk_u64*>(reinterpret_cast<int*>(p.next_tile) + GK_PREEMPT_CTL_WORDS +
                                     GK_PREEMPT_RECORD_WORDS * blockIdx.x + word);
}
static_assert(GK_PREEMPT_CTL_WORDS % 2 == 0 && GK_PREEMPT_RECORD_WORDS % 2 == 0 &&
                  GK_PREEMPT_STAMP_SEEN % 2 == 0 && GK_PREEMPT_STAMP_CLEAR % 2 == 0 &&
                  GK_PREEMPT_STAMP_EXIT % 2 == 0,
              "the stamps are 8-byte aligned words of the records");

// The saved tile of this block, as (tile, next K slice), or tile -1; clears the record. In the
// call's first launch the records hold garbage: each block writes its own empty, and the last
// block to start says the records are written (every block has read the flag by then).
__device__ __forceinline__ int2 gk_resume_record(const gk_gemm_sm90_args& p) {
    int* ctl = reinterpret_cast<int*>(p.next_tile);
    volatile int* record = ctl + GK_PREEMPT_CTL_WORDS + GK_PREEMPT_RECORD_WORDS * blockIdx.x;
    int2 r = make_int2(-1, 0);
    if (*(volatile int*)(ctl + GK_CTL_FRESH) == 0) {
        const int saved = record[0];
        if (saved > 0) {
            r = make_int2(saved - 1, record[1]);
            atomicSub(ctl + GK_CTL_PENDING, 1);
        }
    }
    record[0] = 0;
    __threadfence();
    if (atomicAdd(ctl + GK_CTL_STARTED, 1) == (int)gridDim.x - 1) {
        ctl[GK_CTL_STARTED] = 0;
        *(volatile int*)(ctl + GK_CTL_FRESH) = 0;
    }
    return r;
}

// This consumer thread's accumulators in the block's save slot: element (mi, r) of thread ct
// (0-255 over both consumer warpgroups) as float4 ((mi * GK_ACC / 4 + r / 4) * 256 + ct), so each
// 16-byte store or load of the 256 threads covers 4 KiB in a row.
__device__ __forceinline__ float* gk_save_slot(const gk_gemm_sm90_args& p) {
    return reinterpret_cast<float*>(p.save) + (gk_i64)blockIdx.x * (GK_GEMM_BM * GK_GEMM_BN) +
           4 * (threadIdx.x - 128);
}

__device__ __forceinline__ void gk_save_acc(const float (&acc)[GK_MI][GK_ACC], float* slot) {
#pragma unroll
    for (int mi = 0; mi < GK_MI; ++mi)
#pragma unroll
        for (int r = 0; r < GK_ACC; r += 4)
            asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(
                             slot + 4 * 256 * (mi * GK_ACC / 4 + r / 4)),
                         "f"(acc[mi][r]), "f"(acc[mi][r + 1]), "f"(acc[mi][r + 2]),
                         "f"(acc[mi][r + 3])
                         : "memory");
}

__device__ __forceinline__ void gk_load_acc(float (&acc)[GK_MI][GK_ACC], const float* slot) {
#pragma unroll
    for (int mi = 0; mi < GK_MI; ++mi)
#pragma unroll
        for (int r = 0; r < GK_ACC; r += 4)
            asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                         : "=f"(acc[mi][r]), "=f"(acc[mi][r + 1]), "=f"(acc[mi][r + 2]),
                           "=f"(acc[mi][r + 3])
                         : "l"(slot + 4 * 256 * (mi * GK_ACC / 4 + r / 4))
                         : "memory");
}
#endif

// --- epilogue ----------------------------------------------------------------------------------
// Each consumer warpgroup passes its accumulators 64 x 64 at a time through its own
// GK_SM90_EPI_BYTES of shared memory (floats, each row's column index XOR-swizzled by the row's
// low two bits: the fragment writes and the row reads are free of bank conflicts). 16 threads per
// row then apply the epilogue to 4 adjacent columns each and store them with one vector store, 8
// rows per pass: every store instruction of a warp covers whole 128-byte lines, and the epilogue's
// code (an activation's erf or exp) is one rolled loop per chunk instead of one copy per
// accumulator (unrolled over 128 accumulators, the erf-gelu epilogue outgrew the instruction
// cache and halved the whole kernel's speed: notes/gemm.md).
#define GK_EPI_COLS 64  // columns per chunk
static_assert(GK_SM90_EPI_BYTES == 64 * GK_EPI_COLS * 4, "a chunk is 64 rows of 64 floats");
#ifndef GK_GEMM_EPI_UNROLL
#define GK_GEMM_EPI_UNROLL 2  // passes of gk_epi_store in flight
#endif

struct alignas(16) gk_f32x4 {
    float v[4];
};

__device__ __forceinline__ unsigned gk_epi_at(unsigned chunk, int row, int col) {
    return chunk + 4u * (unsigned)(row * GK_EPI_COLS + (col ^ ((row & 3) << 3)));
}

// The 128 threads of consumer warpgroup cw (named barrier 1 + cw).
__device__ __forceinline__ void gk_epi_sync(int cw) {
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + cw) : "memory");
}

// Columns [64 c, 64 c + 64) of one m64 x BN accumulator block into the chunk (fragment layout of
// wgmma's D: thread (warp, lane) holds rows 16 warp + lane / 4 (+ 8) and columns 8 j + 2 (lane % 4)
// (+ 1) in acc[4 j + 2 h + (0, 1)]).
__device__ __forceinline__ void gk_epi_put(const float (&acc)[GK_ACC], int c, unsigned chunk,
                                           int lane, int warp) {
#pragma unroll
    for (int jj = 0; jj < GK_EPI_COLS / 8; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int j = c * (GK_EPI_COLS / 8) + jj;
            const int row = warp * 16 + (lane >> 2) + 8 * h;
            asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(
                             gk_epi_at(chunk, row, jj * 8 + 2 * (lane & 3))),
                         "f"(acc[4 * j + 2 * h]), "f"(acc[4 * j + 2 * h + 1])
                         : "memory");
        }
}

__device__ __forceinline__ gk_f32x4 gk_epi_get(unsigned chunk, int row, int col) {
    gk_f32x4 r;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(r.v[0]), "=f"(r.v[1]), "=f"(r.v[2]), "=f"(r.v[3])
                 : "r"(gk_epi_at(chunk, row, col))
                 : "memory");
    return r;
}

// Whether address x + i * stride (elements of `bytes`) is aligned for a vector of 4 for every i.
__device__ __forceinline__ bool gk_vec4(gk_u64 x, gk_i64 s0, gk_i64 s1, int bytes) {
    return ((x | (gk_u64)(s0 * bytes) | (gk_u64)(s1 * bytes)) & (gk_u64)(4 * bytes - 1)) == 0;
}

// dst[0, count) = v[0, count) rounded to the output type; `vec`: dst takes one 4-element store.
__device__ __forceinline__ void gk_store_out4(gk_out_t* dst, const gk_f32x4& v, int count,
                                              bool vec) {
    if (vec && count == 4) {
#if GK_EPI_OUT == GK_OUT_F32
        *reinterpret_cast<gk_f32x4*>(dst) = v;
#else
        asm volatile("st.global.v2.b32 [%0], {%1, %2};\n" ::"l"(dst), "r"(gk_f2h2(v.v[0], v.v[1])),
                     "r"(gk_f2h2(v.v[2], v.v[3]))
                     : "memory");
#endif
        return;
    }
#pragma unroll
    for (int e = 0; e < 4; ++e)
        if (e < count) {
#if GK_EPI_OUT == GK_OUT_F32
            dst[e] = v.v[e];
#else
            dst[e] = gk_f2h(v.v[e]);
#endif
        }
}

// What the block's consumers need to store a chunk: where the epilogue's operands lie and
// whether each takes 4-element vector accesses (uniform over the launch).
struct gk_epi_ctx {
    bool partial, vec_out, vec_res, vec_ws;
};

__device__ __forceinline__ gk_epi_ctx gk_epi_context(const gk_gemm_sm90_args& p) {
    gk_epi_ctx e;
    e.partial = p.splits > 1;
    e.vec_out = gk_vec4(p.out, p.so_m, p.so_z, sizeof(gk_out_t));
#if GK_EPI_RESIDUAL
    e.vec_res = gk_vec4(p.residual, p.sr_m, p.sr_z, sizeof(gk_out_t));
#else
    e.vec_res = false;
#endif
    e.vec_ws = gk_vec4(p.workspace, p.n, 0, 4);
    return e;
}

// Rows [row0, row0 + 64) x columns [col0, col0 + 64) of tile t from the chunk through the
// epilogue (or, split, as fp32 partial sums into the workspace); i: the thread in the warpgroup.
__device__ __forceinline__ void gk_epi_store(const gk_gemm_sm90_args& p, const gk_epi_ctx& e,
                                             const gk_tile& t, gk_i64 row0, gk_i64 col0,
                                             unsigned chunk, int i) {
    const int cq = 4 * (i & 15);
    const gk_i64 col = col0 + cq;
    const int count = (int)min((gk_i64)4, p.n - col);  // this thread's columns inside n
#if GK_EPI_BIAS
    gk_f32x4 bias = {{0.f, 0.f, 0.f, 0.f}};
    if (!e.partial) {
        const gk_out_t* b = reinterpret_cast<const gk_out_t*>(p.bias) + col * p.s_bias;
#pragma unroll
        for (int k = 0; k < 4; ++k)
            if (k < count) bias.v[k] = gk_load_out(b + k * p.s_bias);
    }
#endif
#pragma unroll GK_GEMM_EPI_UNROLL
    for (int pass = 0; pass < 8; ++pass) {
        const int r = pass * 8 + (i >> 4);
        gk_f32x4 v = gk_epi_get(chunk, r, cq);
        const gk_i64 row = row0 + r;
        if (row >= p.m || count <= 0) continue;
        if (e.partial) {
            float* ws = reinterpret_cast<float*>(p.workspace) +
                        ((gk_i64)(t.s * p.batch + t.z) * p.m + row) * p.n + col;
            if (e.vec_ws && count == 4) {
                *reinterpret_cast<gk_f32x4*>(ws) = v;
            } else {
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    if (k < count) ws[k] = v.v[k];
            }
            continue;
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) {
#if GK_EPI_BIAS
            v.v[k] += bias.v[k];
#endif
            v.v[k] = gk_activate(v.v[k]);
        }
#if GK_EPI_RESIDUAL
        const gk_out_t* res =
            reinterpret_cast<const gk_out_t*>(p.residual) + t.z * p.sr_z + row * p.sr_m + col;
        if (e.vec_res && count == 4) {
#if GK_EPI_OUT == GK_OUT_F32
            const gk_f32x4 rv = *reinterpret_cast<const gk_f32x4*>(res);
#pragma unroll
            for (int k = 0; k < 4; ++k) v.v[k] += rv.v[k];
#else
            const gk_u64 rv = *reinterpret_cast<const gk_u64*>(res);
#pragma unroll
            for (int k = 0; k < 4; ++k) v.v[k] += gk_h2f((gk_u16)(rv >> (16 * k)));
#endif
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (k < count) v.v[k] += gk_load_out(res + k);
        }
#endif
        gk_out_t* dst = reinterpret_cast<gk_out_t*>(p.out) + t.z * p.so_z + row * p.so_m + col;
        gk_store_out4(dst, v, count, e.vec_out);
    }
}

// Consumer warpgroup cw's rows of tile t (acc: its GK_MI m64 blocks) through the epilogue, chunk
// by chunk in a rolled loop (one copy of gk_epi_store; only the register-indexed copies into the
// chunk are unrolled).
__device__ __forceinline__ void gk_epilogue(const float (&acc)[GK_MI][GK_ACC],
                                            const gk_gemm_sm90_args& p, const gk_epi_ctx& e,
                                            const gk_tile& t, int cw, int first_mb, unsigned chunk,
                                            int lane, int warp) {
    constexpr int per_block = GK_GEMM_BN / GK_EPI_COLS;  // chunks of one m64 block
#pragma unroll 1
    for (int x = 0; x < GK_MI * per_block; ++x) {
        gk_epi_sync(cw);  // the chunk's last readers are done
#pragma unroll
        for (int y = 0; y < GK_MI * per_block; ++y)
            if (y == x) gk_epi_put(acc[y / per_block], y % per_block, chunk, lane, warp);
        gk_epi_sync(cw);
        gk_epi_store(p, e, t, (gk_i64)t.tm * GK_GEMM_BM + (first_mb + x / per_block) * 64,
                     (gk_i64)t.tn * GK_GEMM_BN + (x % per_block) * GK_EPI_COLS, chunk,
                     threadIdx.x & 127);
    }
}

#if GK_GEMM_BULK_STORE
// Bulk-store epilogue: consumer warpgroup cw rounds its accumulators to the output type into its
// GK_WG_M staged rows (GK_BULK_PITCH bytes apart: the padding turns the fragment writes' 8 rows of
// a warp into distinct banks), then each of its first GK_WG_M threads sends one row to global
// memory with one cp.async.bulk (shared -> global, its own bulk group) and the warpgroup goes on
// to its next tile without waiting: the copies run beside the next tile's loads and wgmmas, and
// before the rows are written again each sender waits until its copy has read them. The plan
// takes this form only where every row of the output is a whole number of 16-byte units at a
// 16-byte aligned address (n % 8 == 0; out, so_m and so_z aligned) and K is not split
// (gemm_plan.sm90_bulk).
__device__ __forceinline__ void gk_epilogue_bulk(const float (&acc)[GK_MI][GK_ACC],
                                                 const gk_gemm_sm90_args& p, const gk_tile& t,
                                                 int cw, unsigned rows, int lane, int warp) {
    const int i = threadIdx.x & 127;
    if (i < GK_WG_M) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    gk_epi_sync(cw);  // the previous tile's copies have read the rows
#pragma unroll
    for (int mi = 0; mi < GK_MI; ++mi)
#pragma unroll
        for (int j = 0; j < GK_GEMM_BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = mi * 64 + warp * 16 + (lane >> 2) + 8 * h;
                const unsigned at = rows + row * GK_BULK_PITCH + 2 * (8 * j + 2 * (lane & 3));
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(at),
                             "r"(gk_f2h2(acc[mi][4 * j + 2 * h], acc[mi][4 * j + 2 * h + 1]))
                             : "memory");
            }
    // The rows, written through the generic proxy, are read by the bulk copies' async proxy.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    gk_epi_sync(cw);
    if (i < GK_WG_M) {
        const gk_i64 row = (gk_i64)t.tm * GK_GEMM_BM + cw * GK_WG_M + i;
        const gk_i64 col = (gk_i64)t.tn * GK_GEMM_BN;
        if (row < p.m) {
            const unsigned bytes = 2u * (unsigned)min((gk_i64)GK_GEMM_BN, p.n - col);
            const gk_u64 dst = p.out + 2 * (gk_u64)(t.z * p.so_z + row * p.so_m + col);
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
                         "r"(rows + i * GK_BULK_PITCH), "r"(bytes)
                         : "memory");
        }
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
    }
}
#endif

extern "C" __global__ void __launch_bounds__(GK_SM90_THREADS, 1)
    gk_gemm_sm90(const __grid_constant__ gk_tensor_map map_a,
                 const __grid_constant__ gk_tensor_map map_b, const gk_gemm_sm90_args p) {
    extern __shared__ __align__(1024) unsigned char gk_smem_raw[];
    // The 128-byte swizzle repeats every 1024 bytes: stages start on such a boundary.
    const unsigned raw = gk_smem_u32(gk_smem_raw);
    const unsigned base = (raw + 1023u) & ~1023u;
    const unsigned a_stages = base;
    const unsigned b_stages = base + GK_GEMM_STAGES * GK_A_STAGE;
    const unsigned epi = b_stages + GK_GEMM_STAGES * GK_B_STAGE;  // GK_EPI_WG_BYTES per consumer
    const unsigned bars = epi + 2 * GK_EPI_WG_BYTES;              // full[S], then empty[S]
    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) & 3, lane = threadIdx.x & 31;

    if (threadIdx.x == 0) {
        for (int s = 0; s < GK_GEMM_STAGES; ++s) {
            gk_mbar_init(bars + 8 * s, 1);                         // the producer's expect_tx
            gk_mbar_init(bars + 8 * (GK_GEMM_STAGES + s), 2 * 4);  // each consumer warp
        }
#if GK_GEMM_PREEMPT
        for (int s = 0; s < 2; ++s) {
            gk_mbar_init(bars + 16 * GK_GEMM_STAGES + 8 * s, 1);           // tile_full
            gk_mbar_init(bars + 16 * GK_GEMM_STAGES + 16 + 8 * s, 2 * 4);  // tile_empty
        }
        // stop_it (after the tile slots): no stop marker yet.
        *reinterpret_cast<volatile int*>(gk_smem_raw + (bars + 16 * GK_GEMM_STAGES + 48 - raw)) =
            -1;
#endif
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

#if GK_GEMM_PREEMPT
    const unsigned tile_full = bars + 16 * GK_GEMM_STAGES, tile_empty = tile_full + 16;
    volatile int* tile_slot = reinterpret_cast<volatile int*>(gk_smem_raw + (tile_full + 32 - raw));
    // The ring position of the stop marker (only ever written once, before its stage's arrival).
    volatile int* stop_it = tile_slot + 4;
    int first_k = -1;      // the tile's first K slice when it resumes a saved one, else -1
    bool stopped = false;  // producer: the block yielded inside a tile
    gk_preempt_check check = {0, 0};  // producer: its checks' stamps
// Tile j of this block: handed over in slot j & 1 (tile, first K slice), in that slot's phase
// (j >> 1) & 1.
#define GK_FOR_TILES(ti, who)  \
    for (int j = 0, ti;; ++j)  \
        if ((ti = who(j)) < 0) \
            break;             \
        else
    auto produce_tile = [&](int j) {
        const int slot = j & 1;
        int t = -1;
        first_k = -1;
        if (j == 0) {
            const int2 r = gk_resume_record(p);
            t = r.x;
            first_k = t >= 0 ? r.y : -1;
        }
        gk_mbar_wait(tile_empty + 8 * slot, ((unsigned)(j >> 1) & 1u) ^ 1u);
        if (t < 0 && !stopped) t = gk_take_tile(p, check);
        tile_slot[2 * slot] = t;
        tile_slot[2 * slot + 1] = first_k;
        gk_mbar_arrive(tile_full + 8 * slot);  // releases the slot's stores to the consumers
        return t;
    };
    auto consume_tile = [&](int j) {
        const int slot = j & 1;
        gk_mbar_wait(tile_full + 8 * slot, (unsigned)(j >> 1) & 1u);
        const int t = tile_slot[2 * slot];
        first_k = tile_slot[2 * slot + 1];
        __syncwarp();
        if (lane == 0) gk_mbar_arrive(tile_empty + 8 * slot);
        return t;
    };
#define GK_PRODUCER_TILES(ti) GK_FOR_TILES(ti, produce_tile)
#define GK_CONSUMER_TILES(ti) GK_FOR_TILES(ti, consume_tile)
#define GK_FIRST_K(k0) (first_k >= 0 ? first_k : (k0))
#else
    const int total = p.total_tiles;
#define GK_PRODUCER_TILES(ti) for (int ti = blockIdx.x; ti < total; ti += gridDim.x)
#define GK_CONSUMER_TILES(ti) for (int ti = blockIdx.x; ti < total; ti += gridDim.x)
#define GK_FIRST_K(k0) (k0)
#endif
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(GK_SM90_PRODUCER_REGS));
        if (warp == 0 && lane == 0) {
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map_a) : "memory");
            asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map_b) : "memory");
            int it = 0;
            GK_PRODUCER_TILES(ti) {
                const gk_tile t = gk_tile_of(ti, p);
                const int k0 = t.s * p.k_tiles_per_split;
                const int k1 = min(k0 + p.k_tiles_per_split, p.k_tiles);
                const int m0 = t.tm * GK_GEMM_BM, n0 = t.tn * GK_GEMM_BN;
                const int za = p.a_batched ? t.z : 0, zb = p.b_batched ? t.z : 0;
#if GK_GEMM_PREEMPT
                // The tile's first K slice is checked, then every p.preempt_every.
                int until_check = 1;
#endif
                for (int kt = GK_FIRST_K(k0); kt < k1; ++kt, ++it) {
                    const int stage = it % GK_GEMM_STAGES;
                    const unsigned phase = (unsigned)(it / GK_GEMM_STAGES) & 1u;
                    const unsigned full = bars + 8 * stage;
                    gk_mbar_wait(bars + 8 * (GK_GEMM_STAGES + stage), phase ^ 1u);
#if GK_GEMM_PREEMPT
                    bool stop = false;
                    if (--until_check == 0) {
                        until_check = p.preempt_every;
                        stop = gk_check_preempt(p, check);
                    }
                    if (stop) {
                        // No more loads: the stage carries the stop marker instead (an arrival
                        // without bytes completes its phase), so the consumers drain the stages
                        // before it and never wait for one that will not come.
                        *stop_it = it;
                        gk_mbar_arrive(full);
                        stopped = true;
                        ++it;
                        break;
                    }
#endif
                    gk_mbar_expect_tx(full, GK_STAGE_BYTES);
                    const unsigned sa = a_stages + stage * GK_A_STAGE;
                    const unsigned sb = b_stages + stage * GK_B_STAGE;
                    const int kk = kt * GK_BK;
#if GK_A_MN
#pragma unroll
                    for (int c = 0; c < GK_GEMM_BM / 64; ++c)
                        gk_tma_load(sa + c * GK_CHUNK_BYTES, &map_a, full, m0 + 64 * c, kk, za);
#else
                    gk_tma_load(sa, &map_a, full, kk, m0, za);
#endif
#if GK_B_MN
#pragma unroll
                    for (int c = 0; c < GK_GEMM_BN / 64; ++c)
                        gk_tma_load(sb + c * GK_CHUNK_BYTES, &map_b, full, n0 + 64 * c, kk, zb);
#else
                    gk_tma_load(sb, &map_b, full, kk, n0, zb);
#endif
                }
            }
#if GK_GEMM_PREEMPT
            *gk_record_stamp(p, GK_PREEMPT_STAMP_SEEN) = check.seen;
            *gk_record_stamp(p, GK_PREEMPT_STAMP_CLEAR) = check.clear;
#endif
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(GK_SM90_CONSUMER_REGS));
        const int cw = wg - 1;  // consumer warpgroup: rows [cw * GK_WG_M, (cw + 1) * GK_WG_M)
        const int first_mb = cw * GK_MI;  // its first m64 block of a tile
        const unsigned chunk = epi + cw * GK_EPI_WG_BYTES;
#if !GK_GEMM_BULK_STORE
        const gk_epi_ctx ectx = gk_epi_context(p);
#endif
        int it = 0;
        GK_CONSUMER_TILES(ti) {
            const gk_tile t = gk_tile_of(ti, p);
            const int k0 = t.s * p.k_tiles_per_split;
            const int k1 = min(k0 + p.k_tiles_per_split, p.k_tiles);
            float acc[GK_MI][GK_ACC];
#pragma unroll
            for (int mi = 0; mi < GK_MI; ++mi)
#pragma unroll
                for (int r = 0; r < GK_ACC; ++r) acc[mi][r] = 0.f;
#if GK_GEMM_PREEMPT
            if (first_k >= 0) gk_load_acc(acc, gk_save_slot(p));  // a saved tile resumes
            int stop_kt = -1;
#endif
#if GK_GEMM_WAIT1
            int prev_stage = -1;
#endif
            for (int kt = GK_FIRST_K(k0); kt < k1; ++kt, ++it) {
                const int stage = it % GK_GEMM_STAGES;
                gk_mbar_wait(bars + 8 * stage, (unsigned)(it / GK_GEMM_STAGES) & 1u);
#if GK_GEMM_PREEMPT
                if (it == *stop_it) {  // the stop marker: no data in this stage
                    if (lane == 0) gk_mbar_arrive(bars + 8 * (GK_GEMM_STAGES + stage));
                    stop_kt = kt;
                    ++it;
                    break;
                }
#endif
                const unsigned sa = a_stages + stage * GK_A_STAGE;
                const unsigned sb = b_stages + stage * GK_B_STAGE;
                gk_wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < GK_BK / GK_KSTEP; ++ks) {
#if GK_B_MN
                    const gk_u64 db =
                        gk_desc(sb + ks * GK_KSTEP * GK_SM90_ROW_BYTES, GK_CHUNK_BYTES);
#else
                    const gk_u64 db = gk_desc(sb + ks * GK_KSTEP * GK_ELEM_BYTES, 16);
#endif
#pragma unroll
                    for (int mi = 0; mi < GK_MI; ++mi) {
                        const int mb = first_mb + mi;  // m64 block of the tile
#if GK_A_MN
                        const gk_u64 da =
                            gk_desc(sa + mb * GK_CHUNK_BYTES + ks * GK_KSTEP * GK_SM90_ROW_BYTES,
                                    GK_CHUNK_BYTES);
#else
                        const gk_u64 da = gk_desc(
                            sa + mb * 64 * GK_SM90_ROW_BYTES + ks * GK_KSTEP * GK_ELEM_BYTES, 16);
#endif
                        gk_wgmma(acc[mi], da, db);
                    }
                }
                gk_wgmma_commit();
#if GK_GEMM_WAIT1
                // The group just issued may still run; the one before it has finished reading
                // its stage, which goes back to the producer.
                gk_wgmma_wait<1>();
                if (prev_stage >= 0 && lane == 0)
                    gk_mbar_arrive(bars + 8 * (GK_GEMM_STAGES + prev_stage));
                prev_stage = stage;
#else
                gk_wgmma_wait<0>();
                if (lane == 0) gk_mbar_arrive(bars + 8 * (GK_GEMM_STAGES + stage));
#endif
            }
#if GK_GEMM_WAIT1
            gk_wgmma_wait<0>();
            if (prev_stage >= 0 && lane == 0)
                gk_mbar_arrive(bars + 8 * (GK_GEMM_STAGES + prev_stage));
#endif
#if GK_GEMM_PREEMPT
            if (stop_kt >= 0) {  // yielded: save the tile for the relaunch (the block ends next)
                gk_save_acc(acc, gk_save_slot(p));
                if (threadIdx.x == 128) {
                    int* record = reinterpret_cast<int*>(p.next_tile) + GK_PREEMPT_CTL_WORDS +
                                  GK_PREEMPT_RECORD_WORDS * blockIdx.x;
                    record[0] = ti + 1;
                    record[1] = stop_kt;
                    atomicAdd(reinterpret_cast<int*>(p.next_tile) + GK_CTL_PENDING, 1);
                }
                continue;
            }
#endif
#if GK_GEMM_BULK_STORE
            gk_epilogue_bulk(acc, p, t, cw, chunk, lane, warp);
#else
            gk_epilogue(acc, p, ectx, t, cw, first_mb, chunk, lane, warp);
#endif
        }
#if GK_GEMM_BULK_STORE
        // The last copies done before the block (and its shared memory) goes.
        if ((threadIdx.x & 127) < GK_WG_M)
            asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
#if GK_GEMM_PREEMPT
        // Both consumer warpgroups are done (named barrier 3): the block's exit, stamped.
        asm volatile("bar.sync 3, 256;\n" ::: "memory");
        if (threadIdx.x == 128) *gk_record_stamp(p, GK_PREEMPT_STAMP_EXIT) = gk_globaltimer();
#endif
    }
}

// out = epilogue(sum over s of workspace[s]) in split order: the same bits every run.
extern "C" __global__ void __launch_bounds__(GK_SPLITK_THREADS)
    gk_gemm_splitk_reduce(const gk_gemm_sm90_args p) {
    gk_splitk_reduce(p);
}
