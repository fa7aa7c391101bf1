"""gpukit.load_safetensors / save_safetensors: round trips of every dtype, files of the reference
`safetensors` package both ways, sharded checkpoints, lazy loading, dtype conversion, every kind
of malformed file (SafeTensorsError naming the tensor and the problem), random corruptions, and
no pool memory kept by a failed load. On every backend."""

import json
import os
import struct

import numpy as np
import pytest

import gpukit as gk
from gpukit.io.progress import ByteProgress

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
]
SHAPES = [(), (0,), (7,), (3, 5), (2, 0, 3), (4, 3, 2)]


def _random(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
    if dtype.kind == "c":
        return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype)
    return np.asarray(rng.standard_normal(shape), dtype)


def _tensors(rng):
    """One tensor per (dtype, shape) pair, names in no particular order."""
    out = {}
    for i, dtype in enumerate(DTYPES):
        for j, shape in enumerate(SHAPES):
            out[f"layer.{(i * 7 + j * 3) % 11}.{dtype}.{j}"] = _random(rng, shape, dtype)
    return out


def _assert_same(loaded, expected):
    assert set(loaded) == set(expected)
    for name, want in expected.items():
        got = loaded[name]
        assert isinstance(got, gk.GPUArray), (name, type(got))
        host = got.to_numpy()
        assert host.shape == want.shape, (name, host.shape, want.shape)
        assert host.dtype == want.dtype, (name, host.dtype, want.dtype)
        np.testing.assert_array_equal(host, want, err_msg=name)


def _write(path, header, data=b"", header_bytes=None, size_field=None):
    """A file with this header (a dict, or raw bytes) and data section, written byte for byte."""
    text = header_bytes if header_bytes is not None else json.dumps(header).encode()
    size = len(text) if size_field is None else size_field
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", size) + text + data)
    return path


# --- round trips --------------------------------------------------------------------------------


def test_round_trip_every_dtype_and_shape(backend, tmp_path, rng):
    tensors = _tensors(rng)
    path = tmp_path / "all.safetensors"
    gk.save_safetensors({k: gk.asarray(v) for k, v in tensors.items()}, path)
    _assert_same(gk.load_safetensors(path), tensors)
    _assert_same(gk.load_safetensors(str(path), device=backend, progress=False), tensors)


def test_save_takes_numpy_and_non_contiguous_arrays(backend, tmp_path, rng):
    base = _random(rng, (6, 8), "float32")
    tensors = {"t": gk.asarray(base).T, "s": gk.asarray(base)[::2, 1::3], "n": base[:, ::-1]}
    path = tmp_path / "views.safetensors"
    gk.save_safetensors(tensors, path)
    _assert_same(
        gk.load_safetensors(path), {"t": base.T, "s": base[::2, 1::3], "n": base[:, ::-1].copy()}
    )


def test_header_is_padded_to_8_bytes_and_metadata_round_trips(backend, tmp_path, rng):
    for n in range(1, 10):  # names of every length mod 8
        path = tmp_path / f"m{n}.safetensors"
        gk.save_safetensors({"x" * n: np.arange(n, dtype=np.int32)}, path, metadata={"k": "v" * n})
        raw = path.read_bytes()
        (size,) = struct.unpack("<Q", raw[:8])
        assert size % 8 == 0
        assert raw[8 + size - 1 :].startswith(b" ") or raw[8 + size - 1 : 8 + size] == b"}"
        with gk.load_safetensors(path, lazy=True) as lazy:
            assert lazy.metadata == {"k": "v" * n}
            np.testing.assert_array_equal(lazy["x" * n].to_numpy(), np.arange(n, dtype=np.int32))


def test_save_rejects_bad_input(backend, tmp_path):
    with pytest.raises(TypeError, match="metadata"):
        gk.save_safetensors({"a": np.zeros(2)}, tmp_path / "a", metadata={"k": 1})
    with pytest.raises(ValueError, match="__metadata__"):
        gk.save_safetensors({"__metadata__": np.zeros(2)}, tmp_path / "a")
    with pytest.raises(TypeError, match="complex128"):
        gk.save_safetensors({"c": np.zeros(2, np.complex128)}, tmp_path / "a")
    assert not os.listdir(tmp_path)  # nothing written, no temporary left


