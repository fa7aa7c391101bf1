"""gpukit.graphs: capture and replay equal to eager work bit for bit, what a capture refuses
(and that the thread goes on cleanly after), the memory a graph keeps, on every backend (the CPU
backend replays recorded NumPy steps)."""

import threading

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk


def _same(a, b):
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def _in_use():
    s = gk.memory.stats()
    return s["allocated_bytes"] + s["graph_held_bytes"]


def _chain(x, y):
    a = gk.exp(x * 0.5) - y
    b = gk.maximum(a, 0.25) / (1.0 + gk.absolute(y))
    c = gk.where(x > y, b, -b) + x[::-1]
    return c.sum(axis=0), c


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
def test_replay_equals_eager_elementwise_and_reductions(backend, rng, dtype):
    shape = (7, 131)
    x = gk.asarray(random_array(rng, shape, dtype))
    y = gk.asarray(random_array(rng, shape, dtype))
    with gk.graph() as g:
        total, c = _chain(x, y)
    for _ in range(3):  # fresh inputs copied into the static ones, then replayed
        hx, hy = random_array(rng, shape, dtype), random_array(rng, shape, dtype)
        x[...], y[...] = hx, hy
        c[...], total[...] = np.nan, np.nan  # every element must be written again
        g.replay()
        want_total, want_c = _chain(gk.asarray(hx), gk.asarray(hy))
        _same(c, want_c)
        _same(total, want_total)
    assert g.nodes >= 8


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_replay_equals_eager_matmul_and_nn(backend, rng, dtype):
    x = gk.asarray(random_array(rng, (3, 5, 64), dtype))
    w = gk.asarray(random_array(rng, (48, 64), dtype) * 0.1)
    norm = gk.asarray(random_array(rng, (48,), dtype))
    table = gk.asarray(random_array(rng, (29, 64), dtype))
    ids = gk.asarray(rng.integers(0, 29, size=(3, 5)))
    cos, sin = gk.nn.rope_cache(5, 16, dtype=dtype)

    def step(x, ids):
        h = gk.linear(x + gk.nn.embedding(ids, table, check=False), w)
        h = gk.nn.rms_norm(h, norm)
        q = gk.nn.rope(h.reshape(3, 5, 3, 16).transpose(0, 2, 1, 3), cos, sin)
        o = gk.nn.scaled_dot_product_attention(q, q, q, is_causal=True)
        return gk.nn.softmax(o, axis=-1) @ w[:, :16].T, gk.nn.silu(h)

    with gk.graph() as g:
        out, act = step(x, ids)
    hx = random_array(rng, (3, 5, 64), dtype)
    hid = rng.integers(0, 29, size=(3, 5))
    x[...], ids[...] = hx, hid
    g.replay()
    want_out, want_act = step(gk.asarray(hx), gk.asarray(hid))
    _same(out, want_out)
    _same(act, want_act)


def test_function_form_and_in_place_state(backend, rng):
    counter = gk.zeros((4,), "int64")
    step = gk.asarray(rng.integers(1, 9, size=4))

    def bump(c, s):
        c += s  # in place: each replay adds again
        return c * 2

    g = gk.graph(bump, counter, step)
    doubled = g.outputs
    assert not counter.to_numpy().any(), "a capture runs nothing"
    for n in range(1, 4):
        assert g.replay() is doubled
        np.testing.assert_array_equal(counter.to_numpy(), n * step.to_numpy())
        np.testing.assert_array_equal(doubled.to_numpy(), 2 * n * step.to_numpy())
    explicit = gk.Graph()
    with gk.graph(explicit) as same:
        assert same is explicit
        counter[...] = 0
    explicit()
    assert not counter.to_numpy().any()


# Each takes an array made inside the capture and an index array made before it.
READBACKS = {
    "to_numpy": lambda a, i: a.to_numpy(),
    "item": lambda a, i: a[0].item(),
    "bool": lambda a, i: bool(a[0] > 0),
    "repr": lambda a, i: repr(a),
    "nonzero": lambda a, i: gk.nonzero(a > 0),
    "unique": lambda a, i: gk.unique(a),
    "mask index": lambda a, i: a[a > 0],
    "index check": lambda a, i: a[i],
    "synchronize": lambda a, i: gk.synchronize(),
    "event": lambda a, i: gk.Event().record(),
    "host data": lambda a, i: a + gk.asarray(np.ones(3)),
    "integer power": lambda a, i: i ** (i - 1),
    "embedding check": lambda a, i: gk.nn.embedding(i, gk.ones((4, 2))),
    "empty_cache": lambda a, i: gk.memory.empty_cache(),
    "spill": lambda a, i: gk.memory.spill(a),
    "stream switch": lambda a, i: gk.Stream().__enter__(),
}


