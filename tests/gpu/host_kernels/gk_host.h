// Runs a kernel of kernels/ on the CPU: compiled by the host C++ compiler (force-included before
// the kernel's source, with -DGK_HIP for the portable code paths), each CUDA thread a fiber
// (ucontext). A block's threads run in a seeded random order until each reaches __syncthreads or
// ends; the barrier opens once every live thread of the block is at it (a thread that ends first
// while others wait is a divergent barrier: reported). Blocks run one after the other, so
// __shared__ variables are function statics, filled with NaN bytes before every block (a read of
// shared memory nobody wrote shows). Shared-memory atomics need no care: fibers switch only at
// barriers. The kernel's expf is gkh_expf (exported, so that a test's reference uses the very
// same exponential).
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static __attribute__((section("gkh_shared")))

struct gkh_dim3 {
    unsigned x = 1, y = 1, z = 1;
};

namespace gkh {

struct Thread {
    ucontext_t ctx;
    std::vector<char> stack;
    gkh_dim3 tid;
    bool waiting = false, done = false;
};

inline std::vector<Thread>* threads = nullptr;
inline Thread* current = nullptr;
inline ucontext_t scheduler;
inline gkh_dim3 block_idx, block_dim, grid_dim;
inline const char* error = nullptr;

inline void barrier() {
    current->waiting = true;
    swapcontext(&current->ctx, &scheduler);
}

}  // namespace gkh

#define threadIdx (gkh::current->tid)
#define blockIdx (gkh::block_idx)
#define blockDim (gkh::block_dim)
#define gridDim (gkh::grid_dim)
#define __syncthreads() gkh::barrier()

inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    const unsigned long long old = *p;
    *p = old + v;
    return old;
}
inline unsigned atomicAdd(unsigned* p, unsigned v) {
    const unsigned old = *p;
    *p = old + v;
    return old;
}
template <typename T>
T __shfl_xor(T, int, int) {
    std::abort();  // no warp collectives in the kernels run here
}
template <typename T>
T __shfl(T, int, int) {
    std::abort();
}
template <typename T>
T __shfl_up(T, int, int) {
    std::abort();
}
inline unsigned long long __ballot(int) { std::abort(); }
inline void __builtin_amdgcn_wave_barrier() { std::abort(); }
struct uint4 {
    unsigned x, y, z, w;
};

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

extern "C" float gkh_expf(float x) { return (float)std::exp((double)x); }
#define expf gkh_expf

// Keeps the section (and so its bounds) even for a kernel without shared memory.
static char gkh_shared_anchor __attribute__((section("gkh_shared"), used));
extern "C" char __start_gkh_shared[];
extern "C" char __stop_gkh_shared[];

namespace gkh {

inline void trampoline(unsigned lo, unsigned hi) {
    auto* body = reinterpret_cast<void (*)()>((uintptr_t)lo | ((uintptr_t)hi << 32));
    body();
    current->done = true;
    swapcontext(&current->ctx, &scheduler);
}

// Runs body() as every thread of a grid; returns an error message or null.
template <typename F>
const char* launch(gkh_dim3 grid, gkh_dim3 block, unsigned seed, F kernel) {
    static F* saved;
    saved = &kernel;
    static void (*entry)() = [] { (*saved)(); };
    std::mt19937 order(seed);
    grid_dim = grid;
    block_dim = block;
    const unsigned n = block.x * block.y * block.z;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                block_idx = {bx, by, bz};
                std::memset(__start_gkh_shared, 0xff, __stop_gkh_shared - __start_gkh_shared);
                std::vector<Thread> all(n);
                threads = &all;
                for (unsigned i = 0; i < n; ++i) {
                    Thread& t = all[i];
                    t.tid = {i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
                    t.stack.resize(1 << 16);
                    getcontext(&t.ctx);
                    t.ctx.uc_stack.ss_sp = t.stack.data();
                    t.ctx.uc_stack.ss_size = t.stack.size();
                    t.ctx.uc_link = nullptr;
                    const uintptr_t f = reinterpret_cast<uintptr_t>(entry);
                    makecontext(&t.ctx, (void (*)())trampoline, 2, (unsigned)f,
                                (unsigned)(f >> 32));
                }
                for (;;) {
                    std::vector<unsigned> live;
                    for (unsigned i = 0; i < n; ++i)
                        if (!all[i].done) live.push_back(i);
                    if (live.empty()) break;
                    std::shuffle(live.begin(), live.end(), order);
                    for (unsigned i : live) {
                        current = &all[i];
                        current->waiting = false;
                        swapcontext(&scheduler, &current->ctx);
                    }
                    bool any_done = false, any_waiting = false;
                    for (unsigned i : live) {
                        any_done |= all[i].done;
                        any_waiting |= all[i].waiting;
                    }
                    if (any_done && any_waiting)
                        return "a thread ended while others wait at a barrier";
                }
            }
    return nullptr;
}

}  // namespace gkh
