// Argument blocks of the built-in kernels, declared once as field lists: kernels get the structs,
// the host (gpukit._native.arg_layouts()) gets each field's offset and type, from which Python
// packs the bytes of a launch. Plain C of fixed-width fields with natural alignment. Strides count
// elements. A field list takes F(type, name), A(type, name, count), M(type, name, rows, cols).
#pragma once
#include "geometry.cuh"
#include "types.cuh"

// Elementwise over broadcast, strided operands (operand 0 is the output).
#define GK_EW_ARGS(F, A, M)                             \
    F(gk_i64, n)                                        \
    F(gk_i32, ndim) /* of shape/stride */               \
    F(gk_i32, unused)                                   \
    A(gk_i64, shape, GK_MAX_DIMS)                       \
    M(gk_i64, stride, GK_MAX_OPERANDS, GK_MAX_DIMS)     \
    A(gk_u64, ptr, GK_MAX_OPERANDS)                     \
    A(double, scalar_f, GK_MAX_OPERANDS)                \
    A(double, scalar_im, GK_MAX_OPERANDS) /* complex */ \
    A(gk_i64, scalar_i, GK_MAX_OPERANDS)

// The contiguous elementwise kernel's smaller block (a shorter launch): slots as in gk_ew_args.
#define GK_EW_CONTIG_ARGS(F, A, M) \
    F(gk_i64, n)                   \
    A(gk_u64, ptr, 3)              \
    A(double, scalar_f, 3)         \
    A(double, scalar_im, 3)        \
    A(gk_i64, scalar_i, 3)

// Reductions (kernels/reduce.cu): n_out outputs (the kept dimensions: out_shape, with the input's
// strides out_stride) of n_red reduced elements each (red_shape / red_stride). The reduced range of
// every output is cut into `splits` pieces of `chunk` elements; with more than one, each piece's
// state goes to `partial` (state (o, s) at o * part_out_stride + s * part_split_stride, states of
// GK_RED_STATE_BYTES at most) and a finishing kernel combines them in a fixed order.
#define GK_REDUCE_ARGS(F, A, M)                                                   \
    F(gk_u64, in)                                                                 \
    F(gk_u64, out) /* contiguous, n_out elements */                               \
    F(gk_u64, partial)                                                            \
    F(gk_i64, n_out)                                                              \
    F(gk_i64, n_red)                                                              \
    F(gk_i64, chunk)                                                              \
    F(gk_i64, part_out_stride)                                                    \
    F(gk_i64, part_split_stride)                                                  \
    F(gk_i32, splits)                                                             \
    F(gk_i32, out_ndim)                                                           \
    F(gk_i32, red_ndim)                                                           \
    F(gk_i32, unused)                                                             \
    A(gk_i64, out_shape, GK_MAX_DIMS)                                             \
    A(gk_i64, out_stride, GK_MAX_DIMS) /* input strides of the kept dimensions */ \
    A(gk_i64, red_shape, GK_MAX_DIMS)                                             \
    A(gk_i64, red_stride, GK_MAX_DIMS) /* input strides of the reduced ones */    \
    F(double, scale)                   /* mean: 1 / n_red; var: 1 / (n_red - ddof) */

// A running sum along one axis: rows are the other dimensions, each scanned over n elements.
// gk_scan_tiles cuts the rows into tiles of GK_SCAN_THREADS * GK_SCAN_CHUNKS 16-byte chunks handed
// out in order through `ticket`. Each tile publishes its sum, then its inclusive prefix, in its
// state: with 4-byte accumulators one 8-byte word flags[t] (flag << 32 | value bits); wider, the
// value in sums[t] or prefs[t] and then the 4-byte flag flags[t] (1: sum, 2: prefix). The ticket
// and the flags start at zero. gk_scan_columns serves a strided scanned axis: each row is cut
// into pieces of `chunk` elements whose sums (partial[c * n_rows + row]) a reduction wrote
// beforehand; vec: gk_scan_columns_vec, each thread scanning GK_VEC_BYTES' worth of neighbouring
// rows.
#define GK_SCAN_ARGS(F, A, M)                               \
    F(gk_u64, in)                                           \
    F(gk_u64, out)                                          \
    F(gk_u64, ticket)                                       \
    F(gk_u64, flags)                                        \
    F(gk_u64, sums)                                         \
    F(gk_u64, prefs)                                        \
    F(gk_u64, partial)                                      \
    F(gk_i64, n_rows)                                       \
    F(gk_i64, n)                                            \
    F(gk_i64, in_step) /* strides along the scanned axis */ \
    F(gk_i64, out_step)                                     \
    F(gk_i64, tiles_per_row)                                \
    F(gk_i64, lead) /* tiles a sum is published ahead */    \
    F(gk_i64, chunk)                                        \
    F(gk_i32, row_ndim)                                     \
    F(gk_i32, vec)                                          \
    A(gk_i64, row_shape, GK_MAX_DIMS)                       \
    A(gk_i64, in_row_stride, GK_MAX_DIMS)                   \
    A(gk_i64, out_row_stride, GK_MAX_DIMS)

