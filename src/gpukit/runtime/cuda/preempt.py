"""Preemptible best-effort products (issue 17). A best-effort task of a scheduler with preemption
on runs its sm_90a products in their preemptible form (kernels/gemm_sm90.cu, GK_GEMM_PREEMPT):
tiles come from a counter, and while guaranteed work has raised one of the device's preemption
words (on the GPU, by stream memory operations around its work) the kernel takes no more tiles,
stops the tiles it holds within GK_PREEMPT_EVERY K slices, saves their fp32 accumulators (one save
slot per block) and ends. One call:

    control words = (counter 0, saved 0, records unwritten, started 0)
    wait on the host until no guaranteed task runs
    up to RELAUNCHES + 1 times: launch (yields when a word is raised; each block first resumes
        the tile it saved); wait for it; done once the counter passed the last tile and no saved
        tile waits; otherwise wait on the host until no guaranteed task runs (the wait for the
        launch, its read-back and this wait are one native call that never takes the GIL:
        _core.preempt_read_back, through the backend)
    otherwise: launch watching words that are never raised (finishes)

The waits are on the host, never on the GPU: a stream waiting there for a word (cuStreamWaitValue)
is invisible to the driver's ordering, which may queue the guaranteed stream's work behind it on
one hardware queue, so the word would never be lowered (seen as hangs of 3 processes in 6 on the
H100). Every launch has the same grid, so block b finds its saved tile in save slot b. A tile
resumed from its saved accumulators continues the same wgmma chain from the K slice it stopped
at, so every tile is the same sequence of operations, in the same K order, as in one
uninterrupted launch: the same bits. Past RELAUNCHES preemptions the rest of the product runs
without yielding (the pacer's cap on best-effort work in flight still applies to it)."""

from __future__ import annotations

import numpy as np

from ... import _core
from ...base import strides
from ..args import CONSTANTS
from ..backend import Layout
from . import gemm, gemm_plan
from .matmul import _path, _residual_strides, view
from .plans import PlanBuilder

SLOTS = CONSTANTS["GK_PREEMPT_SLOTS"]
WORD = 4  # bytes of a preemption word (a 32-bit stream memory operation)
# Each preemption costs a relaunch (~25 us of launch, the saved tiles' accumulators back); past
# this many the rest runs without yielding, so a best-effort product always ends.
RELAUNCHES = 32
CTL_WORDS = CONSTANTS["GK_PREEMPT_CTL_WORDS"]
RECORD_WORDS = CONSTANTS["GK_PREEMPT_RECORD_WORDS"]
EVERY = CONSTANTS["GK_PREEMPT_EVERY"]  # K slices between two checks of the words (default)
# A block's record (after CTL_WORDS): saved tile + 1, its next K slice, then %globaltimer stamps
# (int64 ns at these int32 word offsets): the check that found a word raised (0: none), the last
# that found them lowered, the block's end.
STAMP_SEEN = CONSTANTS["GK_PREEMPT_STAMP_SEEN"]
STAMP_CLEAR = CONSTANTS["GK_PREEMPT_STAMP_CLEAR"]
STAMP_EXIT = CONSTANTS["GK_PREEMPT_STAMP_EXIT"]
FRESH = 2  # the control word saying that the save records are not yet written


def control_words(grid: int) -> np.ndarray:
    """The control words a call starts from (kernels/geometry.cuh): counter 0, no saved tile,
    records unwritten (the first launch writes them), no block started."""
    words = np.zeros(CTL_WORDS + RECORD_WORDS * grid, np.int32)
    words[FRESH] = 1
    return words


def stamps(words: np.ndarray, grid: int) -> dict[str, np.ndarray]:
    """The launch's %globaltimer stamps (ns) from its control words read back: per block, the
    check that found a word raised (0: none did), the last that found them lowered (0: none),
    and the block's end."""
    records = np.ascontiguousarray(words[CTL_WORDS : CTL_WORDS + RECORD_WORDS * grid])
    records = records.view(np.int32).reshape(grid, RECORD_WORDS)
    at = {"seen": STAMP_SEEN, "clear": STAMP_CLEAR, "exit": STAMP_EXIT}
    return {
        k: np.ascontiguousarray(records[:, w : w + 2]).view(np.int64)[:, 0] for k, w in at.items()
    }


