#include "library_probe.h"

#include <dlfcn.h>
#include <link.h>

namespace gpukit {

LibraryProbe probe_library(const std::string& name) {
    // RTLD_NOLOAD is not used: the point is to learn whether the loader can find it at all.
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* err = dlerror();
        return {false, err != nullptr ? err : "dlopen failed"};
    }
    std::string path = name;
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
        map->l_name[0] != '\0') {
        path = map->l_name;
    }
    dlclose(handle);
    return {true, path};
}

}  // namespace gpukit
