// Launch geometry that kernels and their host-side planners share. The host reads every value
// through gpukit._native.constants() (GK_CONSTANTS below), never a copy of it.
#pragma once

#define GK_MAX_DIMS 8
#define GK_MAX_OPERANDS 4  // elementwise: operand 0 is the output
#define GK_MAX_BATCH_DIMS 4

#define GK_BLOCK 256  // threads per block of the grid-stride kernels
#define GK_LANES 32   // threads of a row group (a CUDA warp; half an AMD wavefront)
#define GK_VEC_BYTES \
    16  // bytes of one vector access (gk_vec16; the contiguous elementwise
        // kernel's access of its widest operand)

// kernels/elementwise.cu's gk_ew_contig: 16-byte vectors a thread per step, blocks per SM at most.
#define GK_EW_UNROLL 1
#define GK_EW_BLOCKS_PER_SM 32

// kernels/reduce.cu: threads of every reduction block, loads each thread keeps in flight, room
// for the largest partial state of a split reduction (argmax, var).
#define GK_RED_THREADS 256
#define GK_RED_UNROLL 4
#define GK_RED_STATE_BYTES 32

// kernels/scan.cu: tiles of GK_SCAN_THREADS * GK_SCAN_CHUNKS 16-byte chunks, staged in dynamic
// shared memory (48 KiB: four tiles to an SM of 227 KiB).
#define GK_SCAN_THREADS 256
#define GK_SCAN_CHUNKS 12
// Tiles by which gk_scan_tiles publishes a tile's sum ahead of its scan, on launches of more tiles
// than the GPU holds at once (0: each tile publishes its own sum when it scans). 128 tiles (6 MiB)
// measured best on the H100: the scan's second read of a tile still hits L2 (512 no longer does).
#define GK_SCAN_LEAD 128

// kernels/transpose.cu: square tiles of at most GK_TRANSPOSE_TILE elements a side.
#define GK_TRANSPOSE_TILE 64
#define GK_TRANSPOSE_THREADS 256

// kernels/nn_rows.cu: elements of a row each thread holds in registers at most, threads of a row
// kernel's block at most (128 registers each), room for one piece's statistics of a split row.
// A row a block streams is first staged in shared memory when it (and its residual) take at most
// GK_ROWS_STAGED_BYTES.
#define GK_ROWS_MAX_ITEMS 32
#define GK_ROWS_MAX_THREADS 512
#define GK_ROWS_STATE_BYTES 32
#define GK_ROWS_STAGED_BYTES 65536

// kernels/matmul.cu: blocks of GK_MATMUL_THREADS x GK_MATMUL_THREADS threads.
#define GK_MATMUL_THREADS 16
// kernels/matmul_skinny.cu: at most GK_SKINNY_M rows, a warp per column, GK_SKINNY_WARPS a block.
#define GK_SKINNY_M 8
#define GK_SKINNY_WARPS 8

// kernels/matmul_mma.cu's tiles.
#define GK_MMA_BM 128
#define GK_MMA_BN 128
#define GK_MMA_BK 32
#define GK_MMA_STAGES 4
#define GK_MMA_THREADS 256
#define GK_MMA_TILE_BYTES (GK_MMA_BM * GK_MMA_BK * 2)  // one operand's tile in one stage
#define GK_MMA_SMEM (GK_MMA_STAGES * 2 * GK_MMA_TILE_BYTES)

// kernels/gemm_sm90.cu (sm_90a): a producer warpgroup and two consumer warpgroups; stages of K
// slices whose shared-memory rows span the 128-byte swizzle; as many stages as the budget holds.
#define GK_SM90_THREADS 384
#define GK_SM90_ROW_BYTES 128       // one shared-memory row of a K slice: the 128-byte swizzle span
#define GK_SM90_SMEM_BUDGET 230400  // the 227 KiB a block may have, less GK_SM90_SMEM_EXTRA
#define GK_SM90_SMEM_EXTRA 2048     // 1024-byte alignment slack and the mbarriers
#define GK_SM90_EPI_BYTES 16384     // per consumer: a 64 x 64 float chunk of the epilogue
#define GK_SM90_ROW_PAD 16  // bulk-store epilogue (GK_GEMM_BULK_STORE): bytes after each staged row
#define GK_SM90_MAX_STAGES 8
#define GK_SM90_PRODUCER_REGS 40  // setmaxnreg: 128 x 40 + 256 x 232 <= 65536
#define GK_SM90_CONSUMER_REGS 232
#define GK_SM90_GROUP_M 8      // tile rows per group of the tile order (L2 reuse)
#define GK_SPLITK_THREADS 256  // block of the split-K reduction

