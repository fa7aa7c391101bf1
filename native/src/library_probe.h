#pragma once
#include <string>

namespace gpukit {

struct LibraryProbe {
    bool found;
    std::string detail;  // the resolved path when found, the loader's message otherwise
};

// Asks the dynamic loader for a library by name or path, without keeping it loaded.
LibraryProbe probe_library(const std::string& name);

}  // namespace gpukit
