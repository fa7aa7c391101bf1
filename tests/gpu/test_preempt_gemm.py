"""Preemptible best-effort products on the GPU (issue 17; skipped without a GPU that has them):
a best-effort product of a preempting scheduler, interrupted by guaranteed tasks that start at
random points (their preemption word raised and lowered on the GPU), gives the bits of the same
product run without interruption, with its output memory poisoned first; and a best-effort
product queued while a word is raised waits for it and then completes."""

import random
import threading
import time

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk


@pytest.fixture
def preempting():
    if "cuda" not in gk.available_backends():
        pytest.skip("no CUDA GPU here")
    with gk.use_backend("cuda"):
        try:
            s = gk.Scheduler(memory="8GiB", workers=2, preempt=True)
        except ValueError as e:
            pytest.skip(str(e))
        yield s
        s.shutdown()


def _poisoned_product(a, b):
    """a @ b with the pool's next block of the result's size filled with NaN first."""
    junk = gk.full((a.shape[0], b.shape[1]), np.nan, dtype=a.dtype)
    del junk  # freed on this stream: the product's output takes the block at once
    return gk.matmul(a, b)


def _critical(s, delay, c, d, done):
    time.sleep(delay)
    with s.task(qos="guaranteed", memory="256MiB", name="critical"):
        (c @ d).to_numpy()
    done.set()


@pytest.mark.parametrize("shape", [(4096, 6144, 4096), (3001, 2999, 4104)])
def test_preempted_products_have_the_uninterrupted_bits(preempting, rng, shape):
    s = preempting
    m, n, k = shape
    a = gk.asarray(random_array(rng, (m, k), gk.bfloat16))
    b = gk.asarray(random_array(rng, (k, n), gk.bfloat16))
    c = gk.asarray(random_array(rng, (1024, 1024), gk.bfloat16))
    with s.task(qos="best_effort"):
        assert gk.scheduler.preemptible()
        ref = _poisoned_product(a, b).to_numpy()
    a64, b64 = a.to_numpy().astype(np.float64), b.to_numpy().astype(np.float64)
    exact = a64 @ b64
    err = np.abs(ref.astype(np.float64) - exact).max() / np.abs(exact).max()
    assert err < 2e-2, err
    r = random.Random(int(rng.integers(1 << 30)))
    for _ in range(12):
        done = threading.Event()
        # The product takes 0.2-0.5 ms on an H100: most requests land while it runs.
        delay = r.uniform(0, 1e-3)
        t = threading.Thread(target=_critical, args=(s, delay, c, c, done))
        t.start()
        with s.task(qos="best_effort"):
            got = _poisoned_product(a, b).to_numpy()
        t.join(30)
        assert done.is_set()
        assert got.tobytes() == ref.tobytes()
    assert s.preemption_words() == [0] * gk._core.PREEMPT_SLOTS


def test_a_product_queued_behind_a_raised_word_waits_and_completes(preempting, rng):
    s = preempting
    a = gk.asarray(random_array(rng, (2048, 2048), gk.bfloat16))
    with s.task(qos="best_effort"):
        ref = gk.matmul(a, a).to_numpy()
    release = threading.Event()
    entered = threading.Event()

    def hold():
        with s.task(qos="guaranteed", memory="1MiB", name="holder"):
            entered.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    assert entered.wait(10)
    got = {}

    def best_effort():
        with s.task(qos="best_effort"):
            got["out"] = gk.matmul(a, a).to_numpy()

    w = threading.Thread(target=best_effort)
    w.start()
    w.join(0.2)
    assert w.is_alive(), "the best-effort product ran while the word was raised"
    release.set()
    t.join(10)
    w.join(30)
    assert not w.is_alive() and got["out"].tobytes() == ref.tobytes()


def test_a_guaranteed_task_frees_device_memory_while_a_best_effort_product_waits(preempting, rng):
    """A best-effort product started while a guaranteed task runs waits on the host, never on
    the GPU (where a stream waiting for the word could hold back the work that lowers it): the
    task meanwhile frees device memory (cuMemFree waits for the whole device) and ends, and the
    product then completes with its bits."""
    s = preempting
    a = gk.asarray(random_array(rng, (2048, 2048), gk.bfloat16))
    with s.task(qos="best_effort"):
        ref = gk.matmul(a, a).to_numpy()
    started, done, got = threading.Event(), threading.Event(), {}

    def best_effort():
        with s.task(qos="best_effort"):
            started.set()
            got["out"] = gk.matmul(a, a).to_numpy()
        done.set()

    w = threading.Thread(target=best_effort)
    with s.task(qos="guaranteed", memory="1GiB", name="freer"):
        junk = gk.empty((64, 1024, 1024), dtype="uint8")
        del junk  # cached: empty_cache gives it back with cuMemFree
        w.start()
        assert started.wait(10)
        time.sleep(0.05)
        assert not done.is_set(), "the best-effort product ran beside the guaranteed task"
        gk.memory.empty_cache()
    w.join(60)
    assert not w.is_alive() and got["out"].tobytes() == ref.tobytes()
    assert s.preemption_words() == [0] * gk._core.PREEMPT_SLOTS
