"""The scheduler with preemption on (issue 17), on every backend: guaranteed tasks hold the
device's preemption words while they run and give them back, best-effort tasks take the
preemptible products (same results as anywhere else), the expected-duration cap and its bad
values, and 1000 random tasks from 8 threads end without deadlock or a lost task. (On the CPU
only the bookkeeping runs; the GPU run checks the kernels, tests/gpu/test_preempt_gemm.py.)"""

import math

import numpy as np
import pytest
from conftest import assert_matches, random_array
from task_storm import run_storm

import gpukit as gk
from gpukit import _core


def _preempting(**kw):
    try:
        return gk.Scheduler(preempt=True, **kw)
    except ValueError as e:  # a GPU without the preemptible GEMM or stream memory operations
        pytest.skip(str(e))


def test_guaranteed_tasks_hold_a_word_while_they_run(backend):
    s = _preempting(memory="64MiB", workers=4)
    try:
        assert s.preemption_words() == [0] * _core.PREEMPT_SLOTS
        with s.task(qos="guaranteed", memory="1MiB"):
            assert sum(s.preemption_words()) == 1
            with s.task(qos="guaranteed", memory="1MiB"):
                words = s.preemption_words()
                assert sum(words) == 2 and max(words) == 1, "a free word first"
        assert s.preemption_words() == [0] * _core.PREEMPT_SLOTS
        with (
            pytest.raises(RuntimeError, match="on purpose"),
            s.task(qos="guaranteed", memory="1MiB"),
        ):
            raise RuntimeError("on purpose")
        assert s.preemption_words() == [0] * _core.PREEMPT_SLOTS, "given back on failure too"
        with s.task(qos="burstable", memory="1MiB"):
            assert sum(s.preemption_words()) == 0
    finally:
        s.shutdown()


def test_only_best_effort_tasks_of_a_preempting_scheduler_take_preemptible_products(backend):
    s = _preempting(memory="64MiB", workers=2)
    plain = gk.Scheduler(memory="64MiB", workers=2)
    try:
        assert not gk.scheduler.preemptible()
        with s.task(qos="best_effort"):
            assert gk.scheduler.preemptible()
            assert not gk.scheduler.should_slice(), "preemptible products are not sliced"
        with s.task(qos="burstable", memory="1MiB"):
            assert not gk.scheduler.preemptible()
        # Inside the thread's own guaranteed task, its raised word would hold the product.
        with s.task(qos="guaranteed", memory="1MiB"), s.task(qos="best_effort"):
            assert not gk.scheduler.preemptible()
        with plain.task(qos="best_effort"):
            assert not gk.scheduler.preemptible()
    finally:
        s.shutdown()
        plain.shutdown()


@pytest.mark.parametrize("dtype", [gk.bfloat16, np.float16, np.float32])
def test_best_effort_products_match_the_plain_ones(backend, rng, dtype):
    s = _preempting(memory="256MiB", workers=2)
    try:
        # Odd sizes, b read transposed (linear's w.T), a fused bias and activation.
        a = random_array(rng, (389, 1000), dtype)
        b = random_array(rng, (700, 1000), dtype)
        bias = random_array(rng, (700,), dtype)
        ga, gb, gbias = gk.asarray(a), gk.asarray(b), gk.asarray(bias)
        want = gk.linalg.linear(ga, gb, gbias, activation="gelu").to_numpy()

        def best_effort():
            return gk.linalg.linear(ga, gb, gbias, activation="gelu")

        got = s.submit(best_effort, qos="best_effort").result(60)
        assert np.isfinite(got.to_numpy().astype(np.float64)).all()
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        x = a64 @ b64.T + bias.astype(np.float64)
        ref = 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))
        assert_matches(got, ref, dtype, scale=np.sqrt(1000))
        # Where there is no preemptible form, the very same plan. (On sm_90 the preemptible
        # form never splits K, which the plain one may do at this size: tests/gpu compares it
        # bit for bit with the same form run without preemption.)
        if gk.linalg.matmul_path(ga, gb.T) != "sm90a-wgmma-tma":
            assert got.to_numpy().tobytes() == want.tobytes()
    finally:
        s.shutdown()


def test_bad_qos_options_are_named(backend):
    with pytest.raises(ValueError, match="cap_us must be positive"):
        gk.Scheduler(cap_us=-1.0)
    with pytest.raises(ValueError, match="cap_us must be positive"):
        gk.Scheduler(cap_us=float("nan"))
    with pytest.raises(TypeError, match="cap_us must be a number"):
        gk.Scheduler(cap_us="10us")
    with pytest.raises(TypeError, match="preempt must be a bool"):
        gk.Scheduler(preempt="yes")
    if gk.backend() == "cpu":
        with pytest.raises(ValueError, match="green_sms needs a CUDA device"):
            gk.Scheduler(green_sms=64)
        with pytest.raises(ValueError, match="green contexts need a CUDA device"):
            gk.Stream.green(64)
    with pytest.raises(TypeError, match="sm_count must be an int"):
        gk.Stream.green(1.5)


def test_info_says_whether_preemption_and_green_contexts_are_available(backend):
    facts = gk.info()
    assert "preemption" in facts and "green contexts" in facts
    if gk.backend() == "cpu":
        assert facts["green contexts"] == "not on the cpu backend"


def test_a_thousand_random_tasks_from_eight_threads_with_preemption(backend):
    s = _preempting(memory="64MiB", workers=6, cap_us=200.0)
    a = gk.asarray(np.arange(48 * 40, dtype=np.float32).reshape(48, 40) / 100)
    b = gk.asarray(np.linspace(-1, 1, 40 * 24, dtype=np.float32).reshape(40, 24))
    want = a.to_numpy() @ b.to_numpy()

    def work(qos, fail):
        held = sum(s.preemption_words())
        if qos == "guaranteed" and held < 1:
            raise AssertionError("a running guaranteed task holds no preemption word")
        out = gk.matmul(a, b)
        if fail:
            raise RuntimeError("task failed on purpose")
        return qos, out

    outcomes, _, kinds = run_storm(s, work, lambda r, qos: (qos,))
    assert AssertionError not in kinds, "a guaranteed task ran without a preemption word"
    for f in outcomes:
        if not f.cancelled() and f.exception() is None:
            assert_matches(f.result()[1], want, "float32", scale=np.sqrt(40))
    assert s.preemption_words() == [0] * _core.PREEMPT_SLOTS, "every word given back"