// Copy of a strided view into an array whose last dimension q is contiguous (kernels/
// transpose.cu); p is the dimension the input is contiguous along. Square tiles of GK_TILE (at
// most GK_TRANSPOSE_TILE) a side, over the other (batch) dimensions too. vec: 16-byte accesses
// on full tiles (aligned pointers and strides).
#define GK_TRANSPOSE_ARGS(F, A, M)                                        \
    F(gk_u64, in)                                                         \
    F(gk_u64, out)                                                        \
    F(gk_i64, p)                                                          \
    F(gk_i64, q)                                                          \
    F(gk_i64, in_q_stride)  /* the input's stride along q (along p: 1) */ \
    F(gk_i64, out_p_stride) /* the output's along p (along q: 1) */       \
    F(gk_i64, tiles_p)                                                    \
    F(gk_i64, tiles_q)                                                    \
    F(gk_i64, n_tiles)                                                    \
    F(gk_i32, batch_ndim)                                                 \
    F(gk_i32, vec)                                                        \
    A(gk_i64, batch_shape, GK_MAX_DIMS)                                   \
    A(gk_i64, in_batch_stride, GK_MAX_DIMS)                               \
    A(gk_i64, out_batch_stride, GK_MAX_DIMS)

// kernels/matmul.cu (any types and strides), matmul_mma.cu (16-bit floats), matmul_skinny.cu.
// bias 0: none; else out(m, n) += bias[n * s_bias], bias of out's type.
#define GK_MATMUL_ARGS(F, A, M)               \
    F(gk_u64, a)                              \
    F(gk_u64, b)                              \
    F(gk_u64, out)                            \
    F(gk_i64, m)                              \
    F(gk_i64, n)                              \
    F(gk_i64, k)                              \
    F(gk_i64, sa_m)                           \
    F(gk_i64, sa_k)                           \
    F(gk_i64, sb_k)                           \
    F(gk_i64, sb_n)                           \
    F(gk_i64, so_m)                           \
    F(gk_i64, so_n)                           \
    F(gk_i32, batch_ndim)                     \
    F(gk_i32, unused)                         \
    A(gk_i64, batch_shape, GK_MAX_BATCH_DIMS) \
    A(gk_i64, batch_sa, GK_MAX_BATCH_DIMS)    \
    A(gk_i64, batch_sb, GK_MAX_BATCH_DIMS)    \
    A(gk_i64, batch_so, GK_MAX_BATCH_DIMS)    \
    F(gk_u64, bias)                           \
    F(gk_i64, s_bias)

// kernels/gemm_f32.cu, gemm_f32_small.cu, gemm_f64.cu: out (batch, m, n) = epilogue(a (batch, m,
// k) @ b (batch, k, n)), one (collapsed) batch axis; a batch stride of 0 broadcasts the operand.
// bias: 0 or n values at stride s_bias; residual: 0 or (batch, m, n) at (sr_z, sr_m, 1).
// out_pairs: two adjacent outputs may be stored as one aligned word (8 bytes in float32, 16 in
// float64). splits > 1 (gemm_f32.cu only): K in ranges of
// k_per_split, each block's partial sums stored in workspace (splits, batch, m, n) and added by
// gk_gemm_f32_reduce; splits = 1: one range. lower (gemm_f32*.cu, gemm_f64.cu): only the lower
// triangle of the whole product's matrix is needed, so a block whose tile lies wholly above its
// diagonal (first column past the tile's last row, row0 + the tile's rows counting from the
// whole product's first row) writes nothing; row0: this launch's first row in the whole product.
#define GK_GEMM_ARGS(F, A, M) \
    F(gk_u64, a)              \
    F(gk_u64, b)              \
    F(gk_u64, out)            \
    F(gk_u64, bias)           \
    F(gk_u64, residual)       \
    F(gk_u64, workspace)      \
    F(gk_i64, m)              \
    F(gk_i64, n)              \
    F(gk_i64, k)              \
    F(gk_i64, k_per_split)    \
    F(gk_i64, batch)          \
    F(gk_i64, sa_m)           \
    F(gk_i64, sa_k)           \
    F(gk_i64, sa_z)           \
    F(gk_i64, sb_k)           \
    F(gk_i64, sb_n)           \
    F(gk_i64, sb_z)           \
    F(gk_i64, so_m)           \
    F(gk_i64, so_z)           \
    F(gk_i64, sr_m)           \
    F(gk_i64, sr_z)           \
    F(gk_i64, s_bias)         \
    F(gk_i64, row0)           \
    F(gk_i32, out_pairs)      \
    F(gk_i32, splits)         \
    F(gk_i32, lower)

