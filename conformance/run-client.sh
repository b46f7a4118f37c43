#!/usr/bin/env bash
# Runs the client leg of the official MCP conformance suite (pinned in
# conformance/package.json) against `snodo-conformance client`: every
# non-auth client scenario of 2026-07-28, and the non-auth scenarios of
# 2025-11-25. Writes one summary per revision to conformance/results/ and
# fails on any failure or warning.
#
#   conformance/run-client.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/tools.sh
source scripts/tools.sh

PATH="$(ensure_node22):$PATH"
export PATH
runner="$(ensure_conformance)"
cargo build --quiet -p snodo-conformance
client="$PWD/target/debug/snodo-conformance client"

scenarios_2026=(tools_call request-metadata sep-2322-client-request-state http-standard-headers
    http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref)
scenarios_2025=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="conformance/results/raw/$stamp"
mkdir -p "$raw"

status=0
leg() { # leg NAME VERSION MIN_PASSED SCENARIO...
    local name=$1 version=$2 min_passed=$3
    shift 3
    echo "== conformance client leg: $name"
    local scenario rc
    for scenario in "$@"; do
        rc=0
        timeout 300 "$runner" client --command "$client" --spec-version "$version" \
            --scenario "$scenario" -o "$raw/$name" >"$raw/$name-$scenario.txt" 2>&1 || rc=$?
        if [[ $rc -ne 0 ]]; then
            status=1
            echo "   $scenario: runner exit $rc (see $raw/$name-$scenario.txt)"
        fi
        # The runner prints one line per check, then its counts and verdict.
        grep -E '^(Passed:|.*OVERALL:|.*TIMED OUT)' "$raw/$name-$scenario.txt" | sed "s/^/   $scenario: /" || true
    done
    python3 conformance/summarize.py "$raw/$name" "conformance/results/$name.md" "$name" \
        "client --spec-version $version --scenario {$(IFS=,; echo "$*")}" || status=1
    python3 conformance/summarize.py --check-warnings "$raw/$name" /dev/null "$#" "$min_passed" || status=1
}

leg client-2026-07-28 2026-07-28 55 "${scenarios_2026[@]}"
leg client-2025-11-25 2025-11-25 11 "${scenarios_2025[@]}"

if [[ $status -ne 0 ]]; then
    echo "conformance client leg: FAILED (see $raw)"
fi
exit $status
