#!/usr/bin/env bash
# Formatting and lint of every layer; fails on the first finding. Expects .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/ruff format --check .
mapfile -t cxx < <(git ls-files --cached --others --exclude-standard \
    'native/*.cpp' 'native/*.h' 'kernels/*.cu' 'kernels/*.cuh')
.venv/bin/clang-format --dry-run -Werror "${cxx[@]}"
cargo fmt --all --check
PYO3_PYTHON="$PWD/.venv/bin/python" cargo clippy --workspace --all-targets --locked -- -D warnings
