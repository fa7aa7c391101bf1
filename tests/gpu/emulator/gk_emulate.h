// Host emulation of CUDA kernels for tests: a kernel of kernels/ compiled by g++ (this header
// force-included first; -DGK_EMULATE for the tensor-core and FFT kernels, which take their warp
// helpers from here, -DGK_HIP for kernels written against compat.cuh's portable path) runs on
// the CPU with NumPy arrays as device memory. Each CUDA thread is a fiber (ucontext); threads
// run in a seeded random order; a warp-collective operation (ldmatrix, mma, shuffle,
// __syncwarp) runs once all 32 lanes have reached it, and a block barrier once every thread of
// the block has (a thread that ends while others wait at a barrier is reported). cp.async copies
// land only when their thread waits for them; dynamic and static shared memory are filled with
// NaN bytes before every block: a missing wait or barrier shows up as garbage in the results.
// Blocks run one after the other; fibers switch only at barriers and warp operations, so
// atomics need no care. A cooperative launch (run_grid) runs every block's threads together, in
// a random order of blocks and threads, so that gk_emu_grid_sync() (a grid-wide barrier: every
// thread of every block) can wait for all; its kernels may use dynamic shared memory only
// (static shared memory is one instance for all blocks). The semantics of ldmatrix and mma.m16n8k16 follow the PTX ISA's fragment
// layouts. Errors (bad addresses, divergent barriers, deadlocks) end the launch and come back as
// a message from launch(), never an abort.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#define __device__
#define __forceinline__ inline
#define __global__
// One instance for all threads (blocks run one at a time), in a section of its own so that it is
// poisoned before every block.
#define __shared__ static __attribute__((section("gk_emu_shared")))
#define __launch_bounds__(...)
#define __cluster_dims__(...)  // a cluster runs as a cooperative launch (run_grid)
#define GK_DEV inline
#define GK_HOST_EMULATION 1  // kernels/staging.cuh: gk_shared_dynamic comes from here

struct gk_emu_dim3 {
    unsigned x = 1, y = 1, z = 1;
};
struct uint4 {
    unsigned x, y, z, w;
};

// Keeps the section (and so its bounds) even for a kernel without static shared memory.
static char gk_emu_shared_anchor __attribute__((section("gk_emu_shared"), used));
extern "C" char __start_gk_emu_shared[];
extern "C" char __stop_gk_emu_shared[];

