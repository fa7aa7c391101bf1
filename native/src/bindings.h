#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>

namespace gpukit {
void bind_cuda(pybind11::module_& m);
void bind_jit(pybind11::module_& m);
void bind_safetensors(pybind11::module_& m);
void bind_dlpack(pybind11::module_& m);
void bind_args(pybind11::module_& m);

// Driver handles (streams, events, modules, functions) cross into Python as integers.
template <typename H>
H handle(uint64_t v) {
    return reinterpret_cast<H>(v);
}
}  // namespace gpukit
