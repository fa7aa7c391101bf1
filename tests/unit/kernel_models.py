"""NumPy models of kernels/reduce.cu, scan.cu, nn_rows.cu, transpose.cu and elementwise.cu's
identity copies and fills, run on the CPU backend's memory from the launches a CUDA planner
built: every slot is written into a copy of its argument blob (checking the alignment the plan
asked for, as the native plan does), the blob is decoded with the field list _native exports,
and each launch is modelled with the kernel's own index arithmetic: which thread or block reads
which address, what its grid covers, where partial states and flags go. Sums are taken in
float64, so what this checks is the plan (shapes, strides, pointers, scratch, grids), not the
kernels' rounding. Written memory must lie in a buffer of the call (an output or scratch)."""

from __future__ import annotations

import ctypes
import math
import struct

import numpy as np

import gpukit as gk
from gpukit.runtime.args import CONSTANTS, arg_struct
from gpukit.runtime.cuda import plans

C = CONSTANTS
DTYPES = {
    "bool": np.dtype(np.bool_),
    "gk_i8": np.dtype(np.int8),
    "gk_i16": np.dtype(np.int16),
    "gk_i32": np.dtype(np.int32),
    "gk_i64": np.dtype(np.int64),
    "gk_u8": np.dtype(np.uint8),
    "gk_u16": np.dtype(np.uint16),
    "gk_u32": np.dtype(np.uint32),
    "gk_u64": np.dtype(np.uint64),
    "gk_f16": np.dtype(np.float16),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
    "gk_bf16": np.dtype(gk.bfloat16),
}
_STRUCT_OF = {
    "reduce.cu": "gk_reduce_args",
    "scan.cu": "gk_scan_args",
    "nn_rows.cu": "gk_rows_args",
    "transpose.cu": "gk_transpose_args",
}