// kernels/gemm_sm90.cu, the block after its two tensor-map parameters (a and b reach the kernel
// as TMA tensor maps), and its split-K reduction's only parameter. Tiles count GK_GEMM_BM x
// GK_GEMM_BN outputs, K tiles slices of the stage's K; strides count elements of out's type.
// workspace (splits > 1): fp32 partials (splits, batch, m, n). a/b_batched: the operand's tensor
// map has a batch coordinate. out(z, m, n) at z * so_z + m * so_m + n, residual likewise.
// The preemptible form (GK_GEMM_PREEMPT) takes its tiles from the counter that starts the control
// words at next_tile (geometry.cuh's GK_PREEMPT_CTL_WORDS) and yields while any of the device's
// preemption words at preempt is raised, checking them every preempt_every K slices of a tile,
// saving the tile it stops in to its block's slot of save (GK_GEMM_BM x GK_GEMM_BN fp32 per
// block). preempt_every fills the struct's tail padding: the plain build's offsets are unchanged.
#define GK_GEMM_SM90_ARGS(F, A, M) \
    F(gk_u64, out)                 \
    F(gk_u64, bias)                \
    F(gk_u64, residual)            \
    F(gk_u64, workspace)           \
    F(gk_u64, preempt)             \
    F(gk_u64, next_tile)           \
    F(gk_u64, save)                \
    F(gk_i64, m)                   \
    F(gk_i64, n)                   \
    F(gk_i64, so_m)                \
    F(gk_i64, so_z)                \
    F(gk_i64, sr_m)                \
    F(gk_i64, sr_z)                \
    F(gk_i64, s_bias)              \
    F(gk_i32, batch)               \
    F(gk_i32, splits)              \
    F(gk_i32, k_tiles)             \
    F(gk_i32, k_tiles_per_split)   \
    F(gk_i32, tiles_m)             \
    F(gk_i32, tiles_n)             \
    F(gk_i32, total_tiles)         \
    F(gk_i32, a_batched)           \
    F(gk_i32, b_batched)           \
    F(gk_i32, preempt_every)

// kernels/gemv.cu: out (m, n) = epilogue(x (m, k) @ w), w (n, k) for gk_gemv_nk (w(n, k) at
// n * sw + k * swk) or (k, n) for gk_gemv_kn (w(k, n) at k * sw + n * swk); out and residual rows
// contiguous along n. splits > 1: blockIdx.y takes k_per_split of k and writes float partials
// (splits, m, n) to workspace, which gk_gemv_reduce adds up.
#define GK_GEMV_ARGS(F, A, M) \
    F(gk_u64, x)              \
    F(gk_u64, w)              \
    F(gk_u64, out)            \
    F(gk_u64, bias)           \
    F(gk_u64, residual)       \
    F(gk_u64, workspace)      \
    F(gk_i64, m)              \
    F(gk_i64, n)              \
    F(gk_i64, k)              \
    F(gk_i64, sx_m)           \
    F(gk_i64, sx_k)           \
    F(gk_i64, sw)             \
    F(gk_i64, swk)            \
    F(gk_i64, so_m)           \
    F(gk_i64, sr_m)           \
    F(gk_i64, s_bias)         \
    F(gk_i64, k_per_split)    \
    F(gk_i32, splits)         \
    F(gk_i32, unused)

// Advanced indexing: out (contiguous, n elements of ndim dims) is gathered from src (or, for a
// scatter, written into it). Each output dimension walks src by src_stride; index array k (int64)
// is read at the offset its idx_stride row gives, and moves src by axis_stride[k] per unit of its
// value (in [-axis_size, axis_size)). err (0: none): an int32, set to k + 1 when array k has a
// bad index.
#define GK_GATHER_ARGS(F, A, M)                     \
    F(gk_u64, src)                                  \
    F(gk_u64, out)                                  \
    F(gk_u64, err)                                  \
    F(gk_i64, n)                                    \
    F(gk_i32, ndim)                                 \
    F(gk_i32, n_idx)                                \
    A(gk_i64, shape, GK_MAX_DIMS)                   \
    A(gk_i64, src_stride, GK_MAX_DIMS)              \
    A(gk_u64, idx, GK_MAX_DIMS)                     \
    M(gk_i64, idx_stride, GK_MAX_DIMS, GK_MAX_DIMS) \
    A(gk_i64, axis_size, GK_MAX_DIMS)               \
    A(gk_i64, axis_stride, GK_MAX_DIMS)

// Stream compaction of a contiguous bool array (nonzero, boolean masks), a tile per block:
// counts[t] = hits in tile t; prefix = running sum of counts; out = (ndim, total) coordinates.
#define GK_COMPACT_ARGS(F, A, M) \
    F(gk_u64, mask)              \
    F(gk_u64, counts)            \
    F(gk_u64, prefix)            \
    F(gk_u64, out)               \
    F(gk_i64, n)                 \
    F(gk_i64, total)             \
    F(gk_i32, ndim)              \
    F(gk_i32, unused)            \
    A(gk_i64, shape, GK_MAX_DIMS)

// Counter-based random numbers (Philox4x32-10): key = seed, counter = (group, offset); group g
// gives the four words from which elements [g * per_group, (g + 1) * per_group) are made.
// Floats: lo + scale * x, when affine; integers: low + [0, range), range 0 standing for 2^64.
#define GK_PHILOX_ARGS(F, A, M) \
    F(gk_u64, out)              \
    F(gk_i64, n)                \
    F(gk_u32, key0)             \
    F(gk_u32, key1)             \
    F(gk_u64, offset)           \
    F(double, lo)               \
    F(double, scale)            \
    F(gk_u64, low)              \
    F(gk_u64, range)            \
    F(gk_i32, affine)           \
    F(gk_i32, unused)

// arange: out[i] = start + i * step in double, or istart + i * istep in 64-bit integers.
#define GK_ARANGE_ARGS(F, A, M) \
    F(gk_u64, out)              \
    F(gk_i64, n)                \
    F(double, start)            \
    F(double, step)             \
    F(gk_i64, istart)           \
    F(gk_i64, istep)

