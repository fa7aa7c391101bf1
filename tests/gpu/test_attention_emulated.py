"""The tensor-core attention kernels (kernels/attention_tc.cu, attention_decode.cu) with the tile
configurations gpukit ships, run on the CPU through a host emulation of the warp (ldmatrix, mma,
shuffles, cp.async, barriers) and checked against float64: prefill for every head-dim class,
masks, GQA, odd lengths, strided inputs, device kv_length, split-KV decode with its combine; and
the CUDA backend's plans (packed blocks, address slots, workspaces) launching them."""

import math
import shutil
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from attention_reference import attention_f64

from gpukit.base.shapes import contiguous_strides
from gpukit.runtime import kernels
from gpukit.runtime.backend import Layout
from gpukit.runtime.cuda import attention as cuda_attention
from gpukit.runtime.cuda import attention_geometry as geometry

sys.path.insert(0, str(Path(__file__).parent / "emulator"))
import attention_emulator as emu
import emulation

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

TYPES = {"bf16": np.dtype(ml_dtypes.bfloat16), "f16": np.dtype(np.float16)}
SMS, SHARED = 132, 227 * 1024  # an H100's


@pytest.fixture(scope="module")
def lib_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("attention_emulator")


def _run(lib_dir, rng, kind, dt, b, hq, hkv, sq, skv, d, causal=False, mask="none",
         lengths=None, strided=False, n_splits=None, hide=None):  # fmt: skip
    dtype = TYPES[dt]
    if strided:
        q = rng.standard_normal((b, sq, hq, d)).astype(dtype).transpose(0, 2, 1, 3)
        k = rng.standard_normal((b, skv, hkv, d)).astype(dtype).transpose(0, 2, 1, 3)
        v = rng.standard_normal((b, skv, hkv, d)).astype(dtype).transpose(0, 2, 1, 3)
    else:
        q, k, v = (
            rng.standard_normal(s).astype(dtype)
            for s in ((b, hq, sq, d), (b, hkv, skv, d), (b, hkv, skv, d))
        )
    m = None
    if mask == "bool":
        m = rng.random((b, 1, sq, skv)) < 0.7
        m[0, :, 0] = False
        if hide is not None:  # keys [lo, hi) hidden from every row: whole splits see nothing
            m[..., hide[0] : hide[1]] = False
    elif mask == "additive":
        m = (rng.standard_normal((sq, skv)) * 2).astype(dtype)
        m[:, :3] = -np.inf
    kv_len = None if lengths is None else np.array(lengths, np.int32)
    if kind == "prefill":
        p = geometry.prefill(dt, b, hq, sq, d, mask)
        so = emu.build(1, p.main.defines, lib_dir)
    else:
        p = geometry.decode(dt, b, hq, hkv, sq, skv, d, mask, SMS, SHARED, n_splits)
        so = emu.build(2, p.main.defines, lib_dir)
    out = np.full((b, hq, sq, d), np.nan, dtype)
    ws = [np.full(n, np.nan, np.float32) for n in p.workspace] if p.n_splits > 1 else [None, None]
    scale = 1 / math.sqrt(d)
    args = emu.pack(q, k, v, out, m, kv_len, *ws, causal, scale, p.n_splits, p.keys_per_split)
    seed = int(rng.integers(1 << 31))
    emu.run(so, args, 0, p.main.grid, p.main.block, p.main.shared, seed)
    if p.combine is not None:
        emu.run(so, args, 1, p.combine.grid, p.combine.block, p.combine.shared, seed)
    want = attention_f64(q, k, v, m, causal, scale, kv_len)
    got = out.astype(np.float64)
    assert not np.isnan(got).any()
    err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
    assert err <= 1e-2, err
    assert not got[~np.any(want != 0, axis=-1)].any()


@pytest.mark.parametrize("d", [64, 96, 128, 256])
def test_prefill_every_head_dim(lib_dir, rng, d):
    _run(lib_dir, rng, "prefill", "bf16", 1, 4, 2, 129, 200, d, causal=True)


def test_prefill_masks_lengths_strides(lib_dir, rng):
    _run(lib_dir, rng, "prefill", "f16", 2, 2, 1, 7, 65, 128, mask="bool", lengths=[50, 65])
    _run(lib_dir, rng, "prefill", "bf16", 1, 2, 2, 70, 100, 120, causal=True, mask="additive",
         strided=True)  # fmt: skip
    _run(lib_dir, rng, "prefill", "bf16", 1, 2, 1, 40, 33, 64, causal=True)  # rows see nothing


def test_decode_splits_and_device_length(lib_dir, rng):
    _run(lib_dir, rng, "decode", "bf16", 2, 8, 2, 1, 1000, 128, lengths=[700, 0], n_splits=5)
    _run(
        lib_dir,
        rng,
        "decode",
        "f16",
        1,
        32,
        2,
        2,
        500,
        128,
        causal=True,
        mask="additive",
        n_splits=3,
    )  # fmt: skip  (32 rows: two m16 tiles)
    _run(lib_dir, rng, "decode", "bf16", 2, 4, 1, 1, 300, 256, mask="bool", n_splits=1)


# The d128 decode tiles notes/decode_ab.py compares (notes/attention.md, "Decode bandwidth"):
# the earlier geometry, the shipped one (8 warps, 3 stages), fewer stages (more blocks per SM),
# more or fewer warps, wider steps.
DECODE_VARIANTS = [
    (4, 16, 4),
    (8, 16, 3),
    (4, 16, 3),
    (4, 16, 2),
    (8, 16, 2),
    (2, 16, 4),
    (4, 32, 2),
]