// Preemption (issue 17): a device's flag is GK_PREEMPT_SLOTS 32-bit words, one per guaranteed
// stream that may have work in flight at once (each raises and lowers its own word on the GPU);
// a preemptible kernel yields while any word is non-zero, read as one 16-byte load.
#define GK_PREEMPT_SLOTS 4
// The preemptible GEMM checks the words every GK_PREEMPT_EVERY K slices of a tile (the plan's
// default; the launch's preempt_every field) and saves the tile it stops in (fp32 accumulators,
// one save slot per block). Its control words: the tile counter, the saved tiles not yet resumed,
// whether the save records are unwritten (the call's first launch), the blocks started; then one
// record per block: (saved tile + 1 or 0, its next K slice), then three %globaltimer stamps (ns,
// 64-bit, of the launch that wrote them): the producer's check that found a word raised (0 if
// none did), its last check that found them all lowered (0 if none), the block's consumers done.
#define GK_PREEMPT_EVERY 2
#define GK_PREEMPT_CTL_WORDS 4
#define GK_PREEMPT_RECORD_WORDS 8
// Record words of the stamps: seen raised, last seen lowered, the block's end.
#define GK_PREEMPT_STAMP_SEEN 2
#define GK_PREEMPT_STAMP_CLEAR 4
#define GK_PREEMPT_STAMP_EXIT 6

// kernels/gemv.cu: products of at most GK_GEMV_MAX_ROWS rows by a weight read once.
#define GK_GEMV_THREADS 256
#define GK_GEMV_MAX_ROWS 16
// Defaults measured best on an H100 for 1 x 4096 -> 11008 bf16 (notes/gemm.md).
#define GK_GEMV_CPW_DEFAULT 1        // gk_gemv_nk: output columns per warp
#define GK_GEMV_NK_UNROLL_DEFAULT 2  // gk_gemv_nk: 16-byte loads in flight per lane and column
#define GK_GEMV_CW_DEFAULT 4         // gk_gemv_kn: 16-byte column chunks per block
#define GK_GEMV_KN_UNROLL_DEFAULT 4  // gk_gemv_kn: 16-byte loads in flight per thread
#define GK_GEMV_HINT_DEFAULT 1       // weight loads skip L1 and fetch 256 bytes into L2 (CUDA)

// kernels/gemm_f32.cu: exact float32 products.
#define GK_F32_TILE 128  // square output tile of a block
#define GK_F32_BK 8
#define GK_F32_STAGES 4  // cp.async ring depth (CUDA); HIP double-buffers through registers
#define GK_F32_THREADS 256
// Measured on an H100 at 4096^3: register staging with two blocks per SM 43.6 TFLOP/s, cp.async
// stages 34.7 (they spill under the 128-register cap) or 30.2 with one block per SM.
#define GK_F32_MIN_BLOCKS_DEFAULT 2  // blocks per SM the register budget must allow
#define GK_F32_ASYNC_DEFAULT 0       // 1: cp.async stages (CUDA sm_80+); 0: through registers
// kernels/gemm_f32_small.cu: the exact float32 products whose 128 x 128 tiles would occupy at
// most a GK_F32_SMALL_SHARE-th of the SMs.
#define GK_F32_SMALL_TILE 32
#define GK_F32_SMALL_THREADS 256
#define GK_F32_SMALL_SHARE 4
// kernels/gemm_f64.cu: float64 products on the FP64 tensor cores (sm_80+). Square tiles of
// GK_F64_TILE, or GK_F64_SMALL_TILE where those would leave more than half the SMs idle.
#define GK_F64_TILE 128
#define GK_F64_SMALL_TILE 64
#define GK_F64_BK 16
#define GK_F64_STAGES 3
#define GK_F64_PAD 4  // doubles padding each staged row (fragment reads hit 16 banks)
#define GK_F64_THREADS 256

// kernels/compact.cu: a tile of GK_COMPACT_THREADS * GK_COMPACT_ITEMS mask elements per block.
#define GK_COMPACT_THREADS 256
#define GK_COMPACT_ITEMS 16
#define GK_COMPACT_TILE (GK_COMPACT_THREADS * GK_COMPACT_ITEMS)

