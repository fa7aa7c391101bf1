"""Issue 14's kernels compiled here (no GPU) from this checkout's kernels/ (not the installed
copy): NVRTC for sm_90, then each kernel's registers, shared memory, stack and spills, and its
SASS checked for 16-byte global accesses (LDG.E.128 / STG.E.128 / LDGSTS.E.BYPASS.128) and no
local memory (LDL / STL).

    .venv/bin/python notes/memory_bound_sass.py [--define NAME=VALUE ...] [--dump KERNEL] [only]

--define patches a #define of kernels/*.cu or geometry.cuh (as memory_bound_sweep.py's variants
do); `only` picks instances whose label contains it.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from gpukit.base.dtypes import bfloat16
from gpukit.runtime import jit, kernels

ROOT = Path(__file__).resolve().parents[1]
F32, BF16 = np.dtype("float32"), bfloat16


def instances():
    """(label, file, defines, kernels to check) of what issue 14's rows time."""
    ew = [
        ("exp f32", kernels.elementwise("exp", F32, F32, (F32,))),
        ("gelu bf16", kernels.elementwise("gelu", BF16, BF16, (BF16,))),
        ("add f32", kernels.elementwise("add", F32, F32, (F32, F32))),
    ]
    rows = [
        ("softmax f32", kernels.nn_rows(F32), "gk_softmax_rows"),
        ("log_softmax f32", kernels.nn_rows(F32), "gk_log_softmax_rows"),
        ("layer_norm bf16", kernels.nn_rows(BF16), "gk_layer_norm_rows"),
        ("rms_norm bf16", kernels.nn_rows(BF16), "gk_rms_norm_rows"),
    ]
    out = [(label, *fd, ("gk_ew_contig",)) for label, fd in ew]
    out += [(label, *fd, (name, name + "_staged")) for label, fd, name in rows]
    for dtype, acc in ((F32, F32), (np.dtype("float64"), np.dtype("float64"))):
        out.append((f"cumsum {dtype}", *kernels.cumsum(dtype, acc), ("gk_scan_tiles",)))
    out.append(("cumsum i32", *kernels.cumsum(np.dtype("int32"), np.dtype("int64")),
                ("gk_scan_tiles",)))  # fmt: skip
    return out


def patched_sources(defines: dict) -> dict:
    """kernels/ of this checkout, with each `#define NAME value` of `defines` replaced."""
    sources = {}
    for path in glob.glob(str(ROOT / "kernels" / "*")):
        text = Path(path).read_text()
        for name, value in defines.items():
            text = re.sub(rf"(#define {name}) .*", rf"\1 {value}", text)
        sources[os.path.basename(path)] = text
    return sources


def tool(name):
    hits = [p for root in sys.path for p in glob.glob(f"{root}/nvidia/*/bin/{name}")]
    return hits[0]


def cuobjdump(objdump: str, image: bytes) -> tuple[str, str]:
    """cuobjdump's resource usage and SASS of a cubin, as text."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(image)
        f.flush()
        run = [subprocess.run([objdump, flag, f.name], capture_output=True, text=True, check=True)
               for flag in ("-res-usage", "-sass")]  # fmt: skip
        return run[0].stdout, run[1].stdout


def usage_and_sass(objdump: str, image: bytes) -> tuple[dict, dict]:
    """{kernel: its resource line} and {kernel: its SASS} of a cubin."""
    res, sass = cuobjdump(objdump, image)
    funcs = dict(re.findall(r"Function (\w+):\n\s*(REG:.*)", res))
    bodies = dict(re.findall(r"Function : (\w+)\n(.*?)(?=\n\s*Function : |\Z)", sass, re.S))
    return funcs, bodies


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--define", action="append", default=[])
    ap.add_argument("--dump", help="print the SASS of this kernel")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("only", nargs="?", default="")
    args = ap.parse_args()
    jit._SOURCES = patched_sources(dict(d.split("=", 1) for d in args.define))
    nvrtc = jit.open_compiler("nvrtc")[0]
    j = jit.Jit(nvrtc, [f"--gpu-architecture={args.arch}"])
    objdump = tool("cuobjdump")
    bad = 0
    for label, file, defines, names in instances():
        if args.only not in label:
            continue
        funcs, bodies = usage_and_sass(objdump, j.build_builtin(file, defines))
        for name in names:
            if name not in funcs:
                continue
            body = bodies[name]
            n_instr = len(re.findall(r"/\*[0-9a-f]{4}\*/", body))
            wide = sorted(set(re.findall(r"(LDG\S*128|STG\S*128|LDGSTS\S*128)", body)))
            local = re.findall(r"\b(LDL|STL)\b", body)
            bad += bool(local)
            print(f"{label:18s} {name:28s} {funcs[name]} instr={n_instr} wide={wide}"
                  f"{' LOCAL MEMORY' if local else ''}")  # fmt: skip
            if args.dump == name:
                print(body)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