def test_load_rejects_bad_arguments(backend, tmp_path):
    path = tmp_path / "a.safetensors"
    gk.save_safetensors({"a": np.zeros(2, np.float32)}, path)
    with pytest.raises(TypeError, match="device must be"):
        gk.load_safetensors(path, device=3)
    with pytest.raises(gk.BackendUnavailableError, match=f"{backend}:7"):
        gk.load_safetensors(path, device=f"{backend}:7")  # no machine here has eight GPUs
    with pytest.raises(TypeError, match="not understood"):
        gk.load_safetensors(path, dtype="float33")


def test_bfloat16_round_trip(backend, tmp_path, rng):
    values = rng.standard_normal((5, 3)).astype(gk.bfloat16)
    path = tmp_path / "bf16.safetensors"
    gk.save_safetensors({"w": values}, path)
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    assert json.loads(raw[8 : 8 + size])["w"]["dtype"] == "BF16"
    loaded = gk.load_safetensors(path)["w"]
    assert loaded.dtype == np.dtype(gk.bfloat16)
    np.testing.assert_array_equal(loaded.to_numpy().view(np.uint16), values.view(np.uint16))
    as_f32 = gk.load_safetensors(path, dtype="float32")["w"].to_numpy()
    np.testing.assert_array_equal(as_f32, values.astype(np.float32))


# --- the reference implementation ---------------------------------------------------------------


def test_files_of_the_safetensors_package_load(backend, tmp_path, rng):
    st = pytest.importorskip("safetensors.numpy")
    tensors = _tensors(rng)
    path = tmp_path / "theirs.safetensors"
    st.save_file(tensors, str(path), metadata={"format": "np"})
    _assert_same(gk.load_safetensors(path), tensors)
    with gk.load_safetensors(path, lazy=True) as lazy:
        assert lazy.metadata == {"format": "np"}


def test_our_files_load_in_the_safetensors_package(backend, tmp_path, rng):
    st = pytest.importorskip("safetensors.numpy")
    safetensors = pytest.importorskip("safetensors")
    tensors = _tensors(rng)
    ours = tmp_path / "ours.safetensors"
    gk.save_safetensors({k: gk.asarray(v) for k, v in tensors.items()}, ours, {"who": "gpukit"})
    loaded = st.load_file(str(ours))
    assert set(loaded) == set(tensors)
    for name, want in tensors.items():
        assert loaded[name].dtype == want.dtype
        np.testing.assert_array_equal(loaded[name], want, err_msg=name)
    with safetensors.safe_open(str(ours), "np") as f:
        assert f.metadata() == {"who": "gpukit"}
    # The same layout as the reference writer, byte for byte.
    theirs = tmp_path / "theirs.safetensors"
    st.save_file(tensors, str(theirs), metadata={"who": "gpukit"})
    assert ours.read_bytes() == theirs.read_bytes()


# --- sharded checkpoints ------------------------------------------------------------------------


def _shard(tmp_path, rng):
    tensors = {f"model.layers.{i}.weight": _random(rng, (i + 1, 3), "float32") for i in range(5)}
    tensors["model.embed.ids"] = _random(rng, (4,), "int64")
    names = sorted(tensors)
    shards = {
        "model-00001-of-00002.safetensors": names[:3],
        "model-00002-of-00002.safetensors": names[3:],
    }
    for file, members in shards.items():
        gk.save_safetensors({n: tensors[n] for n in members}, tmp_path / file)
    index = {
        "metadata": {"total_size": sum(t.nbytes for t in tensors.values())},
        "weight_map": {n: f for f, members in shards.items() for n in members},
    }
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    return tensors


def test_sharded_checkpoint_by_directory_and_by_index(backend, tmp_path, rng):
    tensors = _shard(tmp_path, rng)
    _assert_same(gk.load_safetensors(tmp_path), tensors)
    _assert_same(gk.load_safetensors(tmp_path / "model.safetensors.index.json"), tensors)
    with gk.load_safetensors(tmp_path, lazy=True) as lazy:
        _assert_same(dict(lazy), tensors)


