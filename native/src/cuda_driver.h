// The CUDA driver, opened at run time, and one device of it: context, memory, streams, events,
// modules and launches. Every failure throws DriverError naming the call and the error.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cuda_api.h"
#include "gpukit/allocator_table.h"
#include "gpukit/launch_table.h"
#include "shared_library.h"

namespace gpukit {

class CudaDriver {
   public:
    // Opens the library (e.g. "libcuda.so.1") once per process and calls cuInit.
    static CudaDriver& open(const std::string& library);

    const cu::Api& api() const { return api_; }
    const std::string& path() const { return lib_.path(); }
    int version() const { return version_; }
    int device_count() const;
    const char* error_name(cu::Result r) const;
    void check(cu::Result r, const char* call) const;

   private:
    explicit CudaDriver(const std::string& library);
    SharedLibrary lib_;
    cu::Api api_{};
    int version_ = 0;
};

struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
};

// For its scope, lets the calling thread make driver calls that a stream capture in progress on
// it would otherwise refuse (an allocation, a module load): they queue nothing on any stream, so
// the capture records nothing of them and stays valid.
class CaptureRelaxed {
   public:
    explicit CaptureRelaxed(const cu::Api& api);
    ~CaptureRelaxed();
    CaptureRelaxed(const CaptureRelaxed&) = delete;
    CaptureRelaxed& operator=(const CaptureRelaxed&) = delete;

   private:
    const cu::Api& api_;
    int mode_ = cu::STREAM_CAPTURE_MODE_RELAXED;
    bool swapped_ = false;
};

class CudaDevice {
   public:
    // The process-wide object for device `ordinal` (created on first use, never destroyed:
    // contexts and pool memory live until the process exits).
    static CudaDevice& get(CudaDriver& driver, int ordinal);

    void make_current() const;  // binds the primary context to the calling thread

    int ordinal() const { return ordinal_; }
    const std::string& name() const { return name_; }
    int cc_major() const { return cc_major_; }
    int cc_minor() const { return cc_minor_; }
    int sm_count() const { return sm_count_; }
    int l2_bytes() const { return l2_bytes_; }
    int max_shared_per_block_optin() const { return smem_optin_; }
    size_t total_memory() const { return total_memory_; }
    std::pair<size_t, size_t> memory_info() const;      // (free, total)
    std::pair<int, int> stream_priority_range() const;  // (least, greatest)
    cu::Stream default_stream() const { return default_stream_; }

    cu::DevicePtr alloc(size_t nbytes) const;
    void free(cu::DevicePtr ptr) const;
    void copy_to_device(cu::DevicePtr dst, const void* src, size_t n, cu::Stream s) const;
    void copy_to_host(void* dst, cu::DevicePtr src, size_t n, cu::Stream s) const;
    void copy_device(cu::DevicePtr dst, cu::DevicePtr src, size_t n, cu::Stream s) const;

    cu::Stream create_stream(int priority) const;
    void destroy_stream(cu::Stream s) const;  // and its second lane, if it has one
    // A plan's second lane beside stream `s` (launch_table.h's fork and join): a stream of s's
    // priority, made on first use, on which what follows waits for everything queued on s so
    // far; join: s waits for everything queued on `side` so far. A green context's stream is
    // its own second lane (its work stays on the context's SMs): the lanes then run in turn.
    cu::Stream fork(cu::Stream s) const;
    void join(cu::Stream s, cu::Stream side) const;
    void synchronize(cu::Stream s) const;
    bool stream_done(cu::Stream s) const;

    cu::Event create_event(bool timing) const;
    void destroy_event(cu::Event e) const;
    void record_event(cu::Event e, cu::Stream s) const;
    bool event_done(cu::Event e) const;
    void wait_event(cu::Stream s, cu::Event e) const;
    void synchronize_event(cu::Event e) const;
    float elapsed_ms(cu::Event start, cu::Event end) const;

    cu::Module load_module(const std::string& image) const;
    cu::Function function(cu::Module module, const std::string& name) const;
    void set_dynamic_shared(cu::Function f, int bytes) const;
    void launch(cu::Function f, Dim3 grid, Dim3 block, unsigned shared, cu::Stream s, void** args,
                void** extra = nullptr) const;

