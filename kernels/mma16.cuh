// Warp-level tensor-core helpers of the sm_80+ attention kernels (mma.sync m16n8k16 over 16-bit
// floats, fp32 accumulate): shared-memory addresses, cp.async copies, ldmatrix, the mma, packing,
// exp2 and shuffles. The element type is GK_MMA_TYPE (f16 or bf16), defined by the includer.
//
// With GK_EMULATE defined (host C++ builds of the kernels for tests without a GPU) the same
// functions come from a host emulation of the warp instead (tests/gpu/emulator/gk_emulate.h).
#pragma once
#include "types.cuh"

#define gk_mma16_kind_f16 1
#define gk_mma16_kind_bf16 2
#define GK_MMA16_CAT2(a, b) a##b
#define GK_MMA16_CAT(a, b) GK_MMA16_CAT2(a, b)
#define GK_MMA16_KIND GK_MMA16_CAT(gk_mma16_kind_, GK_MMA_TYPE)
#if GK_MMA16_KIND != 1 && GK_MMA16_KIND != 2
#error "GK_MMA_TYPE must be f16 or bf16"
#endif

#ifdef GK_EMULATE
#include "gk_emulate.h"
#else

#define GK_DEV __device__ __forceinline__
#define GK_MMA16_STR2(x) #x
#define GK_MMA16_STR(x) GK_MMA16_STR2(x)

// The block's dynamic shared memory.
GK_DEV unsigned char* gk_dynamic_smem() {
    extern __shared__ __align__(128) unsigned char gk_smem_dynamic[];
    return gk_smem_dynamic;
}

GK_DEV unsigned gk_smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

// 16 bytes from global to shared memory, asynchronously; zeros instead when !full.
GK_DEV void gk_cp16(unsigned dst, const void* src, bool full) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(full ? 16 : 0));
}

GK_DEV void gk_cp_commit() { asm volatile("cp.async.commit_group;\n"); }

// Waits until at most N of this thread's committed copy groups are still in flight.
template <int N>
GK_DEV void gk_cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

GK_DEV void gk_sync_block() { __syncthreads(); }
GK_DEV void gk_sync_warp() { __syncwarp(); }

GK_DEV void gk_ldsm_x4(unsigned addr, unsigned (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

GK_DEV void gk_ldsm_x4_t(unsigned addr, unsigned (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// c += a (16x16, row) * b (16x8, col).
GK_DEV void gk_mma16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." GK_MMA16_STR(
                     GK_MMA_TYPE) "." GK_MMA16_STR(GK_MMA_TYPE) ".f32 {%0, %1, %2, %3}, "
                                                                "{%4, %5, %6, %7}, {%8, %9}, "
                                                                "{%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats rounded to the element type and packed, `lo` at the lower address.
GK_DEV unsigned gk_pack2(float lo, float hi) {
    unsigned r;
#if GK_MMA16_KIND == 2
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

GK_DEV float gk_elem_to_float(gk_u16 h) {
#if GK_MMA16_KIND == 2
    return __uint_as_float((unsigned)h << 16);
#else
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#endif
}

// 2^x (one MUFU.EX2; 2^-inf = 0).
GK_DEV float gk_ex2(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

GK_DEV float gk_shfl_xor_f(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }

GK_DEV float gk_neg_inf() { return __int_as_float(0xff800000); }

#endif  // GK_EMULATE

// A shared-memory tile of rows of C 16-byte chunks (8 elements each): the byte offset of chunk
// `c` of row `r`. Chunks are XORed with the row within each group of 8 (4 for a trailing half
// group), so that the 8 rows one ldmatrix phase reads at one logical chunk hit distinct banks.
template <int C>
GK_DEV unsigned gk_swz(int r, int c) {
    if (C % 8 == 0) return (unsigned)(r * C * 16) + ((unsigned)(c * 16) ^ (unsigned)((r & 7) * 16));
    const int x = (c | 7) < C ? (c ^ (r & 7)) : (c ^ (r & 3));
    return (unsigned)(r * C + x) * 16u;
}