// gpukit.nn row kernels (softmax, log_softmax, layer_norm, rms_norm): each row is n elements
// along one axis; rows are the other dimensions. The output is contiguous in the input's shape.
// weight / bias: 0 when absent (length n, contiguous). `group` threads serve a row (GK_LANES: a
// warp; else the whole block). With `residual` (the norms), h = in + residual (rounded to the
// element type) is written to residual_out (contiguous, like out) and normalized. A row split over
// blocks (`splits` pieces of `chunk` elements) keeps each piece's statistics in `partial` (row *
// splits + piece, GK_ROWS_STATE_BYTES each) between the two kernels that serve it.
#define GK_ROWS_ARGS(F, A, M)                      \
    F(gk_u64, in)                                  \
    F(gk_u64, out)                                 \
    F(gk_u64, weight)                              \
    F(gk_u64, bias)                                \
    F(gk_u64, residual)                            \
    F(gk_u64, residual_out)                        \
    F(gk_u64, partial)                             \
    F(gk_i64, n_rows)                              \
    F(gk_i64, n)                                   \
    F(gk_i64, in_step) /* strides along the row */ \
    F(gk_i64, out_step)                            \
    F(gk_i64, res_step)                            \
    F(gk_i64, chunk)                               \
    F(double, eps)                                 \
    F(gk_i32, row_ndim)                            \
    F(gk_i32, group)                               \
    F(gk_i32, splits)                              \
    F(gk_i32, unused)                              \
    A(gk_i64, row_shape, GK_MAX_DIMS)              \
    A(gk_i64, in_row_stride, GK_MAX_DIMS)          \
    A(gk_i64, out_row_stride, GK_MAX_DIMS)         \
    A(gk_i64, res_row_stride, GK_MAX_DIMS)

// embedding: out[i, :] = table[ids[i], :] for contiguous ids; a bad id sets *error (an i32).
#define GK_EMBED_ARGS(F, A, M)              \
    F(gk_u64, ids)                          \
    F(gk_u64, table)                        \
    F(gk_u64, out)                          \
    F(gk_u64, error)                        \
    F(gk_i64, n_ids)                        \
    F(gk_i64, num)                          \
    F(gk_i64, dim)                          \
    F(gk_i64, row_stride) /* the table's */ \
    F(gk_i64, col_stride)

// rope over x (leading dims, then head_dim as the last one); cos/sin (one angle per pair of x's
// last dimension) broadcast over the leading dims. out: contiguous in x's shape; n_rows: product
// of the leading dims; half = head_dim / 2; *_step: strides along head_dim.
#define GK_ROPE_ARGS(F, A, M)          \
    F(gk_u64, x)                       \
    F(gk_u64, cos)                     \
    F(gk_u64, sin)                     \
    F(gk_u64, out)                     \
    F(gk_i64, n_rows)                  \
    F(gk_i64, half)                    \
    F(gk_i64, x_step)                  \
    F(gk_i64, cos_step)                \
    F(gk_i64, sin_step)                \
    F(gk_i32, ndim)                    \
    F(gk_i32, interleaved)             \
    A(gk_i64, shape, GK_MAX_DIMS)      \
    A(gk_i64, x_stride, GK_MAX_DIMS)   \
    A(gk_i64, cos_stride, GK_MAX_DIMS) \
    A(gk_i64, sin_stride, GK_MAX_DIMS)

// Fused attention. q (batch, hq, sq, d), k/v (batch, hkv, skv, d), mask broadcast to
// (batch, hq, sq, skv) (strides 0 where broadcast), out contiguous (batch, hq, sq, d). With
// n_splits > 1 the keys are split over blocks: partial sums go to ws_o / ws_ml and
// gk_attention_combine merges them. tiles_per_split: key tiles per split; scale_log2: the
// softmax scale times log2(e).
#define GK_ATTN_ARGS(F, A, M)  \
    F(gk_u64, q)               \
    F(gk_u64, k)               \
    F(gk_u64, v)               \
    F(gk_u64, out)             \
    F(gk_u64, mask)            \
    F(gk_u64, ws_o)            \
    F(gk_u64, ws_ml)           \
    F(gk_i64, batch)           \
    F(gk_i64, hq)              \
    F(gk_i64, hkv)             \
    F(gk_i64, sq)              \
    F(gk_i64, skv)             \
    F(gk_i64, d)               \
    A(gk_i64, q_stride, 4)     \
    A(gk_i64, k_stride, 4)     \
    A(gk_i64, v_stride, 4)     \
    A(gk_i64, mask_stride, 4)  \
    F(gk_i64, tiles_per_split) \
    F(double, scale_log2)      \
    F(gk_i32, causal)          \
    F(gk_i32, n_splits)

