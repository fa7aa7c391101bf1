// Python bindings of the run-time compilers and the kernel cache.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "kernel_cache.h"
#include "rtc_compiler.h"

namespace py = pybind11;

namespace gpukit {

void bind_jit(py::module_& m) {
    py::class_<RtcCompiler>(m, "RtcCompiler")
        .def_static(
            "open",
            [](const std::string& path, const std::string& kind) -> RtcCompiler& {
                if (kind != "nvrtc" && kind != "hiprtc") {
                    throw std::invalid_argument("compiler kind must be 'nvrtc' or 'hiprtc'");
                }
                return RtcCompiler::open(
                    path, kind == "nvrtc" ? RtcCompiler::Kind::Nvrtc : RtcCompiler::Kind::Hiprtc);
            },
            py::return_value_policy::reference, py::arg("path"), py::arg("kind"))
        .def_property_readonly("path", &RtcCompiler::path)
        .def_property_readonly("kind",
                               [](const RtcCompiler& c) {
                                   return c.kind() == RtcCompiler::Kind::Nvrtc ? "nvrtc" : "hiprtc";
                               })
        .def_property_readonly("version", &RtcCompiler::version)
        .def("supported_archs", &RtcCompiler::supported_archs)
        .def(
            "compile",
            [](const RtcCompiler& c, std::string name, std::string source,
               std::vector<std::pair<std::string, std::string>> headers,
               std::vector<std::string> options) {
                RtcSource src{std::move(name), std::move(source), std::move(headers),
                              std::move(options)};
                std::string image;
                {
                    py::gil_scoped_release release;
                    image = c.compile(src);
                }
                return py::bytes(image);
            },
            py::arg("name"), py::arg("source"), py::arg("headers"), py::arg("options"),
            "Compiles to a loadable image (bytes); raises CompileError with the log.");

    py::class_<KernelCache>(m, "KernelCache")
        .def(py::init<std::string>(), py::arg("directory"))
        .def_property_readonly("directory", &KernelCache::directory)
        .def(
            "find",
            [](KernelCache& c, const std::string& key) -> py::object {
                std::optional<std::string> image;
                {
                    py::gil_scoped_release release;
                    image = c.find(key);
                }
                return image ? py::object(py::bytes(*image)) : py::object(py::none());
            },
            py::arg("key"))
        .def(
            "store",
            [](KernelCache& c, const std::string& key, const py::bytes& image) {
                std::string data = image;
                py::gil_scoped_release release;
                c.store(key, data);
            },
            py::arg("key"), py::arg("image"))
        .def("clear_memory", &KernelCache::clear_memory)
        .def("stats", [](const KernelCache& c) {
            const auto s = c.stats();
            py::dict d;
            d["memory_hits"] = s.memory_hits;
            d["disk_hits"] = s.disk_hits;
            d["misses"] = s.misses;
            d["stores"] = s.stores;
            d["rejected"] = s.rejected;
            return d;
        });
}

}  // namespace gpukit
