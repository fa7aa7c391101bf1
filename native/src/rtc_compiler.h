// NVRTC or hiprtc, opened at run time. The two share one C API shape, so one class drives both.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "shared_library.h"

namespace gpukit {

struct RtcSource {
    std::string name;                                          // file name shown in the log
    std::string source;                                        // program text
    std::vector<std::pair<std::string, std::string>> headers;  // (include name, text)
    std::vector<std::string> options;
};

class RtcCompiler {
   public:
    enum class Kind { Nvrtc, Hiprtc };

    // Opens the library once per process (e.g. a path to libnvrtc.so.13).
    static RtcCompiler& open(const std::string& library, Kind kind);

    Kind kind() const { return kind_; }
    const std::string& path() const { return lib_.path(); }
    std::pair<int, int> version() const { return version_; }
    // NVRTC: the sm_XY numbers it can emit (e.g. 90); hiprtc: empty.
    std::vector<int> supported_archs() const;

    // Compiles to a loadable image: cubin (NVRTC with an sm_ target) or PTX (compute_ target),
    // or a code object (hiprtc). Throws CompileFailure with the log.
    std::string compile(const RtcSource& src) const;

   private:
    RtcCompiler(const std::string& library, Kind kind);
    using Program = struct RtcProgram*;
    struct Api {
        int (*version)(int*, int*);
        const char* (*error_string)(int);
        int (*create)(Program*, const char*, const char*, int, const char* const*,
                      const char* const*);
        int (*destroy)(Program*);
        int (*compile)(Program, int, const char* const*);
        int (*log_size)(Program, size_t*);
        int (*log)(Program, char*);
        int (*code_size)(Program, size_t*);  // PTX size (NVRTC) / code size (hiprtc)
        int (*code)(Program, char*);
        int (*cubin_size)(Program, size_t*);  // NVRTC only
        int (*cubin)(Program, char*);
        int (*num_archs)(int*);  // NVRTC only
        int (*archs)(int*);
    };
    void check(int r, const char* call) const;

    SharedLibrary lib_;
    Kind kind_;
    Api api_{};
    std::pair<int, int> version_;
};

}  // namespace gpukit
