#!/usr/bin/env bash
# snodo's features on their own: each set below builds without a warning;
# `auth` does not turn on the MCP client (it shares the `http-client`
# building block with it instead), and neither does the OTLP exporter, a
# crate of its own (`snodo-otlp`).
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0
failed=0
for set in "" http client "auth,http" otel "client,auth,http" "otel,http" skills "skills,client"; do
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
for set in "auth,http"; do
    enabled=$(cargo tree -q -p snodo --no-default-features --features "$set" -e no-dev -f '{f}' --depth 0)
    if [[ ",$enabled," == *",client,"* ]]; then
        failed=$((failed + 1))
        echo "FAIL: --features $set turns on the client: [$enabled]"
    else
        passed=$((passed + 1))
    fi
done
# The exporter's crate builds snodo without the client (or any feature).
tree=$(cargo tree -q -p snodo-otlp -e normal,features -i snodo 2>&1)
status=$?
enabled=$(grep -o 'snodo feature "[a-z-]*"' <<<"$tree" | sort -u)
if [[ $status -ne 0 ]]; then
    failed=$((failed + 1))
    echo "FAIL: cargo tree for snodo-otlp: exit $status"
    echo "$tree"
elif [[ -n $enabled ]]; then
    failed=$((failed + 1))
    echo "FAIL: snodo-otlp turns on snodo features: $enabled"
else
    passed=$((passed + 1))
fi
echo "feature-sets: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
