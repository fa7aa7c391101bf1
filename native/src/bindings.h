#pragma once
#include <pybind11/pybind11.h>

namespace gpukit {
void bind_cuda(pybind11::module_& m);
void bind_jit(pybind11::module_& m);
void bind_safetensors(pybind11::module_& m);
void bind_dlpack(pybind11::module_& m);
void bind_nn(pybind11::module_& m);  // after bind_cuda: adds to CudaDevice
}  // namespace gpukit
