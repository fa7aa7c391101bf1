// Copying tensors out of a mapped SafeTensors file on several threads: straight into host memory
// (the CPU backend), or to a CUDA device through pinned staging buffers, each worker thread
// filling one buffer while its others are in flight on the worker's own stream.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "cuda_driver.h"
#include "safetensors_file.h"

namespace gpukit::safetensors {

struct Copy {
    uint64_t offset;  // within the data section
    uint64_t nbytes;
    uint64_t dst;  // destination address (host memory or device memory)
};

// Called on the calling thread about every 100 ms with the bytes copied so far; may throw, which
// stops the copy.
using Progress = std::function<void(uint64_t)>;

// Worker threads to use when the caller does not say: one per core, at most 8.
int default_threads();

void copy_to_host(const MappedFile& file, const std::vector<Copy>& copies, int threads,
                  const Progress& progress);

// Returns once every byte is on the device (the workers' streams are synchronized). The caller
// must make sure nothing still queued on the device uses the destinations.
void copy_to_device(const CudaDevice& device, const MappedFile& file,
                    const std::vector<Copy>& copies, int threads, const Progress& progress);

}  // namespace gpukit::safetensors
