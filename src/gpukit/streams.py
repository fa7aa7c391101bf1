"""Streams and events. On the CPU backend work is synchronous: streams only scope, events read the
host clock, so the same code runs everywhere."""

from __future__ import annotations

import contextlib
import time

from ._runtime import runtime


def _gpu(rt) -> bool:
    return hasattr(rt, "device")


# Driver streams are never destroyed: memory freed on a stream may still record events on it
# later, and buffers remember the stream they were last used on. A dropped Stream's handle waits
# here for the next Stream of the same priority.
_spare_streams: dict = {}


def _take_stream(rt, priority: int) -> int:
    spare = _spare_streams.get((id(rt), priority))
    return spare.pop() if spare else rt.device.create_stream(priority)


class Stream:
    """A non-blocking stream of the current device. `priority`: lower numbers run first, within
    the device's range (see `priority_range()`); 0 is the default. As a context manager, it is the
    calling thread's current stream within the block."""

    def __init__(self, priority: int = 0):
        self._rt = runtime()
        self.priority = priority
        self.handle = _take_stream(self._rt, priority) if _gpu(self._rt) else 0
        self._previous = []

    @staticmethod
    def priority_range() -> tuple[int, int]:
        """(least, greatest) priority; greatest is the more urgent (numerically lower)."""
        rt = runtime()
        return tuple(rt.device.stream_priority_range()) if _gpu(rt) else (0, 0)

    def synchronize(self) -> None:
        if _gpu(self._rt):
            self._rt.device.synchronize(self.handle)

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream from now on starts after `event` has completed."""
        if _gpu(self._rt):
            self._rt.device.wait_event(self.handle, event.handle)

    def __enter__(self) -> Stream:
        if _gpu(self._rt):
            self._previous.append(self._rt.stream)
            self._rt.set_stream(self.handle)
        return self

    def __exit__(self, *exc) -> None:
        if _gpu(self._rt):
            self._rt.set_stream(self._previous.pop())

    def __del__(self):
        if getattr(self, "handle", 0) and _gpu(self._rt):
            _spare_streams.setdefault((id(self._rt), self.priority), []).append(self.handle)


class Event:
    """A marker in a stream's work: `record()`, `synchronize()`, `done`, `elapsed_ms(end)`."""

    def __init__(self, timing: bool = True):
        self._rt = runtime()
        self.handle = self._rt.device.create_event(timing) if _gpu(self._rt) else 0
        self._host_time = None

    def record(self, stream: Stream | None = None) -> Event:
        if _gpu(self._rt):
            handle = stream.handle if stream is not None else self._rt.stream
            self._rt.device.record_event(self.handle, handle)
        else:
            self._host_time = time.perf_counter()
        return self

    @property
    def done(self) -> bool:
        return self._rt.device.event_done(self.handle) if _gpu(self._rt) else True

    def synchronize(self) -> None:
        if _gpu(self._rt):
            self._rt.device.synchronize_event(self.handle)

    def elapsed_ms(self, end: Event) -> float:
        """Milliseconds from this event to `end` (both recorded, `end` complete)."""
        if _gpu(self._rt):
            return self._rt.device.elapsed_ms(self.handle, end.handle)
        return (end._host_time - self._host_time) * 1e3

    def __del__(self):
        if getattr(self, "handle", 0) and _gpu(self._rt):
            with contextlib.suppress(Exception):  # at shutdown the driver may be gone already
                self._rt.device.destroy_event(self.handle)


def synchronize() -> None:
    """Waits for all work on the calling thread's current stream."""
    rt = runtime()
    if _gpu(rt):
        rt.synchronize()
