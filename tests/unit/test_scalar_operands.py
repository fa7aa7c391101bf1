"""How Python scalar operands reach a kernel (gpukit.base.scalars): the CPU backend hands them to
NumPy, so these checks are what stands for the GPU's argument blocks here."""

import math

import numpy as np
import pytest

from gpukit.base import scalars

ARRAY = object()  # an array operand: left as it is


@pytest.mark.parametrize("value", [0.5, -0.25, math.nan, 0.0, -0.0, 0.5j, 0j])
def test_a_bool_loop_takes_an_inexact_scalar_as_its_truth(value):
    """A bool loop reads scalars as integers: int(0.5) would be false."""
    check = scalars.policy("logical_and", np.dtype(bool), (ARRAY, value))
    assert check((ARRAY, value)) == [ARRAY, bool(value)]
    reversed_check = scalars.policy("logical_or", np.dtype(bool), (value, ARRAY))
    assert reversed_check((value, ARRAY)) == [bool(value), ARRAY]


def test_bool_loops_leave_ints_and_bools_alone():
    assert scalars.policy("logical_xor", np.dtype(bool), (ARRAY, 3)) is None
    assert scalars.policy("logical_xor", np.dtype(bool), (True, ARRAY)) is None


def test_float_loops_keep_float_scalars():
    assert scalars.policy("add", np.dtype("float32"), (ARRAY, 0.5)) is None
