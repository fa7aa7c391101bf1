// A SafeTensors file opened for loading: mapped read-only, its header parsed and validated.
#pragma once
#include <cstdint>
#include <string>

#include "safetensors_header.h"

namespace gpukit::safetensors {

// The file could not be opened or mapped; `error` is the errno value.
struct OpenError : std::runtime_error {
    OpenError(const std::string& path_, int error_, const std::string& what)
        : std::runtime_error(what), path(path_), error(error_) {}
    std::string path;
    int error;
};

class MappedFile {
   public:
    // Opens and maps `path`, then parses and validates its header. Throws OpenError, or
    // FormatError with a message that starts with `path`.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::string& path() const { return path_; }
    const Header& header() const { return header_; }
    uint64_t file_size() const { return size_; }
    uint64_t data_offset() const { return data_offset_; }  // 8 + the header's length
    uint64_t data_size() const { return size_ - data_offset_; }
    bool is_open() const { return base_ != nullptr; }

    // The first byte of the data section; throws FormatError once closed.
    const char* data() const;

    // Unmaps the file (arrays already loaded stay valid).
    void close();

   private:
    std::string path_;
    char* base_ = nullptr;
    uint64_t size_ = 0;
    uint64_t data_offset_ = 0;
    Header header_;
};

}  // namespace gpukit::safetensors
