"""The planning of matrix products on CUDA without a GPU: the pure choices of
gpukit.runtime.cuda.gemm_plan (paths, tiles, splits, tensor maps), and the launches that
gpukit.runtime.cuda.matmul builds from them (argument bytes, tensor-map and address slots) for a
stand-in device, checked byte by byte."""

import ctypes
import struct

import numpy as np
import pytest

from gpukit import _core, _native
from gpukit.base.dtypes import bfloat16
from gpukit.base.shapes import contiguous_strides
from gpukit.runtime import kernels
from gpukit.runtime.args import CONSTANTS, arg_struct
from gpukit.runtime.backend import Layout
from gpukit.runtime.cuda import gemm_plan, matmul, plans

C = CONSTANTS
gp = gemm_plan


def _prob(m, n, k, sa, sb, dtype="bfloat16", bshape=(), ba=(), bb=(), aligned=(True,) * 3):
    bo = (m * n,) if bshape else ()
    return gp.Problem(dtype, m, n, k, bshape, sa, sb, (n, 1), ba, bb, bo, aligned)


def test_stages_fill_the_shared_memory_budget():
    for bm, bn in gp.SM90_TILES:
        stages, shared = kernels.sm90_stages(bm, bn)
        stage = (bm + bn) * C["GK_SM90_ROW_BYTES"]
        budget = C["GK_SM90_SMEM_BUDGET"] - 2 * C["GK_SM90_EPI_BYTES"]  # the epilogue's chunks
        assert stages >= 4
        assert shared <= C["GK_SM90_SMEM_BUDGET"] + C["GK_SM90_SMEM_EXTRA"]
        assert (stages + 1) * stage > budget or stages == C["GK_SM90_MAX_STAGES"]


