"""Graphs on CUDA: the driver's stream capture (thread-local mode) of the calling thread's work,
on a capture stream of its own (so that no other thread's work on its usual stream is caught),
with the pool in capture mode (see rust/core/src/pool/graphs.rs); instantiated once, replayed
with one cuGraphLaunch on the thread's current stream."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import CudaError, GraphCaptureError
from .. import capture


@dataclass
class _Capture:
    backend: object
    stream: int  # being captured
    previous: int  # the thread's stream before, restored at the end
    pool_graph: int


@dataclass
class CudaGraph:
    exec: int
    pool_graph: int
    nodes: int
    stream: int  # where it last ran: its memory goes back as freed there


def _capture_stream(backend) -> int:
    thread = backend.thread
    stream = getattr(thread, "capture_stream", None)
    if stream is None:
        least, _ = backend.stream_priority_range()
        stream = thread.capture_stream = backend.create_stream(least)
    return stream


def begin_capture(backend) -> _Capture:
    device = backend.device
    if not device.graphs_supported:
        raise GraphCaptureError("this CUDA driver has no graph API (CUDA 11.4 or newer needed)")
    stream = _capture_stream(backend)
    token = _Capture(backend, stream, backend.thread.stream, 0)
    capture.begin(token)  # nesting is refused here, before anything changes
    try:
        token.pool_graph = backend.pool.begin_capture(stream)
        try:
            device.begin_capture(stream)
        except BaseException:
            backend.pool.end_capture()
            backend.pool.release_graph(token.pool_graph, token.previous)
            raise
    except BaseException:
        capture.end()
        raise
    backend.thread.stream = stream
    return token


def end_capture(backend, token: _Capture, keep: bool) -> CudaGraph | None:
    """Ends the capture; the graph instantiated (keep) or dropped with its memory."""
    capture.end()
    backend.thread.stream = token.previous
    device, pool = backend.device, backend.pool
    try:
        graph = device.end_capture(token.stream)
    except CudaError as e:
        pool.end_capture()
        pool.release_graph(token.pool_graph, token.previous)
        if not keep:
            return None
        raise GraphCaptureError(f"the capture failed: {e}") from e
    pool.end_capture()
    try:
        if not keep:
            pool.release_graph(token.pool_graph, token.previous)
            return None
        nodes = device.graph_nodes(graph)
        try:
            exe = device.instantiate_graph(graph)
        except BaseException:
            pool.release_graph(token.pool_graph, token.previous)
            raise
    finally:
        device.destroy_graph(graph)  # the executable graph does not need its template
    device.upload_graph(exe, token.previous)
    return CudaGraph(exe, token.pool_graph, nodes, token.previous)


def replay(backend, graph: CudaGraph) -> None:
    stream = backend.thread.stream
    backend.device.launch_graph(graph.exec, stream)
    graph.stream = stream


def release(backend, graph: CudaGraph) -> None:
    backend.device.destroy_graph_exec(graph.exec)
    backend.pool.release_graph(graph.pool_graph, graph.stream)


def held_bytes(backend, graph: CudaGraph) -> int:
    return backend.pool.graph_held_bytes(graph.pool_graph)
