"""Which instance of a built-in kernel an operation gets (gpukit.runtime.kernels)."""

import numpy as np
import pytest

from gpukit.runtime import kernels

DTYPES = ["bool", "int8", "float16", "float32", "float64", "int64", "complex64"]


def _defines(instance) -> dict:
    return dict(d.split("=", 1) for d in instance[1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_copy_within_a_dtype_moves_bits(dtype):
    """NaN payloads and signs survive: no trip through float for a float16."""
    dt = np.dtype(dtype)
    d = _defines(kernels.elementwise("identity", dt, dt, (dt,)))
    raw = kernels.C_TYPES[np.dtype(f"uint{8 * dt.itemsize}")]
    assert (d["GK_OUT_T"], d["GK_IN0_T"], d["GK_COMP_T"], d["GK_SCALAR0"]) == (raw, raw, raw, "0")


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_fill_reads_its_scalar_in_the_dtype(dtype):
    """A scalar operand (None) is no array of the output's dtype, float64 included."""
    dt = np.dtype(dtype)
    d = _defines(kernels.elementwise("identity", dt, dt, (None,)))
    assert (d["GK_OUT_T"], d["GK_SCALAR0"]) == (kernels.C_TYPES[dt], "1")


def test_a_conversion_is_no_copy():
    f2, f4 = np.dtype("float16"), np.dtype("float32")
    d = _defines(kernels.elementwise("identity", f4, f4, (f2,)))
    assert (d["GK_OUT_T"], d["GK_IN0_T"]) == ("float", "gk_f16")
