// Python bindings of the CUDA device and the op entry points. Handles (streams, events, modules,
// functions) cross into Python as integers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "cuda_driver.h"
#include "ops.h"

namespace py = pybind11;

namespace gpukit {
namespace {

template <typename H>
uint64_t to_int(H h) {
    return reinterpret_cast<uint64_t>(h);
}

Dim3 dim3_of(const py::tuple& t) {
    Dim3 d;
    if (t.size() > 0) d.x = t[0].cast<unsigned>();
    if (t.size() > 1) d.y = t[1].cast<unsigned>();
    if (t.size() > 2) d.z = t[2].cast<unsigned>();
    return d;
}

ops::Scalar scalar_of(py::handle v) {
    ops::Scalar out;
    if (v.is_none()) return out;
    if (py::isinstance<py::float_>(v)) {
        out.f = v.cast<double>();
        out.i = static_cast<int64_t>(out.f);
    } else {
        out.i = v.cast<int64_t>();  // bool and int
        out.f = static_cast<double>(out.i);
    }
    return out;
}

std::vector<ops::Scalar> scalars_of(const py::tuple& t) {
    std::vector<ops::Scalar> out;
    for (py::handle v : t) out.push_back(scalar_of(v));
    return out;
}

}  // namespace

void bind_cuda(py::module_& m) {
    using ops::Dims;
    py::class_<CudaDevice>(m, "CudaDevice")
        .def_static(
            "open",
            [](const std::string& driver, int ordinal) -> CudaDevice& {
                return CudaDevice::get(CudaDriver::open(driver), ordinal);
            },
            py::return_value_policy::reference, py::arg("driver"), py::arg("ordinal") = 0,
            "The device `ordinal` of the CUDA driver library `driver` (opened on first use).")
        .def_static(
            "count",
            [](const std::string& driver) { return CudaDriver::open(driver).device_count(); },
            py::arg("driver"))
        .def_property_readonly("ordinal", &CudaDevice::ordinal)
        .def_property_readonly("name", &CudaDevice::name)
        .def_property_readonly(
            "compute_capability",
            [](const CudaDevice& d) { return py::make_tuple(d.cc_major(), d.cc_minor()); })
        .def_property_readonly("sm_count", &CudaDevice::sm_count)
        .def_property_readonly("l2_bytes", &CudaDevice::l2_bytes)
        .def_property_readonly("total_memory", &CudaDevice::total_memory)
        .def_property_readonly("max_shared_per_block_optin",
                               &CudaDevice::max_shared_per_block_optin)
        .def_property_readonly("driver_version",
                               [](const CudaDevice& d) { return d.driver().version(); })
        .def_property_readonly("driver_path", [](const CudaDevice& d) { return d.driver().path(); })
        .def_property_readonly("default_stream",
                               [](const CudaDevice& d) { return to_int(d.default_stream()); })
        .def("memory_info", &CudaDevice::memory_info)
        .def("stream_priority_range", &CudaDevice::stream_priority_range)
        .def("allocator_table",
             [](const CudaDevice& d) {
                 auto* t = const_cast<gk_allocator_table*>(d.allocator_table());
                 return py::capsule(t, GK_ALLOCATOR_TABLE_CAPSULE);
             })
        // streams and events
        .def("create_stream", [](const CudaDevice& d, int p) { return to_int(d.create_stream(p)); })
        .def("destroy_stream",
             [](const CudaDevice& d, uint64_t s) { d.destroy_stream(handle<cu::Stream>(s)); })
        .def(
            "synchronize",
            [](const CudaDevice& d, uint64_t s) { d.synchronize(handle<cu::Stream>(s)); },
            py::call_guard<py::gil_scoped_release>())
        .def("stream_done",
             [](const CudaDevice& d, uint64_t s) { return d.stream_done(handle<cu::Stream>(s)); })
        .def(
            "create_event", [](const CudaDevice& d, bool t) { return to_int(d.create_event(t)); },
            py::arg("timing") = false)
        .def("destroy_event",
             [](const CudaDevice& d, uint64_t e) { d.destroy_event(handle<cu::Event>(e)); })
        .def("record_event",
             [](const CudaDevice& d, uint64_t e, uint64_t s) {
                 d.record_event(handle<cu::Event>(e), handle<cu::Stream>(s));
             })
        .def("event_done",
             [](const CudaDevice& d, uint64_t e) { return d.event_done(handle<cu::Event>(e)); })
        .def("wait_event",
             [](const CudaDevice& d, uint64_t s, uint64_t e) {
                 d.wait_event(handle<cu::Stream>(s), handle<cu::Event>(e));
             })
        .def(
            "synchronize_event",
            [](const CudaDevice& d, uint64_t e) { d.synchronize_event(handle<cu::Event>(e)); },
            py::call_guard<py::gil_scoped_release>())
        .def("elapsed_ms",
             [](const CudaDevice& d, uint64_t a, uint64_t b) {
                 return d.elapsed_ms(handle<cu::Event>(a), handle<cu::Event>(b));
             })
        // copies
        .def("copy_to_device",
             [](const CudaDevice& d, uint64_t dst, const py::buffer& src, uint64_t s) {
                 py::buffer_info info = src.request();
                 const size_t n = static_cast<size_t>(info.size * info.itemsize);
                 py::gil_scoped_release release;
                 d.copy_to_device(dst, info.ptr, n, handle<cu::Stream>(s));
             })
        .def(
            "copy_to_host",
            [](const CudaDevice& d, const py::buffer& dst, uint64_t src, uint64_t s) {
                py::buffer_info info = dst.request(true);
                const size_t n = static_cast<size_t>(info.size * info.itemsize);
                py::gil_scoped_release release;
                d.copy_to_host(info.ptr, src, n, handle<cu::Stream>(s));
                d.synchronize(handle<cu::Stream>(s));
            },
            "Copies into a writable buffer and waits for the copy.")
        .def("copy_device", [](const CudaDevice& d, uint64_t dst, uint64_t src, size_t n,
                               uint64_t s) { d.copy_device(dst, src, n, handle<cu::Stream>(s)); })
        // modules and launches
        .def("load_module",
             [](const CudaDevice& d, const py::bytes& image) {
                 return to_int(d.load_module(std::string(image)));
             })
        .def("function",
             [](const CudaDevice& d, uint64_t module, const std::string& name) {
                 return to_int(d.function(handle<cu::Module>(module), name));
             })
        .def("set_dynamic_shared",
             [](const CudaDevice& d, uint64_t f, int bytes) {
                 d.set_dynamic_shared(handle<cu::Function>(f), bytes);
             })
        .def("launch",
             [](const CudaDevice& d, uint64_t f, const py::tuple& grid, const py::tuple& block,
                unsigned shared, uint64_t s, const py::bytes& params) {
                 std::string p = params;
                 std::vector<char> buf(p.begin(), p.end());
                 ops::launch_packed(d, handle<cu::Function>(f), dim3_of(grid), dim3_of(block),
                                    shared, handle<cu::Stream>(s), buf);
             })
        .def("elementwise",
             [](const CudaDevice& d, uint64_t f, uint64_t s, int64_t n,
                const std::vector<uint64_t>& ptrs, const py::tuple& scalars, const Dims& shape,
                const std::vector<Dims>& strides) {
                 ops::elementwise(d, handle<cu::Function>(f), handle<cu::Stream>(s), n, ptrs,
                                  scalars_of(scalars), shape, strides);
             })
        .def("elementwise_contig",
             [](const CudaDevice& d, uint64_t f, uint64_t s, int64_t n, uint64_t out, uint64_t in0,
                uint64_t in1, py::handle s0, py::handle s1) {
                 ops::elementwise_contig(d, handle<cu::Function>(f), handle<cu::Stream>(s), n, out,
                                         in0, in1, scalar_of(s0), scalar_of(s1));
             })
        .def("reduce",
             [](const CudaDevice& d, uint64_t block_fn, uint64_t thread_fn, uint64_t s, uint64_t in,
                uint64_t out, const Dims& out_shape, const Dims& out_stride, const Dims& red_shape,
                const Dims& red_stride, double scale) {
                 ops::reduce(d, handle<cu::Function>(block_fn), handle<cu::Function>(thread_fn),
                             handle<cu::Stream>(s), in, out, out_shape, out_stride, red_shape,
                             red_stride, scale);
             })
        .def("matmul",
             [](const CudaDevice& d, uint64_t f, bool tensor_cores, int tile, uint64_t s,
                uint64_t a, uint64_t b, uint64_t out, uint64_t bias, int64_t bias_stride, int64_t m,
                int64_t n, int64_t k, const Dims& sa, const Dims& sb, const Dims& so,
                const Dims& batch, const Dims& ba, const Dims& bb, const Dims& bo) {
                 ops::matmul(d, handle<cu::Function>(f), tensor_cores, tile, handle<cu::Stream>(s),
                             a, b, out, bias, bias_stride, m, n, k, sa, sb, so, batch, ba, bb, bo);
             })
        .def("matmul_skinny",
             [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t a, uint64_t b, uint64_t out,
                uint64_t bias, int64_t bias_stride, int64_t m, int64_t n, int64_t k, const Dims& sa,
                const Dims& sb, const Dims& so) {
                 ops::matmul_skinny(d, handle<cu::Function>(f), handle<cu::Stream>(s), a, b, out,
                                    bias, bias_stride, m, n, k, sa, sb, so);
             })
        .def("cumsum",
             [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t in, uint64_t out, int64_t n,
                int64_t in_step, int64_t out_step, const Dims& row_shape, const Dims& in_rows,
                const Dims& out_rows) {
                 ops::cumsum(d, handle<cu::Function>(f), handle<cu::Stream>(s), in, out, n, in_step,
                             out_step, row_shape, in_rows, out_rows);
             })
        .def("gather",
             [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t src, uint64_t out,
                uint64_t err, const Dims& shape, const Dims& src_stride,
                const std::vector<uint64_t>& idx, const std::vector<Dims>& idx_strides,
                const Dims& axis_size, const Dims& axis_stride) {
                 ops::gather(d, handle<cu::Function>(f), handle<cu::Stream>(s), src, out, err,
                             shape, src_stride, idx, idx_strides, axis_size, axis_stride);
             })
        .def("compact",
             [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t mask, uint64_t counts,
                uint64_t prefix, uint64_t out, int64_t n, int64_t total, const Dims& shape) {
                 ops::compact(d, handle<cu::Function>(f), handle<cu::Stream>(s), mask, counts,
                              prefix, out, n, total, shape);
             })
        .def("philox",
             [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t out, int64_t n, int per_group,
                uint64_t seed, uint64_t offset, double lo, double scale, bool affine, uint64_t low,
                uint64_t range) {
                 ops::philox(d, handle<cu::Function>(f), handle<cu::Stream>(s), out, n, per_group,
                             seed, offset, lo, scale, affine, low, range);
             })
        .def("arange", [](const CudaDevice& d, uint64_t f, uint64_t s, uint64_t out, int64_t n,
                          double start, double step, int64_t istart, int64_t istep) {
            ops::arange(d, handle<cu::Function>(f), handle<cu::Stream>(s), out, n, start, step,
                        istart, istep);
        });
}

}  // namespace gpukit
