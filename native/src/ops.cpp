#include "ops.h"

#include <algorithm>
#include <stdexcept>

#include "launch_util.h"

namespace gpukit::ops {
namespace {

using launch_util::copy_dims;
using launch_util::launch_one;

constexpr unsigned kBlock = 256;

unsigned blocks_for(const CudaDevice& dev, int64_t threads) {
    const int64_t wanted = (std::max<int64_t>(threads, 1) + kBlock - 1) / kBlock;
    // Enough blocks to fill every SM many times over; the kernels' grid-stride loops do the rest.
    return static_cast<unsigned>(std::min<int64_t>(wanted, int64_t{dev.sm_count()} * 32));
}

gk_matmul_args matmul_args(uint64_t a, uint64_t b, uint64_t out, uint64_t bias, int64_t bias_stride,
                           int64_t m, int64_t n, int64_t k, const Dims& a_strides,
                           const Dims& b_strides, const Dims& out_strides) {
    gk_matmul_args p{};
    p.a = a;
    p.b = b;
    p.out = out;
    p.bias = bias;
    p.s_bias = bias_stride;
    p.m = m;
    p.n = n;
    p.k = k;
    p.sa_m = a_strides.at(0);
    p.sa_k = a_strides.at(1);
    p.sb_k = b_strides.at(0);
    p.sb_n = b_strides.at(1);
    p.so_m = out_strides.at(0);
    p.so_n = out_strides.at(1);
    return p;
}

}  // namespace

void elementwise_contig(const CudaDevice& dev, cu::Function fn, cu::Stream s, int64_t n,
                        uint64_t out, uint64_t in0, uint64_t in1, const Scalar& s0,
                        const Scalar& s1) {
    if (n == 0) return;
    gk_ew_contig_args a{n, {out, in0, in1}, {0, s0.f, s1.f}, {0, s0.i, s1.i}};
    launch_one(dev, fn, {blocks_for(dev, (n + 3) / 4)}, {kBlock}, s, a);
}

void elementwise(const CudaDevice& dev, cu::Function fn, cu::Stream s, int64_t n,
                 const std::vector<uint64_t>& ptrs, const std::vector<Scalar>& scalars,
                 const Dims& shape, const std::vector<Dims>& strides) {
    if (n == 0) return;
    if (ptrs.size() > GK_MAX_OPERANDS || scalars.size() + 1 > GK_MAX_OPERANDS) {
        throw std::invalid_argument("elementwise: too many operands");
    }
    gk_ew_args a{};
    a.n = n;
    a.ndim = static_cast<gk_i32>(shape.size());
    copy_dims(shape, a.shape, GK_MAX_DIMS, "elementwise operand");
    for (size_t i = 0; i < ptrs.size(); ++i) a.ptr[i] = ptrs[i];
    for (size_t i = 0; i < scalars.size(); ++i) {
        a.scalar_f[i + 1] = scalars[i].f;
        a.scalar_i[i + 1] = scalars[i].i;
    }
    for (size_t op = 0; op < strides.size() && op < GK_MAX_OPERANDS; ++op) {
        copy_dims(strides[op], a.stride[op], GK_MAX_DIMS, "elementwise operand");
    }
    launch_one(dev, fn, {blocks_for(dev, n)}, {kBlock}, s, a);
}

void reduce(const CudaDevice& dev, cu::Function block_fn, cu::Function thread_fn, cu::Stream s,
            uint64_t in, uint64_t out, const Dims& out_shape, const Dims& out_stride,
            const Dims& red_shape, const Dims& red_stride, double scale) {
    gk_reduce_args a{};
    a.in = in;
    a.out = out;
    a.n_out = 1;
    for (auto d : out_shape) a.n_out *= d;
    a.n_red = 1;
    for (auto d : red_shape) a.n_red *= d;
    if (a.n_out == 0) return;
    a.out_ndim = static_cast<gk_i32>(out_shape.size());
    a.red_ndim = static_cast<gk_i32>(red_shape.size());
    copy_dims(out_shape, a.out_shape, GK_MAX_DIMS, "reduction input");
    copy_dims(out_stride, a.out_stride, GK_MAX_DIMS, "reduction input");
    copy_dims(red_shape, a.red_shape, GK_MAX_DIMS, "reduction input");
    copy_dims(red_stride, a.red_stride, GK_MAX_DIMS, "reduction input");
    a.scale = scale;
    // A block per output when the reduction is long and either reads contiguously or there are
    // too few outputs to fill the GPU with a thread each; otherwise a thread per output.
    const bool contiguous_inner = !red_stride.empty() && red_stride.back() == 1;
    const bool few_outputs = a.n_out < int64_t{dev.sm_count()} * 64;
    if (a.n_red >= 64 && (contiguous_inner || few_outputs)) {
        const auto grid = static_cast<unsigned>(std::min<int64_t>(a.n_out, 1 << 20));
        launch_one(dev, block_fn, {grid}, {kBlock}, s, a);
    } else {
        launch_one(dev, thread_fn, {blocks_for(dev, a.n_out)}, {kBlock}, s, a);
    }
}

void matmul(const CudaDevice& dev, cu::Function fn, bool tensor_cores, int tile, cu::Stream s,
            uint64_t a, uint64_t b, uint64_t out, uint64_t bias, int64_t bias_stride, int64_t m,
            int64_t n, int64_t k, const Dims& a_strides, const Dims& b_strides,
            const Dims& out_strides, const Dims& batch_shape, const Dims& batch_a,
            const Dims& batch_b, const Dims& batch_out) {
    gk_matmul_args p =
        matmul_args(a, b, out, bias, bias_stride, m, n, k, a_strides, b_strides, out_strides);
    p.batch_ndim = static_cast<gk_i32>(batch_shape.size());
    std::fill(std::begin(p.batch_shape), std::end(p.batch_shape), 1);
    copy_dims(batch_shape, p.batch_shape, GK_MAX_BATCH_DIMS, "matmul batch");
    copy_dims(batch_a, p.batch_sa, GK_MAX_BATCH_DIMS, "matmul batch");
    copy_dims(batch_b, p.batch_sb, GK_MAX_BATCH_DIMS, "matmul batch");
    copy_dims(batch_out, p.batch_so, GK_MAX_BATCH_DIMS, "matmul batch");
    int64_t batch = 1;
    for (auto d : batch_shape) batch *= d;
    if (m == 0 || n == 0 || batch == 0) return;
    const auto batch_blocks = static_cast<unsigned>(std::min<int64_t>(batch, 65535));
    void* params[] = {&p};
    if (tensor_cores) {
        // One flat grid dimension: the kernel orders the tiles for L2 reuse itself.
        const int64_t tiles = ((m + GK_MMA_BM - 1) / GK_MMA_BM) * ((n + GK_MMA_BN - 1) / GK_MMA_BN);
        if (tiles > 0x7fffffff)
            throw std::invalid_argument("matmul: too many tiles for one launch");
        dev.launch(fn, {static_cast<unsigned>(tiles), 1, batch_blocks}, {GK_MMA_THREADS},
                   GK_MMA_SMEM, s, params);
        return;
    }
    // The tiled kernel: blocks of 16x16 threads, each a tile x tile block of out.
    const int64_t row_tiles = (m + tile - 1) / tile;
    if (row_tiles > 65535) throw std::invalid_argument("matmul: too many rows for one launch");
    const Dim3 grid{static_cast<unsigned>((n + tile - 1) / tile), static_cast<unsigned>(row_tiles),
                    batch_blocks};
    dev.launch(fn, grid, {16, 16}, 0, s, params);
}

void matmul_skinny(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t a, uint64_t b,
                   uint64_t out, uint64_t bias, int64_t bias_stride, int64_t m, int64_t n,
                   int64_t k, const Dims& a_strides, const Dims& b_strides,
                   const Dims& out_strides) {
    constexpr int64_t rows = 8, warps = 8;  // GK_SKINNY_M, GK_SKINNY_WARPS
    if (m > rows) throw std::invalid_argument("matmul_skinny: more than 8 rows");
    gk_matmul_args p =
        matmul_args(a, b, out, bias, bias_stride, m, n, k, a_strides, b_strides, out_strides);
    if (m == 0 || n == 0) return;
    const int64_t blocks = (n + warps - 1) / warps;
    if (blocks > 0x7fffffff) throw std::invalid_argument("matmul: too many columns for one launch");
    void* params[] = {&p};
    dev.launch(fn, {static_cast<unsigned>(blocks)}, {static_cast<unsigned>(warps * 32)}, 0, s,
               params);
}

void cumsum(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t in, uint64_t out,
            int64_t n, int64_t in_step, int64_t out_step, const Dims& row_shape,
            const Dims& in_row_stride, const Dims& out_row_stride) {
    gk_scan_args a{};
    a.in = in;
    a.out = out;
    a.n = n;
    a.in_step = in_step;
    a.out_step = out_step;
    a.n_rows = 1;
    for (auto d : row_shape) a.n_rows *= d;
    if (n == 0 || a.n_rows == 0) return;
    a.row_ndim = static_cast<gk_i32>(row_shape.size());
    copy_dims(row_shape, a.row_shape, GK_MAX_DIMS, "cumsum input");
    copy_dims(in_row_stride, a.in_row_stride, GK_MAX_DIMS, "cumsum input");
    copy_dims(out_row_stride, a.out_row_stride, GK_MAX_DIMS, "cumsum input");
    const auto grid = static_cast<unsigned>(std::min<int64_t>(a.n_rows, 1 << 20));
    launch_one(dev, fn, {grid}, {kBlock}, s, a);
}

void arange(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t out, int64_t n,
            double start, double step, int64_t istart, int64_t istep) {
    if (n == 0) return;
    void* params[] = {&out, &n, &start, &step, &istart, &istep};
    dev.launch(fn, {blocks_for(dev, n)}, {kBlock}, 0, s, params);
}

void gather(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t src, uint64_t out,
            uint64_t err, const Dims& shape, const Dims& src_stride,
            const std::vector<uint64_t>& idx, const std::vector<Dims>& idx_strides,
            const Dims& axis_size, const Dims& axis_stride) {
    gk_gather_args a{};
    a.src = src;
    a.out = out;
    a.err = err;
    a.n = 1;
    for (auto d : shape) a.n *= d;
    if (a.n == 0) return;
    if (idx.size() > GK_MAX_DIMS || idx_strides.size() != idx.size() ||
        axis_size.size() != idx.size() || axis_stride.size() != idx.size()) {
        throw std::invalid_argument(
            "gather: at most 8 index arrays, each with strides and an axis");
    }
    a.ndim = static_cast<gk_i32>(shape.size());
    a.n_idx = static_cast<gk_i32>(idx.size());
    copy_dims(shape, a.shape, GK_MAX_DIMS, "the indexing result");
    copy_dims(src_stride, a.src_stride, GK_MAX_DIMS, "the indexing result");
    for (size_t k = 0; k < idx.size(); ++k) {
        a.idx[k] = idx[k];
        copy_dims(idx_strides[k], a.idx_stride[k], GK_MAX_DIMS, "the indexing result");
    }
    copy_dims(axis_size, a.axis_size, GK_MAX_DIMS, "the index list");
    copy_dims(axis_stride, a.axis_stride, GK_MAX_DIMS, "the index list");
    launch_one(dev, fn, {blocks_for(dev, a.n)}, {kBlock}, s, a);
}

void compact(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t mask, uint64_t counts,
             uint64_t prefix, uint64_t out, int64_t n, int64_t total, const Dims& shape) {
    constexpr int64_t kTile = 4096;  // GK_TILE of kernels/compact.cu
    if (n == 0) return;
    gk_compact_args a{};
    a.mask = mask;
    a.counts = counts;
    a.prefix = prefix;
    a.out = out;
    a.n = n;
    a.total = total;
    a.ndim = static_cast<gk_i32>(shape.size());
    copy_dims(shape, a.shape, GK_MAX_DIMS, "nonzero input");
    const int64_t tiles = (n + kTile - 1) / kTile;
    if (tiles > 0x7fffffff) throw std::invalid_argument("nonzero: input too large");
    launch_one(dev, fn, {static_cast<unsigned>(tiles)}, {kBlock}, s, a);
}

void philox(const CudaDevice& dev, cu::Function fn, cu::Stream s, uint64_t out, int64_t n,
            int per_group, uint64_t seed, uint64_t offset, double lo, double scale, bool affine,
            uint64_t low, uint64_t range) {
    if (n == 0) return;
    gk_philox_args a{};
    a.out = out;
    a.n = n;
    a.key0 = static_cast<gk_u32>(seed);
    a.key1 = static_cast<gk_u32>(seed >> 32);
    a.offset = offset;
    a.lo = lo;
    a.scale = scale;
    a.affine = affine ? 1 : 0;
    a.low = low;
    a.range = range;
    launch_one(dev, fn, {blocks_for(dev, (n + per_group - 1) / per_group)}, {kBlock}, s, a);
}

void launch_packed(const CudaDevice& dev, cu::Function fn, Dim3 grid, Dim3 block, unsigned shared,
                   cu::Stream s, std::vector<char>& params) {
    size_t size = params.size();
    // CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END
    void* extra[] = {reinterpret_cast<void*>(1), params.data(), reinterpret_cast<void*>(2), &size,
                     nullptr};
    dev.launch(fn, grid, block, shared, s, nullptr, params.empty() ? nullptr : extra);
}

}  // namespace gpukit::ops
