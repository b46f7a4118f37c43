#!/usr/bin/env bash
# snodo's features on their own: each set below builds without a warning, and
# `auth` and `otlp` do not turn on the MCP client (they share the
# `http-client` building block with it instead).
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0
failed=0
for set in http client "auth,http" otlp otel "client,auth,http" "otlp,otel,http"; do
    out=$(cargo check -q -p snodo --no-default-features --features "$set" 2>&1)
    status=$?
    if [[ $status -ne 0 || $out == *"warning"* ]]; then
        failed=$((failed + 1))
        echo "FAIL: --features $set: exit $status"
        echo "$out"
    else
        passed=$((passed + 1))
    fi
done
for set in "auth,http" otlp; do
    enabled=$(cargo tree -q -p snodo --no-default-features --features "$set" -e no-dev -f '{f}' --depth 0)
    if [[ ",$enabled," == *",client,"* ]]; then
        failed=$((failed + 1))
        echo "FAIL: --features $set turns on the client: [$enabled]"
    else
        passed=$((passed + 1))
    fi
done
echo "feature-sets: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