// Tensor-core attention over 16-bit floats (sm_80+): kernels/attention_tc.cu (prefill: a block per
// (batch * q head, tile of query rows)) and kernels/attention_decode.cu (split-KV decode: a block
// per (key split, batch * kv head), partial states merged by gk_attn_combine). q (batch, hq, sq,
// d), k / v (batch, hkv, skv, d) with the last stride 1, mask broadcast to (batch, hq, sq, skv);
// out contiguous (batch, hq, sq, d). kv_len (0: none) points at the number of valid keys (int32
// or int64, one per batch entry or one for all): keys at or past it are ignored, and causal rows
// align to it. With n_splits > 1 (decode) the partial states go to ws_o (n_splits, batch * hq *
// sq, d) and ws_ml (n_splits, batch * hq * sq, 2) as float32.
#define GK_ATTN_TC_ARGS(F, A, M)                                                                  \
    F(gk_u64, q)                                                                                  \
    F(gk_u64, k)                                                                                  \
    F(gk_u64, v)                                                                                  \
    F(gk_u64, out)                                                                                \
    F(gk_u64, mask)                                                                               \
    F(gk_u64, kv_len)                                                                             \
    F(gk_u64, ws_o)                                                                               \
    F(gk_u64, ws_ml)                                                                              \
    F(gk_i64, batch)                                                                              \
    F(gk_i64, hq)                                                                                 \
    F(gk_i64, hkv)                                                                                \
    F(gk_i64, sq)                                                                                 \
    F(gk_i64, skv)                                                                                \
    F(gk_i64, d)                                                                                  \
    A(gk_i64, q_stride, 4)                                                                        \
    A(gk_i64, k_stride, 4)                                                                        \
    A(gk_i64, v_stride, 4)                                                                        \
    A(gk_i64, mask_stride, 4)                                                                     \
    F(gk_i64, kv_len_stride)  /* elements between the batch entries of kv_len (0: one for all) */ \
    F(gk_i64, keys_per_split) /* decode: keys of the capacity each split covers */                \
    F(float, scale_log2)      /* softmax scale * log2(e) */                                       \
    F(gk_i32, causal)                                                                             \
    F(gk_i32, kv_len_size) /* bytes of a kv_len entry: 0 (none), 4 or 8 */                        \
    F(gk_i32, n_splits)

// gpukit.models' decode step, the rotary embedding fused with the KV-cache write
// (kernels/qkv_cache.cu). qkv: (batch, s, (hq + 2 hkv) * d), d contiguous: the q heads, then the
// k heads, then the v heads. The step's s tokens are at positions *length - s .. *length - 1
// (length: an int32 on the device, already advanced past them). q is rotated into q_out
// (batch, hq, s, d), contiguous; k (rotated) and v are written into the caches at those
// positions, k_cache and v_cache alike (batch, hkv, capacity, d) of strides cache_stride (batch,
// head, position; d contiguous). cos/sin: `positions` rows of d / 2 angles; rotary 0 (GPT-2):
// nothing rotated. A position outside the cache or the tables writes no k, v and a zero q.
#define GK_QKV_CACHE_ARGS(F, A, M) \
    F(gk_u64, qkv)                 \
    F(gk_u64, cos)                 \
    F(gk_u64, sin)                 \
    F(gk_u64, length)              \
    F(gk_u64, q_out)               \
    F(gk_u64, k_cache)             \
    F(gk_u64, v_cache)             \
    F(gk_i64, batch)               \
    F(gk_i64, s)                   \
    F(gk_i64, hq)                  \
    F(gk_i64, hkv)                 \
    F(gk_i64, d)                   \
    F(gk_i64, qkv_batch_stride)    \
    F(gk_i64, qkv_seq_stride)      \
    A(gk_i64, cache_stride, 3)     \
    F(gk_i64, capacity)            \
    F(gk_i64, positions)           \
    F(gk_i32, rotary)              \
    F(gk_i32, unused)

// The next token of each row of logits (kernels/sample.cu), a block per row: greedy (argmax,
// the first of equal maxima) when temperature is 0, else a draw from softmax(logits /
// temperature) restricted to the top_k largest logits (0: all; ties with the k-th kept) and then
// to the top_p mass (1: all; the fewest largest logits whose weights reach it, ties kept). The
// draw uses Philox4x32-10 with key seed and counter (row, position). Written: next_ids[row] and
// tokens[row, position] (position = *length, where the new token goes), and with eos >= 0,
// finished[row] (an int32, set once the row produced eos; a finished row yields eos again).
#define GK_SAMPLE_ARGS(F, A, M)                                 \
    F(gk_u64, logits)                                           \
    F(gk_u64, params) /* a gk_sample_params in device memory */ \
    F(gk_u64, length)                                           \
    F(gk_u64, finished)                                         \
    F(gk_u64, next_ids) /* int64 */                             \
    F(gk_u64, tokens)   /* int64 */                             \
    F(gk_i64, rows)                                             \
    F(gk_i64, vocab)                                            \
    F(gk_i64, row_stride)                                       \
    F(gk_i64, ids_stride)                                       \
    F(gk_i64, tokens_stride)                                    \
    F(gk_i64, capacity)

// What sample.cu reads from device memory, so that one launch (or captured graph) serves every
// generate call.
#define GK_SAMPLE_PARAMS(F, A, M) \
    F(double, temperature)        \
    F(double, top_p)              \
    F(gk_i64, top_k)              \
    F(gk_u64, seed)               \
    F(gk_i64, eos)

