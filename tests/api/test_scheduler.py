"""The QoS scheduler: admission, quotas, cancellation, timeouts, class order, statistics under
load. On every backend (the CPU runs the same Rust admission, queues and quotas)."""

import concurrent.futures
import threading
import time

import numpy as np
import pytest
from task_storm import MiB, run_storm

import gpukit as gk


@pytest.fixture
def sched(backend):
    s = gk.Scheduler(memory="100MiB", workers=4)
    yield s
    s.shutdown(wait=True, cancel_pending=True)


def _blocker(sched, qos="guaranteed", memory="60MiB", name="blocker"):
    """A running task that holds its reservation until the returned event is set."""
    started, release = threading.Event(), threading.Event()

    def hold():
        started.set()
        release.wait(10)
        return "held"

    fut = sched.submit(hold, qos=qos, memory=memory, name=name)
    assert started.wait(10)
    return fut, release


def test_memory_sizes_parse_and_bad_specs_fail(backend):
    s = gk.Scheduler(memory="1GiB", workers=1)
    try:
        assert s.memory == 2**30
        with pytest.raises(ValueError, match="guaranteed task needs memory"):
            s.submit(print, qos="guaranteed")
        with pytest.raises(ValueError, match="unknown qos"):
            s.submit(print, qos="platinum", memory=1)
        with pytest.raises(ValueError, match="more than the scheduler"):
            s.submit(print, qos="guaranteed", memory="2GiB")
    finally:
        s.shutdown()
    assert gk.Scheduler(workers=1).memory > 0


def test_over_commit_waits_for_memory(sched):
    held, release = _blocker(sched)
    fut = sched.submit(lambda: "second", qos="guaranteed", memory="60MiB", name="second")
    time.sleep(0.05)
    assert not fut.done()
    assert sched.stats()["guaranteed"]["pending"] == 1
    assert sched.stats()["reserved_bytes"] == 60 * MiB
    release.set()
    assert fut.result(10) == "second" and held.result(10) == "held"
    second = next(t for t in sched.stats()["tasks"].values() if t["name"] == "second")
    assert second["queue_wait_s"] >= 0.05 and second["state"] == "completed"


def test_over_commit_is_rejected_at_once(sched):
    held, release = _blocker(sched)
    fut = sched.submit(lambda: 1, qos="burstable", memory="50MiB", admission="reject")
    assert fut.done()
    with pytest.raises(gk.TaskRejectedError, match="not admitted"):
        fut.result()
    assert sched.submit(lambda: 2, qos="burstable", memory="40MiB").result(10) == 2
    release.set()
    held.result(10)
    assert sched.stats()["burstable"]["rejected"] == 1


