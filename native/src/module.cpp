// gpukit._native: the C++ layer between Python and the GPU driver.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "errors.h"
#include "gpukit/launch_table.h"
#include "host_allocator.h"
#include "kernel_sources.h"
#include "pacer.h"
#include "safetensors_header.h"
#include "shared_library.h"

namespace py = pybind11;

namespace {

// Raises the gpukit.errors class `cls` built with `args` (the classes live in Python so that the
// Rust module raises the very same ones).
template <typename... Args>
void raise(const char* cls, Args&&... args) {
    py::object type = py::module_::import("gpukit.errors").attr(cls);
    PyErr_SetObject(type.ptr(), type(std::forward<Args>(args)...).ptr());
}

void translate(std::exception_ptr p) {
    try {
        if (p) std::rethrow_exception(p);
    } catch (const gpukit::DriverError& e) {
        raise(e.hip ? "HipError" : "CudaError", e.what(), e.call, e.code, e.name);
    } catch (const gpukit::CompileFailure& e) {
        raise("CompileError", e.what(), e.log);
    } catch (const gpukit::LibraryError& e) {
        raise("BackendUnavailableError", e.what());
    } catch (const gpukit::safetensors::FormatError& e) {
        raise("SafeTensorsError", e.what());
    }
}

}  // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "gpukit's C++ layer: driver loading, JIT, launches, allocator tables";
    py::register_exception_translator(translate);

    m.def(
        "host_allocator_table",
        [] {
            auto* table = const_cast<gk_allocator_table*>(gpukit::host_allocator_table());
            return py::capsule(table, GK_ALLOCATOR_TABLE_CAPSULE);
        },
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

    m.def(
        "install_pacer",
        [](const py::capsule& table) {
            const char* name = table.name();
            if (name == nullptr || std::string(name) != GK_PACER_TABLE_CAPSULE) {
                throw py::value_error("not a gpukit pacer table capsule");
            }
            const auto* t = table.get_pointer<const gk_pacer_table>();
            if (t->version != GK_PACER_TABLE_VERSION) {
                throw py::value_error("the pacer table's version does not match gpukit._native");
            }
            gpukit::install_pacer(t);
        },
        py::arg("table"),
        "Paces every kernel launch through the scheduler's table (gpukit._core.pacer_table()).");

    m.attr("TENSOR_MAP_BYTES") = GK_TENSOR_MAP_BYTES;  // a tensor-map slot's bytes (launch_table.h)
    // Or'ed into a plan launch's function handle: a cooperative launch (launch_table.h).
    m.attr("LAUNCH_COOPERATIVE") = GK_LAUNCH_COOPERATIVE;

    gpukit::bind_cuda(m);
    gpukit::bind_jit(m);
    gpukit::bind_safetensors(m);
    gpukit::bind_dlpack(m);
    gpukit::bind_args(m);
}
