// What the QoS scheduler needs of the driver beyond launches: the device's preemption flag,
// raised, lowered and waited on by stream memory operations (no host round trip), and green
// contexts, which keep a stream's work on a subset of the SMs.
#include <cstring>
#include <iterator>
#include <vector>

#include "cuda_driver.h"
#include "errors.h"
#include "geometry.cuh"

namespace gpukit {

namespace {

DriverError unsupported(const char* call, const std::string& why) {
    return DriverError(call, cu::ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", why);
}

// The green-context entry points at the 12.4 ABI, or the reason they are missing.
struct GreenLookup {
    cu::GreenApi api{};
    std::string missing;
};

template <typename Fn>
bool lookup(const cu::Api& a, Fn*& fn, const char* name, std::string& missing) {
    void* p = nullptr;
    int status = 0;
    if (a.cuGetProcAddress(name, &p, cu::GREEN_CTX_ABI, 0, &status) != cu::SUCCESS || !p) {
        missing = std::string("the driver has no ") + name;
        return false;
    }
    fn = reinterpret_cast<Fn*>(p);
    return true;
}

GreenLookup find_green(const cu::Api& a) {
    GreenLookup g;
    if (a.cuGetProcAddress == nullptr) {
        g.missing = "the driver has no cuGetProcAddress_v2 (CUDA 12.0+)";
        return g;
    }
    auto& x = g.api;
    lookup(a, x.cuDeviceGetDevResource, "cuDeviceGetDevResource", g.missing) &&
        lookup(a, x.cuDevSmResourceSplitByCount, "cuDevSmResourceSplitByCount", g.missing) &&
        lookup(a, x.cuDevResourceGenerateDesc, "cuDevResourceGenerateDesc", g.missing) &&
        lookup(a, x.cuGreenCtxCreate, "cuGreenCtxCreate", g.missing) &&
        lookup(a, x.cuGreenCtxStreamCreate, "cuGreenCtxStreamCreate", g.missing);
    return g;
}

const GreenLookup& green(const cu::Api& a) {
    static const GreenLookup g = find_green(a);  // one driver per process in practice
    return g;
}

}  // namespace

bool CudaDevice::has_stream_memops() const { return api_.cuStreamWriteValue32 != nullptr; }

cu::DevicePtr CudaDevice::preempt_flags() {
    std::lock_guard<std::mutex> lock(preempt_mutex_);
    if (preempt_flags_.load() == 0) {
        // The words, then as many never raised: what a launch that must not yield watches.
        const uint32_t zeros[2 * GK_PREEMPT_SLOTS] = {};
        const cu::DevicePtr p = alloc(sizeof(zeros));  // cuMemAlloc: 256-byte aligned
        copy_to_device(p, zeros, sizeof(zeros), default_stream_);
        synchronize(default_stream_);
        preempt_flags_.store(p);
    }
    return preempt_flags_.load();
}

void CudaDevice::write_value(cu::Stream s, cu::DevicePtr address, uint32_t value) const {
    if (api_.cuStreamWriteValue32 == nullptr)
        throw unsupported("cuStreamWriteValue32", "the driver has no stream memory operations");
    make_current();
    check(api_.cuStreamWriteValue32(s, address, value, 0), "cuStreamWriteValue32");
}

std::pair<bool, std::string> CudaDevice::green_contexts() const {
    const GreenLookup& g = green(api_);
    return {g.missing.empty(), g.missing};
}

std::pair<cu::Stream, int> CudaDevice::green_stream(int sm_count, int priority) const {
    const GreenLookup& g = green(api_);
    if (!g.missing.empty()) throw unsupported("cuGreenCtxCreate", g.missing);
    if (sm_count < 1 || sm_count > sm_count_) {
        throw DriverError("cuDevSmResourceSplitByCount", cu::ERROR_INVALID_VALUE,
                          "CUDA_ERROR_INVALID_VALUE",
                          "a green context of " + std::to_string(sm_count) +
                              " SMs on a device of " + std::to_string(sm_count_));
    }
    make_current();
    cu::DevResource all{}, part{}, rest{};
    check(g.api.cuDeviceGetDevResource(device_, &all, cu::DEV_RESOURCE_TYPE_SM),
          "cuDeviceGetDevResource");
    unsigned groups = 1;
    check(g.api.cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0,
                                            static_cast<unsigned>(sm_count)),
          "cuDevSmResourceSplitByCount");
    if (groups < 1) throw unsupported("cuDevSmResourceSplitByCount", "no SM group came back");
    cu::DevResourceDesc desc = nullptr;
    check(g.api.cuDevResourceGenerateDesc(&desc, &part, 1), "cuDevResourceGenerateDesc");
    cu::GreenCtx ctx = nullptr;  // kept for the process, as its streams are
    check(g.api.cuGreenCtxCreate(&ctx, desc, device_, cu::GREEN_CTX_DEFAULT_STREAM),
          "cuGreenCtxCreate");
    cu::Stream s = nullptr;
    check(g.api.cuGreenCtxStreamCreate(&s, ctx, cu::STREAM_NON_BLOCKING, priority),
          "cuGreenCtxStreamCreate");
    {
        std::lock_guard<std::mutex> lock(lanes_mutex_);
        green_streams_.insert(s);
    }
    return {s, static_cast<int>(part.sm_count)};
}

}  // namespace gpukit
