"""Preemptible best-effort products on the GPU (issue 17; skipped without a GPU that has them):
a preemptible product stopped again and again at random points (mid-tile: its tiles' fp32
accumulators saved and resumed by the next launch) gives the bits of the plain kernel, with its
output and save area poisoned first; a best-effort product of a preempting scheduler,
interrupted by guaranteed tasks that start at random points (their preemption word raised and
lowered on the GPU), gives the bits of the same product run without interruption; and a
best-effort product queued while a word is raised waits for it and then completes."""

import random
import threading
import time

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk
from gpukit.array import layout
from gpukit.runtime import runtime
from gpukit.runtime.backend import Layout
from gpukit.runtime.cuda import preempt


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


@pytest.fixture
def cuda_runtime():
    if "cuda" not in gk.available_backends():
        pytest.skip("no CUDA GPU here")
    with gk.use_backend("cuda"):
        rt = runtime()
        ok, why = rt.preemption_available()
        if not ok:
            pytest.skip(why)
        yield rt


def _spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _preempted_again_and_again(rt, plan, a, b, out, r, budget):
    """Runs the preemptible product into `out`, each launch preempted (its word raised on a
    high-priority stream) after a random 0-`budget` s, until it is done: (launches, tiles that
    were saved mid-way)."""
    least, greatest = gk.Stream.priority_range()
    low, high = gk.Stream(least), gk.Stream(greatest)
    ctl = gk.asarray(preempt.control_words(plan.grid))
    save = gk.full((plan.save_bytes // 4,), np.nan, dtype="float32")
    args = (a._buf, a._offset, b._buf, b._offset, out._buf, out._offset, ctl._buf, ctl._offset,
            save._buf, save._offset)  # fmt: skip
    gk.synchronize()
    launches = saved = 0
    last_end = 0
    while True:
        plan.yielding(low.handle, None, *args)
        _spin(r.uniform(0, budget))
        rt.raise_preemption(high.handle, 0)
        low.synchronize()
        rt.lower_preemption(high.handle, 0)
        high.synchronize()
        words = ctl.to_numpy()
        taken, waiting = (int(v) for v in words[:2])
        _check_stamps(preempt.stamps(words, plan.grid), last_end)
        last_end = int(preempt.stamps(words, plan.grid)["exit"].max())
        launches += 1
        saved += waiting
        if taken >= plan.tiles and waiting == 0:
            return launches, saved
        assert launches < 1000, "the product makes no progress"


def _check_stamps(st, after):
    """The launch's %globaltimer stamps (ns): every block ended after the previous launch's last
    block (so they are this launch's); a block's checks come before its end, and the check that
    found the word raised after the last that found it lowered."""
    seen, clear, end = st["seen"], st["clear"], st["exit"]
    assert (end > after).all(), (end.min(), after)
    assert (end - end.min() < 10**9).all()
    yielded = seen > 0
    assert (seen[yielded] <= end[yielded]).all()
    both = yielded & (clear > 0)
    assert (clear[both] < seen[both]).all()
    assert (clear[clear > 0] <= end[clear > 0]).all()


@pytest.mark.parametrize(
    "dtype, shape, a_m_major",
    # Tails in m, n and k; the second, M-major a and N-major b (TMA needs their leading
    # dimensions in 16-byte steps, else the product takes another kernel) on 128x128 tiles.
    [("bfloat16", (4096, 6144, 8192), False), ("float16", (3000, 2984, 4104), True)],
)
def test_products_stopped_mid_tile_again_and_again_have_the_plain_kernels_bits(
    cuda_runtime, rng, dtype, shape, a_m_major
):
    rt = cuda_runtime
    m, n, k = shape
    if a_m_major:  # a.T of a row-major matrix: the kernel's M-major operand path
        a = gk.asarray(random_array(rng, (k, m), dtype)).T
    else:
        a = gk.asarray(random_array(rng, (m, k), dtype))
    b = gk.asarray(random_array(rng, (k, n), dtype))
    item = np.dtype(a.dtype).itemsize
    out_layout = Layout(a.dtype, (m, n), (n * item, item))
    plan = rt.plan_preemptible_matmul(layout(a), layout(b), out_layout, None)
    assert plan is not None
    # This many tiles: the plain kernel takes the same tile and does not split K.
    assert plan.tiles > plan.grid
    ref = gk.matmul(a, b).to_numpy()  # the plain kernel, no scheduler
    a64, b64 = a.to_numpy().astype(np.float64), b.to_numpy().astype(np.float64)
    exact = a64 @ b64
    err = np.abs(ref.astype(np.float64) - exact).max() / np.abs(exact).max()
    assert err < 2e-2, err
    r = random.Random(int(rng.integers(1 << 30)))
    gk.synchronize()
    start = time.perf_counter()
    gk.matmul(a, b)
    gk.synchronize()
    solo = time.perf_counter() - start
    saved = 0
    for _ in range(5):
        out = gk.full((m, n), np.nan, dtype=a.dtype)
        launches, s = _preempted_again_and_again(rt, plan, a, b, out, r, min(solo, 2e-3) / 3)
        saved += s
        assert out.to_numpy().tobytes() == ref.tobytes(), (launches, s)
    assert saved > 0, "no launch stopped inside a tile"


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
