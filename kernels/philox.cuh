// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): four
// 32-bit words from a 128-bit counter and a 64-bit key. kernels/philox.cu (gpukit.random) and
// kernels/sample.cu draw from it; gpukit/runtime/philox.py computes the same words on the host.
#pragma once
#include "types.cuh"

struct gk_words {
    gk_u32 w[4];
};

__device__ inline gk_words gk_philox4x32(gk_u32 c0, gk_u32 c1, gk_u32 c2, gk_u32 c3, gk_u32 k0,
                                         gk_u32 k1) {
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        const gk_u64 p0 = (gk_u64)0xD2511F53u * c0, p1 = (gk_u64)0xCD9E8D57u * c2;
        const gk_u32 n0 = (gk_u32)(p1 >> 32) ^ c1 ^ k0, n2 = (gk_u32)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0;
        c1 = (gk_u32)p1;
        c2 = n2;
        c3 = (gk_u32)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    gk_words r = {{c0, c1, c2, c3}};
    return r;
}
