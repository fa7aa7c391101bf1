"""Property tests of the SafeTensors reader and writer through the public API. Random tensors
round-trip bit for bit (and our files are byte-identical to the `safetensors` package's); random
headers, edited header fields and mutated files either load exactly what an independent reading
of the file says (Python's json, the format's rules), or raise gk.SafeTensorsError: never
another exception, and the pool holds no more memory afterwards."""

import json
import os
import struct
import tempfile

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from strategies import DTYPES, arrays, property_test

import gpukit as gk

FORMAT_OF = {
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16", "int32": "I32",
    "uint32": "U32", "int64": "I64", "uint64": "U64", "float16": "F16", "float32": "F32",
    "float64": "F64", "bfloat16": "BF16", "complex64": "C64",
}  # fmt: skip
DTYPE_OF = {v: k for k, v in FORMAT_OF.items()}
small_shapes = st.lists(st.integers(0, 4), max_size=3).map(tuple)
names = st.text(min_size=1, max_size=12).filter(lambda s: s != "__metadata__")


@st.composite
def tensor_dicts(draw):
    out = {}
    for name in draw(st.lists(names, max_size=5, unique=True)):
        out[name] = draw(arrays(draw(st.sampled_from(DTYPES)), small_shapes))
    return out


def _bits(x: np.ndarray) -> bytes:
    return np.ascontiguousarray(x).tobytes()


def _expected(raw: bytes) -> dict:
    """name -> (dtype name, shape, bytes) of a file that obeys the format, by Python alone; an
    AssertionError names the rule a file that gpukit loaded breaks."""
    assert len(raw) >= 8, "shorter than the size field"
    (size,) = struct.unpack("<Q", raw[:8])
    assert 8 + size <= len(raw), "header past the end of the file"
    header = json.loads(raw[8 : 8 + size].decode("utf-8"))
    assert isinstance(header, dict), "header not an object"
    data = raw[8 + size :]
    out, spans = {}, []
    for name, entry in header.items():
        if name == "__metadata__":
            assert isinstance(entry, dict) and all(isinstance(v, str) for v in entry.values())
            continue
        assert set(entry) == {"dtype", "shape", "data_offsets"}, entry
        dtype = np.dtype(gk.bfloat16 if entry["dtype"] == "BF16" else DTYPE_OF[entry["dtype"]])
        shape = tuple(entry["shape"])
        assert all(type(n) is int and n >= 0 for n in shape), shape
        begin, end = entry["data_offsets"]
        assert type(begin) is int and type(end) is int and 0 <= begin <= end <= len(data)
        assert end - begin == int(np.prod(shape, dtype=object)) * dtype.itemsize
        out[name] = (dtype, shape, data[begin:end])
        spans.append((begin, end))
    spans.sort()
    position = 0
    for begin, end in spans:  # the data section is exactly tiled by the tensors
        assert begin == position, "a gap or an overlap in the data"
        position = end
    assert position == len(data), "bytes after the last tensor"
    return out


def _load_outcome(path, lazy=False):
    """The loaded tensors as name -> (dtype, shape, bytes), or None when SafeTensorsError was
    raised; any other exception fails the test. The pool must be back where it was."""
    before = gk.memory.stats()["allocated_bytes"]
    try:
        loaded = gk.load_safetensors(path, progress=False, lazy=lazy)
        out = {k: (v.dtype, v.shape, _bits(v.to_numpy())) for k, v in loaded.items()}
        if lazy:
            loaded.close()
        del loaded
    except gk.SafeTensorsError:
        out = None
    assert gk.memory.stats()["allocated_bytes"] == before
    return out


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as d:
        yield d


