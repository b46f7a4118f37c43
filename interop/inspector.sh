#!/usr/bin/env bash
# interop/inspector.sh - run the MCP Inspector v2 CLI (pinned in interop/node/package.json)
# against an MCP server, in the 2026-07-28 ("modern") protocol era by default, and print
# the Inspector's JSON output (`--format json`: one {"result":{...}} object) on stdout.
# Errors come as {"error":{...}} on stderr. The exit code is the Inspector's: 0 ok,
# 1 usage/error, 3 auth required, 4 unreachable, 5 the tool returned isError:true.
#
# Usage:
#   interop/inspector.sh [OPTIONS] list TARGET
#   interop/inspector.sh [OPTIONS] call TARGET TOOL [KEY=VALUE...]
#   interop/inspector.sh [OPTIONS] call TARGET TOOL --json '{"key":"value"}'
#   interop/inspector.sh [OPTIONS] raw [INSPECTOR-CLI-ARGS...]   (any other method, e.g.
#       raw http://127.0.0.1:3000/mcp --method resources/read --uri test://static-text)
#
# TARGET is either
#   an HTTP URL of a Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp, or
#   --stdio COMMAND [ARGS...] --   the server command (the `--` may be left out after `list`).
#
# Examples:
#   interop/inspector.sh list http://127.0.0.1:3000/mcp
#   interop/inspector.sh call http://127.0.0.1:3000/mcp add a=2 b=3
#   interop/inspector.sh list --stdio target/debug/my-server --stdio
#   interop/inspector.sh call --stdio target/debug/my-server --stdio -- add a=2 b=3
#
# OPTIONS:
#   --era modern|auto|legacy   protocol era (default: modern, i.e. 2026-07-28 only; the
#                              Inspector itself defaults ad-hoc runs to legacy)
#   --env KEY=VALUE            extra environment for a stdio server (repeatable). A stdio
#                              server otherwise gets only HOME, PATH, SHELL, TERM, LC_CTYPE,
#                              plus RUST_LOG, RUST_BACKTRACE, CARGO_HOME, RUSTUP_HOME and
#                              CARGO_TARGET_DIR when set here.
#   --header 'Name: value'     extra HTTP header (repeatable)
#   --timeout MS               connect timeout in milliseconds (default 15000)
#   --quiet                    pass -q: drop status lines and a stdio server's stderr
#
# The Inspector keeps state under $HOME/.mcp-inspector; this script gives it a fresh,
# temporary HOME for every run and never starts an interactive OAuth login
# (--stored-auth-only). Node 22 and the Inspector are installed by scripts/tools.sh.

# shellcheck disable=SC2031 # PATH is set per command on purpose
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR/.. source=scripts/tools.sh
source "$here/../scripts/tools.sh"

usage() {
    sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 1
}

