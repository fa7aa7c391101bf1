"""SASS of gk_chol_small (sm_90 by default) for GK_LA_CHOL_LEAF 2 (the [A; I] leaf with the 64-row
copies in and out), 1 (it with the generic ones) and 0 (the 32 + 32 one), both dtypes:
instruction counts by kind, block / warp barriers, local memory. CPU only (NVRTC and pip's
cuobjdump). Usage: python notes/chol_leaf_sass.py [arch] [dumpdir]"""

import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

from gpukit.runtime import jit, kernels

arch = sys.argv[1] if len(sys.argv) > 1 else "sm_90"
dump = sys.argv[2] if len(sys.argv) > 2 else None
nvrtc = jit.open_compiler("nvrtc")[0]
j = jit.Jit(nvrtc, [f"--gpu-architecture={arch}"])
tool = next(p for root in sys.path for p in glob.glob(f"{root}/nvidia/*/bin/cuobjdump"))
env = {**os.environ, "PATH": os.path.dirname(tool) + os.pathsep + os.environ["PATH"]}
for dtype in ("float32", "float64"):
    file, defines = kernels.linalg_small(dtype)
    for leaf in (2, 1, 0):
        image = j.build_builtin(file, (*defines, f"GK_LA_CHOL_LEAF={leaf}"))
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(image)
            f.flush()
            sass = subprocess.run(
                [tool, "-sass", "-fun", "gk_chol_small", f.name],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            ).stdout
        if dump:
            with open(os.path.join(dump, f"chol_{dtype}_leaf{leaf}.sass"), "w") as out:
                out.write(sass)
        ops = re.findall(
            r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?", sass
        )
        kinds = collections.Counter(o for o, _ in ops)
        bar = kinds["BAR"]
        print(
            f"{dtype} leaf {leaf}: {len(ops)} instructions; BAR {bar}, WARPSYNC "
            f"{kinds['WARPSYNC']}, SHFL {kinds['SHFL']}, LDS {kinds['LDS']}, STS {kinds['STS']}, "
            f"MUFU {kinds['MUFU']}, FFMA {kinds['FFMA']}, DFMA {kinds['DFMA']}, "
            f"LDL {kinds['LDL']}, STL {kinds['STL']}, LDG {kinds['LDG']}, STG {kinds['STG']}"
        )
