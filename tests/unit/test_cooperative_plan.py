"""Cooperative launches in plans (PlanBuilder.launch's `cooperative`): the flag travels to the
launch table in the function handle (native launch_table.h's GK_LAUNCH_COOPERATIVE), plain
launches keep their handle, and a backend without cooperative launch refuses the plan with a
clear error (the LU planner asks first and keeps the launch per column then). And the second
lane (PlanBuilder.lane): launches on the table's fork of the call's stream, joined back."""

from types import SimpleNamespace

import pytest
from test_gemm_plan import Recorder

from gpukit import _core, _native
from gpukit.runtime.cuda.plans import CooperativeLaunchError, PlanBuilder

FN = 0x7F00_1000  # an aligned kernel handle, as the driver's are


def _backend(cooperative: bool):
    rec = Recorder()
    be = SimpleNamespace(name="fake", cooperative_launch=cooperative, launch_table=rec.capsule)
    be.pool = _core.Pool(_native.host_allocator_table())
    return be, rec


def test_the_flag_travels_in_the_handle():
    be, rec = _backend(True)
    b = PlanBuilder(be, "")
    b.launch(FN, (3, 2), 256, "gk_lu_args", {"m": 5}, shared=4096, cooperative=True)
    b.launch(FN, 1, 256, "gk_lu_args", {"m": 6})
    b.build()(0, None)
    (fn1, grid1, _, shared1, _), (fn2, *_) = rec.launches
    assert _native.LAUNCH_COOPERATIVE == 1
    assert fn1 == FN | _native.LAUNCH_COOPERATIVE and grid1 == 3 and shared1 == 4096
    assert fn2 == FN


def test_a_backend_without_cooperative_launch_refuses():
    be, _ = _backend(False)
    b = PlanBuilder(be, "")
    with pytest.raises(CooperativeLaunchError, match="cannot launch a kernel cooperatively"):
        b.launch(FN, 4, 256, "gk_lu_args", {}, cooperative=True)
    b.launch(FN, 4, 256, "gk_lu_args", {})  # a plain launch still goes


def test_the_second_lane_forks_and_joins():
    be, rec = _backend(True)
    b = PlanBuilder(be, "")
    b.launch(FN, 1, 32, "gk_lu_args", {"m": 1})
    with b.lane(1):
        b.launch(FN, 1, 32, "gk_lu_args", {"m": 2})
        b.launch(FN, 1, 32, "gk_lu_args", {"m": 3})
    b.launch(FN, 1, 32, "gk_lu_args", {"m": 4})  # alongside lane 1
    with b.lane(0, wait=True):
        b.launch(FN, 1, 32, "gk_lu_args", {"m": 5})
    with b.lane(1):
        b.launch(FN, 1, 32, "gk_lu_args", {"m": 6})
    b.build()(7, None)
    assert rec.streams == [7, 1007, 1007, 7, 7, 1007]
    assert rec.lane_calls == [("fork", 7), ("join", 7, 1007), ("fork", 7), ("join", 7, 1007)]


def test_bad_lanes_are_refused():
    be, _ = _backend(True)
    b = PlanBuilder(be, "")
    with pytest.raises(ValueError, match="lane 2 is not 0 or 1"), b.lane(2):
        pass
    with pytest.raises(ValueError, match="first launch on lane 1 must wait"), b.lane(1, False):
        pass
