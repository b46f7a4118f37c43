#!/usr/bin/env bash
# The callgrind regression gate: installs valgrind if it is missing
# (scripts/tools.sh), builds snodo-callgrind in release, checks the gate's own
# comparison, then the instructions and allocations per request against
# bench/callgrind-baseline.json (fails on more than 5 % over).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/tools.sh
source scripts/tools.sh
ensure_valgrind >/dev/null
cargo build --release --quiet -p bench-snodo-tools
target/release/snodo-callgrind self-test
target/release/snodo-callgrind check bench/callgrind-baseline.json