namespace gkemu {

enum class St { Run, Warp, Bar, Grid, Done };
enum class Op { Shfl, ShflAny, Ballot, Ldsm, LdsmT, Mma, SyncWarp };
enum class ShflMode { Xor, Idx, Up };

struct Copy {
    unsigned dst;
    const void* src;
    bool full;
};

struct Thread {
    ucontext_t ctx;
    std::unique_ptr<char[]> stack;
    gk_emu_dim3 tid;
    St st = St::Run;
    Op op;
    unsigned in_u[6];
    float in_f[4];
    int in_i;
    ShflMode mode;
    uint64_t in_w, out_w;  // ShflAny: a value of up to 8 bytes; Ballot: the predicate
    unsigned out_u[4];
    float out_f[4];
    std::vector<Copy> pending;
    std::deque<std::vector<Copy>> groups;
    std::vector<Copy> landed;
};

struct Block {
    gk_emu_dim3 bid, bdim, gdim;
    std::vector<unsigned char> smem;
    std::vector<Thread> threads;
    ucontext_t sched;
};

inline Block* blk = nullptr;
inline Thread* cur = nullptr;  // the running fiber; null in the scheduler
inline int mma_kind = 0;       // 1 f16, 2 bf16
inline bool grid_mode = false;  // a cooperative launch (run_grid) is running
// run_grid's blocks (x fastest, then y, z): a cluster's distributed shared memory.
inline std::vector<std::unique_ptr<Block>>* grid_blocks = nullptr;
inline char error[256];
struct Failed {};  // thrown on the scheduler's own stack only

// Ends the launch with a message: a fiber hands control back to the scheduler for good.
[[noreturn]] inline void fail(const char* what) {
    std::snprintf(error, sizeof error, "%s (block %u,%u,%u)", what, blk ? blk->bid.x : 0,
                  blk ? blk->bid.y : 0, blk ? blk->bid.z : 0);
    if (cur == nullptr) throw Failed{};
    Thread* me = cur;
    swapcontext(&me->ctx, &blk->sched);
    std::abort();  // never resumed
}

inline void yield(St st) {
    cur->st = st;
    Thread* me = cur;
    swapcontext(&me->ctx, &blk->sched);
}

inline float half_to_float(uint16_t h) {
    _Float16 v;
    std::memcpy(&v, &h, 2);
    return (float)v;
}
inline uint16_t float_to_half(float f) {
    _Float16 v = (_Float16)f;
    uint16_t h;
    std::memcpy(&h, &v, 2);
    return h;
}
inline float bf16_to_float(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline uint16_t float_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float elem_to_float(uint16_t h) {
    return mma_kind == 2 ? bf16_to_float(h) : half_to_float(h);
}
inline uint16_t float_to_elem(float f) {
    return mma_kind == 2 ? float_to_bf16(f) : float_to_half(f);
}

inline uint16_t smem16(unsigned addr) {
    if (addr + 2 > blk->smem.size() || (addr & 1)) fail("shared access out of range");
    uint16_t v;
    std::memcpy(&v, &blk->smem[addr], 2);
    return v;
}

// A thread's completed copies become visible to the other threads at its next barrier (block
// or warp), as the memory model promises no sooner.
inline void finish_copies(Thread& t, size_t keep) {
    while (t.groups.size() > keep) {
        for (const Copy& c : t.groups.front()) t.landed.push_back(c);
        t.groups.pop_front();
    }
}

inline void publish(Thread& t) {
    for (const Copy& c : t.landed) {
        if (c.dst + 16 > blk->smem.size()) fail("cp.async past shared memory");
        if (c.full)
            std::memcpy(&blk->smem[c.dst], c.src, 16);
        else
            std::memset(&blk->smem[c.dst], 0, 16);
    }
    t.landed.clear();
}

// Runs the collective `op` of warp w (every lane has arrived).
inline void run_warp_op(int w) {
    Thread* lanes = &blk->threads[w * 32];
    const Op op = lanes[0].op;
    for (int l = 1; l < 32; ++l)
        if (lanes[l].op != op) fail("lanes of a warp reached different collective operations");
    for (int l = 0; l < 32; ++l) {
        Thread& t = lanes[l];
        const int g = l / 4, q = l % 4;
        switch (op) {
            case Op::Shfl: {
                const int src = l ^ t.in_i;
                t.out_f[0] = lanes[src].in_f[0];
                break;
            }
            case Op::ShflAny: {  // width 32: lanes of another warp are never read
                int src = l;
                if (t.mode == ShflMode::Xor) src = l ^ t.in_i;
                if (t.mode == ShflMode::Idx) src = t.in_i & 31;
                if (t.mode == ShflMode::Up && l >= t.in_i) src = l - t.in_i;
                if (src < 0 || src > 31) fail("shuffle lane out of range");
                t.out_w = lanes[src].in_w;
                break;
            }
            case Op::Ballot: {
                uint64_t bits = 0;
                for (int j = 0; j < 32; ++j) bits |= (uint64_t)(lanes[j].in_w != 0) << j;
                t.out_w = bits << (t.tid.x & 32);  // a 64-lane wavefront's view of this half
                break;
            }
            case Op::Ldsm:
            case Op::LdsmT:
                for (int j = 0; j < 4; ++j) {
                    uint16_t lo, hi;
                    if (lanes[8 * j + (l % 8)].in_u[0] & 15)
                        fail("ldmatrix row not 16-byte aligned");
                    if (op == Op::Ldsm) {
                        const unsigned row = lanes[8 * j + g].in_u[0];
                        lo = smem16(row + 4 * q);
                        hi = smem16(row + 4 * q + 2);
                    } else {
                        lo = smem16(lanes[8 * j + 2 * q].in_u[0] + 2 * g);
                        hi = smem16(lanes[8 * j + 2 * q + 1].in_u[0] + 2 * g);
                    }
                    t.out_u[j] = (unsigned)lo | ((unsigned)hi << 16);
                }
                break;
            case Op::Mma: {
                auto lo = [](unsigned v) { return elem_to_float((uint16_t)(v & 0xffff)); };
                auto hi = [](unsigned v) { return elem_to_float((uint16_t)(v >> 16)); };
                // A(16x16) row g / g + 8, columns 2q, 2q+1 / + 8; B(16x8) rows 2q, 2q+1 / + 8,
                // column g; D rows g / g + 8, columns 2q, 2q+1.
                auto A = [&](int r, int c) {
                    const Thread& s = lanes[(r % 8) * 4 + (c % 8) / 2];
                    const unsigned v = s.in_u[(r >= 8 ? 1 : 0) + (c >= 8 ? 2 : 0)];
                    return c % 2 ? hi(v) : lo(v);
                };
                auto B = [&](int k, int n) {
                    const Thread& s = lanes[n * 4 + (k % 8) / 2];
                    const unsigned v = s.in_u[4 + (k >= 8 ? 1 : 0)];
                    return k % 2 ? hi(v) : lo(v);
                };
                for (int e = 0; e < 4; ++e) {
                    const int r = g + (e >= 2 ? 8 : 0), c = 2 * q + (e % 2);
                    float acc = t.in_f[e];
                    for (int k = 0; k < 16; ++k) acc += A(r, k) * B(k, c);
                    t.out_f[e] = acc;
                }
                break;
            }
            case Op::SyncWarp:
                publish(t);
                break;
        }
    }
    for (int l = 0; l < 32; ++l) lanes[l].st = St::Run;
}

inline void (*body)(void*) = nullptr;
inline void* body_ctx = nullptr;
inline void entry() {
    body(body_ctx);
    cur->st = St::Done;
    swapcontext(&cur->ctx, &blk->sched);
}

inline void start_threads(Block& b, int n) {
    const size_t stack = 256 * 1024;
    for (int i = 0; i < n; ++i) {
        Thread& t = b.threads[i];
        const gk_emu_dim3 d = b.bdim;
        t.tid = {(unsigned)i % d.x, (unsigned)i / d.x % d.y, (unsigned)i / (d.x * d.y)};
        t.stack.reset(new char[stack]);
        getcontext(&t.ctx);
        t.ctx.uc_stack.ss_sp = t.stack.get();
        t.ctx.uc_stack.ss_size = stack;
        t.ctx.uc_link = nullptr;
        makecontext(&t.ctx, &entry, 0);
    }
}

// One pass over block b's runnable threads in a random order, each run until it stops; a warp
// operation runs once all 32 lanes have reached it. Whether any thread ran (false after an
// error too: error[0] is set).
inline bool step_threads(Block& b, int n, std::vector<int>& order, std::mt19937& rng) {
    bool progress = false;
    for (int i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order) {
        Thread& t = b.threads[i];
        if (t.st != St::Run) continue;
        cur = &t;
        swapcontext(&b.sched, &t.ctx);
        cur = nullptr;
        if (error[0]) return false;
        progress = true;
        if (t.st != St::Warp) continue;
        if (n % 32) fail("warp operation in a block that is not whole warps");
        const int w = i / 32;
        bool all = true;
        for (int l = 0; l < 32; ++l) all &= b.threads[w * 32 + l].st == St::Warp;
        if (all) run_warp_op(w);
    }
    return progress;
}

// Every thread of b past the barrier it waits at, its writes visible.
inline void release(Block& b) {
    for (auto& t : b.threads) {
        publish(t);
        t.st = St::Run;
    }
}

// Runs block b to its end.
inline void run_block(Block& b, int n, std::mt19937& rng) {
    std::vector<int> order(n);
    for (;;) {
        bool progress = step_threads(b, n, order, rng);
        if (error[0]) return;
        int bar = 0, done = 0;
        for (auto& t : b.threads) {
            bar += t.st == St::Bar;
            done += t.st == St::Done;
        }
        if (done == n) return;
        if (bar > 0 && done > 0 && bar + done == n)
            fail("a thread ended while others wait at a barrier");
        if (bar == n) {
            release(b);
            progress = true;
        }
        if (!progress) fail("deadlock: threads wait on a barrier or warp op forever");
    }
}

// A cooperative launch: every block's threads started at once and run in a random order of
// blocks and threads; a block barrier releases its block, the grid barrier (St::Grid) every
// thread of the grid once all have reached it. Null, or what went wrong.
template <typename F>
const char* run_grid(gk_emu_dim3 grid, gk_emu_dim3 block, size_t shared, unsigned seed, F kernel) {
    mma_kind = 0;
    grid_mode = true;
    body = [](void* k) { (*static_cast<F*>(k))(); };
    body_ctx = &kernel;
    error[0] = 0;
    std::mt19937 rng(seed);
    const int n = (int)(block.x * block.y * block.z);
    std::vector<std::unique_ptr<Block>> blocks;
    grid_blocks = &blocks;
    try {
        if (n <= 0) fail("empty block");
        std::memset(__start_gk_emu_shared, 0xff, __stop_gk_emu_shared - __start_gk_emu_shared);
        for (unsigned bz = 0; bz < grid.z; ++bz)
            for (unsigned by = 0; by < grid.y; ++by)
                for (unsigned bx = 0; bx < grid.x; ++bx) {
                    auto b = std::make_unique<Block>();
                    b->bid = {bx, by, bz};
                    b->bdim = block;
                    b->gdim = grid;
                    b->smem.assign(shared + 16, 0xff);
                    b->threads.resize(n);
                    start_threads(*b, n);
                    blocks.push_back(std::move(b));
                }
        const size_t total = blocks.size() * (size_t)n;
        std::vector<int> order(n), border(blocks.size());
        for (;;) {
            bool progress = false;
            for (size_t i = 0; i < border.size(); ++i) border[i] = (int)i;
            std::shuffle(border.begin(), border.end(), rng);
            size_t at_grid = 0, done = 0;
            for (int bi : border) {
                Block& b = *blocks[bi];
                blk = &b;
                progress |= step_threads(b, n, order, rng);
                if (error[0]) {
                    blk = nullptr;
                    return error;
                }
                int bar = 0, gr = 0, dn = 0;
                for (auto& t : b.threads) {
                    bar += t.st == St::Bar;
                    gr += t.st == St::Grid;
                    dn += t.st == St::Done;
                }
                if (bar > 0 && bar + dn + gr == n && (dn > 0 || gr > 0))
                    fail("threads of a block wait at different barriers, or one ended");
                if (bar == n) {
                    release(b);
                    progress = true;
                }
                at_grid += gr;
                done += dn;
                blk = nullptr;
            }
            if (done == total) return nullptr;
            if (at_grid > 0 && at_grid + done == total) {
                if (done > 0) fail("a thread ended while others wait at the grid barrier");
                for (auto& b : blocks) release(*b);
                progress = true;
            }
            if (!progress) fail("deadlock: threads wait on a barrier or warp op forever");
        }
    } catch (Failed&) {
        blk = nullptr;
        return error;
    }
}

// Runs kernel() as every thread of grid x block, shared bytes of dynamic shared memory, threads
// in the order `seed` draws; mma_type 1 = f16, 2 = bf16 (the tensor-core kernels). Returns null,
// or what went wrong.
template <typename F>
const char* run(gk_emu_dim3 grid, gk_emu_dim3 block, size_t shared, unsigned seed, int mma_type,
                F kernel) {
    mma_kind = mma_type;
    grid_mode = false;
    body = [](void* k) { (*static_cast<F*>(k))(); };
    body_ctx = &kernel;
    error[0] = 0;
    std::mt19937 rng(seed);
    const int n = (int)(block.x * block.y * block.z);
    try {
        if (n <= 0) fail("empty block");
        for (unsigned bz = 0; bz < grid.z; ++bz)
            for (unsigned by = 0; by < grid.y; ++by)
                for (unsigned bx = 0; bx < grid.x; ++bx) {
                    Block b;
                    b.bid = {bx, by, bz};
                    b.bdim = block;
                    b.gdim = grid;
                    b.smem.assign(shared + 16, 0xff);
                    std::memset(__start_gk_emu_shared, 0xff,
                                __stop_gk_emu_shared - __start_gk_emu_shared);
                    b.threads.resize(n);
                    blk = &b;
                    start_threads(b, n);
                    run_block(b, n, rng);
                    blk = nullptr;
                    if (error[0]) return error;
                }
    } catch (Failed&) {
        blk = nullptr;
        return error;
    }
    return nullptr;
}

// kernel<<<grid, block, shared>>>(args), cooperatively (every block resident, run_grid).
template <typename Args>
const char* launch_cooperative(void (*kernel)(Args), gk_emu_dim3 grid, gk_emu_dim3 block,
                               size_t shared, const Args& args, unsigned seed) {
    return run_grid(grid, block, shared, seed, [&] { kernel(args); });
}

// kernel<<<grid, block, shared>>>(args).
template <typename Args>
const char* launch(void (*kernel)(Args), gk_emu_dim3 grid, gk_emu_dim3 block, size_t shared,
                   const Args& args, int mma_type, unsigned seed) {
    return run(grid, block, shared, seed, mma_type, [&] { kernel(args); });
}

}  // namespace gkemu

#define threadIdx (gkemu::cur->tid)
#define blockIdx (gkemu::blk->bid)
#define blockDim (gkemu::blk->bdim)
#define gridDim (gkemu::blk->gdim)

inline unsigned char* gk_dynamic_smem() { return gkemu::blk->smem.data(); }
inline unsigned char* gk_shared_dynamic() { return gkemu::blk->smem.data(); }
inline unsigned gk_smem_addr(const void* p) {
    return (unsigned)((const unsigned char*)p - gkemu::blk->smem.data());
}
inline void gk_cp16(unsigned dst, const void* src, bool full) {
    if ((dst & 15) || (full && ((uintptr_t)src & 15)))
        gkemu::fail("cp.async address not 16-byte aligned");
    gkemu::cur->pending.push_back({dst, src, full});
}
inline void gk_cp_commit() {
    gkemu::cur->groups.push_back(std::move(gkemu::cur->pending));
    gkemu::cur->pending.clear();
}
template <int N>
inline void gk_cp_wait() {
    gkemu::finish_copies(*gkemu::cur, N);
}
inline void gk_sync_block() { gkemu::yield(gkemu::St::Bar); }
// The grid-wide barrier of a cooperative launch (gkemu::run_grid): every thread of every block.
inline void gk_emu_grid_sync() {
    if (!gkemu::grid_mode) gkemu::fail("grid barrier outside a cooperative launch");
    gkemu::yield(gkemu::St::Grid);
}
// The dynamic shared memory of block `rank` of the running block's cluster (a launch of clusters
// spanning grid.x, run as a cooperative launch: gk_emu_grid_sync is the cluster barrier).
inline unsigned char* gk_emu_cluster_smem(unsigned rank) {
    if (!gkemu::grid_mode || gkemu::grid_blocks == nullptr)
        gkemu::fail("distributed shared memory outside a cluster launch");
    const auto& b = *gkemu::blk;
    if (rank >= b.gdim.x) gkemu::fail("cluster rank out of range");
    const size_t at = ((size_t)b.bid.z * b.gdim.y + b.bid.y) * b.gdim.x + rank;
    return (*gkemu::grid_blocks)[at]->smem.data();
}
inline void gk_sync_warp() {
    gkemu::cur->op = gkemu::Op::SyncWarp;
    gkemu::yield(gkemu::St::Warp);
}
inline void gk_ldsm_x4(unsigned addr, unsigned (&r)[4]) {
    gkemu::cur->op = gkemu::Op::Ldsm;
    gkemu::cur->in_u[0] = addr;
    gkemu::yield(gkemu::St::Warp);
    for (int j = 0; j < 4; ++j) r[j] = gkemu::cur->out_u[j];
}
inline void gk_ldsm_x4_t(unsigned addr, unsigned (&r)[4]) {
    gkemu::cur->op = gkemu::Op::LdsmT;
    gkemu::cur->in_u[0] = addr;
    gkemu::yield(gkemu::St::Warp);
    for (int j = 0; j < 4; ++j) r[j] = gkemu::cur->out_u[j];
}
inline void gk_mma16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    gkemu::Thread* t = gkemu::cur;
    t->op = gkemu::Op::Mma;
    for (int i = 0; i < 4; ++i) t->in_u[i] = a[i], t->in_f[i] = c[i];
    t->in_u[4] = b0;
    t->in_u[5] = b1;
    gkemu::yield(gkemu::St::Warp);
    for (int i = 0; i < 4; ++i) c[i] = gkemu::cur->out_f[i];
}
inline unsigned gk_pack2(float lo, float hi) {
    return (unsigned)gkemu::float_to_elem(lo) | ((unsigned)gkemu::float_to_elem(hi) << 16);
}
inline float gk_elem_to_float(uint16_t h) { return gkemu::elem_to_float(h); }
inline float gk_ex2(float x) { return std::exp2(x); }
inline float gk_shfl_xor_f(float v, int mask) {
    gkemu::cur->op = gkemu::Op::Shfl;
    gkemu::cur->in_f[0] = v;
    gkemu::cur->in_i = mask;
    gkemu::yield(gkemu::St::Warp);
    return gkemu::cur->out_f[0];
}
inline float gk_neg_inf() { return -INFINITY; }
using std::fmaxf;