@pytest.mark.parametrize("what", READBACKS)
def test_readback_inside_capture_raises_and_the_thread_goes_on(backend, what):
    a = gk.arange(3, dtype="float64") - 1.0
    index = gk.asarray(np.array([0, 1]))
    before = _in_use()
    g = gk.Graph()
    with pytest.raises(gk.GraphCaptureError), g.capture():
        b = a * 2
        b.evictable = True
        READBACKS[what](b, index)
    del b
    with pytest.raises(gk.GraphCaptureError, match="released"):
        g.replay()
    assert _in_use() == before, "a failed capture keeps no memory"
    np.testing.assert_array_equal((a * 2).to_numpy(), [-2, 0, 2])  # eager work goes on
    with gk.graph() as ok:  # and so do captures
        c = a + 1
    ok.replay()
    np.testing.assert_array_equal(c.to_numpy(), [0, 1, 2])


def test_misuse_is_refused(backend):
    a = gk.ones(4)
    g = gk.Graph()
    with pytest.raises(gk.GraphCaptureError, match="captured nothing"):
        g.replay()
    with g.capture():
        with pytest.raises(gk.GraphCaptureError, match="nest"), gk.graph():
            pass
        with pytest.raises(gk.GraphCaptureError, match="being captured"):
            g.replay()
        b = a + 1
    with pytest.raises(gk.GraphCaptureError, match="captured once"), g.capture():
        pass
    with gk.graph() as other, pytest.raises(gk.GraphCaptureError, match="replaying"):
        g.replay()
    other.release()
    g.replay()
    np.testing.assert_array_equal(b.to_numpy(), 2)
    g.release()
    g.release()  # twice is fine
    with pytest.raises(gk.GraphCaptureError, match="released"):
        g.replay()
    with pytest.raises(TypeError):
        gk.graph(3)


def test_an_exception_in_the_block_drops_the_capture(backend):
    before = _in_use()
    with pytest.raises(KeyError), gk.graph():
        x = gk.ones(1000) * 3
        raise KeyError("user error")
    del x
    assert _in_use() == before


def test_memory_stays_reserved_while_the_graph_lives(backend, rng):
    x = gk.asarray(random_array(rng, (256, 257), "float32"))
    before = _in_use()
    with gk.graph() as g:
        t1 = x * 3.0
        t2 = gk.exp(t1 * 0.01)
        out = (t2 + t1).sum(axis=1)
    del t1, t2  # temporaries the graph still writes into on replay
    assert g.held_bytes > 0 and _in_use() >= before + 2 * x.nbytes
    # Everything else that allocates now gets other memory: poison it all.
    junk = [gk.full((256, 257), np.nan, "float32") for _ in range(6)]
    hx = random_array(rng, (256, 257), "float32")
    x[...] = hx
    g.replay()
    want = (gk.exp(gk.asarray(hx) * 3.0 * 0.01) + gk.asarray(hx) * 3.0).sum(axis=1)
    _same(out, want)
    assert not np.isnan(out.to_numpy()).any()
    del junk, want
    x.evictable = True
    assert not gk.memory.spill(x), "the graph's input is never spilled"
    g.release()
    assert gk.memory.stats()["graph_held_bytes"] == 0
    del out
    assert _in_use() == before
    assert gk.memory.spill(x)  # it spills again
    np.testing.assert_array_equal(x.to_numpy(), hx)


def test_garbage_collected_graph_gives_its_memory_back(backend):
    x = gk.ones((64, 64))
    before = _in_use()

    def capture():
        with gk.graph():
            y = x * 2
            (y + 1).sum()

    capture()  # the Graph is garbage once the block ends
    assert _in_use() == before


def test_replay_from_another_thread(backend, rng):
    x = gk.asarray(random_array(rng, (100,), "float32"))
    with gk.graph() as g:
        y = gk.tanh(x) * 2
    hx = random_array(rng, (100,), "float32")
    x[...] = hx
    t = threading.Thread(target=g.replay)
    t.start()
    t.join()
    gk.synchronize()
    _same(y, gk.tanh(gk.asarray(hx)) * 2)


def test_captures_on_two_threads_at_once(backend, rng):
    data = [random_array(rng, (50,), "float32") for _ in range(2)]
    results, errors = [None, None], []
    barrier = threading.Barrier(2)

    def work(i):
        try:
            x = gk.asarray(data[i])
            barrier.wait()
            with gk.graph() as g:
                y = gk.sqrt(gk.absolute(x)) + i
            barrier.wait()
            g.replay()
            gk.synchronize()
            results[i] = y.to_numpy()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(2):
        want = (gk.sqrt(gk.absolute(gk.asarray(data[i]))) + i).to_numpy()
        np.testing.assert_array_equal(results[i], want)
