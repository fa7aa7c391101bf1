"""Building a gpukit._core.Plan: the caller's arguments, the buffers each call allocates, and
launches whose argument blocks are packed once, with slots for what changes per call."""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass

from ... import _core, _native
from ..args import arg_struct


class CooperativeLaunchError(RuntimeError):
    """A plan asked for a cooperative launch where the backend has none."""


@dataclass(frozen=True)
class Const:
    """A scalar operand whose value is part of the plan (packed, not a slot)."""

    value: object


class PlanBuilder:
    """`arguments`: "a" (an array: buffer and byte offset) or "s" (a scalar) per caller
    argument; `outputs` / `scratch`: bytes of the buffers every call allocates (returned /
    freed after the launches). Argument numbers: the caller's, then outputs, then scratch."""

    def __init__(self, backend, arguments: str, outputs=(), scratch=()):
        self.backend = backend
        self.arguments = arguments
        self.outputs = [int(n) for n in outputs]
        self.scratch = [int(n) for n in scratch]
        self.launches: list = []
        self.lanes: list[tuple[int, bool]] = []  # per launch: (lane, wait), as `lane` set them
        self._lane, self._wait = 0, False

    def output(self, i: int) -> int:
        return len(self.arguments) + i

    def scratch_arg(self, i: int) -> int:
        return len(self.arguments) + len(self.outputs) + i

    def add_scratch(self, nbytes: int) -> int:
        """One more buffer of `nbytes` that every call allocates for its launches; its argument
        number."""
        self.scratch.append(int(nbytes))
        return self.scratch_arg(len(self.scratch) - 1)

    def launch(self, fn, grid, block, struct: str, fields: dict, *, shared=0, addresses=(),
               floats=(), ints=(), imags=(), at=0, tensor_maps=(),
               cooperative=False) -> None:  # fmt: skip
        """One launch of `fn` with argument block `struct`: `fields` packed now; `addresses`:
        (field, arg, byte displacement, alignment) whose address is filled in per call (field:
        a name, or (name, index...) for an array field); `floats` / `ints` / `imags`: (field,
        arg) taking a scalar argument as a double / a 64-bit integer / its imaginary part as a
        double. For a kernel with more parameters than
        the block: `at`, the block's byte offset in the parameter buffer, and `tensor_maps`:
        (byte offset, arg, byte displacement, descriptor) of the TMA tensor-map parameters
        encoded per call over the argument's address (descriptor: gemm_plan.TensorMap's).
        `cooperative`: every block resident at once, so that they may wait for each other (a
        grid-wide barrier); the caller sizes the grid (backend.cooperative_blocks) and this
        raises CooperativeLaunchError where the backend cannot launch cooperatively. The flag
        travels in the launch's function handle (native launch_table.h's GK_LAUNCH_COOPERATIVE).
        The launch goes to the lane that `lane` chose (0 outside it)."""
        if cooperative:
            if not getattr(self.backend, "cooperative_launch", False):
                raise CooperativeLaunchError(
                    f"{getattr(self.backend, 'name', 'this backend')} cannot launch a kernel "
                    "cooperatively (the device lacks cooperative launch, or the CUDA driver is "
                    "older than 12.0)"
                )
            fn = int(fn) | _native.LAUNCH_COOPERATIVE
        s = arg_struct(struct)
        packed = s.pack(**fields)
        end = max([at + len(packed)] + [o + _native.TENSOR_MAP_BYTES for o, *_ in tensor_maps])
        blob = bytearray(end)
        blob[at : at + len(packed)] = packed
        slots = []
        for field, arg, displacement, align in addresses:
            slots.append(("address", at + _offset(s, field), arg, int(displacement), int(align)))
        slots += [("f64", at + _offset(s, field), arg, 0, 0) for field, arg in floats]
        slots += [("i64", at + _offset(s, field), arg, 0, 0) for field, arg in ints]
        slots += [("f64_imag", at + _offset(s, field), arg, 0, 0) for field, arg in imags]
        for offset, arg, displacement, descriptor in tensor_maps:
            slots.append(("tensor_map", int(offset), arg, int(displacement), descriptor))
        _check_disjoint(slots, at, len(packed))
        grid, block = _dim3(grid), _dim3(block)
        self.launches.append((fn, grid, block, int(shared), bytes(blob), slots))
        self.lanes.append((self._lane, self._wait))
        self._wait = False

    @contextlib.contextmanager
    def lane(self, lane: int, wait: bool = True):
        """The launches inside go to `lane`: 0, the call's stream, or 1, a second stream beside
        it (one per call) whose work runs alongside lane 0's. With `wait`, the first of them
        first waits for everything launched so far on the other lane. Lane 1's first launch
        must wait (its inputs come from lane 0); a call ends with lane 1 joined back."""
        if lane not in (0, 1):
            raise ValueError(f"lane {lane!r} is not 0 or 1")
        if lane == 1 and not wait and all(on == 0 for on, _ in self.lanes):
            raise ValueError("the first launch on lane 1 must wait for lane 0")
        saved = self._lane, self._wait
        self._lane, self._wait = lane, wait
        try:
            yield
        finally:
            self._lane, self._wait = saved

    def build(self):
        b = self.backend
        lanes = self.lanes if any(lane for lane, _ in self.lanes) else []
        return _core.Plan(
            b.pool, b.launch_table, self.arguments, self.launches, self.outputs, self.scratch,
            lanes,
        )  # fmt: skip


def _offset(struct, field) -> int:
    if isinstance(field, tuple):
        return struct.offset(field[0], *field[1:])
    return struct.offset(field)


def _check_disjoint(slots, at: int, size: int) -> None:
    """Tensor maps may not overlap each other or the argument block."""
    spans = [(at, at + size)] + [
        (offset, offset + _native.TENSOR_MAP_BYTES)
        for kind, offset, *_ in slots
        if kind == "tensor_map"
    ]
    spans.sort()
    for (_, end), (start, _) in itertools.pairwise(spans):
        if start < end:
            raise ValueError(f"a kernel parameter at byte {start} overlaps the one before it")


def _dim3(v) -> tuple[int, int, int]:
    dims = (v,) if isinstance(v, int) else tuple(v)
    for d in dims:
        if not 1 <= d <= 0x7FFFFFFF:
            raise ValueError(f"launch dimension {d} is out of range")
    return (*dims, 1, 1)[:3]
