"""Python scalar operands of elementwise ops, checked as NumPy 2 checks them before anything
runs.

A kernel takes a scalar as a 64-bit integer or a double, so a Python int that the loop dtype
cannot hold would otherwise be wrapped there (uint8 + 300 -> 44), or fail to convert at the
plan's boundary (2**70). NumPy instead raises OverflowError for arithmetic, answers comparisons
exactly (uint8 == -1 is False everywhere), and clips to the bound itself; a float loop takes the
int's value as a float. A bool loop takes a float or complex scalar as its truth.
"""

from __future__ import annotations

import math

import numpy as np

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_ORDER = ("less", "less_equal", "greater", "greater_equal")
_COMPARISONS = frozenset((*_ORDER, "equal", "not_equal"))


def _comparison_answer(name: str, above: bool, scalar_first: bool) -> bool:
    """x <name> v (or v <name> x) for every x of the dtype, when v lies above (or below) it."""
    if name in ("equal", "not_equal"):
        return name == "not_equal"
    if scalar_first:  # v < x is x > v
        name = {"less": "greater", "less_equal": "greater_equal"}.get(
            name, {"greater": "less", "greater_equal": "less_equal"}.get(name)
        )
    return name.startswith("less") == above


def policy(name: str, loop: np.dtype, operands):
    """None when no Python scalar operand needs a look at its value, else check(operands), which
    returns the operands to launch with (ints converted or clipped, inexact scalars of a bool loop
    as their truth), or a bool as the whole answer of a comparison, or raises OverflowError as
    NumPy does."""
    if loop.kind == "b":
        return _truths(operands)
    positions = [i for i, x in enumerate(operands) if type(x) is int]
    if not positions:
        return None
    if loop.kind not in "iu":

        def as_float(ops):  # past int64 the native layer takes a double only
            ops = list(ops)
            for i in positions:
                if not _INT64_MIN <= ops[i] <= _INT64_MAX:
                    ops[i] = float(ops[i])  # OverflowError beyond float's range, as NumPy
            return ops

        return as_float
    info = np.iinfo(loop)
    lo, hi = int(info.min), int(info.max)

    def check(ops):
        for i in positions:
            v = ops[i]
            if lo <= v <= hi:
                continue
            if name in _COMPARISONS:
                return _comparison_answer(name, v > hi, i == 0)
            if name == "clip":
                ops = list(ops)
                ops[i] = min(max(v, lo), hi)
                continue
            if name == "where":  # NumPy casts where's values unsafely: the kernel wraps alike
                continue
            raise OverflowError(f"Python integer {v} out of bounds for {loop.name}")
        return ops

    return check


def fill_value(value, dtype: np.dtype):
    """`value` as a fill of (or an assignment to) an array of `dtype` takes it, checked as NumPy
    checks it: NaN and inf have no integer, a Python int must fit, and a complex number goes
    only into complex (or bool) arrays."""
    if isinstance(value, complex) and dtype.kind not in "cb":
        kind = "int" if dtype.kind in "iu" else "float"
        raise TypeError(f"{kind}() argument must be a string or a real number, not 'complex'")
    if isinstance(value, complex) and dtype.kind == "b":
        return bool(value)
    if dtype.kind not in "iu":
        return value
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            raise ValueError("cannot convert float NaN to integer")
        raise OverflowError("cannot convert float infinity to integer")
    if type(value) is int:
        info = np.iinfo(dtype)
        if not int(info.min) <= value <= int(info.max):
            raise OverflowError(f"Python integer {value} out of bounds for {dtype.name}")
    return value


def _truths(operands):
    """A bool loop reads its scalars as integers, so a float or complex one goes in as its truth
    (int(0.5) would be false); ints and bools already are."""
    positions = [i for i, x in enumerate(operands) if type(x) in (float, complex)]
    if not positions:
        return None

    def truths(ops):
        ops = list(ops)
        for i in positions:
            ops[i] = bool(ops[i])
        return ops

    return truths
