"""No argument reaches a Rust panic: every bad value given to the scheduler, the memory functions
and gpukit._core (the Python/Rust boundary) is a Python exception that names the argument, and
the rules for timeouts are those of concurrent.futures (None or inf: wait forever)."""

import math

import pytest

import gpukit as gk
from gpukit import _core, _native

MiB = 2**20
BAD_SECONDS = [(-1, "timeout"), (-0.5, "timeout"), (math.nan, "nan"), (-math.inf, "timeout")]


@pytest.fixture
def sched(backend):
    s = gk.Scheduler(memory="64MiB", workers=2)
    yield s
    s.shutdown(wait=True, cancel_pending=True)


def _raises(exc, match, fn, *args, **kwargs):
    """Checks that the failure is an ordinary exception (a Rust panic is a BaseException)."""
    with pytest.raises(exc, match=match) as info:
        fn(*args, **kwargs)
    assert isinstance(info.value, Exception)


@pytest.mark.parametrize("timeout", [math.inf, 1e300, 10**400, 2**64])
def test_an_endless_timeout_waits_forever(sched, timeout):
    assert sched.submit(lambda: 1, timeout=timeout).result(10) == 1
    with sched.task(timeout=timeout) as task:
        assert task.state == "running"


@pytest.mark.parametrize("timeout, match", [*BAD_SECONDS, (-(10**400), "timeout")])
def test_a_negative_or_nan_timeout_is_a_value_error(sched, timeout, match):
    _raises(ValueError, match, sched.submit, lambda: 1, timeout=timeout)
    _raises(ValueError, match, lambda: sched.task(timeout=timeout).__enter__())
    assert sched.stats()["burstable"]["submitted"] == 0, "nothing was queued"


@pytest.mark.parametrize("timeout", ["5", [1], object()])
def test_a_timeout_that_is_no_number_is_a_type_error(sched, timeout):
    _raises(TypeError, "timeout", sched.submit, lambda: 1, timeout=timeout)


def test_a_zero_timeout_fails_only_when_there_is_no_room(sched):
    assert sched.submit(lambda: 2, timeout=0, memory="1MiB").result(10) == 2
    assert sched.submit(lambda: 3, timeout=-0.0).result(10) == 3
    with sched.task(qos="guaranteed", memory="64MiB"):
        fut = sched.submit(lambda: 4, qos="guaranteed", memory="1MiB", timeout=0)
        with pytest.raises(gk.TaskTimeoutError):
            fut.result(10)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"memory": 2**64}, OverflowError, "memory"),
        ({"memory": "-1"}, ValueError, "memory size"),
        ({"pace_bound": 0}, ValueError, "pace_bound"),
        ({"pace_bound": -3}, ValueError, "pace_bound"),
        ({"pace_bound": 2**40}, OverflowError, "pace_bound"),
        ({"pace_bound": 1.5}, TypeError, "pace_bound"),
        ({"slice_rows": 0}, ValueError, "slice_rows"),
        ({"slice_rows": 2**63}, OverflowError, "slice_rows"),
        ({"slice_rows": "256"}, TypeError, "slice_rows"),
        ({"workers": 0}, ValueError, "at least one worker"),
        ({"workers": 1.5}, TypeError, "workers"),
        ({"workers": "2"}, TypeError, "workers"),
    ],
)
def test_bad_scheduler_settings_are_named(backend, kwargs, exc, match):
    _raises(exc, match, gk.Scheduler, **{"workers": 1, **kwargs})


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"memory": 2**64}, OverflowError, "memory"),
        ({"memory": 2**70, "qos": "guaranteed"}, OverflowError, "memory"),
        ({"limit": 2**64}, OverflowError, "limit"),
        ({"memory": "65MiB", "qos": "guaranteed"}, ValueError, "more than the scheduler"),
        ({"name": 5}, TypeError, "name"),
    ],
)
def test_bad_task_specs_are_named(sched, kwargs, exc, match):
    _raises(exc, match, sched.submit, lambda: 1, **kwargs)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: gk.memory.set_limit(2**64), OverflowError, "limit"),
        (lambda: gk.memory.set_limit(-1), ValueError, "negative"),
        (lambda: gk.memory.quota(2**64).__enter__(), OverflowError, "limit"),
        (lambda: gk.memory.quota("-5MiB").__enter__(), ValueError, "memory size"),
    ],
)
def test_bad_memory_sizes_are_named(backend, call, exc, match):
    try:
        _raises(exc, match, call)
    finally:
        gk.memory.set_limit(None)
    assert gk.memory.current_quota() is None


