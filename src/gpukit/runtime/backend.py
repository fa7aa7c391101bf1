"""The Backend protocol: what the front end (gpukit.array and the op modules) may ask of a
backend, and what a backend declares it can do. Backends see buffers, byte offsets and layouts,
never GPUArrays; they live in gpukit.runtime.cpu, .cuda (and a place for .hip).

Plans. Every op is planned once per kind of call (the op, the operands' dtypes, shapes and
strides, and for some ops their alignment): `plan_*` returns a callable

    plan(stream, quota, *args) -> output buffer (None without outputs, a tuple for several)

whose args are, per argument, a buffer and a byte offset (arrays) or a value (scalars), in the
order the planner names them. A plan allocates its outputs from the pool (charged to `quota`)
in the same call. On CUDA a plan is a gpukit._core.Plan (one native call); on the CPU a Python
function over NumPy views of the pool's memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

SCALARS = (bool, int, float)


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers beyond the protocol's common part."""

    # Streams and events run on a device (else work is synchronous and events read the clock).
    device_streams: bool
    # Kernels are compiled at run time (RawKernel, ElementwiseKernel, jit.warmup).
    compiles_kernels: bool
    # The device reports its free and total memory.
    memory_info: bool
    # The scheduler's launch pacer applies to this backend's launches.
    launch_pacing: bool
    # Arrays expose __cuda_array_interface__.
    cuda_array_interface: bool
    # Guaranteed work can raise preemption words on the device and best-effort products can
    # yield to it (plan_preemptible_matmul, raise/lower_preemption, green contexts).
    preemption: bool = False


@dataclass(frozen=True)
class Layout:
    """An array operand as a planner sees it: dtype, shape, strides in bytes, and the largest
    power of two (at most 16) its first element's address is a multiple of."""

    dtype: np.dtype
    shape: tuple
    strides: tuple
    align: int = 16

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def ndim(self) -> int:
        return len(self.shape)


def address_align(address: int) -> int:
    """The largest power of two up to 16 that divides `address` (16 for 0)."""
    return 16 if address % 16 == 0 else address & -address


