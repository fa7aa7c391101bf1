#!/usr/bin/env bash
# Runs the CPU test suite N times, each with another GPUKIT_TEST_SEED (SEED_BASE, SEED_BASE+1,
# ...; default from 1), and lists every test that failed for some seed, with those seeds: a test
# must hold for every draw. Arguments after N go to pytest (test files, -k ...), e.g.
#   scripts/seed_sweep.sh 20 tests/api tests/unit
# Expects .venv (scripts/setup.sh test). Logs: $SWEEP_DIR (default .sweep/), one per seed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 N [pytest args]"
    exit 2
fi
runs="$1"
shift
base="${SEED_BASE:-1}"
dir="${SWEEP_DIR:-$PWD/.sweep}"
mkdir -p "$dir"
python="$PWD/.venv/bin/python"
failures="$dir/failures.txt"
: >"$failures"
for ((i = 0; i < runs; i++)); do
    seed=$((base + i))
    log="$dir/seed-$seed.log"
    rc=0
    GPUKIT_TEST_SEED="$seed" GPUKIT_TEST_BACKENDS=cpu "$python" -m pytest -q -rfE \
        -p no:cacheprovider "$@" >"$log" 2>&1 || rc=$?
    echo "seed $seed: $(tail -1 "$log")"
    if [ "$rc" != 0 ]; then
        grep -E '^(FAILED|ERROR) ' "$log" | sed -E "s/^(FAILED|ERROR) ([^ ]+).*/\2 $seed/" \
            >>"$failures" || true
        grep -qE '^(FAILED|ERROR) ' "$log" || echo "unknown $seed (pytest exit $rc)" >>"$failures"
    fi
done
if [ ! -s "$failures" ]; then
    echo "no test failed for any of the $runs seeds from $base"
    exit 0
fi
echo
echo "tests that failed, with the seeds they failed for (replay: GPUKIT_TEST_SEED=seed):"
sort "$failures" | awk '{seeds[$1] = seeds[$1] " " $2} END {for (t in seeds) print t ":" seeds[t]}' \
    | sort
exit 1
