"""Choosing the backend: CUDA, then HIP, then the CPU; GPUKIT_BACKEND forces one."""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading

from . import _libs
from .errors import BackendUnavailableError

BACKENDS = ("cuda", "hip", "cpu")

_lock = threading.Lock()
_runtime = None
_reasons: dict[str, str] = {}
_opened: dict[str, object] = {}
_scoped = contextvars.ContextVar("gpukit_scoped_runtime", default=None)


def _open_cuda():
    from ._cuda import CudaRuntime

    return CudaRuntime()


def _open_hip():
    found, detail = _libs.probe_isolated(_libs.HIP_RUNTIME)
    if not found:
        raise BackendUnavailableError(f"HIP runtime not found: {_libs.HIP_RUNTIME} ({detail})")
    raise BackendUnavailableError(
        f"HIP runtime found at {detail}, but running on AMD GPUs is not implemented yet "
        "(the built-in kernels do compile for AMD GPUs through hiprtc)"
    )


def _open_cpu():
    from ._cpu import CpuRuntime

    return CpuRuntime()


_OPENERS = {"cuda": _open_cuda, "hip": _open_hip, "cpu": _open_cpu}


def requested_backend() -> str | None:
    forced = os.environ.get("GPUKIT_BACKEND", "").strip().lower()
    if forced and forced not in BACKENDS:
        raise BackendUnavailableError(
            f"GPUKIT_BACKEND={forced!r} is not a backend; choose one of {', '.join(BACKENDS)}"
        )
    return forced or None


def open_backend(name: str):
    """The runtime of one backend, opened once per process; BackendUnavailableError says why not."""
    if name not in BACKENDS:
        raise BackendUnavailableError(f"{name!r} is not a backend; choose one of {BACKENDS}")
    with _lock:
        if name not in _opened:
            try:
                rt = _OPENERS[name]()
            except BackendUnavailableError as e:
                _reasons[name] = str(e)
                raise
            from .memory import apply_environment

            apply_environment(rt.pool)
            _opened[name] = rt
        return _opened[name]


def _default_runtime():
    forced = requested_backend()
    if forced:
        try:
            return open_backend(forced)
        except BackendUnavailableError as e:
            raise BackendUnavailableError(
                f"GPUKIT_BACKEND={forced} but that backend is unavailable: {e}"
            ) from None
    for name in BACKENDS:
        try:
            return open_backend(name)
        except BackendUnavailableError:
            continue
    raise AssertionError("the CPU backend always opens")


def runtime():
    """The runtime new arrays go to: use_backend's, else the process default (chosen once)."""
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    global _runtime
    if _runtime is None:
        _runtime = _default_runtime()
    return _runtime


def opened_backends() -> list[str]:
    """The backends this process has opened so far."""
    return list(_opened)


def available_backends() -> list[str]:
    """The backends that open on this machine, best first."""
    out = []
    for name in BACKENDS:
        try:
            open_backend(name)
            out.append(name)
        except BackendUnavailableError:
            pass
    return out


@contextlib.contextmanager
def use_backend(name: str):
    """Within the block (this thread or task), new arrays go to backend `name`."""
    token = _scoped.set(open_backend(name))
    try:
        yield
    finally:
        _scoped.reset(token)


def unavailable_reasons() -> dict[str, str]:
    """Why each backend that was tried could not be opened."""
    return dict(_reasons)
