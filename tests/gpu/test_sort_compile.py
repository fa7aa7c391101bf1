"""Every raw key type and kind of the sorting kernels compiles (NVRTC, sm_90; no GPU needed).
The float32, float64, bool, bfloat16 and int16 instances are among
runtime.kernels.representative_instances, which tests/gpu/test_jit.py compiles for every
architecture and for AMD."""

import dataclasses

import numpy as np
import pytest

from gpukit.errors import BackendUnavailableError
from gpukit.runtime import jit
from gpukit.runtime import sort_plan as P


@pytest.mark.parametrize(
    "name", ["int8", "uint16", "float16", "int32", "uint32", "int64", "uint64"]
)
def test_sorting_instances_compile(name):
    try:
        compiler = jit.open_compiler("nvrtc")[0]
    except BackendUnavailableError as e:
        pytest.skip(str(e))
    j = jit.Jit(compiler, ["--gpu-architecture=sm_90"])
    dtype = np.dtype(name)
    for values in (False, True):
        image = j.build_builtin(*P.sort_defines(dtype, values, P.tuning(dtype.itemsize, values)))
        assert image[:4] == b"\x7fELF"
    assert j.build_builtin(*P.search_defines(dtype))[:4] == b"\x7fELF"


@pytest.mark.parametrize("masks, lookback", [(0, 1), (1, 8)])
def test_onesweep_ranking_and_look_back_variants_compile(masks, lookback):
    """The tuning knobs the defaults leave off (warp-match ranking, a look-back window) still
    compile, for keys alone and with values."""
    try:
        compiler = jit.open_compiler("nvrtc")[0]
    except BackendUnavailableError as e:
        pytest.skip(str(e))
    j = jit.Jit(compiler, ["--gpu-architecture=sm_90"])
    for values in (False, True):
        tune = dataclasses.replace(P.tuning(4, values), masks=masks, lookback=lookback)
        image = j.build_builtin(*P.sort_defines(np.dtype("float32"), values, tune))
        assert image[:4] == b"\x7fELF"
