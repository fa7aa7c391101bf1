"""DLPack and __cuda_array_interface__: zero-copy exchange with NumPy on the CPU backend, with
PyTorch and CuPy on CUDA (where they are installed); non-contiguous arrays keep their strides and
producers stay alive as long as gpukit uses their memory."""

import gc
import weakref

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk

DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]


class Producer:
    """Exports only through DLPack (a GPUArray given to from_dlpack directly is returned as is)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def cpu_only(backend):
    if backend != "cpu":
        pytest.skip("NumPy exchanges host memory: the CPU backend")


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_reads_gpukit_memory_without_a_copy(backend, rng, dtype):
    cpu_only(backend)
    x = random_array(rng, (4, 6), dtype)
    a = gk.asarray(x)
    assert a.__dlpack_device__() == (1, 0)
    for view, ref in ((a, x), (a.T, x.T), (a[1:, ::-2], x[1:, ::-2]), (a[2, 3], x[2, 3])):
        exported = np.from_dlpack(view)
        assert exported.dtype == ref.dtype and exported.shape == ref.shape
        np.testing.assert_array_equal(exported, ref)
    shared = np.from_dlpack(a.T)
    a[0, 1] = x[0, 0]  # written through gpukit, seen by NumPy: the same memory
    assert shared[1, 0] == x[0, 0]


def test_an_exported_array_outlives_its_gpukit_handle(backend, rng):
    cpu_only(backend)
    x = random_array(rng, (1000,), "float32")
    a = gk.asarray(x)
    a.evictable = True
    exported = np.from_dlpack(a[::3])
    assert not a.evictable, "exported memory is never spilled"
    del a
    gc.collect()
    gk.full((1000,), 7.0, "float32")  # would reuse the block were it freed
    np.testing.assert_array_equal(exported, x[::3])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gpukit_wraps_numpy_memory_without_a_copy(backend, rng, dtype):
    cpu_only(backend)
    x = random_array(rng, (5, 7), dtype)
    for ref in (x, x.T, x[::2, ::-3], x[1:4, 2], x[0, 0, ...], x[:0]):
        got = gk.from_dlpack(ref)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_array_equal(got.to_numpy(), ref)
    got = gk.from_dlpack(x)
    x[1, 2] = x[0, 0]  # written through NumPy, seen by gpukit
    assert got[1, 2].item() == x[0, 0]
    np.testing.assert_array_equal((got.T[::-1] == got.T[::-1]).to_numpy(), np.ones((7, 5), bool))


def test_the_producer_stays_alive_while_its_memory_is_used(backend, rng):
    cpu_only(backend)
    x = random_array(rng, (64,), "float64")
    expected = x[::2] * 2
    owner = np.array(x)
    alive = weakref.ref(owner)
    view = gk.from_dlpack(owner)[::2]
    del owner
    gc.collect()
    assert alive() is not None, "the strided view still needs the NumPy array"
    np.testing.assert_array_equal((view * 2).to_numpy(), expected)
    assert view.evictable is False
    with pytest.raises(ValueError, match="cannot be made evictable"):
        view.evictable = True
    del view
    gc.collect()
    assert alive() is None, "released with the last array over it"


@pytest.mark.parametrize("dtype", [*DTYPES, "bfloat16"])
def test_gpukit_round_trip_through_a_capsule(backend, rng, dtype):
    x = random_array(rng, (6, 5), dtype)
    a = gk.asarray(x)
    for view, ref in ((a, x), (a.T[::2], x.T[::2]), (a[:0], x[:0])):
        got = gk.from_dlpack(Producer(view))
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_array_equal(got.to_numpy(), ref)
    assert gk.from_dlpack(a) is a
    copied = gk.from_dlpack(Producer(a), copy=True)
    shared = gk.from_dlpack(Producer(a))
    a[...] = 0  # one memory: the import sees the write, the copy does not
    np.testing.assert_array_equal(copied.to_numpy(), x)
    np.testing.assert_array_equal(shared.to_numpy(), np.zeros_like(x))


def test_dlpack_errors(backend):
    a = gk.ones(3)
    with pytest.raises(BufferError, match="cannot export"):
        a.__dlpack__(dl_device=(99, 0))
    with pytest.raises(TypeError, match="list does not support DLPack"):
        gk.from_dlpack([1.0, 2.0])
    if backend != "cpu":
        with pytest.raises(ValueError, match="different devices"):
            gk.from_dlpack(np.ones(3))


class OnTheHost:
    """Hands NumPy a capsule on the CPU, as NumPy asks of an array on another device."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        kwargs.pop("dl_device", None)
        return self.array.__dlpack__(dl_device=(1, 0), **kwargs)

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_arrays_export_to_the_cpu_and_move_between_devices(backend, rng, dtype):
    x = random_array(rng, (5, 3), dtype)
    a = gk.asarray(x)[::2]  # a view: the host copy must follow its strides
    np.testing.assert_array_equal(np.from_dlpack(OnTheHost(a)), x[::2])
    if backend != "cpu":
        with pytest.raises(BufferError, match="needs a copy"):
            a.__dlpack__(dl_device=(1, 0), copy=False)
    for device in gk.__array_namespace_info__().devices():
        moved = gk.from_dlpack(a, device=device)
        assert moved.device == device
        np.testing.assert_array_equal(moved.to_numpy(), x[::2])
        if device != a.device:
            with pytest.raises(ValueError, match="needs a copy"):
                gk.from_dlpack(a, device=device, copy=False)