@pytest.mark.parametrize("tiles", DECODE_VARIANTS, ids=lambda t: "w{}k{}s{}".format(*t))
@pytest.mark.parametrize("rule", ["fill", "wave"])
def test_decode_variants(lib_dir, rng, monkeypatch, tiles, rule):
    """Each decode tile variant under each split rule (its split count as the plan would choose
    it on an H100): odd key counts, a device length that leaves whole splits without keys, a
    mask hiding whole splits, causal rows; and GQA 32/8's two m16 tiles where the ring holds
    them (kernels.attention_decode_holds)."""
    t = kernels.AttentionDecodeTiles(*tiles)
    monkeypatch.setattr(geometry, "DECODE_SPLITS", rule)
    monkeypatch.setitem(kernels.ATTENTION_DECODE_TILES, 128, t)
    _run(lib_dir, rng, "decode", "bf16", 1, 8, 2, 1, 1000, 128, lengths=[333])
    _run(lib_dir, rng, "decode", "bf16", 2, 8, 2, 1, 777, 120, mask="bool", hide=(100, 600),
         lengths=[777, 501])  # fmt: skip
    _run(lib_dir, rng, "decode", "f16", 1, 4, 1, 3, 259, 128, causal=True)
    if kernels.attention_decode_holds(128, 2):
        _run(lib_dir, rng, "decode", "bf16", 1, 32, 1, 1, 300, 128, lengths=[211])


# --- the CUDA backend's attention plans, launched into the emulator ---------------------------
class EmulatedCuda(emulation.EmulatedCuda):
    """What gpukit.runtime.cuda.attention asks of a CUDA backend (an H100's SMs and shared
    memory), its launches running the emulated attention kernels."""

    def __init__(self, lib_dir, seed):
        super().__init__(lib_dir, seed, SMS, SHARED)

    def run_kernel(self, file, defines, name, grid, block, shared, args, nbytes):
        assert nbytes == emu.ARGS.size
        so = emu.build(1 if file == "attention_tc.cu" else 2, defines, self.lib_dir)
        emu.run(so, args, int(name == "gk_attn_combine"), grid, block[0], shared, self.seed)

    def put_with_layout(self, x):
        """(buffer, Layout) of a copy of x in the CPU backend's memory."""
        x = np.ascontiguousarray(x)
        return self.put(x), Layout(x.dtype, x.shape, x.strides, 16)


def _plan_case(lib_dir, rng, dt, b, hq, hkv, sq, skv, d, causal, mask, lengths, seq_major):
    dtype = TYPES[dt]
    cuda = EmulatedCuda(lib_dir, int(rng.integers(1 << 31)))
    order = (0, 2, 1, 3) if seq_major else (0, 1, 2, 3)  # (batch, seq, heads, d) storage
    host, args, layouts = [], [], []
    for shape in ((b, hq, sq, d), (b, hkv, skv, d), (b, hkv, skv, d)):
        stored = rng.standard_normal(tuple(shape[i] for i in order)).astype(dtype)
        buf, lay = cuda.put_with_layout(stored)
        view = stored.transpose(order)
        host.append(view)
        args += [buf, 0]
        layouts.append(Layout(dtype, view.shape, view.strides, lay.align))
    m = None
    if mask == "bool":
        m = rng.random((b, 1, sq, skv)) < 0.7
        m[0, :, 0] = False
    elif mask == "additive":
        m = (rng.standard_normal((sq, skv)) * 2).astype(dtype)
        m[:, :3] = -np.inf
    lm = ln = None
    if m is not None:
        buf, lm = cuda.put_with_layout(m)
        args += [buf, 0]
    n = None if lengths is None else np.array(lengths, np.int32 if len(lengths) > 1 else np.int64)
    if n is not None:
        buf, ln = cuda.put_with_layout(n)
        args += [buf, 0]
    out = Layout(dtype, (b, hq, sq, d), contiguous_strides((b, hq, sq, d), dtype.itemsize))
    # Poisoned: a block the pool hands back for out starts as NaNs where nothing writes.
    cuda.put_with_layout(np.full((b, hq, sq, d), np.nan, dtype))
    scale = 1 / math.sqrt(d)
    plan = cuda_attention.plan_attention(cuda, *layouts, lm, ln, out, causal, scale)
    got = cuda.get(plan(0, None, *args), out.shape, out.dtype).astype(np.float64)
    assert cuda.table.error is None, cuda.table.error
    want = attention_f64(*host, m, causal, scale, n)
    assert not np.isnan(got).any()
    err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
    assert err <= 1e-2, err
    assert not got[~np.any(want != 0, axis=-1)].any()
    return cuda.launched


def test_cuda_plans_run_the_kernels(lib_dir, rng):
    """The plans runtime/cuda/attention.py builds: prefill one launch; decode the decode kernel
    and its combine over per-call workspaces; a device kv_length read from the plan's operand."""
    launched = _plan_case(lib_dir, rng, "bf16", 1, 4, 2, 70, 100, 128, True, "bool", None, True)
    assert launched == ["gk_attn_tc"]
    launched = _plan_case(lib_dir, rng, "f16", 2, 8, 2, 1, 700, 64, False, "none", [500, 3], False)
    assert launched == ["gk_attn_decode", "gk_attn_combine"]
    launched = _plan_case(lib_dir, rng, "bf16", 1, 16, 1, 2, 300, 96, True, "additive", [250], True)
    assert launched == ["gk_attn_decode", "gk_attn_combine"]
