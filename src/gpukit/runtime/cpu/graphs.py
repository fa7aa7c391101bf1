"""Graphs on the CPU backend: a capture records each plan call's NumPy work with the addresses
and layouts it would run on, without running it (as a GPU's capture runs nothing; the pool in
capture mode keeps that memory reserved, as on a GPU), and a replay runs the recorded steps in
order. The same results as the GPU's graphs, and the same
rules (static inputs and outputs, nothing read back inside), with no speedup."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import capture


@dataclass
class _Capture:
    backend: object
    pool_graph: int
    steps: list = field(default_factory=list)

    def record(self, compute, values, arrays) -> None:
        """values: the plan's scalar inputs (None where an array goes); arrays: (address,
        Layout) of its array inputs and outputs, in order."""
        self.steps.append((compute, values, arrays))


@dataclass
class CpuGraph:
    steps: list
    pool_graph: int

    @property
    def nodes(self) -> int:
        return len(self.steps)


def begin_capture(backend) -> _Capture:
    token = _Capture(backend, 0)
    capture.begin(token)
    try:
        token.pool_graph = backend.pool.begin_capture(0)
    except BaseException:
        capture.end()
        raise
    return token


def end_capture(backend, token: _Capture, keep: bool) -> CpuGraph | None:
    capture.end()
    backend.pool.end_capture()
    if not keep:
        backend.pool.release_graph(token.pool_graph, 0)
        return None
    return CpuGraph(token.steps, token.pool_graph)


def replay(backend, graph: CpuGraph) -> None:
    view = backend.view_at
    for compute, values, arrays in graph.steps:
        views = iter([view(address, layout) for address, layout in arrays])
        operands = [next(views) if v is None else v for v in values] + list(views)
        backend.run_compute(compute, operands)


def release(backend, graph: CpuGraph) -> None:
    graph.steps = []
    backend.pool.release_graph(graph.pool_graph, 0)


def held_bytes(backend, graph: CpuGraph) -> int:
    return backend.pool.graph_held_bytes(graph.pool_graph)