    // The raw launch of a parameter buffer (no pacing: gpukit._core's plans pace themselves);
    // `cooperative`: every block co-resident (a grid-wide barrier is safe), through
    // cuLaunchKernelEx (CUDA_ERROR_NOT_SUPPORTED where cooperative_launch() is false; a grid
    // larger than the device holds at once fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE).
    cu::Result launch_buffer(cu::Function f, const unsigned* grid, const unsigned* block,
                             unsigned shared, cu::Stream s, const void* args, size_t bytes,
                             bool cooperative = false) const;
    // Whether the device and driver launch cooperatively (CUDA 12.0+ driver for the parameter
    // buffer); blocks of `threads` threads and `shared` dynamic shared bytes one SM holds at once
    // (0 where the driver cannot say).
    bool cooperative_launch() const;
    // Microseconds per launch of `count` launches of `f` (no parameters, one thread) from a C++
    // loop, the stream's wait included: the driver's own floor under every call, for benchmarks.
    double bare_launch_us(cu::Function f, cu::Stream s, int count) const;
    int max_active_blocks(cu::Function f, int threads, size_t shared) const;
    // Clusters of `f` (compile-time cluster dimensions of `cluster` blocks, each of `threads`
    // threads and `shared` dynamic shared bytes) the device holds at once; first allows a
    // non-portable cluster size (more than 8 blocks) on `f`. 0 where the driver cannot launch
    // them (no cuOccupancyMaxActiveClusters, an error, or no cluster fits).
    int max_active_clusters(cu::Function f, unsigned cluster, int threads, size_t shared) const;
    cu::Result encode_tensor_map(void* out, const gk_tensor_map_desc& desc, uint64_t address) const;
    // (byte offset, size) of each parameter of `f` in its launch's parameter buffer: a 64-byte
    // aligned parameter (a tensor map) sits where the parameter bank's alignment puts it, not
    // where C packing would. has_param_info(): whether the driver can say (CUDA 12.4+). Asks
    // for the first `count` parameters (asking past the last is an API error, which
    // compute-sanitizer reports), or for all of them where the driver can count them (13.2+).
    bool has_param_info() const;
    std::vector<std::pair<size_t, size_t>> param_layout(cu::Function f, size_t count) const;

    // Graphs: the calling thread's work on a stream captured (thread-local mode), instantiated
    // and launched. Throws DriverError (CUDA_ERROR_NOT_SUPPORTED where the driver lacks them).
    bool graphs_supported() const;
    void begin_capture(cu::Stream s) const;
    cu::Graph end_capture(cu::Stream s) const;  // the capture ends even when this throws
    bool is_capturing(cu::Stream s) const;
    cu::GraphExec instantiate(cu::Graph g) const;
    size_t graph_nodes(cu::Graph g) const;
    void upload_graph(cu::GraphExec e, cu::Stream s) const;
    void launch_graph(cu::GraphExec e, cu::Stream s) const;
    void destroy_graph_exec(cu::GraphExec e) const;
    void destroy_graph(cu::Graph g) const;
    // Preemption (cuda_qos.cpp). The device's flag words: GK_PREEMPT_SLOTS 32-bit words, zero
    // while no guaranteed work runs, then GK_PREEMPT_SLOTS that stay zero (watched by launches
    // that must not yield); allocated on first use and kept for the process.
    bool has_stream_memops() const;
    cu::DevicePtr preempt_flags();
    void write_value(cu::Stream s, cu::DevicePtr address, uint32_t value) const;
    // Green contexts: whether the driver has them (and why not), and a stream of a green context
    // holding `sm_count` SMs of the device (rounded as the driver's split does) at `priority`;
    // returns the stream and the SMs it got.
    std::pair<bool, std::string> green_contexts() const;
    std::pair<cu::Stream, int> green_stream(int sm_count, int priority) const;

    const gk_allocator_table* allocator_table() const { return &table_; }
    const gk_launch_table* launch_table() const { return &launch_table_; }
    const CudaDriver& driver() const { return driver_; }

   private:
    CudaDevice(CudaDriver& driver, int ordinal);
    void check(cu::Result r, const char* call) const { driver_.check(r, call); }
    struct Lane {
        cu::Stream side = nullptr;  // null: the stream is its own second lane
        cu::Event forked = nullptr, joined = nullptr;
    };
    Lane lane(cu::Stream s) const;

    CudaDriver& driver_;
    const cu::Api& api_;
    int ordinal_;
    cu::Device device_ = 0;
    cu::Context context_ = nullptr;
    cu::Stream default_stream_ = nullptr;
    std::string name_;
    int cc_major_ = 0, cc_minor_ = 0, sm_count_ = 0, l2_bytes_ = 0, smem_optin_ = 0;
    bool cooperative_ = false;
    size_t total_memory_ = 0;
    gk_allocator_table table_{};
    gk_launch_table launch_table_{};
    std::mutex preempt_mutex_;
    std::atomic<cu::DevicePtr> preempt_flags_{0};
    mutable std::mutex lanes_mutex_;
    mutable std::map<cu::Stream, Lane> lanes_;
    mutable std::set<cu::Stream> green_streams_;  // (under lanes_mutex_)
};

}  // namespace gpukit
