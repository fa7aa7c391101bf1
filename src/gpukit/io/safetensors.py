"""Loading and saving SafeTensors files (8-byte little-endian header size, JSON header, data).

The header is parsed and checked in C++ (`_native.SafeTensorsFile`), which also copies the data
on several threads: on the GPU through pinned staging buffers overlapping file reads with
host-to-device copies, on the CPU straight into the pool's memory. Python only allocates the
destination arrays from the pool and hands C++ the list of copies.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping

import numpy as np

from .. import _native
from ..array import GPUArray
from ..base import dtypes as _dtypes
from ..errors import SafeTensorsError
from ..runtime import current_quota, open_backend, runtime
from .progress import ByteProgress

INDEX_NAME = "model.safetensors.index.json"

# Format dtype -> NumPy dtype name.
_NUMPY_NAMES = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "U16": "uint16",
    "I16": "int16",
    "U32": "uint32",
    "I32": "int32",
    "U64": "uint64",
    "I64": "int64",
    "F16": "float16",
    "F32": "float32",
    "F64": "float64",
    "BF16": "bfloat16",
    "C64": "complex64",
}
_FORMAT_NAMES = {v: k for k, v in _NUMPY_NAMES.items()}
# The reference writer orders the data by its Dtype enum, last first, then by name; we do the same
# so that both write identical files (every tensor is then aligned to its item size).
_WRITE_RANK = {
    name: rank
    for rank, name in enumerate(
        (
            *("BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64"),
            *("F64", "I64", "U64"),
        )
    )
}


def _gpukit_dtype(fmt: str) -> np.dtype | None:
    """The gpukit dtype of a format dtype name, or None when gpukit has none."""
    name = _NUMPY_NAMES.get(fmt)
    return next((d for d in _dtypes.SUPPORTED if d.name == name), None)


def _runtime_of(device):
    if device is None:
        return runtime()
    if isinstance(device, str):
        return open_backend(device)
    raise TypeError(f"device must be None or a device name such as 'cuda:0', not {device!r}")


# --- finding the files ----------------------------------------------------------------------------


def _sources(path) -> list[tuple[str, list[str] | None]]:
    """[(file, names to load from it or None for all)] for a file, an index or a directory."""
    path = os.fspath(path)
    if os.path.isdir(path):
        index = os.path.join(path, INDEX_NAME)
        if os.path.isfile(index):
            return _index_sources(index)
        files = sorted(f for f in os.listdir(path) if f.endswith(".safetensors"))
        if not files:
            raise FileNotFoundError(f"no {INDEX_NAME} and no .safetensors file in {path}")
        return [(os.path.join(path, f), None) for f in files]
    if path.endswith(".json"):
        return _index_sources(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    return [(path, None)]


def _index_sources(index: str) -> list[tuple[str, list[str]]]:
    try:
        with open(index, encoding="utf-8") as f:
            weight_map = json.load(f)["weight_map"]
    except (ValueError, KeyError, TypeError) as e:
        raise SafeTensorsError(f"{index}: not a SafeTensors index ({e!r})") from None
    if not isinstance(weight_map, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()
    ):
        raise SafeTensorsError(f"{index}: weight_map must map tensor names to file names")
    shards: dict[str, list[str]] = {}
    for name, shard in weight_map.items():
        if os.path.isabs(shard) or os.path.normpath(shard).split(os.sep)[0] == os.pardir:
            raise SafeTensorsError(
                f"{index}: tensor {name!r} is mapped to {shard!r}, outside the index's folder"
            )
        shards.setdefault(shard, []).append(name)
    base = os.path.dirname(index)
    return [(os.path.join(base, shard), names) for shard, names in sorted(shards.items())]


# --- reading ------------------------------------------------------------------------------------


class _Entry:
    __slots__ = ("begin", "dtype", "file", "name", "nbytes", "shape")

    def __init__(self, file, name, dtype, shape, begin, end):
        self.file, self.name, self.dtype, self.shape = file, name, dtype, shape
        self.begin, self.nbytes = begin, end - begin


def _entries(file, names: list[str] | None) -> list[_Entry]:
    """The tensors of an opened file (those in `names` when given), with gpukit dtypes."""
    out = []
    wanted = None if names is None else set(names)
    for name, fmt, shape, begin, end in file.tensors:
        if wanted is not None and name not in wanted:
            continue
        dtype = _gpukit_dtype(fmt)
        if dtype is None:
            raise SafeTensorsError(
                f"{file.path}: tensor {name!r}: dtype {fmt} has no gpukit dtype (supported: "
                + ", ".join(d.name for d in _dtypes.SUPPORTED)
                + ")"
            )
        out.append(_Entry(file, name, dtype, shape, begin, end))
    if names is not None and len(out) != len(names):
        found = {e.name for e in out}
        missing = next(n for n in names if n not in found)
        raise SafeTensorsError(
            f"{file.path}: tensor {missing!r} is listed in the index but not in the file"
        )
    return out


def _read(entries: list[_Entry], rt, evictable: bool, progress) -> dict[str, GPUArray]:
    """Allocates an array per entry from the pool and copies the data in; on any failure every
    array allocated here is freed before the error propagates."""
    arrays: dict[str, GPUArray] = {}
    try:
        stream, quota, allocate = rt.stream, current_quota(), rt.pool.allocate
        for e in entries:
            # Not evictable while loading: a spill now would only move uninitialised bytes.
            arrays[e.name] = GPUArray(allocate(e.nbytes, stream, quota), e.shape, e.dtype, rt=rt)
        filled = [(e, arrays[e.name]) for e in entries if e.nbytes]
        ptrs = rt.pool.device_ptrs(tuple(a._buf for _, a in filled), stream) if filled else ()
        by_file: dict[int, tuple] = {}
        for (e, _), ptr in zip(filled, ptrs, strict=True):
            by_file.setdefault(id(e.file), (e.file, []))[1].append((e.begin, e.nbytes, ptr))
        if by_file:
            rt.synchronize(stream)  # recycled blocks: earlier work on them must be over
        done = 0
        for file, copies in by_file.values():
            report = None if progress is None else (lambda n, base=done: progress(base + n))
            rt.copy_from_file(file, copies, report)
            done += sum(c[1] for c in copies)
        if evictable:
            for a in arrays.values():
                a.evictable = True
    except BaseException:
        arrays.clear()  # the traceback keeps this frame: drop the arrays before it travels
        raise
    return arrays


def _float_dtype(dtype) -> np.dtype:
    dt = np.dtype(dtype)
    if not _dtypes.is_floating(dt):
        raise TypeError(f"dtype= must be a floating-point dtype, not {dt.name}")
    return _dtypes.normalize(dt)


def _convert(arrays: dict[str, GPUArray], dtype) -> dict[str, GPUArray]:
    if dtype is None:
        return arrays
    dtype = _float_dtype(dtype)
    for name, a in arrays.items():
        if _dtypes.is_floating(a.dtype) and a.dtype != dtype:
            evictable = a.evictable
            arrays[name] = converted = a.astype(dtype)
            converted.evictable = evictable
    return arrays


def _open_all(path) -> list[tuple[object, list[_Entry]]]:
    opened = []
    seen: dict[str, str] = {}
    try:
        for file_path, names in _sources(path):
            file = _native.SafeTensorsFile(file_path)
            opened.append((file, None))
            entries = _entries(file, names)
            opened[-1] = (file, entries)
            for e in entries:
                if e.name in seen:
                    raise SafeTensorsError(
                        f"{file_path}: tensor {e.name!r} is also in {seen[e.name]}"
                    )
                seen[e.name] = file_path
    except BaseException:
        for file, _ in opened:
            file.close()
        raise
    return opened


def load_safetensors(
    path, device=None, dtype=None, lazy=False, evictable=True, progress=True
) -> dict[str, GPUArray] | LazySafeTensors:
    """Loads a SafeTensors file, a sharded checkpoint (a directory with
    model.safetensors.index.json, or the index itself) or every .safetensors file of a directory
    into a dict of name -> GPUArray.

    device: a backend name ("cuda", "cpu"), default the current one. dtype: floating-point
    tensors are converted to it on the device (integer and bool tensors are left as they are).
    lazy: return a read-only mapping that loads each tensor on first access (the files stay
    mapped until it is closed or collected). evictable: the arrays may be spilled to host memory
    under memory pressure. progress: show a progress bar when the load takes over a second.
    Malformed files raise SafeTensorsError naming the file, the tensor and the problem.
    """
    rt = _runtime_of(device)
    if dtype is not None:
        _float_dtype(dtype)  # a bad dtype fails before anything is read
    opened = _open_all(path)
    if lazy:
        return LazySafeTensors(opened, rt, dtype, evictable)
    try:
        entries = [e for _, es in opened for e in es]
        total = sum(e.nbytes for e in entries)
        bar = ByteProgress(total, f"loading {os.path.basename(os.fspath(path))}", progress)
        try:
            arrays = _read(entries, rt, evictable, bar if progress else None)
        finally:
            bar.close()
        return _convert(arrays, dtype)
    finally:
        for file, _ in opened:
            file.close()


class LazySafeTensors(Mapping):
    """A read-only mapping name -> GPUArray whose values are read from the file on first access
    (and kept). `close()` (or leaving a `with` block) unmaps the files; `metadata` holds the
    files' __metadata__ maps merged."""

    def __init__(self, opened, rt, dtype, evictable):
        self._files = [f for f, _ in opened]
        self._entries = {e.name: e for _, es in opened for e in es}
        self._loaded: dict[str, GPUArray] = {}
        self._rt, self._dtype, self._evictable = rt, dtype, evictable

    @property
    def metadata(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for f in self._files:
            out.update(f.metadata)
        return out

    def __getitem__(self, name: str) -> GPUArray:
        a = self._loaded.get(name)
        if a is None:
            entry = self._entries[name]
            if not entry.file.is_open:
                raise ValueError(f"{entry.file.path} was closed before {name!r} was loaded")
            loaded = _read([entry], self._rt, self._evictable, None)
            a = self._loaded[name] = _convert(loaded, self._dtype)[name]
        return a

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name) -> bool:
        return name in self._entries

    def close(self) -> None:
        for f in self._files:
            f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def safetensors_metadata(path) -> dict[str, str]:
    """The __metadata__ map of a file (the first shard's for a sharded checkpoint)."""
    file = _native.SafeTensorsFile(_sources(path)[0][0])
    try:
        return dict(file.metadata)
    finally:
        file.close()


