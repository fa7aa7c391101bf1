// Host emulation of the warp-level helpers of kernels/mma16.cuh, so that the tensor-core kernels
// compile with a host C++ compiler (-DGK_EMULATE) and run on the CPU against a reference. Each
// CUDA thread is a fiber (ucontext); a warp-collective operation (ldmatrix, mma, shuffle,
// __syncwarp) runs once all 32 lanes have reached it, and a block barrier once every live thread
// of the block has. Threads run in a seeded random order, and cp.async copies land only when
// their thread waits for them, into shared memory first filled with NaN bytes: a missing wait or
// barrier shows up as garbage in the results. The semantics of ldmatrix and mma.m16n8k16 follow
// the PTX ISA's fragment layouts.
#pragma once
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

#define __device__
#define __forceinline__ inline
#define __global__
#define __shared__ static  // one instance for all threads (blocks run one at a time)
#define __launch_bounds__(...)
#define GK_DEV inline

struct gk_emu_dim3 {
    unsigned x, y, z;
};
struct uint4 {
    unsigned x, y, z, w;
};

namespace gkemu {

enum class St { Run, Warp, Bar, Done };
enum class Op { Shfl, Ldsm, LdsmT, Mma, SyncWarp };

struct Copy {
    unsigned dst;
    const void* src;
    bool full;
};

struct Thread {
    ucontext_t ctx;
    std::vector<char> stack;
    gk_emu_dim3 tid;
    St st = St::Run;
    Op op;
    unsigned in_u[6];
    float in_f[4];
    int in_i;
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
inline Thread* cur = nullptr;
inline int mma_kind = 0;  // 1 f16, 2 bf16

[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "gk_emulate: %s (block %u,%u,%u)\n", what, blk ? blk->bid.x : 0,
                 blk ? blk->bid.y : 0, blk ? blk->bid.z : 0);
    std::abort();
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

// Runs kernel<<<grid, block, smem>>>(args) on the CPU; mma_type 1 = f16, 2 = bf16.
template <typename Args>
void launch(void (*kernel)(Args), gk_emu_dim3 grid, gk_emu_dim3 block, size_t smem,
            const Args& args, int mma_type, unsigned seed) {
    mma_kind = mma_type;
    Trampoline<Args>::kernel = kernel;
    Trampoline<Args>::args = &args;
    std::mt19937 rng(seed);
    const int n = (int)(block.x * block.y * block.z);
    if (n % 32) fail("block size must be a multiple of 32");
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                Block b;
                b.bid = {bx, by, bz};
                b.bdim = block;
                b.gdim = grid;
                b.smem.assign(smem + 16, 0xff);
                b.threads.resize(n);
                blk = &b;
                for (int i = 0; i < n; ++i) {
                    Thread& t = b.threads[i];
                    t.tid = {(unsigned)i % block.x, (unsigned)i / block.x % block.y,
                             (unsigned)i / (block.x * block.y)};
                    t.stack.resize(256 * 1024);
                    getcontext(&t.ctx);
                    t.ctx.uc_stack.ss_sp = t.stack.data();
                    t.ctx.uc_stack.ss_size = t.stack.size();
                    t.ctx.uc_link = nullptr;
                    makecontext(&t.ctx, (void (*)())&Trampoline<Args>::entry, 0);
                }
                std::vector<int> order(n);
                for (;;) {
                    bool progress = false, live = false;
                    for (int i = 0; i < n; ++i) order[i] = i;
                    std::shuffle(order.begin(), order.end(), rng);
                    for (int i : order) {
                        Thread& t = b.threads[i];
                        if (t.st != St::Run) continue;
                        cur = &t;
                        swapcontext(&b.sched, &t.ctx);
                        progress = true;
                        const int w = i / 32;
                        bool all = true;
                        for (int l = 0; l < 32; ++l) all &= b.threads[w * 32 + l].st == St::Warp;
                        if (all) run_warp_op(w);
                    }
                    int bar = 0, done = 0;
                    for (auto& t : b.threads) {
                        bar += t.st == St::Bar;
                        done += t.st == St::Done;
                        live |= t.st != St::Done;
                    }
                    if (!live) break;
                    if (bar > 0 && bar + done == n) {
                        for (auto& t : b.threads) {
                            publish(t);
                            if (t.st == St::Bar) t.st = St::Run;
                        }
                        progress = true;
                    }
                    if (!progress) fail("deadlock: threads wait on a barrier or warp op forever");
                }
                blk = nullptr;
            }
}

}  // namespace gkemu

#define threadIdx (gkemu::cur->tid)
#define blockIdx (gkemu::blk->bid)
#define blockDim (gkemu::blk->bdim)
#define gridDim (gkemu::blk->gdim)

inline unsigned char* gk_dynamic_smem() { return gkemu::blk->smem.data(); }
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
inline float gk_elem_to_float(gk_u16 h) { return gkemu::elem_to_float(h); }
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
