"""Run-time compilation: the built-in kernel sources, NVRTC/hiprtc, and the kernel cache.

Images are cached in memory and on disk (GPUKIT_CACHE_DIR, else $XDG_CACHE_HOME/gpukit/kernels,
else ~/.cache/gpukit/kernels), keyed by the source and headers, kernel file name, options,
compiler version, target architecture and gpukit version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from .. import _native
from ..base.version import VERSION
from ..errors import BackendUnavailableError
from . import kernels, libs

# --- sources ------------------------------------------------------------------------------------


def list_kernels() -> list[str]:
    """File names of the built-in kernel sources (kernels/ at build time)."""
    return sorted(_native.kernel_sources())


def kernel_source(name: str) -> str:
    sources = _native.kernel_sources()
    if name not in sources:
        raise KeyError(f"no built-in kernel file {name!r}; have {', '.join(sorted(sources))}")
    return sources[name]


_SOURCES = None


def builtin_sources() -> dict[str, str]:
    global _SOURCES
    if _SOURCES is None:
        _SOURCES = _native.kernel_sources()
    return _SOURCES


def _headers() -> list[tuple[str, str]]:
    return [
        (name, text) for name, text in sorted(builtin_sources().items()) if name.endswith(".cuh")
    ]


# --- cache --------------------------------------------------------------------------------------


def cache_dir() -> Path:
    env = os.environ.get("GPUKIT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpukit" / "kernels"


_caches: dict[str, _native.KernelCache] = {}
_caches_lock = threading.Lock()


def kernel_cache() -> _native.KernelCache:
    """The cache for the current cache_dir() (one object per directory and process)."""
    directory = str(cache_dir())
    with _caches_lock:
        if directory not in _caches:
            _caches[directory] = _native.KernelCache(directory)
        return _caches[directory]


def cache_info() -> dict:
    directory = cache_dir()
    files = [p for p in directory.glob("*.bin")] if directory.is_dir() else []
    return {
        "directory": str(directory),
        "entries": len(files),
        "bytes": sum(p.stat().st_size for p in files),
    }


def clear_cache() -> None:
    """Deletes every cached kernel image, on disk and in memory (loaded modules stay loaded)."""
    directory = cache_dir()
    if directory.is_dir():
        shutil.rmtree(directory)
    for cache in _caches.values():
        cache.clear_memory()


# --- compilers ----------------------------------------------------------------------------------

_compilers: dict[str, object] = {}


def open_compiler(kind: str):
    """NVRTC ("nvrtc") or hiprtc ("hiprtc"), found as DESIGN.md says; BackendUnavailableError if
    none loads. The result is remembered; `origin` says where it came from."""
    if kind in _compilers:
        return _compilers[kind]
    if kind == "hiprtc" and libs.cuda_driver_loaded():
        # Seen on the GPU machine: a ROCm 5 libamdhip64 aborts the process when it initialises
        # beside a loaded CUDA driver. hiprtc is only needed without one (the HIP backend).
        raise BackendUnavailableError(
            "hiprtc is not loaded into a process running the CUDA backend"
        )
    candidates = libs.nvrtc_candidates() if kind == "nvrtc" else libs.hiprtc_candidates()
    errors = []
    probe = libs.probe_isolated if kind == "hiprtc" else _native.probe_library
    for origin, path in candidates:
        found, _ = probe(path)
        if not found:
            continue
        if kind == "hiprtc" and not _opens_in_a_child(path):
            errors.append(f"{path} aborts when opened")
            continue
        try:
            compiler = _native.RtcCompiler.open(path, kind)
        except BackendUnavailableError as e:  # found, but not a usable compiler
            errors.append(str(e))
            continue
        _compilers[kind] = (compiler, origin)
        return _compilers[kind]
    detail = f" ({'; '.join(errors)})" if errors else ""
    raise BackendUnavailableError(
        f"{kind.upper() if kind == 'nvrtc' else kind} not found{detail}; "
        + (
            "pip install nvidia-cuda-nvrtc, or set GPUKIT_NVRTC_PATH"
            if kind == "nvrtc"
            else "install ROCm's hiprtc, or set GPUKIT_HIPRTC_PATH"
        )
    )


def _opens_in_a_child(path: str) -> bool:
    """Whether hiprtc at `path` initialises without killing the process. Some ROCm builds abort
    inside their first call on machines without an AMD GPU, so the first open happens in a child."""
    code = f"from gpukit import _native; _native.RtcCompiler.open({path!r}, 'hiprtc').version"
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def nvrtc_arch_options(compiler, cc: tuple[int, int]) -> list[str]:
    """Cubin for the exact architecture when NVRTC knows it; PTX for the newest it knows when the
    GPU is newer than NVRTC (the driver compiles that PTX)."""
    arch = cc[0] * 10 + cc[1]
    supported = compiler.supported_archs()
    if arch in supported:
        return [f"--gpu-architecture=sm_{arch}"]
    newest = max(supported)
    if arch > newest:
        return [f"--gpu-architecture=compute_{newest}"]
    raise BackendUnavailableError(
        f"NVRTC {compiler.version} at {compiler.path} cannot compile for sm_{arch}"
        f" (it supports sm_{min(supported)} to sm_{newest})"
    )


class Jit:
    """Compiles and caches images for one compiler and target architecture."""

    def __init__(self, compiler, arch_options: list[str]):
        self.compiler = compiler
        self.arch_options = list(arch_options)
        self.base_options = ["-std=c++17", *self.arch_options]

    def build(self, name: str, source: str, options=()) -> bytes:
        """The image of `source` compiled with `options`, from the cache when it is there."""
        options = [*self.base_options, *options]
        headers = _headers()
        key = "\0".join(
            [
                f"gpukit {VERSION}",
                f"{self.compiler.kind} {self.compiler.version}",
                *options,
                name,
                source,
                *(part for header in headers for part in header),
            ]
        )
        cache = kernel_cache()
        image = cache.find(key)
        if image is None:
            image = self.compiler.compile(name, source, headers, options)
            cache.store(key, image)
        return image

    def build_builtin(self, file: str, defines=()) -> bytes:
        """The image of a built-in kernel instance (see gpukit.runtime.kernels)."""
        defines = tuple(defines)
        return self.build(
            file, kernels.source(file, defines, builtin_sources()), kernels.options(defines)
        )
