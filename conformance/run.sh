#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned in conformance/package.json)
# against the snodo-conformance fixture server, writes a summary to
# conformance/results/, and fails on any new failure or warning, and on any
# baseline entry that now passes (conformance/baseline.yml).
#
# Five legs, all gating: the scored `--requirements 2026-07-28` set (with the
# baseline), the wider `--suite all --spec-version 2026-07-28` selection, the
# scored initialize-era set `--requirements 2025-11-25`, every scenario
# the runner selects for `--spec-version 2025-06-18`, and the Skills
# extension's three server scenarios.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/tools.sh
source scripts/tools.sh

PATH="$(ensure_node22):$PATH"
export PATH
runner="$(ensure_conformance)"
# The features the test leg builds with, so that its artifacts are reused.
cargo build --quiet --all-features --bin snodo-conformance
fixture="$PWD/target/debug/snodo-conformance"

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="conformance/results/raw/$stamp"
mkdir -p "$raw"

# The fixture exits when its stdin closes: keep a pipe open for the run.
coproc FIXTURE { exec "$fixture" server --port 0; }
fixture_pid=$FIXTURE_PID
trap 'kill "$fixture_pid" 2>/dev/null || true' EXIT
read -r -t 30 line <&"${FIXTURE[0]}"
url=$(printf '%s' "$line" | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')
[[ -n "$url" ]] || { echo "fixture did not print its url: $line" >&2; exit 1; }
echo "fixture at $url"

leg() { # leg NAME ARGS...
    local name=$1; shift
    echo "== conformance: $name"
    local status=0
    timeout 600 "$runner" server --url "$url" "$@" -o "$raw/$name" >"$raw/$name.txt" 2>&1 || status=$?
    grep -E '^(Total|✓|✗)' "$raw/$name.txt" || true
    # A crash of the summarizer fails the leg (set -e does not apply here:
    # the caller tests this function's status).
    python3 conformance/summarize.py "$raw/$name" "conformance/results/$name.md" "$name" "$*" || status=1
    return $status
}

status=0
leg requirements-2026-07-28 --requirements 2026-07-28 --expected-failures conformance/baseline.yml || status=$?
python3 conformance/summarize.py --check-warnings "$raw/requirements-2026-07-28" conformance/baseline.yml 50 196 || status=1
leg suite-all-2026-07-28 --suite all --spec-version 2026-07-28 || status=$?
python3 conformance/summarize.py --check-warnings "$raw/suite-all-2026-07-28" conformance/baseline.yml 40 152 || status=1
leg requirements-2025-11-25 --requirements 2025-11-25 || status=$?
python3 conformance/summarize.py --check-warnings "$raw/requirements-2025-11-25" conformance/baseline.yml 33 80 || status=1
leg spec-2025-06-18 --spec-version 2025-06-18 || status=$?
python3 conformance/summarize.py --check-warnings "$raw/spec-2025-06-18" conformance/baseline.yml 27 56 || status=1
# The Skills extension's server scenarios: off the revision's timeline, so
# the runner needs --force; one folder, one summary for the three.
skills=(sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory)
echo "== conformance: extension-skills"
for scenario in "${skills[@]}"; do
    timeout 300 "$runner" server --url "$url" --scenario "$scenario" --force \
        --spec-version 2026-07-28 -o "$raw/extension-skills" >"$raw/extension-skills-$scenario.txt" 2>&1 || status=1
    grep -E '^(Passed:|Total)' "$raw/extension-skills-$scenario.txt" | sed "s|^|   $scenario: |" || true
done
python3 conformance/summarize.py "$raw/extension-skills" conformance/results/extension-skills.md \
    extension-skills "--force --spec-version 2026-07-28 --scenario {$(IFS=,; echo "${skills[*]}")}" || status=1
python3 conformance/summarize.py --check-warnings "$raw/extension-skills" conformance/baseline.yml 3 45 || status=1
if [[ $status -ne 0 ]]; then
    echo "conformance: FAILED (see $raw)"
fi
exit $status
