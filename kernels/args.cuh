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

// Advanced indexing: out (contiguous, n elements of ndim dims) is gathered from src (or, for
// a scatter, written into it). Each output
// dimension walks src by src_stride; index array k (int64) is read at the offset its idx_stride
// row gives, and moves src by axis_stride[k] per unit of its value (in [-axis_size, axis_size)).
struct gk_gather_args {
    gk_u64 src, out, err;  // err (0: none): an int32, set to k + 1 when array k has a bad index
    gk_i64 n;
    gk_i32 ndim, n_idx;
    gk_i64 shape[GK_MAX_DIMS];
    gk_i64 src_stride[GK_MAX_DIMS];
    gk_u64 idx[GK_MAX_DIMS];
    gk_i64 idx_stride[GK_MAX_DIMS][GK_MAX_DIMS];
    gk_i64 axis_size[GK_MAX_DIMS];
    gk_i64 axis_stride[GK_MAX_DIMS];
};

// Stream compaction of a contiguous bool array (nonzero, boolean masks), a tile per block:
// counts[t] = hits in tile t; prefix = running sum of counts; out = (ndim, total) coordinates.
struct gk_compact_args {
    gk_u64 mask, counts, prefix, out;
    gk_i64 n, total;
    gk_i32 ndim, unused;
    gk_i64 shape[GK_MAX_DIMS];
};

// Counter-based random numbers (Philox4x32-10): key = seed, counter = (group, offset); group g
// gives the four words from which elements [g * per_group, (g + 1) * per_group) are made.
struct gk_philox_args {
    gk_u64 out;
    gk_i64 n;
    gk_u32 key0, key1;
    gk_u64 offset;
    double lo, scale;   // floats: lo + scale * x, when affine
    gk_u64 low, range;  // integers: low + [0, range); range 0 stands for 2^64
    gk_i32 affine, unused;
};

// gpukit.nn row kernels (softmax, log_softmax, layer_norm, rms_norm): each row is n elements
// along one axis; rows are the other dimensions. The output is contiguous in the input's shape.
struct gk_rows_args {
    gk_u64 in, out, weight, bias;  // weight / bias: 0 when absent (length n, contiguous)
    gk_i64 n_rows, n;
    gk_i64 in_step, out_step;  // strides along the row
    double eps;
    gk_i32 row_ndim;
    gk_i32 group;  // threads per row: 32 (a warp) or the whole block
    gk_i64 row_shape[GK_MAX_DIMS];
    gk_i64 in_row_stride[GK_MAX_DIMS];
    gk_i64 out_row_stride[GK_MAX_DIMS];
};

// embedding: out[i, :] = table[ids[i], :] for contiguous ids; a bad id sets *error (an i32).
struct gk_embed_args {
    gk_u64 ids, table, out, error;
    gk_i64 n_ids, num, dim;
    gk_i64 row_stride, col_stride;  // the table's
};

// rope over x (leading dims, then head_dim as the last one); cos/sin (one angle per pair of
// x's last dimension) broadcast over the leading dims.
struct gk_rope_args {
    gk_u64 x, cos, sin, out;            // out: contiguous in x's shape
    gk_i64 n_rows, half;                // rows = product of the leading dims; half = head_dim / 2
    gk_i64 x_step, cos_step, sin_step;  // strides along head_dim
    gk_i32 ndim, interleaved;
    gk_i64 shape[GK_MAX_DIMS];
    gk_i64 x_stride[GK_MAX_DIMS];
    gk_i64 cos_stride[GK_MAX_DIMS];
    gk_i64 sin_stride[GK_MAX_DIMS];
};

// Fused attention. q (batch, hq, sq, d), k/v (batch, hkv, skv, d), mask broadcast to
// (batch, hq, sq, skv) (strides 0 where broadcast), out contiguous (batch, hq, sq, d). With
// n_splits > 1 the keys are split over blocks: partial sums go to ws_o / ws_ml and
// gk_attention_combine merges them.
struct gk_attn_args {
    gk_u64 q, k, v, out, mask, ws_o, ws_ml;
    gk_i64 batch, hq, hkv, sq, skv, d;
    gk_i64 q_stride[4], k_stride[4], v_stride[4], mask_stride[4];
    gk_i64 tiles_per_split;  // key tiles per split
    double scale_log2;       // softmax scale * log2(e)
    gk_i32 causal, n_splits;
};
