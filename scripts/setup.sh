#!/usr/bin/env bash
# Creates .venv (if missing) and builds and installs gpukit into it with the given extras.
# Needs python3 >= 3.10, a C++ compiler, cmake and cargo; no CUDA toolkit.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet ".${extras:+[$extras]}"
