#pragma once
#include "gpukit/allocator_table.h"

namespace gpukit {
const gk_allocator_table* host_allocator_table();
}