def test_directory_with_one_model_file(backend, tmp_path, rng):
    tensors = {"w": _random(rng, (3, 4), "float16")}
    gk.save_safetensors(tensors, tmp_path / "model.safetensors")
    _assert_same(gk.load_safetensors(tmp_path), tensors)


def test_index_naming_a_tensor_its_shard_lacks(backend, tmp_path, rng):
    _shard(tmp_path, rng)
    index_path = tmp_path / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    index["weight_map"]["ghost"] = "model-00001-of-00002.safetensors"
    index_path.write_text(json.dumps(index))
    with pytest.raises(gk.SafeTensorsError, match="'ghost' is listed in the index"):
        gk.load_safetensors(tmp_path)


def test_bad_index_and_missing_paths(backend, tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text('{"weight_map": [1, 2]}')
    with pytest.raises(gk.SafeTensorsError, match="weight_map"):
        gk.load_safetensors(tmp_path)
    with pytest.raises(FileNotFoundError):
        gk.load_safetensors(tmp_path / "absent.safetensors")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"no model\.safetensors\.index\.json"):
        gk.load_safetensors(empty)


def test_one_name_in_two_files_of_a_directory(backend, tmp_path):
    gk.save_safetensors({"w": np.zeros(2, np.float32)}, tmp_path / "a.safetensors")
    gk.save_safetensors({"w": np.ones(2, np.float32)}, tmp_path / "b.safetensors")
    with pytest.raises(gk.SafeTensorsError, match="'w' is also in"):
        gk.load_safetensors(tmp_path)


# --- lazy loading and conversion ----------------------------------------------------------------


def test_lazy_loads_each_tensor_on_first_access(backend, tmp_path, rng):
    tensors = {f"t{i}": _random(rng, (256, 64), "float32") for i in range(3)}
    path = tmp_path / "lazy.safetensors"
    gk.save_safetensors(tensors, path)
    before = gk.memory.stats()["allocated_bytes"]
    lazy = gk.load_safetensors(path, lazy=True)
    assert len(lazy) == 3 and set(lazy) == set(tensors) and "t1" in lazy and "t9" not in lazy
    assert gk.memory.stats()["allocated_bytes"] == before  # nothing read yet
    first = lazy["t1"]
    assert gk.memory.stats()["allocated_bytes"] - before >= tensors["t1"].nbytes
    assert lazy["t1"] is first  # loaded once, then kept
    np.testing.assert_array_equal(first.to_numpy(), tensors["t1"])
    with pytest.raises(KeyError):
        lazy["t9"]
    lazy.close()
    np.testing.assert_array_equal(lazy["t1"].to_numpy(), tensors["t1"])  # already loaded
    with pytest.raises(ValueError, match="closed before 't0' was loaded"):
        lazy["t0"]


def test_lazy_with_conversion(backend, tmp_path, rng):
    values = _random(rng, (9, 5), "float32")
    path = tmp_path / "c.safetensors"
    gk.save_safetensors({"w": values, "i": np.arange(4, dtype=np.int32)}, path)
    with gk.load_safetensors(path, lazy=True, dtype="float16") as lazy:
        assert lazy["w"].dtype == np.float16
        np.testing.assert_array_equal(lazy["w"].to_numpy(), values.astype(np.float16))
        assert lazy["i"].dtype == np.int32


def test_dtype_converts_floating_tensors_only(backend, tmp_path, rng):
    tensors = {
        "f16": _random(rng, (5, 7), "float16"),
        "f32": _random(rng, (13,), "float32"),
        "f64": _random(rng, (2, 2), "float64"),
        "i32": _random(rng, (6,), "int32"),
        "mask": _random(rng, (3,), "bool"),
    }
    path = tmp_path / "conv.safetensors"
    gk.save_safetensors(tensors, path)
    for target in ("float16", "float32", "float64"):
        out = gk.load_safetensors(path, dtype=target, evictable=False)
        expected = {k: (v.astype(target) if v.dtype.kind == "f" else v) for k, v in tensors.items()}
        _assert_same(out, expected)
        assert not any(a.evictable for a in out.values())
    assert all(a.evictable for a in gk.load_safetensors(path).values())
    with pytest.raises(TypeError, match="floating-point"):
        gk.load_safetensors(path, dtype="int32")