def test_the_bulk_store_epilogue_fits_and_is_taken_by_plain_16_bit_products_only():
    """The bulk-store epilogue (GK_GEMM_BULK_STORE: 16-bit rows per consumer, copied out by
    cp.async.bulk): every 16-bit product whose output rows are whole aligned 16-byte units, K not
    split, no fused epilogue, not preemptible; the rest keep the staged epilogue."""
    rows = lambda bm, bn: 2 * (bm // 2) * (2 * bn + C["GK_SM90_ROW_PAD"])  # noqa: E731
    stages, shared = kernels.sm90_stages(128, 256, bulk=True)
    assert stages == 3 and shared == 3 * 384 * 128 + rows(128, 256) + C["GK_SM90_SMEM_EXTRA"]
    for bm, bn in gp.SM90_TILES:
        stages, shared = kernels.sm90_stages(bm, bn, bulk=True)
        assert stages >= 3 and shared <= C["GK_SM90_SMEM_BUDGET"] + C["GK_SM90_SMEM_EXTRA"]
    a, b = gp.Matrix(128, 1, 65536, True), gp.Matrix(512, 1, 65536, True)
    p = gp.plan_sm90("bfloat16", 512, 512, 128, 64, a, b, 132, out_bulk=True)
    assert p.bulk and "GK_GEMM_BULK_STORE=1" in p.defines
    assert p.shared_bytes == kernels.sm90_stages(p.bm, p.bn, True)[1]
    assert p.threads == C["GK_SM90_THREADS"] and p.grid == 132
    p = gp.plan_sm90("bfloat16", 512, 512, 128, 64, a, b, 132, out_bulk=True, bulk=False)
    assert not p.bulk and not any("BULK" in d for d in p.defines)  # the staged form, forced
    assert p.shared_bytes == kernels.sm90_stages(p.bm, p.bn)[1]
    with pytest.raises(ValueError):
        gp.plan_sm90("bfloat16", 512, 520, 128, 64, a, b, 132, out_bulk=False, bulk=True)
    bulk, plain = gp.sm90_bulk, kernels.NO_EPILOGUE
    assert bulk("bfloat16", 1, plain, False, True) and bulk("float16", 1, plain, False, True)
    assert not bulk("bfloat16", 1, plain, False, False)  # rows not whole aligned 16-byte units
    assert not bulk("bfloat16", 2, plain, False, True)  # split K
    assert not bulk("bfloat16", 1, (True, None, False), False, True)  # a fused epilogue
    assert not bulk("bfloat16", 1, (False, "silu", False), False, True)
    assert not bulk("bfloat16", 1, (False, None, True), False, True)
    assert not bulk("float32", 1, plain, False, True)  # TF32: float32 outputs
    assert not bulk("bfloat16", 1, plain, True, True)  # preemptible
    assert gp.out_rows_bulk("bfloat16", 512, 512, 512 * 512, True)
    assert gp.out_rows_bulk("float16", 8, 8, 0, True)
    assert not gp.out_rows_bulk("bfloat16", 1001, 1001, 0, True)  # n % 8
    assert not gp.out_rows_bulk("bfloat16", 512, 516, 0, True)  # a row stride of 1032 bytes
    assert not gp.out_rows_bulk("bfloat16", 512, 512, 512 * 512 + 4, True)  # the batch stride
    assert not gp.out_rows_bulk("bfloat16", 512, 512, 0, False)  # the address
    assert not gp.out_rows_bulk("float32", 512, 512, 0, True)


def _bulk_of(be, plan):
    """Whether each sm_90a GEMM launch of `plan` has the bulk-store epilogue."""
    return [
        "GK_GEMM_BULK_STORE=1" in be.functions[fn - 1][1]
        for fn, *_ in plan.launches
        if be.functions[fn - 1][2] == "gk_gemm_sm90"
    ]


def test_products_take_the_bulk_store_epilogue_where_their_output_rows_allow(built):
    bf, f16 = np.dtype(bfloat16), np.dtype("float16")

    def launches(a, b, out, *epi, row_block=None, tf32=False):
        be = FakeBackend()
        plan = matmul.plan_matmul(be, a, b, out, *(epi or (None,)), row_block, tf32=tf32)
        return be, plan

    # batched small K (the batched row of notes/gemm.md), and row slices of one product
    be, plan = launches(_dense(bf, (64, 512, 128)), _dense(bf, (64, 128, 512)),
                        _dense(bf, (64, 512, 512)))  # fmt: skip
    assert _bulk_of(be, plan) == [True]
    slots = plan.launches[0][5]
    out_at = 0x130 + arg_struct("gk_gemm_sm90_args").offset("out")
    assert [s[4] for s in slots if s[0] == "address" and s[1] == out_at] == [16]
    be, plan = launches(_dense(f16, (1000, 264)), _dense(f16, (264, 1000)),
                        _dense(f16, (1000, 1000)), row_block=256)  # fmt: skip
    assert _bulk_of(be, plan) == [True] * 4
    # staged: rows of n % 8 != 0 elements (the plan's output is contiguous: its rows then start
    # off 16-byte boundaries; b read K-major, as x @ w.T, so that TMA can address it), an
    # unaligned output, split K, a fused epilogue, TF32
    w_t = Layout(bf, (264, 1001), (2, 2 * 264), 16)
    be, plan = launches(_dense(bf, (1000, 264)), w_t, _dense(bf, (1000, 1001)))
    assert _bulk_of(be, plan) == [False]
    w_t = Layout(bf, (3, 64, 260), (2 * 64 * 260, 2, 2 * 64), 16)
    be, plan = launches(_dense(bf, (3, 200, 64)), w_t, _dense(bf, (3, 200, 260)))
    assert _bulk_of(be, plan) == [False]
    be, plan = launches(_dense(bf, (200, 64)), _dense(bf, (64, 256)), _dense(bf, (200, 256), 2))
    assert _bulk_of(be, plan) == [False]
    be, plan = launches(_dense(bf, (256, 8200)), _dense(bf, (8200, 520)), _dense(bf, (256, 520)))
    assert _bulk_of(be, plan) == [False]  # K split
    be, plan = launches(_dense(bf, (1000, 264)), _dense(bf, (264, 1024)),
                        _dense(bf, (1000, 1024)), _dense(bf, (1024,)), None, "relu")  # fmt: skip
    assert _bulk_of(be, plan) == [False]
    be, plan = launches(_dense("float32", (256, 64)), _dense("float32", (64, 256)),
                        _dense("float32", (256, 256)), tf32=True)  # fmt: skip
    assert _bulk_of(be, plan) == [False]


def test_tiles_fill_the_gpu_and_split_k_only_when_it_pays():
    assert gp.choose_sm90_tile(8192, 8192, 128, 1, 132) == (128, 256, 1)
    assert gp.choose_sm90_tile(4096, 11008, 64, 1, 132)[2] == 1
    splits = gp.choose_sm90_tile(256, 512, 128, 1, 132)[2]  # few tiles: K is split
    assert splits > 1 and 128 // splits >= 8
    assert gp.choose_sm90_tile(256, 512, 4, 1, 132)[2] == 1  # too little K to split


def test_sm90_plan_reads_each_layout_in_place():
    k_major_a, m_major_a = gp.Matrix(1000, 1, 0, True), gp.Matrix(1, 1000, 0, True)
    n_major_b, k_major_b = gp.Matrix(1000, 1, 0, True), gp.Matrix(1, 1000, 0, True)
    p = gp.plan_sm90("bfloat16", 1000, 1000, 1000, 1, k_major_a, n_major_b, 132,
                     tile=(128, 256, 1))  # fmt: skip
    assert "GK_A_MN=0" in p.defines and "GK_B_MN=1" in p.defines
    assert p.map_a.dims == (1000, 1000, 1) and p.map_a.box == (64, 128, 1)
    assert p.map_b.box == (64, 64, 1)  # 64-column chunks of an N-major b
    assert p.map_a.strides[0] == 2000 and p.map_a.dtype_code == 9
    p = gp.plan_sm90("float16", 1000, 1000, 1000, 1, m_major_a, k_major_b, 132,
                     tile=(256, 128, 1))  # fmt: skip
    assert p.map_a.box == (64, 64, 1) and p.map_b.box == (64, 128, 1)
    assert p.map_a.dtype_code == 6
    assert p.total_tiles == 4 * 8 and p.grid == 32


def test_tensor_map_descriptor_is_what_the_launch_table_takes():
    m = gp.TensorMap(9, (1000, 777, 3), (2000, 1554000), (64, 128, 1))
    dtype, rank, dims, st, box, elem, modes = m.descriptor()
    assert (dtype, rank) == (9, 3)
    assert dims == (1000, 777, 3, 0, 0) and st == (2000, 1554000, 0, 0)
    assert box == (64, 128, 1, 0, 0) and elem == (1, 1, 1, 0, 0)
    assert modes == (0, 3, 2, 0)  # no interleave, 128-byte swizzle, 128-byte L2 promotion, zeros


def test_sm90_plan_batches_and_broadcasts():
    a = gp.Matrix(264, 1, 200 * 264, True)
    b = gp.Matrix(304, 1, 0, True)  # shared by the batch
    p = gp.plan_sm90("bfloat16", 200, 304, 264, 3, a, b, 132)
    assert p.a_batched and not p.b_batched
    assert p.map_a.dims[2] == 3 and p.map_b.dims[2] == 1
    assert p.map_b.strides[1] % 16 == 0


def test_split_k_plan_has_no_empty_split():
    a, b = gp.Matrix(8200, 1, 0, True), gp.Matrix(1, 8200, 0, True)
    p = gp.plan_sm90("bfloat16", 256, 520, 8200, 1, a, b, 132)
    assert p.splits > 1
    assert (p.splits - 1) * p.k_tiles_per_split < p.k_tiles <= p.splits * p.k_tiles_per_split
    assert p.workspace_bytes == p.splits * 256 * 520 * 4


def test_tf32_rounds_operands_and_wants_k_major():
    a, b = gp.Matrix(1000, 1, 0, True), gp.Matrix(1, 1000, 0, True)
    p = gp.plan_sm90("float32", 1000, 1000, 1000, 1, a, b, 132)
    assert p.map_a.dtype_code == 11  # CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: rounded, not truncated
    assert "GK_GEMM_TYPE=GK_GEMM_TF32" in p.defines
    n_major = gp.Matrix(1000, 1, 0, True)
    assert gp.sm90_supported("float32", 9, 9, 9, 1, a, n_major, True) == gp.TF32_NEEDS_K_MAJOR
    assert gp.sm90_supported("float32", 9, 9, 9, 1, a, b, False) == "float32 without tf32"
    odd = _prob(9, 9, 9, (9, 1), (9, 1), "float32")
    assert gp.tf32_in_place(odd) == (False, False)  # 36-byte rows; b N-major
    fine = _prob(8, 8, 8, (8, 1), (1, 8), "float32")
    assert gp.tf32_in_place(fine) == (True, True)


def test_sm90_refuses_what_tma_cannot_address():
    ok = gp.Matrix(1000, 1, 0, True)
    assert gp.sm90_supported("bfloat16", 8, 8, 8, 1, ok, ok, False) is None
    odd_lead = gp.Matrix(1001, 1, 0, True)  # 2002-byte rows
    assert "TMA cannot" in gp.sm90_supported("bfloat16", 8, 8, 8, 1, odd_lead, ok, False)
    unaligned = gp.Matrix(1000, 1, 0, False)
    assert "TMA cannot" in gp.sm90_supported("bfloat16", 8, 8, 8, 1, unaligned, ok, False)
    reversed_rows = gp.Matrix(-1000, 1, 0, True)  # a[::-1]: TMA walks memory forwards only
    assert "TMA cannot" in gp.sm90_supported("bfloat16", 8, 8, 8, 1, reversed_rows, ok, False)
    broadcast_rows = gp.Matrix(0, 1, 0, True)  # one row repeated: not a tensor TMA can read
    assert "TMA cannot" in gp.sm90_supported("bfloat16", 8, 8, 8, 1, broadcast_rows, ok, False)
    reversed_batch = gp.Matrix(1000, 1, -8000, True)
    assert "TMA cannot" in gp.sm90_supported("bfloat16", 8, 8, 8, 2, reversed_batch, ok, False)
    broadcast_batch = gp.Matrix(1000, 1, 0, True)
    assert gp.sm90_supported("bfloat16", 8, 8, 8, 2, broadcast_batch, ok, False) is None
    strided = gp.Matrix(2000, 2, 0, True)
    assert "contiguous" in gp.sm90_supported("bfloat16", 8, 8, 8, 1, strided, ok, False)
    one_row = gp.Matrix(0, 1, 0, True)  # a single row of any length: its stride is unused
    assert gp.sm90_supported("bfloat16", 1, 8, 7 * 8, 1, one_row, ok, False) is None


def test_gemv_rows_fold_a_batch_and_name_the_weight_layout():
    linear = _prob(1, 11008, 4096, (4096, 1), (1, 4096))  # x @ w.T, w (n, k) row-major
    assert gp.gemv_rows(linear) == gp.GemvRows("nk", 1, 4096, 1, 11008)
    x_at_w = _prob(1, 11008, 4096, (4096, 1), (11008, 1))
    assert gp.gemv_rows(x_at_w).layout == "kn"
    folded = _prob(2, 64, 32, (32, 1), (1, 32), bshape=(3,), ba=(64,), bb=(0,))
    assert gp.gemv_rows(folded).rows == 6
    batched_w = _prob(2, 64, 32, (32, 1), (1, 32), bshape=(3,), ba=(64,), bb=(2048,))
    assert gp.gemv_rows(batched_w) is None


def test_matmul_path_per_device():
    big = _prob(4096, 4096, 4096, (4096, 1), (4096, 1))
    assert gp.matmul_path(big, (9, 0), True, False) == gp.SM90
    assert gp.matmul_path(big, (9, 0), False, False) == gp.SM80  # no sm_90a compiler or driver
    assert gp.matmul_path(big, (8, 0), False, False) == gp.SM80
    assert gp.matmul_path(big, (7, 5), False, False) == gp.GENERIC
    f32 = _prob(4096, 4096, 4096, (4096, 1), (4096, 1), "float32")
    assert gp.matmul_path(f32, (9, 0), True, False) == gp.SIMT_F32
    assert gp.matmul_path(f32, (9, 0), True, True) == gp.SM90
    assert gp.matmul_path(f32, (8, 0), False, True) == gp.SIMT_F32
    decode = _prob(1, 11008, 4096, (4096, 1), (1, 4096))
    assert gp.matmul_path(decode, (9, 0), True, False) == gp.GEMV
    four = _prob(4, 11008, 4096, (4096, 1), (1, 4096))
    assert gp.matmul_path(four, (9, 0), True, False) == gp.SM90  # measured faster from 4 rows
    assert gp.matmul_path(four, (8, 6), False, False) == gp.GEMV
    nine = _prob(9, 11008, 4096, (4096, 1), (1, 4096))
    assert gp.matmul_path(nine, (8, 6), False, False) == gp.SM80
    mixed = _prob(64, 64, 64, (64, 1), (64, 1), "")
    assert gp.matmul_path(mixed, (9, 0), True, False) == gp.GENERIC
    f64 = _prob(4096, 4096, 4096, (4096, 1), (4096, 1), "float64")
    assert gp.matmul_path(f64, (9, 0), True, False) == gp.DMMA_F64
    assert gp.matmul_path(f64, (8, 0), False, False) == gp.DMMA_F64
    assert gp.matmul_path(f64, (7, 5), False, False) == gp.GENERIC  # no FP64 tensor cores
    empty_k = _prob(1, 64, 0, (0, 1), (1, 0))
    assert gp.matmul_path(empty_k, (9, 0), True, False) == gp.SM80  # the tiled kernels' zeros
    assert "sm90a-wgmma-tma" in gp.describe_paths((9, 0), True, False)


def test_gemv_plan_splits_k_when_columns_are_few():
    few = gp.plan_gemv("kn", "bfloat16", 1, 256, 8192, True, 132)
    assert few.splits > 1 and few.k_per_split % 8 == 0
    assert (few.splits - 1) * few.k_per_split < 8192 <= few.splits * few.k_per_split
    many = gp.plan_gemv("nk", "bfloat16", 1, 11008, 4096, True, 132)
    assert many.splits == 1 and many.workspace_bytes == 0
    assert "GK_GEMV_ROWS=1" in many.defines
    assert "GK_GEMV_ROWS=16" in gp.plan_gemv("nk", "float32", 9, 100, 64, False, 132).defines


# --- plans for a stand-in device ---------------------------------------------------------------

# The parameter layout that NVRTC gives gk_gemm_sm90 (tests/gpu/test_gemm_kernels.py reads it out
# of the cubin; the driver reports it on the GPU): the tensor maps at 0x30 and 0xb0, the block at
# 0x130.
SM90_PARAMS = [(0x30, 128), (0xB0, 128), (0x130, arg_struct("gk_gemm_sm90_args").size)]


class FakeDevice:
    def __init__(self, cc):
        self.compute_capability = cc


class FakeBackend:
    """What the planners ask of a CUDA backend, with kernels named instead of loaded."""

    def __init__(self, cc=(9, 0), sm90a=True, params=SM90_PARAMS):
        self.device = FakeDevice(cc)
        self.sm90a = sm90a
        self.sm_count = 132
        self.functions = []
        self.shared = {}
        self.params = params

    def function(self, file, defines, name):
        self.functions.append((file, defines, name))
        return len(self.functions)  # a handle

    def allow_shared(self, fn, nbytes):
        self.shared[fn] = nbytes

    def blocks_for(self, threads, block):
        return min(-(-max(threads, 1) // block), self.sm_count * 32)

    def param_layout(self, fn, count):
        file, _, name = self.functions[fn - 1]
        if name == "gk_gemm_sm90":
            return self.params
        struct_name = {"gemm_sm90.cu": "gk_gemm_sm90_args"}.get(file)
        return [(0, arg_struct(struct_name).size)]


@pytest.fixture
def built(monkeypatch):
    """plan_matmul's PlanBuilder itself instead of a gpukit._core.Plan."""
    monkeypatch.setattr(plans.PlanBuilder, "build", lambda self: self)


def _dense(dtype, shape, align=16):
    dtype = np.dtype(dtype)
    return Layout(dtype, tuple(shape), contiguous_strides(shape, dtype.itemsize), align)


def _field(blob, struct_name, field, at=0):
    s = arg_struct(struct_name)
    fmt, offset, _ = s.fields[field]
    return struct.unpack_from("<" + fmt, blob, at + offset)[0]


def _kernels(backend, plan):
    return [backend.functions[fn - 1][2] for fn, *_ in plan.launches]


def test_sm90_launch_places_tensor_maps_and_block_where_the_driver_says(built):
    be = FakeBackend()
    bf = np.dtype(bfloat16)
    a, b = _dense(bf, (1000, 4096)), _dense(bf, (4096, 1024))
    bias = _dense(bf, (1024,))
    res = _dense(bf, (1000, 1024))
    plan = matmul.plan_matmul(be, a, b, _dense(bf, (1000, 1024)), bias, None, "gelu", res)
    assert _kernels(be, plan) == ["gk_gemm_sm90"]
    fn, grid, block, shared, blob, slots = plan.launches[0]
    file, defines, _ = be.functions[fn - 1]
    assert file == "gemm_sm90.cu"
    assert {"GK_EPI_BIAS=1", "GK_EPI_ACT=GK_ACT_GELU", "GK_EPI_RESIDUAL=1", "GK_B_MN=1"} <= set(
        defines
    )
    at = 0x130
    assert len(blob) == at + arg_struct("gk_gemm_sm90_args").size
    assert block == (C["GK_SM90_THREADS"], 1, 1) and be.shared[fn] == shared
    get = {
        f: _field(blob, "gk_gemm_sm90_args", f, at) for f in arg_struct("gk_gemm_sm90_args").fields
    }
    assert (get["m"], get["n"], get["so_m"], get["batch"], get["splits"]) == (
        1000,
        1024,
        1024,
        1,
        1,
    )
    assert get["total_tiles"] == get["tiles_m"] * get["tiles_n"] and grid[0] <= 132
    assert get["k_tiles"] == 4096 * 2 // 128
    assert get["sr_m"] == 1024 and get["s_bias"] == 1
    maps = [s for s in slots if s[0] == "tensor_map"]
    assert [(s[1], s[2], s[3]) for s in maps] == [(0x30, 0, 0), (0xB0, 1, 0)]
    assert maps[0][4][2][:3] == (4096, 1000, 1)  # a: K-major, (k, m) innermost first
    assert maps[1][4][2][:3] == (1024, 4096, 1)  # b: N-major, (n, k)
    addresses = {s[1] - at: s[2] for s in slots if s[0] == "address"}
    s = arg_struct("gk_gemm_sm90_args")
    assert addresses == {
        s.offset("out"): 4,  # the plan's output follows the caller's a, b, bias, residual
        s.offset("bias"): 2,
        s.offset("residual"): 3,
    }


def test_split_k_is_the_gemm_and_its_reduction_over_one_scratch_buffer(built):
    be = FakeBackend()
    bf = np.dtype(bfloat16)
    plan = matmul.plan_matmul(be, _dense(bf, (256, 8200)), _dense(bf, (8200, 520)),
                              _dense(bf, (256, 520)), None, None)  # fmt: skip
    assert _kernels(be, plan) == ["gk_gemm_sm90", "gk_gemm_splitk_reduce"]
    (_, _, _, _, blob, slots), (_, _, _, shared, red_blob, red_slots) = plan.launches
    splits = _field(blob, "gk_gemm_sm90_args", "splits", 0x130)
    assert splits > 1 and shared == 0
    assert plan.scratch == [splits * 256 * 520 * 4]
    # The reduction reads the same block (at offset 0) with the same addresses.
    assert red_blob == blob[0x130:]
    ws = arg_struct("gk_gemm_sm90_args").offset("workspace")
    assert ("address", 0x130 + ws, 3, 0, 8) in slots and ("address", ws, 3, 0, 8) in red_slots


def test_row_slices_of_the_sm90_gemm_start_where_tma_can_address_them(built):
    be = FakeBackend()
    bf = np.dtype(bfloat16)
    a = Layout(bf, (300, 72), (2, 608))  # M-major: a slice's start moves by 2 bytes a row
    plan = matmul.plan_matmul(be, a, _dense(bf, (72, 64)), _dense(bf, (300, 64)), None, 100)
    starts = [s[3] for _, _, _, _, _, slots in plan.launches for s in slots if s[1] == 0x30]
    assert starts == [0, 192, 384, 576]  # 96 rows each (16-byte steps)
    rows = [_field(blob, "gk_gemm_sm90_args", "m", 0x130) for *_, blob, _ in plan.launches]
    assert rows == [96, 96, 96, 12]
    tiles = {_field(blob, "gk_gemm_sm90_args", "tiles_n", 0x130) for *_, blob, _ in plan.launches}
    assert len(tiles) == 1


def test_tf32_copies_what_tma_cannot_read_in_place(built):
    be = FakeBackend()
    a, b = _dense("float32", (129, 37)), _dense("float32", (37, 200))  # 148-byte rows of a
    plan = matmul.plan_matmul(be, a, b, _dense("float32", (129, 200)), None, None, tf32=True)
    names = _kernels(be, plan)
    assert names[-1] == "gk_gemm_sm90" and names.count("gk_ew_strided") == 2
    assert len(plan.scratch) == 2
    *_, slots = plan.launches[-1]
    maps = [s for s in slots if s[0] == "tensor_map"]
    assert [m[2] for m in maps] == [3, 4]  # both read from the copies (scratch after out)
    dims, st = maps[0][4][2], maps[0][4][3]
    assert dims[:2] == (37, 129) and st[0] == 160  # K-major, rows padded to 16 bytes
    exact = matmul.plan_matmul(be, a, b, _dense("float32", (129, 200)), None, None)
    assert _kernels(be, exact) == ["gk_gemm_f32_small"]


@pytest.mark.parametrize(
    "m, n, batch, kernel, grid",
    [
        (64, 64, 1, "gk_gemm_f32_small", (2, 2, 1)),
        (512, 512, 1, "gk_gemm_f32_small", (16, 16, 1)),  # 16 big tiles: an eighth of the SMs
        (129, 200, 8, "gk_gemm_f32_small", (7, 5, 8)),
        (768, 768, 1, "gk_gemm_f32", (6, 6, 1)),  # 36 big tiles: more than a quarter
        (64, 64, 40, "gk_gemm_f32", (1, 1, 40)),
    ],
)
def test_exact_float32_products_too_small_for_the_big_tiles_take_small_ones(m, n, batch, kernel,
                                                                           grid):  # fmt: skip
    plan = gp.plan_f32(m, n, batch, False, True, True, 132)
    assert (plan.kernel, plan.grid) == (kernel, grid)
    assert (
        plan.file
        == {"gk_gemm_f32": "gemm_f32.cu", "gk_gemm_f32_small": "gemm_f32_small.cu"}[kernel]
    )
    # A tuning request is for the big kernel.
    assert gp.plan_f32(m, n, batch, False, True, True, 132, tune=(1, 0)).kernel == "gk_gemm_f32"


def test_exact_float32_products_split_a_long_k_over_few_tiles():
    # as many ranges as fill 2 blocks on each of 132 SMs, or K // 128, in whole slices of 8
    assert gp.f32_splits(32, 4064, 4096, 1, 132) == (8, 512)  # 32 tiles
    assert gp.f32_splits(33, 40, 1300, 1, 132) == (10, 136)
    assert gp.f32_splits(129, 40, 1300, 3, 132) == (10, 136)
    assert gp.f32_splits(768, 768, 4096, 1, 132) == (7, 592)  # 36 tiles
    assert gp.f32_splits(1024, 1152, 4096, 1, 132) == (1, 4096)  # 72 tiles: over half the SMs
    assert gp.f32_splits(32, 4064, 255, 1, 132) == (1, 255)  # K too short for two ranges
    assert gp.f32_splits(5, 7, 4099, 1, 132) == (31, 136)  # the last range shorter
    plan = gp.plan_f32(32, 4064, 1, False, True, True, 132, split=(8, 512))
    described = (plan.kernel, plan.grid, plan.splits, plan.k_per_split)
    assert described == ("gk_gemm_f32", (32, 1, 8), 8, 512)
    # split launches take their own instance (the partial sums' stores), unsplit ones the other
    assert "GK_F32_SPLIT=1" in plan.defines
    whole = gp.plan_f32(4096, 4096, 1, False, True, True, 132)
    assert whole.splits == 1 and "GK_F32_SPLIT=0" in whole.defines


def test_split_float32_products_reduce_each_row_slice(built):
    """Row slices share the whole product's split (the same bits sliced or not); each slice's
    partial sums are added by its own reduction launch, from one workspace."""
    be = FakeBackend()
    a, b = _dense("float32", (300, 2048)), _dense("float32", (2048, 64))
    plan = matmul.plan_matmul(be, a, b, _dense("float32", (300, 64)), None, 128)
    assert _kernels(be, plan) == ["gk_gemm_f32", "gk_gemm_f32_reduce"] * 3
    splits = {_field(blob, "gk_gemm_args", "splits", 0) for *_, blob, _ in plan.launches}
    per = {_field(blob, "gk_gemm_args", "k_per_split", 0) for *_, blob, _ in plan.launches}
    assert splits == {gp.f32_splits(300, 64, 2048, 1, be.sm_count)[0]} and len(per) == 1
    assert len(plan.scratch) == 1


def test_float64_products_take_big_tiles_where_they_fill_the_gpu_and_16_byte_copies(built):
    """gemm_f64.cu: 128 x 128 tiles when they fill the SMs and the copies are 16 bytes (8-byte
    copies at that tile would spill), else 64 x 64; row slices share the whole product's tile,
    start on even rows where a is read 16 bytes at a time along m, and the activation follows
    the product (bias in the epilogue, then the activation, then the residual)."""
    layout = (False, True, True)
    assert gp.plan_f64(4096, 4096, 1, layout, 132, False, False).tile == 128
    assert gp.plan_f64(4032, 64, 1, layout, 132, False, False).tile == 64  # 32 big tiles
    assert gp.plan_f64(4096, 4096, 1, (False, True, False), 132, False, False).tile == 64
    plan = gp.plan_f64(1000, 300, 3, layout, 132, True, True)
    assert plan.grid == (5, 16, 3) and plan.threads == C["GK_F64_THREADS"]
    assert "GK_EPI_BIAS=1" in plan.defines and "GK_EPI_RESIDUAL=1" in plan.defines
    assert plan.shared_bytes == C["GK_F64_STAGES"] * 2 * 64 * (C["GK_F64_BK"] + 4) * 8
    f64 = np.dtype("float64")
    odd = _prob(1001, 64, 64, (64, 1), (64, 1), "float64")
    assert gp.tile_layout(odd, 2) == (False, True, True)
    assert not gp.tile_layout(_prob(64, 64, 63, (63, 1), (64, 1), "float64"), 2)[2]  # odd K rows
    be = FakeBackend()
    a_mn = Layout(f64, (2050, 2048), (8, 2050 * 8), 16)  # the .T of a row-major matrix
    b, out = _dense(f64, (2048, 2048)), _dense(f64, (2050, 2048))
    plan = matmul.plan_matmul(be, a_mn, b, out, None, 1001)
    assert _kernels(be, plan) == ["gk_gemm_f64"] * 3
    rows = [_field(blob, "gk_gemm_args", "m") for *_, blob, _ in plan.launches]
    assert rows == [1000, 1000, 50]  # slices of whole tiles' rows: even
    assert {be.functions[fn - 1][1][3] for fn, *_ in plan.launches} == {"GK_F64_BT=128"}
    for fn, _, _, shared, *_ in plan.launches:
        assert be.shared[fn] == shared > 48 * 1024  # the stages: allowed past 48 KiB
    lows = [_field(blob, "gk_gemm_args", "lower") for *_, blob, _ in plan.launches]
    assert lows == [0, 0, 0]
    plan = matmul.plan_matmul(be, a_mn, b, out, None, 1001, lower=True)
    fields = [(_field(b_, "gk_gemm_args", "lower"), _field(b_, "gk_gemm_args", "row0"))
              for *_, b_, _ in plan.launches]  # fmt: skip
    assert fields == [(1, 0), (1, 1000), (1, 2000)]  # each slice's first row: its diagonal
    bias = _dense(f64, (2048,))
    plan = matmul.plan_matmul(be, _dense(f64, (2050, 2048)), b, out, bias, None, "relu", out)
    assert _kernels(be, plan) == ["gk_gemm_f64", "gk_ew_contig", "gk_ew_contig"]


def test_gemv_ignores_row_block_and_other_gpus_take_the_old_kernels(built):
    bf = np.dtype(bfloat16)
    x, w_t = _dense(bf, (1, 4096)), Layout(bf, (4096, 11008), (2, 8192))
    for row_block in (None, 1):
        be = FakeBackend()
        plan = matmul.plan_matmul(be, x, w_t, _dense(bf, (1, 11008)), None, row_block)
        assert _kernels(be, plan) == ["gk_gemv_nk"]
    be = FakeBackend(cc=(8, 0), sm90a=False)
    big = _dense(bf, (512, 512))
    plan = matmul.plan_matmul(be, big, big, big, None, None, "silu", big)
    # The product, then the activation and the residual add in the same plan.
    assert _kernels(be, plan) == ["gk_matmul_mma", "gk_ew_contig", "gk_ew_contig"]
    ops = [be.functions[fn - 1][1][0] for fn, *_ in plan.launches[1:]]
    assert ops == ["GK_OP=silu", "GK_OP=add"]
    be = FakeBackend(cc=(7, 5), sm90a=False)
    plan = matmul.plan_matmul(be, big, big, big, None, None)
    assert _kernels(be, plan) == ["gk_matmul"]


def test_tensor_maps_may_not_overlap_the_block(built):
    with pytest.raises(ValueError, match="overlaps"):
        b = plans.PlanBuilder(FakeBackend(), "aa", outputs=[64])
        b.launch(1, 1, 1, "gk_gemm_sm90_args", {}, at=0x40,
                 tensor_maps=[(0, 0, 0, None)])  # fmt: skip
    assert _native.TENSOR_MAP_BYTES == 128


# --- the plan itself, run over a launch table that records instead of launching ----------------


class TensorMapDesc(ctypes.Structure):
    """native/include/gpukit/launch_table.h's gk_tensor_map_desc."""

    _fields_ = [
        ("data_type", ctypes.c_uint32),
        ("rank", ctypes.c_uint32),
        ("global_dim", ctypes.c_uint64 * 5),
        ("global_strides", ctypes.c_uint64 * 4),
        ("box_dim", ctypes.c_uint32 * 5),
        ("element_strides", ctypes.c_uint32 * 5),
        ("interleave", ctypes.c_uint32),
        ("swizzle", ctypes.c_uint32),
        ("l2_promotion", ctypes.c_uint32),
        ("oob_fill", ctypes.c_uint32),
    ]


LAUNCH = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_uint64,
    ctypes.POINTER(ctypes.c_uint32),
    ctypes.POINTER(ctypes.c_uint32),
    ctypes.c_uint32,
    ctypes.c_uint64,
    ctypes.c_void_p,
    ctypes.c_uint64,
)
ENCODE = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(TensorMapDesc), ctypes.c_uint64
)
ERROR_NAME = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int32)
FORK = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)
)
JOIN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64)