def test_a_quota_fails_only_its_own_task(sched, backend):
    def allocate(nbytes):
        a = gk.empty((nbytes // 4,), "float32")
        return a.nbytes

    small = sched.submit(allocate, 4 * MiB, qos="guaranteed", memory="1MiB", name="tiny")
    big = sched.submit(allocate, 4 * MiB, qos="guaranteed", memory="8MiB", name="roomy")
    with pytest.raises(gk.OutOfMemoryError, match='quota of task "tiny"'):
        small.result(10)
    assert big.result(10) == 4 * MiB
    with sched.task(qos="burstable", memory="1MiB", limit="2MiB", name="inline") as task:
        assert gk.memory.current_quota() == task.quota
        keep = gk.empty((MiB // 4,), "float32")
        with pytest.raises(gk.OutOfMemoryError, match="inline"):
            gk.empty((MiB // 2,), "float32")
    assert gk.memory.current_quota() is None
    assert gk.empty((MiB,), "float32").nbytes == 4 * MiB  # outside any task: no quota
    del keep
    tasks = sched.stats()["tasks"].values()
    roomy = next(t for t in tasks if t["name"] == "roomy")
    assert roomy["memory_peak_bytes"] >= 4 * MiB
    assert sched.stats()["guaranteed"]["failed"] == 1


def test_a_burstable_task_grows_into_free_memory_only(sched):
    def allocate(nbytes):
        return gk.empty((nbytes,), "uint8").nbytes

    grow = sched.submit(allocate, 60 * MiB, qos="burstable", memory="10MiB", limit="80MiB")
    assert grow.result(10) == 60 * MiB
    held, release = _blocker(sched, memory="70MiB")
    # 30 MiB unreserved: growing to 40 MiB fails, though its own limit allows it.
    squeezed = sched.submit(allocate, 40 * MiB, qos="burstable", memory="0", limit="80MiB")
    with pytest.raises(gk.OutOfMemoryError, match="unreserved"):
        squeezed.result(10)
    release.set()
    held.result(10)


def test_cancel_while_pending(sched):
    held, release = _blocker(sched)
    ran = []
    fut = sched.submit(ran.append, 1, qos="guaranteed", memory="60MiB")
    assert fut.cancel() and fut.cancelled()
    assert not held.cancel(), "a running task cannot be cancelled"
    release.set()
    held.result(10)
    time.sleep(0.05)
    assert ran == []
    stats = sched.stats()
    assert stats["guaranteed"]["cancelled"] == 1 and stats["reserved_bytes"] == 0


def test_queue_timeout(sched):
    held, release = _blocker(sched)
    start = time.perf_counter()
    fut = sched.submit(lambda: 1, qos="guaranteed", memory="60MiB", timeout=0.05)
    with pytest.raises(gk.TaskTimeoutError):
        fut.result(5)
    assert time.perf_counter() - start < 2
    with (
        pytest.raises(gk.TaskTimeoutError),
        sched.task(qos="guaranteed", memory="60MiB", timeout=0.05),
    ):
        pass
    release.set()
    held.result(10)
    assert sched.stats()["guaranteed"]["timed_out"] == 2


def test_guaranteed_runs_before_best_effort_queued_earlier(backend):
    s = gk.Scheduler(memory="100MiB", workers=1)
    try:
        held, release = _blocker(s, qos="burstable", memory="1MiB")
        order = []
        late = [s.submit(order.append, f"best_effort{i}", qos="best_effort") for i in range(3)]
        first = s.submit(order.append, "guaranteed", qos="guaranteed", memory="1MiB")
        release.set()
        concurrent.futures.wait([held, first, *late], timeout=10)
        assert order == ["guaranteed", "best_effort0", "best_effort1", "best_effort2"]
    finally:
        s.shutdown()


def test_should_slice_only_best_effort_beside_guaranteed(sched):
    assert not gk.scheduler.should_slice()
    with sched.task(qos="best_effort"):
        assert not gk.scheduler.should_slice()
    held, release = _blocker(sched, memory="1MiB")
    with sched.task(qos="best_effort"):
        assert gk.scheduler.should_slice() and gk.scheduler.slice_rows() == 256
    with sched.task(qos="burstable", memory="1MiB"):
        assert not gk.scheduler.should_slice()
    release.set()
    held.result(10)
    with sched.task(qos="best_effort"):
        assert not gk.scheduler.should_slice()


def test_a_thousand_random_tasks_from_eight_threads(backend):
    s = gk.Scheduler(memory="64MiB", workers=6)

    def work(nbytes, fail):
        a = gk.zeros((max(nbytes // 4, 1),), "float32")
        total = float(gk.sum(a + 1.0).to_numpy())
        if fail:
            raise RuntimeError("task failed on purpose")
        return total

    outcomes, stats, kinds = run_storm(s, work, lambda r, qos: (r.randrange(1, 12) * MiB,))
    classes = [stats[q] for q in gk.scheduler.QOS_CLASSES]
    assert sum(c["cancelled"] for c in classes) == sum(f.cancelled() for f in outcomes)
    assert sum(c["rejected"] for c in classes) == kinds.count(gk.TaskRejectedError)
    assert sum(c["timed_out"] for c in classes) == kinds.count(gk.TaskTimeoutError)
    failed = sum(k in (RuntimeError, gk.OutOfMemoryError) for k in kinds)
    assert sum(c["failed"] for c in classes) == failed
    for f in outcomes:
        if not f.cancelled() and f.exception() is None:
            assert np.isfinite(f.result())
    assert len(stats["tasks"]) == 1000
    assert all(t["outcome"] is not None for t in stats["tasks"].values())
    # Nothing reserved, nor held by a finished task (failed ones' tracebacks included).
    assert stats["reserved_bytes"] == 0 and stats["burst_bytes"] == 0


def test_shutdown_refuses_new_tasks(backend):
    s = gk.Scheduler(memory="10MiB", workers=2)
    fut = s.submit(lambda: 42, qos="best_effort")
    s.shutdown(wait=True)
    assert fut.result(1) == 42
    with pytest.raises(RuntimeError, match="shut down"):
        s.submit(lambda: 1)


def test_native_takes_only_the_pacer_table():
    from gpukit import _core, _native

    with pytest.raises(ValueError, match="pacer table"):
        _native.install_pacer(_native.host_allocator_table())
    _native.install_pacer(_core.pacer_table())  # what gpukit.Scheduler installs on a GPU
