"""kernels/attention_sm90.cu without a GPU: its parameters (three TMA tensor maps, then the
gk_attn_tc_args block) sit where the plans pack them, and the plans choose it only where it
serves the call (unmasked prefill, head_dim 64 / 128 / 256, operands TMA can address). The SASS
checks (HGMMA fed by UTMALDG, no local memory) are test_gemm_kernels.py's, over the same
sm90a_instances."""

import pytest
from test_gemm_kernels import _Declared, _sm90a, cubin_params

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


def test_every_shipped_tile_fits_the_shared_memory_of_an_h100():
    for d in kernels.ATTENTION_SM90_HEAD_DIMS:
        launch = attention_geometry.sm90_prefill("bf16", 4, 32, 2048, d)
        assert launch.shared <= 227 * 1024, (d, launch.shared)
        assert launch.grid == (16, 128, 1)  # the row tiles of a head together


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
