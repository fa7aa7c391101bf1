"""The CUDA backend's plans for reductions, cumsum, the nn row kernels and transposing copies, run
through NumPy models of their kernels (kernel_models.py) on the CPU backend's memory: the packed
argument blocks, slots, scratch buffers, grids and blocks that a GPU would get, checked end to
end through the public API against NumPy (the kernels themselves run in tests/api on a GPU
machine). Two multiprocessor counts: the H100's 132 and 8, which plans other splits."""

import importlib
import warnings

import numpy as np
import pytest
from conftest import random_array
from kernel_models import FakeCuda, decode, emulated
from rows_reference import rows_f64

import gpukit as gk
from gpukit import nn
from gpukit.runtime import kernels
from gpukit.runtime.args import CONSTANTS, arg_struct
from gpukit.runtime.backend import Layout
from gpukit.runtime.cpu import CpuBackend
from gpukit.runtime.cuda import elementwise as cuda_elementwise
from gpukit.runtime.cuda import nn as cuda_nn
from gpukit.runtime.cuda import plans, reduce_geometry, rows_geometry
from gpukit.runtime.cuda import reduce as cuda_reduce

F32 = np.dtype(np.float32)


def _clear_plans():
    """Plans the front end cached (by kind of call) are made again, here by the models."""
    importlib.import_module("gpukit.array")._PLANS.clear()
    importlib.import_module("gpukit.elementwise")._ENTRIES.clear()
    importlib.import_module("gpukit.nn.normalization")._ENTRIES.clear()


@pytest.fixture(params=[132, 8])
def modelled(request, monkeypatch):
    """The CPU backend planning as CUDA does and running the kernels' models."""
    sm = request.param
    monkeypatch.setattr(plans.PlanBuilder, "build", lambda self: self)
    monkeypatch.setattr(CpuBackend, "plan_reduce", emulated(cuda_reduce.plan_reduce, sm))
    monkeypatch.setattr(CpuBackend, "plan_cumsum", emulated(cuda_reduce.plan_cumsum, sm))
    monkeypatch.setattr(CpuBackend, "plan_nn_rows", emulated(cuda_nn.plan_nn_rows, sm))
    cpu_elementwise = CpuBackend.plan_elementwise
    copy = emulated(cuda_elementwise.plan_elementwise, sm)

    def plan_elementwise(self, op, loop, inputs, out, allocate):
        if op.name == "identity":  # copies, astype, fills: the transposing copy among them
            return copy(self, op, loop, inputs, out, allocate)
        return cpu_elementwise(self, op, loop, inputs, out, allocate)

    monkeypatch.setattr(CpuBackend, "plan_elementwise", plan_elementwise)
    _clear_plans()
    with gk.use_backend("cpu"):
        yield sm
    _clear_plans()


def _close(got, ref, tol, scale=None):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan), "NaN where NumPy has none, or the reverse"
    allowed = tol * (np.abs(ref) if scale is None else scale) + tol
    with np.errstate(invalid="ignore"):
        bad = ~nan & ~((got == ref) | (np.abs(got - ref) <= allowed))
    assert not bad.any(), f"{bad.sum()} of {bad.size} off: {got[bad][:4]} vs {ref[bad][:4]}"


def _check(name, got, x, axis, keepdims=False, ddof=0):
    x64 = x.astype(np.float64) if x.dtype != np.bool_ else x
    kw = {"axis": axis, "keepdims": keepdims}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Degrees of freedom <= 0"
        if name in ("argmax", "argmin"):
            ref = getattr(np, name)(x64, **kw)
        elif name in ("var", "std"):
            ref = getattr(np, name)(x64, ddof=ddof, **kw) if x.size else np.full(got.shape, np.nan)
        elif name == "mean" and x.size == 0:
            ref = np.full(got.shape, np.nan)
        else:
            ref = getattr(np, name)(x64, **kw)
    out = got.to_numpy()
    if name in ("argmax", "argmin", "any", "all", "max", "min") or out.dtype.kind in "biu":
        np.testing.assert_array_equal(out.astype(np.float64), np.asarray(ref, np.float64))
        return
    scale = None
    if name in ("sum", "mean") and x.size:
        scale = np.abs(x64).sum(axis=axis, keepdims=keepdims)
        if name == "mean":
            scale = scale / max(x.size // max(np.size(ref), 1), 1)
    tol = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}.get(out.dtype, 1e-2)
    _close(out, ref, tol, scale)


