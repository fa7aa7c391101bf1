"""gpukit's runtime layer: the backends (cpu, cuda, a place for hip) behind one Backend protocol
(gpukit.runtime.backend), opened per (backend, device index) (devices); the op table (ops), the
kernel registry (kernels), argument blocks and shared constants from the kernels' headers (args),
the JIT and its cache (jit), and plans, the unit every repeated op runs as."""

from .devices import (
    Device,
    available_backends,
    open_backend,
    opened,
    runtime,
    unavailable_reasons,
    use_backend,
)
from .quota import current_quota, set_quota

__all__ = [
    "Device",
    "available_backends",
    "current_quota",
    "open_backend",
    "opened",
    "runtime",
    "set_quota",
    "unavailable_reasons",
    "use_backend",
]
