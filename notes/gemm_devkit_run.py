"""Device harness for issue 13 (run on the GPU machine from /work/main/.dev/gemm/, never part of
gpukit): compiles every matrix-product kernel variant with NVRTC through .dev/devkit.py, checks each
against float64 on fresh random data with the output poisoned, then times them beside torch in the
same run. Prints a compact table last; the full log and JSON go to $OUT.

Layout expected next to this script: kernels/ (copy of the worktree's), gk/ (a package holding
copies of src/gpukit/_gemm_plan.py, _gemm_cuda.py, errors.py: the harness packs arguments, encodes
tensor maps and lays out parameters with gpukit's own code); ../devkit.py."""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
os.environ.setdefault("GK_KERNELS", os.path.join(HERE, "kernels"))

import devkit as dk  # noqa: E402
import gk._gemm_cuda as gc  # noqa: E402 - copies of gpukit's modules (see the docstring)
import gk._gemm_plan as gp  # noqa: E402
import torch  # noqa: E402

KDIR = os.environ["GK_KERNELS"]
OUT = os.environ.get("OUT") or "/tmp/gemm_out"
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, f"log_{'_'.join(sys.argv[1:]) or 'all'}.txt"), "w")  # noqa: SIM115
with open(os.path.join(KDIR, "gemm_config.cuh")) as _f:
    C = gp.header_constants(_f.read())
QUICK = os.environ.get("GEMM_QUICK") == "1"
# GEMM_DRY=1: a dry run without a GPU (CPU torch): plans every variant and compiles them all.
DRY = os.environ.get("GEMM_DRY") == "1"
DEV = "cpu" if DRY else "cuda"


def log(*a):
    print(*a, file=LOG, flush=True)


DRIVER = None if os.environ.get("GEMM_DRY") == "1" else gc.Driver("libcuda.so.1")


if DRY:
    ARCH, SMS, PROPS = "sm_90a", 132, type("P", (), {"name": "dry run"})
else:
    ARCH = dk.device_arch()
    PROPS = torch.cuda.get_device_properties(0)
    SMS = PROPS.multi_processor_count
_cubins: dict = {}
_fns: dict = {}


def precompile(items):
    """Compiles (file, defines) pairs on all cores (NVRTC calls release the GIL)."""
    todo = [it for it in dict.fromkeys(items) if it not in _cubins]

    def one(it):
        file, defines = it
        t = time.perf_counter()
        img = dk.compile_file(os.path.join(KDIR, file), [f"-D{d}" for d in defines], ARCH)
        return it, img, time.perf_counter() - t

    with cf.ThreadPoolExecutor(16) as ex:
        for it, img, sec in ex.map(one, todo):
            _cubins[it] = img
            log(f"compiled {it[0]} {' '.join(it[1])} in {sec:.2f}s")


COLLECT = False  # a first pass that only gathers the variants to compile them all at once
_needed: list = []


def fn(file, defines, name, smem=0):
    if COLLECT:
        _needed.append((file, tuple(defines)))
        return None
    key = (file, tuple(defines), name)
    if key not in _fns:
        if (file, tuple(defines)) not in _cubins:
            precompile([(file, tuple(defines))])
        mkey = ("mod", file, tuple(defines))
        if mkey not in _fns:
            _fns[mkey] = dk.Module(_cubins[(file, tuple(defines))])
        _fns[key] = _fns[mkey].function(name, smem)
    return _fns[key]


def param_blob(f, parts) -> bytes:
    """Kernel parameters at the offsets the driver reports (gpukit's own packing)."""
    if f is None or DRY:
        return b"".join(parts)
    return gc.param_buffer(DRIVER.param_offsets(f.value, len(parts)), parts)


def encode(spec: gp.TensorMap, ptr: int) -> bytes:
    if DRY:
        return bytes(128)
    return DRIVER.tensor_map(spec, ptr)


# ------------------------------------------------------------------------------------------
# Operands: torch tensors of shape (batch, rows, cols) or (rows, cols), any strides.


def matrix(t: torch.Tensor) -> gp.Matrix:
    s = t.stride()
    sb = s[0] if t.dim() == 3 else 0
    return gp.Matrix(s[-2], s[-1], sb, t.data_ptr() % 16 == 0)


def make(shape, dtype, layout="row", batch=0, bcast=False):
    """A (rows, cols) operand (batch > 0: (batch, rows, cols)), random normal, laid out row-major
    ("row") or as the .T of a row-major (cols, rows) ("col"); bcast: batch stride 0."""
    r, c = shape
    base = torch.randn((c, r) if layout == "col" else (r, c), device=DEV).to(dtype)
    t = base.t() if layout == "col" else base
    if batch:
        if bcast:
            t = t.unsqueeze(0).expand(batch, r, c)
        else:
            full = torch.randn((batch, *base.shape), device=DEV).to(dtype)
            t = full.transpose(1, 2) if layout == "col" else full
    return t


