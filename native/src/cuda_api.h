// The few CUDA driver API types and functions gpukit uses, declared here so that building needs no
// CUDA toolkit. Values match cuda.h. The library is opened at run time (driver.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace gpukit::cu {

using Result = int;  // CUresult
using Device = int;  // CUdevice
using DevicePtr = uint64_t;
using Context = struct CUctx_st*;
using Stream = struct CUstream_st*;
using Event = struct CUevent_st*;
using Module = struct CUmod_st*;
using Function = struct CUfunc_st*;
using Graph = struct CUgraph_st*;
using GraphExec = struct CUgraphExec_st*;
using GraphNode = struct CUgraphNode_st*;

constexpr Result SUCCESS = 0;
constexpr Result ERROR_INVALID_VALUE = 1;
constexpr Result ERROR_OUT_OF_MEMORY = 2;
constexpr Result ERROR_NOT_READY = 600;

// CUdevice_attribute values
constexpr int ATTR_MAX_THREADS_PER_BLOCK = 1;
constexpr int ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int ATTR_MULTIPROCESSOR_COUNT = 16;
constexpr int ATTR_L2_CACHE_SIZE = 38;
constexpr int ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int ATTR_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int ATTR_COOPERATIVE_LAUNCH = 95;
constexpr int ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

constexpr unsigned STREAM_NON_BLOCKING = 0x1;
constexpr unsigned EVENT_DISABLE_TIMING = 0x2;
constexpr int FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
// Clusters of more than 8 blocks (sm_90: up to 16) where the function allows them.
constexpr int FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14;

// cuLaunchKernelEx's configuration (CUDA 12.0+): CUlaunchConfig and CUlaunchAttribute (an id, its
// value a 64-byte union) as cuda.h lays them out.
constexpr unsigned LAUNCH_ATTRIBUTE_COOPERATIVE = 2;
struct LaunchAttribute {
    unsigned id;
    unsigned char pad[4];
    union {
        unsigned char bytes[64];
        int cooperative;
    } value;
};
static_assert(sizeof(LaunchAttribute) == 72, "CUlaunchAttribute");
struct LaunchConfig {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
    Stream stream;
    LaunchAttribute* attrs;
    unsigned num_attrs;
};

// CUstreamCaptureMode and CUstreamCaptureStatus values
constexpr int STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr int STREAM_CAPTURE_MODE_RELAXED = 2;
constexpr int STREAM_CAPTURE_STATUS_NONE = 0;

