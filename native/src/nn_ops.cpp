#include "nn_ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "launch_util.h"

namespace gpukit::nn_ops {
namespace {

using launch_util::copy_dims;
using launch_util::launch_one;

constexpr unsigned kBlock = 256;
constexpr int64_t kLanes = 32;
constexpr int64_t kRowsPerWarp = 4;   // GK_ROWS in attention.cu
constexpr int64_t kKeysPerTile = 32;  // GK_KEYS
constexpr int kStaticSharedLimit = 48 * 1024;

unsigned grid_for(const CudaDevice& dev, int64_t blocks) {
    return static_cast<unsigned>(
        std::clamp<int64_t>(blocks, 1, int64_t{std::max(dev.sm_count(), 1)} * 32));
}

int64_t warps_for(int64_t rows_per_kv_head) {
    return std::clamp<int64_t>((rows_per_kv_head + kRowsPerWarp - 1) / kRowsPerWarp, 1, 4);
}

}  // namespace

void rows(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t in, uint64_t out,
          uint64_t weight, uint64_t bias, int64_t n, int64_t in_step, int64_t out_step, double eps,
          const Dims& row_shape, const Dims& in_row_stride, const Dims& out_row_stride) {
    gk_rows_args a{};
    a.in = in;
    a.out = out;
    a.weight = weight;
    a.bias = bias;
    a.n = n;
    a.in_step = in_step;
    a.out_step = out_step;
    a.eps = eps;
    a.n_rows = 1;
    for (auto d : row_shape) a.n_rows *= d;
    if (n == 0 || a.n_rows == 0) return;
    a.row_ndim = static_cast<gk_i32>(row_shape.size());
    copy_dims(row_shape, a.row_shape, GK_MAX_DIMS, "nn input");
    copy_dims(in_row_stride, a.in_row_stride, GK_MAX_DIMS, "nn input");
    copy_dims(out_row_stride, a.out_row_stride, GK_MAX_DIMS, "nn input");
    // A warp per row up to 1024 elements (8 rows per block), the whole block beyond.
    a.group = n <= 1024 ? static_cast<gk_i32>(kLanes) : static_cast<gk_i32>(kBlock);
    const int64_t rows_per_block = kBlock / a.group;
    const int64_t blocks = (a.n_rows + rows_per_block - 1) / rows_per_block;
    launch_one(dev, fn, {grid_for(dev, blocks)}, {kBlock}, s, a);
}

void embedding(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t ids, uint64_t table,
               uint64_t out, uint64_t error, int64_t n_ids, int64_t num, int64_t dim,
               int64_t row_stride, int64_t col_stride) {
    if (n_ids == 0 || dim == 0) return;
    gk_embed_args a{ids, table, out, error, n_ids, num, dim, row_stride, col_stride};
    const int64_t per_block = kBlock / kLanes;
    launch_one(dev, fn, {grid_for(dev, (n_ids + per_block - 1) / per_block)}, {kBlock}, s, a);
}

void rope(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t x, uint64_t cos,
          uint64_t sin, uint64_t out, int64_t half, bool interleaved, const Dims& steps,
          const Dims& shape, const Dims& x_strides, const Dims& cos_strides,
          const Dims& sin_strides) {
    gk_rope_args a{};
    a.x = x;
    a.cos = cos;
    a.sin = sin;
    a.out = out;
    a.half = half;
    a.interleaved = interleaved ? 1 : 0;
    a.x_step = steps.at(0);
    a.cos_step = steps.at(1);
    a.sin_step = steps.at(2);
    a.n_rows = 1;
    for (auto d : shape) a.n_rows *= d;
    if (half == 0 || a.n_rows == 0) return;
    a.ndim = static_cast<gk_i32>(shape.size());
    copy_dims(shape, a.shape, GK_MAX_DIMS, "rope input");
    copy_dims(x_strides, a.x_stride, GK_MAX_DIMS, "rope input");
    copy_dims(cos_strides, a.cos_stride, GK_MAX_DIMS, "rope input");
    copy_dims(sin_strides, a.sin_stride, GK_MAX_DIMS, "rope input");
    const int64_t pairs = a.n_rows * half;
    launch_one(dev, fn, {grid_for(dev, (pairs + kBlock - 1) / kBlock)}, {kBlock}, s, a);
}

int64_t attention_block_rows(int64_t rows_per_kv_head) {
    return warps_for(rows_per_kv_head) * kRowsPerWarp;
}

void attention(const CudaDevice& dev, cu::Function fn, cu::Function combine_fn, cu::Stream s,
               const std::vector<uint64_t>& ptrs, const AttentionShape& shape,
               const std::vector<Dims>& strides, bool causal, double scale, int64_t n_splits,
               int64_t tiles_per_split, int t_size, int acc_size) {
    if (ptrs.size() != 7 || strides.size() != 4) {
        throw std::invalid_argument("attention: 7 pointers and 4 stride lists are expected");
    }
    gk_attn_args a{};
    a.q = ptrs[0];
    a.k = ptrs[1];
    a.v = ptrs[2];
    a.out = ptrs[3];
    a.mask = ptrs[4];
    a.ws_o = ptrs[5];
    a.ws_ml = ptrs[6];
    a.batch = shape.batch;
    a.hq = shape.hq;
    a.hkv = shape.hkv;
    a.sq = shape.sq;
    a.skv = shape.skv;
    a.d = shape.d;
    for (size_t i = 0; i < 4; ++i) {
        if (strides[i].size() != 4) throw std::invalid_argument("attention: 4 strides per operand");
    }
    copy_dims(strides[0], a.q_stride, 4, "attention q");
    copy_dims(strides[1], a.k_stride, 4, "attention k");
    copy_dims(strides[2], a.v_stride, 4, "attention v");
    copy_dims(strides[3], a.mask_stride, 4, "attention mask");
    a.causal = causal ? 1 : 0;
    a.scale_log2 = scale * 1.4426950408889634;
    a.n_splits = static_cast<gk_i32>(n_splits);
    a.tiles_per_split = tiles_per_split;
    const int64_t rows = shape.batch * shape.hq * shape.sq;
    if (rows == 0 || shape.d == 0) return;
    const int64_t per_kv_head = shape.hq / shape.hkv * shape.sq;
    const int64_t warps = warps_for(per_kv_head);
    const int64_t block_rows = warps * kRowsPerWarp;
    const int64_t shared = block_rows * shape.d * acc_size +
                           kKeysPerTile * (shape.d + (t_size < 4 ? 4 / t_size : 1)) * t_size +
                           kKeysPerTile * shape.d * t_size;
    if (shared > dev.max_shared_per_block_optin()) {
        throw std::invalid_argument("attention: head_dim " + std::to_string(shape.d) + " needs " +
                                    std::to_string(shared) +
                                    " bytes of shared memory per block; this GPU has " +
                                    std::to_string(dev.max_shared_per_block_optin()));
    }
    if (shared > kStaticSharedLimit) dev.set_dynamic_shared(fn, static_cast<int>(shared));
    const int64_t m_blocks = (per_kv_head + block_rows - 1) / block_rows;
    const int64_t bh = shape.batch * shape.hkv;
    if (m_blocks > 0x7fffffff || bh > 65535 || n_splits > 65535) {
        throw std::invalid_argument("attention: too many (batch, kv head) pairs for one launch");
    }
    const Dim3 grid{static_cast<unsigned>(m_blocks), static_cast<unsigned>(bh),
                    static_cast<unsigned>(n_splits)};
    launch_one(dev, fn, grid, {static_cast<unsigned>(warps * kLanes)}, s, a,
               static_cast<unsigned>(shared));
    if (n_splits > 1) {
        const int64_t per_block = kBlock / kLanes;
        launch_one(dev, combine_fn, {grid_for(dev, (rows + per_block - 1) / per_block)}, {kBlock},
                   s, a);
    }
}

}  // namespace gpukit::nn_ops
