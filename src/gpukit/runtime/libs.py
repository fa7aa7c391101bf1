"""Where gpukit looks for the driver and the run-time compiler (DESIGN.md, "Finding NVRTC")."""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import site
import subprocess
import sys
from pathlib import Path

CUDA_DRIVER = "libcuda.so.1"
HIP_RUNTIME = "libamdhip64.so"

_loaded: set[str] = set()


def mark_loaded(library: str) -> None:
    """Records that this process has loaded `library` (the CUDA backend calls it on opening)."""
    _loaded.add(library)


def cuda_driver_loaded() -> bool:
    return CUDA_DRIVER in _loaded


# Relative to a site-packages directory: CUDA 13 wheels first, then CUDA 12.
_NVRTC_WHEEL_PATHS = ("nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
_NVRTC_TOOLKIT_NAMES = ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12")
_NVRTC_SYSTEM_NAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
# ROCm 6 ships hiprtc on its own; before that it lives inside libamdhip64.
_HIPRTC_NAMES = ("libhiprtc.so", "libhiprtc.so.6", "libamdhip64.so", "libamdhip64.so.5")


def _site_dirs() -> list[str]:
    dirs = [p for p in sys.path if p.endswith("site-packages") or p.endswith("dist-packages")]
    with contextlib.suppress(AttributeError):  # some embedded interpreters lack these
        dirs += [*site.getsitepackages(), site.getusersitepackages()]
    return list(dict.fromkeys(dirs))


def nvrtc_candidates() -> list[tuple[str, str]]:
    """(origin, name or path) to try in order, as DESIGN.md lists them."""
    out = []
    env = os.environ.get("GPUKIT_NVRTC_PATH")
    if env:
        out.append(("GPUKIT_NVRTC_PATH", env))
    for d in _site_dirs():
        for rel in _NVRTC_WHEEL_PATHS:
            p = Path(d) / rel
            if p.exists():
                out.append(("pip wheel", str(p)))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            out += [(var, str(Path(root) / "lib64" / n)) for n in _NVRTC_TOOLKIT_NAMES]
    out += [("/usr/local/cuda", f"/usr/local/cuda/lib64/{n}") for n in _NVRTC_TOOLKIT_NAMES]
    out += [("system loader", n) for n in _NVRTC_SYSTEM_NAMES]
    return out


def hiprtc_candidates() -> list[tuple[str, str]]:
    out = []
    env = os.environ.get("GPUKIT_HIPRTC_PATH")
    if env:
        out.append(("GPUKIT_HIPRTC_PATH", env))
    rocm = os.environ.get("ROCM_PATH", "/opt/rocm")
    out += [("ROCM_PATH", f"{rocm}/lib/{n}") for n in _HIPRTC_NAMES]
    out += [("system loader", n) for n in _HIPRTC_NAMES]
    return out


@functools.lru_cache(maxsize=64)
def probe_isolated(name: str) -> tuple[bool, str]:
    """_native.probe_library in a child process. For ROCm's libraries: opening one (even opening
    and closing it) has aborted processes that had the CUDA driver loaded."""
    code = f"from gpukit import _native; print(repr(_native.probe_library({name!r})))"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"probing {name} failed: {e}"
    if done.returncode != 0:
        return False, f"{name} aborts the process that loads it (exit {done.returncode})"
    return ast.literal_eval(done.stdout.strip())


def find_first(probe, candidates) -> tuple[str, str] | None:
    """The first candidate the loader accepts, as (origin, resolved path); None if none does."""
    for origin, name in candidates:
        found, detail = probe(name)
        if found:
            return origin, detail
    return None
