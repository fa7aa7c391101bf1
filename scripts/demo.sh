#!/usr/bin/env bash
# Installs gpukit and runs the main demo: on the GPU when one is found, on the CPU otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh cuda
.venv/bin/python examples/demo.py "$@"
