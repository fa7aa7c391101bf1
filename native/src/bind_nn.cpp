// Python bindings of the gpukit.nn launches, added to the CudaDevice class of bind_cuda.cpp.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "cuda_driver.h"
#include "nn_ops.h"

namespace py = pybind11;

namespace gpukit {

void bind_nn(py::module_& m) {
    using ops::Dims;
    auto device = py::reinterpret_borrow<py::class_<CudaDevice>>(m.attr("CudaDevice"));
    device
        .def("nn_rows",
             [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t in, uint64_t out,
                uint64_t weight, uint64_t bias, int64_t n, int64_t in_step, int64_t out_step,
                double eps, const Dims& row_shape, const Dims& in_rows, const Dims& out_rows) {
                 nn_ops::rows(d, handle<cu::Function>(f), handle<cu::Stream>(s), in, out, weight,
                              bias, n, in_step, out_step, eps, row_shape, in_rows, out_rows);
             })
        .def("embedding",
             [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t ids, uint64_t table,
                uint64_t out, uint64_t error, int64_t n_ids, int64_t num, int64_t dim,
                int64_t row_stride, int64_t col_stride) {
                 nn_ops::embedding(d, handle<cu::Function>(f), handle<cu::Stream>(s), ids, table,
                                   out, error, n_ids, num, dim, row_stride, col_stride);
             })
        .def("rope",
             [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t x, uint64_t cos, uint64_t sin,
                uint64_t out, int64_t half, bool interleaved, const Dims& steps, const Dims& shape,
                const Dims& xs, const Dims& cs, const Dims& ss) {
                 nn_ops::rope(d, handle<cu::Function>(f), handle<cu::Stream>(s), x, cos, sin, out,
                              half, interleaved, steps, shape, xs, cs, ss);
             })
        .def_static("attention_block_rows", &nn_ops::attention_block_rows)
        .def("attention", [](const CudaDevice& d, uint64_t f, uint64_t combine, uint64_t s,
                             const std::vector<uint64_t>& ptrs, const Dims& shape,
                             const std::vector<Dims>& strides, bool causal, double scale,
                             int64_t n_splits, int64_t tiles_per_split, int t_size, int acc_size) {
            if (shape.size() != 6) throw py::value_error("attention: shape has 6 entries");
            const nn_ops::AttentionShape sh{shape[0], shape[1], shape[2],
                                            shape[3], shape[4], shape[5]};
            nn_ops::attention(d, handle<cu::Function>(f), handle<cu::Function>(combine),
                              handle<cu::Stream>(s), ptrs, sh, strides, causal, scale, n_splits,
                              tiles_per_split, t_size, acc_size);
        });
}

}  // namespace gpukit