// kernels/attention.cu: query rows per warp, keys per shared-memory tile, at most this many warps
// a block; k rows in shared memory are padded to GK_ATTN_PAD_BYTES (bank spread).
#define GK_ATTN_ROWS 4
#define GK_ATTN_KEYS 32
#define GK_ATTN_MAX_WARPS 4
#define GK_ATTN_PAD_BYTES 4

// kernels/attention_tc.cu (prefill) and attention_decode.cu (split-KV decode), tensor cores over
// 16-bit floats: tile configurations by head-dim class (the head_dim the tiles hold; smaller
// multiples of 8 run zero-padded), passed to the kernels as defines. Prefill: GK_TC_WARPS, GK_TC_MW
// (m16 row tiles per warp), GK_TC_BN (keys per tile), GK_TC_STAGES, GK_TC_QREG (Q in registers);
// decode: GK_DEC_WARPS, GK_DEC_KT (keys per warp step), GK_DEC_STAGES. The fastest spill-free ones
// timed on an H100 (notes/attention.md; d128 from notes/decode_ab.py's sweep of 2026-12-07).
#define GK_ATTN_TC_HEAD_DIMS 64, 96, 128, 256
#define GK_ATTN_TC_PREFILL_D64 4, 2, 64, 2, 1
#define GK_ATTN_TC_PREFILL_D96 8, 1, 64, 2, 1
#define GK_ATTN_TC_PREFILL_D128 8, 1, 64, 2, 1
#define GK_ATTN_TC_PREFILL_D256 8, 1, 64, 2, 0
#define GK_ATTN_TC_DECODE_D64 4, 16, 4
#define GK_ATTN_TC_DECODE_D96 4, 16, 4
#define GK_ATTN_TC_DECODE_D128 8, 16, 3
#define GK_ATTN_TC_DECODE_D256 4, 16, 2
#define GK_ATTN_TC_DECODE_MAX_MT 2   // m16 row tiles of a decode block, at most (GK_DEC_MT)
#define GK_ATTN_MAX_SPLITS 1024      // key splits of one decode call, at most
#define GK_ATTN_COMBINE_THREADS 128  // threads of gk_attn_combine, a block per output row

// kernels/attention_sm90.cu (sm_90a prefill, FlashAttention-3 arrangement): a producer warpgroup
// and GK_ATTN_SM90_ROWS / 64 consumer warpgroups of 64 query rows; by head dim (64, 128, 256
// only), for calls without a mask and (_CAUSAL) causal ones: keys per tile, K/V stages, 1 where a
// consumer issues the next tile's S = Q K^T before its softmax (intra-warpgroup pipelining), 1
// where the two consumers take turns issuing their products (ping-pong), 1 for the persistent
// grid (a block per SM walking the row tiles), 1 for the exponent folded into one FFMA (positive
// scales). Pipelined with ping-pong everywhere (H100 sweep of 2026-11-26); persistent and folded
// where the H100 A/B of 2026-12-07 measured it faster: causal calls (+4-10%) and d64 (+7%); full
// d128 is even and full d256 5% slower (notes/attention.md).
#define GK_ATTN_SM90_HEAD_DIMS 64, 128, 256
#define GK_ATTN_SM90_ROWS 128
#define GK_ATTN_SM90_D64 128, 4, 1, 1, 1, 1
#define GK_ATTN_SM90_D64_CAUSAL 128, 4, 1, 1, 1, 1
#define GK_ATTN_SM90_D128 128, 2, 1, 1, 0, 0
#define GK_ATTN_SM90_D128_CAUSAL 128, 2, 1, 1, 1, 1
#define GK_ATTN_SM90_D256 64, 2, 1, 1, 0, 0
#define GK_ATTN_SM90_D256_CAUSAL 64, 2, 1, 1, 1, 1

// kernels/philox.cu: elements made from one group of four 32-bit words.
#define GK_PHILOX_PER_GROUP_32 4
#define GK_PHILOX_PER_GROUP_64 2

// kernels/sort.cu: digits of GK_SORT_RADIX_BITS bits; one onesweep launch sorts at most
// GK_SORT_PORTION_KEYS keys (its look-back counts carry 30 bits). kernels/search.cu: unique's
// tiles of GK_BLOCK * GK_UNIQUE_ITEMS sorted keys per block.
#define GK_SORT_RADIX_BITS 8
#define GK_SORT_PORTION_KEYS (1 << 28)
#define GK_UNIQUE_ITEMS 16

