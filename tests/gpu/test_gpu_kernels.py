"""User kernels, streams, events and driver errors on the cuda backend (skipped without a GPU;
the GPU machine runs them)."""

import numpy as np
import pytest
from conftest import assert_matches, random_array

import gpukit as gk


@pytest.fixture
def cuda():
    if "cuda" not in gk.available_backends():
        pytest.skip("no CUDA GPU here")
    with gk.use_backend("cuda"):
        yield


SCALE = r"""
extern "C" __global__ void scale(float* out, const float* x, float factor, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * factor;
}
"""


def test_raw_kernel_runs_on_random_data(cuda, rng):
    x = random_array(rng, (1001,), "float32")
    a, out = gk.asarray(x), gk.empty(1001, "float32")
    gk.RawKernel(SCALE, "scale")(
        ((1001 + 127) // 128,), (128,), (out, a, np.float32(-1.5), np.int64(1001))
    )
    assert_matches(out, x.astype(np.float64) * -1.5, "float32")


def test_raw_kernel_refuses_untyped_python_numbers(cuda):
    a = gk.ones(4, "float32")
    with pytest.raises(TypeError, match=r"argument 2 is a Python float.*numpy\.float32"):
        gk.RawKernel(SCALE, "scale")((1,), (4,), (a, a, 2.0, np.int64(4)))


def test_raw_kernel_compile_error_has_the_nvrtc_log(cuda):
    k = gk.RawKernel('extern "C" __global__ void f() { int x = ; }', "f")
    with pytest.raises(gk.CompileError) as info:
        k.compile()
    assert "expected an expression" in info.value.log


def test_driver_errors_are_named_and_leave_the_process_usable(cuda):
    a = gk.ones(8, "float32")
    k = gk.RawKernel(SCALE, "scale")
    with pytest.raises(gk.CudaError) as info:
        k((1,), (4096,), (a, a, np.float32(2), np.int64(8)))  # more threads than a block holds
    assert info.value.name == "CUDA_ERROR_INVALID_VALUE"
    assert info.value.call == "cuLaunchKernel"
    np.testing.assert_array_equal((a + 1).to_numpy(), np.full(8, 2, np.float32))


def test_a_missing_kernel_name_is_named(cuda):
    with pytest.raises(gk.CudaError, match="no kernel named 'nope'"):
        gk.RawKernel(SCALE, "nope").compile()


def test_out_of_memory_says_what_was_asked(cuda):
    with pytest.raises(gk.OutOfMemoryError) as info:
        gk.empty((1 << 40,), "float32")  # 4 TiB
    assert info.value.requested == 4 << 40
    assert "CUDA_ERROR_OUT_OF_MEMORY" in str(info.value)
    assert float(gk.ones(3).sum()) == 3.0


def test_elementwise_kernel_with_type_placeholders_and_scalars(cuda, rng):
    axpy = gk.ElementwiseKernel("T x, T y, T a", "T z", "z = a * x + y", "gk_test_axpy")
    for dtype in ("float32", "float64", "int32"):
        x, y = random_array(rng, (7, 5), dtype), random_array(rng, (5,), dtype)
        z = axpy(gk.asarray(x), gk.asarray(y), 3)
        expected = 3 * x.astype(np.float64) + y
        assert_matches(z, expected.astype(dtype), dtype)


def test_elementwise_kernel_writes_into_given_output(cuda, rng):
    square = gk.ElementwiseKernel("float32 x", "float32 y", "y = x * x", "gk_test_square")
    x = random_array(rng, (3, 4), "float32")
    out = gk.empty((4, 3), "float32").T
    with pytest.raises(ValueError, match="must be contiguous"):
        square(gk.asarray(x), out)
    out = gk.empty((3, 4), "float32")
    assert square(gk.asarray(x), out) is out
    assert_matches(out, x.astype(np.float64) ** 2, "float32")
    with pytest.raises(TypeError, match="input x must be float32, got float64"):
        square(gk.asarray(x.astype(np.float64)))


def test_streams_events_and_priorities(cuda, rng):
    least, greatest = gk.Stream.priority_range()
    assert greatest <= least
    x = random_array(rng, (1 << 20,), "float32")
    with gk.Stream(priority=greatest) as s:
        start, end = gk.Event(), gk.Event()
        start.record()
        a = gk.asarray(x)
        b = a * 2 + 1
        end.record()
        end.synchronize()
        assert end.done
        assert start.elapsed_ms(end) > 0
        assert_matches(b, x.astype(np.float64) * 2 + 1, "float32")
    other = gk.Stream()
    other.wait_event(end)
    with other:
        c = b.copy()  # contiguous, same dtype: a device-to-device copy on `other`
    other.synchronize()
    assert_matches(c, x.astype(np.float64) * 2 + 1, "float32")
    s.synchronize()


def test_warmup_prepares_every_builtin_kernel(cuda, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUKIT_CACHE_DIR", str(tmp_path))
    assert gk.jit.warmup(progress=False) > 0
    assert gk.jit.cache_info()["entries"] > 0
