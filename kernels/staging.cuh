// Staging global memory in shared memory: the block's dynamic shared memory, and 16-byte copies
// into it that are all in flight at once (cp.async on sm_80+, without registers to hold them) and
// land by gk_copy_wait(). Elsewhere (HIP, older GPUs, the host emulator) the copy is a plain load
// and store, landed at once.
#pragma once
#include "compat.cuh"

#ifndef GK_HOST_EMULATION  // the emulator gives its own
__device__ inline unsigned char* gk_shared_dynamic() {
    extern __shared__ __align__(16) unsigned char gk_shared_dyn[];
    return gk_shared_dyn;
}
#endif

#if !defined(GK_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GK_ASYNC_COPY 1
#endif

// 16 bytes from src (global, 16-byte aligned) to dst (shared, 16-byte aligned).
__device__ inline void gk_copy16(void* dst, const void* src) {
#ifdef GK_ASYNC_COPY
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
#else
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
#endif
}

// Waits for this thread's copies; other threads see them after a block barrier.
__device__ inline void gk_copy_wait() {
#ifdef GK_ASYNC_COPY
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
#endif
}
