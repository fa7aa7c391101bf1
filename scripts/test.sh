#!/usr/bin/env bash
# Sets up a fresh machine and runs the whole suite: lint, the Rust tests, the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test,cuda
scripts/lint.sh
cargo test --workspace --locked
# From tests/, so that the installed package (not src/) is the one imported.
cd tests && ../.venv/bin/python -m pytest -q "$@"
