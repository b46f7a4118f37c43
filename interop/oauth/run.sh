#!/usr/bin/env bash
# The OAuth tests against a real OpenID Connect provider: installs Node 22
# and the pinned oidc-provider (scripts/tools.sh), and for the gateway's
# TypeScript SDK clients and Python SDK backend the pinned interop/node
# packages and the Python SDK, then runs the ignored tests that start it on
# 127.0.0.1 (crates/snodo/tests/oauth_provider.rs,
# crates/snodo-cli/tests/gateway_auth.rs,
# crates/snodo-cli/tests/oauth_login.rs).
#
#   interop/oauth/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/tools.sh
source scripts/tools.sh

node_bin="$(ensure_node22)"
SNODO_OIDC_DIR="$(ensure_oidc_provider)"
SNODO_NODE="$node_bin/node"
SNODO_PYTHON="$(ensure_python_mcp)"
ensure_inspector >/dev/null
export SNODO_OIDC_DIR SNODO_NODE SNODO_PYTHON
cargo test --all-features --test oauth_provider --test oauth_login --test gateway_auth -- --ignored
