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


# C sizes of the field types of kernels/args.cuh (each naturally aligned).
_C_TYPES = {"gk_i32": "i", "gk_u32": "I", "gk_i64": "q", "gk_u64": "Q", "float": "f", "double": "d"}


def field_lists() -> dict[str, list[tuple[str, str, int]]]:
    """Each GK_ARG_STRUCTS entry's fields as kernels/args.cuh spells them: (name, type, count)."""
    header = gk.jit.kernel_source("args.cuh")
    lists = {}
    for macro, body in re.findall(r"#define (GK_\w+)\(F, A, M\)(.*?)\n\n", header, re.S):
        fields = []
        for args in re.findall(r"\b[FAM]\(([^()]*)\)", body):
            t, name, *dims = (x.strip() for x in args.split(","))
            count = int(np.prod([CONSTANTS.get(x) or int(x) for x in dims], dtype=np.int64))
            fields.append((name, t, count))
        lists[macro] = fields
    structs = re.findall(r"S\((gk_\w+), (GK_\w+)\)", header)
    return {name: lists[macro] for name, macro in structs}


def test_layouts_are_the_field_lists_in_c_order():
    """Every struct's exported layout is its field list laid out as C does (the struct module's
    native alignment as a second opinion): so the bytes Python packs are the bytes the kernel's
    struct reads."""
    layouts = _native.arg_layouts()
    lists = field_lists()
    assert set(lists) == set(layouts)
    for name, fields in lists.items():
        size, align, exported = layouts[name]
        assert [(f, t) for f, t, *_ in exported] == [(f, t) for f, t, _ in fields], name
        fmt = "@"
        for (field, t, count), (_, _, offset, item, _) in zip(fields, exported, strict=True):
            code = _C_TYPES[t]
            assert offset == struct.calcsize(f"{fmt}0{code}"), (name, field)
            assert item == struct.calcsize(code), (name, field)
            fmt += f"{count}{code}"
        widest = max(struct.calcsize(_C_TYPES[t]) for _, t, _ in fields)
        assert align == widest, name
        assert size == struct.calcsize(f"{fmt}0{'q' if widest == 8 else 'i'}"), name


def test_tensor_core_attention_block_packs_as_the_verified_harness_did():
    """gk_attn_tc_args: the tensor-core attention was verified on an H100 with its block packed
    by struct format "@8Q6q16q2qf3i"; gpukit's packing of the field list gives the same bytes."""
    values = {
        "q": 1 << 40, "k": 2 << 40, "v": 3 << 40, "out": 4 << 40, "mask": 5 << 40,
        "kv_len": 6 << 40, "ws_o": 7 << 40, "ws_ml": 8 << 40, "batch": 3, "hq": 32, "hkv": 8,
        "sq": 17, "skv": 8191, "d": 120, "q_stride": [-1, 2, 3, 4], "k_stride": [5, 6, 7, 8],
        "v_stride": [9, 10, 11, 12], "mask_stride": [0, 13, 14, 15], "kv_len_stride": 1,
        "keys_per_split": 4096, "scale_log2": 0.125, "causal": 1, "kv_len_size": 4,
        "n_splits": 17,
    }  # fmt: skip
    s = ArgStruct("gk_attn_tc_args")
    harness = struct.pack(
        "@8Q6q16q2qf3i",
        *(values[f] for f in ("q", "k", "v", "out", "mask", "kv_len", "ws_o", "ws_ml")),
        *(values[f] for f in ("batch", "hq", "hkv", "sq", "skv", "d")),
        *(x for f in ("q_stride", "k_stride", "v_stride", "mask_stride") for x in values[f]),
        values["kv_len_stride"], values["keys_per_split"], values["scale_log2"],
        values["causal"], values["kv_len_size"], values["n_splits"],
    )  # fmt: skip
    assert s.size == struct.calcsize("@8Q6q16q2qf3i0q") == 272
    assert bytes(s.pack(**values)) == harness + bytes(s.size - len(harness))
