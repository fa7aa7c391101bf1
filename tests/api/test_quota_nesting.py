"""A quota opened inside a scheduler task, or a task entered inside a quota or another task, only
narrows what is outside it: every byte counts there too, and the scheduler counts it once."""

import pytest

import gpukit as gk

MiB = 2**20


@pytest.fixture
def sched(backend):
    # A cached block of the class above may serve a request (and be charged as such): none here.
    gk.memory.empty_cache()
    s = gk.Scheduler(memory="100MiB", workers=2)
    yield s
    s.shutdown(wait=True, cancel_pending=True)


def _alloc(mib):
    return gk.empty((mib * MiB,), "uint8")


def test_a_quota_inside_a_task_cannot_widen_it(sched):
    with sched.task(qos="burstable", memory="8MiB", limit="16MiB", name="outer"):
        with gk.memory.quota("64MiB"):
            held = _alloc(12)
            with pytest.raises(gk.OutOfMemoryError, match='quota of task "outer"'):
                _alloc(8)
            assert sched.stats()["burst_bytes"] == 4 * MiB, "12 MiB, 8 of them reserved"
        # Still counted once the inner block has ended.
        with pytest.raises(gk.OutOfMemoryError, match='quota of task "outer"'):
            _alloc(8)
        del held
        assert _alloc(16).nbytes == 16 * MiB
    assert sched.stats()["burst_bytes"] == 0


def test_a_narrower_quota_inside_a_task_fails_first(sched):
    with sched.task(qos="guaranteed", memory="32MiB", name="roomy") as task:
        with gk.memory.quota("2MiB"):
            with pytest.raises(gk.OutOfMemoryError, match="memory quota exceeded"):
                _alloc(3)
            small = _alloc(1)
        assert gk.memory.current_quota() == task.quota
        del small
    stats = sched.stats()["tasks"]
    assert max(t["memory_peak_bytes"] for t in stats.values()) == MiB


def test_a_quota_inside_a_task_on_a_worker_cannot_escape_it(sched):
    def grab():
        with gk.memory.quota("1GiB"):
            return _alloc(8).nbytes

    fut = sched.submit(grab, qos="guaranteed", memory="4MiB", name="tiny")
    with pytest.raises(gk.OutOfMemoryError, match='quota of task "tiny"'):
        fut.result(10)
    assert sched.submit(grab, qos="guaranteed", memory="8MiB").result(10) == 8 * MiB


def test_a_task_inside_a_quota_is_capped_by_it_and_counted(sched):
    with gk.memory.quota("10MiB"):
        with sched.task(qos="burstable", memory="4MiB", limit="64MiB", name="inner"):
            with pytest.raises(gk.OutOfMemoryError, match="memory quota exceeded"):
                _alloc(12)
            held = _alloc(6)
            assert sched.stats()["burst_bytes"] == 2 * MiB, "6 MiB, 4 of them reserved"
        # The task's result outlives it: the scheduler still counts it, the quota no longer.
        assert sched.stats()["burst_bytes"] == 6 * MiB
        assert _alloc(8).nbytes == 8 * MiB
        del held
    assert sched.stats()["burst_bytes"] == 0


def test_a_task_inside_a_task_only_narrows_it(sched):
    with sched.task(qos="guaranteed", memory="16MiB", name="outer"):
        with sched.task(qos="best_effort", name="inner"):
            with pytest.raises(gk.OutOfMemoryError, match='quota of task "outer"'):
                _alloc(20)
            held = _alloc(10)
            # Counted against the outer task's limit, and once by the scheduler.
            assert sched.stats()["burst_bytes"] == 10 * MiB
        del held
    assert sched.stats()["reserved_bytes"] == 0 and sched.stats()["burst_bytes"] == 0


def test_quotas_nest_without_tasks(backend):
    with gk.memory.quota("8MiB") as outer:
        with gk.memory.quota("16MiB") as inner:
            assert gk.memory.current_quota() == inner != outer
            a = _alloc(6)
            with pytest.raises(gk.OutOfMemoryError, match="memory quota exceeded"):
                _alloc(4)
        with pytest.raises(gk.OutOfMemoryError, match="memory quota exceeded"):
            _alloc(4)  # the 6 MiB still count here
        del a
        assert _alloc(8).nbytes == 8 * MiB
    assert gk.memory.current_quota() is None
