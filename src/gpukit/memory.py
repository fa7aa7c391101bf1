"""Device memory: the pool's limit, statistics, cache, and quotas.

Every GPUArray's memory comes from the pool of its device (gpukit._core.Pool, in Rust). Freed
blocks are cached for reuse; under pressure (the limit, or the device itself full) the cache is
released oldest first, then evictable arrays (`GPUArray.evictable = True`) are spilled to host
memory, least recently used first, and restored bit-exact on their next use.
"""

from __future__ import annotations

import contextlib

from .base.sizes import parse_size
from .runtime import current_quota, runtime, set_quota

__all__ = [
    "current_quota",
    "empty_cache",
    "get_limit",
    "is_resident",
    "parse_size",
    "quota",
    "reset_peak_stats",
    "set_limit",
    "spill",
    "stats",
]


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
    info = rt.memory_info()
    if info is not None:
        out["device_free_bytes"], out["device_total_bytes"] = info
    return out


def reset_peak_stats() -> None:
    """Starts the peak figures of stats() afresh from the current values."""
    runtime().pool.reset_peak_stats()


def empty_cache() -> None:
    """Gives every cached (unused) block back to the device."""
    runtime().pool.empty_cache()


@contextlib.contextmanager
def quota(limit):
    """Within the block, this thread's new arrays may hold at most `limit` bytes together; past
    it, allocating raises OutOfMemoryError (other threads are unaffected). Opened inside another
    quota or a scheduler task, it only narrows that one: its arrays count there too, also after
    the block ends."""
    pool = runtime().pool
    qid = pool.create_quota(parse_size(limit), parent=current_quota())
    previous = set_quota(qid)
    try:
        yield qid
    finally:
        set_quota(previous)
        pool.drop_quota(qid)


def spill(array) -> bool:
    """Moves an evictable array's memory (its whole buffer, views included) to host memory now;
    False if it is not resident or in use right now. It comes back on its next use."""
    return array._buf.spill()


def is_resident(array) -> bool:
    """Whether an array's memory is on its device now (False while spilled to host memory)."""
    return array._buf.resident
