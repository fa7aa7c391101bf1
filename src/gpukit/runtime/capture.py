"""Graph capture as the runtime sees it: the calling thread's capture in progress, and the
refusal of what a capture cannot hold. A captured graph replays its device work later, so
anything that waits for the device or reads data back (to_numpy, item, a count that sizes an
output, an error flag checked at once) has nothing to wait for while capturing; it raises
GraphCaptureError instead, and the capture is ended cleanly by whoever began it."""

from __future__ import annotations

import threading

from ..errors import GraphCaptureError


class _State(threading.local):
    capture = None


_state = _State()


def current():
    """The calling thread's capture in progress (a backend's token), or None."""
    return _state.capture


def begin(token) -> None:
    if _state.capture is not None:
        raise GraphCaptureError(
            "this thread is capturing a graph already: captures do not nest (replaying a graph "
            "inside a capture is not supported either)"
        )
    _state.capture = token


def end() -> None:
    _state.capture = None


def refuse(what: str) -> None:
    """Raises GraphCaptureError when the calling thread is capturing: `what` would wait for the
    device or read data back."""
    if _state.capture is not None:
        raise GraphCaptureError(
            f"{what} inside graph capture: it waits for the device or reads data back, which a "
            "captured graph cannot do (do it before or after the capture; inputs and outputs "
            "of a graph are arrays made before it, refilled and read around replay())"
        )
