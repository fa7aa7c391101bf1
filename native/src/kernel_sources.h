// Kernel sources from kernels/, embedded at build time by cmake/embed_kernels.cmake.
#pragma once
#include <string_view>
#include <utility>
#include <vector>

namespace gpukit {
// (file name, source text) for every file in kernels/, sorted by name.
const std::vector<std::pair<std::string_view, std::string_view>>& kernel_sources();
}  // namespace gpukit
