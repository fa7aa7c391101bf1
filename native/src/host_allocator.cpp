// The allocator table of the CPU backend: "device" memory is ordinary host memory, copies are
// memcpy and every event is complete. The Rust pool runs over it unchanged, so its logic is tested
// on machines without a GPU.
#include "host_allocator.h"

#include <cstdlib>
#include <cstring>

namespace gpukit {
namespace {

constexpr int32_t kHostOutOfMemory = 2;
constexpr size_t kAlignment = 256;  // what cuMemAlloc guarantees, so kernels see the same alignment

int32_t host_malloc(void*, uint64_t nbytes, uint64_t* out) {
    const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
    if (p == nullptr) return kHostOutOfMemory;
    *out = reinterpret_cast<uint64_t>(p);
    return 0;
}

int32_t host_release(void*, uint64_t ptr) {
    std::free(reinterpret_cast<void*>(ptr));
    return 0;
}

int32_t host_malloc_ptr(void* ctx, uint64_t nbytes, void** out) {
    uint64_t p = 0;
    const int32_t code = host_malloc(ctx, nbytes, &p);
    *out = reinterpret_cast<void*>(p);
    return code;
}

int32_t host_release_ptr(void* ctx, void* ptr) {
    return host_release(ctx, reinterpret_cast<uint64_t>(ptr));
}

int32_t copy_to_host(void*, void* dst, uint64_t src, uint64_t nbytes, uint64_t) {
    std::memcpy(dst, reinterpret_cast<const void*>(src), nbytes);
    return 0;
}

int32_t copy_to_device(void*, uint64_t dst, const void* src, uint64_t nbytes, uint64_t) {
    std::memcpy(reinterpret_cast<void*>(dst), src, nbytes);
    return 0;
}

int32_t event_create(void*, uint64_t* out) {
    *out = 1;
    return 0;
}
int32_t event_record(void*, uint64_t, uint64_t) { return 0; }
int32_t event_query(void*, uint64_t) { return 0; }
int32_t event_destroy(void*, uint64_t) { return 0; }

const char* error_name(void*, int32_t code) {
    return code == kHostOutOfMemory ? "HOST_OUT_OF_MEMORY" : "HOST_UNKNOWN_ERROR";
}

const gk_allocator_table kHostTable = {
    GK_ALLOCATOR_TABLE_VERSION,
    GK_BACKEND_CPU,
    nullptr,
    host_malloc,
    host_release,
    host_malloc_ptr,
    host_release_ptr,
    copy_to_host,
    copy_to_device,
    event_create,
    event_record,
    event_query,
    event_destroy,
    error_name,
    kHostOutOfMemory,
};

}  // namespace

const gk_allocator_table* host_allocator_table() { return &kHostTable; }

}  // namespace gpukit
