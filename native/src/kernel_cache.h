// Compiled kernel images, cached in memory and on disk. An entry is found by a hash of its full
// key and accepted only if the key stored in it matches and its checksum holds, so a torn, corrupt
// or colliding file is a miss (and is overwritten by the next store), never a wrong kernel.
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace gpukit {

class KernelCache {
   public:
    struct Stats {
        size_t memory_hits = 0, disk_hits = 0, misses = 0, stores = 0, rejected = 0;
    };

    // An empty directory keeps the cache in memory only.
    explicit KernelCache(std::string directory) : dir_(std::move(directory)) {}

    std::optional<std::string> find(const std::string& key);
    // Writes atomically (a temporary file renamed into place): readers see all or nothing.
    void store(const std::string& key, const std::string& image);
    void clear_memory();
    Stats stats() const;
    const std::string& directory() const { return dir_; }
    std::string file_for(const std::string& key) const;

   private:
    std::string dir_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::string> memory_;
    Stats stats_;
};

uint64_t fnv1a64(const std::string& data, uint64_t seed = 1469598103934665603ull);

}  // namespace gpukit
