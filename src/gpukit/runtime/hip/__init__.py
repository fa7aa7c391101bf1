"""The HIP backend's place. Running on AMD GPUs is not implemented (no AMD hardware to test
on); the built-in kernels compile for AMD GPUs through hiprtc (tests/gpu). A HIP backend
implements gpukit.runtime.backend.Backend, with planners like gpukit.runtime.cuda's over the
same kernels, argument blocks and launch table, and must pass tests/contract."""
