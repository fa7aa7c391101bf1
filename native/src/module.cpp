// gpukit._native: the C++ layer between Python and the GPU driver.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "host_allocator.h"
#include "kernel_sources.h"
#include "library_probe.h"

namespace py = pybind11;

namespace {

py::capsule table_capsule(const gk_allocator_table* table) {
    return py::capsule(const_cast<gk_allocator_table*>(table), GK_ALLOCATOR_TABLE_CAPSULE);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "gpukit's C++ layer: driver loading, JIT, launches, allocator tables";

    m.def(
        "host_allocator_table", [] { return table_capsule(gpukit::host_allocator_table()); },
        "Allocator table over host memory, for the CPU backend's pool.");

    m.def(
        "kernel_sources",
        [] {
            py::dict out;
            for (const auto& [name, text] : gpukit::kernel_sources()) {
                out[py::str(name.data(), name.size())] = py::str(text.data(), text.size());
            }
            return out;
        },
        "The kernel sources embedded at build time, by file name.");

    m.def(
        "probe_library",
        [](const std::string& name) {
            const auto probe = gpukit::probe_library(name);
            return py::make_tuple(probe.found, probe.detail);
        },
        py::arg("name"),
        "(found, resolved path or the loader's error) for a shared library name or path.");
}
