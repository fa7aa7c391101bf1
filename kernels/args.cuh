// Argument blocks of the built-in kernels. Plain C, included by the kernels and by the C++ layer
// (native/src/ops.cpp) so that both sides agree on the layout. Strides count elements.
#pragma once
#include "types.cuh"

#define GK_MAX_DIMS 8
#define GK_MAX_OPERANDS 4  // operand 0 is the output
#define GK_MAX_BATCH_DIMS 4

struct gk_ew_args {
    gk_i64 n;
    gk_i32 ndim;  // dimensions of shape/stride (strided kernel only)
    gk_i32 unused;
    gk_i64 shape[GK_MAX_DIMS];
    gk_i64 stride[GK_MAX_OPERANDS][GK_MAX_DIMS];
    gk_u64 ptr[GK_MAX_OPERANDS];
    double scalar_f[GK_MAX_OPERANDS];
    gk_i64 scalar_i[GK_MAX_OPERANDS];
};

// The contiguous elementwise kernel's smaller block (a shorter launch): slots as in gk_ew_args.
struct gk_ew_contig_args {
    gk_i64 n;
    gk_u64 ptr[3];
    double scalar_f[3];
    gk_i64 scalar_i[3];
};

struct gk_reduce_args {
    gk_u64 in;
    gk_u64 out;  // contiguous, n_out elements
    gk_i64 n_out;
    gk_i64 n_red;
    gk_i32 out_ndim;
    gk_i32 red_ndim;
    gk_i64 out_shape[GK_MAX_DIMS];
    gk_i64 out_stride[GK_MAX_DIMS];  // input strides of the kept dimensions
    gk_i64 red_shape[GK_MAX_DIMS];
    gk_i64 red_stride[GK_MAX_DIMS];  // input strides of the reduced dimensions
    double scale;                    // the result is multiplied by it (mean: 1 / n_red)
};

// A running sum along one axis: rows are the other dimensions, each scanned over n elements.
struct gk_scan_args {
    gk_u64 in, out;
    gk_i64 n_rows, n;
    gk_i64 in_step, out_step;  // strides along the scanned axis
    gk_i32 row_ndim;
    gk_i32 unused;
    gk_i64 row_shape[GK_MAX_DIMS];
    gk_i64 in_row_stride[GK_MAX_DIMS];
    gk_i64 out_row_stride[GK_MAX_DIMS];
};

// Tile geometry of kernels/matmul_mma.cu, which its launcher (native/src/ops.cpp) needs too.
#define GK_MMA_BM 128
#define GK_MMA_BN 128
#define GK_MMA_BK 32
#define GK_MMA_STAGES 4
#define GK_MMA_THREADS 256
#define GK_MMA_TILE_BYTES (GK_MMA_BM * GK_MMA_BK * 2)  // one operand's tile in one stage
#define GK_MMA_SMEM (GK_MMA_STAGES * 2 * GK_MMA_TILE_BYTES)

// Used by kernels/matmul.cu (any types and strides) and kernels/matmul_mma.cu (16-bit floats).
struct gk_matmul_args {
    gk_u64 a, b, out;
    gk_i64 m, n, k;
    gk_i64 sa_m, sa_k, sb_k, sb_n, so_m, so_n;
    gk_i32 batch_ndim;
    gk_i32 unused;
    gk_i64 batch_shape[GK_MAX_BATCH_DIMS];
    gk_i64 batch_sa[GK_MAX_BATCH_DIMS];
    gk_i64 batch_sb[GK_MAX_BATCH_DIMS];
    gk_i64 batch_so[GK_MAX_BATCH_DIMS];
    gk_u64 bias;  // 0: none; else out(m, n) += bias[n * s_bias], bias of out's type
    gk_i64 s_bias;
};
