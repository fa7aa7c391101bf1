"""The pool as Python sees it: limits, spilling evictable arrays and restoring them exactly,
out-of-memory errors that leave everything usable, quotas, statistics. On every backend."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk
from gpukit.memory import parse_size

MiB = 1 << 20


@pytest.fixture
def limited(backend):
    """A clean pool capped at 16 MiB for the test, restored afterwards."""
    gk.memory.empty_cache()
    before = gk.memory.get_limit()
    gk.memory.set_limit("16MiB")
    gk.memory.reset_peak_stats()
    yield 16 * MiB
    gk.memory.set_limit(before)
    gk.memory.empty_cache()


@pytest.mark.parametrize(
    "text,expected",
    [(4096, 4096), ("20GiB", 20 << 30), ("512 MB", 512 * 10**6), ("1.5K", 1500), ("3mib", 3 * MiB)],
)
def test_sizes_parse(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "ten GB", "5 parsecs", -1])
def test_bad_sizes_are_rejected(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


def test_oversubscribed_evictable_arrays_all_come_back(limited, rng):
    # 1.5x to 2x the limit in evictable arrays of mixed sizes, then used in random order.
    host, arrays, total = [], [], 0
    while total < 2 * limited:
        n = int(rng.integers(50_000, 700_000))
        x = random_array(rng, (n,), "float32")
        a = gk.asarray(x)
        a.evictable = True
        host.append(x)
        arrays.append(a)
        total += x.nbytes
    for i in rng.permutation(len(arrays)).tolist() * 2:
        np.testing.assert_array_equal(arrays[i].to_numpy(), host[i])
        np.testing.assert_array_equal((arrays[i] * 2).to_numpy(), host[i] * 2)
    stats = gk.memory.stats()
    assert stats["evictions"] > 0 and stats["restores"] > 0 and stats["spilled_bytes"] > 0
    assert stats["peak_reserved_bytes"] <= limited


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint8", "float16", "float64"])
def test_a_spilled_array_is_bit_exact(backend, rng, dtype):
    x = random_array(rng, (1234, 3), dtype)
    a = gk.asarray(x)
    a.evictable = True
    assert gk.memory.spill(a) and not gk.memory.is_resident(a)
    assert gk.memory.stats()["spilled_now_bytes"] >= x.nbytes
    np.testing.assert_array_equal(a.to_numpy(), x)
    assert gk.memory.is_resident(a)


def test_non_evictable_overflow_raises_and_keeps_everything(limited, rng):
    x = random_array(rng, (2 * MiB,), "float32")  # 8 MiB, not evictable
    a = gk.asarray(x)
    with pytest.raises(gk.OutOfMemoryError) as info:
        gk.empty((3 * MiB,), "float32")  # 12 MiB more does not fit under 16 MiB
    err = info.value
    assert err.requested == 12 * MiB and err.limit == limited
    assert err.allocated >= 8 * MiB and err.reserved >= err.allocated
    assert "requested 12582912 bytes" in str(err)
    np.testing.assert_array_equal(a.to_numpy(), x)
    assert gk.empty((MiB,), "float32").nbytes == 4 * MiB, "the pool is still usable"


def test_a_quota_fails_only_its_own_thread(backend):
    errors = []

    def other():
        try:
            gk.empty((MiB,), "float32")  # 4 MiB, no quota in this thread
        except Exception as e:  # pragma: no cover - the assertion below reports it
            errors.append(e)

    with gk.memory.quota("1MiB"):
        small = gk.empty((1000,), "float32")
        with pytest.raises(gk.OutOfMemoryError, match="quota exceeded"):
            gk.empty((MiB,), "float32")
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert not errors
    assert gk.empty((MiB,), "float32").size == MiB
    assert small.size == 1000


def test_stats_and_empty_cache(backend):
    gk.memory.empty_cache()
    # What empty_cache cannot give back: free pieces of 2 MiB small-block segments that other
    # live arrays (of earlier tests, of gpukit's own caches) still use.
    unreturnable = gk.memory.stats()["cached_bytes"]
    a = gk.empty((3 * MiB,), "uint8")
    stats = gk.memory.stats()
    if backend == "cuda":
        assert 0 < stats["device_free_bytes"] <= stats["device_total_bytes"]
    for key in (
        "allocated_bytes",
        "reserved_bytes",
        "cached_bytes",
        "peak_allocated_bytes",
        "allocations",
        "cache_hits",
        "evictions",
        "spilled_bytes",
        "fragmentation",
    ):
        assert key in stats
    assert stats["allocated_bytes"] >= 3 * MiB
    del a
    assert gk.memory.stats()["cached_bytes"] >= 3 * MiB
    gk.memory.empty_cache()
    after = gk.memory.stats()
    assert after["cached_bytes"] <= unreturnable
    assert after["reserved_bytes"] <= stats["reserved_bytes"] - 3 * MiB


def test_threads_share_a_limited_pool(limited, rng):
    # Each of 4 threads holds up to 4 arrays of 1.25 MiB at once (pinned operands, a result,
    # an upload in flight): 32 MiB leaves room for that, not for the 40 MiB of evictable data.
    gk.memory.set_limit(2 * limited)
    data = [random_array(rng, (300_000,), "float32") for _ in range(4)]
    failures = []

    def work(x):
        try:
            arrays = []
            for _ in range(8):
                a = gk.asarray(x)
                a.evictable = True
                arrays.append(a)
            for a in arrays:
                np.testing.assert_array_equal((a + 1).to_numpy(), x + 1)
        except Exception as e:
            failures.append(e)

    threads = [threading.Thread(target=work, args=(x,)) for x in data]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_the_limit_comes_from_the_environment():
    code = "import gpukit; print(gpukit.memory.get_limit())"
    env = {**os.environ, "GPUKIT_MEMORY_LIMIT": "3GiB", "GPUKIT_BACKEND": "cpu"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(3 << 30), out.stderr
