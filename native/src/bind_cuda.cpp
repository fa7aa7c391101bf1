// Python bindings of the CUDA device: streams, events, copies, modules, launch tables. Handles
// (streams, events, modules, functions) cross into Python as integers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "cuda_driver.h"

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

}  // namespace

void bind_cuda(py::module_& m) {
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
        .def("launch_table",
             [](const CudaDevice& d) {
                 auto* t = const_cast<gk_launch_table*>(d.launch_table());
                 return py::capsule(t, GK_LAUNCH_TABLE_CAPSULE);
             })
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
        // graphs
        .def_property_readonly("graphs_supported", &CudaDevice::graphs_supported)
        .def("begin_capture",
             [](const CudaDevice& d, uint64_t s) { d.begin_capture(handle<cu::Stream>(s)); })
        .def("end_capture", [](const CudaDevice& d,
                               uint64_t s) { return to_int(d.end_capture(handle<cu::Stream>(s))); })
        .def("is_capturing",
             [](const CudaDevice& d, uint64_t s) { return d.is_capturing(handle<cu::Stream>(s)); })
        .def("instantiate_graph",
             [](const CudaDevice& d, uint64_t g) {
                 return to_int(d.instantiate(handle<cu::Graph>(g)));
             })
        .def("graph_nodes",
             [](const CudaDevice& d, uint64_t g) { return d.graph_nodes(handle<cu::Graph>(g)); })
        .def("upload_graph",
             [](const CudaDevice& d, uint64_t e, uint64_t s) {
                 d.upload_graph(handle<cu::GraphExec>(e), handle<cu::Stream>(s));
             })
        .def("launch_graph",
             [](const CudaDevice& d, uint64_t e, uint64_t s) {
                 d.launch_graph(handle<cu::GraphExec>(e), handle<cu::Stream>(s));
             })
        .def(
            "destroy_graph_exec",
            [](const CudaDevice& d, uint64_t e) { d.destroy_graph_exec(handle<cu::GraphExec>(e)); })
        .def("destroy_graph",
             [](const CudaDevice& d, uint64_t g) { d.destroy_graph(handle<cu::Graph>(g)); })
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
        // Loading code may wait for the whole device: without the GIL.
        .def("load_module",
             [](const CudaDevice& d, const py::bytes& image) {
                 std::string bytes(image);
                 py::gil_scoped_release release;
                 return to_int(d.load_module(bytes));
             })
        .def(
            "function",
            [](const CudaDevice& d, uint64_t module, const std::string& name) {
                return to_int(d.function(handle<cu::Module>(module), name));
            },
            py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("has_param_info", &CudaDevice::has_param_info)
        .def(
            "param_layout",
            [](const CudaDevice& d, uint64_t f, size_t count) {
                return d.param_layout(handle<cu::Function>(f), count);
            },
            py::arg("function"), py::arg("count"),
            "[(byte offset, size)] of a kernel's first `count` parameters in its launch's "
            "parameter buffer, or of all of them where the driver can count them (CUDA 13.2+); "
            "CUDA 12.4+ drivers: see has_param_info.")
        .def_property_readonly("cooperative_launch", &CudaDevice::cooperative_launch,
                               "Whether plans may launch cooperatively here (the device's "
                               "attribute and a CUDA 12.0+ driver).")
        .def(
            "max_active_blocks",
            [](const CudaDevice& d, uint64_t f, int threads, size_t shared) {
                return d.max_active_blocks(handle<cu::Function>(f), threads, shared);
            },
            py::arg("function"), py::arg("threads"), py::arg("shared") = 0,
            "Blocks of `threads` threads and `shared` dynamic shared bytes that one SM holds at "
            "once (the occupancy query; 0 where the driver cannot say).")
        .def(
            "max_active_clusters",
            [](const CudaDevice& d, uint64_t f, unsigned cluster, int threads, size_t shared) {
                return d.max_active_clusters(handle<cu::Function>(f), cluster, threads, shared);
            },
            py::arg("function"), py::arg("cluster"), py::arg("threads"), py::arg("shared") = 0,
            "Clusters of a kernel with compile-time cluster dimensions of `cluster` blocks "
            "(`threads` threads, `shared` dynamic shared bytes each) resident at once; allows a "
            "non-portable cluster size first (0: none fits, or the driver cannot say).")
        // preemption and green contexts (cuda_qos.cpp)
        .def_property_readonly("has_stream_memops", &CudaDevice::has_stream_memops)
        .def_property_readonly(
            "preempt_flags", [](CudaDevice& d) { return d.preempt_flags(); },
            "Address of the device's preemption flag words (allocated on first use).")
        .def(
            "write_value",
            [](const CudaDevice& d, uint64_t s, uint64_t address, uint32_t value) {
                d.write_value(handle<cu::Stream>(s), address, value);
            },
            py::arg("stream"), py::arg("address"), py::arg("value"),
            "Enqueues a 32-bit write of `value` at `address` on `stream` (cuStreamWriteValue32).")
        .def("green_contexts", &CudaDevice::green_contexts,
             "(available, why not): whether the driver has green contexts.")
        .def(
            "green_stream",
            [](const CudaDevice& d, int sm_count, int priority) {
                auto [s, sms] = d.green_stream(sm_count, priority);
                return py::make_tuple(to_int(s), sms);
            },
            py::arg("sm_count"), py::arg("priority") = 0,
            "(stream, SMs): a stream of a new green context of about `sm_count` SMs.")
        .def("set_dynamic_shared",
             [](const CudaDevice& d, uint64_t f, int bytes) {
                 d.set_dynamic_shared(handle<cu::Function>(f), bytes);
             })
        .def("launch",
             [](const CudaDevice& d, uint64_t f, const py::tuple& grid, const py::tuple& block,
                unsigned shared, uint64_t s, const py::bytes& params) {
                 std::string p = params;
                 size_t size = p.size();
                 // CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END
                 void* extra[] = {reinterpret_cast<void*>(1), p.data(), reinterpret_cast<void*>(2),
                                  &size, nullptr};
                 d.launch(handle<cu::Function>(f), dim3_of(grid), dim3_of(block), shared,
                          handle<cu::Stream>(s), nullptr, p.empty() ? nullptr : extra);
             });
}

}  // namespace gpukit