class FakeCuda:
    """What the CUDA planners ask of a backend, over the CPU backend's pool: functions are
    numbered (file, defines, name) triples."""

    def __init__(self, cpu, sm_count: int):
        self.cpu, self.pool, self.sm_count = cpu, cpu.pool, sm_count
        self.launch_table = None
        self.functions: list[tuple] = []
        self.shared_allowed: dict[int, int] = {}

    def function(self, file, defines, name):
        self.functions.append((file, tuple(defines), name))
        return len(self.functions) - 1

    def blocks_for(self, threads: int, block: int) -> int:
        return min(-(-max(threads, 1) // block), self.sm_count * 32)

    def allow_shared(self, fn: int, nbytes: int) -> None:
        assert nbytes <= 227 * 1024, "more shared memory than an sm_90 block may have"
        self.shared_allowed[fn] = nbytes


def emulated(planner, sm_count: int):
    """A CpuBackend method that plans with `planner` (a CUDA planner) and runs the models."""

    def plan(cpu, *args, **kwargs):
        fake = FakeCuda(cpu, sm_count)
        builder = planner(fake, *args, **kwargs)
        assert isinstance(builder, plans.PlanBuilder), "PlanBuilder.build must be patched"
        return EmulatedPlan(fake, builder)

    return plan


class EmulatedPlan:
    def __init__(self, fake: FakeCuda, builder):
        self.fake, self.b = fake, builder
        self.launches_run: list[str] = []

    def __call__(self, stream, quota, *args):
        pool, b = self.fake.pool, self.b
        items, values, it = [], [], iter(args)
        for kind in b.arguments:
            if kind == "a":
                items.append((next(it), next(it)))
                values.append(None)
            else:
                values.append(next(it))
        made = [pool.allocate(n, stream, quota) for n in (*b.outputs, *b.scratch)]
        buffers = [buf for buf, _ in items] + made
        ptrs = pool.device_ptrs(tuple(buffers), 0) if buffers else []
        offsets = [o for _, o in items] + [0] * len(made)
        addresses = iter(p + o for p, o in zip(ptrs, offsets, strict=True))
        resolved = [next(addresses) if v is None else v for v in values]
        resolved += list(addresses)
        mem = Memory()
        # Writable: the call's outputs and scratch, or its array arguments' buffers when it has
        # no outputs (out=); new memory holds garbage, which the plan must overwrite or zero.
        if not b.outputs:
            for (buf, _), p in zip(items, ptrs, strict=False):
                mem.writable.append((p, buf.nbytes))
        for n, p in zip((*b.outputs, *b.scratch), ptrs[len(items) :], strict=True):
            mem.writable.append((p, n))
            if n:
                ctypes.memset(p, 0xA5, n)
        for fn, grid, block, shared, blob, slots in b.launches:
            blob = bytearray(blob)
            for kind, offset, arg, displacement, align in slots:
                v = resolved[arg]
                if kind == "address":
                    address = v + displacement
                    if address % align:
                        raise ValueError(f"argument {arg} is not {align}-byte aligned")
                    struct.pack_into("<Q", blob, offset, address)
                elif kind == "f64":
                    struct.pack_into("<d", blob, offset, float(v))
                else:
                    struct.pack_into("<q", blob, offset, int(v))
            file, defines, name = self.fake.functions[fn]
            assert shared <= 48 * 1024 or self.fake.shared_allowed.get(fn, 0) >= shared, name
            _check_dims(grid, block, name)
            defines = dict(d.split("=", 1) for d in defines)
            run_model(mem, file, defines, name, grid, block, shared, blob)
            self.launches_run.append(name)
        outs = made[: len(b.outputs)]  # the scratch buffers go back to the pool when dropped
        return None if not outs else outs[0] if len(outs) == 1 else tuple(outs)


def _check_dims(grid, block, name):
    assert min(grid) >= 1 and grid[0] < 2**31 and max(grid[1:]) <= 65535, (name, grid)
    assert math.prod(block) <= 1024 and min(block) >= 1, (name, block)


class Memory:
    """Typed loads and stores at raw addresses; stores only inside the call's writable buffers.
    Partial states of split reductions and rows live in `states`, keyed by byte address."""

    def __init__(self):
        self.writable: list[tuple[int, int]] = []
        self.states: dict[int, object] = {}

    def _view(self, base: int, offsets, dtype, write=False):
        offsets = np.asarray(offsets, np.int64)
        item = dtype.itemsize
        assert base % item == 0, f"address {base:#x} is not aligned for {dtype}"
        lo, hi = int(offsets.min()), int(offsets.max()) + 1
        start, nbytes = base + lo * item, (hi - lo) * item
        if write:
            assert any(p <= start and start + nbytes <= p + n for p, n in self.writable), (
                f"a store to [{start:#x}, {start + nbytes:#x}) outside the call's buffers"
            )
        raw = (ctypes.c_char * nbytes).from_address(start)
        return np.frombuffer(raw, dtype=dtype), offsets - lo

    def load(self, base: int, offsets, dtype) -> np.ndarray:
        offsets = np.asarray(offsets, np.int64)
        if offsets.size == 0:
            return np.empty(offsets.shape, dtype)
        arr, rel = self._view(base, offsets, dtype)
        return arr[rel].copy()

    def store(self, base: int, offsets, dtype, values) -> None:
        offsets = np.asarray(offsets, np.int64)
        if offsets.size == 0:
            return
        arr, rel = self._view(base, offsets, dtype, write=True)
        with np.errstate(all="ignore"):
            arr[rel] = np.asarray(values).astype(dtype)

    def put_state(self, address: int, size: int, state) -> None:
        assert any(p <= address and address + size <= p + n for p, n in self.writable), (
            f"a partial state at {address:#x} outside the call's buffers"
        )
        self.states[address] = state

    def state(self, address: int):
        assert address in self.states, f"no state was written at {address:#x}"
        return self.states[address]


def decode(struct_name: str, blob: bytes) -> dict:
    s = arg_struct(struct_name)
    assert len(blob) == s.size, (struct_name, len(blob), s.size)
    out = {}
    for name, (fmt, offset, shape) in s.fields.items():
        count = math.prod(shape) if shape else 1
        vals = struct.unpack_from(f"<{count}{fmt}", blob, offset)
        out[name] = list(vals) if shape else vals[0]
    return out


def nd_offset(idx, ndim: int, shape, stride) -> np.ndarray:
    """warp.cuh's gk_nd_offset, vectorized."""
    idx = np.array(idx, dtype=np.int64, copy=True)
    off = np.zeros_like(idx)
    for d in range(ndim - 1, -1, -1):
        off += (idx % shape[d]) * stride[d]
        idx //= shape[d]
    return off


def run_model(mem, file, defines, name, grid, block, shared, blob):
    if file == "scan.cu":
        return _scan(mem, defines, name, grid, block, shared, decode(_STRUCT_OF[file], blob))
    if file == "nn_rows.cu":
        return _rows(mem, defines, name, grid, block, shared, decode(_STRUCT_OF[file], blob))
    assert shared == 0, name
    if file == "elementwise.cu":
        return _elementwise(mem, defines, name, grid, block, blob)
    a = decode(_STRUCT_OF[file], blob)
    if file == "reduce.cu":
        return _reduce(mem, defines, name, grid, block, a)
    if file == "transpose.cu":
        return _transpose(mem, defines, name, grid, block, a)
    raise NotImplementedError(file)


# --- elementwise.cu: the identity's copies and fills ----------------------------------------------
def _elementwise(mem, d, name, grid, block, blob):
    assert d["GK_OP"] == "identity" and d["GK_NIN"] == "1", d
    out_t = DTYPES[d["GK_OUT_T"]]
    scalar = d.get("GK_SCALAR0") == "1"
    if name == "gk_ew_contig":
        a = decode("gk_ew_contig_args", blob)
        n = a["n"]
        out_off = in_off = np.arange(n)
    else:
        a = decode("gk_ew_args", blob)
        n, nd = a["n"], a["ndim"]
        m = C["GK_MAX_DIMS"]
        out_off = nd_offset(np.arange(n), nd, a["shape"], a["stride"][0:m])
        in_off = nd_offset(np.arange(n), nd, a["shape"], a["stride"][m : 2 * m])
    if scalar:
        v = a["scalar_i"][1] if d["GK_SCALAR_INT"] == "1" else a["scalar_f"][1]
        values = np.full(n, v)
    else:
        values = mem.load(a["ptr"][1], in_off, DTYPES[d["GK_IN0_T"]])
    mem.store(a["ptr"][0], out_off, out_t, values)


# --- reduce.cu ------------------------------------------------------------------------------------
class _Reducer:
    """A reducer's states over rows of values (2-D: outputs x elements, with their reduced
    indices), merges and finish, in float64 (int64 for integer accumulators)."""

    def __init__(self, red: str, acc: np.dtype):
        self.red, self.acc = red, acc
        self.wide = np.float64 if acc.kind == "f" or acc == gk.bfloat16 else acc.type

    def state_bytes(self) -> int:
        a = self.acc.itemsize
        if self.red in ("gk_red_argmax", "gk_red_argmin"):
            return 16
        if self.red in ("gk_red_var", "gk_red_std"):
            return 3 * a
        return a

    def identity(self):
        r = self.red
        if r in ("gk_red_sum",):
            return self.wide(0)
        if r == "gk_red_prod":
            return self.wide(1)
        if r in ("gk_red_max", "gk_red_min"):
            if self.acc == np.bool_:
                return r == "gk_red_min"
            if self.acc.kind in "iu":
                info = np.iinfo(self.acc)
                return info.min if r == "gk_red_max" else info.max
            return -np.inf if r == "gk_red_max" else np.inf
        if r in ("gk_red_argmax", "gk_red_argmin"):
            return (0.0, -1)
        return (0.0, 0.0, 0.0)

    def states(self, x: np.ndarray, idx: np.ndarray) -> list:
        """One state per row of x (values already converted to the accumulator type)."""
        r, rows = self.red, x.shape[0]
        if x.shape[1] == 0:
            return [self.identity()] * rows
        if r in ("gk_red_sum", "gk_red_prod"):
            w = x.astype(self.wide)
            with np.errstate(all="ignore"):
                v = w.sum(axis=1) if r == "gk_red_sum" else w.prod(axis=1)
            return list(v)
        if r in ("gk_red_max", "gk_red_min"):
            if self.acc == np.bool_:
                return list(x.any(axis=1) if r == "gk_red_max" else x.all(axis=1))
            f = np.max if r == "gk_red_max" else np.min
            return list(f(x, axis=1))  # NaN propagates
        if r in ("gk_red_argmax", "gk_red_argmin"):
            xf = x.astype(np.float64) if x.dtype != np.bool_ else x.astype(np.int64)
            f = np.argmax if r == "gk_red_argmax" else np.argmin
            nan = np.isnan(xf) if xf.dtype.kind == "f" else np.zeros(xf.shape, bool)
            pos = np.where(nan.any(axis=1), nan.argmax(axis=1), f(xf, axis=1))
            return [(xf[i, p], int(idx[p])) for i, p in enumerate(pos)]
        w = x.astype(np.float64)
        n = w.shape[1]
        with np.errstate(all="ignore"):  # inf and NaN give NaN, as NumPy's var
            mean = w.mean(axis=1)
            m2 = ((w - mean[:, None]) ** 2).sum(axis=1)
        return [(float(n), mu, q) for mu, q in zip(mean, m2, strict=True)]

    def merge(self, a, b):
        r = self.red
        if r == "gk_red_sum":
            return a + b
        if r == "gk_red_prod":
            return a * b
        if r in ("gk_red_max", "gk_red_min"):
            if self.acc == np.bool_:
                return (a or b) if r == "gk_red_max" else (a and b)
            if a != a:
                return a
            if b != b:
                return b
            return max(a, b) if r == "gk_red_max" else min(a, b)
        if r in ("gk_red_argmax", "gk_red_argmin"):
            return b if self._better(b, a) else a
        (na, ma, qa), (nb, mb, qb) = a, b
        if nb == 0:
            return a
        if na == 0:
            return b
        n = na + nb
        with np.errstate(all="ignore"):
            d = mb - ma
            return (n, ma + d * nb / n, qa + qb + d * d * na * nb / n)

    def _better(self, a, b) -> bool:
        (va, ia), (vb, ib) = a, b
        if ib < 0:
            return True
        if ia < 0:
            return False
        an, bn = va != va, vb != vb
        if an or bn:
            return an and (not bn or ia < ib)
        if va != vb:
            return va > vb if self.red == "gk_red_argmax" else va < vb
        return ia < ib

    def finish(self, s, scale: float):
        r = self.red
        with np.errstate(all="ignore"):
            if r == "gk_red_sum":
                return s * scale if scale != 1.0 else s
            if r in ("gk_red_argmax", "gk_red_argmin"):
                return s[1]
            if r in ("gk_red_var", "gk_red_std"):
                v = s[2] * scale
                return math.sqrt(v) if r == "gk_red_std" and v == v and v >= 0 else v
            return s


def _reduce(mem, d, name, grid, block, a):
    red = _Reducer(d["GK_RED"], DTYPES[d["GK_ACC_T"]])
    in_t, out_t = DTYPES[d["GK_IN_T"]], DTYPES[d["GK_OUT_T"]]
    n_out, n_red, splits, chunk = a["n_out"], a["n_red"], a["splits"], a["chunk"]
    assert n_out >= 1 and splits >= 1 and chunk * splits >= n_red, a
    assert red.state_bytes() <= C["GK_RED_STATE_BYTES"]
    threads = C["GK_RED_THREADS"]

    def red_off(r):
        return nd_offset(r, a["red_ndim"], a["red_shape"], a["red_stride"])

    def base(o):
        return nd_offset(o, a["out_ndim"], a["out_shape"], a["out_stride"])

    def emit(o, s, states):
        o = np.asarray(o)
        if splits == 1:
            assert a["out"], "an unsplit reduction writes out"
            mem.store(a["out"], o, out_t, _results([red.finish(st, a["scale"]) for st in states]))
            return
        assert a["partial"], "a split reduction needs its partial states' scratch"
        size = red.state_bytes()
        for oo, st in zip(o, states, strict=True):
            at = oo * a["part_out_stride"] + s * a["part_split_stride"]
            mem.put_state(a["partial"] + at * size, size, st)

    if name in ("gk_red_inner_warp", "gk_red_inner_block"):
        g = C["GK_LANES"] if name == "gk_red_inner_warp" else block[0]
        assert block == (threads, 1, 1) and grid[1:] == (1, 1), (grid, block)
        assert grid[0] * block[0] // g >= n_out * splits, "segments left without a group"
        for s in range(splits):
            r0, r1 = s * chunk, min(s * chunk + chunk, n_red)
            idx = np.arange(r0, max(r0, r1))
            o = np.arange(n_out)
            offs = base(o)[:, None] + red_off(idx)[None, :]
            x = mem.load(a["in"], offs, in_t).astype(red.acc)
            emit(o, s, red.states(x, idx))
        return
    if name in ("gk_red_outer_1", "gk_red_outer_vec"):
        vc = C["GK_VEC_BYTES"] // in_t.itemsize if name == "gk_red_outer_vec" else 1
        tx, ty = block[0], block[1]
        assert tx * ty <= threads and ty & (ty - 1) == 0 and block[2] == 1, block
        assert grid[1] == splits and grid[2] == 1, (grid, splits)
        o0 = np.arange(grid[0] * tx) * vc
        o0 = o0[o0 < n_out]
        assert o0.size * vc >= n_out and (o0 + vc <= n_out).all(), "outputs not covered once"
        for s in range(splits):
            r0, r1 = s * chunk, min(s * chunk + chunk, n_red)
            idx = np.arange(r0, max(r0, r1))
            at = base(o0)[:, None] + red_off(idx)[None, :]
            if vc > 1:
                addr = a["in"] + at * in_t.itemsize
                assert (addr % C["GK_VEC_BYTES"] == 0).all(), "a misaligned 16-byte load"
            for c in range(vc):
                x = mem.load(a["in"], at + c, in_t).astype(red.acc)
                emit(o0 + c, s, red.states(x, idx))
        return
    assert splits > 1 and a["partial"], name
    size = red.state_bytes()
    if name == "gk_red_finish_thread":
        assert grid[0] * block[0] >= n_out
        outs = range(n_out)
    else:
        assert name == "gk_red_finish_block" and block == (threads, 1, 1)
        assert grid[0] == n_out, "a block per output, and no more (the kernel does not check)"
        outs = range(grid[0])
    values = []
    for o in outs:
        acc = red.identity()
        for s in range(splits):
            at = o * a["part_out_stride"] + s * a["part_split_stride"]
            acc = red.merge(acc, mem.state(a["partial"] + at * size))
        values.append(red.finish(acc, a["scale"]))
    mem.store(a["out"], np.arange(len(values)), out_t, _results(values))


def _results(values) -> np.ndarray:
    """Finished states (Python or NumPy numbers) as one array: float64 if any is a float."""
    if any(isinstance(v, (float, np.floating)) for v in values):
        return np.array(values, dtype=np.float64)
    return np.array(values)


# --- scan.cu --------------------------------------------------------------------------------------
def _scan(mem, d, name, grid, block, shared, a):
    in_t, acc, out_t = DTYPES[d["GK_IN_T"]], DTYPES[d["GK_ACC_T"]], DTYPES[d["GK_OUT_T"]]
    wide = np.float64 if acc.kind == "f" else acc.type
    n_rows, n = a["n_rows"], a["n"]
    nd, shape = a["row_ndim"], a["row_shape"]
    if name == "gk_scan_tiles":
        chunks = C["GK_SCAN_THREADS"] * C["GK_SCAN_CHUNKS"]
        tile = chunks * (C["GK_VEC_BYTES"] // in_t.itemsize)
        per_row = a["tiles_per_row"]
        assert block == (C["GK_SCAN_THREADS"], 1, 1) and per_row * tile >= n > (per_row - 1) * tile
        assert a["lead"] >= 0 and grid == (n_rows * per_row + a["lead"], 1, 1), "a block per ticket"
        assert shared == chunks * C["GK_VEC_BYTES"], "the tile staged in dynamic shared memory"
        tiles = n_rows * per_row
        assert mem.load(a["ticket"], [0], np.dtype(np.uint64))[0] == 0, "the ticket starts at 0"
        assert (mem.load(a["flags"], np.arange(tiles), np.dtype(np.uint64)) == 0).all()
        if acc.itemsize > 4:  # the values apart from the flags, in the scratch
            for field in ("sums", "prefs"):
                mem.store(a[field], np.arange(tiles), acc, np.zeros(tiles))
        rows = np.arange(n_rows)
        i = np.arange(n)
        src = nd_offset(rows, nd, shape, a["in_row_stride"])[:, None] + i[None, :] * a["in_step"]
        dst = nd_offset(rows, nd, shape, a["out_row_stride"])[:, None] + i * a["out_step"]
        x = mem.load(a["in"], src, in_t).astype(acc).astype(wide)
        mem.store(a["out"], dst, out_t, np.cumsum(x, axis=1))
        return
    vc = C["GK_VEC_BYTES"] // in_t.itemsize if name == "gk_scan_columns_vec" else 1
    pieces, chunk = grid[1], a["chunk"]
    assert pieces * chunk >= n and (pieces - 1) * chunk < n and grid[2] == 1
    q0 = np.arange(grid[0] * block[0]) * vc
    q0 = q0[q0 < n_rows]
    assert q0.size * vc >= n_rows and (q0 + vc <= n_rows).all(), "rows not covered once"
    for c in range(vc):
        q = q0 + c
        carry = np.zeros(q.size, wide)
        for p in range(pieces):
            if p:
                for k, qq in enumerate(q):
                    at = a["partial"] + ((p - 1) * n_rows + qq) * acc.itemsize
                    carry[k] += mem.state(at)
            i = np.arange(p * chunk, min(p * chunk + chunk, n))
            src = nd_offset(q0, nd, shape, a["in_row_stride"])[:, None] + i * a["in_step"] + c
            dst = nd_offset(q0, nd, shape, a["out_row_stride"])[:, None] + i * a["out_step"] + c
            if vc > 1:
                for ptr, offs, t in ((a["in"], src - c, in_t), (a["out"], dst - c, out_t)):
                    assert ((ptr + offs * t.itemsize) % C["GK_VEC_BYTES"] == 0).all()
            x = mem.load(a["in"], src, in_t).astype(acc).astype(wide)
            mem.store(a["out"], dst, out_t, carry[:, None] + np.cumsum(x, axis=1))


# --- nn_rows.cu -----------------------------------------------------------------------------------
_KINDS = ("log_softmax", "softmax", "layer_norm", "rms_norm")


def _row_values(kind, x, w, b, eps):
    """The kind's output for one row of float64 values."""
    if kind in ("softmax", "log_softmax"):
        m = x.max()
        e = np.exp(x - m)
        return e / e.sum() if kind == "softmax" else (x - m) - np.log(e.sum())
    if kind == "layer_norm":
        mu = x.mean()
        y = (x - mu) / np.sqrt(((x - mu) ** 2).mean() + eps)
    else:
        y = x / np.sqrt((x * x).mean() + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def _rows(mem, d, name, grid, block, shared, a):
    t = DTYPES[d["GK_T"]]
    acc = DTYPES[d["GK_ACC_T"]]
    kind = next(k for k in _KINDS if name.startswith(f"gk_{k}_"))
    part = name[len(f"gk_{kind}_") :]
    vecs, v = int(d.get("GK_VECS", "0")), C["GK_VEC_BYTES"] // t.itemsize
    n, n_rows, g = a["n"], a["n_rows"], a["group"]
    nd, shape = a["row_ndim"], a["row_shape"]
    assert block[1:] == (1, 1) and block[0] <= C["GK_ROWS_MAX_THREADS"]
    assert g == C["GK_LANES"] or g == block[0], "a row's group is a warp or the block"
    assert bool(a["residual"]) == bool(a["residual_out"]), "h goes with the residual"
    w = mem.load(a["weight"], np.arange(n), t).astype(np.float64) if a["weight"] else None
    b = mem.load(a["bias"], np.arange(n), t).astype(np.float64) if a["bias"] else None

    def row_x(row, lo, hi):
        """The row's elements [lo, hi) as the statistics see them (h = x + residual, written
        to residual_out, when there is a residual)."""
        i = np.arange(lo, hi)
        x = mem.load(a["in"], nd_offset([row], nd, shape, a["in_row_stride"]) + i * a["in_step"], t)
        if a["residual"]:
            at = nd_offset([row], nd, shape, a["res_row_stride"]) + i * a["res_step"]
            r = mem.load(a["residual"], at, t)
            with np.errstate(all="ignore"):
                x = (x.astype(acc) + r.astype(acc)).astype(t)
            out_at = nd_offset([row], nd, shape, a["out_row_stride"]) + i * a["out_step"]
            mem.store(a["residual_out"], out_at, t, x)
        return x.astype(np.float64)

    def write(row, lo, hi, x):
        i = np.arange(lo, hi)
        y = _row_values(kind, x, w, b, a["eps"])[lo:hi]
        at = nd_offset([row], nd, shape, a["out_row_stride"]) + i * a["out_step"]
        mem.store(a["out"], at, t, y)

    if part == "rows_staged":  # a block per row, the row (and residual) in shared memory
        assert vecs == 0 and g == block[0] and a["splits"] == 1 and grid == (n_rows, 1, 1)
        assert shared == n * t.itemsize * (2 if a["residual"] else 1), (shared, n)
        assert shared <= C["GK_ROWS_STAGED_BYTES"]
        for row in range(n_rows):
            write(row, 0, n, row_x(row, 0, n))
        return
    assert shared == 0, name
    if part == "rows":
        assert block[0] % g == 0 and a["splits"] == 1
        assert grid[0] * (block[0] // g) >= n_rows, "rows left without a group"
        if vecs:
            assert vecs * g * v >= n, f"{vecs} vectors of {g} threads do not hold {n} elements"
        for row in range(n_rows):
            write(row, 0, n, row_x(row, 0, n))
        return
    splits, chunk = a["splits"], a["chunk"]
    assert vecs == 0 and g == block[0] and splits > 1 and chunk % v == 0
    assert grid == (n_rows * splits, 1, 1), "a block per piece, and no more"
    assert (splits - 1) * chunk < n <= splits * chunk
    size = C["GK_ROWS_STATE_BYTES"]
    for bx in range(grid[0]):
        row, piece = divmod(bx, splits)
        lo, hi = piece * chunk, min(piece * chunk + chunk, n)
        if part == "split_stats":
            mem.put_state(a["partial"] + bx * size, size, row_x(row, lo, hi))
        else:
            pieces = [mem.state(a["partial"] + (row * splits + k) * size) for k in range(splits)]
            write(row, lo, hi, np.concatenate(pieces))


# --- transpose.cu ---------------------------------------------------------------------------------
def _transpose(mem, d, name, grid, block, a):
    t = DTYPES[d["GK_T"]]
    tile = int(d["GK_TILE"])
    assert block == (C["GK_TRANSPOSE_THREADS"], 1, 1) and grid[1:] == (1, 1)
    per_batch = a["tiles_p"] * a["tiles_q"]
    assert a["n_tiles"] % per_batch == 0
    nb = a["batch_ndim"]
    for tid in range(a["n_tiles"]):  # a grid-stride loop: every tile, whatever the grid
        batch, rem = divmod(tid, per_batch)
        p0, q0 = rem // a["tiles_q"] * tile, rem % a["tiles_q"] * tile
        ib = nd_offset([batch], nb, a["batch_shape"], a["in_batch_stride"])[0]
        ob = nd_offset([batch], nb, a["batch_shape"], a["out_batch_stride"])[0]
        p = np.arange(p0, min(p0 + tile, a["p"]))
        q = np.arange(q0, min(q0 + tile, a["q"]))
        src = ib + p[:, None] + q[None, :] * a["in_q_stride"]
        dst = ob + p[:, None] * a["out_p_stride"] + q[None, :]
        if a["vec"] and p.size == tile and q.size == tile:
            vb = C["GK_VEC_BYTES"]
            assert ((a["in"] + src[:: vb // t.itemsize, :] * t.itemsize) % vb == 0).all()
            assert ((a["out"] + dst[:, :: vb // t.itemsize] * t.itemsize) % vb == 0).all()
        mem.store(a["out"], dst, t, mem.load(a["in"], src, t))