def test_cuda_array_interface_only_on_cuda(backend, rng):
    a = gk.asarray(random_array(rng, (4, 3), "float32"))
    if backend != "cuda":
        assert not hasattr(a, "__cuda_array_interface__")
        with pytest.raises(AttributeError, match="only defined on CUDA"):
            getattr(a, "__cuda_array_interface__")  # noqa: B009 (the getter raising is the point)
        return
    info = a.__cuda_array_interface__
    assert info["version"] == 3 and info["shape"] == (4, 3) and info["typestr"] == "<f4"
    assert info["data"][0] != 0 and info["data"][1] is False
    assert info["strides"] is None and info["stream"] > 2  # gpukit's own stream, never 0/1/2
    view = a.T[1:]  # starts one float32 (4 bytes) into a
    assert view.__cuda_array_interface__["strides"] == view.strides
    assert view.__cuda_array_interface__["data"][0] == info["data"][0] + 4


def cuda_only(backend):
    if backend != "cuda":
        pytest.skip("PyTorch and CuPy exchange device memory on the CUDA backend")


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "bfloat16", "bool"])
def test_torch_round_trip(backend, rng, dtype):
    cuda_only(backend)
    torch = pytest.importorskip("torch")
    x = random_array(rng, (8, 5), dtype)
    a = gk.asarray(x)
    t = torch.from_dlpack(a.T)  # zero-copy into torch, strided
    assert t.is_cuda and tuple(t.shape) == (5, 8) and t.stride() == (1, 5)
    np.testing.assert_array_equal(gk.from_dlpack(t).to_numpy(), x.T)
    back = gk.from_dlpack(t)
    assert torch.from_dlpack(back).data_ptr() == t.data_ptr()
    t[0, 0] = 1  # torch writes, gpukit sees it: one memory
    torch.cuda.synchronize()
    assert back[0, 0].item() == 1
    produced = torch.arange(12, device="cuda", dtype=torch.float32).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(
        (gk.from_dlpack(produced) * 2).to_numpy(), produced.cpu().numpy() * 2
    )


def test_memory_torch_still_reads_is_not_reused_when_it_lets_go(backend, rng):
    """torch queues a read of gpukit's memory behind a long kernel on its stream, then drops its
    tensor and gpukit its array: gpukit's next allocation of that size (the same pool block) and
    its write must wait for torch's read (the capsule's deleter orders gpukit's stream after the
    consumer's), never overwrite the memory under it."""
    cuda_only(backend)
    torch = pytest.importorskip("torch")
    x = random_array(rng, (1024, 1023), "float32")
    for _ in range(3):
        a = gk.asarray(x) * 1.0  # pool memory on gpukit's stream
        t = torch.from_dlpack(a)
        torch.cuda._sleep(20_000_000)  # ~10 ms of torch's stream before its read
        copied = t.clone()
        del t, a
        poison = gk.full(x.shape, np.nan, "float32")
        torch.cuda.synchronize()
        np.testing.assert_array_equal(copied.cpu().numpy(), x)
        assert np.isnan(poison.to_numpy()).all()


def test_cupy_round_trip(backend, rng):
    cuda_only(backend)
    cp = pytest.importorskip("cupy")
    x = random_array(rng, (6, 7), "float32")
    a = gk.asarray(x)
    via_dlpack = cp.from_dlpack(a[:, 1::2])
    np.testing.assert_array_equal(cp.asnumpy(via_dlpack), x[:, 1::2])
    via_interface = cp.asarray(a.T)  # through __cuda_array_interface__, zero-copy
    assert via_interface.data.ptr == a.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(cp.asnumpy(via_interface), x.T)
    produced = cp.arange(10, dtype=cp.int32)[::3]
    np.testing.assert_array_equal(gk.from_dlpack(produced).to_numpy(), cp.asnumpy(produced))
