#!/usr/bin/env bash
# Installs gpukit and runs the main demo: on the GPU when one is found, on the CPU otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
# NVRTC (pip's nvidia-cuda-nvrtc, ~140 MB) is only worth downloading where a CUDA driver exists.
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    scripts/setup.sh cuda
else
    echo "no CUDA driver found: installing gpukit without NVRTC; the demo runs on the CPU"
    scripts/setup.sh
fi
.venv/bin/python examples/demo.py "$@"
