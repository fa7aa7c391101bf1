"""Graphs: a sequence of gpukit work captured once and replayed with one launch, in the manner
of torch.cuda.graph and CuPy's stream capture.

    static_x = gk.zeros((8, 1024), "float32")        # inputs: arrays made before the capture
    with gk.graph() as g:                             # or: g = gk.Graph(); with g.capture(): ...
        static_y = gk.nn.softmax(static_x * 2.0)      # outputs: arrays made inside it
    static_x[...] = new_data                          # refill the inputs (copy into them) ...
    g.replay()                                        # ... rerun everything at once ...
    print(static_y.to_numpy())                        # ... and read the outputs

    g = gk.graph(fn, *static_args)                    # the function form: fn's result is
    out = g.replay()                                  # g.outputs, returned by every replay

What a capture records is device work: each op's kernels with their arguments and addresses
fixed at capture time; the capture itself runs none of it (arrays made inside hold nothing until
the first replay). Python runs once, at capture; a replay repeats the device work only, so
Python scalars and shapes are baked in, and an array must be refilled in place (copied into),
not rebound, to change a replay's input. Inside a capture, work that waits for the device or
reads data back (to_numpy, item, printing an array, nonzero's count, an op that checks its
result on the host, synchronize, events, loading files, asarray of host data) raises
GraphCaptureError; the capture is then ended and dropped, nothing is kept, and the thread can go
on. Captures do not nest. The first use of an op may happen inside a capture (its kernel is
compiled and loaded then).

Memory: arrays made inside the capture come from the pool as usual, but every array the graph's
work touches keeps its memory reserved for the graph's life (never spilled; when dropped, its
memory is held, not reused by anything else) until `release()` (or the graph's garbage
collection); `held_bytes` says how much dropped memory it holds. During the capture the pool
spills nothing and gives nothing back, and the scheduler's launch pacing is off.

On CUDA, the capture is the driver's stream capture of the calling thread's work (thread-local
mode, on a capture stream of its own; other threads are unaffected) and a replay is one
cuGraphLaunch on the thread's current stream, ordered after the work queued there before. On the
CPU backend a capture records each op's NumPy work with the memory it would run on, and a replay
runs them in order: the same results and the same rules, without a speedup.
"""

from __future__ import annotations

import contextlib

from .errors import GraphCaptureError
from .runtime import runtime

__all__ = ["Graph", "graph"]


class Graph:
    """A captured sequence of gpukit work on one device (see the module's documentation).
    `outputs` holds what the function form's function returned (None otherwise)."""

    def __init__(self):
        self._rt = None
        self._handle = None
        self._state = "empty"  # capturing, ready, released
        self.outputs = None

    @contextlib.contextmanager
    def capture(self):
        """Records the work of the block (on the current device, by the calling thread)."""
        if self._state != "empty":
            raise GraphCaptureError(
                f"this graph is {self._state} already: a Graph is captured once (make a new one)"
            )
        rt = runtime()
        token = rt.begin_capture()
        self._rt, self._state = rt, "capturing"
        try:
            yield self
        except BaseException:
            self._state = "released"
            rt.end_capture(token, keep=False)
            raise
        try:
            self._handle = rt.end_capture(token, keep=True)
        except BaseException:
            self._state = "released"
            raise
        self._state = "ready"

    def replay(self):
        """Runs the captured work again (queued on the calling thread's current stream);
        returns `outputs`."""
        if self._state != "ready":
            raise GraphCaptureError(_NOT_READY[self._state])
        from .runtime import capture

        capture.refuse("replaying a graph")
        self._rt.replay_graph(self._handle)
        return self.outputs

    __call__ = replay

    def release(self) -> None:
        """Frees the graph: the memory it held goes back to the pool (after work already queued
        with it). Replaying it afterwards raises GraphCaptureError."""
        if self._state == "ready":
            self._state = "released"
            handle, self._handle = self._handle, None
            self._rt.release_graph(handle)
        elif self._state == "empty":
            self._state = "released"

    @property
    def nodes(self) -> int:
        """How many kernel launches (device-side steps) a replay runs."""
        return self._handle.nodes if self._state == "ready" else 0

    @property
    def held_bytes(self) -> int:
        """Bytes of memory of dropped arrays that this graph keeps reserved."""
        return self._rt.graph_held_bytes(self._handle) if self._state == "ready" else 0

    @property
    def device(self) -> str | None:
        return None if self._rt is None else self._rt.name

    def __repr__(self) -> str:
        return f"<gpukit.Graph {self._state}, {self.nodes} steps, device {self.device}>"

    def __del__(self):
        with contextlib.suppress(Exception):  # at shutdown the driver may be gone already
            self.release()


_NOT_READY = {
    "empty": "this graph has captured nothing yet (use `with graph.capture():`)",
    "capturing": "a graph cannot be replayed while it is being captured",
    "released": "this graph was released (or its capture failed); capture a new one",
}


def graph(fn=None, *args, **kwargs):
    """`with gpukit.graph() as g:` captures the block into a new Graph (`with gpukit.graph(g):`
    into `g`, as torch.cuda.graph). `gpukit.graph(fn, *args, **kwargs)` captures fn(*args,
    **kwargs) and returns the Graph, with fn's result as `outputs` (returned by each replay)."""
    if fn is None or isinstance(fn, Graph):
        if args or kwargs:
            raise TypeError("gpukit.graph(graph) takes no other arguments")
        return (fn if fn is not None else Graph()).capture()
    if not callable(fn):
        raise TypeError(f"gpukit.graph takes a Graph or a function, not {type(fn).__name__}")
    g = Graph()
    with g.capture():
        g.outputs = fn(*args, **kwargs)
    return g
