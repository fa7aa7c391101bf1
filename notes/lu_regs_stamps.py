"""Where a column of gk_lu_panel_regs spends its time: the kernel's source patched (here, not in
kernels/) with clock64 stamps taken by thread 0 of every block at the phase boundaries of each
column, summed per phase in static shared memory and printed by each block at the end; one
float32 and one float64 panel of 4096 x 64. Run after scripts/gpu_machine.sh installed gpukit:
PYTHONPATH=/tmp/gpukit-site python3 notes/lu_regs_stamps.py"""

import numpy as np

import gpukit as gk
from gpukit import linalg_steps as st
from gpukit.runtime import jit

PHASES = ("loop", "warp best", "block barrier", "block best", "slot write", "cluster barrier",
          "gather", "gather barrier", "cluster best", "update")  # fmt: skip


def patched(text: str) -> str:
    head = text.index("template <int kGroup>\n__device__ inline void lu_regs_columns")
    end = text.index("GK_KERNEL void __cluster_dims__(GK_LU_CLUSTER, 1, 1)", head)
    body = text[head:end]

    def after(s, anchor, stamp, nth=1):
        at = -1
        for _ in range(nth):
            at = s.index(anchor, at + 1)
        at += len(anchor)
        return s[:at] + f" GK_STAMP({stamp});" + s[at:]

    def before(s, anchor, stamp):
        at = s.index(anchor)
        return s[:at] + f"GK_STAMP({stamp}); " + s[at:]

    body = after(body, "if (j >= nb) break;", 0)
    body = after(body, "pos == j));", 1)
    body = after(body, "__syncthreads();", 2)
    body = after(body, "const int ci = lu_cand_place(c);", 3)
    body = before(body, "gk_cluster_sync();", 4)
    body = after(body, "gk_cluster_sync();", 5)
    body = before(body, "__syncthreads();\n        const lu_cand lane_c", 6)
    body = body.replace("__syncthreads();\n        const lu_cand lane_c",
                        "__syncthreads(); GK_STAMP(7);\n        const lu_cand lane_c")  # fmt: skip
    body = after(body, "const la_t d = u[jj];", 8)
    body = after(body, 'asm volatile("" ::: "memory");\n        }', 9)
    stamps = (
        "__shared__ long long gk_acc[10];\n__shared__ long long gk_last;\n"
        "#define GK_STAMP(n) if (threadIdx.x == 0) { const long long now = clock64();"
        " gk_acc[n] += now - gk_last; gk_last = now; }\n"
    )
    kernel = text[end:]
    kernel = kernel.replace(
        "    bool zero = false;  // block 0's thread 0: a zero pivot met\n",
        "    bool zero = false;  // block 0's thread 0: a zero pivot met\n"
        "    if (tid == 0) { for (int i = 0; i < 10; ++i) gk_acc[i] = 0; gk_last = clock64(); }\n",
        1,
    )
    kernel = kernel.replace(
        "    gk_cluster_sync();  // no block leaves",
        '    if (tid == 0 && blockIdx.y == 0) printf("STAMPS %d %d %lld %lld %lld %lld %lld %lld'
        ' %lld %lld %lld %lld\\n", (int)sizeof(la_t), (int)blockIdx.x, gk_acc[0], gk_acc[1],'
        " gk_acc[2], gk_acc[3], gk_acc[4], gk_acc[5], gk_acc[6], gk_acc[7], gk_acc[8],"
        " gk_acc[9]);\n    gk_cluster_sync();  // no block leaves",
        1,
    )
    return text[:head] + stamps + body + kernel


sources = dict(jit.builtin_sources())
sources["linalg_lu.cu"] = patched(sources["linalg_lu.cu"])
jit._SOURCES = sources

rng = np.random.default_rng(0)
for dt in ("float32", "float64"):
    m = 4096
    t = gk.asarray(rng.standard_normal((1, m, m)).astype(dt))
    args = [t, gk.zeros((1, m), dtype="int32"), gk.zeros((1, m), dtype=dt),
            gk.zeros((1,), dtype="int32"), gk.zeros((1,), dtype="uint32")]  # fmt: skip
    st.run("lu_panel", args, [], (("k", 0), ("n", m), ("nb", 64)))
    gk.synchronize()
print("PHASES", *PHASES, sep=" | ")
