"""The QoS scheduler: several jobs share one device, latency-critical work keeps its latency.

    sched = gpukit.Scheduler(device=0, memory="70GiB")
    fut = sched.submit(fn, *args, qos="guaranteed", memory="4GiB", name="chat")
    with sched.task(qos="best_effort"):
        ...

Classes, in the manner of Kubernetes: `guaranteed` reserves `memory` at admission and may use
no more, runs on the highest-priority stream and is never throttled; `burstable` reserves `memory`
and may grow to `limit` (default: the scheduler's memory) while unreserved memory is free;
`best_effort` reserves nothing (`memory`, if given, is its limit), runs on the lowest-priority
stream, is paced while guaranteed work runs and its evictable arrays are spilled first.

A task is admitted when its reservation fits beside those of the admitted tasks and what tasks
hold beyond theirs; otherwise it waits in its class's queue (FIFO, guaranteed served first) or,
with admission="reject", fails at once. Allocations made while a task is current count against
its quota: past it, that allocation raises OutOfMemoryError naming the task. The admission, queues
and pacing live in Rust (gpukit._core); on the CPU backend all but streams and pacing work alike.

Preemption (`preempt=True`): each guaranteed task holds one of the device's preemption words,
raised on its stream before its work and lowered after it, by the GPU itself (stream memory
operations); best-effort products run in their preemptible form, which while a word is raised
takes no more tiles and stops those it holds within a few K slices, saving their accumulators,
and is relaunched, its thread waiting on the host until no guaranteed task runs
(runtime/cuda/preempt.py), with the same bits as one uninterrupted launch. `cap_us` bounds the
expected duration of best-effort kernels queued while guaranteed work runs (for kernels that
cannot yield). `green_sms` runs best-effort tasks on streams of a green context of that many
SMs, leaving the rest to the others. A guaranteed task holds its word until it ends: one that
waits for a best-effort task's result waits for work its own word holds back (a best-effort task
inside the thread's own guaranteed task takes plain products for that reason).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import traceback

from . import _core, memory
from .errors import TaskRejectedError, TaskTimeoutError
from .runtime import devices, quota
from .streams import Stream

QOS_CLASSES = ("guaranteed", "burstable", "best_effort")
_KEPT_TASKS = 10_000  # finished tasks whose statistics stats() still reports
_IDLE_WAIT_S = 0.25
_pacer_installed = False


def should_slice() -> bool:
    """True when the calling thread runs a best-effort task while a guaranteed task is running:
    long ops should then launch in row blocks (slice_rows() rows each)."""
    return _core.slice_rows() > 0


def preemptible() -> bool:
    """True when the calling thread runs a best-effort task of a scheduler with preemption on:
    its long products then take their preemptible form."""
    return _core.preemptible()


def slice_rows() -> int:
    """Rows per launch for the calling thread's long ops now (0: launch whole)."""
    return _core.slice_rows()


def _install_pacer(rt) -> None:
    global _pacer_installed
    if rt.capabilities.launch_pacing and not _pacer_installed:
        rt.install_pacer(_core.pacer_table())
        _pacer_installed = True


def _ended_error(task) -> BaseException:
    kind, message = task.outcome or ("cancelled", "")
    if kind == "rejected":
        return TaskRejectedError(f"task {task.name!r} ({task.qos}) {message}")
    if kind == "timed_out":
        return TaskTimeoutError(f"task {task.name!r} ({task.qos}) timed out in its queue")
    return concurrent.futures.CancelledError(f"task {task.name!r} was cancelled")


def _cancel_future(fut) -> bool:
    """Cancels a pending Future so that concurrent.futures.wait and as_completed see it done."""
    if not concurrent.futures.Future.cancel(fut):
        return False
    fut.set_running_or_notify_cancel()
    return True


