#!/usr/bin/env bash
# Runs the client leg of the official MCP conformance suite (pinned in
# conformance/package.json) against `snodo-conformance client`: every client
# scenario the runner lists for 2026-07-28 and for 2025-11-25 (read from the
# runner), and the extension scenarios snodo implements (the two
# client-credentials ones, enterprise-managed authorization, workload
# identity federation, DPoP with and without nonces, and the four of the
# Skills extension) at both
# revisions. Writes one summary per leg to
# conformance/results/ and fails on any failure or warning.
#
#   conformance/run-client.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/tools.sh
source scripts/tools.sh

PATH="$(ensure_node22):$PATH"
export PATH
runner="$(ensure_conformance)"
# The features the test leg builds with, so that its artifacts are reused.
cargo build --quiet --all-features --bin snodo-conformance
client="$PWD/target/debug/snodo-conformance client"

# Every client scenario the pinned runner lists for a revision, read from the
# runner itself (`list --client --spec-version`), so that a scenario the
# runner adds is run, not missed.
scenarios_for() { # scenarios_for VERSION
    "$runner" list --client --spec-version "$1" | sed -n 's/^  - \([^ ]*\) \[.*$/\1/p'
}
mapfile -t scenarios_2026 < <(scenarios_for 2026-07-28)
mapfile -t scenarios_2025 < <(scenarios_for 2025-11-25)
# Extension scenarios are off the revisions' timelines: the runner needs
# --force. These are the ones snodo implements; the others are listed as
# not implemented.
implemented_extensions=(auth/client-credentials-basic auth/client-credentials-jwt
    auth/enterprise-managed-authorization auth/wif-jwt-bearer auth/dpop auth/dpop-nonce
    sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size
    sep-2640-client-verify-frontmatter)
mapfile -t all_extensions < <("$runner" list --client | sed -n 's/^  - \([^ ]*\) \[extension\]$/\1/p')
extensions=()
for scenario in "${all_extensions[@]}"; do
    if [[ " ${implemented_extensions[*]} " == *" $scenario "* ]]; then
        extensions+=("$scenario")
    else
        echo "conformance client: extension scenario $scenario: not implemented, not run"
    fi
done
listed() { # listed VERSION COUNT
    echo "conformance client: the runner lists $2 client scenarios for $1; all $2 run"
    [[ $2 -gt 0 ]] || { echo "conformance client: the runner listed nothing for $1"; exit 1; }
}
listed 2026-07-28 "${#scenarios_2026[@]}"
listed 2025-11-25 "${#scenarios_2025[@]}"
echo "conformance client: the runner lists ${#all_extensions[@]} client extension scenarios; ${#extensions[@]} run"
[[ ${#extensions[@]} -eq ${#implemented_extensions[@]} ]] || {
    echo "conformance client: an implemented extension scenario is no longer listed"
    exit 1
}

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="conformance/results/raw/$stamp"
mkdir -p "$raw"

status=0
leg() { # leg NAME VERSION MIN_PASSED SCENARIO...  (FORCE=1: pass --force)
    local name=$1 version=$2 min_passed=$3
    shift 3
    local force=()
    [[ ${FORCE:-0} == 1 ]] && force=(--force)
    echo "== conformance client leg: $name"
    local scenario rc log
    for scenario in "$@"; do
        rc=0
        log="$raw/$name-${scenario//\//-}.txt"
        timeout 300 "$runner" client "${force[@]}" --command "${CLIENT:-$client}" --spec-version "$version" \
            --scenario "$scenario" -o "$raw/$name" >"$log" 2>&1 || rc=$?
        if [[ $rc -ne 0 ]]; then
            status=1
            echo "   $scenario: runner exit $rc (see $log)"
        fi
        # The runner prints one line per check, then its counts and verdict.
        grep -E '^(Passed:|.*OVERALL:|.*TIMED OUT)' "$log" | sed "s|^|   $scenario: |" || true
    done
    python3 conformance/summarize.py "$raw/$name" "conformance/results/$name.md" "$name" \
        "client --spec-version $version --scenario {$(IFS=,; echo "$*")}" || status=1
    python3 conformance/summarize.py --check-warnings "$raw/$name" /dev/null "$#" "$min_passed" || status=1
}

leg client-2026-07-28 2026-07-28 412 "${scenarios_2026[@]}"
leg client-2025-11-25 2025-11-25 248 "${scenarios_2025[@]}"
FORCE=1 leg client-extensions-2026-07-28 2026-07-28 61 "${extensions[@]}"
FORCE=1 leg client-extensions-2025-11-25 2025-11-25 63 "${extensions[@]}"
# The OAuth extensions through the `snodo` command line's options.
cargo build --quiet --all-features --bin snodo
CLIENT="python3 $PWD/conformance/cli_client.py $PWD/target/debug/snodo" FORCE=1 \
    leg cli-auth-extensions-2026-07-28 2026-07-28 43 auth/wif-jwt-bearer auth/enterprise-managed-authorization \
    auth/dpop auth/dpop-nonce

if [[ $status -ne 0 ]]; then
    echo "conformance client leg: FAILED (see $raw)"
fi
exit $status
