#pragma once
#include <pybind11/pybind11.h>

namespace gpukit {
void bind_cuda(pybind11::module_& m);
void bind_jit(pybind11::module_& m);
void bind_safetensors(pybind11::module_& m);
void bind_dlpack(pybind11::module_& m);
}  // namespace gpukit
