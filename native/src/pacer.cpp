#include "pacer.h"

#include <Python.h>

#include <atomic>

namespace gpukit {
namespace {
std::atomic<const gk_pacer_table*> g_pacer{nullptr};
}

void install_pacer(const gk_pacer_table* table) { g_pacer.store(table, std::memory_order_release); }

void pace_before_launch(uint64_t stream) {
    const gk_pacer_table* p = g_pacer.load(std::memory_order_acquire);
    if (p == nullptr || p->before_launch(stream) == 0) return;
    if (PyGILState_Check() != 0) {
        PyThreadState* saved = PyEval_SaveThread();
        p->wait_launch(stream);
        PyEval_RestoreThread(saved);
    } else {
        p->wait_launch(stream);
    }
}

int32_t record_after_launch(uint64_t stream) {
    const gk_pacer_table* p = g_pacer.load(std::memory_order_acquire);
    return p == nullptr ? 0 : p->after_launch(stream);
}
}  // namespace gpukit
