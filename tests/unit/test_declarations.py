"""What is declared once reaches Python whole: the constants of kernels/geometry.cuh, the
argument blocks of kernels/args.cuh (as _native compiled them), and the elementwise op table."""

import re
import struct

import numpy as np
import pytest

import gpukit as gk
from gpukit import _native
from gpukit.runtime.args import CONSTANTS, ArgStruct
from gpukit.runtime.ops import ELEMENTWISE, INTERNAL, NN, NUMPY


def test_every_geometry_constant_reaches_python():
    header = gk.jit.kernel_source("geometry.cuh")
    defined = set(re.findall(r"^#define (GK_[A-Z0-9_]+) ", header, re.M)) - {"GK_CONSTANTS"}
    assert defined == set(CONSTANTS)
    assert CONSTANTS["GK_COMPACT_TILE"] == CONSTANTS["GK_COMPACT_THREADS"] * 16
    assert (
        CONSTANTS["GK_MMA_SMEM"] == CONSTANTS["GK_MMA_STAGES"] * 2 * CONSTANTS["GK_MMA_TILE_BYTES"]
    )


def test_argument_blocks_have_natural_c_layouts():
    """Each exported layout is what a C compiler gives those fields in that order: natural
    alignment, no field overlapping another, the size a multiple of the alignment."""
    layouts = _native.arg_layouts()
    assert {"gk_ew_args", "gk_matmul_args", "gk_attn_args"} <= set(layouts)
    for name, (size, align, fields) in layouts.items():
        end = 0
        for field, _, offset, item, shape in fields:
            assert offset % item == 0, (name, field)
            assert offset >= end, (name, field, "overlaps the field before it")
            end = offset + item * int(np.prod(shape, dtype=np.int64))
        assert end <= size and size % align == 0, name


def test_packing_puts_values_at_their_offsets():
    s = ArgStruct("gk_ew_args")
    blob = s.pack(n=7, ndim=2, shape=[3, 4], stride=[[4, 1], [0, 1]], scalar_f=[0, 2.5])
    assert len(blob) == s.size
    assert struct.unpack_from("<q", blob, s.offset("n"))[0] == 7
    assert struct.unpack_from("<2q", blob, s.offset("shape")) == (3, 4)
    assert struct.unpack_from("<q", blob, s.offset("stride", 1, 1))[0] == 1
    assert struct.unpack_from("<d", blob, s.offset("scalar_f", 1))[0] == 2.5
    assert s.offset("stride", 1) == s.offset("stride") + 8 * CONSTANTS["GK_MAX_DIMS"]


def test_packing_refuses_too_many_dimensions():
    too_many = list(range(CONSTANTS["GK_MAX_DIMS"] + 1))
    with pytest.raises(ValueError, match="at most 8 are supported"):
        ArgStruct("gk_reduce_args").pack(out_shape=too_many)
    with pytest.raises(IndexError):
        ArgStruct("gk_ew_contig_args").offset("ptr", 3)


def test_the_op_table_is_consistent():
    dunders = set()
    for name, op in ELEMENTWISE.items():
        assert op.name == name and 1 <= op.arity <= 3
        used = set(re.findall(r"\b([abc])\b", op.expr))
        assert used <= set("abc"[: op.arity]), (name, op.expr)
        assert op.namespace in (NUMPY, NN, INTERNAL) and op.doc
        if op.namespace == NUMPY and op.arity <= 2 and op.cpu is None:
            assert isinstance(getattr(np, name), np.ufunc), name
        if op.dunder:
            assert op.dunder not in dunders, op.dunder
            dunders.add(op.dunder)
