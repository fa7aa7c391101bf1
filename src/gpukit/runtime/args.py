"""Kernel argument blocks and launch geometry, as kernels/args.cuh and kernels/geometry.cuh
declare them: read from gpukit._native (which compiled those headers), never retyped here.
`ArgStruct(name).pack(field=value, ...)` gives the bytes a plan launches with."""

from __future__ import annotations

import functools
import struct

from .. import _native

# Every GK_* constant of kernels/geometry.cuh, by name.
CONSTANTS: dict[str, int] = dict(_native.constants())

_FORMATS = {
    "gk_i8": "b",
    "gk_u8": "B",
    "gk_i16": "h",
    "gk_u16": "H",
    "gk_i32": "i",
    "gk_u32": "I",
    "gk_i64": "q",
    "gk_u64": "Q",
    "double": "d",
    "float": "f",
}


class ArgStruct:
    """One argument block: its size and each field's (struct format, byte offset, shape)."""

    def __init__(self, name: str):
        size, align, fields = _native.arg_layouts()[name]
        self.name, self.size, self.align = name, size, align
        self.fields = {f: (_FORMATS[t], offset, shape) for f, t, offset, _, shape in fields}

    def offset(self, field: str, *index: int) -> int:
        """Byte offset of `field` (an element of it for an array or matrix field)."""
        fmt, offset, shape = self.fields[field]
        item = struct.calcsize(fmt)
        flat = 0
        for i, n in zip(index, shape, strict=False):
            if not 0 <= i < n:
                raise IndexError(f"{self.name}.{field}: index {index} out of {shape}")
            flat = flat * n + i
        if len(index) < len(shape):
            flat *= shape[-1] if len(shape) == 2 else 1
        return offset + flat * item

    def pack(self, **values) -> bytearray:
        """The block's bytes with these fields set (the others zero). Array fields take a
        sequence no longer than the field (the rest stays zero); matrix fields a sequence of
        such rows."""
        out = bytearray(self.size)
        for name, value in values.items():
            fmt, offset, shape = self.fields[name]
            if not shape:
                struct.pack_into("<" + fmt, out, offset, value)
                continue
            rows = [value] if len(shape) == 1 else list(value)
            cols = shape[-1]
            if len(shape) == 2 and len(rows) > shape[0]:
                raise ValueError(f"{self.name}.{name}: {len(rows)} rows, at most {shape[0]}")
            item = struct.calcsize(fmt)
            for r, row in enumerate(rows):
                row = list(row)
                if len(row) > cols:
                    raise ValueError(
                        f"{_WHAT.get(self.name, self.name)} has {len(row)} dimensions; at most "
                        f"{cols} are supported"
                    )
                struct.pack_into(f"<{len(row)}{fmt}", out, offset + r * cols * item, *row)
        return out


# What the dimensions of each block describe, for errors about too many of them.
_WHAT = {
    "gk_ew_args": "an elementwise operand",
    "gk_reduce_args": "a reduction input",
    "gk_scan_args": "a cumsum input",
    "gk_transpose_args": "a copy",
    "gk_matmul_args": "a matmul batch",
    "gk_gather_args": "an indexing result",
    "gk_compact_args": "a nonzero input",
    "gk_rows_args": "an nn input",
    "gk_rope_args": "a rope input",
}


@functools.cache
def arg_struct(name: str) -> ArgStruct:
    return ArgStruct(name)
