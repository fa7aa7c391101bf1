"""Device check for issue 17 (never part of gpukit): the preemptible sm_90a GEMM
(kernels/gemm_sm90.cu, GK_GEMM_PREEMPT=1) against the plain one, through devkit.

1. bit-exactness: plain vs preemptible (flag never raised) vs preempted at random points
   (flag raised/lowered by cuStreamWriteValue32 on a high-priority stream, relaunches ordered by
   cuStreamWaitValue32 on the best-effort stream), out poisoned first;
2. preemption latency: event before the flag's raise -> event after the kernel's exit;
3. a service model: critical 2048^3 bf16 + sync every 1 ms / 0.3 ms, beside floods (preemptible
   8192^3; plain 8192^3 on a low-priority stream; torch's priority streams with cuBLAS).
Prints a table last; full log and JSON under $OUT."""

from __future__ import annotations

import ctypes
import json
import math
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
os.environ.setdefault("GK_KERNELS", os.path.join(HERE, "kernels"))
import devkit as dk  # noqa: E402
import torch  # noqa: E402

OUT = os.environ.get("OUT") or "/tmp/qos_out"
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "log.txt"), "w")  # noqa: SIM115
RESULTS: dict = {}
SLOTS = 4
ROUNDS = 3  # relaunches queued behind each best-effort product


def log(*a):
    print(*a, file=LOG, flush=True)


cu = dk.cuda()
CTX = ctypes.c_void_p()
cu.cuCtxGetCurrent(ctypes.byref(CTX))


def bind_context():
    """The driver's context on a new thread (torch binds it lazily)."""
    dk.check(cu.cuCtxSetCurrent(CTX), "cuCtxSetCurrent")


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


SMS = torch.cuda.get_device_properties(0).multi_processor_count
ARCH = dk.device_arch()
with open(os.path.join(os.environ["GK_KERNELS"], "gemm_sm90.cu")) as f:
    SRC = f.read()
_fns: dict = {}
CUBINS: dict = {}