@property_test(40)
@given(tensors=tensor_dicts(), metadata=st.none() | st.dictionaries(names, st.text(max_size=8)))
def test_round_trip(backend, folder, tensors, metadata):
    path = os.path.join(folder, "round.safetensors")
    gk.save_safetensors({k: gk.asarray(v) for k, v in tensors.items()}, path, metadata)
    loaded = gk.load_safetensors(path, progress=False)
    assert set(loaded) == set(tensors)
    for name, x in tensors.items():
        got = loaded[name].to_numpy()
        assert got.dtype == x.dtype and got.shape == x.shape, name
        assert _bits(got) == _bits(x), name
    plain = {k: v for k, v in tensors.items() if v.dtype != gk.bfloat16}
    # The reference writer (no bfloat16 in NumPy) writes the same bytes; it keeps __metadata__
    # in a hash map, in no fixed order, so only up to one entry can be compared.
    if plain and len(metadata or ()) <= 1:
        from safetensors.numpy import save

        gk.save_safetensors(plain, path, metadata)
        with open(path, "rb") as f:
            assert f.read() == save(plain, metadata=metadata)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)


@st.composite
def edited_headers(draw):
    """A valid header and data section with some fields replaced by arbitrary JSON, or by
    plausible wrong values (sizes off by one, huge, negative; unknown dtypes)."""
    tensors = draw(tensor_dicts())
    header, data = {}, b""
    for name in sorted(tensors):
        x = tensors[name]
        header[name] = {
            "dtype": FORMAT_OF[x.dtype.name],
            "shape": list(x.shape),
            "data_offsets": [len(data), len(data) + x.nbytes],
        }
        data += _bits(x)
    if draw(st.booleans()):
        header["__metadata__"] = draw(st.dictionaries(st.text(max_size=4), json_values))
    plausible = st.sampled_from([-1, 0, 1, 2**31, 2**32 + 1, 2**63, 2**64, 2**64 + 8, 1.5, "1"])
    for _ in range(draw(st.integers(0, 3))):
        if not header:
            break
        name = draw(st.sampled_from(sorted(header)))
        entry = header[name]
        if not isinstance(entry, dict) or draw(st.integers(0, 5)) == 0:
            header[name] = draw(json_values)
            continue
        field = draw(st.sampled_from(["dtype", "shape", "data_offsets", "extra"]))
        if field == "dtype":
            entry[field] = draw(st.sampled_from([*FORMAT_OF.values(), "F8_E4M3", "C128", "f32"]))
        elif (
            field in ("shape", "data_offsets")
            and isinstance(entry.get(field), list)
            and entry[field]
        ):
            i = draw(st.integers(0, len(entry[field]) - 1))
            entry[field][i] = draw(plausible | json_values)
        else:
            entry[field] = draw(json_values)
    return header, data


def _file(header, data: bytes, size_field=None) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text) if size_field is None else size_field) + text + data


@property_test(150)
@given(edited=edited_headers(), lazy=st.booleans())
def test_edited_headers(backend, folder, edited, lazy):
    header, data = edited
    raw = _file(header, data)
    path = os.path.join(folder, "edited.safetensors")
    with open(path, "wb") as f:
        f.write(raw)
    _check_outcome(path, raw, lazy)


def _check_outcome(path, raw, lazy=False):
    loaded = _load_outcome(path, lazy)
    event("raised SafeTensorsError" if loaded is None else "loaded")
    if loaded is None:
        return
    expected = _expected(raw)  # gpukit accepted it: it must obey the format
    assert set(loaded) == set(expected)
    for name, (dtype, shape, bits) in expected.items():
        assert loaded[name] == (dtype, shape, bits), name


@property_test(150)
@given(
    edited=edited_headers(),
    cuts=st.lists(st.tuples(st.integers(0, 2**16), st.binary(max_size=4)), max_size=4),
    size_delta=st.sampled_from([0, 0, 0, -1, 1, 8, -8, 2**40]),
)
def test_mutated_files(backend, folder, edited, cuts, size_delta):
    """Bytes replaced, inserted or cut anywhere (the size field included), and a lying size."""
    header, data = edited
    text_size = len(json.dumps(header).encode())
    raw = bytearray(_file(header, data, max(0, text_size + size_delta)))
    for at, insert in cuts:
        at %= len(raw) + 1
        raw[at : at + len(insert) // 2] = insert  # replace, insert or cut a little
    path = os.path.join(folder, "mutated.safetensors")
    with open(path, "wb") as f:
        f.write(bytes(raw))
    _check_outcome(path, bytes(raw))