// LSD radix sort (kernels/sort.cu). Keys are raw bits; each pass moves keys (and int64 values)
// stably by one digit of their order-preserving bits (key passes, first) or, when rows of seg_len
// keys lie end to end, of the row number value / seg_len (row passes, after them). The input is
// cut into portions of portion_tiles tiles so that look-back counts fit in 30 bits.
#define GK_SORT_ARGS(F, A, M)                                                                   \
    F(gk_u64, keys_in)                                                                          \
    F(gk_u64, keys_out)      /* 0: this pass writes no keys (argsort's last pass) */            \
    F(gk_u64, vals_in)       /* 0: the values are the positions */                              \
    F(gk_u64, vals_out)      /* 0: not written */                                               \
    F(gk_u64, block_counts)  /* u32 [portion][histogram block][pass][radix] */                  \
    F(gk_u64, digit_starts)  /* i64 [pass][portion][radix]: each run's first output position */ \
    F(gk_u64, status)        /* u32 [tile][radix]: look-back words (flag << 30 | count) */      \
    F(gk_u64, tile_counters) /* u32 [pass][portion]: tiles handed out so far */                 \
    F(gk_u64, key_xor)       /* applied to the ordered bits: all ones sorts descending */       \
    F(gk_i64, n)             /* keys in all */                                                  \
    F(gk_i64, seg_len)       /* row length (row passes; the row sort's rows) */                 \
    F(gk_i64, portion_tiles)                                                                    \
    F(gk_i64, status_words) /* look-back words and tile counters the histogram zeroes */        \
    F(gk_i64, counter_words)                                                                    \
    F(gk_i32, passes)     /* key passes, then row passes */                                     \
    F(gk_i32, key_passes) /* fewer than the key's digits when its high bits are known zero */   \
    F(gk_i32, pass)       /* of this onesweep launch */                                         \
    F(gk_i32, portion)                                                                          \
    F(gk_i32, portions)                                                                         \
    F(gk_i32, hist_blocks) /* histogram blocks per portion */                                   \
    F(gk_i32, local_index) /* the last row pass writes value % seg_len (argsort along rows) */  \
    F(gk_i32, unused)

// Binary searches (kernels/search.cu): out[i] = the number of sorted elements before which
// queries[i] goes (side left: elements < it; right: <= it), in NumPy's order (NaN last).
#define GK_SEARCH_ARGS(F, A, M)                                                       \
    F(gk_u64, sorted)                                                                 \
    F(gk_u64, sorter) /* int64, 0 when absent: sorted[sorter[k]] is in order */       \
    F(gk_u64, queries)                                                                \
    F(gk_u64, out) /* int64 */                                                        \
    F(gk_u64, err) /* int32 set to 1 when a sorter index is out of range (0: none) */ \
    F(gk_i64, n)   /* sorted elements */                                              \
    F(gk_i64, m)   /* queries */                                                      \
    F(gk_i32, right)                                                                  \
    F(gk_i32, unused)

// Distinct values of sorted keys (kernels/search.cu): an element starts a run when it differs
// from the one before it (NaNs alike unless nan_distinct, -0.0 == +0.0). A tile per block.
#define GK_UNIQUE_ARGS(F, A, M)                                                              \
    F(gk_u64, keys)        /* sorted keys (raw bits) */                                      \
    F(gk_u64, perm)        /* int64 positions of the sorted keys in the input (0: none) */   \
    F(gk_u64, tile_counts) /* int64 [tiles + 1]: runs starting per tile; scanned in place */ \
    F(gk_u64, values)      /* outputs below: 0 when not wanted */                            \
    F(gk_u64, index)                                                                         \
    F(gk_u64, inverse)                                                                       \
    F(gk_u64, starts)                                                                        \
    F(gk_u64, counts)                                                                        \
    F(gk_u64, run_flags) /* u32 per warp and item: lanes whose key starts a run */           \
    F(gk_i64, n)                                                                             \
    F(gk_i64, n_unique)                                                                      \
    F(gk_i32, nan_distinct) /* every NaN starts a run (the Array API's unique_*) */          \
    F(gk_i32, unused)

// Histograms (kernels/search.cu): bin k holds [edges[k], edges[k+1]), the last one also its
// right edge; counts are int64, zeroed by the caller.
#define GK_HIST_ARGS(F, A, M)                                                                 \
    F(gk_u64, x)       /* histogram: values, raw bits of the edges' dtype; else int64 bins */ \
    F(gk_u64, edges)   /* nbins + 1 increasing edges */                                       \
    F(gk_u64, counts)  /* int64 [nbins] (0: not counted) */                                   \
    F(gk_u64, bins)    /* int64 per element: its bin, or nbins when outside (0: none) */      \
    F(gk_u64, sums)    /* double [nbins]: bin sums of sorted weights (gk_bin_sums) */         \
    F(gk_u64, weights) /* double per element, sorted by bin like x (gk_bin_sums) */           \
    F(gk_i64, n)                                                                              \
    F(gk_i64, nbins)                                                                          \
    F(gk_i32, shared_bins) /* count in shared memory (nbins small enough) */                  \
    F(gk_i32, unused)

