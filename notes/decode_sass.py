"""The decode variants of notes/decode_ab.py compiled here (no GPU) from this checkout's
kernels/: NVRTC for sm_90, each kernel's registers, shared memory and stack, and its SASS checked
for no local memory (LDL / STL), as notes/memory_bound_sass.py does for issue 14's kernels.

    .venv/bin/python notes/decode_sass.py
"""

import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decode_ab import SWEEP, VARIANTS
from memory_bound_sass import patched_sources, tool, usage_and_sass

from gpukit.runtime import jit, kernels


def main():
    jit._SOURCES = patched_sources({})
    j = jit.Jit(jit.open_compiler("nvrtc")[0], ["--gpu-architecture=sm_90"])
    objdump = tool("cuobjdump")
    bad = 0
    for name, tiles, _ in VARIANTS + SWEEP:
        for m_tiles in (1, 2):
            if m_tiles == 2 and tiles.stages * tiles.keys < 33:  # attention_decode_holds
                continue
            file, defines = kernels.attention_tc_decode("bf16", 128, "none", m_tiles, tiles)
            funcs, bodies = usage_and_sass(objdump, j.build_builtin(file, defines))
            for kernel in ("gk_attn_decode", "gk_attn_combine"):
                local = re.findall(r"\b(LDL|STL)\b", bodies[kernel])
                bad += bool(local)
                print(f"{name:12s} mt{m_tiles} {kernel:16s} {funcs[kernel]}"
                      f"{' LOCAL MEMORY' if local else ''}")  # fmt: skip
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
