#!/usr/bin/env bash
# scripts/fuzz.sh - builds the fuzz targets in fuzz/ with cargo fuzz and runs
# each one for a bounded time.
#
#   scripts/fuzz.sh                 every target, 10 s each (the smoke run of
#                                   scripts/test.sh)
#   scripts/fuzz.sh 600             every target, 10 minutes each
#   scripts/fuzz.sh 3600 http_request sse_parser
#                                   the named targets, an hour each
#
# Each target first replays fuzz/regressions/<target>/ (every crash found so
# far; it must pass), then fuzzes from fuzz/seeds/<target>/ (committed) and
# fuzz/corpus/<target>/ (what earlier runs found; not committed). A crash
# leaves its input in fuzz/artifacts/<target>/ and fails the run: copy it to
# fuzz/regressions/<target>/ once fixed. The targets are built on the stable
# toolchain without a sanitizer (`--sanitizer none`: the code is safe Rust;
# debug assertions and overflow checks are on). cargo-fuzz is installed by
# scripts/tools.sh. Prints a line per target (runs, coverage) and ends with
# `fuzz: N passed, N failed`. It fails when a target README's fuzz table
# names is not built, and when a target ran no input.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-10}
shift || true
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || { echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2; exit 2; }

# shellcheck source=scripts/tools.sh
source scripts/tools.sh
bin="$(ensure_cargo_fuzz)" || { echo "fuzz: cargo-fuzz could not be installed" >&2; exit 1; }
PATH="$bin:$PATH"

# Every target README's fuzz table names must exist.
mapfile -t listed < <(cargo fuzz list --fuzz-dir fuzz)
mapfile -t documented < <(sed -n '/^## Fuzzing and soaking/,/^## /s/^| `\([a-z0-9_]*\)` |.*/\1/p' README.md)
[[ ${#documented[@]} -gt 0 ]] || { echo "fuzz: README's fuzz table names no target" >&2; exit 1; }
for target in "${documented[@]}"; do
    if ! printf '%s\n' "${listed[@]}" | grep -qx -- "$target"; then
        echo "fuzz: README's table names $target, which cargo fuzz list does not" >&2
        exit 1
    fi
done

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=("${listed[@]}")
fi
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz: no target found" >&2; exit 1; }

fuzz=(cargo fuzz run --fuzz-dir fuzz --sanitizer none --debug-assertions)
if ! cargo fuzz build --fuzz-dir fuzz --sanitizer none --debug-assertions 2>&1 | tail -n 3; then
    echo "fuzz: the targets do not build"
    echo "fuzz: 0 passed, ${#targets[@]} failed"
    exit 1
fi

passed=0 failed=0
for target in "${targets[@]}"; do
    log=$(mktemp)
    status=0
    if [[ -d fuzz/regressions/$target ]] && compgen -G "fuzz/regressions/$target/*" >/dev/null; then
        "${fuzz[@]}" "$target" fuzz/regressions/"$target"/* >"$log" 2>&1 || status=$?
        if [[ $status -ne 0 ]]; then
            tail -n 30 "$log"
            echo "FAILED $target: a regression input fails again"
            failed=$((failed + 1))
            rm -f "$log"
            continue
        fi
    fi
    mkdir -p fuzz/corpus/"$target" fuzz/seeds/"$target"
    "${fuzz[@]}" "$target" fuzz/corpus/"$target" fuzz/seeds/"$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 || status=$?
    # libFuzzer's last status line: "#RUNS DONE cov: N ft: N corp: N/..."
    stats=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    runs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$stats")
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$stats")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$stats")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$stats")
    # A run that executed nothing fuzzed nothing: libFuzzer's final
    # stat::number_of_executed_units (else the last status line) counts runs.
    units=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    runs=${units:-${runs:-0}}
    if [[ $status -eq 0 && $runs -eq 0 ]]; then
        tail -n 20 "$log"
        echo "FAILED $target: no input was run"
        failed=$((failed + 1))
    elif [[ $status -eq 0 ]]; then
        echo "ok   $target: ${seconds} s, ${runs:-0} runs, coverage ${cov:-0} edges, ${ft:-0} features, corpus ${corp:-0}"
        passed=$((passed + 1))
    else
        tail -n 40 "$log"
        echo "FAILED $target (exit $status); the input is in fuzz/artifacts/$target/"
        failed=$((failed + 1))
    fi
    rm -f "$log"
done
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
