// The SafeTensors header: a strict parser of the JSON subset the format uses (objects, strings
// with escapes, arrays of non-negative integers) and the checks that make a header safe to load.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpukit::safetensors {

// A malformed or inconsistent file: becomes gpukit.SafeTensorsError.
struct FormatError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct TensorEntry {
    std::string name;
    std::string dtype;  // as written in the file: "F32", "BF16", ...
    std::vector<uint64_t> shape;
    uint64_t begin = 0, end = 0;  // byte offsets within the data section
};

struct Header {
    std::vector<TensorEntry> tensors;  // in the order of their data offsets
    std::map<std::string, std::string> metadata;
};

// Bytes per element of a format dtype, or 0 for a dtype the format does not define.
size_t dtype_size(const std::string& dtype);

// Parses the JSON text of a header. Throws FormatError naming the byte offset (counted from the
// start of the file, so `base` is the header's own offset there, i.e. 8) of the first problem.
Header parse_header(const char* text, size_t size, size_t base = 8);

// Checks every tensor against a data section of `data_size` bytes: known dtype, byte count ==
// prod(shape) * itemsize, [begin, end) inside the section, and the non-empty ranges tiling the
// section exactly (no overlap, no gap, no trailing bytes). Sorts the tensors by offset. Throws
// FormatError naming the tensor and the problem.
void validate(Header& header, uint64_t data_size);

}  // namespace gpukit::safetensors