# --- writing ------------------------------------------------------------------------------------


def save_safetensors(tensors: Mapping, path, metadata: Mapping | None = None) -> None:
    """Writes `tensors` (name -> GPUArray or NumPy array) to a SafeTensors file at `path`, in the
    reference implementation's layout (the same bytes): data ordered by dtype (the widest first)
    then name, so every tensor is aligned to its item size; the header padded with spaces to 8
    bytes.
    `metadata` is a str -> str map stored as __metadata__. The file is replaced atomically."""
    if not isinstance(tensors, Mapping):
        raise TypeError(f"tensors must map names to arrays, not {type(tensors).__name__}")
    if metadata is not None and not (
        isinstance(metadata, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise TypeError("metadata must map str to str")
    items = []
    for name, value in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"invalid tensor name {name!r}")
        if not isinstance(value, (GPUArray, np.ndarray)):
            raise TypeError(
                f"tensor {name!r} must be a GPUArray or a NumPy array, not {type(value).__name__}"
            )
        dtype = np.dtype(value.dtype)
        if dtype.name not in _FORMAT_NAMES:
            raise TypeError(f"tensor {name!r}: dtype {dtype.name} has no SafeTensors equivalent")
        items.append((name, value, dtype))
    items.sort(key=lambda item: (-_WRITE_RANK[_FORMAT_NAMES[item[2].name]], item[0]))
    header: dict = {} if metadata is None else {"__metadata__": dict(metadata)}
    offset = 0
    for name, value, dtype in items:
        nbytes = int(np.prod(value.shape, dtype=np.int64)) * dtype.itemsize
        header[name] = {
            "dtype": _FORMAT_NAMES[dtype.name],
            "shape": [int(n) for n in value.shape],
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    path = os.fspath(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(len(text).to_bytes(8, "little"))
            f.write(text)
            for _, value, _ in items:
                host = value.to_numpy() if isinstance(value, GPUArray) else np.asarray(value)
                f.write(np.ascontiguousarray(host).reshape(-1).view(np.uint8).data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
