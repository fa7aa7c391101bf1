// C++ exceptions that module.cpp turns into gpukit.errors classes.
#pragma once
#include <stdexcept>
#include <string>

namespace gpukit {

// A driver call failed: becomes gpukit.CudaError / gpukit.HipError (OutOfMemoryError for OOM).
struct DriverError : std::runtime_error {
    DriverError(std::string call_, int code_, std::string name_, const std::string& detail)
        : std::runtime_error(call_ + " failed: " + name_ + " (" + detail + ")"),
          call(std::move(call_)),
          code(code_),
          name(std::move(name_)) {}
    std::string call;
    int code;
    std::string name;
    bool hip = false;
};

// Run-time compilation failed: becomes gpukit.CompileError carrying the compiler's log.
struct CompileFailure : std::runtime_error {
    CompileFailure(const std::string& message, std::string log_)
        : std::runtime_error(message), log(std::move(log_)) {}
    std::string log;
};

// A library could not be opened or lacks a symbol: becomes gpukit.BackendUnavailableError.
struct LibraryError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace gpukit
