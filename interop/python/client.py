#!/usr/bin/env python3
"""Drive an MCP server with the official Python SDK's client (`mcp`, pinned in requirements.txt).

Used by snodo's interop tests to check that a real, independent client can talk to snodo
servers. It connects over Streamable HTTP (`--http URL`) or stdio (`--stdio "command line"`,
split like a shell would, the server's stderr passed through to ours), lists the server's
tools, optionally calls one (`--call NAME --args JSON`), and prints one compact JSON object
per step on stdout:

    {"step":"connect","protocolVersion":"2026-07-28","serverInfo":{...},"capabilities":{...}}
    {"step":"list_tools","tools":["name", ...]}
    {"step":"progress","progress":50.0,"total":100.0,"message":"..."}    (with --progress)
    {"step":"log","level":"info","logger":null,"data":...}               (with --log-level)
    {"step":"call_tool","name":"...","isError":false,"content":[...],"structuredContent":...}

On failure it prints {"step":"error","stage":"connect|list_tools|call_tool","error":"<type>",
"message":"...","code":<JSON-RPC code or null>,"data":...} and exits non-zero.

Protocol revision: by default (`--mode auto`) the SDK's `Client` probes `server/discover` at
its newest modern revision (2026-07-28) and only falls back to the initialize handshake when
the server gives no evidence of being modern; `--mode 2026-07-28` adopts that revision without
a probe, `--mode legacy` forces the initialize handshake. The negotiated revision must equal
`--expect-protocol` (default 2026-07-28; `any` accepts whatever was negotiated), so a silent
fallback to the 2025 handshake fails the run.

Exit codes: 0 success; 1 any failure (connect, protocol, JSON-RPC error, timeout, wrong
revision); 2 bad command line; 5 the called tool returned isError:true (as MCP Inspector does),
unless --allow-tool-error is given.

Example:
    python client.py --http http://127.0.0.1:3000/mcp --call add --args '{"a":2,"b":3}'
    python client.py --stdio "target/debug/my-server --stdio" --call test_simple_text
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from typing import Any, NoReturn

import anyio
import httpx2
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation, LoggingMessageNotificationParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

try:
    BaseExceptionGroup
except NameError:  # Python 3.10; anyio depends on the backport there
    from exceptiongroup import BaseExceptionGroup

EXIT_FAILURE = 1
EXIT_TOOL_ERROR = 5
PAGE_CAP = 100


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def dump(model: Any) -> Any:
    if model is None:
        return None
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="List (and optionally call) the tools of an MCP server with the official Python SDK; "
        "prints one JSON object per step.",
    )
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--http", metavar="URL", help="Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp")
    target.add_argument("--stdio", metavar="COMMAND", help='server command line, e.g. "target/debug/srv --stdio"')
    p.add_argument("--call", metavar="NAME", help="tool to call after listing")
    p.add_argument("--args", metavar="JSON", default=None, help="tool arguments as a JSON object (default: {})")
    p.add_argument(
        "--mode",
        default="auto",
        choices=["auto", "legacy", *MODERN_PROTOCOL_VERSIONS],
        help="how the SDK picks the protocol revision (default: auto = server/discover, else initialize)",
    )
    p.add_argument(
        "--expect-protocol",
        metavar="VERSION",
        default="2026-07-28",
        help="fail unless this revision is negotiated; 'any' to accept any (default: 2026-07-28)",
    )
    p.add_argument("--progress", action="store_true", help="request progress for the call and print each update")
    p.add_argument(
        "--log-level",
        metavar="LEVEL",
        default=None,
        help="opt in to server log messages at LEVEL (debug, info, ...) and print them",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="overall time limit in seconds (default: 30)")
    p.add_argument(
        "--allow-tool-error",
        action="store_true",
        help="exit 0 even when the tool result has isError:true",
    )
    ns = p.parse_args(argv)
    if ns.args is not None and ns.call is None:
        p.error("--args needs --call")
    try:
        ns.tool_args = json.loads(ns.args) if ns.args is not None else {}
    except json.JSONDecodeError as e:
        p.error(f"--args is not valid JSON: {e}")
    if not isinstance(ns.tool_args, dict):
        p.error("--args must be a JSON object")
    if ns.stdio is not None:
        ns.stdio_argv = shlex.split(ns.stdio)
        if not ns.stdio_argv:
            p.error("--stdio needs a command")
    return ns


def build_target(ns: argparse.Namespace) -> Any:
    if ns.http is not None:
        # trust_env=False: talk to the given URL directly, never through a proxy from the environment.
        http = httpx2.AsyncClient(
            timeout=httpx2.Timeout(30.0, read=300.0),
            trust_env=False,
        )
        return streamable_http_client(ns.http, http_client=http), http
    command, *args = ns.stdio_argv
    # The whole environment is passed on (the SDK would otherwise pass only a safe subset).
    return StdioServerParameters(command=command, args=args, env=dict(os.environ)), None


async def run(ns: argparse.Namespace, state: dict[str, str]) -> int:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        emit({"step": "progress", "progress": progress, "total": total, "message": message})

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        emit({"step": "log", "level": params.level, "logger": params.logger, "data": params.data})

    target, http = build_target(ns)
    client = Client(
        target,
        mode=ns.mode,
        client_info=Implementation(name="snodo-interop-python", version="0.1.0"),
        logging_callback=on_log if ns.log_level else None,
        log_level=ns.log_level,
        read_timeout_seconds=ns.timeout,
    )
    state["stage"] = "connect"
    try:
        async with client:
            version = client.protocol_version
            emit(
                {
                    "step": "connect",
                    "protocolVersion": version,
                    "serverInfo": dump(client.server_info),
                    "capabilities": dump(client.server_capabilities),
                }
            )
            if ns.expect_protocol != "any" and version != ns.expect_protocol:
                raise RuntimeError(f"negotiated protocol {version!r}, expected {ns.expect_protocol!r}")

            state["stage"] = "list_tools"
            names: list[str] = []
            cursor: str | None = None
            for _ in range(PAGE_CAP):
                page = await client.list_tools(cursor=cursor)
                names.extend(tool.name for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            else:
                raise RuntimeError(f"tools/list still had a next cursor after {PAGE_CAP} pages")
            emit({"step": "list_tools", "tools": names})

            if ns.call is None:
                return 0
            state["stage"] = "call_tool"
            result = await client.call_tool(
                ns.call,
                ns.tool_args,
                progress_callback=on_progress if ns.progress else None,
            )
            body = dump(result) or {}
            out: dict[str, Any] = {
                "step": "call_tool",
                "name": ns.call,
                "isError": bool(body.get("isError", False)),
                "content": body.get("content", []),
                "structuredContent": body.get("structuredContent"),
            }
            if "_meta" in body:
                out["_meta"] = body["_meta"]
            emit(out)
            if out["isError"] and not ns.allow_tool_error:
                return EXIT_TOOL_ERROR
            return 0
    finally:
        if http is not None:
            await http.aclose()


def fail(stage: str, exc: BaseException) -> NoReturn:
    inner = leaf(exc)
    out: dict[str, Any] = {
        "step": "error",
        "stage": stage,
        "error": type(inner).__name__,
        "message": str(inner) or repr(inner),
        "code": None,
        "data": None,
    }
    if isinstance(inner, MCPError):
        out["code"] = inner.code
        out["data"] = inner.data
    emit(out)
    print(f"client.py: {stage} failed: {out['error']}: {out['message']}", file=sys.stderr)
    sys.exit(EXIT_FAILURE)


def main(argv: list[str] | None = None) -> int:
    ns = parse_args(sys.argv[1:] if argv is None else argv)
    state = {"stage": "connect"}

    async def bounded() -> int:
        with anyio.fail_after(ns.timeout):
            return await run(ns, state)

    try:
        return anyio.run(bounded)
    except TimeoutError as e:
        if not str(e):
            e = TimeoutError(f"no answer within {ns.timeout:g} s")
        fail(state["stage"], e)
    except Exception as e:  # any failure, including exception groups from the SDK's task groups
        fail(state["stage"], e)


if __name__ == "__main__":
    sys.exit(main())
