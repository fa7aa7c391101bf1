// Launches of the gpukit.nn kernels (kernels/nn_rows.cu, nn_gather.cu, attention.cu).
#pragma once
#include <cstdint>

#include "cuda_driver.h"
#include "ops.h"

namespace gpukit::nn_ops {

using ops::Dims;

// softmax / log_softmax / layer_norm / rms_norm: rows of n elements (weight, bias: 0 if absent).
void rows(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t in, uint64_t out,
          uint64_t weight, uint64_t bias, int64_t n, int64_t in_step, int64_t out_step, double eps,
          const Dims& row_shape, const Dims& in_row_stride, const Dims& out_row_stride);

void embedding(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t ids, uint64_t table,
               uint64_t out, uint64_t error, int64_t n_ids, int64_t num, int64_t dim,
               int64_t row_stride, int64_t col_stride);

void rope(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t x, uint64_t cos,
          uint64_t sin, uint64_t out, int64_t half, bool interleaved, const Dims& steps,
          const Dims& shape, const Dims& x_strides, const Dims& cos_strides,
          const Dims& sin_strides);

struct AttentionShape {
    int64_t batch, hq, hkv, sq, skv, d;
};

// q, k, v, mask strides: 4 each (mask: zeros where broadcast). With n_splits > 1, ws_o and ws_ml
// hold n_splits partial results per output row (element sizes: t_size, acc_size).
void attention(const CudaDevice& dev, cu::Function fn, cu::Function combine_fn, cu::Stream s,
               const std::vector<uint64_t>& ptrs, const AttentionShape& shape,
               const std::vector<Dims>& strides, bool causal, double scale, int64_t n_splits,
               int64_t tiles_per_split, int t_size, int acc_size);

// The query rows one attention block serves (Python sizes the split workspace with it).
int64_t attention_block_rows(int64_t rows_per_kv_head);

}  // namespace gpukit::nn_ops