class LaunchTable(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint32),
        ("ctx", ctypes.c_void_p),
        ("launch", LAUNCH),
        ("encode_tensor_map", ENCODE),
        ("error_name", ERROR_NAME),
        ("fork", FORK),
        ("join", JOIN),
    ]


class Recorder:
    """A gk_launch_table whose launches record (function, grid, block, shared, parameter bytes)
    and whose tensor maps are 128 bytes naming the address and descriptor they were made for."""

    def __init__(self):
        self.launches, self.encoded = [], []
        self.streams, self.lane_calls = [], []  # per launch its stream; fork / join calls

        def launch(ctx, fn, grid, block, shared, stream, args, size):
            self.launches.append((fn, grid[0], block[0], shared, ctypes.string_at(args, size)))
            self.streams.append(stream)
            return 0

        def encode(ctx, out, desc, address):
            d = desc.contents
            self.encoded.append(
                (address, d.data_type, d.rank, tuple(d.global_dim), tuple(d.global_strides),
                 tuple(d.box_dim), tuple(d.element_strides),
                 (d.interleave, d.swizzle, d.l2_promotion, d.oob_fill))
            )  # fmt: skip
            tag = struct.pack("<QQ", 0x7E45_0000 + len(self.encoded), address)
            ctypes.memmove(out, tag * 8, 128)
            return 0

        def fork(ctx, stream, side):  # stream S's second lane is S + 1000
            side[0] = stream + 1000
            self.lane_calls.append(("fork", stream))
            return 0

        def join(ctx, stream, side):
            self.lane_calls.append(("join", stream, side))
            return 0

        self._callbacks = (
            LAUNCH(launch), ENCODE(encode), ERROR_NAME(lambda ctx, code: b"E"), FORK(fork),
            JOIN(join),
        )  # fmt: skip
        self.table = LaunchTable(2, None, *self._callbacks)
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
        self.capsule = new_capsule(ctypes.addressof(self.table), b"gpukit.launch_table", None)


