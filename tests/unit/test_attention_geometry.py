"""The tensor-core attention's launch geometry (gpukit.runtime.cuda.attention_geometry) with the
shipped tile tables of kernels/geometry.cuh: head-dim classes, kernel choice, grids, and key
splits that depend on the cache capacity only."""

import pytest

from gpukit.runtime import kernels
from gpukit.runtime.args import CONSTANTS
from gpukit.runtime.cuda import attention_geometry as geometry

PRE, DEC = kernels.ATTENTION_PREFILL_TILES, kernels.ATTENTION_DECODE_TILES
SMEM = 227 * 1024
MAX_SPLITS, COMBINE = CONSTANTS["GK_ATTN_MAX_SPLITS"], CONSTANTS["GK_ATTN_COMBINE_THREADS"]


def test_head_dim_classes():
    assert kernels.ATTENTION_TC_HEAD_DIMS == (64, 96, 128, 256)
    got = [kernels.attention_tc_head_dim(d) for d in (8, 48, 64, 72, 96, 120, 128, 200, 256)]
    assert got == [64, 64, 64, 96, 96, 128, 128, 256, 256]
    assert [kernels.attention_tc_head_dim(d) for d in (0, 7, 100, 264)] == [None] * 4
    assert sorted(PRE) == sorted(DEC) == list(kernels.ATTENTION_TC_HEAD_DIMS)


def test_every_shipped_configuration_fits():
    for dclass, tiles in PRE.items():
        assert geometry.prefill_shared(tiles, dclass) <= SMEM
        assert tiles.keys % 16 == 0 and tiles.stages >= 2
    for dclass in DEC:
        assert geometry.decode_fits(1, dclass, SMEM)
    # Two m16 tiles fit every class but d256, whose two-stage ring cannot hold 32 rows' state.
    fits = [geometry.decode_fits(2, c, SMEM) for c in (64, 96, 128, 256)]
    assert fits == [True, True, True, False]


def test_instances_carry_the_tiles():
    file, defines = kernels.attention_tc_prefill("bf16", 128, "bool")
    t = PRE[128]
    assert file == "attention_tc.cu"
    assert defines == (
        "GK_MMA_TYPE=bf16", "GK_TC_D=128", "GK_TC_MASK=1", f"GK_TC_WARPS={t.warps}",
        f"GK_TC_MW={t.m_tiles}", f"GK_TC_BN={t.keys}", f"GK_TC_STAGES={t.stages}",
        f"GK_TC_QREG={int(t.q_regs)}",
    )  # fmt: skip
    file, defines = kernels.attention_tc_decode("f16", 64, "additive", 2)
    t = DEC[64]
    assert file == "attention_decode.cu"
    assert defines == (
        "GK_MMA_TYPE=f16", "GK_TC_D=64", "GK_TC_MASK=2", f"GK_DEC_WARPS={t.warps}",
        f"GK_DEC_KT={t.keys}", f"GK_DEC_STAGES={t.stages}", "GK_DEC_MT=2",
    )  # fmt: skip