// Discrete Fourier transforms (kernels/fft.cu): a block transforms GK_FFT_ROWS rows of GK_FFT_N
// complex values in shared memory. Rows are numbered with batch dimension 0 fastest; strides
// count complex elements. Output k of a row is stored when k < out_len, multiplied first by
// exp(-2 pi i b k / tw_n) when tw_n > 0 (b: the row's index along batch dimension 0; the twiddle
// between the passes of a long transform), conjugated (conj_out) and scaled.
#define GK_FFT_ARGS(F, A, M)                                                            \
    F(gk_u64, in)                                                                       \
    F(gk_u64, out)                                                                      \
    F(gk_i64, rows)                                                                     \
    F(gk_i64, in_step) /* strides along the transform */                                \
    F(gk_i64, out_step)                                                                 \
    F(gk_i64, out_len)                                                                  \
    F(gk_i64, tw_n)                                                                     \
    A(gk_i64, batch_shape, GK_FFT_BATCH_DIMS)                                           \
    A(gk_i64, in_batch, GK_FFT_BATCH_DIMS)                                              \
    A(gk_i64, out_batch, GK_FFT_BATCH_DIMS)                                             \
    F(double, scale)                                                                    \
    F(gk_i32, batch_ndim)                                                               \
    F(gk_i32, conj_in) /* the input is conjugated as it is read (inverse transforms) */ \
    F(gk_i32, conj_out)

// The FFT's passes besides the transform (kernels/fft_aux.cu): real and Hermitian input widened
// to complex, the real part, the half-length real transforms' pre- and post-processing and
// Bluestein's chirps. `in` is read through the batch strides and in_step (in its own elements);
// `out` is contiguous; filter: the chirp filter's spectrum (gk_fft_chirp_mul).
#define GK_FFT_AUX_ARGS(F, A, M)                 \
    F(gk_u64, in)                                \
    F(gk_u64, out)                               \
    F(gk_u64, filter)                            \
    F(gk_i64, rows)                              \
    F(gk_i64, n) /* the transform's length */    \
    F(gk_i64, m) /* the other length involved */ \
    F(gk_i64, in_step)                           \
    A(gk_i64, batch_shape, GK_FFT_BATCH_DIMS)    \
    A(gk_i64, in_batch, GK_FFT_BATCH_DIMS)       \
    F(double, scale)                             \
    F(gk_i32, batch_ndim)                        \
    F(gk_i32, conj)

// kernels/linalg_small.cu: stacks of n x n matrices, contiguous but for gk_chol_small's input
// (ld, stride) (b and out: n x k for a solve).
#define GK_LINALG_ARGS(F, A, M)                                                                    \
    F(gk_u64, a)                                                                                   \
    F(gk_u64, b)    /* right-hand sides (GK_LA_SOLVE) */                                           \
    F(gk_u64, out)  /* factor, solution, inverse, determinant or sign */                           \
    F(gk_u64, out2) /* log|det| (GK_LA_SLOGDET), eigenvectors, -L^-T */                            \
    F(gk_u64, info) /* int32 per matrix: 1 not positive definite / singular */                     \
    F(gk_i32, n)                                                                                   \
    F(gk_i32, k)                                                                                   \
    F(gk_i32, mode) /* lu: GK_LA_SOLVE, _INV, _DET, _SLOGDET; eigh: vectors; chol: GK_LA_CHOL_* */ \
    F(gk_i32, upper)      /* cholesky: read and write the upper triangle; eigh: read it */         \
    F(gk_i64, ld)         /* cholesky: a's row stride (elements; the others read rows of n) */     \
    F(gk_i64, stride)     /* cholesky: a's matrix stride (elements) */                             \
    F(gk_i64, out_ld)     /* cholesky: out's row stride (elements) */                              \
    F(gk_i64, out_stride) /* cholesky: out's matrix stride (elements) */

// kernels/linalg_lu.cu: the blocked LU's steps over a stack of trailing matrices T (or rows X of
// right-hand sides) at `a`, row stride ld, matrix stride `stride` (elements); piv and diag: per
// matrix n entries (the whole matrix's pivot rows and U's diagonal, T's first row being row k).
#define GK_LU_ARGS(F, A, M)                                                                    \
    F(gk_u64, a)                                                                               \
    F(gk_u64, piv)     /* int32 count x n: the row swapped with row i at step i (absolute) */  \
    F(gk_u64, diag)    /* count x n: U's diagonal (the pivots) */                              \
    F(gk_u64, info)    /* int32 per matrix: 1 once a pivot is exactly zero */                  \
    F(gk_u64, counter) /* u32 per matrix: blocks of the launch done (zero between launches) */ \
    F(gk_u64, out)     /* panel: blocks' best |values| or a copy; trinv, det: result */        \
    F(gk_u64, out2)    /* panel: each block's best row (scratch); slogdet: log|det| */         \
    F(gk_u64, work)    /* lu_solve: the backward sums' partials (scratch) */                   \
    F(gk_i64, ld)                                                                              \
    F(gk_i64, stride)                                                                          \
    F(gk_i32, m) /* rows of T or X */                                                          \
    F(gk_i32, r) /* columns of X (swap) */                                                     \
    F(gk_i32, n)                                                                               \
    F(gk_i32, k)                                                                               \
    F(gk_i32, nb)   /* the panel's width */                                                    \
    F(gk_i32, col)  /* panel: this launch's column (nb: the last column's multipliers only);   \
                       lu_solve backward: the partials' chunks */                              \
    F(gk_i32, mode) /* trinv: 0 -inverse of unit-lower L11, 1 inverse of U11; det modes */     \
    F(gk_i32, mat0) /* the launch's first matrix (blockIdx.y counts from it) */

