#include "kernel_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpukit {
namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'G', 'K', 'K', 'C', 'A', 'C', 'H', '1'};

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }

bool get_u64(const std::string& in, size_t& pos, uint64_t& v) {
    if (pos + 8 > in.size()) return false;
    std::memcpy(&v, in.data() + pos, 8);
    pos += 8;
    return true;
}

// File layout: magic, key length, key, image length, image, FNV-1a of the image.
std::optional<std::string> parse(const std::string& file, const std::string& key) {
    size_t pos = sizeof(kMagic);
    uint64_t key_len = 0, image_len = 0, checksum = 0;
    if (file.size() < pos || std::memcmp(file.data(), kMagic, pos) != 0) return std::nullopt;
    if (!get_u64(file, pos, key_len) || key_len != key.size() || pos + key_len > file.size())
        return std::nullopt;
    if (file.compare(pos, key_len, key) != 0) return std::nullopt;
    pos += key_len;
    if (!get_u64(file, pos, image_len) || pos + image_len + 8 != file.size()) return std::nullopt;
    std::string image = file.substr(pos, image_len);
    pos += image_len;
    if (!get_u64(file, pos, checksum) || checksum != fnv1a64(image)) return std::nullopt;
    return image;
}
}  // namespace

uint64_t fnv1a64(const std::string& data, uint64_t seed) {
    uint64_t h = seed;
    for (unsigned char c : data) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

std::string KernelCache::file_for(const std::string& key) const {
    char name[48];
    std::snprintf(name, sizeof(name), "%016llx%016llx.bin",
                  static_cast<unsigned long long>(fnv1a64(key)),
                  static_cast<unsigned long long>(fnv1a64(key, 0x9e3779b97f4a7c15ull)));
    return (fs::path(dir_) / name).string();
}

std::optional<std::string> KernelCache::find(const std::string& key) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = memory_.find(key);
        if (it != memory_.end()) {
            ++stats_.memory_hits;
            return it->second;
        }
    }
    std::optional<std::string> image;
    bool rejected = false;
    if (!dir_.empty()) {
        std::ifstream in(file_for(key), std::ios::binary);
        if (in) {
            std::ostringstream buf;
            buf << in.rdbuf();
            image = parse(buf.str(), key);
            rejected = !image;
        }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (image) {
        ++stats_.disk_hits;
        memory_.emplace(key, *image);
    } else {
        ++stats_.misses;
        stats_.rejected += rejected;
    }
    return image;
}

void KernelCache::store(const std::string& key, const std::string& image) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        memory_[key] = image;
        ++stats_.stores;
    }
    if (dir_.empty()) return;
    // A cache that cannot be written (read-only home, full disk) only costs recompiles.
    std::error_code ec;
    fs::create_directories(dir_, ec);
    static std::atomic<unsigned> counter{0};
    const std::string target = file_for(key);
    const std::string tmp =
        target + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return;
        std::string data(kMagic, sizeof(kMagic));
        put_u64(data, key.size());
        data += key;
        put_u64(data, image.size());
        data += image;
        put_u64(data, fnv1a64(image));
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        if (!out.flush()) {
            out.close();
            fs::remove(tmp, ec);
            return;
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) fs::remove(tmp, ec);
}

void KernelCache::clear_memory() {
    std::lock_guard<std::mutex> lock(mutex_);
    memory_.clear();
}

KernelCache::Stats KernelCache::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

}  // namespace gpukit
