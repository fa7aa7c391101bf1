// Launches of the built-in kernels: the argument blocks of kernels/args.cuh are filled here from
// what Python computed (pointers, shapes, strides) and the launch shape is chosen here.
#pragma once
#include <cstdint>
#include <vector>

#include "cuda_driver.h"

namespace gpukit::ops {

using Dims = std::vector<int64_t>;

// A scalar operand, in both forms: kernels computing in an integer type read `i`, others `f`.
struct Scalar {
    double f = 0;
    int64_t i = 0;
};

// Operand 0 is the output. Empty `shape` means every operand is contiguous (gk_ew_contig).
void elementwise(const CudaDevice& dev, cu::Function fn, cu::Stream s, int64_t n,
                 const std::vector<uint64_t>& ptrs, const std::vector<Scalar>& scalars,
                 const Dims& shape, const std::vector<Dims>& strides);

// The common case with a short host path: contiguous operands, at most two inputs (a zero pointer
// where that input is the scalar instead).
void elementwise_contig(const CudaDevice& dev, cu::Function fn, cu::Stream s, int64_t n,
                        uint64_t out, uint64_t in0, uint64_t in1, const Scalar& s0,
                        const Scalar& s1);

void reduce(const CudaDevice& dev, cu::Function block_fn, cu::Function thread_fn, cu::Stream s,
            uint64_t in, uint64_t out, const Dims& out_shape, const Dims& out_stride,
            const Dims& red_shape, const Dims& red_stride, double scale);

// out = a @ b (+ bias[n * bias_stride] when bias != 0). `tensor_cores`: fn is gk_matmul_mma
// (kernels/matmul_mma.cu, its dynamic shared-memory limit already raised to GK_MMA_SMEM), else
// gk_matmul (kernels/matmul.cu) built with GK_TILE=tile.
void matmul(const CudaDevice& dev, cu::Function fn, bool tensor_cores, int tile, cu::Stream s,
            uint64_t a, uint64_t b, uint64_t out, uint64_t bias, int64_t bias_stride, int64_t m,
            int64_t n, int64_t k, const Dims& a_strides, const Dims& b_strides,
            const Dims& out_strides, const Dims& batch_shape, const Dims& batch_a,
            const Dims& batch_b, const Dims& batch_out);

// The same product for at most GK_SKINNY_M rows of a and no batch: fn is gk_matmul_skinny
// (kernels/matmul_skinny.cu), a warp per column of out.
void matmul_skinny(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t a, uint64_t b,
                   uint64_t out, uint64_t bias, int64_t bias_stride, int64_t m, int64_t n,
                   int64_t k, const Dims& a_strides, const Dims& b_strides,
                   const Dims& out_strides);

void cumsum(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t in, uint64_t out,
            int64_t n, int64_t in_step, int64_t out_step, const Dims& row_shape,
            const Dims& in_row_stride, const Dims& out_row_stride);

void arange(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t out, int64_t n,
            double start, double step, int64_t istart, int64_t istep);

// Advanced indexing: `idx_strides[k]` walks index array k over the output's dimensions.
void gather(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t src, uint64_t out,
            uint64_t err, const Dims& shape, const Dims& src_stride,
            const std::vector<uint64_t>& idx, const std::vector<Dims>& idx_strides,
            const Dims& axis_size, const Dims& axis_stride);

// One of the two compaction kernels (a block per tile of the mask; see kernels/compact.cu).
void compact(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t mask, uint64_t counts,
             uint64_t prefix, uint64_t out, int64_t n, int64_t total, const Dims& shape);

// Philox random numbers: `per_group` elements from each group's four words.
void philox(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t out, int64_t n,
            int per_group, uint64_t seed, uint64_t offset, double lo, double scale, bool affine,
            uint64_t low, uint64_t range);

// A user kernel: `params` is the argument list packed with C alignment rules.
void launch_packed(const CudaDevice& dev, cu::Function fn, Dim3 grid, Dim3 block, unsigned shared,
                   cu::Stream s, std::vector<char>& params);

}  // namespace gpukit::ops
