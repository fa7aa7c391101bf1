// Launch pacing: the Rust scheduler's pacer table, installed once by gpukit.scheduler, consulted
// around every kernel launch (one atomic load when none is installed).
#pragma once
#include <stdint.h>

#include "gpukit/pacer_table.h"

namespace gpukit {
void install_pacer(const gk_pacer_table* table);
// Before a launch on `stream`: waits (the GIL released, if held) while the pacer holds it back.
void pace_before_launch(uint64_t stream);
// After a launch: returns the backend error code of recording its event (0: fine).
int32_t record_after_launch(uint64_t stream);
}  // namespace gpukit
