#include "cuda_driver.h"

#include <chrono>
#include <cstring>
#include <map>
#include <type_traits>

#include "errors.h"
#include "pacer.h"

namespace gpukit {

// --- driver -------------------------------------------------------------------------------------

CudaDriver& CudaDriver::open(const std::string& library) {
    static std::mutex mutex;
    static std::map<std::string, CudaDriver*> opened;  // never freed: see SharedLibrary
    std::lock_guard<std::mutex> lock(mutex);
    auto it = opened.find(library);
    if (it == opened.end()) it = opened.emplace(library, new CudaDriver(library)).first;
    return *it->second;
}

CudaDriver::CudaDriver(const std::string& library) : lib_(library) {
    auto& a = api_;
    lib_.bind(a.cuInit, "cuInit");
    lib_.bind(a.cuDriverGetVersion, "cuDriverGetVersion");
    lib_.bind(a.cuGetErrorName, "cuGetErrorName");
    lib_.bind(a.cuGetErrorString, "cuGetErrorString");
    lib_.bind(a.cuDeviceGetCount, "cuDeviceGetCount");
    lib_.bind(a.cuDeviceGet, "cuDeviceGet");
    lib_.bind(a.cuDeviceGetName, "cuDeviceGetName");
    lib_.bind(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    lib_.bind(a.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    lib_.bind(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    lib_.bind(a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    lib_.bind(a.cuCtxSetCurrent, "cuCtxSetCurrent");
    lib_.bind(a.cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange");
    lib_.bind(a.cuMemGetInfo, "cuMemGetInfo_v2");
    lib_.bind(a.cuMemAlloc, "cuMemAlloc_v2");
    lib_.bind(a.cuMemFree, "cuMemFree_v2");
    lib_.bind(a.cuMemAllocHost, "cuMemAllocHost_v2");
    lib_.bind(a.cuMemFreeHost, "cuMemFreeHost");
    lib_.bind(a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    lib_.bind(a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    lib_.bind(a.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    lib_.bind(a.cuStreamCreateWithPriority, "cuStreamCreateWithPriority");
    lib_.bind(a.cuStreamDestroy, "cuStreamDestroy_v2");
    lib_.bind(a.cuStreamGetPriority, "cuStreamGetPriority");
    lib_.bind(a.cuStreamSynchronize, "cuStreamSynchronize");
    lib_.bind(a.cuStreamQuery, "cuStreamQuery");
    lib_.bind(a.cuStreamWaitEvent, "cuStreamWaitEvent");
    lib_.bind(a.cuEventCreate, "cuEventCreate");
    lib_.bind(a.cuEventRecord, "cuEventRecord");
    lib_.bind(a.cuEventQuery, "cuEventQuery");
    lib_.bind(a.cuEventSynchronize, "cuEventSynchronize");
    lib_.bind(a.cuEventElapsedTime, "cuEventElapsedTime");
    lib_.bind(a.cuEventDestroy, "cuEventDestroy_v2");
    lib_.bind(a.cuModuleLoadData, "cuModuleLoadData");
    lib_.bind(a.cuModuleUnload, "cuModuleUnload");
    lib_.bind(a.cuModuleGetFunction, "cuModuleGetFunction");
    lib_.bind(a.cuFuncSetAttribute, "cuFuncSetAttribute");
    lib_.bind(a.cuLaunchKernel, "cuLaunchKernel");
    auto optional = [this](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(lib_.symbol(name));
    };
    optional(a.cuLaunchKernelEx, "cuLaunchKernelEx");
    optional(a.cuOccupancyMaxActiveBlocksPerMultiprocessor,
             "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    optional(a.cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters");
    optional(a.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
    optional(a.cuStreamEndCapture, "cuStreamEndCapture");
    optional(a.cuStreamIsCapturing, "cuStreamIsCapturing");
    optional(a.cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode");
    optional(a.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    optional(a.cuGraphUpload, "cuGraphUpload");
    optional(a.cuGraphLaunch, "cuGraphLaunch");
    optional(a.cuGraphExecDestroy, "cuGraphExecDestroy");
    optional(a.cuGraphDestroy, "cuGraphDestroy");
    optional(a.cuGraphGetNodes, "cuGraphGetNodes");
    optional(a.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    optional(a.cuFuncGetParamInfo, "cuFuncGetParamInfo");
    optional(a.cuFuncGetParamCount, "cuFuncGetParamCount");
    optional(a.cuFuncLoad, "cuFuncLoad");
    optional(a.cuStreamWriteValue32, "cuStreamWriteValue32_v2");
    optional(a.cuGetProcAddress, "cuGetProcAddress_v2");
    check(a.cuInit(0), "cuInit");
    check(a.cuDriverGetVersion(&version_), "cuDriverGetVersion");
}

const char* CudaDriver::error_name(cu::Result r) const {
    const char* name = nullptr;
    if (api_.cuGetErrorName(r, &name) != cu::SUCCESS || name == nullptr)
        return "CUDA_ERROR_UNKNOWN";
    return name;
}

void CudaDriver::check(cu::Result r, const char* call) const {
    if (r == cu::SUCCESS) return;
    const char* text = nullptr;
    api_.cuGetErrorString(r, &text);
    throw DriverError(call, r, error_name(r), text ? text : "no description");
}

int CudaDriver::device_count() const {
    int n = 0;
    check(api_.cuDeviceGetCount(&n), "cuDeviceGetCount");
    return n;
}

// --- the allocator table: C entry points for the Rust pool, which must never see exceptions ----

namespace {

const CudaDevice& dev(void* ctx) { return *static_cast<const CudaDevice*>(ctx); }

template <typename F>
int32_t guarded(F&& f) {
    try {
        f();
        return 0;
    } catch (const DriverError& e) {
        return e.code;
    } catch (...) {
        return 999;  // CUDA_ERROR_UNKNOWN
    }
}

int32_t t_device_alloc(void* ctx, uint64_t n, uint64_t* out) {
    return guarded([&] { *out = dev(ctx).alloc(n); });
}
int32_t t_device_free(void* ctx, uint64_t p) {
    return guarded([&] { dev(ctx).free(p); });
}
int32_t t_host_alloc(void* ctx, uint64_t n, void** out) {
    return guarded([&] {
        dev(ctx).make_current();
        dev(ctx).driver().check(dev(ctx).driver().api().cuMemAllocHost(out, n), "cuMemAllocHost");
    });
}
int32_t t_host_free(void* ctx, void* p) {
    return guarded([&] {
        dev(ctx).make_current();
        dev(ctx).driver().check(dev(ctx).driver().api().cuMemFreeHost(p), "cuMemFreeHost");
    });
}
int32_t t_copy_to_host(void* ctx, void* dst, uint64_t src, uint64_t n, uint64_t stream) {
    return guarded([&] {
        auto s = reinterpret_cast<cu::Stream>(stream);
        dev(ctx).copy_to_host(dst, src, n, s);
        dev(ctx).synchronize(s);
    });
}
int32_t t_copy_to_device(void* ctx, uint64_t dst, const void* src, uint64_t n, uint64_t stream) {
    return guarded([&] {
        auto s = reinterpret_cast<cu::Stream>(stream);
        dev(ctx).copy_to_device(dst, src, n, s);
        dev(ctx).synchronize(s);
    });
}
int32_t t_event_create(void* ctx, uint64_t* out) {
    return guarded([&] { *out = reinterpret_cast<uint64_t>(dev(ctx).create_event(false)); });
}
int32_t t_event_record(void* ctx, uint64_t e, uint64_t s) {
    return guarded([&] {
        dev(ctx).record_event(reinterpret_cast<cu::Event>(e), reinterpret_cast<cu::Stream>(s));
    });
}
int32_t t_event_query(void* ctx, uint64_t e) {
    int32_t done = 0;
    const int32_t code =
        guarded([&] { done = dev(ctx).event_done(reinterpret_cast<cu::Event>(e)) ? 0 : 1; });
    return code != 0 ? code : done;
}
int32_t t_event_destroy(void* ctx, uint64_t e) {
    return guarded([&] { dev(ctx).destroy_event(reinterpret_cast<cu::Event>(e)); });
}
const char* t_error_name(void* ctx, int32_t code) { return dev(ctx).driver().error_name(code); }

// The launch table: C entry points for gpukit._core's plans. A function handle with
// GK_LAUNCH_COOPERATIVE set is launched cooperatively (launch_table.h).
int32_t t_launch(void* ctx, uint64_t f, const uint32_t* grid, const uint32_t* block,
                 uint32_t shared, uint64_t stream, const void* args, uint64_t bytes) {
    int32_t code = 0;
    const bool cooperative = (f & GK_LAUNCH_COOPERATIVE) != 0;
    const auto fn = reinterpret_cast<cu::Function>(f & ~uint64_t{GK_LAUNCH_COOPERATIVE});
    const int32_t failed = guarded([&] {
        code = dev(ctx).launch_buffer(fn, grid, block, shared, reinterpret_cast<cu::Stream>(stream),
                                      args, bytes, cooperative);
    });
    return failed != 0 ? failed : code;
}
int32_t t_fork(void* ctx, uint64_t stream, uint64_t* side) {
    return guarded([&] {
        *side = reinterpret_cast<uint64_t>(dev(ctx).fork(reinterpret_cast<cu::Stream>(stream)));
    });
}
int32_t t_join(void* ctx, uint64_t stream, uint64_t side) {
    return guarded([&] {
        dev(ctx).join(reinterpret_cast<cu::Stream>(stream), reinterpret_cast<cu::Stream>(side));
    });
}
int32_t t_encode_tensor_map(void* ctx, void* out, const gk_tensor_map_desc* desc,
                            uint64_t address) {
    int32_t code = 0;
    const int32_t failed = guarded([&] { code = dev(ctx).encode_tensor_map(out, *desc, address); });
    return failed != 0 ? failed : code;
}

}  // namespace

// --- device -------------------------------------------------------------------------------------

CudaDevice& CudaDevice::get(CudaDriver& driver, int ordinal) {
    static std::mutex mutex;
    static std::map<std::pair<const CudaDriver*, int>, CudaDevice*> devices;
    std::lock_guard<std::mutex> lock(mutex);
    auto key = std::make_pair(&driver, ordinal);
    auto it = devices.find(key);
    if (it == devices.end()) it = devices.emplace(key, new CudaDevice(driver, ordinal)).first;
    return *it->second;
}

CudaDevice::CudaDevice(CudaDriver& driver, int ordinal)
    : driver_(driver), api_(driver.api()), ordinal_(ordinal) {
    const int count = driver.device_count();
    if (ordinal < 0 || ordinal >= count) {
        throw DriverError("cuDeviceGet", 101, "CUDA_ERROR_INVALID_DEVICE",
                          "device " + std::to_string(ordinal) + " requested, " +
                              std::to_string(count) + " present");
    }
    check(api_.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    char name[256] = {};
    check(api_.cuDeviceGetName(name, sizeof(name) - 1, device_), "cuDeviceGetName");
    name_ = name;
    auto attr = [&](int which) {
        int v = 0;
        check(api_.cuDeviceGetAttribute(&v, which, device_), "cuDeviceGetAttribute");
        return v;
    };
    cc_major_ = attr(cu::ATTR_COMPUTE_CAPABILITY_MAJOR);
    cc_minor_ = attr(cu::ATTR_COMPUTE_CAPABILITY_MINOR);
    sm_count_ = attr(cu::ATTR_MULTIPROCESSOR_COUNT);
    l2_bytes_ = attr(cu::ATTR_L2_CACHE_SIZE);
    smem_optin_ = attr(cu::ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    cooperative_ = attr(cu::ATTR_COOPERATIVE_LAUNCH) != 0;
    check(api_.cuDeviceTotalMem(&total_memory_, device_), "cuDeviceTotalMem");
    check(api_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    make_current();
    const auto [least, greatest] = stream_priority_range();
    (void)greatest;
    default_stream_ = create_stream(least);
    table_ = gk_allocator_table{
        GK_ALLOCATOR_TABLE_VERSION,
        GK_BACKEND_CUDA,
        this,
        t_device_alloc,
        t_device_free,
        t_host_alloc,
        t_host_free,
        t_copy_to_host,
        t_copy_to_device,
        t_event_create,
        t_event_record,
        t_event_query,
        t_event_destroy,
        t_error_name,
        cu::ERROR_OUT_OF_MEMORY,
    };
    launch_table_ = gk_launch_table{
        GK_LAUNCH_TABLE_VERSION, this, t_launch, t_encode_tensor_map, t_error_name, t_fork, t_join,
    };
}

void CudaDevice::make_current() const {
    thread_local cu::Context current = nullptr;
    if (current != context_) {
        check(api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
        current = context_;
    }
}

std::pair<size_t, size_t> CudaDevice::memory_info() const {
    make_current();
    size_t free_bytes = 0, total = 0;
    check(api_.cuMemGetInfo(&free_bytes, &total), "cuMemGetInfo");
    return {free_bytes, total};
}

std::pair<int, int> CudaDevice::stream_priority_range() const {
    make_current();
    int least = 0, greatest = 0;
    check(api_.cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
    return {least, greatest};
}

CaptureRelaxed::CaptureRelaxed(const cu::Api& api) : api_(api) {
    if (api_.cuThreadExchangeStreamCaptureMode != nullptr) {
        swapped_ = api_.cuThreadExchangeStreamCaptureMode(&mode_) == cu::SUCCESS;
    }
}

CaptureRelaxed::~CaptureRelaxed() {
    if (swapped_) api_.cuThreadExchangeStreamCaptureMode(&mode_);
}

cu::DevicePtr CudaDevice::alloc(size_t nbytes) const {
    make_current();
    const CaptureRelaxed relaxed(api_);  // the pool may grow while this thread captures
    cu::DevicePtr p = 0;
    check(api_.cuMemAlloc(&p, nbytes), "cuMemAlloc");
    return p;
}

void CudaDevice::free(cu::DevicePtr ptr) const {
    make_current();
    check(api_.cuMemFree(ptr), "cuMemFree");
}

void CudaDevice::copy_to_device(cu::DevicePtr dst, const void* src, size_t n, cu::Stream s) const {
    if (n == 0) return;
    make_current();
    check(api_.cuMemcpyHtoDAsync(dst, src, n, s), "cuMemcpyHtoDAsync");
}

void CudaDevice::copy_to_host(void* dst, cu::DevicePtr src, size_t n, cu::Stream s) const {
    if (n == 0) return;
    make_current();
    check(api_.cuMemcpyDtoHAsync(dst, src, n, s), "cuMemcpyDtoHAsync");
}

void CudaDevice::copy_device(cu::DevicePtr dst, cu::DevicePtr src, size_t n, cu::Stream s) const {
    if (n == 0) return;
    make_current();
    check(api_.cuMemcpyDtoDAsync(dst, src, n, s), "cuMemcpyDtoDAsync");
}

cu::Stream CudaDevice::create_stream(int priority) const {
    make_current();
    cu::Stream s = nullptr;
    check(api_.cuStreamCreateWithPriority(&s, cu::STREAM_NON_BLOCKING, priority),
          "cuStreamCreateWithPriority");
    return s;
}

void CudaDevice::destroy_stream(cu::Stream s) const {
    make_current();
    Lane lane{};
    {
        std::lock_guard<std::mutex> lock(lanes_mutex_);
        auto it = lanes_.find(s);
        if (it != lanes_.end()) {
            lane = it->second;
            lanes_.erase(it);
        }
    }
    check(api_.cuStreamDestroy(s), "cuStreamDestroy");
    if (lane.side != nullptr) {
        check(api_.cuStreamDestroy(lane.side), "cuStreamDestroy");
        destroy_event(lane.forked);
        destroy_event(lane.joined);
    }
}

CudaDevice::Lane CudaDevice::lane(cu::Stream s) const {
    std::lock_guard<std::mutex> lock(lanes_mutex_);
    auto it = lanes_.find(s);
    if (it == lanes_.end()) {
        Lane made{};
        if (green_streams_.count(s) == 0) {
            const CaptureRelaxed relaxed(api_);  // (a plan being captured may fork first)
            int priority = 0;
            check(api_.cuStreamGetPriority(s, &priority), "cuStreamGetPriority");
            made = Lane{create_stream(priority), create_event(false), create_event(false)};
        }
        it = lanes_.emplace(s, made).first;
    }
    return it->second;
}

cu::Stream CudaDevice::fork(cu::Stream s) const {
    const Lane l = lane(s);
    if (l.side == nullptr) return s;
    record_event(l.forked, s);
    wait_event(l.side, l.forked);
    return l.side;
}

void CudaDevice::join(cu::Stream s, cu::Stream side) const {
    if (side == s) return;
    const Lane l = lane(s);
    record_event(l.joined, side);
    wait_event(s, l.joined);
}

void CudaDevice::synchronize(cu::Stream s) const {
    make_current();
    check(api_.cuStreamSynchronize(s), "cuStreamSynchronize");
}

bool CudaDevice::stream_done(cu::Stream s) const {
    make_current();
    const cu::Result r = api_.cuStreamQuery(s);
    if (r == cu::ERROR_NOT_READY) return false;
    check(r, "cuStreamQuery");
    return true;
}

cu::Event CudaDevice::create_event(bool timing) const {
    make_current();
    cu::Event e = nullptr;
    check(api_.cuEventCreate(&e, timing ? 0 : cu::EVENT_DISABLE_TIMING), "cuEventCreate");
    return e;
}

void CudaDevice::destroy_event(cu::Event e) const {
    make_current();
    check(api_.cuEventDestroy(e), "cuEventDestroy");
}

void CudaDevice::record_event(cu::Event e, cu::Stream s) const {
    make_current();
    check(api_.cuEventRecord(e, s), "cuEventRecord");
}

bool CudaDevice::event_done(cu::Event e) const {
    make_current();
    const cu::Result r = api_.cuEventQuery(e);
    if (r == cu::ERROR_NOT_READY) return false;
    check(r, "cuEventQuery");
    return true;
}

void CudaDevice::wait_event(cu::Stream s, cu::Event e) const {
    make_current();
    check(api_.cuStreamWaitEvent(s, e, 0), "cuStreamWaitEvent");
}

void CudaDevice::synchronize_event(cu::Event e) const {
    make_current();
    check(api_.cuEventSynchronize(e), "cuEventSynchronize");
}

float CudaDevice::elapsed_ms(cu::Event start, cu::Event end) const {
    make_current();
    float ms = 0;
    check(api_.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
    return ms;
}

cu::Module CudaDevice::load_module(const std::string& image) const {
    make_current();
    const CaptureRelaxed relaxed(api_);  // an op's first use may come inside a capture
    cu::Module m = nullptr;
    check(api_.cuModuleLoadData(&m, image.data()), "cuModuleLoadData");
    return m;
}

cu::Function CudaDevice::function(cu::Module module, const std::string& name) const {
    make_current();
    const CaptureRelaxed relaxed(api_);
    cu::Function f = nullptr;
    const cu::Result r = api_.cuModuleGetFunction(&f, module, name.c_str());
    if (r != cu::SUCCESS) {
        throw DriverError("cuModuleGetFunction", r, driver_.error_name(r),
                          "no kernel named '" + name + "' in the module");
    }
    // Loaded now rather than lazily at its first launch, which may wait for the whole device
    // while holding the GIL (a plan launches with it held).
    if (api_.cuFuncLoad != nullptr) check(api_.cuFuncLoad(f), "cuFuncLoad");
    return f;
}

void CudaDevice::set_dynamic_shared(cu::Function f, int bytes) const {
    make_current();
    const CaptureRelaxed relaxed(api_);
    check(api_.cuFuncSetAttribute(f, cu::FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
          "cuFuncSetAttribute");
}

void CudaDevice::launch(cu::Function f, Dim3 grid, Dim3 block, unsigned shared, cu::Stream s,
                        void** args, void** extra) const {
    const auto stream = reinterpret_cast<uint64_t>(s);
    pace_before_launch(stream);
    make_current();
    check(api_.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, s, args,
                              extra),
          "cuLaunchKernel");
    check(static_cast<cu::Result>(record_after_launch(stream)), "cuEventRecord (launch pacing)");
}

cu::Result CudaDevice::launch_buffer(cu::Function f, const unsigned* grid, const unsigned* block,
                                     unsigned shared, cu::Stream s, const void* args, size_t bytes,
                                     bool cooperative) const {
    make_current();
    size_t size = bytes;
    // CU_LAUNCH_PARAM_BUFFER_POINTER, args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END
    void* extra[] = {reinterpret_cast<void*>(1), const_cast<void*>(args),
                     reinterpret_cast<void*>(2), &size, nullptr};
    if (!cooperative) {
        return api_.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                   shared, s, nullptr, bytes == 0 ? nullptr : extra);
    }
    // cuLaunchCooperativeKernel takes no parameter buffer: cuLaunchKernelEx with the attribute.
    if (!cooperative_launch()) return cu::ERROR_NOT_SUPPORTED;
    cu::LaunchAttribute attr{};
    attr.id = cu::LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    cu::LaunchConfig config{};
    config.grid_x = grid[0];
    config.grid_y = grid[1];
    config.grid_z = grid[2];
    config.block_x = block[0];
    config.block_y = block[1];
    config.block_z = block[2];
    config.shared_bytes = shared;
    config.stream = s;
    config.attrs = &attr;
    config.num_attrs = 1;
    return api_.cuLaunchKernelEx(&config, f, nullptr, bytes == 0 ? nullptr : extra);
}

double CudaDevice::bare_launch_us(cu::Function f, cu::Stream s, int count) const {
    const unsigned one[3] = {1, 1, 1};
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i)
        check(launch_buffer(f, one, one, 0, s, nullptr, 0), "cuLaunchKernel");
    synchronize(s);
    const std::chrono::duration<double, std::micro> spent =
        std::chrono::steady_clock::now() - start;
    return spent.count() / count;
}

bool CudaDevice::cooperative_launch() const {
    return cooperative_ && api_.cuLaunchKernelEx != nullptr;
}

int CudaDevice::max_active_blocks(cu::Function f, int threads, size_t shared) const {
    make_current();
    if (api_.cuOccupancyMaxActiveBlocksPerMultiprocessor == nullptr) return 0;
    int blocks = 0;
    check(api_.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, threads, shared),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
}

int CudaDevice::max_active_clusters(cu::Function f, unsigned cluster, int threads,
                                    size_t shared) const {
    make_current();
    if (api_.cuOccupancyMaxActiveClusters == nullptr || cluster == 0) return 0;
    const CaptureRelaxed relaxed(api_);
    if (cluster > 8 && api_.cuFuncSetAttribute(f, cu::FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                                               1) != cu::SUCCESS) {
        return 0;
    }
    cu::LaunchConfig config{};
    config.grid_x = cluster;  // one cluster: the kernel's compile-time cluster dimensions
    config.grid_y = 1;
    config.grid_z = 1;
    config.block_x = static_cast<unsigned>(threads);
    config.block_y = 1;
    config.block_z = 1;
    config.shared_bytes = static_cast<unsigned>(shared);
    int clusters = 0;
    if (api_.cuOccupancyMaxActiveClusters(&clusters, f, &config) != cu::SUCCESS) return 0;
    return clusters;
}

// --- graphs -------------------------------------------------------------------------------------

namespace {
template <typename F>
F needed(F fn, const char* name) {
    if (fn == nullptr) {
        throw DriverError(name, cu::ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
                          "this CUDA driver has no graph API (CUDA 11.4 or newer is needed)");
    }
    return fn;
}
}  // namespace

bool CudaDevice::graphs_supported() const {
    return api_.cuStreamBeginCapture && api_.cuStreamEndCapture && api_.cuStreamIsCapturing &&
           api_.cuGraphInstantiateWithFlags && api_.cuGraphLaunch && api_.cuGraphExecDestroy &&
           api_.cuGraphDestroy && api_.cuGraphUpload && api_.cuGraphGetNodes;
}

void CudaDevice::begin_capture(cu::Stream s) const {
    make_current();
    check(needed(api_.cuStreamBeginCapture, "cuStreamBeginCapture")(
              s, cu::STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
}

cu::Graph CudaDevice::end_capture(cu::Stream s) const {
    make_current();
    cu::Graph g = nullptr;
    const cu::Result r = needed(api_.cuStreamEndCapture, "cuStreamEndCapture")(s, &g);
    if (r != cu::SUCCESS && g != nullptr) api_.cuGraphDestroy(g);  // an invalidated capture
    check(r, "cuStreamEndCapture");
    return g;
}

bool CudaDevice::is_capturing(cu::Stream s) const {
    make_current();
    int status = cu::STREAM_CAPTURE_STATUS_NONE;
    check(needed(api_.cuStreamIsCapturing, "cuStreamIsCapturing")(s, &status),
          "cuStreamIsCapturing");
    return status != cu::STREAM_CAPTURE_STATUS_NONE;
}

cu::GraphExec CudaDevice::instantiate(cu::Graph g) const {
    make_current();
    cu::GraphExec e = nullptr;
    check(needed(api_.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags")(&e, g, 0),
          "cuGraphInstantiateWithFlags");
    return e;
}

size_t CudaDevice::graph_nodes(cu::Graph g) const {
    make_current();
    size_t n = 0;
    check(needed(api_.cuGraphGetNodes, "cuGraphGetNodes")(g, nullptr, &n), "cuGraphGetNodes");
    return n;
}

void CudaDevice::upload_graph(cu::GraphExec e, cu::Stream s) const {
    make_current();
    check(needed(api_.cuGraphUpload, "cuGraphUpload")(e, s), "cuGraphUpload");
}

void CudaDevice::launch_graph(cu::GraphExec e, cu::Stream s) const {
    make_current();
    check(needed(api_.cuGraphLaunch, "cuGraphLaunch")(e, s), "cuGraphLaunch");
}

void CudaDevice::destroy_graph_exec(cu::GraphExec e) const {
    make_current();
    check(needed(api_.cuGraphExecDestroy, "cuGraphExecDestroy")(e), "cuGraphExecDestroy");
}

void CudaDevice::destroy_graph(cu::Graph g) const {
    make_current();
    check(needed(api_.cuGraphDestroy, "cuGraphDestroy")(g), "cuGraphDestroy");
}

cu::Result CudaDevice::encode_tensor_map(void* out, const gk_tensor_map_desc& d,
                                         uint64_t address) const {
    if (api_.cuTensorMapEncodeTiled == nullptr) return cu::ERROR_NOT_SUPPORTED;
    make_current();  // (a plan's first call on a thread encodes before it launches anything)
    // The driver writes a CUtensorMap, which cuda.h declares 64-byte aligned; `out` may not be.
    alignas(64) unsigned char map[GK_TENSOR_MAP_BYTES];
    const cu::Result r = api_.cuTensorMapEncodeTiled(
        map, d.data_type, d.rank, reinterpret_cast<void*>(address), d.global_dim, d.global_strides,
        d.box_dim, d.element_strides, d.interleave, d.swizzle, d.l2_promotion, d.oob_fill);
    if (r == cu::SUCCESS) std::memcpy(out, map, sizeof(map));
    return r;
}

bool CudaDevice::has_param_info() const { return api_.cuFuncGetParamInfo != nullptr; }

std::vector<std::pair<size_t, size_t>> CudaDevice::param_layout(cu::Function f,
                                                                size_t count) const {
    if (api_.cuFuncGetParamInfo == nullptr) {
        throw DriverError("cuFuncGetParamInfo", cu::ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
                          "the driver predates CUDA 12.4");
    }
    make_current();
    const CaptureRelaxed relaxed(api_);  // asked when an op's plan is made, maybe in a capture
    if (api_.cuFuncGetParamCount != nullptr)
        check(api_.cuFuncGetParamCount(f, &count), "cuFuncGetParamCount");
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t index = 0; index < count; ++index) {
        size_t offset = 0, size = 0;
        check(api_.cuFuncGetParamInfo(f, index, &offset, &size), "cuFuncGetParamInfo");
        out.emplace_back(offset, size);
    }
    return out;
}

}  // namespace gpukit
