"""The Array API namespace plumbing: dtype objects, finfo/iinfo, isdtype, result_type, can_cast,
astype, constants, __array_namespace__, the inspection namespace, devices, and the GPUArray
attributes the standard adds."""

import itertools
import math

import ml_dtypes
import numpy as np
import pytest
from array_cases import ALL_DTYPES, assert_same, layouts
from conftest import random_array

import gpukit as gk

PLAIN = [d for d in ALL_DTYPES if d != "bfloat16"]


def test_dtype_attributes_are_numpy_dtypes():
    for name in ALL_DTYPES:
        dt = getattr(gk, name)
        assert isinstance(dt, np.dtype)
        assert dt == np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)
    assert gk.bool == np.bool_ and gk.float32 == "float32"
    assert gk.complex64 == np.complex64 and gk.complex128 == np.complex128
    assert gk.e == math.e and gk.pi == math.pi and gk.inf == math.inf and math.isnan(gk.nan)
    assert gk.newaxis is None and gk.__array_api_version__ == "2023.12"


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo(backend, rng, name):
    dt = getattr(gk, name)
    ref = ml_dtypes.finfo(dt) if name == "bfloat16" else np.finfo(dt)
    for arg in (dt, gk.asarray(random_array(rng, (3,), dt))):
        info = gk.finfo(arg)
        assert (info.bits, info.dtype) == (ref.bits, dt)
        for field in ("eps", "max", "min", "smallest_normal"):
            value = getattr(info, field)
            assert type(value) is float and value == float(getattr(ref, field))
    with pytest.raises(ValueError, match="finfo needs a floating-point dtype, not int32"):
        gk.finfo(gk.int32)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint64"])
def test_iinfo(name):
    info, ref = gk.iinfo(getattr(gk, name)), np.iinfo(name)
    assert (info.bits, info.min, info.max) == (ref.bits, int(ref.min), int(ref.max))
    assert type(info.max) is int
    with pytest.raises(ValueError, match="iinfo needs an integer dtype, not float32"):
        gk.iinfo(gk.float32)
    with pytest.raises(ValueError, match="iinfo needs an integer dtype, not complex64"):
        gk.iinfo("complex64")


def test_isdtype():
    kinds = {
        "bool": {"bool"},
        "signed integer": {"int8", "int16", "int32", "int64"},
        "unsigned integer": {"uint8", "uint16", "uint32", "uint64"},
        "real floating": {"float16", "bfloat16", "float32", "float64"},
        "complex floating": set(),
    }
    kinds["integral"] = kinds["signed integer"] | kinds["unsigned integer"]
    kinds["numeric"] = kinds["integral"] | kinds["real floating"]
    for name in ALL_DTYPES:
        dt = getattr(gk, name)
        for kind, members in kinds.items():
            assert gk.isdtype(dt, kind) == (name in members), (name, kind)
        assert gk.isdtype(dt, dt) and not gk.isdtype(dt, gk.int16 if name != "int16" else gk.int8)
        assert gk.isdtype(dt, ("bool", "numeric"))
    with pytest.raises(ValueError, match="unknown dtype kind 'integer'"):
        gk.isdtype(gk.int8, "integer")
    with pytest.raises(TypeError, match="isdtype needs a dtype"):
        gk.isdtype("int8", "integral")


def test_result_type_and_can_cast():
    for a, b in itertools.product(PLAIN, repeat=2):
        da, db = getattr(gk, a), getattr(gk, b)
        assert gk.result_type(da, db) == np.result_type(a, b), (a, b)
        assert gk.can_cast(da, db) == np.can_cast(a, b), (a, b)
    bf16 = gk.bfloat16
    for other, expected in [
        ("bool", bf16),
        ("int8", bf16),
        ("uint64", bf16),
        ("bfloat16", bf16),
        ("float16", gk.float32),
        ("float32", gk.float32),
        ("float64", gk.float64),
    ]:
        assert gk.result_type(bf16, getattr(gk, other)) == expected, other
    assert [gk.can_cast(bf16, getattr(gk, d)) for d in ("float16", "float32", "float64")] == [
        False,
        True,
        True,
    ]
    assert [gk.can_cast(getattr(gk, d), bf16) for d in ("bool", "uint8", "int16", "float16")] == [
        True,
        True,
        False,
        False,
    ]
    # Python scalars are weak, as NEP 50 and the standard say.
    assert gk.result_type(gk.int8, 1) == gk.int8
    assert gk.result_type(gk.float32, 1.0) == gk.float32
    assert gk.result_type(gk.int16, 1.0) == gk.float64
    assert gk.result_type(bf16, 2.5) == bf16
    assert gk.result_type(gk.bool, True) == gk.bool
    assert gk.result_type(gk.ones(2, "uint8"), gk.int8) == gk.int16
    with pytest.raises(ValueError, match="at least one array or dtype"):
        gk.result_type()


