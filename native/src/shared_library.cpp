#include "shared_library.h"

#include <dlfcn.h>
#include <link.h>

#include "errors.h"

namespace gpukit {
namespace {

std::string loader_error() {
    const char* err = dlerror();
    return err != nullptr ? err : "dlopen failed";
}

std::string resolved_path(void* handle, const std::string& fallback) {
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]) {
        return map->l_name;
    }
    return fallback;
}

}  // namespace

SharedLibrary::SharedLibrary(const std::string& name) {
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw LibraryError("cannot load " + name + ": " + loader_error());
    path_ = resolved_path(handle_, name);
}

void* SharedLibrary::symbol(const char* name) const { return dlsym(handle_, name); }

void* SharedLibrary::require(const char* name) const {
    void* p = symbol(name);
    if (p == nullptr) throw LibraryError(path_ + " lacks the symbol " + name);
    return p;
}

LibraryProbe probe_library(const std::string& name) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return {false, loader_error()};
    std::string path = resolved_path(handle, name);
    dlclose(handle);
    return {true, path};
}

}  // namespace gpukit