def ref_epilogue(acc64, bias, act, res):
    x = acc64
    if bias is not None:
        x = x + bias.double()
    if act == "relu":
        x = torch.relu(x)
    elif act == "gelu":
        x = 0.5 * x * (1 + torch.special.erf(x / math.sqrt(2)))
    elif act == "gelu_tanh":
        x = 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    elif act == "silu":
        x = x / (1 + torch.exp(-x))
    if res is not None:
        x = x + res.double()
    return x


def rel_err(out, ref):
    o = out.double()
    if not torch.isfinite(o).all():
        return float("inf")
    return ((o - ref).norm() / ref.norm().clamp_min(1e-30)).item()


# ------------------------------------------------------------------------------------------
# Launchers. Each returns a zero-argument callable that launches with prebuilt arguments.


def sm90_launcher(
    dtype, A, B, out, bias=None, res=None, act=None, tile=None, wait1=False, tf32_round=True
):
    batch = out.shape[0] if out.dim() == 3 else 1
    m, n = out.shape[-2:]
    k = A.shape[-1]
    ma, mb = matrix(A), matrix(B)
    why = gp.sm90_supported(dtype, m, n, k, batch, ma, mb, True)
    assert why is None, why
    plan = gp.plan_sm90(
        dtype,
        m,
        n,
        k,
        batch,
        ma,
        mb,
        SMS,
        C,
        (bias is not None, act, res is not None),
        tile,
        wait1,
        tf32_round,
    )
    f = fn("gemm_sm90.cu", plan.defines, "gk_gemm_sm90", plan.shared_bytes)
    ws = torch.empty(max(plan.workspace_bytes // 4, 1), device=DEV, dtype=torch.float32)
    so = out.stride()
    args = gc.pack(
        gc.SM90_ARGS,
        out=out.data_ptr(),
        bias=bias.data_ptr() if bias is not None else 0,
        residual=res.data_ptr() if res is not None else 0,
        workspace=ws.data_ptr(),
        m=m,
        n=n,
        so_m=so[-2],
        so_z=so[0] if out.dim() == 3 else 0,
        sr_m=res.stride()[-2] if res is not None else 0,
        sr_z=(res.stride()[0] if res is not None and res.dim() == 3 else 0),
        s_bias=bias.stride()[0] if bias is not None else 0,
        batch=batch,
        splits=plan.splits,
        k_tiles=plan.k_tiles,
        k_tiles_per_split=plan.k_tiles_per_split,
        tiles_m=plan.tiles_m,
        tiles_n=plan.tiles_n,
        total_tiles=plan.total_tiles,
        a_batched=int(plan.a_batched),
        b_batched=int(plan.b_batched),
        out_pairs=int(
            out.data_ptr() % 4 == 0 and so[-2] % 2 == 0 and (batch == 1 or so[0] % 2 == 0)
        ),
    )
    blob = param_blob(f, [encode(plan.map_a, A.data_ptr()), encode(plan.map_b, B.data_ptr()), args])
    red = None
    if plan.splits > 1:
        red = fn("gemm_sm90.cu", plan.defines, "gk_gemm_splitk_reduce")
        count = batch * m * n
        rgrid = min(-(-count // C["GK_SPLITK_THREADS"]), SMS * 16)

    def go():
        if f is None:
            return
        dk.launch(f, (plan.grid,), (plan.threads,), plan.shared_bytes, blob)
        if red is not None:
            dk.launch(red, (rgrid,), (C["GK_SPLITK_THREADS"],), 0, args)

    go.plan = plan
    go.keep = (ws,)
    return go


def gemv_launcher(layout, dtype, x, w, out, bias=None, res=None, act=None, tune=None):
    m, k = x.shape
    n = w.shape[0] if layout == "nk" else w.shape[1]
    item = x.element_size()
    per = 16 // item
    if layout == "nk":
        sw, swk = w.stride()
        vec = (
            swk == 1
            and x.stride(1) == 1
            and k % per == 0
            and sw % per == 0
            and x.stride(0) % per == 0
            and w.data_ptr() % 16 == 0
            and x.data_ptr() % 16 == 0
        )
    else:
        sw, swk = w.stride()
        vec = swk == 1 and n % per == 0 and sw % per == 0 and w.data_ptr() % 16 == 0
    plan = gp.plan_gemv(
        layout, dtype, m, n, k, vec, SMS, C, (bias is not None, act, res is not None), tune
    )
    f = fn("gemv.cu", plan.defines, plan.kernel)
    ws = torch.empty(max(plan.workspace_bytes // 4, 1), device=DEV, dtype=torch.float32)
    args = gc.pack(
        gc.GEMV_ARGS,
        x=x.data_ptr(),
        w=w.data_ptr(),
        out=out.data_ptr(),
        bias=bias.data_ptr() if bias is not None else 0,
        residual=res.data_ptr() if res is not None else 0,
        workspace=ws.data_ptr(),
        m=m,
        n=n,
        k=k,
        sx_m=x.stride(0),
        sx_k=x.stride(1),
        sw=sw,
        swk=swk,
        so_m=out.stride(0),
        sr_m=res.stride(0) if res is not None else 0,
        s_bias=bias.stride(0) if bias is not None else 0,
        k_per_split=plan.k_per_split,
        splits=plan.splits,
    )
    blob = args
    red = fn("gemv.cu", plan.defines, "gk_gemv_reduce") if plan.splits > 1 else None

    def go():
        if f is None:
            return
        dk.launch(f, plan.grid, (plan.threads,), 0, blob)
        if red is not None:
            dk.launch(red, (min(-(-m * n // 256), SMS * 8),), (256,), 0, blob)

    go.plan = plan
    go.vec = vec
    go.keep = (ws,)
    return go


def f32_launcher(A, B, out, bias=None, res=None, act=None, tune=None):
    batch = out.shape[0] if out.dim() == 3 else 1
    m, n = out.shape[-2:]
    k = A.shape[-1]
    ma, mb = matrix(A), matrix(B)
    a_mn, b_mn = ma.s_row == 1 and ma.s_col != 1, mb.s_col == 1
    a_lead = ma.s_col if a_mn else ma.s_row
    b_lead = mb.s_row if b_mn else mb.s_col
    vec = (
        A.data_ptr() % 16 == 0
        and B.data_ptr() % 16 == 0
        and (m if a_mn else k) % 4 == 0
        and (n if b_mn else k) % 4 == 0
        and a_lead % 4 == 0
        and b_lead % 4 == 0
        and (ma.s_row == 1 if a_mn else ma.s_col == 1)
        and (mb.s_col == 1 if b_mn else mb.s_row == 1)
    )
    plan = gp.plan_f32(
        m, n, batch, a_mn, b_mn, vec, C, (bias is not None, act, res is not None), tune
    )
    f = fn("gemm_f32.cu", plan.defines, "gk_gemm_f32")
    so = out.stride()
    args = gc.pack(
        gc.GEMM_ARGS,
        a=A.data_ptr(),
        b=B.data_ptr(),
        out=out.data_ptr(),
        bias=bias.data_ptr() if bias is not None else 0,
        residual=res.data_ptr() if res is not None else 0,
        workspace=0,
        m=m,
        n=n,
        k=k,
        batch=batch,
        sa_m=ma.s_row,
        sa_k=ma.s_col,
        sa_z=ma.s_batch,
        sb_k=mb.s_row,
        sb_n=mb.s_col,
        sb_z=mb.s_batch,
        so_m=so[-2],
        so_z=so[0] if out.dim() == 3 else 0,
        sr_m=res.stride()[-2] if res is not None else 0,
        sr_z=res.stride()[0] if res is not None and res.dim() == 3 else 0,
        s_bias=bias.stride(0) if bias is not None else 0,
        out_pairs=int(
            out.data_ptr() % 8 == 0 and so[-2] % 2 == 0 and (out.dim() == 2 or so[0] % 2 == 0)
        ),
    )
    blob = args

    def go():
        if f is None:
            return
        dk.launch(f, plan.grid, (plan.threads,), 0, blob)

    go.plan = plan
    go.vec = vec
    return go


# ------------------------------------------------------------------------------------------
# Correctness

RESULTS = {"checks": [], "timings": []}
TOL = {torch.bfloat16: 1e-2, torch.float16: 1e-2, torch.float32: 1e-5}


REMAINING: list = []  # phases after the running one, for a new process after a fault


def abort(why, code):
    log(why)
    with open(os.path.join(OUT, "remaining"), "w") as f:
        f.write(" ".join(REMAINING))
    report(aborted=True)
    os._exit(code)


def sync(limit_s=30.0):
    """Waits for the GPU; past limit_s the kernel is taken as hung, and a fault has lost the
    context: either way, report and end this process."""
    if DRY:
        return
    try:
        ev = torch.cuda.Event()
        ev.record()
        start = time.perf_counter()
        while not ev.query():
            if time.perf_counter() - start > limit_s:
                abort("HANG: the GPU did not finish within the limit", 3)
            time.sleep(0.001)
    except Exception as e:  # a device fault: the context is gone
        abort(f"context lost: {e}", 4)


def check(name, out, ref, tol):
    sync()
    err = rel_err(out, ref)
    ok = err <= tol
    RESULTS["checks"].append({"name": name, "err": err, "tol": tol, "ok": ok})
    log(f"{'PASS' if ok else 'FAIL'} {name}: rel err {err:.3e} (tol {tol:g})")
    return ok


def sm90_case(
    name,
    dtype,
    m,
    n,
    k,
    la="row",
    lb="row",
    batch=0,
    bca=False,
    bcb=False,
    epi=(False, None, False),
    tile=None,
    wait1=False,
    tf32_round=True,
    tol=None,
):
    tdt = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}[dtype]
    A = make((m, k), tdt, la, batch, bca)
    B = make((k, n), tdt, lb, batch, bcb)
    out = torch.full((batch, m, n) if batch else (m, n), float("nan"), device=DEV, dtype=tdt)
    bias = torch.randn(n, device=DEV).to(tdt) if epi[0] else None
    res = torch.randn(out.shape, device=DEV).to(tdt) if epi[2] else None
    try:
        go = sm90_launcher(dtype, A, B, out, bias, res, epi[1], tile, wait1, tf32_round)
        log(f"launch sm90 {name} {m}x{n}x{k} {la}/{lb} tile={go.plan.bm}x{go.plan.bn}")
        go()
        if COLLECT:
            return True
        sync()  # a fault is named by the case that caused it
        ref = ref_epilogue(torch.matmul(A.double(), B.double()), bias, epi[1], res)
        tol = tol or (5e-4 if dtype == "float32" else 1e-2)
        return check(
            f"sm90 {name} {dtype} {m}x{n}x{k} a:{la} b:{lb} batch={batch} "
            f"bc={bca},{bcb} epi={epi} tile={go.plan.bm}x{go.plan.bn}/s{go.plan.splits} "
            f"wait1={wait1}",
            out,
            ref,
            tol,
        )
    except Exception as e:  # reported and counted as a failure
        RESULTS["checks"].append({"name": f"sm90 {name}", "err": str(e), "ok": False})
        log(f"FAIL sm90 {name}: {type(e).__name__}: {e}")
        return False


def gemv_case(layout, dtype, m, n, k, epi=(False, None, False), tune=None, strided_x=False):
    tdt = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}[dtype]
    x = torch.randn(m, k * (2 if strided_x else 1), device=DEV).to(tdt)
    if strided_x:
        x = x[:, ::2]
    w = torch.randn((n, k) if layout == "nk" else (k, n), device=DEV).to(tdt)
    out = torch.full((m, n), float("nan"), device=DEV, dtype=tdt)
    bias = torch.randn(n, device=DEV).to(tdt) if epi[0] else None
    res = torch.randn(m, n, device=DEV).to(tdt) if epi[2] else None
    try:
        go = gemv_launcher(layout, dtype, x, w, out, bias, res, epi[1], tune)
        go()
        if COLLECT:
            return True
        wt = w.double().t() if layout == "nk" else w.double()
        ref = ref_epilogue(x.double() @ wt, bias, epi[1], res)
        return check(
            f"gemv {layout} {dtype} {m}x{n}x{k} vec={go.vec} splits={go.plan.splits} "
            f"epi={epi} tune={tune} strided_x={strided_x}",
            out,
            ref,
            TOL[tdt],
        )
    except Exception as e:
        RESULTS["checks"].append({"name": f"gemv {layout}", "err": str(e), "ok": False})
        log(f"FAIL gemv {layout} {dtype} {m}x{n}x{k}: {type(e).__name__}: {e}")
        return False


def f32_case(
    m,
    n,
    k,
    la="row",
    lb="row",
    batch=0,
    bcb=False,
    epi=(False, None, False),
    tune=None,
    offset=False,
):
    A = make((m, k), torch.float32, la, batch)
    B = make((k, n), torch.float32, lb, batch, bcb)
    if offset:  # misaligned by one element: the element-load path
        A = torch.randn(m * k + 1, device=DEV)[1:].view(m, k)
    out = torch.full((batch, m, n) if batch else (m, n), float("nan"), device=DEV)
    bias = torch.randn(n, device=DEV) if epi[0] else None
    res = torch.randn(out.shape, device=DEV) if epi[2] else None
    try:
        go = f32_launcher(A, B, out, bias, res, epi[1], tune)
        go()
        ref = ref_epilogue(torch.matmul(A.double(), B.double()), bias, epi[1], res)
        return check(
            f"f32 {m}x{n}x{k} a:{la} b:{lb} batch={batch} bcb={bcb} epi={epi} "
            f"vec={go.vec} tune={tune}",
            out,
            ref,
            1e-5,
        )
    except Exception as e:
        RESULTS["checks"].append({"name": "f32", "err": str(e), "ok": False})
        log(f"FAIL f32 {m}x{n}x{k}: {type(e).__name__}: {e}")
        return False


def correctness_sm90():
    torch.backends.cuda.matmul.allow_tf32 = False
    sm90_case("first", "bfloat16", 256, 256, 128, tile=(128, 256, 1))
    sm90_case("first", "bfloat16", 1024, 1024, 512, "row", "col", tile=(128, 256, 1))
    for dt in ("bfloat16", "float16"):
        for la in ("row", "col"):
            for lb in ("row", "col"):
                sm90_case("layout", dt, 1000, 1000, 1000, la, lb)
    for tile in ((128, 256, 1), (256, 128, 1), (128, 128, 1), (128, 64, 1)):
        for la, lb in (("row", "row"), ("col", "col")):
            sm90_case("tile", "bfloat16", 1000, 1000, 1000, la, lb, tile=tile)
    for m, n, k in (
        (129, 1000, 200),
        (1000, 136, 4104),
        (7, 520, 8),
        (1, 8, 64),
        (4097, 264, 1032),
        (300, 4097 + 7, 72),
    ):
        for la, lb in (("row", "row"), ("row", "col"), ("col", "row")):
            if (la == "col" and m % 8) or (lb == "row" and n % 8):
                continue  # TMA needs 16-byte strides
            sm90_case("tails", "bfloat16", m, n, k, la, lb)
    sm90_case("batch", "bfloat16", 200, 304, 264, batch=3)
    sm90_case("batch", "float16", 200, 304, 264, "col", "col", batch=3)
    sm90_case("bcast-b", "bfloat16", 200, 304, 264, batch=3, bcb=True)
    sm90_case("bcast-a", "bfloat16", 200, 304, 264, "col", "row", batch=4, bca=True)
    for act in (None, "relu", "gelu", "gelu_tanh", "silu"):
        sm90_case("epi", "bfloat16", 1000, 1000, 1000, "row", "col", epi=(True, act, act == "gelu"))
    sm90_case("epi-res", "float16", 777, 1000, 520, epi=(False, None, True))
    sm90_case("splitk", "bfloat16", 256, 512, 8192, tile=(128, 128, 4))
    sm90_case("splitk-auto", "bfloat16", 256, 520, 8200, "row", "col", epi=(True, "silu", True))
    sm90_case("splitk-batch", "float16", 100, 64, 4096, batch=2, tile=(128, 64, 3))
    sm90_case("wait1", "bfloat16", 1000, 1000, 1000, wait1=True)
    sm90_case("wait1", "bfloat16", 1000, 1000, 1000, "col", "col", wait1=True)
    for rnd in (True, False):
        sm90_case(
            f"tf32 round={rnd}", "float32", 1000, 1000, 1000, "row", "col", tf32_round=rnd, tol=1.0
        )
    sm90_case("tf32 tails", "float32", 129, 1000, 1028, "row", "col")
    sm90_case(
        "tf32 batch epi", "float32", 200, 300, 264, "row", "col", batch=2, epi=(True, "gelu", True)
    )


def correctness_simt():
    torch.backends.cuda.matmul.allow_tf32 = False
    for layout in ("nk", "kn"):
        for dt in ("bfloat16", "float16", "float32"):
            for m in (1, 3, 16):
                gemv_case(layout, dt, m, 1000, 4096)
        gemv_case(layout, "bfloat16", 1, 11008, 4096)
        gemv_case(layout, "bfloat16", 5, 7, 1000)  # small n: split K
        gemv_case(layout, "bfloat16", 2, 1001, 999)  # element loads
        gemv_case(layout, "bfloat16", 4, 512, 4096, strided_x=True)
        gemv_case(layout, "float16", 8, 2048, 4096, epi=(True, "gelu_tanh", True))
        gemv_case(layout, "bfloat16", 1, 256, 8192, epi=(True, "relu", False))
        for tune in (
            ((1, 4, 1), (4, 8, 0), (2, 8, 1))
            if layout == "nk"
            else ((2, 4, 1), (4, 8, 0), (8, 8, 1))
        ):
            gemv_case(layout, "bfloat16", 1, 11008, 4096, tune=tune)

    for la in ("row", "col"):
        for lb in ("row", "col"):
            for mb in (1, 2):
                f32_case(1000, 1000, 1000, la, lb, tune=(mb, 1))
    f32_case(129, 7, 4097)
    f32_case(300, 129, 1000, offset=True)
    f32_case(129, 7, 4097, "col", "col")
    for la, lb in (("row", "row"), ("col", "col")):
        f32_case(1000, 1000, 1000, la, lb, tune=(2, 0))
    f32_case(129, 7, 4097, tune=(1, 0))
    f32_case(300, 129, 1000, "col", "row", offset=True, tune=(1, 0))
    f32_case(200, 300, 264, batch=3, epi=(True, "silu", True))
    f32_case(200, 300, 264, "col", "row", batch=3, bcb=True)


# ------------------------------------------------------------------------------------------
# Timing: events around R back-to-back launches (amortizes Python's launch cost), median of 5.


def time_ms(go, min_ms=2.0):
    if COLLECT:
        return 1.0
    go()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    go()
    b.record()
    b.synchronize()
    one = max(a.elapsed_time(b), 1e-3)
    reps = max(1, min(200, int(min_ms / one)))
    times = []
    for _ in range(5):
        a.record()
        for _ in range(reps):
            go()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / reps)
    times.sort()
    return times[2]


def record(row, unit, ours_ms, torch_ms, amount, variant=""):
    """amount: flops (unit TFLOP/s) or bytes (GB/s) per call."""
    if COLLECT:
        return
    scale = 1e12 if unit == "TFLOP/s" else 1e9
    ours, ref = amount / (ours_ms * 1e-3) / scale, amount / (torch_ms * 1e-3) / scale
    RESULTS["timings"].append(
        {
            "row": row,
            "variant": variant,
            "unit": unit,
            "gpukit": ours,
            "torch": ref,
            "ratio": ours / ref,
            "gpukit_ms": ours_ms,
            "torch_ms": torch_ms,
        }
    )
    log(
        f"TIME {row} [{variant}] {ours:.1f} vs torch {ref:.1f} {unit} ({ours / ref:.3f}x) "
        f"{ours_ms * 1e3:.1f} us vs {torch_ms * 1e3:.1f} us"
    )


def t_square():
    bf, f16 = torch.bfloat16, torch.float16

    def square(dt, n, name, variants):
        A, B = make((n, n), dt), make((n, n), dt)
        out = torch.empty(n, n, device=DEV, dtype=dt)
        t_ref = time_ms(lambda: torch.matmul(A, B))
        for v in variants:
            go = sm90_launcher("bfloat16" if dt == bf else "float16", A, B, out, **v)
            record(
                name,
                "TFLOP/s",
                time_ms(go),
                t_ref,
                2 * n**3,
                f"{go.plan.bm}x{go.plan.bn}s{go.plan.splits} wait1={v.get('wait1', False)}",
            )

    big = [{}, {"wait1": True}, {"tile": (256, 128, 1)}, {"tile": (256, 128, 1), "wait1": True}]
    square(bf, 8192, "bf16 8192^3", big)
    square(f16, 8192, "f16 8192^3", [{}, {"wait1": True}])
    square(bf, 4096, "bf16 4096^3", [*big, {"tile": (128, 128, 1)}])
    square(bf, 2048, "bf16 2048^3", [*big, {"tile": (128, 128, 1)}])
    # the same product with b K-major (a @ w.T of a row-major w)
    A, Bt = make((8192, 8192), bf), make((8192, 8192), bf, "col")
    out = torch.empty(8192, 8192, device=DEV, dtype=bf)
    t_ref = time_ms(lambda: torch.matmul(A, Bt))
    for v in ({}, {"wait1": True}):
        go = sm90_launcher("bfloat16", A, Bt, out, **v)
        record("bf16 8192^3 b K-major", "TFLOP/s", time_ms(go), t_ref, 2 * 8192**3, str(v))


def t_linear():
    bf = torch.bfloat16
    # linear 4096x4096 -> 11008 (x @ W.T, W (11008, 4096) row-major), plain and fused.
    x = make((4096, 4096), bf)
    W = make((11008, 4096), bf)
    bias = torch.randn(11008, device=DEV).to(bf)
    out = torch.empty(4096, 11008, device=DEV, dtype=bf)
    fl = 2 * 4096 * 4096 * 11008
    t_ref = time_ms(lambda: torch.nn.functional.linear(x, W))
    for v in ({}, {"wait1": True}, {"tile": (256, 128, 1)}):
        go = sm90_launcher("bfloat16", x, W.t(), out, **v)
        record(
            "linear 4096x4096->11008",
            "TFLOP/s",
            time_ms(go),
            t_ref,
            fl,
            f"{go.plan.bm}x{go.plan.bn} wait1={v.get('wait1', False)}",
        )
    plain = time_ms(sm90_launcher("bfloat16", x, W.t(), out))
    fused = time_ms(sm90_launcher("bfloat16", x, W.t(), out, bias=bias, act="gelu"))
    t_ref_f = time_ms(lambda: torch.nn.functional.gelu(torch.nn.functional.linear(x, W, bias)))
    record(
        "fused linear+bias+gelu", "TFLOP/s", fused, t_ref_f, fl, f"plain/fused {plain / fused:.3f}"
    )


def t_batched():
    bf = torch.bfloat16
    # batched 64 x (512x128 @ 128x512)
    Ab, Bb = make((512, 128), bf, batch=64), make((128, 512), bf, batch=64)
    outb = torch.empty(64, 512, 512, device=DEV, dtype=bf)
    t_ref = time_ms(lambda: torch.matmul(Ab, Bb))
    for v in ({}, {"tile": (128, 128, 1)}, {"tile": (256, 128, 1)}):
        go = sm90_launcher("bfloat16", Ab, Bb, outb, **v)
        record(
            "batched 64x(512x128@128x512)",
            "TFLOP/s",
            time_ms(go),
            t_ref,
            2 * 64 * 512 * 512 * 128,
            f"{go.plan.bm}x{go.plan.bn}",
        )


def t_f32():
    # f32 4096^3 exact
    torch.backends.cuda.matmul.allow_tf32 = False
    A, B = make((4096, 4096), torch.float32), make((4096, 4096), torch.float32)
    out = torch.empty(4096, 4096, device=DEV)
    t_ref = time_ms(lambda: torch.matmul(A, B))
    for tune in ((1, 1), (2, 1), (1, 0), (2, 0)):
        go = f32_launcher(A, B, out, tune=tune)
        record("f32 4096^3", "TFLOP/s", time_ms(go), t_ref, 2 * 4096**3, f"minb,async={tune}")
    At = make((4096, 4096), torch.float32, "col")
    t_ref = time_ms(lambda: torch.matmul(At, B))
    go = f32_launcher(At, B, out)
    record("f32 4096^3 a M-major", "TFLOP/s", time_ms(go), t_ref, 2 * 4096**3, "default")


def t_tf32():
    torch.backends.cuda.matmul.allow_tf32 = True
    A8, B8 = make((8192, 8192), torch.float32), make((8192, 8192), torch.float32)
    B8t = B8.t().contiguous().t()  # K-major copy for the tf32 wgmma
    out8 = torch.empty(8192, 8192, device=DEV)
    t_ref = time_ms(lambda: torch.matmul(A8, B8))
    for v in ({}, {"wait1": True}, {"tf32_round": False}):
        go = sm90_launcher("float32", A8, B8t, out8, **v)
        record("tf32 8192^3", "TFLOP/s", time_ms(go), t_ref, 2 * 8192**3, str(v))
    t_copy = time_ms(lambda: B8.t().contiguous())
    log(f"tf32: the K-major copy of b takes {t_copy * 1e3:.0f} us")
    torch.backends.cuda.matmul.allow_tf32 = False


def t_decode():
    bf = torch.bfloat16
    # decode GEMV, 1 x 4096 -> 11008 bf16; two weight copies so the weight comes from HBM.
    x = make((1, 4096), bf)
    Ws = [make((11008, 4096), bf) for _ in range(2)]
    Wk = [make((4096, 11008), bf) for _ in range(2)]
    out = torch.empty(1, 11008, device=DEV, dtype=bf)
    wbytes = 11008 * 4096 * 2

    def alt(fs):
        state = [0]

        def go():
            fs[state[0]]()
            state[0] ^= 1

        return go

    t_ref = time_ms(alt([lambda W=W: torch.nn.functional.linear(x, W) for W in Ws]))
    for tune in ((1, 4, 0), (1, 4, 1), (2, 4, 1), (1, 8, 1), (2, 8, 1), (1, 2, 1)):
        go = alt([gemv_launcher("nk", "bfloat16", x, W, out, tune=tune) for W in Ws])
        record("decode linear 1x4096->11008", "GB/s", time_ms(go), t_ref, wbytes, f"cpw,u,h={tune}")
    t_ref = time_ms(alt([lambda W=W: torch.matmul(x, W) for W in Wk]))
    for tune in ((4, 4, 0), (4, 4, 1), (8, 4, 1), (8, 8, 1), (16, 4, 1), (16, 8, 1), (8, 2, 1)):
        go = alt([gemv_launcher("kn", "bfloat16", x, W, out, tune=tune) for W in Wk])
        record("decode x@W 1x4096->11008", "GB/s", time_ms(go), t_ref, wbytes, f"cw,u,h={tune}")
    for rows in (4, 8, 16):
        xs = make((rows, 4096), bf)
        outs = torch.empty(rows, 11008, device=DEV, dtype=bf)
        t_ref = time_ms(alt([lambda W=W, xs=xs: torch.nn.functional.linear(xs, W) for W in Ws]))
        go = alt([gemv_launcher("nk", "bfloat16", xs, W, outs) for W in Ws])
        record(f"decode linear {rows}x4096->11008", "GB/s", time_ms(go), t_ref, wbytes, "gemv")
        for tile in ((128, 64, 1), (128, 128, 1), (128, 64, 2)):
            go = alt([sm90_launcher("bfloat16", xs, W.t(), outs, tile=tile) for W in Ws])
            record(
                f"decode linear {rows}x4096->11008",
                "GB/s",
                time_ms(go),
                t_ref,
                wbytes,
                f"sm90 {tile}",
            )


def t_copy():
    big = torch.empty(2**28, device=DEV)
    dst = torch.empty_like(big)
    t = time_ms(lambda: dst.copy_(big))
    log(f"device copy 1 GiB: {2 * big.numel() * 4 / t / 1e6:.0f} GB/s (read + write)")
    RESULTS["copy_GBps"] = 2 * big.numel() * 4 / t / 1e6


# Phases in order: the SIMT kernels first, so that a fault in the sm_90a kernel (a hang ends
# the run) still leaves their results.
PHASES = (
    ("simt-checks", (correctness_simt,)),
    ("sm90-checks", (correctness_sm90,)),
    ("simt-timing", (t_f32, t_copy)),
    ("sm90-timing", (t_square, t_linear, t_batched, t_tf32, t_decode)),
)


def guarded(f):
    try:
        f()
    except Exception as e:  # a failed timing section is reported, the rest still runs
        import traceback

        log(traceback.format_exc())
        print(f"timing stopped: {type(e).__name__}: {e}")


def report(aborted=False):
    with open(os.path.join(OUT, f"results_{'_'.join(sys.argv[1:]) or 'all'}.json"), "w") as f:
        json.dump(RESULTS, f, indent=1)
    fails = [c for c in RESULTS["checks"] if not c["ok"]]
    n = len(RESULTS["checks"])
    print(f"== {PROPS.name}: {n - len(fails)}/{n} checks pass{' (ABORTED)' if aborted else ''}")
    for c in fails[:25]:
        print("FAIL", c["name"], c["err"])
    for c in RESULTS["checks"]:
        if c["name"].startswith("sm90 tf32"):
            print("tf32", c["name"][:40], c["err"])
    for r in RESULTS["timings"]:
        print(
            f"{r['row'][:30]:30} {r['variant'][:26]:26} {r['gpukit']:8.1f} {r['torch']:8.1f} "
            f"{r['unit']:7} {r['ratio']:.3f}x {r['gpukit_ms'] * 1e3:9.1f}us"
        )
    if "copy_GBps" in RESULTS:
        print(f"copy {RESULTS['copy_GBps']:.0f} GB/s")
    sys.stdout.flush()


def main():
    global COLLECT
    t0 = time.perf_counter()
    log(f"device {PROPS.name}, {SMS} SMs, arch {ARCH}, NVRTC {dk.nvrtc_version()}")
    log(f"torch {torch.__version__}")
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    wanted = sys.argv[1:] or [name for name, _ in PHASES]
    phases = [(name, steps) for name, steps in PHASES if name in wanted]
    COLLECT = True
    for _, steps in phases:
        for step in steps:
            if not (QUICK and step.__name__.startswith("t_")):
                guarded(step)
    COLLECT = False
    RESULTS["checks"].clear()
    precompile(_needed)
    log(f"compiled {len(_cubins)} variants in {time.perf_counter() - t0:.1f}s")
    if DRY:
        print(f"dry run: {len(_cubins)} variants compiled, {len(_needed)} uses")
        return
    for i, (name, steps) in enumerate(phases):
        REMAINING[:] = [n for n, _ in phases[i + 1 :]]
        t = time.perf_counter()
        for step in steps:
            if not (QUICK and step.__name__.startswith("t_")):
                guarded(step)
                sync()
        log(f"phase {name}: {time.perf_counter() - t:.1f}s")
    report()


if __name__ == "__main__":
    main()
