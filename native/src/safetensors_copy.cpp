#include "safetensors_copy.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels answer EINVAL and we fault as we go
#endif

namespace gpukit::safetensors {

namespace {

constexpr uint64_t kHostChunk = 16ull << 20;
constexpr uint64_t kStagingBytes = 8ull << 20;  // per staging buffer
constexpr int kStagingPerWorker = 2;            // one filling while the other is in flight

// The copies cut into pieces of at most `chunk` bytes, in file order, so that threads taking the
// next piece read the file front to back.
std::vector<Copy> chunked(const MappedFile& file, const std::vector<Copy>& copies, uint64_t chunk) {
    std::vector<Copy> out;
    for (const Copy& c : copies) {
        if (c.offset > file.data_size() || c.nbytes > file.data_size() - c.offset) {
            throw FormatError(file.path() + ": copy of [" + std::to_string(c.offset) + ", +" +
                              std::to_string(c.nbytes) + ") lies outside the data section");
        }
        for (uint64_t done = 0; done < c.nbytes; done += chunk) {
            out.push_back({c.offset + done, std::min(chunk, c.nbytes - done), c.dst + done});
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Copy& a, const Copy& b) { return a.offset < b.offset; });
    return out;
}

// Maps the pages of [p, p + n) in one call instead of one page fault at a time.
void populate(const char* p, uint64_t n) {
    static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t start = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(p) + n;
    ::madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_READ);
}

// Runs worker(index) on `threads` threads; the calling thread reports progress meanwhile. The first
// exception (of a worker or of `progress`) stops the others and is rethrown once all have ended.
class Crew {
   public:
    std::atomic<uint64_t> done{0};
    std::atomic<bool> stop{false};

    void run(int threads, const std::function<void(int)>& worker, const Progress& progress) {
        std::vector<std::thread> pool;
        int running = threads;
        for (int i = 0; i < threads; ++i) {
            pool.emplace_back([&, i] {
                try {
                    worker(i);
                } catch (...) {
                    fail(std::current_exception());
                }
                std::lock_guard<std::mutex> lock(mutex_);
                --running;
                cv_.notify_all();
            });
        }
        {
            std::unique_lock<std::mutex> lock(mutex_);
            while (running > 0) {
                cv_.wait_for(lock, std::chrono::milliseconds(100));
                if (running > 0 && progress && !stop) {
                    lock.unlock();
                    try {
                        progress(done.load());
                    } catch (...) {
                        fail(std::current_exception());
                    }
                    lock.lock();
                }
            }
        }
        for (auto& t : pool) t.join();
        if (error_) std::rethrow_exception(error_);
        if (progress) progress(done.load());
    }

   private:
    void fail(std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = e;
        stop = true;
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::exception_ptr error_;
};

int workers_for(int threads, size_t pieces) {
    if (threads <= 0) threads = default_threads();
    return static_cast<int>(std::max<size_t>(1, std::min<size_t>(threads, pieces)));
}

// Pinned staging buffers, streams and events of one device, made on first use and kept for the
// process (pinning memory is slow). One load at a time uses them.
struct Staging {
    struct Slot {
        void* host = nullptr;
        cu::Event done = nullptr;
        bool busy = false;
    };
    struct Worker {
        cu::Stream stream = nullptr;
        std::vector<Slot> slots;
    };
    std::mutex in_use;
    std::vector<Worker> workers;

    static Staging& of(const CudaDevice& device) {
        static std::mutex mutex;
        static std::map<const CudaDevice*, Staging*> all;  // never freed, like the devices
        std::lock_guard<std::mutex> lock(mutex);
        auto it = all.find(&device);
        if (it == all.end()) it = all.emplace(&device, new Staging).first;
        return *it->second;
    }

    // At least `n` workers' resources (the caller holds `in_use`).
    void reserve(const CudaDevice& device, int n) {
        const gk_allocator_table* table = device.allocator_table();
        device.make_current();
        while (static_cast<int>(workers.size()) < n) {
            // Built aside and kept only when complete, so that every kept worker has its slots.
            Worker w;
            w.stream = device.create_stream(device.stream_priority_range().first);
            try {
                for (int s = 0; s < kStagingPerWorker; ++s) {
                    Slot slot;
                    // The device's own pinned host allocator (cuMemAllocHost).
                    const int32_t code = table->host_alloc(table->ctx, kStagingBytes, &slot.host);
                    device.driver().check(static_cast<cu::Result>(code), "cuMemAllocHost");
                    w.slots.push_back(slot);
                    w.slots.back().done = device.create_event(false);
                }
            } catch (...) {
                for (auto& slot : w.slots) {
                    table->host_free(table->ctx, slot.host);
                    if (slot.done != nullptr) device.destroy_event(slot.done);
                }
                device.destroy_stream(w.stream);
                throw;
            }
            workers.push_back(std::move(w));
        }
    }
};

}  // namespace

int default_threads() {
    const unsigned n = std::thread::hardware_concurrency();
    return static_cast<int>(std::clamp(n == 0 ? 1u : n, 1u, 8u));
}

void copy_to_host(const MappedFile& file, const std::vector<Copy>& copies, int threads,
                  const Progress& progress) {
    const std::vector<Copy> pieces = chunked(file, copies, kHostChunk);
    const char* data = file.data();
    std::atomic<size_t> next{0};
    Crew crew;
    crew.run(
        workers_for(threads, pieces.size()),
        [&](int) {
            for (size_t k; !crew.stop && (k = next.fetch_add(1)) < pieces.size();) {
                const Copy& c = pieces[k];
                populate(data + c.offset, c.nbytes);
                std::memcpy(reinterpret_cast<void*>(c.dst), data + c.offset, c.nbytes);
                crew.done += c.nbytes;
            }
        },
        progress);
}

void copy_to_device(const CudaDevice& device, const MappedFile& file,
                    const std::vector<Copy>& copies, int threads, const Progress& progress) {
    const std::vector<Copy> pieces = chunked(file, copies, kStagingBytes);
    if (pieces.empty()) return;
    const char* data = file.data();
    Staging& staging = Staging::of(device);
    std::lock_guard<std::mutex> lock(staging.in_use);
    const int n = workers_for(threads, pieces.size());
    staging.reserve(device, n);
    std::atomic<size_t> next{0};
    Crew crew;
    crew.run(
        n,
        [&](int i) {
            device.make_current();
            Staging::Worker& w = staging.workers[i];
            size_t turn = 0;
            try {
                for (size_t k; !crew.stop && (k = next.fetch_add(1)) < pieces.size(); ++turn) {
                    const Copy& c = pieces[k];
                    Staging::Slot& slot = w.slots[turn % w.slots.size()];
                    if (slot.busy) device.synchronize_event(slot.done);  // its last copy is over
                    slot.busy = false;
                    populate(data + c.offset, c.nbytes);
                    std::memcpy(slot.host, data + c.offset, c.nbytes);
                    device.copy_to_device(c.dst, slot.host, c.nbytes, w.stream);
                    device.record_event(slot.done, w.stream);
                    slot.busy = true;
                    crew.done += c.nbytes;
                }
                device.synchronize(w.stream);
            } catch (...) {
                // Leave no copy in flight from a buffer the next load will refill.
                try {
                    device.synchronize(w.stream);
                } catch (...) {
                }
                for (auto& slot : w.slots) slot.busy = false;
                throw;
            }
            for (auto& slot : w.slots) slot.busy = false;
        },
        progress);
}

}  // namespace gpukit::safetensors
