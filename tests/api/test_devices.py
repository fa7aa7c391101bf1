"""Devices: runtimes are opened per (backend, device index), arrays say which device they live
on, and a device is chosen by name or ordinal. (Only one GPU is available for testing: what a
second one would do is not tested here, only the naming and the errors.)"""

import numpy as np
import pytest

import gpukit as gk


def test_arrays_name_their_device(backend):
    a = gk.ones(3)
    name = "cpu" if backend == "cpu" else f"{backend}:0"
    assert a.device == name == str(gk.device())
    assert gk.Device().type == backend and gk.Device().index == 0


def test_a_device_by_name_or_ordinal(backend):
    first = gk.Device(0)
    assert first == gk.Device(backend) == gk.Device(f"{backend}:0")
    with first:
        a = gk.arange(4, dtype="float32")
    assert a.device == str(first)
    with gk.use_backend(f"{backend}:0"):
        np.testing.assert_array_equal((a * 2).to_numpy(), np.arange(4) * 2)


def test_a_missing_ordinal_says_how_many_there_are(backend):
    with pytest.raises(gk.BackendUnavailableError, match=f"{backend}:7"):
        gk.Device(7)
    with (
        pytest.raises(gk.BackendUnavailableError, match=f"{backend}:7"),
        gk.use_backend(f"{backend}:7"),
    ):
        pass


def test_device_names_are_checked():
    with pytest.raises(gk.BackendUnavailableError, match="not a backend"):
        gk.Device("tpu:0")
    with pytest.raises(ValueError, match="named like"):
        gk.use_backend("cpu:first").__enter__()
