"""gk_fft_rows compiled here (no GPU) from a checkout's kernels/ with NVRTC for sm_90: registers,
stack, local memory (LDL / STL), the SASS instruction count in all and by kind, for the instances
the planner launches for complex64 4096 x 4096 along the last axis and the two passes of 2^24.

    .venv/bin/python notes/fft_sass.py [--kernels DIR] [--old] [--dump LABEL] [--arch sm_90]

--kernels: another checkout's kernels/ (default this one's); --old: that checkout's fft.cu takes
only the six geometry defines (the kernel before fft_plan.Flow, e.g. main's: git worktree or
`git show main:kernels/fft.cu` beside the other files).
"""

import argparse
import collections
import glob
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_bound_sass import cuobjdump, tool

from gpukit.runtime import fft_plan, jit

ROOT = Path(__file__).resolve().parents[1]


def cases(old: bool):
    """(label, defines) of gk_fft_rows for the three timed cases: the balanced split's passes
    (2^24 = 4096 x 4096) and the short split's (2^24 = 256 x 256 x 256, 2^25 = 256 x 256 x
    512)."""

    def d(n, item, columns, batch, flow):
        blk = fft_plan.block(n, item, columns, batch)
        real = "float" if item == 8 else "double"
        return fft_plan.defines(blk, real, flow)[:6] if old else fft_plan.defines(blk, real, flow)

    f = fft_plan.Flow
    return [
        ("c64 4096 rows (one pass)", d(4096, 8, False, 4096, f())),
        ("balanced: c64 4096 columns (2^24 pass 1)",
         d(4096, 8, True, 4096, f(direct_in=False, direct_out=False, twiddled=True, ndim=2))),
        ("balanced: c64 4096 rows (2^24 pass 2)",
         d(4096, 8, True, 4096, f(direct_out=False, ndim=2))),
        ("balanced: c64 8192 rows (2^25 pass 2)",
         d(8192, 8, True, 4096, f(direct_out=False, ndim=2))),
        ("c64 8192 rows (one pass)", d(8192, 8, False, 1, f())),
        ("c128 4096 inverse", d(4096, 16, False, 64, f(conj_in=True, conj_out=True, scaled=True))),
        ("short: c64 256 columns (2^24 pass 1)",
         d(256, 8, True, 65536, f(direct_in=False, direct_out=False, twiddled=True, ndim=2))),
        ("short: c64 256 columns (2^24 pass 2)",
         d(256, 8, True, 256, f(direct_in=False, direct_out=False, twiddled=True, ndim=3))),
        ("short: c64 256 rows (2^24 pass 3)", d(256, 8, True, 256, f(direct_out=False, ndim=3))),
        ("short: c64 512 rows (2^25 pass 3)", d(512, 8, True, 256, f(direct_out=False, ndim=3))),
        ("short: c128 256 columns (pass 1)",
         d(256, 16, True, 65536, f(direct_in=False, direct_out=False, twiddled=True, ndim=2))),
    ]  # fmt: skip


def executed(sass: str, defines) -> int:
    """About the instructions a thread runs: the static count plus, for each loop that copies
    strided rows (a backward branch over LDG or STG: kernels/fft.cu's copies, unrolled by 8),
    its body once more per further trip (ceil(kCopies / 8) trips). The table fills' loops run
    about once a thread and count once."""
    d = dict(x.split("=", 1) for x in defines)
    rows, threads = int(d["GK_FFT_ROWS"]), int(d["GK_FFT_THREADS"])
    copies = -(-int(d["GK_FFT_N"]) // (threads // rows))
    lines = re.findall(r"/\*([0-9a-f]{4})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*)", sass)
    at = [(int(a, 16), op, rest) for a, _, op, rest in lines]
    total = len(at)
    for addr, op, rest in at:
        m = re.match(r"\s*(0x[0-9a-f]+)", rest)
        if op == "BRA" and m and int(m[1], 16) < addr:
            body = [o for a, o, _ in at if int(m[1], 16) <= a <= addr]
            if any(o.startswith(("LDG", "STG")) for o in body):
                total += len(body) * (-(-copies // 8) - 1)
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=str(ROOT / "kernels"))
    ap.add_argument("--old", action="store_true")
    ap.add_argument("--dump")
    ap.add_argument("--arch", default="sm_90", help="sm_80, sm_89, sm_90, ...")
    args = ap.parse_args()
    jit._SOURCES = {os.path.basename(p): Path(p).read_text()
                    for p in glob.glob(os.path.join(args.kernels, "*"))}  # fmt: skip
    j = jit.Jit(jit.open_compiler("nvrtc")[0], [f"--gpu-architecture={args.arch}"])
    objdump = tool("cuobjdump")
    for label, defines in cases(args.old):
        res, sass = cuobjdump(objdump, j.build_builtin("fft.cu", defines))
        usage = re.search(r"REG:(\d+) STACK:(\d+)", res)
        ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", sass)
        run = executed(sass, defines)
        kinds = collections.Counter(op for _, op in ops)
        local = kinds["LDL"] + kinds["STL"]
        top = ", ".join(f"{k} {v}" for k, v in kinds.most_common(12))
        blk = dict(x.split("=", 1) for x in defines)
        per = int(blk["GK_FFT_N"]) * int(blk["GK_FFT_ROWS"]) / int(blk["GK_FFT_THREADS"])
        print(f"{label:38s} REG {usage[1]} STACK {usage[2]} instr {len(ops)} (~{run} run, "
              f"{run / per:.0f} an element) threads {blk['GK_FFT_THREADS']} rows "
              f"{blk['GK_FFT_ROWS']}"
              f"{' LOCAL MEMORY' if local else ''}\n    {top}")  # fmt: skip
        if args.dump and args.dump in label:
            print(sass)


if __name__ == "__main__":
    main()