class Backend(Protocol):
    """One device of one backend. Attributes: `kind` ("cpu", "cuda", "hip"), `index`, `name`
    ("cpu", "cuda:0"), `capabilities`, `pool` (gpukit._core.Pool), `dlpack_device`
    ((DLPack device type, ordinal)), `total_memory`."""

    kind: str
    index: int
    name: str
    capabilities: Capabilities

    # --- streams, events, memory -----------------------------------------------------------------
    @property
    def stream(self) -> int: ...  # the calling thread's current stream
    # `thread.stream` is the same, read as one attribute on hot paths.
    def set_stream(self, stream: int | None) -> None: ...
    def synchronize(self, stream: int | None = None) -> None: ...
    def create_stream(self, priority: int) -> int: ...
    def stream_priority_range(self) -> tuple[int, int]: ...
    def create_event(self, timing: bool) -> int: ...
    def destroy_event(self, event: int) -> None: ...
    def record_event(self, event: int, stream: int) -> None: ...
    def wait_event(self, stream: int, event: int) -> None: ...
    def event_done(self, event: int) -> bool: ...
    def synchronize_event(self, event: int) -> None: ...
    def elapsed_ms(self, start: int, end: int) -> float: ...
    def memory_info(self) -> tuple[int, int] | None: ...
    def describe(self) -> str: ...

    # --- data movement ---------------------------------------------------------------------------
    def upload(self, host: np.ndarray, buffer, offset: int) -> None: ...
    def download(self, host: np.ndarray, buffer, offset: int) -> None: ...

    # --- graphs (gpukit.graphs; see gpukit.runtime.capture) ---------------------------------------
    # begin_capture: starts recording the calling thread's work (GraphCaptureError when it
    # captures already); end_capture: ends it, returning a graph handle (keep) or dropping
    # everything (not keep); the handle's `nodes` counts its steps.
    def begin_capture(self): ...
    def end_capture(self, token, keep: bool): ...
    def replay_graph(self, graph) -> None: ...
    def release_graph(self, graph) -> None: ...
    def graph_held_bytes(self, graph) -> int: ...

    # --- plans (see the module's docstring) ------------------------------------------------------
    def plan_elementwise(self, op, loop, inputs, out: Layout, allocate: bool): ...
    def plan_reduce(self, name, src: Layout, axes, out: Layout, ddof=0): ...
    def plan_cumsum(self, src: Layout, axis: int, out: Layout): ...
    # `lower`: only the lower triangle of each result matrix is needed (elements above it may be
    # left unwritten).
    def plan_matmul(self, a: Layout, b: Layout, out: Layout, bias, row_block, activation=None,
                    residual=None, tf32=False, lower=False): ...  # fmt: skip
    # The kernel family a product takes (gpukit.linalg.matmul_path), and all of them (info()).
    def matmul_path(self, a: Layout, b: Layout, out: Layout, tf32: bool) -> str: ...
    def describe_matmul(self, tf32: bool) -> str: ...
    def plan_arange(self, out: Layout): ...
    def plan_philox(self, kernel: str, out: Layout, affine: bool): ...
    def plan_gather(self, src: Layout, out: Layout, indices, positions, layout, check, scatter): ...
    def plan_nn_rows(self, kind, src: Layout, axis, out: Layout, weight, bias, residual=None): ...
    def plan_embedding(self, ids: Layout, table: Layout, out: Layout): ...
    def plan_rope(self, x: Layout, cos: Layout, sin: Layout, out: Layout, interleaved): ...
    # kv_length (None or an int32 / int64 Layout of one length or one per batch entry): only
    # that many keys count, read on the device; None instead of a plan where no kernel of the
    # backend reads it for this call (the front end then cuts the keys itself).
    def plan_attention(self, q, k, v, mask, kv_length, out: Layout, causal, scale): ...
    def nonzero(self, mask: Layout, buffer, offset: int, stream, quota): ...
    # sorting (gpukit.sorting): stable, NumPy's order (NaN last, -0.0 == +0.0)
    def plan_sort(self, src: Layout, keys: bool, index: bool, descending: bool): ...
    def plan_searchsorted(self, a: Layout, v: Layout, right: bool, sorter): ...
    def unique(self, x: Layout, buffer, offset, index, inverse, counts, equal_nan, stream,
               quota): ...  # fmt: skip
    def plan_histogram(self, x: Layout, edges: Layout, counts: bool, bins: bool): ...
    def plan_bincount(self, x: Layout, nbins: int, weights): ...
    # A 1-D discrete Fourier transform along the last axis of src (any strides) into a contiguous
    # result, multiplied by `scale`: kind "c2c" (complex, n values), "r2c" (real n values to
    # n // 2 + 1 complex) or "c2r" (n // 2 + 1 complex, a Hermitian half-spectrum, to n real);
    # `inverse`: the exponent's sign is + (c2r always is).
    def plan_fft(self, src: Layout, kind: str, n: int, inverse: bool, scale: float): ...
    # linear algebra (gpukit.linalg): `op` one of cholesky solve inv det slogdet qr eigh svd on
    # contiguous stacks of matrices; `outputs`: the contiguous Layouts the plan allocates (an
    # int32 info per matrix last where the op can fail); `options`: (name, value) pairs. A
    # backend whose linalg_max_n("solve") is a number also plans the blocked LU's steps
    # (decompositions._blocked_lu: lu_panel, lu_trinv, lu_swap in place on their inputs, lu_det;
    # lu_panel's one output, where asked, a contiguous copy of the factored panel).
    def plan_linalg(self, op: str, inputs: tuple, outputs: tuple, options: tuple): ...
    # The largest n of the n x n matrices plan_linalg(op) takes for `dtype` (None: any; 0: none):
    # the front end factors larger ones in blocks where it has a blocked algorithm.
    def linalg_max_n(self, op: str, dtype) -> int | None: ...
    def copy_from_file(self, file, copies, report) -> None: ...
