"""kernels/attention_sm90.cu without a GPU: its parameters (three TMA tensor maps, then the
gk_attn_tc_args block) sit where the plans pack them, and the plans choose it only where it
serves the call (unmasked prefill, head_dim 64 / 128 / 256, operands TMA can address). The SASS
checks (HGMMA fed by UTMALDG, no local memory) are test_gemm_kernels.py's, over the same
sm90a_instances, and here for the persistent form. The persistent grid's walk over the work units
(the kernel's gk_fa_items, restated) serves every row tile once."""

import dataclasses

import pytest
from test_gemm_kernels import _cuobjdump, _Declared, _sass, _sm90a, cubin_params

from gpukit.runtime import kernels
from gpukit.runtime.args import arg_struct
from gpukit.runtime.cuda import attention, attention_geometry


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUKIT_CACHE_DIR", str(tmp_path / "cache"))


def test_the_cubin_declares_the_parameters_the_plans_pack():
    j = _sm90a()
    size = arg_struct("gk_attn_tc_args").size
    for file, defines in kernels.sm90a_instances():
        if file != "attention_sm90.cu":
            continue
        image = j.build_builtin(file, defines)
        params, bank = cubin_params(image, "gk_attn_sm90")
        # 64-byte aligned tensor maps from the parameter bank's 0x210 (constant bank 0, sm_90).
        assert params == [(0x30, 128), (0xB0, 128), (0x130, 128), (0x1B0, size)], defines
        offsets = attention.sm90_params(_Declared(params), None)
        assert offsets == (0x30, 0xB0, 0x130, 0x1B0)
        assert bank == offsets[3] + size


@pytest.mark.parametrize("causal", [False, True])
def test_every_shipped_tile_fits_the_shared_memory_of_an_h100(causal):
    for d in kernels.ATTENTION_SM90_HEAD_DIMS:
        launch = attention_geometry.sm90_prefill("bf16", 4, 32, 2048, d, causal=causal,
                                                 sm_count=132)  # fmt: skip
        assert launch.shared <= 227 * 1024, (d, launch.shared)
        if attention_geometry.sm90_table(causal)[d].persist:
            assert launch.grid == (132, 1, 1)  # a block per SM
        else:
            assert launch.grid == (16, 128, 1)  # the row tiles of a head together


def _persistent(d, fold=False):
    t = kernels.ATTENTION_SM90_TILES[d]
    return dataclasses.replace(t, persist=True, fold=fold)


@pytest.mark.parametrize("fold", [False, True])
def test_the_persistent_form_compiles_to_wgmma_without_spills_and_the_same_parameters(fold):
    """The persistent form alone, and with the folded exponent."""
    j = _sm90a()
    tool = _cuobjdump()
    size = arg_struct("gk_attn_tc_args").size
    for mma in ("bf16", "f16"):
        for d in kernels.ATTENTION_SM90_HEAD_DIMS:
            file, defines = kernels.attention_sm90(mma, d, _persistent(d, fold))
            assert "GK_FA_PERSIST=1" in defines and f"GK_FA_FOLD={int(fold)}" in defines
            image = j.build_builtin(file, defines)
            params, _ = cubin_params(image, "gk_attn_sm90")
            assert params == [(0x30, 128), (0xB0, 128), (0x130, 128), (0x1B0, size)], defines
            if tool is None:
                continue
            sass, res = _sass(tool, image)
            assert "HGMMA" in sass and "UTMALDG" in sass, defines
            assert " LDL" not in sass and " STL" not in sass, f"local memory in {defines}"
            assert "STACK:0 " in res.split("gk_attn_sm90")[1], res
    if tool is None:
        pytest.skip("no cuobjdump: compiled, SASS not inspected")


@pytest.mark.parametrize("causal", [False, True])
def test_the_persistent_grid_takes_a_block_per_sm_at_most(causal):
    t = _persistent(64)
    # b4 h32 s4096: 32 row tiles a head, 16 causal pairs.
    units = attention_geometry.sm90_units(4, 32, 4096, causal)
    assert units == 128 * (16 if causal else 32)
    launch = attention_geometry.sm90_prefill(
        "f16", 4, 32, 4096, 64, causal=causal, sm_count=132, tiles=t
    )
    assert launch.grid == (132, 1, 1)
    small = attention_geometry.sm90_prefill(
        "f16", 1, 2, 300, 64, causal=causal, sm_count=132, tiles=t
    )
    assert small.grid == (attention_geometry.sm90_units(1, 2, 300, causal), 1, 1)
    assert attention_geometry.sm90_units(1, 2, 300, causal) == (4 if causal else 6)
    # The persistent form loads each consumer's half of the Q tile on its own.
    assert attention_geometry.sm90_q_rows(t) == 64
    tile_a_block = dataclasses.replace(t, persist=False)
    assert attention_geometry.sm90_q_rows(tile_a_block) == 128


