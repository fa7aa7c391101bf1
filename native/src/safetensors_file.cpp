#include "safetensors_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpukit::safetensors {

namespace {

// Larger headers are refused, as the reference implementation does, so that a corrupt size field
// cannot make us parse gigabytes.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
    Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) {
        const int err = errno;
        throw OpenError(path, err, path + ": " + std::strerror(err));
    }
    struct stat st{};
    if (::fstat(file.fd, &st) != 0) {
        const int err = errno;
        throw OpenError(path, err, path + ": " + std::strerror(err));
    }
    size_ = static_cast<uint64_t>(st.st_size);
    const auto fail = [&](const std::string& what) { throw FormatError(path + ": " + what); };
    if (size_ < 8) {
        fail("the file has " + std::to_string(size_) +
             " bytes, too few for the 8-byte header size (truncated?)");
    }
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, file.fd, 0);
    if (p == MAP_FAILED) {
        const int err = errno;
        throw OpenError(path, err, path + ": mmap: " + std::strerror(err));
    }
    base_ = static_cast<char*>(p);
    ::madvise(base_, size_, MADV_SEQUENTIAL);
    try {
        uint64_t header_size = 0;
        for (int i = 7; i >= 0; --i) {
            header_size = (header_size << 8) | static_cast<unsigned char>(base_[i]);
        }
        if (header_size > size_ - 8) {
            fail("header size " + std::to_string(header_size) + " runs past the end of the file (" +
                 std::to_string(size_) + " bytes; truncated or not a safetensors file?)");
        }
        if (header_size > kMaxHeaderBytes) {
            fail("header size " + std::to_string(header_size) + " exceeds the limit of " +
                 std::to_string(kMaxHeaderBytes) + " bytes");
        }
        data_offset_ = 8 + header_size;
        try {
            header_ = parse_header(base_ + 8, header_size, 8);
            validate(header_, data_size());
        } catch (const FormatError& e) {
            fail(e.what());
        }
    } catch (...) {
        close();
        throw;
    }
}

MappedFile::~MappedFile() { close(); }

const char* MappedFile::data() const {
    if (base_ == nullptr) throw FormatError(path_ + ": the file was closed");
    return base_ + data_offset_;
}

void MappedFile::close() {
    if (base_ != nullptr) {
        ::munmap(base_, size_);
        base_ = nullptr;
    }
}

}  // namespace gpukit::safetensors
