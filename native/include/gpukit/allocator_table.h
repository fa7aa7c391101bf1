// The allocator table: the C ABI through which the Rust pool (gpukit._core) reaches device memory
// without Python. gpukit._native fills one per backend and hands it over in a PyCapsule named
// GK_ALLOCATOR_TABLE_CAPSULE. rust/core/src/table.rs mirrors this struct; keep the two in step.
#pragma once
#include <stdint.h>

#define GK_ALLOCATOR_TABLE_VERSION 1
#define GK_ALLOCATOR_TABLE_CAPSULE "gpukit.allocator_table"

enum gk_backend { GK_BACKEND_CPU = 0, GK_BACKEND_CUDA = 1, GK_BACKEND_HIP = 2 };

// Every function returns 0 on success, otherwise a backend error code that error_name() explains.
typedef struct gk_allocator_table {
    uint32_t version;
    uint32_t backend;
    void* ctx;
    int32_t (*device_alloc)(void* ctx, uint64_t nbytes, uint64_t* out_ptr);
    int32_t (*device_free)(void* ctx, uint64_t ptr);
    // Page-locked host memory on a GPU backend, plain host memory on the CPU backend.
    int32_t (*host_alloc)(void* ctx, uint64_t nbytes, void** out_ptr);
    int32_t (*host_free)(void* ctx, void* ptr);
    // Synchronous copies (the pool uses them to spill and restore); stream orders them after prior
    // work.
    int32_t (*copy_to_host)(void* ctx, void* dst, uint64_t src, uint64_t nbytes, uint64_t stream);
    int32_t (*copy_to_device)(void* ctx, uint64_t dst, const void* src, uint64_t nbytes,
                              uint64_t stream);
    int32_t (*event_create)(void* ctx, uint64_t* out_event);
    int32_t (*event_record)(void* ctx, uint64_t event, uint64_t stream);
    // 0: every piece of work recorded before the event has finished; 1: not yet; else an error.
    int32_t (*event_query)(void* ctx, uint64_t event);
    int32_t (*event_destroy)(void* ctx, uint64_t event);
    // Static string naming an error code, e.g. "CUDA_ERROR_OUT_OF_MEMORY". Never NULL.
    const char* (*error_name)(void* ctx, int32_t code);
    // Code that device_alloc returns when the device is out of memory.
    int32_t out_of_memory_code;
} gk_allocator_table;
