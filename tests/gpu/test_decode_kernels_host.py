"""kernels/qkv_cache.cu and kernels/sample.cu compiled by the host C++ compiler and run on the CPU
(tests/gpu/emulator/gk_emulate.h: a fiber per CUDA thread, barriers, shared memory poisoned,
threads in a seeded random order), with argument blocks packed as the CUDA planners pack them,
against the CPU backend's NumPy versions of the same kernels (gpukit/runtime/cpu/decode.py):
the same results bit for bit. This checks the kernels' indexing, barriers and selection logic
where no GPU is; the GPU machine runs them for real through the models' tests."""

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk
from gpukit.runtime.args import arg_struct
from gpukit.runtime.cpu import decode

sys.path.insert(0, str(Path(__file__).parent / "emulator"))
import emulation


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    if emulation.compiler() is None or not emulation.KERNELS.is_dir():
        pytest.skip("needs a host C++ compiler and the kernels' sources")
    out = tmp_path_factory.mktemp("host_kernels")
    built = {}

    def get(file, kernel, struct, defines):
        key = (file, defines)
        if key not in built:
            built[key] = emulation.build_one(file, kernel, struct, defines, out)
        return built[key]

    return get


def _addr(a: np.ndarray) -> int:
    return a.ctypes.data


def _run(dll, struct, fields, grid, block, seed):
    blob = bytes(arg_struct(struct).pack(**fields))
    buf = ctypes.create_string_buffer(blob, len(blob))
    dll(buf, grid, 1, 1, block, 0, seed)


