"""gk_ew_contig's grid per op: the shipped cap (GK_EW_BLOCKS_PER_SM blocks an SM, grid-stride)
against a one-shot grid (a block per 256 vectors), for every float elementwise op, float32 and
bfloat16, 64M elements, torch beside the main ones and a device copy as the limit. Since the op
table's long_math flag, GK_EW_BLOCKS_PER_SM caps only those ops: a run now compares the shipped
choice (EW_CAPS=32) with the one-shot grid for them. Run after scripts/gpu_machine.sh installed
gpukit: PYTHONPATH=/tmp/gpukit-site python3 notes/ew_grid_probe.py"""

import importlib
import json
import os
import time

import numpy as np

import gpukit as gk
from gpukit import nn
from gpukit.runtime import ops
from gpukit.runtime.args import CONSTANTS

N = int(os.environ.get("EW_N", 64 * 2**20))
BASE = CONSTANTS["GK_EW_BLOCKS_PER_SM"]
skip = {
    "logical_not",
    "invert",
    "signbit",
    "isnan",
    "isinf",
    "isfinite",
    "conjugate",
    "angle",
    "floor_divide",
    "remainder",
    "gcd",
    "lcm",
    "left_shift",
    "right_shift",
    "nextafter",
    "ldexp",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "logical_and",
    "logical_or",
    "logical_xor",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "where",
    "clip",
    "float_power",
    "positive",
    "silu_mul",
}
names = [
    (o.name, o.arity, o.namespace)
    for o in ops.ELEMENTWISE.values()
    if o.namespace != "internal" and o.name not in skip
]


def clear():
    gk.synchronize()
    importlib.import_module("gpukit.array")._PLANS.clear()
    importlib.import_module("gpukit.elementwise")._ENTRIES.clear()


def t_ms(fn, reps=10, rounds=3):
    fn()
    fn()
    gk.synchronize()
    ts = []
    for _ in range(rounds):
        a = gk.Event().record()
        for _ in range(reps):
            fn()
        b = gk.Event().record()
        b.synchronize()
        ts.append(a.elapsed_ms(b) / reps)
    return sorted(ts)[len(ts) // 2]


rng = np.random.default_rng(1)
host = rng.random(N, dtype=np.float32) + 0.5
xs = {dt: gk.asarray(host).astype(dt) for dt in ("float32", "bfloat16")}
ys = {dt: gk.asarray(host[::-1].copy()).astype(dt) for dt in ("float32", "bfloat16")}
res = []
copy_ms = t_ms(lambda: xs["float32"].copy())
copy_gbs = 2 * 4 * N / copy_ms / 1e6
print(f"copy f32 {copy_gbs:.0f} GB/s", flush=True)
t0 = time.time()
for cap in [int(c) for c in os.environ.get("EW_CAPS", f"{BASE},{1 << 20}").split(",")]:
    CONSTANTS["GK_EW_BLOCKS_PER_SM"] = cap
    clear()
    for name, arity, ns in names:
        f = (
            (lambda x: nn.gelu(x, approximate="tanh"))
            if name == "gelu_tanh"
            else getattr(nn if ns == "nn" else gk, name)
        )
        for dt in ("float32", "bfloat16"):
            x, y = xs[dt], ys[dt]
            fn = (lambda f=f, x=x: f(x)) if arity == 1 else (lambda f=f, x=x, y=y: f(x, y))
            try:
                ms = t_ms(fn)
            except Exception as e:
                print(name, dt, "failed", type(e).__name__, str(e)[:100])
                continue
            item = np.dtype(x.dtype.name if dt == "float32" else "uint16").itemsize
            gbs = (arity + 1) * item * N / ms / 1e6
            res.append({"op": name, "dtype": dt, "cap": cap, "ms": ms, "GBs": gbs})
    print(f"cap {cap} done at {time.time() - t0:.0f} s", flush=True)
CONSTANTS["GK_EW_BLOCKS_PER_SM"] = BASE
clear()
torch_rows = {}
try:
    import torch

    tx = {
        "float32": torch.from_numpy(host).cuda(),
    }
    tx["bfloat16"] = tx["float32"].bfloat16()
    ty = {k: v.flip(0).contiguous() for k, v in tx.items()}
    tf = {
        "exp": torch.exp,
        "gelu": torch.nn.functional.gelu,
        "silu": torch.nn.functional.silu,
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
        "add": torch.add,
        "multiply": torch.mul,
        "sqrt": torch.sqrt,
        "log": torch.log,
        "relu": torch.relu,
        "erf": torch.erf,
        "sin": torch.sin,
    }
    for name, f in tf.items():
        for dt in ("float32", "bfloat16"):
            ar = 2 if name in ("add", "multiply") else 1
            fn = (
                (lambda f=f, x=tx[dt]: f(x))
                if ar == 1
                else (lambda f=f, x=tx[dt], y=ty[dt]: f(x, y))
            )
            fn()
            torch.cuda.synchronize()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            ts = []
            for _ in range(3):
                s.record()
                for _ in range(10):
                    fn()
                e.record()
                e.synchronize()
                ts.append(s.elapsed_time(e) / 10)
            ms = sorted(ts)[1]
            torch_rows[(name, dt)] = (ar + 1) * tx[dt].element_size() * N / ms / 1e6
except Exception as e:
    print("torch:", e)
by = {}
for r in res:
    by.setdefault((r["op"], r["dtype"]), {})[r["cap"]] = r["GBs"]
print(
    f"\n{'op':14s} {'dtype':9s} {'cap' + str(BASE):>8s} {'oneshot':>8s} {'ratio':>6s} {'torch':>8s}"
)
for (op, dt), v in by.items():
    a, b = v.get(BASE), v.get(1 << 20)
    t = torch_rows.get((op, dt))
    torch_cell = "" if t is None else f"{t:8.0f}"
    print(f"{op:14s} {dt:9s} {a or 0:8.0f} {b or 0:8.0f} {(b or 0) / (a or 1):6.3f} {torch_cell}")
with open(os.path.join(os.environ.get("OUT", "."), "ew_grid_probe.json"), "w") as out:
    json.dump(
        {
            "copy_GBs": copy_gbs,
            "rows": res,
            "torch": {f"{k[0]} {k[1]}": v for k, v in torch_rows.items()},
        },
        out,
        indent=1,
    )
