"""The sort plans (gpukit.runtime.sort_plan) without a GPU: which kernels run in which order,
over which buffers, with how much scratch memory."""

import itertools

import numpy as np
import pytest

from gpukit.base.dtypes import bfloat16
from gpukit.runtime import sort_plan as P

ALL = [
    np.dtype(t)
    for t in (
        "bool",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float16",
        "float32",
        "float64",
    )
] + [bfloat16]


def onesweeps(plan):
    return [x for x in plan.launches if x.kernel == "gk_sort_onesweep"]


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_passes_follow_the_key_width(dtype):
    plan = P.plan_sort(1, 1 << 20, dtype, sm_count=132)
    passes = dtype.itemsize * 8 // P.RADIX_BITS
    kinds = [x.kernel for x in plan.launches]
    assert kinds == ["gk_sort_histogram", "gk_sort_scan"] + ["gk_sort_onesweep"] * passes
    assert [x.args["pass"] for x in onesweeps(plan)] == list(range(passes))


@pytest.mark.parametrize("passes", range(1, 9))
@pytest.mark.parametrize("keys,index", [(True, False), (True, True), (False, True)])
def test_no_pass_reads_what_it_writes_and_the_last_writes_the_outputs(passes, keys, index):
    plan = P.plan_sort(
        1, 100_000, "uint64", want_keys=keys, want_index=index, key_bits=8 * passes, sm_count=132
    )
    steps = onesweeps(plan)
    assert len(steps) == passes
    assert steps[0].args["keys_in"] == "keys_in" and steps[0].args["vals_in"] is None
    for before, step in itertools.pairwise(steps):
        assert step.args["keys_in"] == before.args["keys_out"]
        assert step.args["vals_in"] == before.args["vals_out"]
    for step in steps:
        assert step.args["keys_in"] != step.args["keys_out"]
        assert step.args["vals_in"] is None or step.args["vals_in"] != step.args["vals_out"]
    assert steps[-1].args["keys_out"] == ("keys_out" if keys else None)
    assert steps[-1].args["vals_out"] == ("vals_out" if index else None)
    for name in {s.args["keys_out"] for s in steps} | {s.args["vals_out"] for s in steps}:
        assert name in (None, "keys_out", "vals_out") or name in plan.scratch


def test_rows_that_fit_a_block_sort_in_shared_memory():
    plan = P.plan_sort(1000, 1000, "float32", want_index=True, descending=True)
    (launch,) = plan.launches
    assert launch.kernel == "gk_sort_rows" and launch.grid == (1000, 1)
    assert launch.block == 64 and launch.args["key_xor"] == 0xFFFFFFFF
    assert not plan.scratch
    assert P.plan_sort(3, P.row_capacity(4, False), "float32").launches[0].kernel == "gk_sort_rows"


def test_long_rows_add_row_passes_and_local_indices():
    n = P.row_capacity(8, True) + 1
    plan = P.plan_sort(70_000, n, "float64", want_index=True)
    steps = onesweeps(plan)
    assert plan.launches[0].args["passes"] == 8 + 3  # 70000 rows need 17 bits
    assert [s.args["local_index"] for s in steps] == [0] * 10 + [1]
    sort_only = P.plan_sort(3, n, "float64")
    assert onesweeps(sort_only)[-1].args["vals_out"] is None
    assert "GK_VALUES=1" in sort_only.defines  # the row numbers travel as values


def test_portions_keep_look_back_counts_in_30_bits():
    n = (1 << 30) + 5
    plan = P.plan_sort(1, n, "float32", sm_count=132)
    tile = P.tuning(4, False).tile
    first = onesweeps(plan)[0].args
    assert first["portion_tiles"] * tile <= P.PORTION_KEYS < (1 << 30)
    portions = first["portions"]
    assert portions == -(-n // (first["portion_tiles"] * tile))
    steps = onesweeps(plan)
    assert len(steps) == 4 * portions
    assert sum(s.grid[0] for s in steps if s.args["pass"] == 0) == -(-n // tile)
    assert plan.scratch["status"] == -(-n // tile) * P.RADIX * 4
    assert plan.scratch["digit_starts"] == 4 * portions * P.RADIX * 8


def test_key_bits_and_values_in():
    plan = P.plan_sort(1, 5000, "uint64", want_index=True, key_bits=10, values_in=True)
    steps = onesweeps(plan)
    assert len(steps) == 2 and steps[0].args["vals_in"] == "vals_in"
    with pytest.raises(ValueError, match="unsigned"):
        P.plan_sort(1, 10, "int64", key_bits=3)
    with pytest.raises(ValueError, match="nothing"):
        P.plan_sort(1, 10, "int64", want_keys=False)


def test_floor_bytes_counts_each_pass():
    n = 1 << 26
    assert P.floor_bytes(n, 4, False) == n * 4 * 9
    # argsort: histogram 4, first pass 4 + 12, two middle passes 24 each, last 12 + 8
    assert P.floor_bytes(n, 4, True, keys=False) == n * (4 + 16 + 24 + 24 + 20)
