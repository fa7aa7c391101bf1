// The launch table: the C ABI through which gpukit._core's plans launch kernels without Python.
// gpukit._native fills one per device and hands it over in a PyCapsule named
// GK_LAUNCH_TABLE_CAPSULE. rust/core/src/launch.rs mirrors these structs; keep the two in step.
#pragma once
#include <stdint.h>

#define GK_LAUNCH_TABLE_VERSION 2
#define GK_LAUNCH_TABLE_CAPSULE "gpukit.launch_table"
#define GK_TENSOR_MAP_BYTES 128
// Set in a launch's function handle (handles are aligned pointers: bit 0 is otherwise clear): the
// launch is cooperative, every block of the grid resident at once, so that blocks may wait for
// each other (a grid-wide barrier). A plan records the flag in the handle it launches.
#define GK_LAUNCH_COOPERATIVE 1u

// cuTensorMapEncodeTiled's arguments but the global address, which a plan fills in at launch
// (CUtensorMapDataType, ...Interleave, ...Swizzle, ...L2promotion, ...FloatOOBfill as numbers).
typedef struct gk_tensor_map_desc {
    uint32_t data_type;
    uint32_t rank;  // 1 to 5
    uint64_t global_dim[5];
    uint64_t global_strides[4];  // bytes, of dimensions 1 .. rank - 1
    uint32_t box_dim[5];
    uint32_t element_strides[5];
    uint32_t interleave;
    uint32_t swizzle;
    uint32_t l2_promotion;
    uint32_t oob_fill;
} gk_tensor_map_desc;

// Every function returns 0 on success, otherwise a backend error code that error_name() explains.
typedef struct gk_launch_table {
    uint32_t version;
    void* ctx;
    // Launches `function` with its parameters packed in `args` (args_bytes bytes, the layout of
    // the kernel's parameter list), as CU_LAUNCH_PARAM_BUFFER_POINTER passes them; cooperatively
    // where `function` has GK_LAUNCH_COOPERATIVE set.
    int32_t (*launch)(void* ctx, uint64_t function, const uint32_t* grid, const uint32_t* block,
                      uint32_t shared_bytes, uint64_t stream, const void* args,
                      uint64_t args_bytes);
    // Writes the GK_TENSOR_MAP_BYTES bytes of a CUtensorMap for `desc` over memory at `address`.
    int32_t (*encode_tensor_map)(void* ctx, void* out, const gk_tensor_map_desc* desc,
                                 uint64_t address);
    // Static string naming an error code, e.g. "CUDA_ERROR_INVALID_VALUE". Never NULL.
    const char* (*error_name)(void* ctx, int32_t code);
    // A plan's second lane beside `stream`, written to *side: a stream on which work queued next
    // waits for everything queued on `stream` so far (`stream` itself where it has no second
    // lane: the lanes then run in turn).
    int32_t (*fork)(void* ctx, uint64_t stream, uint64_t* side);
    // `stream` waits for everything queued on `side` so far (nothing where side == stream).
    int32_t (*join)(void* ctx, uint64_t stream, uint64_t side);
} gk_launch_table;