def test_a_plan_launches_the_bytes_the_kernel_expects():
    """The sm_90a GEMM's plan run by gpukit._core over a recording table: tensor maps encoded
    from the operands' addresses (plus a row slice's start) land at the driver's offsets, the
    argument block at its offset with every address filled in, split-K's reduction after it."""
    rec = Recorder()
    be = FakeBackend()
    be.pool = _core.Pool(_native.host_allocator_table())
    be.launch_table = rec.capsule
    bf = np.dtype(bfloat16)
    m, k, n = 256, 8200, 520  # few tiles: K is split
    a, b, out = _dense(bf, (m, k)), Layout(bf, (k, n), (2, 2 * k)), _dense(bf, (m, n))
    plan = matmul.plan_matmul(be, a, b, out, _dense(bf, (n,)), 128)
    bufs = [be.pool.allocate(x, 0) for x in (m * k * 2, k * n * 2, n * 2)]
    result = plan(0, None, bufs[0], 32, bufs[1], 0, bufs[2], 0)
    ptr_a, ptr_b, ptr_bias, ptr_out = (x.device_ptr(0) for x in (*bufs, result))
    s = arg_struct("gk_gemm_sm90_args")
    names = [be.functions[fn - 1][2] for fn, *_ in rec.launches]
    assert names == ["gk_gemm_sm90", "gk_gemm_splitk_reduce"] * 2  # two slices of 128 rows
    size = 0x130 + s.size
    for i, (_, grid, block, shared, blob) in enumerate(rec.launches):
        gemm_launch = i % 2 == 0
        at = 0x130 if gemm_launch else 0
        assert len(blob) == (size if gemm_launch else s.size)

        def field(name, blob=blob, at=at):
            return _field(blob, "gk_gemm_sm90_args", name, at)

        r0 = 128 * (i // 2)
        assert field("out") == ptr_out + r0 * n * 2 and field("bias") == ptr_bias
        assert field("m") == 128 and field("n") == n and field("splits") > 1
        assert field("workspace") % 8 == 0 and field("workspace") not in (0, ptr_out)
        if gemm_launch:
            assert block == C["GK_SM90_THREADS"] and shared > 48 * 1024 and 1 <= grid <= 132
            tag_a, tag_b = blob[0x30 : 0x30 + 16], blob[0xB0 : 0xB0 + 16]
            assert struct.unpack("<QQ", tag_a)[1] == ptr_a + 32 + r0 * k * 2
            assert struct.unpack("<QQ", tag_b)[1] == ptr_b
            assert blob[0x30:0xB0] == tag_a * 8 and blob[0xB0:0x130] == tag_b * 8
            assert blob[:0x30] == bytes(0x30)
        else:
            assert block == C["GK_SPLITK_THREADS"] and shared == 0 and grid >= 1
    # Each slice's launch encodes its tensor maps, then keeps them while the addresses stay.
    assert [e[0] for e in rec.encoded] == [ptr_a + 32, ptr_b, ptr_a + 32 + 128 * k * 2, ptr_b]
    plan(0, None, bufs[0], 32, bufs[1], 0, bufs[2], 0)
    assert len(rec.launches) == 8 and len(rec.encoded) == 4
    defines = dict(d.split("=") for d in be.functions[rec.launches[0][0] - 1][1])
    bm, bn = int(defines["GK_GEMM_BM"]), int(defines["GK_GEMM_BN"])
    _, dtype, rank, dims, strides, box, elem, modes = rec.encoded[0]
    assert (dtype, rank, modes) == (9, 3, (0, 3, 2, 0))  # bf16; 128-byte swizzle, L2 promotion
    assert dims == (k, 128, 1, 0, 0) and strides == (2 * k, 2 * k * 128, 0, 0)
    assert box == (64, bm, 1, 0, 0) and elem == (1, 1, 1, 0, 0)
    _, _, _, dims, strides, box, _, _ = rec.encoded[1]  # b read K-major, as w.T
    assert dims == (k, n, 1, 0, 0) and strides == (2 * k, 2 * k * n, 0, 0)
    assert box == (64, bn, 1, 0, 0)
    with pytest.raises(ValueError, match="16-byte aligned"):
        plan(0, None, bufs[0], 2, bufs[1], 0, bufs[2], 0)  # a view TMA cannot address
