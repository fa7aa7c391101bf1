"""Decoding: the captured decode step gives the same tokens as the same step run eagerly (greedy
and sampled, every family, several batch sizes), is captured once and reused, reads nothing back
per token; the decode ops (rotary + KV-cache write, the device sampler, silu_mul) against NumPy
on every backend."""

import numpy as np
import pytest
from conftest import assert_matches, random_array
from model_reference import GPT2, LLAMA, MISTRAL, QWEN2, write_model

import gpukit as gk
from gpukit.models import fused
from gpukit.models.sampling import params_bytes

FAMILIES = {"llama": LLAMA, "qwen2": QWEN2, "mistral": MISTRAL, "gpt2": GPT2}


def _model(tmp_path, rng, family, dtype="float32"):
    cfg = FAMILIES[family]
    write_model(str(tmp_path), cfg, rng, dtype)
    return cfg, gk.models.from_pretrained(str(tmp_path), progress=False)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("batch", [1, 3])
def test_graph_decode_equals_eager(backend, rng, tmp_path, family, batch):
    cfg, model = _model(tmp_path, rng, family, "bfloat16" if family == "llama" else "float32")
    prompt = rng.integers(0, cfg["vocab_size"], size=(batch, 6))
    eager = model.generate(prompt, 9, graph=False)
    graphed = model.generate(prompt, 9)
    np.testing.assert_array_equal(graphed, eager)
    state = model.decode_state(batch, 15)
    assert state.graph is not None and state.graph.nodes > 0, "the step was captured"
    sampled = dict(temperature=0.9, top_k=17, top_p=0.85, seed=int(rng.integers(1 << 40)))
    np.testing.assert_array_equal(
        model.generate(prompt, 9, **sampled), model.generate(prompt, 9, graph=False, **sampled)
    )


def test_one_capture_serves_later_calls(backend, rng, tmp_path):
    cfg, model = _model(tmp_path, rng, "llama")
    first = rng.integers(0, cfg["vocab_size"], size=(2, 7))
    model.generate(first, 5)
    state = model.decode_state(2, 12)
    graph = state.graph
    again = rng.integers(0, cfg["vocab_size"], size=(2, 11))  # other prompt, same capacity class
    out = model.generate(again, 20, temperature=1.2, seed=9)
    assert state.graph is graph, "no new capture"
    np.testing.assert_array_equal(out, model.generate(again, 20, temperature=1.2, seed=9,
                                                      graph=False))  # fmt: skip
    # The cache holds the prompt and every token fed back, on the host and on the device.
    assert state.cache.length == 11 + 19
    assert state.cache.positions.to_numpy()[0] == 11 + 19
    greedy = model.generate(again, 20)
    full = model(greedy[:, :-1]).to_numpy()  # the prefill path over the whole sequence
    assert full.shape == (2, 30, cfg["vocab_size"])
    np.testing.assert_array_equal(greedy[:, 11:], full[:, 10:].argmax(-1))


def test_end_token_stops_both_paths_alike(backend, rng, tmp_path):
    cfg, model = _model(tmp_path, rng, "qwen2")
    prompt = rng.integers(0, cfg["vocab_size"], size=(3, 4))
    free = model.generate(prompt, 30, temperature=2.0, seed=3)
    eos = int(free[1, 9])  # a token row 1 draws; the rows end at different steps (or never)
    got = model.generate(prompt, 30, temperature=2.0, seed=3, eos_token_id=eos)
    want = model.generate(prompt, 30, temperature=2.0, seed=3, eos_token_id=eos, graph=False)
    np.testing.assert_array_equal(got, want)
    new = got[:, 4:]
    for row in new:
        hits = np.flatnonzero(row == eos)
        if hits.size:
            assert (row[hits[0] :] == eos).all(), "padded with the end token after it"
    ended = [np.flatnonzero(r == eos)[0] if (r == eos).any() else None for r in new]
    if all(e is not None for e in ended):
        assert new.shape[1] == max(ended) + 1, "stops at the step where the last row ended"
    else:
        assert new.shape[1] == 30


def test_generate_is_reproducible_and_in_range(backend, rng, tmp_path):
    cfg, model = _model(tmp_path, rng, "gpt2")
    prompt = rng.integers(0, cfg["vocab_size"], size=(2, 3))
    a = model.generate(prompt, 12, temperature=1.0, top_p=0.9, seed=5)
    b = model.generate(prompt, 12, temperature=1.0, top_p=0.9, seed=5)
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() < cfg["vocab_size"]
    with pytest.raises(ValueError, match="positions"):
        model.generate(prompt, GPT2["n_positions"])
    with pytest.raises(IndexError, match="out of range"):
        model.generate(prompt + cfg["vocab_size"], 2)


def test_release_graphs_frees_the_decode_memory(backend, rng, tmp_path):
    cfg, model = _model(tmp_path, rng, "llama")
    prompt = rng.integers(0, cfg["vocab_size"], size=(1, 5))
    model.generate(prompt, 4)
    before = gk.memory.stats()
    model.release_graphs()
    after = gk.memory.stats()
    assert after["allocated_bytes"] < before["allocated_bytes"]
    assert after["graph_held_bytes"] == 0
    np.testing.assert_array_equal(model.generate(prompt, 4), model.generate(prompt, 4, graph=False))


