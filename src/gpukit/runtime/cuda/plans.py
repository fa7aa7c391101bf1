"""Building a gpukit._core.Plan: the caller's arguments, the buffers each call allocates, and
launches whose argument blocks are packed once, with slots for what changes per call."""

from __future__ import annotations

from dataclasses import dataclass

from ... import _core
from ..args import arg_struct


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

    def output(self, i: int) -> int:
        return len(self.arguments) + i

    def scratch_arg(self, i: int) -> int:
        return len(self.arguments) + len(self.outputs) + i

    def add_scratch(self, nbytes: int) -> int:
        """One more per-call scratch buffer of `nbytes`; returns its argument number."""
        self.scratch.append(int(nbytes))
        return self.scratch_arg(len(self.scratch) - 1)

    def launch(self, fn, grid, block, struct: str, fields: dict, *, shared=0, addresses=(),
               floats=(), ints=()) -> None:  # fmt: skip
        """One launch of `fn` with argument block `struct`: `fields` packed now; `addresses`:
        (field, arg, byte displacement, alignment) whose address is filled in per call (field:
        a name, or (name, index...) for an array field); `floats` / `ints`: (field, arg) taking
        a scalar argument as a double / a 64-bit integer."""
        s = arg_struct(struct)
        blob = bytes(s.pack(**fields))
        slots = []
        for field, arg, displacement, align in addresses:
            slots.append(("address", _offset(s, field), arg, int(displacement), int(align)))
        slots += [("f64", _offset(s, field), arg, 0, 0) for field, arg in floats]
        slots += [("i64", _offset(s, field), arg, 0, 0) for field, arg in ints]
        grid, block = _dim3(grid), _dim3(block)
        self.launches.append((fn, grid, block, int(shared), blob, slots))

    def build(self):
        b = self.backend
        return _core.Plan(
            b.pool, b.launch_table, self.arguments, self.launches, self.outputs, self.scratch
        )


def _offset(struct, field) -> int:
    if isinstance(field, tuple):
        return struct.offset(field[0], *field[1:])
    return struct.offset(field)


def _dim3(v) -> tuple[int, int, int]:
    dims = (v,) if isinstance(v, int) else tuple(v)
    for d in dims:
        if not 1 <= d <= 0x7FFFFFFF:
            raise ValueError(f"launch dimension {d} is out of range")
    return (*dims, 1, 1)[:3]
