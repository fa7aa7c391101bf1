"""The CUDA backend's graph calls (gpukit/runtime/cuda/graphs.py) over a recording stand-in for
the device and a real pool on host memory: the order of the driver calls, the streams they get,
and that every failure ends the capture cleanly (the pool not capturing, its graph released, the
thread's stream restored). The GPU machine runs the real thing (tests/api/test_graphs.py)."""

from types import SimpleNamespace

import pytest

from gpukit import _core, _native
from gpukit.errors import CudaError, GraphCaptureError
from gpukit.runtime import capture
from gpukit.runtime.cuda import graphs

USER_STREAM, CAPTURE_STREAM, TEMPLATE, EXEC = 5, 99, 11, 22


class Device:
    graphs_supported = True

    def __init__(self, fail=None):
        self.calls, self.fail = [], fail

    def _call(self, name, *args):
        self.calls.append((name, *args))
        if name == self.fail:
            raise CudaError(f"{name} failed", name, 900, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED")

    def begin_capture(self, s):
        self._call("begin_capture", s)

    def end_capture(self, s):
        self._call("end_capture", s)
        return TEMPLATE

    def graph_nodes(self, g):
        return 3

    def instantiate_graph(self, g):
        self._call("instantiate_graph", g)
        return EXEC

    def destroy_graph(self, g):
        self._call("destroy_graph", g)

    def upload_graph(self, e, s):
        self._call("upload_graph", e, s)

    def launch_graph(self, e, s):
        self._call("launch_graph", e, s)

    def destroy_graph_exec(self, e):
        self._call("destroy_graph_exec", e)


def backend(fail=None):
    return SimpleNamespace(
        device=Device(fail),
        pool=_core.Pool(_native.host_allocator_table()),
        thread=SimpleNamespace(stream=USER_STREAM),
        stream_priority_range=lambda: (0, -5),
        create_stream=lambda priority: CAPTURE_STREAM,
    )


def test_capture_replay_release_in_order():
    b = backend()
    token = graphs.begin_capture(b)
    assert b.thread.stream == CAPTURE_STREAM and capture.current() is token
    assert b.pool.capturing
    kept = b.pool.allocate(1 << 20, CAPTURE_STREAM)  # an output made inside
    g = graphs.end_capture(b, token, keep=True)
    assert b.thread.stream == USER_STREAM and capture.current() is None
    assert not b.pool.capturing and g.nodes == 3
    assert b.device.calls == [
        ("begin_capture", CAPTURE_STREAM),
        ("end_capture", CAPTURE_STREAM),
        ("instantiate_graph", TEMPLATE),
        ("destroy_graph", TEMPLATE),
        ("upload_graph", EXEC, USER_STREAM),
    ]
    b.thread.stream = 7
    graphs.replay(b, g)
    assert b.device.calls[-1] == ("launch_graph", EXEC, 7) and g.stream == 7
    del kept
    assert graphs.held_bytes(b, g) == 1 << 20  # the dropped output stays the graph's
    graphs.release(b, g)
    assert b.device.calls[-1] == ("destroy_graph_exec", EXEC)
    assert b.pool.stats()["graph_held_bytes"] == 0
    with pytest.raises(GraphCaptureError, match="not live"):
        b.pool.release_graph(g.pool_graph, 7)


@pytest.mark.parametrize("fail", ["end_capture", "instantiate_graph"])
def test_a_failed_capture_ends_cleanly(fail):
    b = backend(fail)
    token = graphs.begin_capture(b)
    b.pool.allocate(1 << 20, CAPTURE_STREAM)
    error = GraphCaptureError if fail == "end_capture" else CudaError
    with pytest.raises(error):
        graphs.end_capture(b, token, keep=True)
    assert b.thread.stream == USER_STREAM and capture.current() is None
    assert not b.pool.capturing
    assert b.pool.stats()["graph_held_bytes"] == 0
    with pytest.raises(GraphCaptureError, match="not live"):
        b.pool.release_graph(token.pool_graph, USER_STREAM)
    if fail == "instantiate_graph":
        assert ("destroy_graph", TEMPLATE) in b.device.calls


def test_dropping_a_capture_destroys_its_template():
    b = backend()
    token = graphs.begin_capture(b)
    assert graphs.end_capture(b, token, keep=False) is None
    assert b.device.calls[-1] == ("destroy_graph", TEMPLATE)
    assert not b.pool.capturing and capture.current() is None


def test_begin_failures_leave_nothing_behind():
    b = backend("begin_capture")
    with pytest.raises(CudaError):
        graphs.begin_capture(b)
    assert b.thread.stream == USER_STREAM and capture.current() is None
    assert not b.pool.capturing
    b = backend()
    token = graphs.begin_capture(b)
    with pytest.raises(GraphCaptureError, match="nest"):
        graphs.begin_capture(b)
    assert b.device.calls == [("begin_capture", CAPTURE_STREAM)]
    graphs.end_capture(b, token, keep=False)
    b.device.graphs_supported = False
    with pytest.raises(GraphCaptureError, match="graph API"):
        graphs.begin_capture(b)
