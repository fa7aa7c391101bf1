"""The driver's launch floor that bench_launch reports (skipped without a CUDA GPU): a C++ loop
of launches of an empty kernel, its count checked."""

import math

import pytest

import gpukit as gk
from gpukit.runtime import runtime


def test_bare_launch_floor():
    if "cuda" not in gk.available_backends():
        pytest.skip("no CUDA GPU here")
    with gk.use_backend("cuda"):
        rt = runtime()
        fn = rt.compile_function("e.cu", 'extern "C" __global__ void e() {}', (), "e")
        us = rt.device.bare_launch_us(fn, rt.stream, 100)
        assert math.isfinite(us) and 0 < us < 1e4
        with pytest.raises(ValueError, match="count must be at least 1"):
            rt.device.bare_launch_us(fn, rt.stream, 0)
