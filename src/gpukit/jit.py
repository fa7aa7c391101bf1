"""The kernel sources embedded in gpukit._native, and (with a GPU backend) their compilation."""

from __future__ import annotations

from . import _native


def list_kernels() -> list[str]:
    """File names of the built-in kernel sources (kernels/ at build time)."""
    return sorted(_native.kernel_sources())


def kernel_source(name: str) -> str:
    sources = _native.kernel_sources()
    if name not in sources:
        raise KeyError(f"no built-in kernel file {name!r}; have {', '.join(sorted(sources))}")
    return sources[name]
