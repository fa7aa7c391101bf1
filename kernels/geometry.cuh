// Launch geometry that kernels and their host-side planners share. The host reads every value
// through gpukit._native.constants() (GK_CONSTANTS below), never a copy of it.
#pragma once

#define GK_MAX_DIMS 8
#define GK_MAX_OPERANDS 4  // elementwise: operand 0 is the output
#define GK_MAX_BATCH_DIMS 4

#define GK_BLOCK 256  // threads per block of the grid-stride kernels
#define GK_LANES 32   // threads of a row group (a CUDA warp; half an AMD wavefront)
#define GK_VEC_BYTES 16  // bytes of one vector access (gk_vec16; the contiguous elementwise
                         // kernel's access of its widest operand)

// kernels/reduce.cu: threads of every reduction block, loads each thread keeps in flight, room
// for the largest partial state of a split reduction (argmax, var).
#define GK_RED_THREADS 256
#define GK_RED_UNROLL 4
#define GK_RED_STATE_BYTES 32

// kernels/scan.cu: tiles of GK_SCAN_THREADS * GK_SCAN_ITEMS elements, GK_SCAN_WINDOW tiles a
// window (a warp's lanes).
#define GK_SCAN_THREADS 256
#define GK_SCAN_ITEMS 16
#define GK_SCAN_WINDOW 32

// kernels/transpose.cu: square tiles of GK_TRANSPOSE_TILE elements a side.
#define GK_TRANSPOSE_TILE 64
#define GK_TRANSPOSE_THREADS 256

// kernels/nn_rows.cu: elements of a row each thread holds in registers at most, threads of a row
// kernel's block at most (128 registers each), room for one piece's statistics of a split row.
#define GK_ROWS_MAX_ITEMS 32
#define GK_ROWS_MAX_THREADS 512
#define GK_ROWS_STATE_BYTES 32

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

// kernels/philox.cu: elements made from one group of four 32-bit words.
#define GK_PHILOX_PER_GROUP_32 4
#define GK_PHILOX_PER_GROUP_64 2

// Every constant above, for gpukit._native.constants().
#define GK_CONSTANTS(X)       \
    X(GK_MAX_DIMS)            \
    X(GK_MAX_OPERANDS)        \
    X(GK_MAX_BATCH_DIMS)      \
    X(GK_BLOCK)               \
    X(GK_LANES)               \
    X(GK_VEC_BYTES)           \
    X(GK_RED_THREADS)         \
    X(GK_RED_UNROLL)          \
    X(GK_RED_STATE_BYTES)     \
    X(GK_SCAN_THREADS)        \
    X(GK_SCAN_ITEMS)          \
    X(GK_SCAN_WINDOW)         \
    X(GK_TRANSPOSE_TILE)      \
    X(GK_TRANSPOSE_THREADS)   \
    X(GK_ROWS_MAX_ITEMS)      \
    X(GK_ROWS_MAX_THREADS)    \
    X(GK_ROWS_STATE_BYTES)    \
    X(GK_MATMUL_THREADS)      \
    X(GK_SKINNY_M)            \
    X(GK_SKINNY_WARPS)        \
    X(GK_MMA_BM)              \
    X(GK_MMA_BN)              \
    X(GK_MMA_BK)              \
    X(GK_MMA_STAGES)          \
    X(GK_MMA_THREADS)         \
    X(GK_MMA_TILE_BYTES)      \
    X(GK_MMA_SMEM)            \
    X(GK_COMPACT_THREADS)     \
    X(GK_COMPACT_ITEMS)       \
    X(GK_COMPACT_TILE)        \
    X(GK_ATTN_ROWS)           \
    X(GK_ATTN_KEYS)           \
    X(GK_ATTN_MAX_WARPS)      \
    X(GK_ATTN_PAD_BYTES)      \
    X(GK_PHILOX_PER_GROUP_32) \
    X(GK_PHILOX_PER_GROUP_64)
