"""The CUDA backend's gather planning (merged dimensions, strides, widened words), run through
a NumPy model of kernels/gather.cu over the CPU backend's memory (the kernel itself runs in
tests/api/test_indexing.py on a GPU machine)."""

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk
from gpukit.runtime.backend import Layout
from gpukit.runtime.cpu import CpuBackend
from gpukit.runtime.cuda import gather as cuda_gather


def check(x, a, key, device_key=None):
    got = a[key if device_key is None else device_key]
    np.testing.assert_array_equal(got.to_numpy(), x[key])


def on_device(key):
    key = key if isinstance(key, tuple) else (key,)
    return tuple(gk.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


def _memory(ptr: int, offsets: np.ndarray, typestr: str, width: int):
    """A writable NumPy view of the memory from address `ptr` that `offsets` (in units of `width`
    bytes) reach, and the offsets into it."""
    lo = int(offsets.min()) if offsets.size else 0
    hi = int(offsets.max()) + 1 if offsets.size else 0
    interface = {
        "data": (ptr + lo * width, False),
        "shape": (hi - lo,),
        "typestr": typestr,
        "version": 3,
    }
    memory = type("Memory", (), {"__array_interface__": interface})()
    return np.asarray(memory), offsets - lo


def _emulated_plan(self, src, out, indices, positions, layout, check, scatter):
    """CpuBackend.plan_gather replaced by kernels/gather.cu in NumPy, with the arguments the CUDA
    planner computes."""
    p = cuda_gather.plan(src, src.align % 16, indices, positions, layout)

    def plan(stream, quota, *args):
        it = iter(args)
        operands = [(next(it), next(it))]  # src
        if scatter:
            operands.append((next(it), next(it)))
        idx = [(next(it), next(it)) for _ in indices]
        made = []
        if not scatter:
            made = [self.pool.allocate(out.size * out.dtype.itemsize, stream, quota)]
            made += [self.pool.allocate(4, stream, quota)] if check else []
            operands.append((made[0], 0))
        everything = operands + idx + [(m, 0) for m in made[1:]]
        ptrs = self.pool.device_ptrs(tuple(b for b, _ in everything), 0)
        addr = [q + o for q, (_, o) in zip(ptrs, everything, strict=True)]
        src_ptr, out_ptr = addr[0], addr[1]
        idx_ptrs = addr[2 : 2 + len(indices)]
        n = int(np.prod(p.shape))
        coords = np.unravel_index(np.arange(n), p.shape) if p.shape else ()
        off = sum((c * st for c, st in zip(coords, p.src_walk, strict=True)), np.zeros(n, np.int64))
        bad = 0
        for k, ptr in enumerate(idx_ptrs):
            walk = zip(coords, p.idx_walks[k], strict=True)
            mem, at = _memory(ptr, sum((c * st for c, st in walk), np.zeros(n, np.int64)), "<i8", 8)
            v = mem[at]
            size = p.axis_size[k]
            v[v < 0] += size
            if ((v < 0) | (v >= size)).any():
                bad = k + 1
                v = np.clip(v, 0, size - 1)
            off += v * p.axis_stride[k]
        word = f"|V{p.width}"
        dense, _ = _memory(out_ptr, np.arange(n), word, p.width)
        mem, at = _memory(src_ptr, off, word, p.width)
        if scatter:
            mem[at] = dense
        else:
            dense[...] = mem[at]
        if check:
            flag, _ = _memory(addr[-1], np.zeros(1, np.int64), "<i4", 4)
            flag[0] = bad
        return None if not made else made[0] if len(made) == 1 else tuple(made)

    return plan


def test_cuda_gather_plan_emulated(rng, monkeypatch):
    monkeypatch.setattr(CpuBackend, "plan_gather", _emulated_plan)
    with gk.use_backend("cpu"):
        for dtype in ("uint8", "float16", "float32", "float64", "bool"):
            x = random_array(rng, (6, 10, 48), dtype)
            a = gk.asarray(x)
            i = rng.integers(-6, 6, size=(3, 1))
            j = rng.integers(-10, 10, size=(4,))
            for xs, as_ in ((x, a), (x[:, ::-1, 1:], a[:, ::-1, 1:]), (x[..., 8:40], a[..., 8:40])):
                for key in (i, (i, j), (slice(None), j), (i, slice(None), 3), (..., [0, -1])):
                    check(xs, as_, key)
                    check(xs, as_, key, on_device(key))
                check(xs, as_, xs > xs.reshape(-1)[0])
            check(x.transpose(2, 0, 1), a.transpose(2, 0, 1), (slice(2, 40, 3), i))
        with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
            a[gk.asarray([0, 6])]
        x = random_array(rng, (6, 5, 8), "float32")
        ref, a = x.copy(), gk.asarray(x)
        rows = rng.permutation(6)[:4]
        ref[rows, 1:] = x[0, 0]
        a[gk.asarray(rows), 1:] = x[0, 0]  # a scatter of widened rows
        np.testing.assert_array_equal(a.to_numpy(), ref)


def test_rows_widen_only_when_aligned():
    f32 = np.dtype("float32")
    src = Layout(f32, (6, 8), (32, 4), 16)
    index = Layout(np.dtype("int64"), (3,), (8,))
    assert cuda_gather.plan(src, 0, [index], [0], [("b", 0), ("v", 1)]).width == 16
    assert cuda_gather.plan(src, 4, [index], [0], [("b", 0), ("v", 1)]).width == 4