class PreemptiblePlan:
    """Called like a gpukit._core.Plan: (stream, quota, *args) -> the output buffer."""

    def __init__(self, backend, yielding, finishing, out_bytes: int, tiles: int, grid: int,
                 save_bytes: int, relaunches: int):  # fmt: skip
        self.backend = backend
        self.yielding = yielding
        self.finishing = finishing
        self.out_bytes = out_bytes
        self.tiles = tiles
        self.grid = grid
        self.save_bytes = save_bytes  # one tile of fp32 accumulators per block
        self.relaunches = relaunches

    def __call__(self, stream: int, quota, *args):
        b = self.backend
        out = b.pool.allocate(self.out_bytes, stream, quota)
        ctl = b.pool.allocate(WORD * (CTL_WORDS + RECORD_WORDS * self.grid), stream, quota)
        save = b.pool.allocate(self.save_bytes, stream, quota)
        (address,) = b.addresses((ctl,), (0,), stream)
        for i, value in enumerate(control_words(self.grid)[:CTL_WORDS]):
            b.device.write_value(stream, address + WORD * i, int(value))
        call = (stream, quota, *args, out, 0, ctl, 0, save, 0)
        _core.wait_guaranteed_idle()
        for _ in range(self.relaunches + 1):
            self.yielding(*call)
            # Waits for the launch, reads (tiles taken, saved tiles waiting) and, unless the
            # product is done, waits until no guaranteed task runs: one call without the GIL, so
            # this thread never takes the GIL while the guaranteed task that preempted it runs.
            if b.preempt_read_back(address, stream, self.tiles):
                return out
        self.finishing(*call)
        return out  # ctl and save are freed on this stream: reused only after these launches


def words(backend) -> int:
    """Address of the device's preemption words (then as many that are never raised)."""
    return backend.device.preempt_flags


def raise_word(backend, stream: int, slot: int) -> None:
    """Raises `slot`'s word on `stream` (a 32-bit write of 1 when the stream reaches it)."""
    backend.device.write_value(stream, words(backend) + WORD * _slot(slot), 1)


def lower_word(backend, stream: int, slot: int) -> None:
    backend.device.write_value(stream, words(backend) + WORD * _slot(slot), 0)


def _slot(slot: int) -> int:
    if not 0 <= slot < SLOTS:
        raise ValueError(f"preemption word {slot} does not exist (the device has {SLOTS})")
    return slot


def available(backend) -> bool:
    """Whether products can run preemptibly here: the sm_90a GEMM and stream memory operations."""
    return backend.sm90a and backend.device.has_stream_memops


def plan_preemptible_matmul(backend, a: Layout, b: Layout, out: Layout, bias, activation=None,
                            residual=None, relaunches=RELAUNCHES, every=EVERY):  # fmt: skip
    """The preemptible plan of out = activation(a @ b + bias) + residual (arguments as
    plan_matmul's; `every`: K slices between two checks of the words), or None where the product
    does not run on the sm_90a GEMM with its whole epilogue fused (float32 included: its TF32
    operand copies would not yield)."""
    if not 1 <= every < 2**31:
        raise ValueError(f"every: K slices between two checks, at least 1 (got {every})")
    if not available(backend):
        return None
    v = view(a, b, out)
    p = v.problem
    if min(p.m, p.n, p.batch) == 0 or _path(backend, p, False) != gemm_plan.SM90:
        return None
    if p.dtype == "float32":
        return None
    res_strides = None
    if residual is not None:
        if residual.dtype != out.dtype:
            return None
        res_strides = _residual_strides(residual, v)
        if res_strides is None:  # not read in place by the epilogue
            return None
    bias_stride = strides.element_strides(bias, bias.shape)[0] if bias is not None else 0
    epi = gemm.Epilogue(bias_stride, activation, res_strides)
    base = words(backend)
    plans = []
    for watched in (base, base + WORD * SLOTS):  # the words, then ones never raised
        # a, b, [bias], [residual], then the output, the control words and the save area.
        arguments = "aa" + "a" * (bias is not None) + "a" * (residual is not None) + "aaa"
        builder = PlanBuilder(backend, arguments)
        n = len(arguments)
        args = gemm.Args(0, 1, n - 3, 2 if bias is not None else None, None)
        if residual is not None:
            args = args._replace(residual=n - 4)
        whole = gemm.emit_sm90(builder, p, args, epi, None,
                               preempt=(watched, n - 2, n - 1, every))  # fmt: skip
        plans.append(builder.build())
    save_bytes = whole.grid * whole.bm * whole.bn * 4
    return PreemptiblePlan(backend, *plans, out.size * out.dtype.itemsize, whole.total_tiles,
                           whole.grid, save_bytes, relaunches)  # fmt: skip
