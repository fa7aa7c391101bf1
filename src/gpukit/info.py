"""gpukit.info(): which backend runs, why the others do not, and which libraries were found."""

from __future__ import annotations

import os

from . import _native, linalg
from .base.version import VERSION
from .errors import BackendUnavailableError
from .runtime import devices, jit
from .runtime import libs as _libs


class Info(dict):
    """A dict of facts that prints as a readable report."""

    def __str__(self) -> str:
        width = max(map(len, self))
        return "\n".join(f"{k.ljust(width)} : {v}" for k, v in self.items())

    __repr__ = __str__


def _library(name: str, probe=_native.probe_library) -> str:
    found, detail = probe(name)
    return f"found at {detail}" if found else f"not found: {name}"


def _first_found(candidates, probe=_native.probe_library) -> str:
    hit = _libs.find_first(probe, candidates)
    return f"found at {hit[1]} (from {hit[0]})" if hit else "not found"


def _qos(rt) -> tuple[str, str]:
    """What the scheduler's preemption and green contexts can do on `rt`'s device."""
    if not rt.capabilities.preemption:
        why = f"not on the {rt.kind} backend"
        return why, why
    ok, why = rt.preemption_available()
    preemption = "available (preemptible sm_90a GEMM, stream memory operations)" if ok else why
    ok, why = rt.green_contexts()
    return preemption, "available" if ok else f"not available: {why}"


def info() -> Info:
    """The facts; where GPUKIT_BACKEND forces a backend that does not open, `backend` says why
    instead of raising, so that the report can show what is missing."""
    try:
        rt = devices.runtime()
    except BackendUnavailableError as e:
        rt = None
        out = Info(gpukit=VERSION, backend=f"none: {e}")
    else:
        out = Info(gpukit=VERSION, backend=rt.kind, device=rt.describe())
    devices.available_backends()  # tries each backend, so every reason below is known
    for name, reason in devices.unavailable_reasons().items():
        out[f"{name} unavailable"] = reason
    forced = os.environ.get("GPUKIT_BACKEND", "").strip()
    if forced:
        out["GPUKIT_BACKEND"] = forced
    out["CUDA driver"] = _library(_libs.CUDA_DRIVER)
    out["NVRTC"] = _first_found(_libs.nvrtc_candidates())
    out["HIP runtime"] = _library(_libs.HIP_RUNTIME, _libs.probe_isolated)
    out["hiprtc"] = _first_found(_libs.hiprtc_candidates(), _libs.probe_isolated)
    if rt is not None and rt.capabilities.compiles_kernels:
        out["compiler in use"] = rt.compiler_description()
    if rt is not None:
        out["matmul paths"] = rt.describe_matmul(bool(linalg.allow_tf32))
        out["preemption"], out["green contexts"] = _qos(rt)
    cache = jit.cache_info()
    out["kernel cache"] = (
        f"{cache['directory']} ({cache['entries']} entries, {cache['bytes']} bytes)"
    )
    return out
