#pragma once
#include <string>

namespace gpukit {

// A dlopen'ed library that stays loaded for the life of the process (drivers must not be
// unloaded while contexts or modules from them exist).
class SharedLibrary {
   public:
    explicit SharedLibrary(const std::string& name);  // throws LibraryError
    void* symbol(const char* name) const;             // nullptr when absent
    void* require(const char* name) const;            // throws LibraryError when absent
    const std::string& path() const { return path_; }

    template <typename Fn>
    void bind(Fn*& fn, const char* name) const {
        fn = reinterpret_cast<Fn*>(require(name));
    }

   private:
    void* handle_;
    std::string path_;
};

struct LibraryProbe {
    bool found;
    std::string detail;  // the resolved path when found, the loader's message otherwise
};

// Asks the dynamic loader for a library by name or path, without keeping it loaded.
LibraryProbe probe_library(const std::string& name);

}  // namespace gpukit