NAMES = ["sum", "mean", "prod", "max", "min", "argmax", "argmin", "var", "std", "any", "all"]


@pytest.mark.parametrize("n", [0, 1, 31, 1025, 2**17 + 3])
def test_whole_array_reductions_of_every_view(modelled, rng, n):
    x = random_array(rng, (2 * n + 1,), "float32")
    x[rng.random(x.size) < 0.2] = 0  # any / all see both answers
    a = gk.asarray(x)
    views = {
        "contiguous": (x[:n], a[:n]),
        "offset": (x[1 : n + 1], a[1 : n + 1]),
        "strided": (x[: 2 * n : 2], a[: 2 * n : 2]),
        "reversed": (x[:n][::-1], a[:n][::-1]),
    }
    for xv, av in views.values():
        for name in NAMES:
            if n == 0 and name in ("max", "min", "argmax", "argmin"):
                continue
            if name == "prod":  # of values near 1, which stay in range
                near_one = (1 + xv / 1000).astype(np.float32)
                _check(name, gk.prod(gk.asarray(near_one)), near_one, None)
                continue
            _check(name, getattr(gk, name)(av), xv, None)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int32", "uint8", "bool"])
def test_every_dtype(modelled, rng, dtype):
    x = random_array(rng, (37, 1031), dtype)
    a = gk.asarray(x)
    names = ["sum", "max", "argmax", "argmin", "any", "all", "min"]
    if dtype != "bool":
        names += ["mean", "var", "std"]
    ref = x.astype(np.float32) if dtype == "bfloat16" else x
    for name in names:
        for axis in (None, 0, 1):
            if name in ("argmax", "argmin") and axis is None:
                _check(name, getattr(gk, name)(a), ref, None)
                continue
            _check(name, getattr(gk, name)(a, axis=axis), ref, axis)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "reversed", "offset"])
@pytest.mark.parametrize(
    "shape", [(5, 67, 129), (3, 1, 1025), (1025, 2, 3), (2, 300, 64), (4096, 3, 1), (3, 4096, 4)]
)
def test_every_axis_and_layout(modelled, rng, shape, layout):
    base = random_array(rng, (shape[0], shape[1], 2 * shape[2] + 1), "float32")
    a = gk.asarray(base)
    k = shape[2]
    view, dview = {
        "contiguous": (base[..., :k], a[..., :k]),
        "offset": (base[..., 1 : k + 1], a[..., 1 : k + 1]),
        "transposed": (base[..., :k].transpose(2, 0, 1), a[..., :k].transpose(2, 0, 1)),
        "sliced": (base[..., : 2 * k : 2], a[..., : 2 * k : 2]),
        "reversed": (base[::-1, :, :k], a[::-1, :, :k]),
    }[layout]
    for axis in (None, 0, 1, 2, (0, 2), (1, 2)):
        for name in ("sum", "mean", "max", "var", "argmin", "all"):
            if name == "argmin" and isinstance(axis, tuple):
                continue
            _check(name, getattr(gk, name)(dview, axis=axis), view, axis)
    _check("std", gk.std(dview, axis=1, keepdims=True, ddof=1), view, 1, True, ddof=1)


@pytest.mark.parametrize("shape", [(8192, 4), (4, 8192), (64, 8192), (300, 8), (100000, 2)])
def test_outer_and_inner_axes_split_over_blocks(modelled, rng, shape):
    x = random_array(rng, shape, "float32")
    a = gk.asarray(x)
    for axis in (0, 1):
        for name in ("sum", "argmax", "var", "min", "mean"):
            _check(name, getattr(gk, name)(a, axis=axis), x, axis)