// kernels/linalg_qr.cu: a panel of m rows and nb columns at `a` (row stride ld, matrix stride
// `stride`, elements); the outputs contiguous per matrix.
#define GK_QR_ARGS(F, A, M)                                                                  \
    F(gk_u64, a)                                                                             \
    F(gk_u64, v) /* count x m x nb: the reflectors (unit lower trapezoid) */                 \
    F(gk_u64, r) /* count x nb x nb: R11 (zeros below the diagonal) */                       \
    F(gk_u64, t) /* count x nb x nb: -T of the compact WY form I - V T V^T (zeros below) */  \
    F(gk_u64, w) /* count x nb x (m - smem_rows): the rows past shared memory, by column */  \
    F(gk_i64, ld)                                                                            \
    F(gk_i64, stride)                                                                        \
    F(gk_i32, m)                                                                             \
    F(gk_i32, nb)                                                                            \
    F(gk_i32, smem_rows) /* the panel's first rows, held in shared memory (the rest in w) */ \
    F(gk_i32, rows_per)  /* cluster: the rows each block holds */

// kernels/linalg_svj.cu: stacks of k rows of len elements (x, contiguous) made orthogonal in
// place, the same rotations applied to the rows of r (k x k, contiguous).
#define GK_SVJ_ARGS(F, A, M)                                                                     \
    F(gk_u64, x)                                                                                 \
    F(gk_u64, r)                                                                                 \
    F(gk_u64, flag)  /* int32 per matrix: set to 1 where a pair was rotated (or a row zeroed) */ \
    F(gk_u64, info)  /* int32 per matrix (whole): 1 when GK_LA_SWEEPS sweeps did not converge */ \
    F(gk_u64, norms) /* la_t, k per matrix (whole): the rows' norms, descending */               \
    F(gk_u64, negligible) /* la_t per matrix: a row of norm at most this is set to zero */       \
    F(double, tol)        /* rotate where |x_p . x_q| > tol ||x_p|| ||x_q|| */                   \
    F(gk_i32, k)                                                                                 \
    F(gk_i32, len)                                                                               \
    F(gk_i32, rows)   /* rows of a block pair (even): two blocks of rows / 2 */                  \
    F(gk_i32, blocks) /* row blocks of a sweep (even) */                                         \
    F(gk_i32, round)  /* the pairing's round (blocked) */                                        \
    F(gk_i32, whole)  /* 1: k <= rows, every sweep in the launch */

// Every argument block: (struct name, field list).
#define GK_ARG_STRUCTS(S)                   \
    S(gk_ew_args, GK_EW_ARGS)               \
    S(gk_ew_contig_args, GK_EW_CONTIG_ARGS) \
    S(gk_reduce_args, GK_REDUCE_ARGS)       \
    S(gk_scan_args, GK_SCAN_ARGS)           \
    S(gk_transpose_args, GK_TRANSPOSE_ARGS) \
    S(gk_matmul_args, GK_MATMUL_ARGS)       \
    S(gk_gemm_args, GK_GEMM_ARGS)           \
    S(gk_gemm_sm90_args, GK_GEMM_SM90_ARGS) \
    S(gk_gemv_args, GK_GEMV_ARGS)           \
    S(gk_gather_args, GK_GATHER_ARGS)       \
    S(gk_compact_args, GK_COMPACT_ARGS)     \
    S(gk_philox_args, GK_PHILOX_ARGS)       \
    S(gk_arange_args, GK_ARANGE_ARGS)       \
    S(gk_rows_args, GK_ROWS_ARGS)           \
    S(gk_embed_args, GK_EMBED_ARGS)         \
    S(gk_rope_args, GK_ROPE_ARGS)           \
    S(gk_attn_args, GK_ATTN_ARGS)           \
    S(gk_attn_tc_args, GK_ATTN_TC_ARGS)     \
    S(gk_sort_args, GK_SORT_ARGS)           \
    S(gk_search_args, GK_SEARCH_ARGS)       \
    S(gk_unique_args, GK_UNIQUE_ARGS)       \
    S(gk_hist_args, GK_HIST_ARGS)           \
    S(gk_qkv_cache_args, GK_QKV_CACHE_ARGS) \
    S(gk_sample_args, GK_SAMPLE_ARGS)       \
    S(gk_sample_params, GK_SAMPLE_PARAMS)   \
    S(gk_fft_args, GK_FFT_ARGS)             \
    S(gk_fft_aux_args, GK_FFT_AUX_ARGS)     \
    S(gk_linalg_args, GK_LINALG_ARGS)       \
    S(gk_lu_args, GK_LU_ARGS)               \
    S(gk_qr_args, GK_QR_ARGS)               \
    S(gk_svj_args, GK_SVJ_ARGS)

#define GK_ARG_FIELD(T, NAME) T NAME;
#define GK_ARG_ARRAY(T, NAME, COUNT) T NAME[COUNT];
#define GK_ARG_MATRIX(T, NAME, ROWS, COLS) T NAME[ROWS][COLS];
#define GK_ARG_STRUCT(NAME, FIELDS)                       \
    struct NAME {                                         \
        FIELDS(GK_ARG_FIELD, GK_ARG_ARRAY, GK_ARG_MATRIX) \
    };
GK_ARG_STRUCTS(GK_ARG_STRUCT)