def test_prefill_grid_covers_every_row():
    p = geometry.prefill("bf16", 3, 5, 1000, 128, "none")
    assert p.main.grid == (15, -(-1000 // PRE[128].rows), 1)
    assert p.main.block == 32 * PRE[128].warps and p.main.kernel == "gk_attn_tc"
    assert p.combine is None and p.n_splits == 1


def test_kernel_choice():
    assert geometry.use_decode(32, 8, 1, 128, SMEM)  # 4 rows per kv head
    assert geometry.use_decode(32, 2, 2, 128, SMEM)  # 32 rows: two m16 tiles
    assert not geometry.use_decode(32, 2, 3, 128, SMEM)
    assert not geometry.use_decode(4, 4, 100, 64, SMEM)
    assert not geometry.use_decode(32, 2, 2, 256, SMEM)  # d256 holds one m16 tile only
    assert geometry.tensor_core_attention("bf16", 1, 32, 8, 1, 8192, 128, "none", 132, SMEM)
    p = geometry.tensor_core_attention("bf16", 1, 32, 2, 2, 100, 256, "none", 132, SMEM)
    assert p.main.kernel == "gk_attn_tc"


def test_calls_tensor_cores_do_not_serve():
    args = ("bf16", 1, 4, 4, 10, 20)
    assert geometry.tensor_core_attention(*args, 100, "none", 132, SMEM) is None  # not 8k
    assert geometry.tensor_core_attention(*args, 264, "none", 132, SMEM) is None
    assert geometry.tensor_core_attention("bf16", 1, 4, 4, 10, 0, 64, "none", 132, SMEM) is None
    assert geometry.tensor_core_attention(*args, 256, "none", 132, 48 * 1024) is None
    # More than 65535 row tiles of one head.
    rows = PRE[64].rows * 65536
    assert geometry.tensor_core_attention("f16", 1, 1, 1, rows, 64, 64, "none", 132, SMEM) is None
    assert geometry.loadable_strides([[64, 64, 8, 1]] * 3)
    assert not geometry.loadable_strides([[64, 64, 8, 2]])
    assert not geometry.loadable_strides([[64, 60, 8, 1]])
    assert not geometry.loadable_strides([[0, 8 << 22, 8 << 22, 1]])


@pytest.mark.parametrize("capacity", [1, 63, 64, 1000, 8192, 100_000, 4_000_000])
@pytest.mark.parametrize("batch_heads", [(1, 8), (8, 8), (64, 32)])
def test_decode_splits_cover_the_capacity(capacity, batch_heads):
    b, hkv = batch_heads
    tiles = DEC[128]
    p = geometry.decode("bf16", b, 4 * hkv, hkv, 1, capacity, 128, "none", 132, SMEM)
    unit = tiles.warps * tiles.keys
    assert p.keys_per_split % unit == 0
    assert p.n_splits * p.keys_per_split >= capacity > (p.n_splits - 1) * p.keys_per_split
    assert 1 <= p.n_splits <= MAX_SPLITS
    assert p.main.grid == (p.n_splits, b * hkv, 1)
    assert (p.combine is None) == (p.n_splits == 1)
    if p.combine is not None:
        assert p.combine.grid == (b * 4 * hkv, 1, 1) and p.combine.block == COMBINE
        assert p.workspace == (p.n_splits * b * 4 * hkv * 128, p.n_splits * b * 4 * hkv * 2)


@pytest.mark.parametrize("rule", ["fill", "wave", 40])
@pytest.mark.parametrize("tiles", [(4, 16, 4), (8, 16, 3), (4, 16, 3), (4, 16, 2), (2, 16, 4)])
@pytest.mark.parametrize("batch", [1, 8])
def test_decode_split_rules(monkeypatch, rule, tiles, batch):
    """notes/decode_ab.py's variants: the "wave" rule never starts a second wave of blocks (slots
    counted by shared memory and by registers, at most 2 blocks of 128 threads an SM) and fills
    at least half of it; a fixed count is taken as it is, rounded to whole units of keys."""
    t = kernels.AttentionDecodeTiles(*tiles)
    monkeypatch.setattr(geometry, "DECODE_SPLITS", rule)
    monkeypatch.setitem(kernels.ATTENTION_DECODE_TILES, 128, t)
    p = geometry.decode("bf16", batch, 32, 8, 1, 8192, 128, "none", 132, SMEM)
    assert p.main.shared == geometry.decode_shared(t, 1, 128)
    assert f"GK_DEC_STAGES={t.stages}" in p.main.defines
    blocks = p.main.grid[0] * p.main.grid[1]
    per_sm = min(SMEM // (p.main.shared + 1024), 65536 // (256 * 32 * t.warps))
    if rule == "wave":
        assert 132 * per_sm // 2 <= blocks <= 132 * per_sm
    elif rule == 40:
        per = -(-8192 // (t.warps * t.keys * 40))
        assert p.keys_per_split == per * t.warps * t.keys
    assert p.n_splits * p.keys_per_split >= 8192 > (p.n_splits - 1) * p.keys_per_split