def test_nan_and_inf(modelled, rng):
    x = random_array(rng, (37, 1025), "float32")
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, 30, replace=False)
    flat[picks[:10]], flat[picks[10:20]], flat[picks[20:]] = np.nan, np.inf, -np.inf
    a = gk.asarray(x)
    for axis in (None, 0, 1):
        for name in ("sum", "max", "min", "argmax", "argmin", "var", "any"):
            _check(name, getattr(gk, name)(a, axis=axis), x, axis)


@pytest.mark.parametrize(
    "shape", [(37, 1025), (64, 4096), (3, 20000), (20000, 3), (5, 67, 129), (1, 1), (0, 4)]
)
@pytest.mark.parametrize("dtype", ["float32", "int32", "bfloat16", "float64"])
def test_cumsum_every_axis(modelled, rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    a = gk.asarray(x)
    for xv, av in ((x, a), (x.T, a.T)):
        for axis in (None, *range(len(shape))):
            got = gk.cumsum(av, axis=axis).to_numpy().astype(np.float64)
            ref = np.cumsum(xv.astype(np.float64), axis=axis)
            tol = 1e-2 if dtype == "bfloat16" else 1e-5
            _close(got, ref, tol, np.cumsum(np.abs(xv.astype(np.float64)), axis=axis))


def test_cumsum_of_offset_and_long_rows(modelled, rng):
    x = random_array(rng, (2 * 300_000 + 1,), "float32")  # tiles over several windows
    a = gk.asarray(x)
    for xv, av in ((x[1:], a[1:]), (x[::2], a[::2]), (x[:-1], a[:-1])):
        ref = np.cumsum(xv.astype(np.float64))
        _close(gk.cumsum(av).to_numpy(), ref, 1e-5, np.cumsum(np.abs(xv.astype(np.float64))))
    m = random_array(rng, (2048, 64), "float16")[:, 1:61]  # strided axis, rows not aligned
    _close(gk.cumsum(gk.asarray(m), axis=0).to_numpy(), np.cumsum(m.astype(np.float64), 0), 1e-2)


def _run_rows(kind, x, w=None, b=None, eps=1e-5, **kw):
    if kind == "layer_norm":
        return nn.layer_norm(x, w, b, eps, **kw)
    if kind == "rms_norm":
        return nn.rms_norm(x, w, eps, **kw)
    return getattr(nn, kind)(x, **kw)


@pytest.mark.parametrize("width", [1, 31, 64, 1000, 1025, 4096, 20000, 65536])
@pytest.mark.parametrize("kind", ["softmax", "log_softmax", "layer_norm", "rms_norm"])
def test_row_kernels_every_width(modelled, rng, kind, width):
    for rows, dtype in ((3, "float32"), (1000, "bfloat16"), (7, "float64")):
        if rows * width > 2**21:
            rows = 2
        x = random_array(rng, (rows, width), dtype)
        w = (1 + 0.5 * random_array(rng, (width,), "float32")).astype(x.dtype)
        b = random_array(rng, (width,), dtype) if kind == "layer_norm" else None
        args = (w, b) if kind.endswith("norm") else (None, None)
        got = _run_rows(kind, gk.asarray(x), *args).to_numpy().astype(np.float64)
        ref = rows_f64(kind, x, *args)
        _close(got, ref, 1e-2 if dtype == "bfloat16" else 1e-5)


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_strided_rows_and_other_axes(modelled, rng, kind):
    for width in (31, 1025, 20000):
        x = random_array(rng, (6, 2 * width), "float32")
        a = gk.asarray(x)
        _close(getattr(nn, kind)(a[:, ::2]).to_numpy(), rows_f64(kind, x[:, ::2]), 1e-5)
        got = getattr(nn, kind)(a[:, :width].T, axis=0).to_numpy()
        _close(got, rows_f64(kind, x[:, :width].T, axis=0), 1e-5)


@pytest.mark.parametrize("width", [64, 1000, 4096, 20000])
@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
def test_fused_residual(modelled, rng, kind, width):
    for dtype in ("float32", "bfloat16"):
        x = random_array(rng, (4, width), dtype)
        r2 = random_array(rng, (4, 2 * width), dtype)
        r = r2[:, ::2]
        w = (1 + 0.1 * random_array(rng, (width,), "float32")).astype(x.dtype)
        b = random_array(rng, (width,), dtype) if kind == "layer_norm" else None
        y, h = _run_rows(kind, gk.asarray(x), w, b, residual=gk.asarray(r2)[:, ::2])  # strided
        h_ref = (x.astype(np.float32) + r.astype(np.float32)).astype(x.dtype)
        np.testing.assert_array_equal(h.to_numpy().view(np.uint8), h_ref.view(np.uint8))
        _close(y.to_numpy(), rows_f64(kind, h_ref, w, b), 1e-2 if dtype == "bfloat16" else 1e-5)


@pytest.mark.parametrize("dtype", ["bool", "bfloat16", "float32", "int64"])
@pytest.mark.parametrize("shape", [(1, 1), (31, 1025), (64, 64), (200, 130), (257, 3)])
def test_transposing_copies(modelled, rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    a = gk.asarray(x)
    np.testing.assert_array_equal(gk.ascontiguousarray(a.T).to_numpy(), x.T)
    np.testing.assert_array_equal(gk.ascontiguousarray(a[1:, ::2].T).to_numpy(), x[1:, ::2].T)
    np.testing.assert_array_equal(a.T.astype(dtype).to_numpy(), x.T)
    out = gk.zeros(shape[::-1], dtype)
    out[...] = a.T  # into an existing array
    np.testing.assert_array_equal(out.to_numpy(), x.T)
    for axes in ((0, 2, 1), (2, 0, 1), (1, 0, 2)):
        y = random_array(rng, (3, 70, 33), dtype)
        got = gk.ascontiguousarray(gk.asarray(y)[:, 1:, :].transpose(axes)).to_numpy()
        np.testing.assert_array_equal(got, y[:, 1:, :].transpose(axes))


# --- what the plans hold ------------------------------------------------------------------------
def _launches(planner, *args, sm=132):
    """(kernel name, grid, block, decoded fields, slots by field name) of each launch."""
    fake = FakeCuda(CpuBackend(), sm)
    b = planner(fake, *args)
    out = []
    for fn, grid, block, _, blob, slots in b.launches:
        file, _defines, name = fake.functions[fn]
        struct_name = {"reduce.cu": "gk_reduce_args", "scan.cu": "gk_scan_args",
                       "nn_rows.cu": "gk_rows_args", "elementwise.cu": "gk_ew_contig_args",
                       "transpose.cu": "gk_transpose_args"}[file]  # fmt: skip
        s = arg_struct(struct_name)
        by_offset = {off: f for f, (_, off, _) in s.fields.items()}
        named = {by_offset.get(off, off): (kind, arg, disp, align)
                 for kind, off, arg, disp, align in slots}  # fmt: skip
        out.append((name, grid, block, decode(struct_name, blob), named, b))
    return out


@pytest.fixture
def builds(monkeypatch):
    monkeypatch.setattr(plans.PlanBuilder, "build", lambda self: self)


def test_a_split_whole_array_sum_is_one_plan_with_scratch(builds):
    src = Layout(F32, (2**24,), (4,), 16)
    out = Layout(F32, (), ())
    (main, grid, _, a, slots, b), (fin, fgrid, _, fa, fslots, _) = _launches(
        cuda_reduce.plan_reduce, "sum", src, (0,), out
    )
    assert (main, fin) == ("gk_red_inner_block", "gk_red_finish_block")
    step = CONSTANTS["GK_RED_THREADS"] * CONSTANTS["GK_RED_UNROLL"] * 4  # 16-byte loads a round
    assert 64 <= a["splits"] == grid[0] <= 132 * 4 and fgrid == (1, 1, 1)
    assert a["chunk"] % step == 0 and (a["splits"] - 1) * a["chunk"] < 2**24
    assert a["chunk"] * a["splits"] >= 2**24 and a == fa and slots == fslots
    assert b.scratch == [a["splits"] * CONSTANTS["GK_RED_STATE_BYTES"]]
    assert slots["partial"] == ("address", b.scratch_arg(0), 0, 1)
    assert slots["in"] == ("address", 0, 0, 1) and slots["out"] == ("address", 1, 0, 1)


def test_reversed_views_are_read_forwards_from_their_lowest_address(builds):
    src = Layout(F32, (4096, 64), (-256, 4), 16)  # a[::-1] of a (4096, 64) float32 array
    (name, _, _, a, slots, _), *_ = _launches(cuda_reduce.plan_reduce, "sum", src, (0,),
                                              Layout(F32, (64,), (4,)))  # fmt: skip
    assert name == "gk_red_outer_vec" and a["red_stride"] == [64] + [0] * 7
    assert slots["in"] == ("address", 0, -4095 * 256, 16)


def test_outer_vec_needs_the_alignment_it_was_planned_for(builds):
    dense = Layout(F32, (4096, 64), (256, 4), 16)
    (name, *_), *_ = _launches(cuda_reduce.plan_reduce, "sum", dense, (0,),
                               Layout(F32, (64,), (4,)))  # fmt: skip
    assert name == "gk_red_outer_vec"
    shifted = Layout(F32, (4096, 64), (256, 4), 4)
    (name, *_), *_ = _launches(cuda_reduce.plan_reduce, "sum", shifted, (0,),
                               Layout(F32, (64,), (4,)))  # fmt: skip
    assert name == "gk_red_outer_1"


def test_a_scan_of_more_tiles_than_the_gpu_holds_publishes_sums_ahead(builds):
    tile = reduce_geometry.scan_tile(4)
    lead = CONSTANTS["GK_SCAN_LEAD"]
    for sm, tiles, want in ((132, 528, 0), (132, 529, lead), (2, 9, lead)):
        src = Layout(F32, (tiles * tile,), (4,), 16)
        (_, (scan, grid, _, a, _, _)) = _launches(
            cuda_reduce.plan_cumsum, src, 0, Layout(F32, src.shape, (4,)), sm=sm
        )
        assert scan == "gk_scan_tiles" and a["tiles_per_row"] == tiles
        assert a["lead"] == want and grid == (tiles + want, 1, 1), (sm, tiles)


def test_a_scan_zeroes_its_flags_before_the_tiles(builds):
    src = Layout(F32, (3, 100_000), (400_000, 4), 16)
    (fill, _, _, fa, fslots, b), (scan, grid, _, a, slots, _) = _launches(
        cuda_reduce.plan_cumsum, src, 1, Layout(F32, (3, 100_000), (400_000, 4))
    )
    assert (fill, scan) == ("gk_ew_contig", "gk_scan_tiles")
    tile = reduce_geometry.scan_tile(4)
    assert tile == CONSTANTS["GK_SCAN_THREADS"] * CONSTANTS["GK_SCAN_CHUNKS"] * 4
    assert a["tiles_per_row"] == -(-100_000 // tile) and grid == (3 * a["tiles_per_row"], 1, 1)
    (state,) = b.scratch
    scratch = b.scratch_arg(0)
    assert fslots["ptr"] == ("address", scratch, 0, 1)  # the fill's out: the scratch's start
    zeroed = fa["n"]
    assert slots["ticket"] == ("address", scratch, 0, 1)
    assert slots["flags"][1] == scratch and slots["flags"][2] + 8 * grid[0] <= zeroed
    # 4-byte accumulators keep flag and value in one word: the scratch is what is zeroed
    assert zeroed == state == 16 + -(-8 * grid[0] // 16) * 16


def test_a_scan_of_wide_accumulators_keeps_values_apart(builds):
    f64 = np.dtype(np.float64)
    src = Layout(f64, (100_000,), (8,), 16)
    (_, _, _, fa, _, b), (_, grid, _, _, slots, _) = _launches(
        cuda_reduce.plan_cumsum, src, 0, Layout(f64, (100_000,), (8,))
    )
    (state,) = b.scratch
    zeroed, tiles = fa["n"], grid[0]
    assert tiles == -(-100_000 // reduce_geometry.scan_tile(8))
    assert slots["flags"][2] + 4 * tiles <= zeroed <= slots["sums"][2]  # flags zeroed, values not
    assert slots["sums"][2] + 8 * tiles <= slots["prefs"][2]
    assert slots["prefs"][2] + 8 * tiles <= state


def test_rows_plans_match_their_geometry(builds):
    cases = ((1000, 8, "float32"), (4096, 16384, "bfloat16"), (65536, 2, "float32"))
    for n, n_rows, dtype in cases:
        dt = np.dtype(gk.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
        src = Layout(dt, (n_rows, n), (n * dt.itemsize, dt.itemsize), 16)
        launches = _launches(cuda_nn.plan_nn_rows, "rms_norm", src, 1, src, None, None, src)
        geo = rows_geometry.plan_rows(n, n_rows, dt.itemsize, 132, True)
        names = [x[0] for x in launches]
        if geo.split:
            assert names == ["gk_rms_norm_split_stats", "gk_rms_norm_split_apply"]
        elif geo.shared:  # x and the residual staged
            assert names == ["gk_rms_norm_rows_staged"] and geo.shared == 2 * n * dt.itemsize
        else:
            assert names == ["gk_rms_norm_rows"]
        for _, grid, block, a, slots, b in launches:
            assert grid == (geo.grid, 1, 1) and block == (geo.block, 1, 1)
            assert (a["group"], a["splits"], a["chunk"]) == (geo.group, geo.splits, geo.chunk)
            assert slots["residual"] == ("address", 1, 0, 1)
            assert slots["residual_out"] == ("address", b.output(1), 0, 1)
            assert ("partial" in slots) == geo.split
            assert slots["eps"][0] == "f64" and slots["eps"][1] == 2
        assert f"GK_VECS={geo.vecs}" in kernels.nn_rows(dt, geo.vecs)[1]


def test_geometry_reads_alignment_not_addresses():
    """Layouts carry the alignment of their first element: a reversed view's start moves."""
    geo = reduce_geometry.plan_reduce((64, 16), (-16, 1), (0,), 4, 16, 132)
    assert geo.in_offset == -63 * 16 and geo.main.kernel == "gk_red_outer_vec"
    geo = reduce_geometry.plan_reduce((64, 16), (-17, 1), (0,), 4, 16, 132)
    assert geo.main.kernel == "gk_red_outer_1"  # 17 floats a row: rows are not 16-byte aligned


def test_misaligned_views_take_the_kernels_without_16_byte_accesses(modelled, rng):
    """Rows of 68 floats (272 bytes), viewed from their first or their second element: the same
    shape and strides, every stride a multiple of 16 bytes, but only the first view starts on a
    16-byte boundary. Each gets its own plan (the alignment is part of the key), and the second
    no 16-byte access (the emulated plan checks every address slot's alignment)."""
    x = random_array(rng, (300, 68), "float32")
    a = gk.asarray(x)
    for start in (0, 1, 0):
        xv, av = x[:, start : start + 64], a[:, start : start + 64]
        _check("sum", gk.sum(av, axis=0), xv, 0)
        _check("argmax", gk.argmax(av, axis=0), xv, 0)
        ref = np.cumsum(xv.astype(np.float64), axis=0)
        _close(gk.cumsum(av, axis=0).to_numpy(), ref, 1e-5, np.cumsum(np.abs(xv), axis=0))
        np.testing.assert_array_equal(gk.ascontiguousarray(av.T).to_numpy(), xv.T)
        np.testing.assert_array_equal(av.T.astype("float32").to_numpy(), xv.T)