def stages(bm, bn):
    stage = (bm + bn) * 128
    n = min(8, 230400 // stage)
    return n, n * stage + 2048


def kernel(bm, bn, wait1, preempt):
    key = (bm, bn, wait1, preempt)
    if key not in _fns:
        st, smem = stages(bm, bn)
        opts = [
            "-DGK_GEMM_TYPE=2",
            f"-DGK_GEMM_BM={bm}",
            f"-DGK_GEMM_BN={bn}",
            f"-DGK_GEMM_STAGES={st}",
            f"-DGK_GEMM_SMEM={smem}",
            "-DGK_A_MN=0",
            "-DGK_B_MN=0",
            f"-DGK_GEMM_WAIT1={int(wait1)}",
            "-DGK_EPI_BIAS=0",
            "-DGK_EPI_ACT=0",
            "-DGK_EPI_RESIDUAL=0",
            f"-DGK_GEMM_PREEMPT={int(preempt)}",
        ]
        t0 = time.time()
        cubin = CUBINS.get(key) or dk.compile(SRC, "gemm_sm90.cu", opts, arch=ARCH)
        mod = dk.Module(cubin)
        fn = mod.function("gk_gemm_sm90", dynamic_smem=smem)
        off, size = ctypes.c_size_t(), ctypes.c_size_t()
        layout = []
        for i in range(3):
            dk.check(
                cu.cuFuncGetParamInfo(
                    fn, ctypes.c_size_t(i), ctypes.byref(off), ctypes.byref(size)
                ),
                "cuFuncGetParamInfo",
            )
            layout.append((off.value, size.value))
        log(f"compiled {key} in {time.time() - t0:.1f}s params {layout}")
        _fns[key] = (mod, fn, layout, smem)
    return _fns[key]


def write_value(stream, ptr, value):
    dk.check(
        cu.cuStreamWriteValue32_v2(
            ctypes.c_void_p(stream), ctypes.c_uint64(ptr), ctypes.c_uint32(value), ctypes.c_uint(0)
        ),
        "write",
    )


def wait_value(stream, ptr, value):
    dk.check(
        cu.cuStreamWaitValue32_v2(
            ctypes.c_void_p(stream), ctypes.c_uint64(ptr), ctypes.c_uint32(value), ctypes.c_uint(1)
        ),
        "wait",
    )


class Gemm:
    """out (m, n) = a (m, k) @ w (n, k).T on gk_gemm_sm90 (bf16, K-major operands)."""

    def __init__(self, a, w, out, flags, counter, preempt, tile=(128, 256)):
        m, k = a.shape
        n = w.shape[0]
        bm, bn = tile
        k_tiles = -(-k // 64)
        self.wait1 = k_tiles <= 64
        self.mod, self.fn, layout, self.smem = kernel(bm, bn, self.wait1, preempt)
        (at_a, _), (at_b, _), (at_args, size) = layout
        assert size == 144, size
        tiles_m, tiles_n = -(-m // bm), -(-n // bn)
        self.total = tiles_m * tiles_n
        self.grid = min(self.total, SMS)
        ma = dk.tensor_map_tiled(
            9, 3, a.data_ptr(), (k, m, 1), (k * 2, -(-(m * k * 2) // 16) * 16), (64, bm, 1)
        )
        mb = dk.tensor_map_tiled(
            9, 3, w.data_ptr(), (k, n, 1), (k * 2, -(-(n * k * 2) // 16) * 16), (64, bn, 1)
        )
        args = dk.pack(
            "6Q7q10i",
            out.data_ptr(),
            0,
            0,
            0,
            flags.data_ptr(),
            counter.data_ptr(),
            m,
            n,
            n,
            0,
            0,
            0,
            0,
            1,
            1,
            k_tiles,
            k_tiles,
            tiles_m,
            tiles_n,
            self.total,
            0,
            0,
            1,
        )
        blob = bytearray(max(at_args + len(args), at_b + 128))
        blob[at_a : at_a + 128] = ma
        blob[at_b : at_b + 128] = mb
        blob[at_args : at_args + len(args)] = args
        self.blob = bytes(blob)
        self.flags, self.counter = flags, counter
        self.flops = 2 * m * n * k

    def launch(self, stream):
        dk.launch(self.fn, (self.grid,), (384,), self.smem, self.blob, stream)

    def wait_lowered(self, stream):
        for s in range(SLOTS):
            wait_value(stream, self.flags.data_ptr() + 4 * s, 0)

    def start(self, stream, rounds=ROUNDS):
        """Counter reset, the first launch, then `rounds` relaunches each behind the flag's
        lowering (a relaunch of a finished product takes no tile)."""
        write_value(stream, self.counter.data_ptr(), 0)
        self.wait_lowered(stream)
        self.launch(stream)
        for _ in range(rounds):
            self.wait_lowered(stream)
            self.launch(stream)

    def finish(self, s):
        """Host side, on torch stream `s`: relaunches until every tile is taken (waits for
        everything queued on s); returns the relaunches added."""
        added = 0
        while True:
            ev = torch.cuda.Event()
            ev.record(s)
            ev.synchronize()
            if int(self.counter.item()) >= self.total:
                return added
            self.wait_lowered(s.cuda_stream)
            self.launch(s.cuda_stream)
            added += 1


def stream_sync(s):
    dk.check(cu.cuStreamSynchronize(ctypes.c_void_p(s)), "sync")


def bits(t):
    return t.view(torch.int16)


def poisoned(m, n):
    return torch.randint(-32768, 32767, (m, n), dtype=torch.int16, device="cuda").view(
        torch.bfloat16
    )


def check_exact():
    torch.manual_seed(1)
    rows = []
    for m, n, k, tile in [
        (8192, 8192, 8192, (128, 256)),
        (1000, 1544, 1000, (128, 128)),
        (2048, 2048, 2048, (128, 256)),
    ]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        flags = torch.zeros(SLOTS, dtype=torch.int32, device="cuda")
        counter = torch.zeros(1, dtype=torch.int32, device="cuda")
        ref = poisoned(m, n)
        plain = Gemm(a, w, ref, flags, counter, False, tile)
        plain.launch(torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        ref64 = a.double() @ w.double().T
        err = ((ref.double() - ref64).abs().max() / ref64.abs().max()).item()
        hi = torch.cuda.Stream(priority=-1)
        lo = torch.cuda.Stream(priority=0)
        ok = preempted = 0
        relaunch_extra = 0
        trials = 24 if m == 8192 else 16
        plain_ms = dk.time_ms(lambda p=plain: p.launch(torch.cuda.current_stream().cuda_stream))
        for trial in range(trials + 1):
            out = poisoned(m, n)
            g = Gemm(a, w, out, flags, counter, True, tile)
            torch.cuda.synchronize()
            snap = torch.zeros(1, dtype=torch.int32, device="cuda")
            if trial == trials:  # never raised: the preemptible form alone
                g.start(lo.cuda_stream, rounds=0)
            else:
                slot = flags.data_ptr() + 4 * (trial % SLOTS)
                write_value(lo.cuda_stream, counter.data_ptr(), 0)
                g.wait_lowered(lo.cuda_stream)
                g.launch(lo.cuda_stream)
                with torch.cuda.stream(lo):
                    snap.copy_(counter)
                spin(float(torch.rand(1)) * plain_ms * 1.2e-3)  # the raise at a random point
                write_value(hi.cuda_stream, slot, 1)
                spin(float(torch.rand(1)) * 2e-4)
                write_value(hi.cuda_stream, slot, 0)
                for _ in range(ROUNDS):
                    g.wait_lowered(lo.cuda_stream)
                    g.launch(lo.cuda_stream)
            relaunch_extra += g.finish(lo)
            torch.cuda.synchronize()
            if trial < trials and int(snap.item()) < g.total:
                preempted += 1
            ok += int(torch.equal(bits(out), bits(ref)))
        row = dict(
            shape=f"{m}x{n}x{k}",
            tile=tile,
            rel_err_vs_f64=err,
            trials=trials + 1,
            bit_exact=ok,
            preempted=preempted,
            host_relaunches=relaunch_extra,
        )
        log("exact", row)
        rows.append(row)
    RESULTS["exact"] = rows
    return rows


def latency_and_cost():
    torch.manual_seed(2)
    m = n = k = 8192
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    flags = torch.zeros(SLOTS, dtype=torch.int32, device="cuda")
    counter = torch.zeros(1, dtype=torch.int32, device="cuda")
    plain = Gemm(a, w, out, flags, counter, False)
    pre = Gemm(a, w, out, flags, counter, True)
    cur = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    t_plain = dk.time_ms(lambda: plain.launch(cur()))
    t_pre = dk.time_ms(lambda: (write_value(cur(), counter.data_ptr(), 0), pre.launch(cur())))
    t_pre4 = dk.time_ms(lambda: pre.start(cur()))  # with 3 empty relaunches queued
    write_value(cur(), counter.data_ptr(), 1 << 30)  # taken: relaunches find nothing
    t_empty = dk.time_ms(lambda: pre.launch(cur()), reps=50)
    t_waits = dk.time_ms(lambda: pre.wait_lowered(cur()), reps=50)
    t_round = dk.time_ms(lambda: (pre.wait_lowered(cur()), pre.launch(cur())), reps=50)
    RESULTS["relaunch_us"] = dict(
        empty_launch=t_empty * 1e3, four_waits=t_waits * 1e3, round=t_round * 1e3
    )
    log("relaunch", RESULTS["relaunch_us"])
    RESULTS["cost"] = dict(
        plain_ms=t_plain,
        preemptible_ms=t_pre,
        preemptible_3_relaunches_ms=t_pre4,
        plain_tflops=pre.flops / t_plain / 1e9,
        preemptible_tflops=pre.flops / t_pre / 1e9,
    )
    log("cost", RESULTS["cost"])
    hi = torch.cuda.Stream(priority=-1)
    lo = torch.cuda.Stream(priority=0)
    lat = []
    for i in range(100):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        write_value(lo.cuda_stream, counter.data_ptr(), 0)
        pre.launch(lo.cuda_stream)
        e1.record(lo)
        spin(1e-4 + (i % 50) / 50 * 1.1e-3)
        e0.record(hi)
        write_value(hi.cuda_stream, flags.data_ptr(), 1)
        spin(1e-4)
        write_value(hi.cuda_stream, flags.data_ptr(), 0)
        torch.cuda.synchronize()
        done = int(counter.item())
        pre.finish(lo)
        if done < pre.total:  # it was preempted (not finished before the raise)
            lat.append(e0.elapsed_time(e1) * 1000.0)
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float("nan")  # noqa: E731
    RESULTS["latency_us"] = dict(
        n=len(lat),
        p50=q(0.5),
        p90=q(0.9),
        p99=q(0.99),
        min=lat[0] if lat else None,
        max=lat[-1] if lat else None,
        all=lat,
        tile_ms=t_plain / math.ceil(pre.total / SMS),
    )
    log("latency", RESULTS["latency_us"])


# --- the service model ---------------------------------------------------------------------------


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def service(name, period_s, crit_fn, flood_fn, seconds=1.2):
    """Critical requests every period_s (crit_fn(): enqueue + sync, returns nothing), a flood
    thread (flood_fn(stop) -> flops done) beside it; latency from the request's start to the
    sync's return."""
    stop = threading.Event()
    done = {}

    def flood():
        bind_context()
        done["flops"] = flood_fn(stop) if flood_fn else 0

    th = threading.Thread(target=flood)
    th.start()
    time.sleep(0.05)
    lat = []
    t0 = time.perf_counter()
    nxt = t0
    while time.perf_counter() - t0 < seconds:
        while time.perf_counter() < nxt:
            time.sleep(0)
        s = time.perf_counter()
        crit_fn()
        lat.append((time.perf_counter() - s) * 1e6)
        nxt += period_s
        if nxt < time.perf_counter():
            nxt = time.perf_counter()
    elapsed = time.perf_counter() - t0
    stop.set()
    th.join()
    torch.cuda.synchronize()
    lat = lat[5:]
    return dict(
        name=name,
        period_us=period_s * 1e6,
        p50=percentile(lat, 0.5),
        p99=percentile(lat, 0.99),
        n=len(lat),
        flood_tflops=done["flops"] / (elapsed + 0.05) / 1e12,
    )


def service_runs():
    torch.manual_seed(3)
    hi = torch.cuda.Stream(priority=-1)
    lo = torch.cuda.Stream(priority=0)
    flags = torch.zeros(SLOTS, dtype=torch.int32, device="cuda")
    ca = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    cw = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    cout = torch.empty(2048, 2048, device="cuda", dtype=torch.bfloat16)
    ccount = torch.zeros(1, dtype=torch.int32, device="cuda")
    crit = Gemm(ca, cw, cout, flags, ccount, False)
    fa = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    fw = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    fouts = [torch.empty(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    fcounts = [torch.zeros(1, dtype=torch.int32, device="cuda") for _ in range(3)]
    big = torch.empty(256 << 20, device="cuda", dtype=torch.float32)
    big2 = torch.empty_like(big)

    def crit_gk(raise_flag):
        def go():
            if raise_flag:
                write_value(hi.cuda_stream, flags.data_ptr(), 1)
            crit.launch(hi.cuda_stream)
            if raise_flag:
                write_value(hi.cuda_stream, flags.data_ptr(), 0)
            stream_sync(hi.cuda_stream)

        return go

    def crit_torch():
        with torch.cuda.stream(hi):
            torch.matmul(ca, cw.T, out=cout)
        hi.synchronize()

    def flood_gk(preempt):
        def go(stop):
            gs = [Gemm(fa, fw, fouts[i], flags, fcounts[i], preempt) for i in range(3)]
            evs = [None] * 3
            flops = 0
            i = 0
            while not stop.is_set():
                j = i % 3
                if evs[j] is not None:
                    evs[j].synchronize()
                    if preempt and int(fcounts[j].item()) < gs[j].total:
                        gs[j].finish(lo)  # the queued relaunches did not suffice
                    flops += gs[j].flops
                if preempt:
                    gs[j].start(lo.cuda_stream)
                else:
                    gs[j].launch(lo.cuda_stream)
                evs[j] = torch.cuda.Event()
                evs[j].record(lo)
                i += 1
            return flops

        return go

    def flood_torch(stop):
        flops = 0
        evs = []
        while not stop.is_set():
            with torch.cuda.stream(lo):
                torch.matmul(fa, fw.T, out=fouts[0])
            e = torch.cuda.Event()
            e.record(lo)
            evs.append(e)
            if len(evs) > 2:
                evs.pop(0).synchronize()
                flops += 2 * 8192**3
        return flops

    def flood_mem(stop):
        moved = 0
        evs = []
        while not stop.is_set():
            with torch.cuda.stream(lo):
                big2.copy_(big)
            e = torch.cuda.Event()
            e.record(lo)
            evs.append(e)
            if len(evs) > 2:
                evs.pop(0).synchronize()
                moved += 2 * big.numel() * 4
        return moved * 1e12 / 1e12  # bytes (reported in the tflops column as TB)

    rows = RESULTS.setdefault("service", [])
    # Solo figures first.
    for period in (1e-3, 0.3e-3):
        rows.append(service("gk critical solo", period, crit_gk(False), None))
        rows.append(service("gk critical solo, flag raised", period, crit_gk(True), None))
        rows.append(service("torch critical solo", period, crit_torch, None))
    for name, fl in (
        ("gk preemptible flood", flood_gk(True)),
        ("gk plain flood", flood_gk(False)),
        ("torch flood", flood_torch),
        ("copy flood (TB/s col)", flood_mem),
    ):
        stop = threading.Event()
        timer = threading.Timer(0.8, stop.set)
        t0 = time.perf_counter()
        timer.start()
        amount = fl(stop)
        torch.cuda.synchronize()
        torch.cuda.synchronize()
        rows.append(
            dict(
                name=f"{name} solo",
                period_us=0,
                p50=0.0,
                p99=0.0,
                n=0,
                flood_tflops=amount / (time.perf_counter() - t0) / 1e12,
            )
        )
    for period in (1e-3, 0.3e-3):
        rows.append(service("gk crit + preemptible flood", period, crit_gk(True), flood_gk(True)))
        rows.append(
            service(
                "gk crit + plain flood (priority only)", period, crit_gk(False), flood_gk(False)
            )
        )
        rows.append(service("torch crit + torch flood (priority)", period, crit_torch, flood_torch))
        rows.append(service("gk crit + copy flood (TB/s col)", period, crit_gk(True), flood_mem))
    for r in rows:
        log("service", r)


def precompile():
    import concurrent.futures as cf

    keys = [
        (bm, bn, w1, pre)
        for bm, bn, w1 in ((128, 256, False), (128, 128, True), (128, 256, True))
        for pre in (False, True)
    ]
    srcs = {}

    def one(key):
        bm, bn, wait1, preempt = key
        st, smem = stages(bm, bn)
        opts = [
            "-DGK_GEMM_TYPE=2",
            f"-DGK_GEMM_BM={bm}",
            f"-DGK_GEMM_BN={bn}",
            f"-DGK_GEMM_STAGES={st}",
            f"-DGK_GEMM_SMEM={smem}",
            "-DGK_A_MN=0",
            "-DGK_B_MN=0",
            f"-DGK_GEMM_WAIT1={int(wait1)}",
            "-DGK_EPI_BIAS=0",
            "-DGK_EPI_ACT=0",
            "-DGK_EPI_RESIDUAL=0",
            f"-DGK_GEMM_PREEMPT={int(preempt)}",
        ]
        srcs[key] = dk.compile(SRC, "gemm_sm90.cu", opts, arch=ARCH)

    t0 = time.time()
    with cf.ThreadPoolExecutor(6) as ex:
        list(ex.map(one, keys))
    CUBINS.update(srcs)
    log(f"precompiled {len(keys)} in {time.time() - t0:.1f}s")


def report():
    with open(os.path.join(OUT, "qos.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)
    print("== exact")
    for r in RESULTS.get("exact", []):
        print(r)
    print("== cost", RESULTS.get("cost"))
    lat = dict(RESULTS.get("latency_us", {}))
    lat.pop("all", None)
    print("== preemption latency us", lat)
    print("== service (period us, p50 us, p99 us, flood TFLOP/s)")
    for r in RESULTS.get("service", []):
        print(
            f"{r['name']:<42} {r['period_us']:>7.0f} {r['p50']:>8.1f} {r['p99']:>8.1f} "
            f"{r['flood_tflops']:>8.2f}"
        )
    for k, v in RESULTS.items():
        if k.endswith("_error"):
            print("ERROR", k, v)
    sys.stdout.flush()


def watchdog():
    log("WATCHDOG: out of time")
    RESULTS["watchdog"] = "out of time"
    report()
    os._exit(3)


def main():
    threading.Timer(float(os.environ.get("QOS_LIMIT_S", "150")), watchdog).start()
    log("device", torch.cuda.get_device_name(0), "sms", SMS, "arch", ARCH)
    precompile()
    for step in (check_exact, latency_and_cost, service_runs):
        try:
            step()
        except Exception as e:  # keep what the other steps measured
            import traceback

            log("FAILED", step.__name__, traceback.format_exc())
            RESULTS[step.__name__ + "_error"] = repr(e)
    report()
    os._exit(0)


if __name__ == "__main__":
    main()