class _TaskFuture(concurrent.futures.Future):
    """A Future whose cancel() also takes its task out of the scheduler (while it has not
    started)."""

    def __init__(self, scheduler: Scheduler):
        super().__init__()
        self._scheduler = scheduler
        self._task = None

    def cancel(self) -> bool:
        task = self._task
        if task is not None:
            if not self._scheduler._core.cancel(task):
                return False
            with self._scheduler._lock:
                self._scheduler._futures.pop(task.id, None)
        return _cancel_future(self)


class Scheduler:
    """Admission, class queues, quotas, per-task streams and launch pacing over the memory of one
    device. `memory`: bytes or a size string ("70GiB"); default the device's memory (the host's
    on the CPU). `workers`: threads running submitted tasks. `pace_bound`: best-effort kernels
    in flight while guaranteed work runs. `slice_rows`: the row block should_slice() advises.
    `preempt`: best-effort products yield to guaranteed work (see the module's notes; on the CPU
    backend only the bookkeeping runs). `cap_us`: expected microseconds of best-effort kernels
    in flight while guaranteed work runs (None: no cap beyond pace_bound). `green_sms`:
    best-effort tasks run in a green context of that many SMs (CUDA 12.4+ drivers)."""

    def __init__(
        self,
        device=0,
        memory=None,
        *,
        workers=8,
        pace_bound=1,
        slice_rows=256,
        preempt=False,
        cap_us=None,
        green_sms=None,
    ):
        rt = devices.runtime()
        if device != rt.index:
            raise ValueError(
                f"device {device} is not the current device ({rt.name}); "
                "only the current device can be scheduled"
            )
        if not isinstance(workers, int) or isinstance(workers, bool):
            raise TypeError(f"workers must be an int, not {type(workers).__name__}")
        if workers < 1:
            raise ValueError(f"a scheduler needs at least one worker, not {workers}")
        self._rt = rt
        capacity = rt.total_memory if memory is None else memory_size(memory)
        if not isinstance(preempt, bool):
            raise TypeError(f"preempt must be a bool, not {type(preempt).__name__}")
        # Raised and lowered on the device only where it has streams (the CPU runs the rest).
        self._device_preempt = preempt and rt.capabilities.device_streams
        if self._device_preempt:
            available, why = (
                rt.preemption_available() if rt.capabilities.preemption else (False, rt.kind)
            )
            if not available:
                raise ValueError(f"preempt=True is not available on {rt.name}: {why}")
        self._core = _core.Scheduler(
            rt.pool, capacity, pace_bound, slice_rows, _cap_ns(cap_us), preempt
        )
        self._green = _GreenStreams(rt, green_sms) if green_sms is not None else None
        _install_pacer(rt)
        self._priorities = self._stream_priorities(rt)
        self._futures: dict[int, tuple] = {}  # task id: (future, fn, args, kwargs) until it runs
        self._tasks: dict[int, object] = {}
        self._lock = threading.Lock()
        self._workers = [
            threading.Thread(target=self._work, name=f"gpukit-sched-{i}", daemon=True)
            for i in range(workers)
        ]
        for w in self._workers:
            w.start()

    @staticmethod
    def _stream_priorities(rt) -> dict:
        if not rt.capabilities.device_streams:
            return {}
        least, greatest = rt.stream_priority_range()
        return {q: _core.stream_priority(q, least, greatest) for q in QOS_CLASSES}

    @property
    def memory(self) -> int:
        """Bytes the scheduler hands out."""
        return self._core.capacity

    # --- submitting -------------------------------------------------------------------------------
    def _spec(self, qos, memory_, limit):
        if qos not in QOS_CLASSES:
            raise ValueError(f"unknown qos {qos!r}: choose one of {', '.join(QOS_CLASSES)}")
        request = 0 if memory_ is None else memory_size(memory_)
        capped = None if limit is None else memory_size(limit)
        if qos == "guaranteed":
            if memory_ is None:
                raise ValueError("a guaranteed task needs memory= (the bytes reserved for it)")
            if capped is not None and capped != request:
                raise ValueError(f"a guaranteed task's limit ({capped}) must equal its memory")
            return request, request
        if qos == "best_effort":
            # Nothing reserved: memory= (or limit=) only caps it.
            return 0, capped if capped is not None else (request or self.memory)
        return request, capped if capped is not None else self.memory

    def submit(
        self,
        fn,
        /,
        *args,
        qos="burstable",
        memory=None,
        limit=None,
        name=None,
        timeout=None,
        admission="wait",
        **kwargs,
    ) -> concurrent.futures.Future:
        """Runs `fn(*args, **kwargs)` as a task on a worker thread; a Future of its result.
        `timeout`: seconds it may wait in its queue (None or inf: no limit; NaN or negative:
        ValueError). admission="reject": fail at once
        (TaskRejectedError) instead of waiting when it does not fit."""
        if admission not in ("wait", "reject"):
            raise ValueError(f"admission must be 'wait' or 'reject', not {admission!r}")
        request, cap = self._spec(qos, memory, limit)
        fut = _TaskFuture(self)
        label = name or getattr(fn, "__name__", "task")
        with self._lock:  # a worker must find the future once the task is admitted
            task = self._core.submit(label, qos, request, cap, timeout, admission == "reject")
            fut._task = task
            self._remember(task)
            if task.state in ("failed", "cancelled"):
                fut.set_exception(_ended_error(task))
            else:
                self._futures[task.id] = (fut, fn, args, kwargs)
        return fut

    def _remember(self, task) -> None:
        self._tasks[task.id] = task
        if len(self._tasks) > _KEPT_TASKS:
            for tid in [t for t, v in self._tasks.items() if v.outcome is not None][:1000]:
                del self._tasks[tid]

    @contextlib.contextmanager
    def task(
        self, qos="burstable", memory=None, limit=None, name=None, timeout=None, admission="wait"
    ):
        """Runs the block as a task on the calling thread: waits for admission, then the block's
        allocations count against the task's quota and its ops run on the task's stream. Inside
        another task or a `gpukit.memory.quota` block, they count against that one too."""
        if admission not in ("wait", "reject"):
            raise ValueError(f"admission must be 'wait' or 'reject', not {admission!r}")
        request, cap = self._spec(qos, memory, limit)
        task = self._core.submit(
            name or "task",
            qos,
            request,
            cap,
            timeout,
            admission == "reject",
            inline=True,
            within=quota.current_quota(),  # inside a task or quota: it only narrows that one
        )
        with self._lock:
            self._remember(task)
        if task.state != "running":
            raise _ended_error(task)
        error = None
        try:
            with self._current(task):
                yield task
        except BaseException as e:
            error = f"{type(e).__name__}: {e}"
            raise
        finally:
            self._core.finish(task, error)

    @contextlib.contextmanager
    def _current(self, task):
        """Makes `task` the calling thread's: its quota, its stream, its pacing; a guaranteed
        task of a preempting scheduler holds a preemption word meanwhile."""
        previous_quota = quota.set_quota(task.quota)
        self._core.enter_task(task)
        slot = self._core.take_slot() if task.qos == "guaranteed" and self._core.preempt else None
        stream = self._stream_for(task)
        try:
            if stream is None:
                yield
            else:
                with stream:
                    if slot is not None and self._device_preempt:
                        self._rt.raise_preemption(stream.handle, slot)
                    try:
                        yield
                    finally:
                        if slot is not None:
                            held, slot = slot, None
                            if self._core.give_slot(held) and self._device_preempt:
                                self._rt.lower_preemption(stream.handle, held)
                # The task ends when its work on the device does.
                stream.synchronize()
        finally:
            if slot is not None:
                self._core.give_slot(slot)
            if self._green is not None and task.qos == "best_effort" and stream is not None:
                self._green.give(stream)
            self._core.exit_task()
            quota.set_quota(previous_quota)

    def _stream_for(self, task):
        if not self._priorities:
            return None
        if self._green is not None and task.qos == "best_effort":
            return self._green.take(self._priorities[task.qos])
        return Stream(self._priorities[task.qos])

    def preemption_words(self) -> list[int]:
        """Guaranteed tasks holding each of the device's preemption words now."""
        return list(self._core.slot_holders())

    # --- workers ----------------------------------------------------------------------------------
    def _work(self) -> None:
        devices.scope(self._rt)  # this thread's arrays go to the scheduler's device
        core = self._core
        while True:
            kind, task = core.next(_IDLE_WAIT_S)
            if kind == "exit":
                return
            if kind == "idle":
                continue
            with self._lock:
                entry = self._futures.pop(task.id, None)
            if entry is None:  # cancelled through its future meanwhile
                if kind == "run":
                    core.finish(task, "cancelled")
                continue
            fut, fn, args, kwargs = entry
            if kind == "ended":
                if not fut.cancelled():
                    fut.set_exception(_ended_error(task))
                continue
            self._run(task, fut, fn, args, kwargs)

    def _run(self, task, fut, fn, args, kwargs) -> None:
        if not fut.set_running_or_notify_cancel():
            self._core.finish(task, "cancelled")
            return
        error = None
        try:
            with self._current(task):
                result = fn(*args, **kwargs)
        except BaseException as e:  # the Future carries it to the caller
            error = e
            # The traceback would keep the task's arrays (and their memory) alive in the Future.
            traceback.clear_frames(e.__traceback__)
        # Ended (memory released, statistics folded in) before the caller sees the result.
        self._core.finish(task, None if error is None else f"{type(error).__name__}: {error}")
        if error is None:
            fut.set_result(result)
        else:
            fut.set_exception(error)

    # --- the rest ---------------------------------------------------------------------------------
    def stats(self) -> dict:
        """{"guaranteed" | "burstable" | "best_effort": totals of the class (submitted, completed,
        failed, rejected, timed_out, cancelled, queue wait, run time, kernels, throttled time,
        memory peak; pending/admitted/running now), "tasks": {id: that task's figures}, and the
        reserved, burst and capacity bytes}."""
        out = self._core.stats()
        with self._lock:
            tasks = list(self._tasks.values())
        out["tasks"] = {t.id: t.stats() for t in tasks}
        return out

    def shutdown(self, wait=True, *, cancel_pending=False) -> None:
        """Takes no more tasks; `cancel_pending` cancels those not yet running; `wait` waits for
        the rest to end."""
        for task in self._core.shutdown(cancel_pending):
            with self._lock:
                entry = self._futures.pop(task.id, None)
            if entry is not None:
                _cancel_future(entry[0])
        if wait:
            for w in self._workers:
                w.join()

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown(wait=True)


