"""Work for ncu to profile (notes/runs/lead_2026-11-27b/ncu_*.txt): `norms` runs layer_norm and
rms_norm of bfloat16 16384 x 4096 three times each, `fft` four complex64 FFTs of 4096 x 4096 along
the last axis, `f32` the exact float32 product 4096^3 twice through gpukit, then twice through
torch (cuBLAS, TF32 off), `attn` float16 attention b4 h32 s4096 d64 (full) twice through gpukit,
then twice through torch's SDPA, `svj` one blocked Jacobi sweep of 1024 rows of 1024 (float32)
and the one-launch sweeps of 512 matrices of 32 x 32. Run under ncu after scripts/gpu_machine.sh
installed gpukit."""

import sys

import numpy as np

import gpukit as gk
from gpukit import nn

what = sys.argv[1]
rng = np.random.default_rng(0)
if what == "norms":
    x = gk.asarray(rng.standard_normal((16384, 4096)).astype(np.float32)).astype("bfloat16")
    w = gk.asarray(rng.standard_normal(4096).astype(np.float32)).astype("bfloat16")
    b = gk.asarray(rng.standard_normal(4096).astype(np.float32)).astype("bfloat16")
    for _ in range(3):
        nn.layer_norm(x, w, b)
    for _ in range(3):
        nn.rms_norm(x, w)
elif what == "fft":
    x = gk.asarray(
        (rng.standard_normal((4096, 4096)) + 1j * rng.standard_normal((4096, 4096))).astype(
            np.complex64
        )
    )
    for _ in range(4):
        gk.fft.fft(x, axis=-1)
elif what == "f32":
    import torch

    a = rng.standard_normal((4096, 4096)).astype(np.float32)
    b = rng.standard_normal((4096, 4096)).astype(np.float32)
    ga, gb = gk.asarray(a), gk.asarray(b)
    for _ in range(2):
        ga @ gb
    gk.synchronize()
    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    for _ in range(2):
        ta @ tb
    torch.cuda.synchronize()
elif what == "attn":
    import torch

    host = [rng.standard_normal((4, 32, 4096, 64)).astype(np.float16) for _ in range(3)]
    q, k, v = (gk.asarray(x) for x in host)
    for _ in range(2):
        nn.scaled_dot_product_attention(q, k, v)
    gk.synchronize()
    tq, tk, tv = (torch.from_numpy(x).cuda() for x in host)
    for _ in range(2):
        torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
    torch.cuda.synchronize()
elif what == "svj":
    from gpukit import linalg_steps as st

    x = gk.asarray(rng.standard_normal((1, 1024, 1024)).astype(np.float32))
    r = gk.asarray(np.eye(1024, dtype=np.float32)[None])
    flag = gk.zeros((1,), "int32")
    st.run("svj", [x, r, gk.zeros((1,), "float32"), flag], [], (("whole", False),))
    xs = gk.asarray(rng.standard_normal((512, 32, 32)).astype(np.float32))
    rs = gk.asarray(np.broadcast_to(np.eye(32, dtype=np.float32), (512, 32, 32)).copy())
    st.run("svj", [xs, rs, gk.zeros((512,), "float32")], [((512,), "int32")], (("whole", True),))
gk.synchronize()