# --- the decode ops -------------------------------------------------------------------------------


def _rotate(x, c, s):
    half = x.shape[-1] // 2
    lo, hi = x[..., :half], x[..., half:]
    return np.concatenate([lo * c - hi * s, hi * c + lo * s], axis=-1)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("rotary", [True, False])
def test_qkv_into_cache_against_numpy(backend, rng, dtype, rotary):
    b, s, hq, hkv, d, cap = 2, 3, 6, 2, 12, 9
    x = random_array(rng, (b, s, (hq + 2 * hkv) * d + 5), dtype)
    cos = random_array(rng, (20, d // 2), dtype)
    sin = random_array(rng, (20, d // 2), dtype)
    k0 = random_array(rng, (b, hkv, cap, d), dtype)
    v0 = random_array(rng, (b, hkv, cap, d), dtype)
    kc, vc = gk.asarray(k0), gk.asarray(v0)
    length = gk.asarray(np.array([7], np.int32))
    qkv = gk.asarray(x)[..., : (hq + 2 * hkv) * d]  # strided rows
    tables = (gk.asarray(cos), gk.asarray(sin)) if rotary else (None, None)
    q = fused.qkv_into_cache(qkv, *tables, length, kc, vc, hq, hkv)
    heads = x[..., : (hq + 2 * hkv) * d].astype(np.float64).reshape(b, s, hq + 2 * hkv, d)
    pos = np.arange(4, 7)
    if rotary:
        c, sn = (
            cos[pos].astype(np.float64)[None, :, None],
            sin[pos].astype(np.float64)[None, :, None],
        )
        heads[:, :, : hq + hkv] = _rotate(heads[:, :, : hq + hkv], c, sn)
    assert_matches(q, heads[:, :, :hq].transpose(0, 2, 1, 3), dtype, scale=2)
    k_want, v_want = k0.astype(np.float64), v0.astype(np.float64)
    k_want[:, :, pos] = heads[:, :, hq : hq + hkv].transpose(0, 2, 1, 3)
    v_want[:, :, pos] = heads[:, :, hq + hkv :].transpose(0, 2, 1, 3)
    assert_matches(kc, k_want, dtype, scale=2)
    assert_matches(vc, v_want, dtype, scale=2)


def test_sample_into_against_numpy(backend, rng):
    rows, vocab, cap = 4, 301, 16
    z = random_array(rng, (rows, vocab), "float32") * 4
    z[2, [5, 50, 200]] = z[2].max() + 1  # tied maxima: greedy takes the first
    logits = gk.asarray(z)
    next_ids = gk.full((rows, 1), -1, "int64")
    tokens = gk.full((rows, cap), -1, "int64")
    finished = gk.zeros((rows,), "int32")
    length = gk.asarray(np.array([6], np.int32))
    greedy = gk.asarray(np.frombuffer(params_bytes(0.0, 0, 1.0, 1, None), np.uint8))
    fused.sample_into(logits, greedy, length, finished, next_ids, tokens)
    first = z.argmax(axis=1)
    np.testing.assert_array_equal(next_ids.to_numpy()[:, 0], first)
    got = tokens.to_numpy()
    np.testing.assert_array_equal(got[:, 6], first)
    assert (np.delete(got, 6, axis=1) == -1).all()
    # top_k: every draw among the k largest; a seed fixes the draws.
    k = 7
    topk = gk.asarray(np.frombuffer(params_bytes(1.5, k, 1.0, 77, None), np.uint8))
    seen = []
    for position in range(10):
        length[...] = position
        fused.sample_into(logits, topk, length, finished, next_ids, tokens)
        seen.append(next_ids.to_numpy()[:, 0])
    seen = np.array(seen)
    kth = np.sort(z, axis=1)[:, -k][None, :]
    assert (kth <= np.take_along_axis(z, seen.T, axis=1).T).all()
    again = []
    for position in range(10):
        length[...] = position
        fused.sample_into(logits, topk, length, finished, next_ids, tokens)
        again.append(next_ids.to_numpy()[:, 0])
    np.testing.assert_array_equal(np.array(again), seen)
    # An end token marks rows; marked rows repeat it.
    eos = int(first[1])
    ends = gk.asarray(np.frombuffer(params_bytes(0.0, 0, 1.0, 1, eos), np.uint8))
    fused.sample_into(logits, ends, length, finished, next_ids, tokens)
    np.testing.assert_array_equal(finished.to_numpy(), first == eos)
    logits[...] = 0.0
    fused.sample_into(logits, ends, length, finished, next_ids, tokens)
    np.testing.assert_array_equal(next_ids.to_numpy()[:, 0], np.where(first == eos, eos, 0))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
def test_silu_mul_against_numpy(backend, rng, dtype):
    gate_up = random_array(rng, (3, 5, 2 * 37), dtype)
    out = gk.nn.silu_mul(gk.asarray(gate_up)[..., :37], gk.asarray(gate_up)[..., 37:])
    g, u = gate_up[..., :37].astype(np.float64), gate_up[..., 37:].astype(np.float64)
    assert_matches(out, g / (1 + np.exp(-g)) * u, dtype, scale=2)
    with pytest.raises(TypeError, match="float"):
        gk.nn.silu_mul(gk.arange(3), gk.arange(3))
