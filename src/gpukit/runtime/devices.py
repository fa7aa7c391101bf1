"""Opening backends: one runtime per (backend, device index), CUDA first, then HIP, then the CPU;
GPUKIT_BACKEND forces one. `use_backend("cuda:1")` and `Device(1)` pick a device for a block."""

from __future__ import annotations

import contextlib
import contextvars
import operator
import threading

from ..base.sizes import BACKENDS, memory_limit, requested_backend
from ..errors import BackendUnavailableError
from . import libs

_lock = threading.Lock()
_default = None
_reasons: dict[str, str] = {}
_opened: dict[tuple[str, int], object] = {}
_scoped = contextvars.ContextVar("gpukit_scoped_runtime", default=None)


def _open_cuda(index: int):
    from .cuda import CudaBackend

    return CudaBackend(index)


def _open_hip(index: int):
    found, detail = libs.probe_isolated(libs.HIP_RUNTIME)
    if not found:
        raise BackendUnavailableError(f"HIP runtime not found: {libs.HIP_RUNTIME} ({detail})")
    raise BackendUnavailableError(
        f"HIP runtime found at {detail}, but running on AMD GPUs is not implemented yet "
        "(the built-in kernels do compile for AMD GPUs through hiprtc)"
    )


def _open_cpu(index: int):
    from .cpu import CpuBackend

    return CpuBackend(index)


_OPENERS = {"cuda": _open_cuda, "hip": _open_hip, "cpu": _open_cpu}


def parse_device(name: str) -> tuple[str, int | None]:
    """("cuda", 1) for "cuda:1", ("cuda", None) for "cuda"; ValueError for anything else."""
    text = str(name).strip().lower()
    kind, _, index = text.partition(":")
    if kind not in BACKENDS:
        raise BackendUnavailableError(f"{name!r} is not a backend; choose one of {BACKENDS}")
    if not index:
        return kind, None
    if not index.isdigit():
        raise ValueError(f"{name!r}: a device is named like 'cuda' or 'cuda:1'")
    return kind, int(index)


def open_backend(name: str, index: int | None = None):
    """The runtime of backend `name` ("cuda", "cuda:1", "cpu") on device `index` (default: the
    one in the name, else 0), opened once per process; BackendUnavailableError says why not."""
    kind, named = parse_device(name)
    index = operator.index(index if index is not None else named if named is not None else 0)
    key = (kind, index)
    rt = _opened.get(key)
    if rt is not None:
        return rt
    with _lock:
        if key not in _opened:
            try:
                rt = _OPENERS[kind](index)
            except BackendUnavailableError as e:
                if index == 0:
                    _reasons[kind] = str(e)
                raise
            limit = memory_limit()
            if limit is not None:
                rt.pool.limit = limit
            _opened[key] = rt
        return _opened[key]


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
    """The runtime new arrays go to: use_backend's or Device's, else the process default
    (chosen once)."""
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    global _default
    if _default is None:
        _default = _default_runtime()
    return _default


def opened() -> list[tuple[str, int]]:
    """The (backend, index) pairs this process has opened so far."""
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


def scope(rt) -> contextvars.Token:
    """Makes `rt` the runtime of this thread (or task) until `unscope(token)`."""
    return _scoped.set(rt)


def unscope(token: contextvars.Token) -> None:
    _scoped.reset(token)


@contextlib.contextmanager
def use_backend(name: str):
    """Within the block (this thread or task), new arrays go to `name`: a backend ("cuda",
    "cpu") or one device of it ("cuda:1")."""
    token = scope(open_backend(name))
    try:
        yield
    finally:
        unscope(token)


def unavailable_reasons() -> dict[str, str]:
    """Why each backend that was tried could not be opened."""
    return dict(_reasons)


class Device:
    """A device: `Device(1)` (of the current backend), `Device("cuda:1")`. As a context manager,
    new arrays of the calling thread go to it within the block."""

    def __init__(self, device=None):
        if device is None:
            rt = runtime()
        elif isinstance(device, str):
            rt = open_backend(device)
        else:
            rt = open_backend(runtime().kind, operator.index(device))
        self._rt = rt
        self._tokens: list = []

    @property
    def type(self) -> str:
        return self._rt.kind

    @property
    def index(self) -> int:
        return self._rt.index

    def __str__(self) -> str:
        return self._rt.name

    def __repr__(self) -> str:
        return f"gpukit.Device({self._rt.name!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other._rt is self._rt

    def __hash__(self) -> int:
        return hash(self._rt.name)

    def synchronize(self) -> None:
        """Waits for the work queued on this device by the calling thread's current stream."""
        self._rt.synchronize()

    def __enter__(self) -> Device:
        self._tokens.append(scope(self._rt))
        return self

    def __exit__(self, *exc) -> None:
        unscope(self._tokens.pop())
