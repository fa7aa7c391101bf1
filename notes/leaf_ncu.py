"""Work for ncu: the small-matrix kernels whose time is one block's serial chain, once per
dtype: gk_chol_small (64 x 64 with -L^-T) and gk_lu_trinv (64 x 64, mode 0). Run under ncu
after scripts/gpu_machine.sh installed gpukit, e.g. ncu -k regex:"gk_chol_small|gk_lu_trinv"
--section WarpStateStats python3 notes/leaf_ncu.py"""

import numpy as np

import gpukit as gk
from gpukit import decompositions as dec
from gpukit import linalg_steps as st

rng = np.random.default_rng(0)
for dt in ("float32", "float64"):
    g = rng.standard_normal((64, 64))
    a = gk.asarray((g @ g.T / 64 + np.eye(64)).astype(dt)).reshape(1, 64, 64)
    dec._cholesky(a, False, True, False)
    t = gk.asarray(rng.standard_normal((1, 256, 256)).astype(dt))
    st.run("lu_trinv", [t], [((1, 64, 64), t.dtype)], (("upper", False),))
gk.synchronize()
