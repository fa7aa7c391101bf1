// Host emulation of what kernels/linalg_small.cu uses (threadIdx, blockIdx, blockDim, static
// shared memory, __syncthreads), so that it compiles with g++ and runs on the CPU against NumPy.
// Each CUDA thread is a fiber (ucontext); a block barrier releases once every thread of the
// block has reached it, and threads run in a seeded random order between barriers, so a missing
// barrier shows up as wrong results. Shared memory is one static instance (blocks run one at a
// time), kept from block to block: a block that reads what it did not write reads the matrix
// before it. compat.cuh is built on its HIP path (compiler builtins that g++ has).
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define GK_HIP 1
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

struct gk_emu_dim3 {
    unsigned x, y, z;
};

namespace gkemu {

enum class St { Run, Bar, Done };

struct Thread {
    ucontext_t ctx;
    std::vector<char> stack;
    gk_emu_dim3 tid;
    St st = St::Run;
};

struct Block {
    gk_emu_dim3 bid, bdim, gdim;
    std::vector<Thread> threads;
    ucontext_t sched;
};

inline Block* blk = nullptr;
inline Thread* cur = nullptr;

[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "linalg_emulate: %s (block %u)\n", what, blk ? blk->bid.x : 0);
    std::abort();
}

template <typename Args>
struct Trampoline {
    static inline void (*kernel)(Args) = nullptr;
    static inline const Args* args = nullptr;
    static void entry() {
        kernel(*args);
        cur->st = St::Done;
        swapcontext(&cur->ctx, &blk->sched);
    }
};

// Runs kernel<<<grid, threads>>>(args) on the CPU.
template <typename Args>
void launch(void (*kernel)(Args), unsigned grid, unsigned threads, const Args& args,
            unsigned seed) {
    Trampoline<Args>::kernel = kernel;
    Trampoline<Args>::args = &args;
    std::mt19937 rng(seed);
    for (unsigned bx = 0; bx < grid; ++bx) {
        Block b;
        b.bid = {bx, 0, 0};
        b.bdim = {threads, 1, 1};
        b.gdim = {grid, 1, 1};
        b.threads.resize(threads);
        blk = &b;
        for (unsigned i = 0; i < threads; ++i) {
            Thread& t = b.threads[i];
            t.tid = {i, 0, 0};
            t.stack.resize(64 * 1024);
            getcontext(&t.ctx);
            t.ctx.uc_stack.ss_sp = t.stack.data();
            t.ctx.uc_stack.ss_size = t.stack.size();
            t.ctx.uc_link = nullptr;
            makecontext(&t.ctx, (void (*)())&Trampoline<Args>::entry, 0);
        }
        std::vector<unsigned> order(threads);
        for (;;) {
            for (unsigned i = 0; i < threads; ++i) order[i] = i;
            std::shuffle(order.begin(), order.end(), rng);
            for (unsigned i : order) {
                Thread& t = b.threads[i];
                if (t.st != St::Run) continue;
                cur = &t;
                swapcontext(&b.sched, &t.ctx);
            }
            unsigned bar = 0, done = 0;
            for (auto& t : b.threads) {
                bar += t.st == St::Bar;
                done += t.st == St::Done;
            }
            if (done == threads) break;
            if (bar && done) fail("some threads wait at a barrier that others have left");
            for (auto& t : b.threads) t.st = St::Run;  // every thread reached the barrier
        }
        blk = nullptr;
    }
}

}  // namespace gkemu

#define threadIdx (gkemu::cur->tid)
#define blockIdx (gkemu::blk->bid)
#define blockDim (gkemu::blk->bdim)
#define gridDim (gkemu::blk->gdim)

inline void __syncthreads() {
    gkemu::cur->st = gkemu::St::Bar;
    swapcontext(&gkemu::cur->ctx, &gkemu::blk->sched);
}