// What kernels built on compat.cuh's portable path (-DGK_HIP) use.
inline void __syncthreads() { gkemu::yield(gkemu::St::Bar); }
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
inline T atomicCAS(T* p, T expected, T desired) {
    const T old = *p;
    if (old == expected) *p = desired;
    return old;
}
// AMD wavefront collectives of width 32 (warp.cuh's portable helpers): a 32-thread warp here is
// one half of a wavefront.
template <typename T>
T gk_emu_shfl(T v, gkemu::ShflMode mode, int arg) {
    static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
    gkemu::Thread* t = gkemu::cur;
    t->op = gkemu::Op::ShflAny;
    t->mode = mode;
    t->in_i = arg;
    t->in_w = 0;
    std::memcpy(&t->in_w, &v, sizeof(T));
    gkemu::yield(gkemu::St::Warp);
    T r;
    std::memcpy(&r, &t->out_w, sizeof(T));
    return r;
}
template <typename T>
T __shfl_xor(T v, int mask, int) {
    return gk_emu_shfl(v, gkemu::ShflMode::Xor, mask);
}
template <typename T>
T __shfl(T v, int src, int) {
    return gk_emu_shfl(v, gkemu::ShflMode::Idx, src);
}
template <typename T>
T __shfl_up(T v, int delta, int) {
    return gk_emu_shfl(v, gkemu::ShflMode::Up, delta);
}
inline unsigned long long __ballot(int p) {
    gkemu::cur->op = gkemu::Op::Ballot;
    gkemu::cur->in_w = p != 0;
    gkemu::yield(gkemu::St::Warp);
    return gkemu::cur->out_w;
}
inline void __builtin_amdgcn_wave_barrier() { gk_sync_warp(); }
inline void __builtin_amdgcn_s_sleep(int) {}
// Blocks run one after the other and fibers switch only at collectives: memory is always in order.
inline void __threadfence() {}
inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
// The kernels' expf, exported so that a test's reference uses the very same exponential.
extern "C" float gk_emu_expf(float x) { return (float)std::exp((double)x); }
#define expf gk_emu_expf

// Exports the layout of argument struct T (fields listed by the X-macro FIELDS of args.cuh):
// gk_emu_args_size() and gk_emu_field_offset(name) (-1: no such field), for the test to check
// against the block gpukit packs.
#define GK_EMU_OFFSET(T, NAME) \
    if (std::strcmp(field, #NAME) == 0) return (long)offsetof(gk_emu_layout_t, NAME);
#define GK_EMU_OFFSET_ARRAY(T, NAME, N) GK_EMU_OFFSET(T, NAME)
#define GK_EMU_OFFSET_MATRIX(T, NAME, R, C) GK_EMU_OFFSET(T, NAME)
#define GK_EMU_EXPORT_LAYOUT(T, FIELDS)                                  \
    typedef T gk_emu_layout_t;                                           \
    extern "C" unsigned gk_emu_args_size() { return sizeof(T); }         \
    extern "C" long gk_emu_field_offset(const char* field) {             \
        FIELDS(GK_EMU_OFFSET, GK_EMU_OFFSET_ARRAY, GK_EMU_OFFSET_MATRIX) \
        return -1;                                                       \
    }
