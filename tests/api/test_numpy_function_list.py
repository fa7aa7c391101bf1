"""Which of the 174 common NumPy functions gpukit has: the count is printed (pytest -s), every
absent one must be listed with the work it waits for, and every listed one must be absent."""

import numpy as np
from numpy_function_list import ALL, WAITING

import gpukit as gk


def test_the_list_is_fixed():
    assert len(ALL) == 174 and len(set(ALL)) == 174
    assert all(hasattr(np, name) for name in ALL)


def test_present_and_missing():
    present = [name for name in ALL if callable(getattr(gk, name, None))]
    missing = sorted(set(ALL) - set(present))
    print(f"\n{len(present)} of {len(ALL)} common NumPy functions are in gpukit")
    for name in missing:
        print(f"  missing {name}: waits for {WAITING.get(name, '?')}")
    assert missing == sorted(WAITING), "update WAITING (and the README) with what changed"
