"""Where a preempting scheduler raises and lowers a guaranteed task's preemption word on a device
(issue 17), over a stand-in device runtime that records its stream operations (the CPU pool
underneath): raised on the task's stream before its work, lowered there after it (even when the
work fails) and before the task waits for its stream; one word per overlapping task; none for
other classes; preempt=True refused where the device cannot yield."""

import threading

import pytest

import gpukit as gk
from gpukit import scheduler, streams
from gpukit.runtime import devices
from gpukit.runtime.backend import Capabilities


class Device:
    """What the scheduler and gpukit.Stream ask of a runtime with device streams."""

    kind, name, index = "cuda", "cuda:0", 0
    capabilities = Capabilities(
        device_streams=True,
        compiles_kernels=False,
        memory_info=False,
        launch_pacing=False,
        cuda_array_interface=False,
        preemption=True,
    )

    def __init__(self, pool, available=(True, "")):
        self.pool = pool
        self.total_memory = 1 << 30
        self.log = []
        self.available = available
        self.streams = 0
        self.local = threading.local()
        self.lock = threading.Lock()

    def preemption_available(self):
        return self.available

    def stream_priority_range(self):
        return 0, -5

    def create_stream(self, priority):
        with self.lock:
            self.streams += 1
            return 1000 + self.streams

    @property
    def stream(self):
        return getattr(self.local, "stream", 1)

    def set_stream(self, s):
        self.local.stream = 1 if s is None else s

    def record(self, *entry):
        with self.lock:
            self.log.append(entry)

    def synchronize(self, s=None):
        self.record("sync", s)

    def raise_preemption(self, s, slot):
        self.record("raise", s, slot)

    def lower_preemption(self, s, slot):
        self.record("lower", s, slot)


@pytest.fixture
def device(monkeypatch):
    with gk.use_backend("cpu"):
        dev = Device(devices.runtime().pool)
        monkeypatch.setattr(scheduler.devices, "runtime", lambda: dev)
        monkeypatch.setattr(streams, "runtime", lambda: dev)
        yield dev


def test_the_word_is_raised_before_the_work_and_lowered_after_it(device):
    s = gk.Scheduler(memory="64MiB", workers=1, preempt=True)
    try:
        with s.task(qos="guaranteed", memory="1MiB") as t:
            device.record("work", device.stream)
            assert t.state == "running"
        raised, work, lowered, sync = device.log
        stream, slot = raised[1], raised[2]
        assert raised == ("raise", stream, slot) and stream >= 1000
        assert work == ("work", stream)
        assert lowered == ("lower", stream, slot)
        assert sync == ("sync", stream)
        device.log.clear()
        with (
            pytest.raises(RuntimeError, match="on purpose"),
            s.task(qos="guaranteed", memory="1MiB"),
        ):
            raise RuntimeError("on purpose")
        assert [e[0] for e in device.log] == ["raise", "lower"]
        device.log.clear()
        with s.task(qos="best_effort"), s.task(qos="burstable", memory="1MiB"):
            device.record("work", device.stream)
        assert [e[0] for e in device.log] == ["work", "sync", "sync"]
        assert s.preemption_words() == [0] * gk._core.PREEMPT_SLOTS
    finally:
        s.shutdown()


def test_overlapping_guaranteed_tasks_raise_their_own_words(device):
    s = gk.Scheduler(memory="64MiB", workers=4, preempt=True)
    inside, release = threading.Barrier(3), threading.Event()

    def critical():
        inside.wait(10)
        release.wait(10)

    try:
        futures = [s.submit(critical, qos="guaranteed", memory="1MiB") for _ in range(2)]
        inside.wait(10)
        raised = sorted(e[2] for e in device.log if e[0] == "raise")
        assert len(raised) == 2 and raised[0] != raised[1]
        release.set()
        for f in futures:
            f.result(10)
        lowered = sorted(e[2] for e in device.log if e[0] == "lower")
        assert lowered == raised
    finally:
        s.shutdown()


def test_without_preempt_nothing_is_raised(device):
    s = gk.Scheduler(memory="64MiB", workers=1)
    try:
        with s.task(qos="guaranteed", memory="1MiB"):
            pass
        assert [e[0] for e in device.log] == ["sync"]
    finally:
        s.shutdown()


def test_preempt_is_refused_where_the_device_cannot_yield(device):
    device.available = (False, "the driver has no stream memory operations")
    with pytest.raises(ValueError, match="not available on cuda:0: the driver has no stream"):
        gk.Scheduler(preempt=True)