// kernels/fft.cu: batch dimensions a transform's rows may have; bytes a block keeps per row
// besides its values (the row's input and output offsets and its batch index).
#define GK_FFT_BATCH_DIMS 4
#define GK_FFT_ROW_EXTRA_BYTES 24
#define GK_FFT_PAD_SHIFT 4  // a padding element every 16 of a row in shared memory

// kernels/linalg_small.cu: one block of GK_LA_THREADS per matrix of at most GK_LA_MAX_N rows,
// right-hand sides GK_LA_RHS columns at a time; gk_lu_small's modes.
#define GK_LA_MAX_N 64
#define GK_LA_THREADS 256
#define GK_LA_RHS 16
#define GK_LA_SOLVE 0
#define GK_LA_INV 1
#define GK_LA_DET 2
#define GK_LA_SLOGDET 3
// gk_chol_small's mode bits: -L^-T into out2; a holds -A (the blocked plan's trailing matrix
// is kept negated, so that its updates add); info |= (the blocked plan's later diagonal blocks).
#define GK_LA_CHOL_INVERSE 1
#define GK_LA_CHOL_NEGATED 2
#define GK_LA_CHOL_MERGE_INFO 4
// gk_eigh_jacobi: matrices of at most GK_LA_JACOBI_N rows, at most GK_LA_SWEEPS sweeps.
#define GK_LA_JACOBI_N 32
#define GK_LA_SWEEPS 30
// kernels/linalg_lu.cu: the blocked LU (n > GK_LA_MAX_N) factors panels of GK_LU_NB columns
// (GK_LU_NB <= GK_LA_MAX_N: the diagonal blocks are inverted in shared memory), each column's
// step a launch of blocks of GK_LU_THREADS threads over GK_LU_ROWS rows each.
#define GK_LU_NB 64
#define GK_LU_THREADS 256
#define GK_LU_ROWS 64
// Solves of at most GK_LU_RHS right-hand sides substitute panel by panel in one plan
// (gk_lu_fwd_*, gk_lu_bwd); more go through the products.
#define GK_LU_RHS 16
#define GK_LU_SWAP_COLS 32  // gk_lu_swap: columns of the right-hand sides per block
#define GK_LU_BWD_COLS 256  // gk_lu_bwd_sums: columns of -U12 per block
// gk_lu_panel_coop (the panel in one cooperative launch): blocks of at least GK_LU_COOP_MIN_ROWS
// rows (fewer blocks, a cheaper grid barrier), at most one per SM; beside its rows, a block's
// dynamic shared memory holds GK_LU_COOP_SPARE more elements (the pivot row, row j, the warps'
// candidates).
#define GK_LU_COOP_MIN_ROWS 32
#define GK_LU_COOP_SPARE (2 * GK_LU_NB + 32)
// gk_lu_panel_cluster (sm_90+: the panel in one thread-block cluster of GK_LU_CLUSTER blocks, a
// non-portable size past 8): beside its rows, a block's dynamic shared memory holds
// GK_LU_CLUSTER_SPARE more elements (its two candidate slots, two slots of row j, the cluster's
// candidates gathered, row j gathered, the warps' candidates, U's diagonal and the pivot rows,
// the slots' row numbers).
#define GK_LU_CLUSTER 16
#define GK_LU_CLUSTER_SPARE \
    ((GK_LU_CLUSTER + 5) * (GK_LU_NB + 1) + 16 + 2 * GK_LU_NB + 2 + GK_LU_CLUSTER + 16)
// gk_lu_panel_regs (sm_90+: gk_lu_panel_cluster's cluster with a row in each thread's registers):
// blocks of up to GK_LU_REGS_THREADS_F32 / _F64 threads (a float64 row takes twice the registers);
// beside a row of stage and an int a thread, a block's dynamic shared memory holds
// GK_LU_REGS_SPARE more elements: two slots (a row and 16 bytes), the cluster's slots gathered,
// the warps' 16 candidates of 16 bytes (at most 64 elements), U's diagonal, the pivots' places.
#define GK_LU_REGS_THREADS_F32 384
#define GK_LU_REGS_THREADS_F64 256
#define GK_LU_REGS_SPARE ((GK_LU_CLUSTER + 2) * (GK_LU_NB + 4) + 64 + 2 * GK_LU_NB)
// kernels/linalg_qr.cu: Householder panels of at most GK_QR_NB columns (a warp's lanes hold the
// panel's column sums: GK_QR_NB == GK_LANES), one block of GK_QR_THREADS per matrix, or (sm_90+)
// one cluster of GK_QR_CLUSTER blocks of GK_QR_CLUSTER_THREADS, each holding a share of the rows
// in shared memory and GK_QR_CLUSTER_SPARE more elements (two slots each of its column sums and
// of row j; each warp's sums; the column sums, products, row j; T).
#define GK_QR_NB 32
#define GK_QR_THREADS 512
#define GK_QR_CLUSTER 16
#define GK_QR_CLUSTER_THREADS 256
#define GK_QR_CLUSTER_SPARE \
    ((4 + GK_QR_CLUSTER_THREADS / 32 + 3) * GK_QR_NB + GK_QR_NB * (GK_QR_NB + 1))