def _cap_ns(cap_us) -> int:
    if cap_us is None:
        return 0
    if isinstance(cap_us, bool) or not isinstance(cap_us, (int, float)):
        raise TypeError(f"cap_us must be a number of microseconds, not {type(cap_us).__name__}")
    if not 0 < cap_us < float("inf"):
        raise ValueError(f"cap_us must be positive and finite, not {cap_us}")
    return int(cap_us * 1000)


class _GreenStreams:
    """Streams of one green context per scheduler for its best-effort tasks, reused."""

    def __init__(self, rt, sm_count):
        if not rt.capabilities.device_streams:
            raise ValueError(f"green_sms needs a CUDA device; the backend is {rt.kind}")
        self._sm_count = sm_count
        self._free: list = []
        self._lock = threading.Lock()
        # The first one now: an unavailable green context fails the scheduler's creation.
        self._free.append(Stream.green(sm_count, rt.stream_priority_range()[0]))

    def take(self, priority: int) -> Stream:
        with self._lock:
            if self._free:
                return self._free.pop()
        return Stream.green(self._sm_count, priority)

    def give(self, stream: Stream) -> None:
        with self._lock:
            self._free.append(stream)


def memory_size(value) -> int:
    """Bytes from an int or a size string ("4GiB", "512MiB")."""
    return memory.parse_size(value)