def test_progress_bar_plain_fallback(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    bar = ByteProgress(4_000_000_000, "loading x", delay=0.0)
    bar(1_000_000_000)
    bar(2_000_000_000)
    bar.close()
    err = capsys.readouterr().err
    assert "loading x:  50.0% 2.00/4.00 GB" in err and err.endswith("\n")
    quiet = ByteProgress(100, "quiet", delay=60.0)
    quiet(50)  # under the delay: nothing shown
    quiet.close()
    disabled = ByteProgress(100, "off", enabled=False, delay=0.0)
    disabled(50)
    disabled.close()
    assert capsys.readouterr().err == ""


def test_progress_bar_uses_tqdm_when_installed(monkeypatch):
    import sys
    import types

    made = []

    class FakeTqdm:
        def __init__(self, total, **kwargs):
            self.total, self.n, self.closed = total, kwargs.get("initial", 0), False
            made.append(self)

        def update(self, n):
            self.n += n

        def close(self):
            self.closed = True

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeTqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    bar = ByteProgress(1000, "loading", delay=0.0)
    for done in (300, 700, 1000):
        bar(done)
    bar.close()
    assert len(made) == 1 and made[0].total == 1000
    assert made[0].n == 1000 and made[0].closed  # bytes counted once


# --- malformed files ----------------------------------------------------------------------------


def _entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


BAD_FILES = {
    # name: (header dict or raw header bytes, data, size field override or None, message regex)
    "header size past the end": (
        {"a": _entry("F32", [2], 0, 8)},
        bytes(8),
        10_000,
        r"header size 10000 runs past the end of the file",
    ),
    # byte 30 of the file = 8 (size field) + 22, the second comma
    "bad JSON": (
        b'{"a": {"dtype": "F32",, }}',
        b"",
        None,
        r"bad header JSON at byte 30: expected a string, found ','",
    ),
    "not an object": (b"[1, 2]", b"", None, r"expected '\{'"),
    "trailing garbage": (
        b'{"a": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}} x',
        b"",
        None,
        r"unexpected data after the header",
    ),
    "unknown dtype": (
        {"a": _entry("F33", [2], 0, 8)},
        bytes(8),
        None,
        r"tensor 'a': unknown dtype 'F33'",
    ),
    "dtype gpukit lacks": (
        {"fp8": _entry("F8_E4M3", [4], 0, 4)},
        bytes(4),
        None,
        r"tensor 'fp8': dtype F8_E4M3 has no gpukit dtype",
    ),
    "sub-byte dtype": (
        {"f4": _entry("F4", [4], 0, 2)},
        bytes(2),
        None,
        r"tensor 'f4': dtype F4 has no gpukit dtype",
    ),
    "shape disagrees with byte count": (
        {"a": _entry("F32", [3], 0, 8)},
        bytes(8),
        None,
        r"tensor 'a': shape \[3\] of F32 needs 12 bytes but data_offsets hold 8",
    ),
    "shape product overflows": (
        {"a": _entry("F32", [2**40, 2**40], 0, 8)},
        bytes(8),
        None,
        r"tensor 'a': .* needs more than 2\^64 bytes",
    ),
    "offsets past the end": (
        {"a": _entry("F32", [2], 0, 8), "b": _entry("F32", [2], 8, 16)},
        bytes(12),
        None,
        r"tensor 'b': data \[8, 16\) lies past the end of the data section \(12 bytes",
    ),
    "truncated file": (
        {"a": _entry("F64", [4], 0, 32)},
        bytes(20),
        None,
        r"tensor 'a': data \[0, 32\) lies past the end .*truncated",
    ),
    "offsets reversed": (
        {"a": _entry("F32", [0], 8, 4)},
        bytes(8),
        None,
        r"tensor 'a': data offsets \[8, 4\) end before they begin",
    ),
    "overlapping tensors": (
        {"a": _entry("F32", [2], 0, 8), "b": _entry("F32", [2], 4, 12)},
        bytes(12),
        None,
        r"tensor 'b': data \[4, 12\) overlaps 'a' \[0, 8\)",
    ),
    "gap between tensors": (
        {"a": _entry("F32", [1], 0, 4), "b": _entry("F32", [1], 8, 12)},
        bytes(12),
        None,
        r"tensor 'b': data \[8, 12\) leaves a gap: bytes \[4, 8\)",
    ),
    "bytes after the last tensor": (
        {"a": _entry("F32", [1], 0, 4)},
        bytes(8),
        None,
        r"data section has 8 bytes but the tensors cover only \[0, 4\)",
    ),
    "negative offset": (
        b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}}',
        b"",
        None,
        r"negative number",
    ),
    "missing field": (
        b'{"a": {"dtype": "F32", "shape": [0]}}',
        b"",
        None,
        r"tensor 'a': missing field 'data_offsets'",
    ),
    "unknown field": (
        b'{"a": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0], "x": 1}}',
        b"",
        None,
        r"tensor 'a': unknown field 'x'",
    ),
    "duplicate tensor": (
        b'{"a": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}, '
        b'"a": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}}',
        b"",
        None,
        r"duplicate key 'a'",
    ),
    "three offsets": (
        b'{"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1, 2]}}',
        b"\0",
        None,
        r"tensor 'a': data_offsets must hold 2 integers, not 3",
    ),
    "fractional shape": (
        b'{"a": {"dtype": "U8", "shape": [1.5], "data_offsets": [0, 1]}}',
        b"\0",
        None,
        r"fraction or exponent",
    ),
    "invalid UTF-8 name": (
        b'{"\xff": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}}',
        b"",
        None,
        r"invalid UTF-8",
    ),
    "non-string metadata": (
        b'{"__metadata__": {"k": 1}}',
        b"",
        None,
        r"__metadata__ values must be strings",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_malformed_file_raises_naming_the_problem(backend, tmp_path, case):
    header, data, size_field, message = BAD_FILES[case]
    raw = header if isinstance(header, bytes) else None
    path = _write(tmp_path / "bad.safetensors", header, data, raw, size_field)
    before = gk.memory.stats()["allocated_bytes"]
    for lazy in (False, True):
        with pytest.raises(gk.SafeTensorsError, match=message) as info:
            gk.load_safetensors(path, lazy=lazy)
        assert str(path) in str(info.value)
        assert isinstance(info.value, ValueError)
    assert gk.memory.stats()["allocated_bytes"] == before


def test_file_too_short_for_the_size_field(backend, tmp_path):
    path = tmp_path / "short.safetensors"
    path.write_bytes(b"\x08\0\0")
    with pytest.raises(gk.SafeTensorsError, match="3 bytes, too few"):
        gk.load_safetensors(path)


def test_a_bad_shard_frees_what_the_others_would_have_loaded(backend, tmp_path, rng):
    _shard(tmp_path, rng)
    second = tmp_path / "model-00002-of-00002.safetensors"
    second.write_bytes(second.read_bytes()[:-1])  # truncated
    before = gk.memory.stats()["allocated_bytes"]
    with pytest.raises(gk.SafeTensorsError, match=r"model-00002-of-00002\.safetensors: tensor"):
        gk.load_safetensors(tmp_path)
    assert gk.memory.stats()["allocated_bytes"] == before


def test_out_of_memory_mid_load_frees_every_array(backend, tmp_path, rng):
    tensors = {f"t{i}": _random(rng, (1024,), "float32") for i in range(8)}  # 4 KiB each
    path = tmp_path / "oom.safetensors"
    gk.save_safetensors(tensors, path)
    before = gk.memory.stats()["allocated_bytes"]
    with gk.memory.quota(5 * 4096), pytest.raises(gk.OutOfMemoryError):
        gk.load_safetensors(path)
    assert gk.memory.stats()["allocated_bytes"] == before
    with gk.memory.quota(8 * 4096):
        _assert_same(gk.load_safetensors(path), tensors)  # exactly enough


def test_a_failing_copy_frees_every_array(backend, tmp_path, rng, monkeypatch):
    """A failure inside the copy (here the progress callback interrupting it) leaves nothing."""
    from gpukit.io import safetensors as module

    tensors = {f"t{i}": _random(rng, (4096,), "float64") for i in range(4)}
    path = tmp_path / "stop.safetensors"
    gk.save_safetensors(tensors, path)

    def interrupt(done):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "ByteProgress", lambda *a, **k: _Calls(interrupt))
    before = gk.memory.stats()["allocated_bytes"]
    with pytest.raises(KeyboardInterrupt):
        gk.load_safetensors(path)
    assert gk.memory.stats()["allocated_bytes"] == before


