#!/usr/bin/env bash
# Runs the client leg of the official MCP conformance suite (pinned in
# conformance/package.json) against `snodo-conformance client`: every client
# scenario of 2026-07-28 (the 25 `auth/*` ones included), those of
# 2025-11-25 (with its 14 `auth/*` ones), and the two client-credentials
# extension scenarios at both revisions. Writes one summary per leg to
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

auth_2025=(auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
    auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported
    auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
    auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
    auth/pre-registration)
auth_2026=("${auth_2025[@]}" auth/resource-mismatch auth/offline-access-scope
    auth/offline-access-not-supported auth/authorization-server-migration auth/iss-supported
    auth/iss-not-advertised auth/iss-supported-missing auth/iss-wrong-issuer auth/iss-unexpected
    auth/iss-normalized auth/metadata-issuer-mismatch)
scenarios_2026=(tools_call request-metadata sep-2322-client-request-state http-standard-headers
    http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref "${auth_2026[@]}")
scenarios_2025=(initialize tools_call elicitation-sep1034-client-defaults sse-retry "${auth_2025[@]}")
# Extension scenarios are off the revisions' timelines: the runner needs --force.
extensions=(auth/client-credentials-basic auth/client-credentials-jwt)

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
        timeout 300 "$runner" client "${force[@]}" --command "$client" --spec-version "$version" \
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

leg client-2026-07-28 2026-07-28 403 "${scenarios_2026[@]}"
leg client-2025-11-25 2025-11-25 239 "${scenarios_2025[@]}"
FORCE=1 leg client-extensions-2026-07-28 2026-07-28 14 "${extensions[@]}"
FORCE=1 leg client-extensions-2025-11-25 2025-11-25 16 "${extensions[@]}"

if [[ $status -ne 0 ]]; then
    echo "conformance client leg: FAILED (see $raw)"
fi
exit $status
