"""SASS of the exact float32 GEMM's 4096^3 instance (row-major `a @ b`: a contiguous along k, b
along n, 16-byte loads, no epilogue, unsplit) for this checkout's kernels/gemm_f32.cu and the
kernel files given, compiled here with NVRTC for sm_90 (no GPU): registers, stack, the K loop's
length, FFMA and other instructions by opcode, and where its LDG / STS / BAR / LDS sit.

    GPUKIT_NVRTC_PATH=.../libnvrtc.so.13 .venv/bin/python notes/f32_sass.py [file.cu ...] \
        [--layout a_mn,b_mn,vec] [--split] [--dump DIR]

--dump writes each variant's K loop (one instruction a line) to DIR/<name>.loop.txt and the
whole kernel to DIR/<name>.sass.txt for diffing.
"""

import argparse
import collections
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu"))
from memory_bound_sass import patched_sources, tool, usage_and_sass
from test_gemm_kernels import k_loop

from gpukit.runtime import jit, kernels


def opcode(ins: str) -> str:
    ins = re.sub(r"^@!?U?P\w+\s+", "", ins.strip())
    return ins.split()[0] if ins else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--layout", default="0,1,1")
    ap.add_argument("--dump")
    ap.add_argument("--split", action="store_true", help="the split-K instance")
    ap.add_argument("--define", action="append", default=[], help="extra NAME=VALUE")
    args = ap.parse_args()
    base = patched_sources({})
    variants = {"main": base["gemm_f32.cu"]}
    for path in args.files:
        variants[Path(path).stem] = (
            Path(path).read_text().replace("gk_gemm_f32_args", "gk_gemm_args")
        )
    layout = [bool(int(x)) for x in args.layout.split(",")]
    compiler = jit.open_compiler("nvrtc")[0]
    print("NVRTC", compiler.version, "layout a_mn,b_mn,vec =", layout)
    j = jit.Jit(compiler, ["--gpu-architecture=sm_90"])
    obj = tool("cuobjdump")
    for name, src in variants.items():
        jit._SOURCES = {**base, "gemm_f32.cu": src}
        file, defines = kernels.gemm_f32(*layout, split=args.split)
        defines = (*defines, *args.define)
        funcs, bodies = usage_and_sass(obj, j.build_builtin(file, defines))
        body = bodies["gk_gemm_f32"]
        loop = k_loop(body)
        ops = collections.Counter(opcode(i) for i in loop)
        regs = re.search(r"REG:(\d+)", funcs["gk_gemm_f32"]).group(1)
        stack = re.search(r"STACK:(\d+)", funcs["gk_gemm_f32"]).group(1)
        local = sum(1 for i in body.splitlines() if re.search(r"\b(LDL|STL)\b", i))
        total = len(re.findall(r"/\*[0-9a-f]{4}\*/\s+[^;]*;", body))

        print(f"\n== {name}: regs {regs} stack {stack} LDL/STL {local} kernel instr {total}")
        print(f"K loop {len(loop)} instr, FFMA {ops['FFMA']} ({ops['FFMA'] / len(loop):.1%}), "
              f"non-FFMA {len(loop) - ops['FFMA']}")  # fmt: skip
        print("  non-FFMA:", dict(sorted((k, v) for k, v in ops.items() if k != "FFMA")))
        for op in ("LDG", "STS", "BAR", "LDS"):
            print(f"  {op} at", [n for n, i in enumerate(loop) if op in opcode(i)])
        if args.dump:
            d = Path(args.dump)
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{name}.loop.txt").write_text("\n".join(i.strip() for i in loop) + "\n")
            (d / f"{name}.sass.txt").write_text(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
