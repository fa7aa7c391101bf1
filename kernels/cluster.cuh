// Thread-block clusters (sm_90+): the cluster's barrier and loads from another block's shared
// memory (distributed shared memory). GK_HAS_CLUSTERS says whether this compilation has them; the
// host emulator (tests/gpu/emulator) runs a cluster as a cooperative launch.
#pragma once

#if defined(GK_HOST_EMULATION) || \
    (!defined(GK_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900)
#define GK_HAS_CLUSTERS 1
#else
#define GK_HAS_CLUSTERS 0
#endif  // GK_HOST_EMULATION

#if GK_HAS_CLUSTERS
#ifdef GK_HOST_EMULATION  // a cluster runs as a cooperative launch (tests/gpu/emulator)
__device__ inline void gk_cluster_sync() { gk_emu_grid_sync(); }

template <typename T>
__device__ inline T gk_dsmem(const T* p, unsigned rank) {
    const unsigned char* here = gk_shared_dynamic();
    return *reinterpret_cast<const T*>(gk_emu_cluster_smem(rank) +
                                       (reinterpret_cast<const unsigned char*>(p) - here));
}
#else
// The cluster's barrier: every thread of its blocks arrives (release: this block's shared memory
// writes before it are visible to the cluster's loads after it) and waits (acquire).
__device__ inline void gk_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;"
                 :
                 :
                 : "memory");
}

// The address of `p` (this block's shared memory) in the shared memory of the cluster's block
// `rank` (the same variable there).
__device__ inline unsigned gk_dsmem_address(const void* p, unsigned rank) {
    unsigned local, remote;
    asm("{\n\t.reg .u64 g;\n\tcvta.to.shared.u64 g, %1;\n\tcvt.u32.u64 %0, g;\n\t}"
        : "=r"(local)
        : "l"(p));
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    return remote;
}

// *p in the shared memory of the cluster's block `rank` (distributed shared memory). Volatile: kept
// after the cluster barrier (a volatile asm too); no memory clobber, so that a thread's loads
// issue together rather than one round trip each.
__device__ inline float gk_dsmem(const float* p, unsigned rank) {
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(gk_dsmem_address(p, rank)));
    return v;
}

__device__ inline double gk_dsmem(const double* p, unsigned rank) {
    double v;
    asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(gk_dsmem_address(p, rank)));
    return v;
}

__device__ inline uint4 gk_dsmem(const uint4* p, unsigned rank) {  // p 16-byte aligned
    uint4 v;
    asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(gk_dsmem_address(p, rank)));
    return v;
}

__device__ inline int gk_dsmem(const int* p, unsigned rank) {
    int v;
    asm volatile("ld.shared::cluster.s32 %0, [%1];" : "=r"(v) : "r"(gk_dsmem_address(p, rank)));
    return v;
}
#endif  // GK_HOST_EMULATION
#endif  // GK_HAS_CLUSTERS