class _Calls:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, done):
        self.fn(done)

    def close(self):
        pass


# --- random corruption --------------------------------------------------------------------------


def _reference_view(raw: bytes):
    """What a correct loader must return for `raw`, parsed by Python's json: name -> (format
    dtype, shape, bytes)."""
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size].decode("utf-8"))
    data = raw[8 + size :]
    return {
        name: (e["dtype"], tuple(e["shape"]), data[e["data_offsets"][0] : e["data_offsets"][1]])
        for name, e in header.items()
        if name != "__metadata__"
    }


FORMAT_OF = {
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16", "int32": "I32",
    "uint32": "U32", "int64": "I64", "uint64": "U64", "float16": "F16", "float32": "F32",
    "float64": "F64",
}  # fmt: skip


def _reference_offsets(raw: bytes, name: str) -> tuple[int, int]:
    """The byte range of tensor `name`'s data within the file `raw`."""
    (size,) = struct.unpack("<Q", raw[:8])
    start, end = json.loads(raw[8 : 8 + size].decode("utf-8"))[name]["data_offsets"]
    return 8 + size + start, 8 + size + end


def _assert_consistent(loaded, raw, trial):
    expected = _reference_view(raw)  # must parse, or we accepted a broken header
    assert set(loaded) == set(expected), trial
    for name, array in loaded.items():
        fmt, shape, data = expected[name]
        assert FORMAT_OF[array.dtype.name] == fmt, (trial, name)
        assert array.shape == shape, (trial, name)
        assert array.to_numpy().tobytes() == data, (trial, name)