era=modern
quiet=()
opts=()
server_env=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --era)
            [[ $# -ge 2 ]] || usage
            era="$2"
            shift 2
            ;;
        --env)
            [[ $# -ge 2 && "$2" == *=* ]] || usage
            server_env+=(-e "$2")
            shift 2
            ;;
        --header)
            [[ $# -ge 2 ]] || usage
            opts+=(--header "$2")
            shift 2
            ;;
        --timeout)
            [[ $# -ge 2 ]] || usage
            opts+=(--connect-timeout "$2")
            shift 2
            ;;
        --quiet)
            quiet=(-q)
            shift
            ;;
        -h | --help) usage ;;
        *) break ;;
    esac
done
[[ $# -ge 1 ]] || usage
case "$era" in modern | auto | legacy) ;; *) usage ;; esac
cmd="$1"
shift

# Parses TARGET from the arguments; sets target_url or target_cmd, and rest.
target_url=""
target_cmd=()
rest=()
parse_target() {
    local allow_open_end="$1"
    shift
    [[ $# -ge 1 ]] || usage
    if [[ "$1" == "--stdio" ]]; then
        shift
        while [[ $# -gt 0 && "$1" != "--" ]]; do
            target_cmd+=("$1")
            shift
        done
        if [[ $# -gt 0 ]]; then
            shift # the `--`
        elif [[ "$allow_open_end" != yes ]]; then
            echo "inspector.sh: end the stdio command with -- before the tool name" >&2
            exit 1
        fi
        [[ ${#target_cmd[@]} -ge 1 ]] || usage
    else
        case "$1" in
            http://* | https://*) target_url="$1" ;;
            *)
                echo "inspector.sh: TARGET must be an http(s) URL or --stdio COMMAND..." >&2
                exit 1
                ;;
        esac
        shift
    fi
    rest=("$@")
}

# Runs the Inspector CLI with the era, format and isolation options, then the target.
run_inspector() {
    local node_bin inspector state status
    node_bin="$(ensure_node22)"
    inspector="$(ensure_inspector)"
    state="$(mktemp -d "${TMPDIR:-/tmp}/snodo-inspector.XXXXXX")"
    local env_pass=()
    local name
    for name in HOME RUST_LOG RUST_BACKTRACE CARGO_HOME RUSTUP_HOME CARGO_TARGET_DIR; do
        if [[ -n "${!name:-}" ]]; then
            env_pass+=(-e "$name=${!name}")
        fi
    done
    # The URL goes first: --tool-arg and --header take every following word up to the next option.
    local args=(--cli)
    [[ -n "$target_url" ]] && args+=("$target_url")
    args+=("$@" --protocol-era "$era" --format json --stored-auth-only
        ${quiet[@]+"${quiet[@]}"} ${opts[@]+"${opts[@]}"})
    if [[ -z "$target_url" ]]; then
        args+=(${env_pass[@]+"${env_pass[@]}"} ${server_env[@]+"${server_env[@]}"} -- "${target_cmd[@]}")
    fi
    status=0
    PATH="$node_bin:$PATH" HOME="$state" \
        MCP_CATALOG_PATH="$state/mcp.json" MCP_CLIENT_CONFIG_PATH="$state/client.json" \
        "$inspector" "${args[@]}" || status=$?
    rm -rf "$state"
    return "$status"
}

case "$cmd" in
    list)
        parse_target yes "$@"
        [[ ${#rest[@]} -eq 0 ]] || usage
        run_inspector --method tools/list
        ;;
    call)
        parse_target no "$@"
        [[ ${#rest[@]} -ge 1 ]] || usage
        tool="${rest[0]}"
        call_args=(--method tools/call --tool-name "$tool")
        if [[ ${#rest[@]} -ge 2 && "${rest[1]}" == "--json" ]]; then
            [[ ${#rest[@]} -eq 3 ]] || usage
            call_args+=(--tool-args-json "${rest[2]}")
        elif [[ ${#rest[@]} -ge 2 ]]; then
            for pair in "${rest[@]:1}"; do
                [[ "$pair" == *=* ]] || usage
            done
            call_args+=(--tool-arg "${rest[@]:1}")
        fi
        run_inspector "${call_args[@]}"
        ;;
    raw)
        node_bin="$(ensure_node22)"
        inspector="$(ensure_inspector)"
        state="$(mktemp -d "${TMPDIR:-/tmp}/snodo-inspector.XXXXXX")"
        trap 'rm -rf "$state"' EXIT
        status=0
        PATH="$node_bin:$PATH" HOME="$state" \
            MCP_CATALOG_PATH="$state/mcp.json" MCP_CLIENT_CONFIG_PATH="$state/client.json" \
            "$inspector" --cli --protocol-era "$era" --format json --stored-auth-only \
            ${quiet[@]+"${quiet[@]}"} ${opts[@]+"${opts[@]}"} "$@" || status=$?
        exit "$status"
        ;;
    *) usage ;;
esac
