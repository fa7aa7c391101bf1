"""Memory sizes as people write them ("20GiB", "512 MB", 1048576) and the environment settings
gpukit reads (GPUKIT_BACKEND, GPUKIT_MEMORY_LIMIT)."""

from __future__ import annotations

import os
import re

from ..errors import BackendUnavailableError

_UNITS = {"": 1, "B": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_UNITS.update({f"{k}IB": 2 ** (10 * i) for i, k in enumerate("KMGT", start=1)})
_UNITS.update({f"{k}B": v for k, v in list(_UNITS.items()) if len(k) == 1 and k != "B"})
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*$")

BACKENDS = ("cuda", "hip", "cpu")


def parse_size(value) -> int:
    """Bytes from an int or a string such as "20GiB", "512 MB", "1.5G" (K/M/G/T are powers of
    1000, KiB/MiB/GiB/TiB of 1024)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"a memory size cannot be negative: {value}")
        return value  # past 64 bits: the pool's boundary raises OverflowError naming it
    m = _SIZE.match(str(value))
    unit = m.group(2).upper() if m else None
    if not m or unit not in _UNITS:
        raise ValueError(f"not a memory size: {value!r} (examples: 1048576, '512MiB', '20GiB')")
    number = float(m.group(1))
    if number == float("inf"):
        raise OverflowError(f"memory size {value!r} is more than 2**64 - 1 bytes")
    return int(number * _UNITS[unit])


def requested_backend() -> str | None:
    """GPUKIT_BACKEND, checked: a backend name, or None when unset."""
    forced = os.environ.get("GPUKIT_BACKEND", "").strip().lower()
    if forced and forced not in BACKENDS:
        raise BackendUnavailableError(
            f"GPUKIT_BACKEND={forced!r} is not a backend; choose one of {', '.join(BACKENDS)}"
        )
    return forced or None


def memory_limit() -> int | None:
    """GPUKIT_MEMORY_LIMIT in bytes, or None when unset."""
    limit = os.environ.get("GPUKIT_MEMORY_LIMIT")
    if not limit:
        return None
    try:
        size = parse_size(limit)
        if size >= 2**64:
            raise OverflowError(f"memory size {limit!r} is more than 2**64 - 1 bytes")
    except (ValueError, OverflowError) as e:
        raise type(e)(f"GPUKIT_MEMORY_LIMIT={limit!r}: {e}") from None
    return size