def test_random_corruptions_raise_or_load_consistently(backend, tmp_path, rng):
    tensors = {
        "embed": _random(rng, (6, 4), "float32"),
        "ids": _random(rng, (5,), "int64"),
        "mask": _random(rng, (3,), "bool"),
        "half": _random(rng, (2, 3), "float16"),
        "empty": np.zeros((0, 2), np.int16),
    }
    valid = tmp_path / "valid.safetensors"
    gk.save_safetensors(tensors, valid, metadata={"note": "fuzz"})
    good = valid.read_bytes()
    (header_size,) = struct.unpack("<Q", good[:8])
    path = tmp_path / "fuzz.safetensors"
    before = gk.memory.stats()["allocated_bytes"]
    outcomes = {"raised": 0, "loaded": 0}
    embed_start, embed_end = _reference_offsets(good, "embed")
    for trial in range(300):
        raw = bytearray(good)
        kind = trial % 5
        if kind == 0:  # a few random bytes anywhere
            for _ in range(int(rng.integers(1, 4))):
                raw[int(rng.integers(0, len(raw)))] = int(rng.integers(0, 256))
        elif kind == 1:  # a byte of the header text replaced by JSON-ish punctuation or digits
            at = 8 + int(rng.integers(0, header_size))
            raw[at] = ord(rng.choice(list('{}[],:"0123456789 \\-')))
        elif kind == 2:  # truncated
            raw = raw[: int(rng.integers(0, len(raw)))]
        elif kind == 3:  # the header size field changed
            raw[int(rng.integers(0, 8))] = int(rng.integers(0, 256))
        else:  # a byte of float32 data changed: any bits are a float32, so this must load
            raw[int(rng.integers(embed_start, embed_end))] = int(rng.integers(0, 256))
        path.write_bytes(bytes(raw))
        try:
            loaded = gk.load_safetensors(path, progress=False)
        except gk.SafeTensorsError:
            outcomes["raised"] += 1
            continue
        outcomes["loaded"] += 1
        _assert_consistent(loaded, bytes(raw), trial)
        del loaded
    # Truncations (kind 2) always raise and float32 data edits (kind 4) always load, whatever
    # was drawn; the other kinds may go either way.
    assert outcomes["raised"] >= 60 and outcomes["loaded"] >= 60, outcomes
    assert gk.memory.stats()["allocated_bytes"] == before
