"""The memory quota the calling thread's allocations are charged to (a pool quota id, or None):
set by gpukit.memory.quota() and the scheduler's tasks, read by every allocation."""

from __future__ import annotations

import threading


class _ThreadState(threading.local):
    quota = None  # a class default: no exception raised on the hot path


local = _ThreadState()


def current_quota():
    """The quota id this thread's allocations are charged to, or None."""
    return local.quota


def set_quota(quota):
    """Makes `quota` this thread's; returns the one it replaces."""
    previous = local.quota
    local.quota = quota
    return previous