# --- gpukit._core itself: the boundary gpukit's Python calls into ----------------------------


@pytest.fixture
def pool():
    return _core.Pool(_native.host_allocator_table())


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        ((-1,), {}, ValueError, "nbytes must be >= 0"),
        ((2**64,), {}, OverflowError, "nbytes"),
        ((1.5,), {}, TypeError, "nbytes must be an int"),
        (("8",), {}, TypeError, "nbytes"),
        ((8,), {"stream": -1}, ValueError, "stream"),
        ((8,), {"stream": 2**64}, OverflowError, "stream"),
        ((8,), {"quota": -2}, ValueError, "quota"),
        ((8,), {"quota": 2.0}, TypeError, "quota"),
    ],
)
def test_pool_allocate_checks_its_arguments(pool, args, kwargs, exc, match):
    _raises(exc, match, pool.allocate, *args, **kwargs)
    assert pool.stats()["allocations"] == 0


@pytest.mark.parametrize("nbytes", [2**63, 2**64 - 1, 2**62 + 1])
def test_an_impossible_size_is_out_of_memory(pool, nbytes):
    _raises(gk.OutOfMemoryError, "larger than any device", pool.allocate, nbytes)
    assert pool.stats()["allocated_bytes"] == 0
    assert pool.allocate(8).nbytes == 8, "the pool is still usable"


def test_device_ptrs_take_only_this_pools_buffers(pool):
    other = _core.Pool(_native.host_allocator_table())
    mine, theirs = pool.allocate(64), other.allocate(64)
    assert len(pool.device_ptrs((mine,), 0)) == 1
    both = (mine, theirs)
    _raises(ValueError, r"buffers\[1\] belongs to another pool", pool.device_ptrs, both, 0)
    _raises(TypeError, r"buffers\[0\] must be", pool.device_ptrs, (5,), 0)
    _raises(ValueError, "stream", pool.device_ptrs, (mine,), -1)
    _raises(ValueError, "stream", mine.device_ptr, -1)
    ext = _core.ExternalBuffer(4096, 16, None)
    assert pool.device_ptrs((ext, mine), 0)[0] == 4096
    _raises(ValueError, "ptr", _core.ExternalBuffer, -1, 16, None)
    _raises(OverflowError, "nbytes", _core.ExternalBuffer, 0, 2**64, None)


def test_pool_quota_and_limit_arguments_are_checked(pool):
    _raises(OverflowError, "limit", pool.create_quota, 2**64)
    _raises(ValueError, "limit", pool.create_quota, -1)
    _raises(ValueError, "parent", pool.create_quota, 10, parent=-1)
    _raises(ValueError, "no quota", pool.quota_usage, 2**63)
    _raises(ValueError, "quota", pool.quota_usage, -1)
    _raises(ValueError, "quota", pool.drop_quota, -1)
    _raises(OverflowError, "limit", setattr, pool, "limit", 2**64)
    _raises(TypeError, "limit", setattr, pool, "limit", "1GiB")
    pool.limit = 2**64 - 2
    assert pool.limit == 2**64 - 2


def test_scheduler_entries_check_their_arguments(pool):
    a = _core.Scheduler(pool, 2**30)
    b = _core.Scheduler(pool, 2**30)
    task = a.submit("t", "burstable", 0, 2**20)
    _raises(ValueError, "another scheduler", b.cancel, task)
    _raises(ValueError, "another scheduler", b.finish, task)
    _raises(ValueError, "another scheduler", b.enter_task, task)
    assert task.state == "admitted", "untouched by the other scheduler"
    for bad, exc in [(-1, ValueError), (math.nan, ValueError), ("1", TypeError)]:
        _raises(exc, "wait", a.next, bad)
        _raises(exc, "timeout", a.wait_idle, bad)
    kind, running = a.next(math.inf)
    assert kind == "run" and running.id == task.id
    a.finish(running)
    assert a.wait_idle(math.inf)
    _raises(ValueError, "unknown QoS", _core.stream_priority, "gold", 0, -5)
    _raises(OverflowError, "least", _core.stream_priority, "guaranteed", 2**31, -5)
    _raises(ValueError, "greatest", _core.stream_priority, "guaranteed", 0, -(2**80))
    assert _core.stream_priority("burstable", -(2**31), 2**31 - 1) == -1