@pytest.mark.parametrize("causal", [False, True])
def test_the_folded_exponent_serves_positive_scales_only(monkeypatch, causal):
    table = attention_geometry.sm90_table(causal)
    folded = dataclasses.replace(table[128], fold=True)
    monkeypatch.setitem(table, 128, folded)
    assert attention_geometry.sm90_tiles(128, 0.088, causal).fold
    assert not attention_geometry.sm90_tiles(128, -0.2, causal).fold
    assert not attention_geometry.sm90_tiles(128, 0.0, causal).fold
    assert attention_geometry.sm90_tiles(128, -0.2, causal).persist == folded.persist


def _walk(block, grid, bh_count, sq, causal):
    """gk_fa_items::each of the persistent form: the (bh, row tile) items of one block."""
    rows = -(-sq // kernels.ATTENTION_SM90_ROWS)
    per_head = (rows + 1) // 2 if causal else rows
    units = per_head * bh_count
    items, u, second = [], block, False
    while u < units:
        p = u % per_head
        items.append((u // per_head, p if second else rows - 1 - p))
        second = not second and causal and 2 * p + 1 < rows
        if not second:
            u += grid
    return items


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bh, sq, grid", [(1, 1, 132), (3, 129, 2), (6, 1000, 5), (128, 4096, 132)])
def test_the_persistent_walk_serves_every_row_tile_once(causal, bh, sq, grid):
    rows = -(-sq // kernels.ATTENTION_SM90_ROWS)
    units = attention_geometry.sm90_units(1, bh, sq, causal)
    grid = min(grid, units)
    walks = [_walk(i, grid, bh, sq, causal) for i in range(grid)]
    served = sorted(x for w in walks for x in w)
    assert served == [(h, r) for h in range(bh) for r in range(rows)]
    if causal and sq == 4096:
        # Key tiles a block serves (row tile r of a causal head needs r + 1): the pairs balance
        # the blocks to within one pair, where a stride over single tiles would not.
        work = [sum(r + 1 for _, r in w) for w in walks]
        assert max(work) - min(work) <= rows + 1, (min(work), max(work))


@pytest.mark.parametrize(
    "d, mask, strides, aligned, serves",
    [
        (128, "none", [[1 << 20, 1 << 14, 128, 1]] * 3, True, True),
        (64, "none", [[1 << 20, 64, 2048, 1]] * 3, True, True),  # (batch, seq, heads, d) storage
        (256, "none", [[1 << 20, 1 << 14, 256, 1]] * 3, True, True),
        (128, "bool", [[1 << 20, 1 << 14, 128, 1]] * 3, True, False),
        (96, "none", [[1 << 20, 1 << 14, 96, 1]] * 3, True, False),
        (120, "none", [[1 << 20, 1 << 14, 120, 1]] * 3, True, False),
        (128, "none", [[1 << 20, 1 << 14, 128, 1]] * 3, False, False),
        (128, "none", [[1 << 20, 1 << 14, 132, 1]] * 3, True, False),  # rows 264 bytes apart
        (128, "none", [[1 << 20, 1 << 14, 128, 2]] * 3, True, False),
        (128, "none", [[1 << 20, 0, 128, 1]] * 3, True, False),  # heads broadcast
    ],
)
def test_which_calls_the_sm90_kernel_serves(d, mask, strides, aligned, serves):
    assert attention_geometry.sm90_serves(d, mask, strides, aligned) is serves


def test_tensor_maps_of_extent_one_axes_take_legal_strides():
    m = attention_geometry.sm90_map("bfloat16", (1, 1, 1, 128), [0, 0, 0, 1], 128)
    assert m.dims == (128, 1, 1, 1)
    assert all(s > 0 and s % 16 == 0 for s in m.strides)
    m = attention_geometry.sm90_map("float16", (2, 3, 5, 64), [960, 64, 192, 1], 128)
    assert m.dims == (64, 5, 3, 2) and m.strides == (384, 128, 1920) and m.box == (64, 128, 1, 1)
    assert m.dtype_code == 6
    s = attention_geometry.sm90_strides((1, 3, 1, 64), [0, 64, 0, 1])
    assert s == [8, 64, 8, 1]
