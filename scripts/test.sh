#!/usr/bin/env bash
# Sets up a fresh machine and runs the whole suite: lint, the Rust tests, the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test,cuda
# hiprtc (Debian's libamdhip64-dev) lets the suite compile every kernel for AMD GPUs too. It is a
# system package, so it is installed only when asked: GPUKIT_INSTALL_HIPRTC=1 (as root, apt-get).
if ! ldconfig -p | grep -q libamdhip64; then
    if [ "${GPUKIT_INSTALL_HIPRTC:-0}" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing libamdhip64-dev with apt-get (GPUKIT_INSTALL_HIPRTC=1)"
        apt-get update -qq && apt-get install -y -qq libamdhip64-dev >/dev/null
    else
        echo "note: no hiprtc; the AMD compile test will skip" \
            "(GPUKIT_INSTALL_HIPRTC=1 installs Debian's libamdhip64-dev with apt-get, as root)"
    fi
fi
scripts/lint.sh
cargo test --workspace --locked
# The installed package is the one imported (src/ is not on the path); tests/unit, tests/api,
# tests/gpu, tests/contract (pyproject's testpaths), or the paths given.
.venv/bin/python -m pytest -q "$@"