@pytest.mark.parametrize("dtype", ["int16", "bfloat16", "float32"])
def test_astype_function(backend, rng, dtype):
    for _, a, x in layouts(rng, (3, 5), dtype):
        for target in ("float64", "int32", "bfloat16"):
            assert_same(gk.astype(a, getattr(gk, target)), x.astype(getattr(gk, target)))
        same = gk.astype(a, a.dtype, copy=False)
        assert same is a
        copied = gk.astype(a, a.dtype)
        assert copied is not a and copied._buf is not a._buf
        assert gk.astype(a, a.dtype, device=backend, copy=False) is a
    with pytest.raises(TypeError, match="astype needs a GPUArray"):
        gk.astype(x, gk.float32)


def test_namespace_and_info(backend):
    a = gk.ones((2, 3), "float32")
    here = a.device  # the backend's current device: "cpu", "cuda:0", ...
    assert a.__array_namespace__() is gk
    assert a.__array_namespace__(api_version="2022.12") is gk
    with pytest.raises(ValueError, match=r"not .2099\.12."):
        a.__array_namespace__(api_version="2099.12")
    info = gk.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True}
    assert info.default_device() == here and here.split(":")[0] == backend
    assert here in info.devices()
    defaults = info.default_dtypes(device=backend)
    assert defaults == {
        "real floating": gk.float64,
        "complex floating": gk.complex128,
        "integral": gk.int64,
        "indexing": gk.int64,
    }
    standard = set(ALL_DTYPES) - {"float16", "bfloat16"} | {"complex64", "complex128"}
    assert set(info.dtypes()) == standard
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {
        "bool",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
    }
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        info.dtypes(device="tpu")


def test_device_keyword_and_to_device(backend, rng):
    x = random_array(rng, (4, 3), "float32")
    here = gk.empty(0).device
    made = [
        gk.zeros((2, 3), device=backend),
        gk.ones(3, dtype=gk.int8, device=backend),
        gk.empty((1,), device=backend),
        gk.full((2,), 1.5, device=backend),
        gk.arange(5, device=backend),
        gk.linspace(0, 1, 4, device=backend),
        gk.eye(3, device=backend),
        gk.asarray(x, device=backend),
        gk.identity(2, device=backend),
        gk.tri(3, device=backend),
        gk.zeros(2, device=gk.device()),  # a gpukit.Device works too
        gk.ones(2, device=here),
    ]
    assert all(m.device == here for m in made)
    assert gk.zeros((2,), dtype=None).dtype == gk.float64
    assert gk.full((2,), True).dtype == gk.bool and gk.full((2,), 3).dtype == gk.int64
    a = gk.asarray(x)
    assert a.to_device(backend) is a
    assert gk.zeros_like(a).device == here
    for other in gk.__array_namespace_info__().devices():
        moved = a.to_device(other)
        assert moved.device == other
        np.testing.assert_array_equal(moved.to_numpy(), x)
        with gk.use_backend(other):
            like = gk.ones_like(a)  # *_like follow their argument's device
        assert like.device == here
    with pytest.raises(ValueError, match="unknown device 'gpu:7'"):
        gk.zeros(3, device="gpu:7")
    with pytest.raises(ValueError, match="unknown device"):
        a.to_device("nowhere")


def test_asarray_copy(backend, rng):
    x = random_array(rng, (3, 4), "int32")
    a = gk.asarray(x)
    assert gk.asarray(a) is a
    copied = gk.asarray(a, copy=True)
    assert copied._buf is not a._buf
    assert_same(copied, x)
    assert gk.asarray(a, copy=False) is a
    assert gk.asarray(a, dtype=gk.float64).dtype == gk.float64
    with pytest.raises(ValueError, match="copy=False"):
        gk.asarray(a, dtype=gk.float64, copy=False)
    with pytest.raises(ValueError, match="must be copied to the device"):
        gk.asarray(x, copy=False)
    assert gk.asarray(True).dtype == gk.bool and gk.asarray(2).dtype == gk.int64
    assert gk.asarray(2.0).dtype == gk.float64
    assert_same(gk.asarray([[1, 2], [3, 4]], dtype=gk.int8), np.array([[1, 2], [3, 4]], "int8"))


def test_array_attributes(backend, rng):
    x = random_array(rng, (2, 3, 4), "float32")
    for _, a, ref in layouts(rng, (2, 3, 4), "float32"):
        assert_same(a.mT, np.swapaxes(ref, -1, -2))
        flat = a.flatten()
        assert_same(flat, ref.flatten())
        assert flat._buf is not a._buf
        assert_same(a.ravel(), ref.ravel())
        assert a.tolist() == ref.tolist()
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        gk.ones(3).mT  # noqa: B018
    i = gk.asarray(np.int32(7))
    assert [10, 20, 30, 40, 50, 60, 70, 80][i] == 80 and range(20)[i] == 7
    for bad in (gk.asarray(np.float32(1)), gk.asarray(np.array([3]))):
        with pytest.raises(TypeError, match="only integer scalar arrays"):
            [1, 2, 3][bad]
    assert complex(gk.asarray(x)[1, 2, 3]) == complex(float(x[1, 2, 3]))
    bf = gk.asarray(x[0].astype(gk.bfloat16))
    assert bf.tolist() == x[0].astype(gk.bfloat16).astype(np.float32).tolist()
    a = gk.asarray(x)
    view = a[:, ::2, 1:]
    view.fill(2.5)
    x[:, ::2, 1:] = 2.5
    assert_same(a, x)
