"""Streams and events. On a backend without device streams (the CPU) work is synchronous:
streams only scope, events read the host clock, so the same code runs everywhere."""

from __future__ import annotations

import contextlib
import operator

from .runtime import capture, runtime

# Driver streams are never destroyed: memory freed on a stream may still record events on it
# later, and buffers remember the stream they were last used on. A dropped Stream's handle waits
# here for the next Stream of the same priority.
_spare_streams: dict = {}


def _take_stream(rt, priority: int) -> int:
    spare = _spare_streams.get((id(rt), priority))
    return spare.pop() if spare else rt.create_stream(priority)


class Stream:
    """A non-blocking stream of the current device. `priority`: lower numbers run first, within
    the device's range (see `priority_range()`); 0 is the default. As a context manager, it is the
    calling thread's current stream within the block."""

    def __init__(self, priority: int = 0):
        try:
            priority = operator.index(priority)
        except TypeError:
            raise TypeError(f"priority must be an int, not {type(priority).__name__}") from None
        if not -(2**31) <= priority < 2**31:
            raise ValueError(f"priority must fit a 32-bit int, got {priority}")
        self._rt = runtime()
        self.priority = priority
        self._device = self._rt.capabilities.device_streams
        self.handle = _take_stream(self._rt, priority) if self._device else 0
        self._previous = []

    @classmethod
    def green(cls, sm_count: int, priority: int = 0) -> Stream:
        """A stream of a new green context holding about `sm_count` of the device's SMs (CUDA
        12.4+ drivers; `gpukit.info()` says whether they are available): its work runs on those
        SMs only. `sm_count` on the result is what the driver granted."""
        for name, v in (("sm_count", sm_count), ("priority", priority)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{name} must be an int, not {type(v).__name__}")
        rt = runtime()
        if not rt.capabilities.preemption:
            raise ValueError(f"green contexts need a CUDA device; the backend is {rt.kind}")
        available, why = rt.green_contexts()
        if not available:
            raise ValueError(f"green contexts are not available: {why}")
        if not 1 <= sm_count <= rt.sm_count:
            raise ValueError(
                f"sm_count must be 1 to {rt.sm_count} (the device's SMs), not {sm_count}"
            )
        self = cls.__new__(cls)
        self._rt = rt
        self.priority = priority
        self._device = True
        self.handle, self.sm_count = rt.green_stream(sm_count, priority)
        self._previous = []
        self._green = True  # kept for the process, never recycled as a plain stream
        return self

    @staticmethod
    def priority_range() -> tuple[int, int]:
        """(least, greatest) priority; greatest is the more urgent (numerically lower)."""
        return tuple(runtime().stream_priority_range())

    def synchronize(self) -> None:
        if self._device:
            self._rt.synchronize(self.handle)

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream from now on starts after `event` has completed."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event takes an Event, not {type(event).__name__}")
        self._rt.wait_event(self.handle, event.handle)

    def __enter__(self) -> Stream:
        capture.refuse("switching to another stream")  # a capture records one stream
        if self._device:
            self._previous.append(self._rt.stream)
            self._rt.set_stream(self.handle)
        return self

    def __exit__(self, *exc) -> None:
        if self._device:
            self._rt.set_stream(self._previous.pop())

    def __del__(self):
        if getattr(self, "handle", 0) and self._device and not getattr(self, "_green", False):
            _spare_streams.setdefault((id(self._rt), self.priority), []).append(self.handle)


class Event:
    """A marker in a stream's work: `record()`, `synchronize()`, `done`, `elapsed_ms(end)`."""

    def __init__(self, timing: bool = True):
        self._rt = runtime()
        self.handle = self._rt.create_event(timing)

    def record(self, stream: Stream | None = None) -> Event:
        handle = stream.handle if stream is not None else self._rt.stream
        self._rt.record_event(self.handle, handle)
        return self

    @property
    def done(self) -> bool:
        return self._rt.event_done(self.handle)

    def synchronize(self) -> None:
        self._rt.synchronize_event(self.handle)

    def elapsed_ms(self, end: Event) -> float:
        """Milliseconds from this event to `end` (both recorded, `end` complete)."""
        if not isinstance(end, Event):
            raise TypeError(f"elapsed_ms takes the end Event, not {type(end).__name__}")
        return self._rt.elapsed_ms(self.handle, end.handle)

    def __del__(self):
        if getattr(self, "handle", None) is not None:
            with contextlib.suppress(Exception):  # at shutdown the driver may be gone already
                self._rt.destroy_event(self.handle)


def synchronize() -> None:
    """Waits for all work on the calling thread's current stream."""
    runtime().synchronize()
