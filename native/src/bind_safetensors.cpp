// Python bindings of the SafeTensors reader: _native.SafeTensorsFile.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>

#include "bindings.h"
#include "safetensors_copy.h"

namespace py = pybind11;

namespace gpukit {
namespace {

using safetensors::Copy;
using safetensors::MappedFile;

std::vector<Copy> copies_of(const std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>& list) {
    std::vector<Copy> out;
    out.reserve(list.size());
    for (const auto& [offset, nbytes, dst] : list) out.push_back({offset, nbytes, dst});
    return out;
}

// A Python callable as a Progress, called with the GIL held.
safetensors::Progress progress_of(const py::object& callback) {
    if (callback.is_none()) return {};
    return [callback](uint64_t done) {
        py::gil_scoped_acquire gil;
        callback(done);
    };
}

}  // namespace

void bind_safetensors(py::module_& m) {
    py::class_<MappedFile>(m, "SafeTensorsFile",
                           "A SafeTensors file mapped read-only, its header parsed and validated.")
        .def(py::init([](const std::string& path) {
                 try {
                     py::gil_scoped_release release;
                     return std::make_unique<MappedFile>(path);
                 } catch (const safetensors::OpenError& e) {
                     errno = e.error;
                     PyErr_SetFromErrnoWithFilename(PyExc_OSError, e.path.c_str());
                     throw py::error_already_set();
                 }
             }),
             py::arg("path"))
        .def_property_readonly("path", &MappedFile::path)
        .def_property_readonly("file_size", &MappedFile::file_size)
        .def_property_readonly("data_offset", &MappedFile::data_offset)
        .def_property_readonly("data_size", &MappedFile::data_size)
        .def_property_readonly("is_open", &MappedFile::is_open)
        .def_property_readonly(
            "tensors",
            [](const MappedFile& f) {
                py::list out;
                for (const auto& t : f.header().tensors) {
                    py::tuple shape(t.shape.size());
                    for (size_t i = 0; i < t.shape.size(); ++i) shape[i] = py::int_(t.shape[i]);
                    out.append(py::make_tuple(t.name, t.dtype, shape, t.begin, t.end));
                }
                return out;
            },
            "[(name, dtype, shape, begin, end)] in the order of the data, offsets within the data "
            "section.")
        .def_property_readonly("metadata", [](const MappedFile& f) { return f.header().metadata; })
        .def("close", &MappedFile::close, "Unmaps the file.")
        .def(
            "copy_to_host",
            [](const MappedFile& f, const std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>& c,
               int threads, const py::object& progress) {
                const auto copies = copies_of(c);
                const auto report = progress_of(progress);
                py::gil_scoped_release release;
                safetensors::copy_to_host(f, copies, threads, report);
            },
            py::arg("copies"), py::arg("threads") = 0, py::arg("progress") = py::none(),
            "Copies [(offset in the data section, nbytes, host address)] on `threads` threads (0: "
            "one per core, at most 8); `progress(bytes_done)` is called about every 100 ms.")
        .def(
            "copy_to_device",
            [](const MappedFile& f, const CudaDevice& device,
               const std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>& c, int threads,
               const py::object& progress) {
                const auto copies = copies_of(c);
                const auto report = progress_of(progress);
                py::gil_scoped_release release;
                safetensors::copy_to_device(device, f, copies, threads, report);
            },
            py::arg("device"), py::arg("copies"), py::arg("threads") = 0,
            py::arg("progress") = py::none(),
            "Like copy_to_host, to device addresses through pinned staging buffers; returns when "
            "the data is on the device.");
    m.def("safetensors_dtype_size", &safetensors::dtype_size, py::arg("dtype"),
          "Bytes per element of a SafeTensors dtype name, 0 if the format does not define it.");
}

}  // namespace gpukit
