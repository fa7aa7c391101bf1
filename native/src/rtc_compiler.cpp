#include "rtc_compiler.h"

#include <map>
#include <mutex>

#include "errors.h"

namespace gpukit {

RtcCompiler& RtcCompiler::open(const std::string& library, Kind kind) {
    static std::mutex mutex;
    static std::map<std::string, RtcCompiler*> opened;  // never freed, like every driver library
    std::lock_guard<std::mutex> lock(mutex);
    auto it = opened.find(library);
    if (it == opened.end()) it = opened.emplace(library, new RtcCompiler(library, kind)).first;
    return *it->second;
}

RtcCompiler::RtcCompiler(const std::string& library, Kind kind) : lib_(library), kind_(kind) {
    const std::string p = kind == Kind::Nvrtc ? "nvrtc" : "hiprtc";
    auto bind = [&](auto& fn, const char* suffix) { lib_.bind(fn, (p + suffix).c_str()); };
    bind(api_.version, "Version");
    bind(api_.error_string, "GetErrorString");
    bind(api_.create, "CreateProgram");
    bind(api_.destroy, "DestroyProgram");
    bind(api_.compile, "CompileProgram");
    bind(api_.log_size, "GetProgramLogSize");
    bind(api_.log, "GetProgramLog");
    if (kind == Kind::Nvrtc) {
        bind(api_.code_size, "GetPTXSize");
        bind(api_.code, "GetPTX");
        bind(api_.cubin_size, "GetCUBINSize");
        bind(api_.cubin, "GetCUBIN");
        bind(api_.num_archs, "GetNumSupportedArchs");
        bind(api_.archs, "GetSupportedArchs");
    } else {
        bind(api_.code_size, "GetCodeSize");
        bind(api_.code, "GetCode");
    }
    check(api_.version(&version_.first, &version_.second), "Version");
}

void RtcCompiler::check(int r, const char* call) const {
    if (r == 0) return;
    const std::string prefix = kind_ == Kind::Nvrtc ? "nvrtc" : "hiprtc";
    throw CompileFailure(prefix + call + " failed: " + api_.error_string(r), "");
}

std::vector<int> RtcCompiler::supported_archs() const {
    if (kind_ != Kind::Nvrtc) return {};
    int n = 0;
    check(api_.num_archs(&n), "GetNumSupportedArchs");
    std::vector<int> archs(n);
    check(api_.archs(archs.data()), "GetSupportedArchs");
    return archs;
}

std::string RtcCompiler::compile(const RtcSource& src) const {
    std::vector<const char*> header_texts, header_names, options;
    for (const auto& [name, text] : src.headers) {
        header_names.push_back(name.c_str());
        header_texts.push_back(text.c_str());
    }
    bool cubin = false;
    for (const auto& o : src.options) {
        options.push_back(o.c_str());
        if (o.rfind("--gpu-architecture=sm_", 0) == 0 || o.rfind("-arch=sm_", 0) == 0) cubin = true;
    }
    Program prog = nullptr;
    check(api_.create(&prog, src.source.c_str(), src.name.c_str(),
                      static_cast<int>(header_texts.size()), header_texts.data(),
                      header_names.data()),
          "CreateProgram");
    struct Destroy {
        const Api& api;
        Program* prog;
        ~Destroy() { api.destroy(prog); }
    } destroy{api_, &prog};

    const int result = api_.compile(prog, static_cast<int>(options.size()), options.data());
    size_t log_size = 0;
    api_.log_size(prog, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) api_.log(prog, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    if (result != 0) {
        const std::string tool = kind_ == Kind::Nvrtc ? "NVRTC" : "hiprtc";
        throw CompileFailure(
            tool + " could not compile " + src.name + ": " + api_.error_string(result), log);
    }
    size_t size = 0;
    auto size_fn = cubin ? api_.cubin_size : api_.code_size;
    auto code_fn = cubin ? api_.cubin : api_.code;
    check(size_fn(prog, &size), cubin ? "GetCUBINSize" : "GetCodeSize");
    std::string image(size, '\0');
    check(code_fn(prog, image.data()), cubin ? "GetCUBIN" : "GetCode");
    return image;
}

}  // namespace gpukit