C_TYPE = {"float32": "float", "bfloat16": "gk_bf16", "float64": "double"}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("rotary", [True, False])
def test_qkv_cache_kernel(build, rng, dtype, rotary):
    acc = "double" if dtype == "float64" else "float"
    dll = build("qkv_cache.cu", "gk_qkv_cache", "gk_qkv_cache_args",
                (f"GK_T={C_TYPE[dtype]}", f"GK_ACC_T={acc}"))  # fmt: skip
    dt = np.dtype(gk.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    b, s, hq, hkv, d, cap, positions = 2, 3, 6, 2, 10, 13, 11
    width = (hq + 2 * hkv) * d
    qkv = random_array(rng, (b, s, width + 7), dt)[..., :width]  # rows strided
    cos, sin = (
        random_array(rng, (positions, d // 2), dt),
        random_array(rng, (positions, d // 2), dt),
    )
    for length in (5, 9, 12):  # 12: the last position lies past the rotary tables
        caches = [random_array(rng, (b, hkv, cap, d), dt) for _ in range(2)]
        want_caches = [c.copy() for c in caches]
        q = np.full((b, hq, s, d), np.nan, dt)
        want_q = q.copy()
        n = np.array([length], np.int32)
        decode.qkv_cache(qkv, cos if rotary else None, sin if rotary else None, n, want_q,
                         *want_caches, hq, hkv, rotary)  # fmt: skip
        item = dt.itemsize
        fields = dict(
            qkv=_addr(qkv), cos=_addr(cos), sin=_addr(sin), length=_addr(n), q_out=_addr(q),
            k_cache=_addr(caches[0]), v_cache=_addr(caches[1]), batch=b, s=s, hq=hq, hkv=hkv,
            d=d, qkv_batch_stride=qkv.strides[0] // item, qkv_seq_stride=qkv.strides[1] // item,
            cache_stride=[x // item for x in caches[0].strides[:3]], capacity=cap,
            positions=positions if rotary else 0, rotary=int(rotary),
        )  # fmt: skip
        _run(dll, "gk_qkv_cache_args", fields, 7, 64, int(rng.integers(1 << 30)))
        np.testing.assert_array_equal(q.view(np.uint8), want_q.view(np.uint8))
        for got, want in zip(caches, want_caches, strict=True):
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


SETTINGS = [  # temperature, top_k, top_p
    (0.0, 0, 1.0),
    (1.0, 0, 1.0),
    (0.7, 5, 1.0),
    (1.3, 0, 0.6),
    (0.9, 40, 0.8),
    (2.0, 1, 1.0),
    (0.5, 0, 1e-9),
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("setting", SETTINGS)
def test_sample_kernel(build, rng, dtype, setting):
    dll = build("sample.cu", "gk_sample", "gk_sample_args", (f"GK_T={C_TYPE[dtype]}",))
    dt = np.dtype(gk.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    temperature, top_k, top_p = setting
    rows, vocab, cap = 5, 1013, 37
    z = (random_array(rng, (rows, vocab + 3), np.float32) * 3)[:, :vocab]
    z[1, rng.integers(vocab, size=4)] = z[1].max() + 1  # tied maxima
    z[2, : vocab // 2] = -np.inf
    z[3, rng.integers(vocab, size=9)] = np.sort(z[3])[-top_k] if top_k else 0.5  # ties at k
    logits = np.ascontiguousarray(z.astype(dt))[:, : vocab - 2]  # rows of stride vocab
    n = vocab - 2
    eos = int(rng.integers(n))
    exp = np.vectorize(lambda x: dll.library.gk_emu_expf(float(x)), otypes=[np.float32])
    for position, with_eos in ((7, False), (31, True), (40, True)):  # 40: past the capacity
        seed = int(rng.integers(1 << 63))
        params = np.frombuffer(
            bytes(arg_struct("gk_sample_params").pack(
                temperature=temperature, top_p=top_p, top_k=top_k, seed=seed,
                eos=eos if with_eos else -1,
            )), np.uint8,
        ).copy()  # fmt: skip
        finished = np.array([0, 1, 0, 0, 1], np.int32)
        next_ids = np.full((rows, 2), -7, np.int64)  # the kernel writes column 0
        tokens = np.full((rows, cap), -7, np.int64)
        length = np.array([position], np.int32)
        fields = dict(
            logits=_addr(logits), params=_addr(params), length=_addr(length),
            finished=_addr(finished), next_ids=_addr(next_ids), tokens=_addr(tokens),
            rows=rows, vocab=n, row_stride=logits.strides[0] // dt.itemsize, ids_stride=2,
            tokens_stride=cap, capacity=cap,
        )  # fmt: skip
        was = finished.copy()
        _run(dll, "gk_sample_args", fields, rows, 256, int(rng.integers(1 << 30)))
        p = decode.read_params(params)
        for row in range(rows):
            done = with_eos and was[row] != 0
            want = decode.sample_row(logits[row], p, row, position, done, exp=exp)
            assert next_ids[row, 0] == want, (row, next_ids[:, 0])
            assert next_ids[row, 1] == -7
            others = np.arange(cap) != position
            if position < cap:
                assert tokens[row, position] == want
            assert (tokens[row, others] == -7).all()
            flag = int(done or want == eos) if with_eos else was[row]  # untouched without eos
            assert finished[row] == flag
        live = ~(with_eos & (was != 0))
        keys = decode.order_keys(logits.astype(np.float32))
        if temperature == 0:  # the argmax, the first of ties
            assert (next_ids[live, 0] == keys.argmax(axis=1)[live]).all()
        elif top_k == 1 or top_p < 1e-6:  # one of the largest (ties are kept)
            best = keys[np.arange(rows), next_ids[:, 0]] == keys.max(axis=1)
            assert best[live].all()


def test_sample_reference_draws_by_the_weights(rng):
    """The CPU reference's draws follow the tempered softmax: over many positions (counters),
    each token's frequency is its probability within a few standard deviations."""
    z = np.array([2.0, 1.0, 0.0, -1.0, 3.0], np.float32)
    p = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "seed": int(rng.integers(1 << 62)),
         "eos": -1}  # fmt: skip
    draws = np.array([decode.sample_row(z, p, 0, pos, False) for pos in range(4000)])
    prob = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    freq = np.bincount(draws, minlength=5) / draws.size
    assert np.all(np.abs(freq - prob) < 6 * np.sqrt(prob * (1 - prob) / draws.size) + 1e-9)
    p |= {"top_k": 2}
    assert set(decode.sample_row(z, p, 0, pos, False) for pos in range(200)) <= {0, 4}
    p |= {"top_k": 0, "top_p": 0.5}  # the top token alone has 0.64 of the mass
    assert {decode.sample_row(z, p, 0, pos, False) for pos in range(50)} == {4}
