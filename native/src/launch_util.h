// Helpers the op entry points share: filling the fixed-size dimension arrays of the kernel
// argument structs, and launching a kernel whose one parameter is such a struct.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_driver.h"

extern "C" {
#include "args.cuh"
}

namespace gpukit::launch_util {

inline void copy_dims(const std::vector<int64_t>& from, gk_i64* to, size_t capacity,
                      const char* what) {
    if (from.size() > capacity) {
        throw std::invalid_argument(std::string(what) + " has " + std::to_string(from.size()) +
                                    " dimensions; at most " + std::to_string(capacity) +
                                    " are supported");
    }
    std::copy(from.begin(), from.end(), to);
}

template <typename Args>
void launch_one(const CudaDevice& dev, cu::Function fn, Dim3 grid, Dim3 block, cu::Stream s,
                Args& args, unsigned shared = 0) {
    void* params[] = {&args};
    dev.launch(fn, grid, block, shared, s, params);
}

}  // namespace gpukit::launch_util