// Entry points, by the exported (versioned) symbol that cuda.h's macros map each name to.
struct Api {
    Result (*cuInit)(unsigned);
    Result (*cuDriverGetVersion)(int*);
    Result (*cuGetErrorName)(Result, const char**);
    Result (*cuGetErrorString)(Result, const char**);
    Result (*cuDeviceGetCount)(int*);
    Result (*cuDeviceGet)(Device*, int);
    Result (*cuDeviceGetName)(char*, int, Device);
    Result (*cuDeviceGetAttribute)(int*, int, Device);
    Result (*cuDeviceTotalMem)(size_t*, Device);  // _v2
    Result (*cuDevicePrimaryCtxRetain)(Context*, Device);
    Result (*cuDevicePrimaryCtxRelease)(Device);  // _v2
    Result (*cuCtxSetCurrent)(Context);
    Result (*cuCtxGetStreamPriorityRange)(int*, int*);
    Result (*cuMemGetInfo)(size_t*, size_t*);  // _v2
    Result (*cuMemAlloc)(DevicePtr*, size_t);  // _v2
    Result (*cuMemFree)(DevicePtr);            // _v2
    Result (*cuMemAllocHost)(void**, size_t);  // _v2
    Result (*cuMemFreeHost)(void*);
    Result (*cuMemcpyHtoDAsync)(DevicePtr, const void*, size_t, Stream);  // _v2
    Result (*cuMemcpyDtoHAsync)(void*, DevicePtr, size_t, Stream);        // _v2
    Result (*cuMemcpyDtoDAsync)(DevicePtr, DevicePtr, size_t, Stream);    // _v2
    Result (*cuStreamCreateWithPriority)(Stream*, unsigned, int);
    Result (*cuStreamDestroy)(Stream);  // _v2
    Result (*cuStreamGetPriority)(Stream, int*);
    Result (*cuStreamSynchronize)(Stream);
    Result (*cuStreamQuery)(Stream);
    Result (*cuStreamWaitEvent)(Stream, Event, unsigned);
    Result (*cuEventCreate)(Event*, unsigned);
    Result (*cuEventRecord)(Event, Stream);
    Result (*cuEventQuery)(Event);
    Result (*cuEventSynchronize)(Event);
    Result (*cuEventElapsedTime)(float*, Event, Event);
    Result (*cuEventDestroy)(Event);  // _v2
    Result (*cuModuleLoadData)(Module*, const void*);
    Result (*cuModuleUnload)(Module);
    Result (*cuModuleGetFunction)(Function*, Module, const char*);
    Result (*cuFuncSetAttribute)(Function, int, int);
    Result (*cuLaunchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, Stream, void**, void**);
    // CUDA 12.0+ (null otherwise): a launch with attributes (gpukit: cooperative launches).
    Result (*cuLaunchKernelEx)(const LaunchConfig*, Function, void**, void**);
    Result (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, Function, int, size_t);
    // CUDA 12.0+ (null otherwise): clusters of a launch configuration resident at once.
    Result (*cuOccupancyMaxActiveClusters)(int*, Function, const LaunchConfig*);
    // Stream capture and graphs. Null when the driver lacks them (graphs are then unavailable).
    Result (*cuStreamBeginCapture)(Stream, int);  // _v2
    Result (*cuStreamEndCapture)(Stream, Graph*);
    Result (*cuStreamIsCapturing)(Stream, int*);
    Result (*cuThreadExchangeStreamCaptureMode)(int*);
    Result (*cuGraphInstantiateWithFlags)(GraphExec*, Graph, unsigned long long);
    Result (*cuGraphUpload)(GraphExec, Stream);
    Result (*cuGraphLaunch)(GraphExec, Stream);
    Result (*cuGraphExecDestroy)(GraphExec);
    Result (*cuGraphDestroy)(Graph);
    Result (*cuGraphGetNodes)(Graph, GraphNode*, size_t*);
    // CUDA 12+ drivers only: null when the driver lacks it (TMA descriptors are then unavailable).
    Result (*cuTensorMapEncodeTiled)(void*, unsigned, unsigned, void*, const uint64_t*,
                                     const uint64_t*, const unsigned*, const unsigned*, unsigned,
                                     unsigned, unsigned, unsigned);
    // CUDA 12.4+ drivers only (null otherwise): where a kernel's parameter sits in the buffer
    // that CU_LAUNCH_PARAM_BUFFER_POINTER passes, and its size.
    Result (*cuFuncGetParamInfo)(Function, size_t, size_t*, size_t*);
    Result (*cuFuncGetParamCount)(Function, size_t*);  // newer drivers only
    // CUDA 12.4+ (null otherwise): loads a kernel now instead of at its first launch.
    Result (*cuFuncLoad)(Function);
    // Stream memory operations (the _v2 entry point, CUDA 11.7+; null when absent): the
    // preemption words are raised and lowered by the GPU itself, in stream order.
    Result (*cuStreamWriteValue32)(Stream, DevicePtr, uint32_t, unsigned);
    // cuGetProcAddress_v2 (CUDA 12.0+; null otherwise): how green contexts are looked up.
    Result (*cuGetProcAddress)(const char*, void**, int, uint64_t, int*);
};

// Green contexts (CUDA 12.4+ drivers), found through cuGetProcAddress at the 12.4 ABI, where a
// CUdevResource is 144 bytes: its type, 92 bytes of padding, then (for SMs) smCount.
constexpr int GREEN_CTX_ABI = 12040;
constexpr int DEV_RESOURCE_TYPE_SM = 1;
constexpr unsigned GREEN_CTX_DEFAULT_STREAM = 0x1;
struct DevResource {
    int type;
    unsigned char padding[92];
    unsigned sm_count;
    unsigned char rest[44];
};
static_assert(sizeof(DevResource) == 144, "CUdevResource of the 12.4 ABI");
using GreenCtx = struct CUgreenCtx_st*;
using DevResourceDesc = struct CUdevResourceDesc_st*;
struct GreenApi {
    Result (*cuDeviceGetDevResource)(Device, DevResource*, int);
    Result (*cuDevSmResourceSplitByCount)(DevResource*, unsigned*, const DevResource*, DevResource*,
                                          unsigned, unsigned);
    Result (*cuDevResourceGenerateDesc)(DevResourceDesc*, DevResource*, unsigned);
    Result (*cuGreenCtxCreate)(GreenCtx*, DevResourceDesc, Device, unsigned);
    Result (*cuGreenCtxStreamCreate)(Stream*, GreenCtx, unsigned, int);
};

constexpr Result ERROR_NOT_SUPPORTED = 801;

}  // namespace gpukit::cu
