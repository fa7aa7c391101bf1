"""Where gk_chol_small's 64 x 64 factor with -L^-T spends its cycles: the kernel's source patched
(here, not in kernels/) with clock64 stamps by warp 0's and warp 2's first lanes at the phase
boundaries, summed per phase in shared memory and printed by each block; first ten launches of
one matrix alone, then the diagonal blocks of the blocked Cholesky of 4096 (after its products,
as the plan runs them). Run after scripts/gpu_machine.sh installed gpukit:
PYTHONPATH=/tmp/gpukit-site python3 notes/chol_leaf_stamps.py"""

import numpy as np

import gpukit as gk
from gpukit import decompositions as dec
from gpukit.runtime import jit

PHASES = ("load", "L11 L21", "barrier 1", "A22", "X11", "-L21 X11", "L22", "barrier 2", "X21",
          "X22", "barrier 3", "store L", "store -X^T")  # fmt: skip


def patched(text: str) -> str:
    head = text.index("GK_KERNEL void gk_chol_small(")
    end = text.index("\n}\n", head)
    body = text[head:end]

    def after(s, anchor, stamp):
        at = s.index(anchor) + len(anchor)
        return s[:at] + f" GK_STAMP({stamp});" + s[at:]

    def behind_barrier(s, next_line, stamp):  # the stamp after the barrier that precedes it
        return s.replace(
            f"__syncthreads();\n{next_line}", f"__syncthreads(); GK_STAMP({stamp});\n{next_line}", 1
        )

    body = behind_barrier(body, "    if (!two) {", 0)
    body = after(body, "la_chol_rows<GK_LANES, true>(S, 0, rinv, &bad);", 1)
    body = behind_barrier(body, "        // A22 -= L21 L21^T", 2)
    body = behind_barrier(body, "        // Warps 0 and 1", 3)
    body = after(body, "la_forward<GK_LANES>(x, S, 0, rinv);", 4)
    body = after(body, "dst[GK_LANES + r] = -acc;\n            }", 5)
    body = after(body, "la_chol_rows<GK_LANES, false>(S, GK_LANES, rinv, &bad);", 6)
    body = after(body, "if (inverse) {\n            __syncthreads();", 7)
    body = after(body, "for (int r = 0; r < GK_LANES; ++r) dst[r] = x[r];", 8)
    body = after(body, "la_invert_cols<GK_LANES>(S, GK_LANES, rinv);", 9)
    body = after(body, "__syncthreads();\n    const bool failed = bad != 0;", 10)
    body = body.replace("    if (!inverse) return;", "    GK_STAMP(11);\n    if (!inverse) return;")
    body = body.replace(
        "__shared__ int bad;",
        "__shared__ int bad;\n    if (threadIdx.x == 0 || threadIdx.x == 64) {"
        " for (int i = 0; i < 13; ++i) gk_acc[threadIdx.x / 64][i] = 0;"
        " gk_last[threadIdx.x / 64] = clock64(); }",
    )
    fmt = " %lld" * 26
    accs = ", ".join(f"gk_acc[{w}][{i}]" for w in range(2) for i in range(13))
    body += (
        "\n    GK_STAMP(12);\n    __syncthreads();\n"
        f'    if (threadIdx.x == 0) printf("STAMPS %d %d{fmt}\\n", (int)sizeof(la_t),'
        f" (int)blockIdx.x, {accs});"
    )
    stamps = (
        "__shared__ long long gk_acc[2][13];\n__shared__ long long gk_last[2];\n"
        "#define GK_STAMP(n) if (threadIdx.x == 0 || threadIdx.x == 64) {"
        " const int gk_w = threadIdx.x / 64; const long long now = clock64();"
        " gk_acc[gk_w][n] += now - gk_last[gk_w]; gk_last[gk_w] = now; }\n"
    )
    return text[:head] + stamps + body + text[end:]


sources = dict(jit.builtin_sources())
sources["linalg_small.cu"] = patched(sources["linalg_small.cu"])
jit._SOURCES = sources

rng = np.random.default_rng(0)
print("PHASES", *PHASES, sep=" | ")
for dt in ("float32", "float64"):
    n = 4096
    g = rng.standard_normal((n, n))
    a = gk.asarray((g @ g.T / n + np.eye(n)).astype(dt))
    blk = gk.ascontiguousarray(a[:64, :64].reshape(1, 64, 64))
    print(f"ALONE {dt}", flush=True)
    for _ in range(10):
        dec._cholesky(blk, False, True, False)
    gk.synchronize()
    print(f"PLAN {dt}", flush=True)
    gk.linalg.cholesky(a)
    gk.synchronize()
