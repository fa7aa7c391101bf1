"""Run-time compilation, as users see it: the built-in kernel sources, the kernel cache, and
warm-up. Images are cached in memory and on disk (GPUKIT_CACHE_DIR, else
$XDG_CACHE_HOME/gpukit/kernels, else ~/.cache/gpukit/kernels), keyed by the source and headers,
kernel file name, options, compiler version, target architecture and gpukit version."""

from __future__ import annotations

import sys
import time

from .runtime import kernels, runtime
from .runtime.jit import (
    Jit,
    cache_dir,
    cache_info,
    clear_cache,
    kernel_cache,
    kernel_source,
    list_kernels,
    nvrtc_arch_options,
    open_compiler,
)

__all__ = [
    "Jit",
    "cache_dir",
    "cache_info",
    "clear_cache",
    "kernel_cache",
    "kernel_source",
    "list_kernels",
    "nvrtc_arch_options",
    "open_compiler",
    "warmup",
]


def _progress(done: int, total: int, label: str, start: float, stream=sys.stderr) -> None:
    width = 30
    filled = width * done // max(total, 1)
    stream.write(
        f"\rgpukit: compiling kernels [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        f" {time.perf_counter() - start:5.1f}s {label[:40]:40s}"
    )
    if done == total:
        stream.write("\n")
    stream.flush()


def warmup(progress: bool = True) -> int:
    """Compiles (or loads from the cache) the built-in kernels for the current device, so that
    first use of an op does not wait for the compiler. Returns how many were prepared; a backend
    that compiles nothing (the CPU) returns 0."""
    rt = runtime()
    if not rt.capabilities.compiles_kernels:
        return 0
    instances = rt.kernel_instances()
    start = time.perf_counter()
    for i, (file, defines) in enumerate(instances):
        for name in kernels.kernels_of(file, defines):
            rt.function(file, defines, name)
        if progress:
            _progress(i + 1, len(instances), file, start)
    return len(instances)
