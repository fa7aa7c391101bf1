// The pacer table: launch pacing from the Rust scheduler (gpukit._core), called around every kernel
// launch without Python. gpukit._core exports it in a PyCapsule named GK_PACER_TABLE_CAPSULE;
// rust/core/src/sched/pacer.rs mirrors this struct; keep the two in step.
#pragma once
#include <stdint.h>

#define GK_PACER_TABLE_VERSION 1
#define GK_PACER_TABLE_CAPSULE "gpukit.pacer_table"

typedef struct gk_pacer_table {
    uint32_t version;
    // 0: launch now; 1: call wait_launch first (the GIL released).
    int32_t (*before_launch)(uint64_t stream);
    void (*wait_launch)(uint64_t stream);
    // After the launch was queued on `stream`: 0, or the backend error recording its event.
    int32_t (*after_launch)(uint64_t stream);
    // Rows per launch the calling thread's long ops should be split into (0: launch whole).
    int64_t (*slice_rows)(void);
} gk_pacer_table;
