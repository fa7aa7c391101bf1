// Hopper (sm_90a) building blocks shared by kernels/gemm_sm90.cu and kernels/attention_sm90.cu:
// TMA tensor maps and bulk tensor copies, mbarriers, wgmma shared-memory descriptors and the
// wgmma fence / commit / wait.
#pragma once
#include "types.cuh"

// CUtensorMap: 128 opaque bytes made by the driver's cuTensorMapEncodeTiled.
struct __align__(64) gk_tensor_map {
    gk_u64 opaque[16];
};

__device__ __forceinline__ unsigned gk_smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void gk_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

__device__ __forceinline__ void gk_mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            " selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

__device__ __forceinline__ void gk_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void gk_mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}

// A 3-D box (inner, outer, batch) of `map` into shared memory at dst; completes on bar.
__device__ __forceinline__ void gk_tma_load(unsigned dst, const gk_tensor_map* map, unsigned bar,
                                            int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
        "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}

// A 4-D box of `map` into shared memory at dst; completes on bar.
__device__ __forceinline__ void gk_tma_load_4d(unsigned dst, const gk_tensor_map* map, unsigned bar,
                                               int c0, int c1, int c2, int c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(dst),
        "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}

// wgmma shared-memory descriptor, 128-byte swizzle. lbo: byte distance between MN chunks of an
// MN-major operand (unused for K-major); sbo: between groups of 8 rows (1024 bytes here).
__device__ __forceinline__ gk_u64 gk_desc(unsigned addr, unsigned lbo) {
    return (gk_u64)((addr & 0x3FFFF) >> 4) | ((gk_u64)((lbo & 0x3FFFF) >> 4) << 16) |
           ((gk_u64)(1024 >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void gk_wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void gk_wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void gk_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