// kernels/linalg_svj.cu: one-sided Jacobi on blocks of at most GK_SVJ_ROWS rows in shared memory
// (a few warps per pair of rows, at most GK_SVJ_THREADS threads); stacks of at most GK_SVJ_ROWS
// rows take one launch for every sweep, larger ones pair blocks of GK_SVJ_PAIR_ROWS / 2 rows, a
// launch per round of the pairing.
#define GK_SVJ_ROWS 64
#define GK_SVJ_PAIR_ROWS 16
#define GK_SVJ_THREADS 1024

// Every constant above, for gpukit._native.constants() (a list of several values becomes a tuple).
#define GK_CONSTANTS(X)          \
    X(GK_MAX_DIMS)               \
    X(GK_MAX_OPERANDS)           \
    X(GK_MAX_BATCH_DIMS)         \
    X(GK_BLOCK)                  \
    X(GK_LANES)                  \
    X(GK_VEC_BYTES)              \
    X(GK_EW_UNROLL)              \
    X(GK_EW_BLOCKS_PER_SM)       \
    X(GK_RED_THREADS)            \
    X(GK_RED_UNROLL)             \
    X(GK_RED_STATE_BYTES)        \
    X(GK_SCAN_THREADS)           \
    X(GK_SCAN_CHUNKS)            \
    X(GK_SCAN_LEAD)              \
    X(GK_TRANSPOSE_TILE)         \
    X(GK_TRANSPOSE_THREADS)      \
    X(GK_ROWS_MAX_ITEMS)         \
    X(GK_ROWS_MAX_THREADS)       \
    X(GK_ROWS_STATE_BYTES)       \
    X(GK_ROWS_STAGED_BYTES)      \
    X(GK_MATMUL_THREADS)         \
    X(GK_SKINNY_M)               \
    X(GK_SKINNY_WARPS)           \
    X(GK_MMA_BM)                 \
    X(GK_MMA_BN)                 \
    X(GK_MMA_BK)                 \
    X(GK_MMA_STAGES)             \
    X(GK_MMA_THREADS)            \
    X(GK_MMA_TILE_BYTES)         \
    X(GK_MMA_SMEM)               \
    X(GK_SM90_THREADS)           \
    X(GK_SM90_ROW_BYTES)         \
    X(GK_SM90_SMEM_BUDGET)       \
    X(GK_SM90_SMEM_EXTRA)        \
    X(GK_SM90_EPI_BYTES)         \
    X(GK_SM90_ROW_PAD)           \
    X(GK_SM90_MAX_STAGES)        \
    X(GK_SM90_PRODUCER_REGS)     \
    X(GK_SM90_CONSUMER_REGS)     \
    X(GK_SM90_GROUP_M)           \
    X(GK_SPLITK_THREADS)         \
    X(GK_PREEMPT_SLOTS)          \
    X(GK_PREEMPT_EVERY)          \
    X(GK_PREEMPT_CTL_WORDS)      \
    X(GK_PREEMPT_RECORD_WORDS)   \
    X(GK_PREEMPT_STAMP_SEEN)     \
    X(GK_PREEMPT_STAMP_CLEAR)    \
    X(GK_PREEMPT_STAMP_EXIT)     \
    X(GK_GEMV_THREADS)           \
    X(GK_GEMV_MAX_ROWS)          \
    X(GK_GEMV_CPW_DEFAULT)       \
    X(GK_GEMV_NK_UNROLL_DEFAULT) \
    X(GK_GEMV_CW_DEFAULT)        \
    X(GK_GEMV_KN_UNROLL_DEFAULT) \
    X(GK_GEMV_HINT_DEFAULT)      \
    X(GK_F32_TILE)               \
    X(GK_F32_BK)                 \
    X(GK_F32_STAGES)             \
    X(GK_F32_THREADS)            \
    X(GK_F32_MIN_BLOCKS_DEFAULT) \
    X(GK_F32_ASYNC_DEFAULT)      \
    X(GK_F32_SMALL_TILE)         \
    X(GK_F32_SMALL_THREADS)      \
    X(GK_F32_SMALL_SHARE)        \
    X(GK_F64_TILE)               \
    X(GK_F64_SMALL_TILE)         \
    X(GK_F64_BK)                 \
    X(GK_F64_STAGES)             \
    X(GK_F64_PAD)                \
    X(GK_F64_THREADS)            \
    X(GK_COMPACT_THREADS)        \
    X(GK_COMPACT_ITEMS)          \
    X(GK_COMPACT_TILE)           \
    X(GK_ATTN_ROWS)              \
    X(GK_ATTN_KEYS)              \
    X(GK_ATTN_MAX_WARPS)         \
    X(GK_ATTN_PAD_BYTES)         \
    X(GK_ATTN_SM90_HEAD_DIMS)    \
    X(GK_ATTN_SM90_ROWS)         \
    X(GK_ATTN_SM90_D64)          \
    X(GK_ATTN_SM90_D64_CAUSAL)   \
    X(GK_ATTN_SM90_D128)         \
    X(GK_ATTN_SM90_D128_CAUSAL)  \
    X(GK_ATTN_SM90_D256)         \
    X(GK_ATTN_SM90_D256_CAUSAL)  \
    X(GK_ATTN_TC_HEAD_DIMS)      \
    X(GK_ATTN_TC_PREFILL_D64)    \
    X(GK_ATTN_TC_PREFILL_D96)    \
    X(GK_ATTN_TC_PREFILL_D128)   \
    X(GK_ATTN_TC_PREFILL_D256)   \
    X(GK_ATTN_TC_DECODE_D64)     \
    X(GK_ATTN_TC_DECODE_D96)     \
    X(GK_ATTN_TC_DECODE_D128)    \
    X(GK_ATTN_TC_DECODE_D256)    \
    X(GK_ATTN_TC_DECODE_MAX_MT)  \
    X(GK_ATTN_MAX_SPLITS)        \
    X(GK_ATTN_COMBINE_THREADS)   \
    X(GK_PHILOX_PER_GROUP_32)    \
    X(GK_PHILOX_PER_GROUP_64)    \
    X(GK_SORT_RADIX_BITS)        \
    X(GK_SORT_PORTION_KEYS)      \
    X(GK_UNIQUE_ITEMS)           \
    X(GK_FFT_BATCH_DIMS)         \
    X(GK_FFT_ROW_EXTRA_BYTES)    \
    X(GK_FFT_PAD_SHIFT)          \
    X(GK_LA_MAX_N)               \
    X(GK_LA_THREADS)             \
    X(GK_LA_RHS)                 \
    X(GK_LA_SOLVE)               \
    X(GK_LA_INV)                 \
    X(GK_LA_DET)                 \
    X(GK_LA_SLOGDET)             \
    X(GK_LA_CHOL_INVERSE)        \
    X(GK_LA_CHOL_NEGATED)        \
    X(GK_LA_CHOL_MERGE_INFO)     \
    X(GK_LA_JACOBI_N)            \
    X(GK_LA_SWEEPS)              \
    X(GK_LU_NB)                  \
    X(GK_LU_THREADS)             \
    X(GK_LU_ROWS)                \
    X(GK_LU_RHS)                 \
    X(GK_LU_BWD_COLS)            \
    X(GK_LU_SWAP_COLS)           \
    X(GK_LU_COOP_MIN_ROWS)       \
    X(GK_LU_COOP_SPARE)          \
    X(GK_LU_CLUSTER)             \
    X(GK_LU_CLUSTER_SPARE)       \
    X(GK_LU_REGS_THREADS_F32)    \
    X(GK_LU_REGS_THREADS_F64)    \
    X(GK_LU_REGS_SPARE)          \
    X(GK_QR_NB)                  \
    X(GK_QR_THREADS)             \
    X(GK_QR_CLUSTER)             \
    X(GK_QR_CLUSTER_THREADS)     \
    X(GK_QR_CLUSTER_SPARE)       \
    X(GK_SVJ_ROWS)               \
    X(GK_SVJ_PAIR_ROWS)          \
    X(GK_SVJ_THREADS)
