#!/usr/bin/env bash
# The whole test suite: the Rust workspace, a smoke run of every fuzz target,
# the official conformance suite (server and client legs), and the interop
# checks against MCP clients and servers no one here wrote (directly and
# through the bridge, snodo serve). On first run it
# installs what it needs (Node 22, the pinned npm packages, the Python SDK,
# cargo-fuzz) into a cache outside the clone. The OAuth leg starts a real
# OpenID Connect provider (oidc-provider, from the npm registry) on 127.0.0.1.
# Every leg runs even when an earlier one fails; the last line totals every
# check that ran and every test that skipped (a failed leg whose output has no
# count counts as one failed check; a test skips only when told to, with
# SNODO_SKIP_POSTGRES=1 or SNODO_SKIP_REDIS=1, and says which); the lines
# before it name the skipped tests, the conformance failures
# conformance/baseline.yml lists (counted apart as known) and the failed
# legs, and the exit status is non-zero when any leg failed.
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
# Tests that skip (SNODO_SKIP_POSTGRES=1, SNODO_SKIP_REDIS=1) record
# themselves here (snodo_test::skip); the last line counts them.
SNODO_SKIPPED_LOG=$(mktemp)
export SNODO_SKIPPED_LOG
trap 'rm -f "$log" "$SNODO_SKIPPED_LOG"' EXIT
failed_legs=()
leg() { # leg TITLE COMMAND...
    local title=$1
    echo "== $title"
    shift
    "$@" 2>&1 | tee -a "$log"
    local status=${PIPESTATUS[0]}
    if [[ $status -ne 0 ]]; then
        failed_legs+=("$title (exit $status)")
        echo "LEG FAILED: $title (exit $status)" | tee -a "$log"
    fi
}

ci_refuses_skips() { # .ci/run with a skip variable set stops at once, naming it
    local stub passed=0 failed=0 setting var out status started
    # A cargo that only says it ran: .ci/run finds it, and never gets further.
    stub=$(mktemp -d)
    printf '#!/bin/sh\necho "cargo ran: $*"\nexit 97\n' >"$stub/cargo"
    chmod +x "$stub/cargo"
    for setting in SNODO_SKIP_POSTGRES=0 SNODO_SKIP_REDIS=1; do
        var=${setting%%=*}
        started=$SECONDS
        out=$(env -u SNODO_SKIP_POSTGRES -u SNODO_SKIP_REDIS "$setting" PATH="$stub:$PATH" \
            timeout 20 bash .ci/run 2>&1)
        status=$?
        if [[ $status -ne 0 && $status -ne 124 && $out == *"$var is set"* && $out != *"cargo ran"* ]] &&
            ((SECONDS - started < 5)); then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "FAIL: $setting bash .ci/run: exit $status: $out"
        fi
    done
    rm -rf "$stub"
    echo "ci-skip-refusal: $passed passed, $failed failed"
    [[ $failed -eq 0 ]]
}

leg "cargo test (every crate but the bench harness, all features)" cargo test --all-features --no-fail-fast
leg "several nodes: faults (restarts the local Redis and PostgreSQL, one test at a time)" \
    cargo test --all-features --test nodes_faults -- --ignored --test-threads=1
leg "callgrind: instructions and allocations per request within 5 % of bench/callgrind-baseline.json" \
    scripts/callgrind.sh
leg "the conformance summarizer's own checks" python3 conformance/test_summarize.py
leg "the benchmark harness's own checks (its documents, provenance and charts)" \
    cargo test -p snodo-bench
leg "the module graph has no cycle (and the checker finds one when there is)" \
    bash -c 'python3 scripts/module_cycles.py --self-test && python3 scripts/module_cycles.py' 
leg "snodo's feature sets build alone without a warning; auth and the OTLP exporter leave the client out" \
    scripts/feature_sets.sh
leg ".ci/run refuses a skip variable at once, naming it" ci_refuses_skips
leg "fuzz: every target builds, replays its regressions and runs 10 s (smoke)" scripts/fuzz.sh 10
leg "oauth: the resource server and the client against oidc-provider" interop/oauth/run.sh
leg "admin page: snodo proxy's backends and a pinned change approved in headless Chromium" \
    interop/admin/run.sh
leg "conformance: the official suite against snodo-conformance (server leg)" conformance/run.sh
leg "conformance: the official suite driving snodo-conformance client (client leg)" conformance/run-client.sh
leg "interop: official clients against the demo server" interop/run.sh
leg "interop: our client against servers no one here wrote" interop/client_interop.sh
leg "bridge: snodo serve between clients and servers no one here wrote" interop/bridge.sh
leg "bundle: snodo bundle's .mcpb unpacked and validated by the official mcpb tools, served to the Python SDK" \
    interop/mcpb/run.sh
leg "apps: the Python SDK as an MCP Apps host, with and without the extension, direct and through snodo proxy" \
    interop/apps/run.sh

read -r passed failed known < <(python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
passed = failed = known = 0
for p, f in re.findall(r"^test result: \w+\. (\d+) passed; (\d+) failed", text, re.M):
    passed, failed = passed + int(p), failed + int(f)
line = r"^(?!Total:)[\w-]+: (\d+) passed, (\d+) failed(?:, \d+ warnings)?(?:, (\d+) known failures \(baseline\))?$"
for p, f, k in re.findall(line, text, re.M):
    passed, failed, known = passed + int(p), failed + int(f), known + int(k or 0)
print(passed, failed, known)
PY
)
if [[ ${#failed_legs[@]} -gt 0 ]]; then
    # A leg that failed without reporting a failed check still counts as one.
    [[ $failed -ge ${#failed_legs[@]} ]] || failed=${#failed_legs[@]}
    printf 'failed legs: %s\n' "$(IFS=';'; echo "${failed_legs[*]}")"
fi
skipped=$(grep -c . "$SNODO_SKIPPED_LOG" || true)
if [[ ${skipped:-0} -gt 0 ]]; then
    sort "$SNODO_SKIPPED_LOG" | sed 's/^/skipped: /'
    # The test runner counted each of them as passed: they did not run.
    passed=$(( ${passed:-0} - skipped ))
fi
echo "known failures listed in conformance/baseline.yml: ${known:-0}"
echo "total: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
[[ ${#failed_legs[@]} -eq 0 ]]
