"""Device memory: the pool's limit, statistics, cache, and quotas.

Every GPUArray's memory comes from the pool of its device (gpukit._core.Pool, in Rust). Freed
blocks are cached for reuse; under pressure (the limit, or the device itself full) the cache is
released oldest first, then evictable arrays (`GPUArray.evictable = True`) are spilled to host
memory, least recently used first, and restored bit-exact on their next use.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading

from ._runtime import runtime

_UNITS = {"": 1, "B": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_UNITS.update({f"{k}IB": 2 ** (10 * i) for i, k in enumerate("KMGT", start=1)})
_UNITS.update({f"{k}B": v for k, v in list(_UNITS.items()) if len(k) == 1 and k != "B"})
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*$")


class _ThreadState(threading.local):
    quota = None  # a class default: no exception raised on the hot path


_local = _ThreadState()


def parse_size(value) -> int:
    """Bytes from an int or a string such as "20GiB", "512 MB", "1.5G" (K/M/G/T are powers of
    1000, KiB/MiB/GiB/TiB of 1024)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"a memory size cannot be negative: {value}")
        return value
    m = _SIZE.match(str(value))
    unit = m.group(2).upper() if m else None
    if not m or unit not in _UNITS:
        raise ValueError(f"not a memory size: {value!r} (examples: 1048576, '512MiB', '20GiB')")
    return int(float(m.group(1)) * _UNITS[unit])


def set_limit(limit) -> None:
    """Caps the bytes the current device's pool holds (None: no cap beyond the device)."""
    runtime().pool.limit = None if limit is None else parse_size(limit)


def get_limit() -> int | None:
    return runtime().pool.limit


def stats() -> dict:
    """allocated/reserved/cached/peak bytes, allocation count, cache hits, backend calls,
    evictions, spilled bytes (total and now), restores, fragmentation, the limit; on a GPU also
    the device's free and total bytes."""
    rt = runtime()
    out = dict(rt.pool.stats())
    if hasattr(rt, "device"):
        out["device_free_bytes"], out["device_total_bytes"] = rt.device.memory_info()
    return out


def reset_peak_stats() -> None:
    """Starts the peak figures of stats() afresh from the current values."""
    runtime().pool.reset_peak_stats()


def empty_cache() -> None:
    """Gives every cached (unused) block back to the device."""
    runtime().pool.empty_cache()


def current_quota():
    """The quota id this thread's allocations are charged to, or None."""
    return _local.quota


@contextlib.contextmanager
def quota(limit):
    """Within the block, this thread's new arrays may hold at most `limit` bytes together; past
    it, allocating raises OutOfMemoryError (other threads are unaffected). Opened inside another
    quota or a scheduler task, it only narrows that one: its arrays count there too, also after
    the block ends."""
    pool = runtime().pool
    qid = pool.create_quota(parse_size(limit), parent=current_quota())
    previous = current_quota()
    _local.quota = qid
    try:
        yield qid
    finally:
        _local.quota = previous
        pool.drop_quota(qid)


def apply_environment(pool) -> None:
    """GPUKIT_MEMORY_LIMIT, when set, caps a newly opened pool."""
    limit = os.environ.get("GPUKIT_MEMORY_LIMIT")
    if limit:
        pool.limit = parse_size(limit)
