#!/usr/bin/env python3
"""A small MCP server built with the official Python SDK (`mcp` 2.3.0, `MCPServer`).

snodo's client interop tests (interop/client_interop.sh) drive it with the `snodo` CLI, so
that the client is checked against a server no one here wrote. It serves 2026-07-28 (and the
initialize-era revisions the SDK also speaks) and exposes:

    tools     add(a: int, b: int) -> int
              echo(message: str) -> str
              count(n: int): reports progress n times, returns "counted to <n>"
              confirm_delete(item: str): asks the user to confirm (elicitation, a
                        multi round-trip request on 2026-07-28), returns "deleted <item>"
                        or "kept <item>"
    resource  interop://greeting (text/plain): "Hello from the Python SDK"
    prompt    summarize(topic: str): "Please summarize <topic> in one paragraph."

Usage:
    python server.py --stdio          serve over stdin/stdout
    python server.py --http PORT      serve Streamable HTTP on 127.0.0.1:PORT (0 picks a free
                                      port); prints {"url": "http://127.0.0.1:PORT/mcp"} once
                                      the socket listens, and runs until killed
    python server.py --sse PORT       serve the 2024-11-05 HTTP+SSE transport on 127.0.0.1:PORT
                                      (GET /sse, POST /messages/); prints {"url": ".../sse"}
"""

from __future__ import annotations

import argparse
import json
import socket
import sys

from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

mcp = MCPServer(
    name="snodo-interop-python",
    version="1.0.0",
    instructions="An interop fixture: add, echo, count (with progress), a greeting, a prompt.",
    log_level="WARNING",
)


@mcp.tool(description="Add two integers")
def add(a: int, b: int) -> int:
    return a + b


@mcp.tool(description="Echo a message back")
def echo(message: str) -> str:
    return message


@mcp.tool(description="Count from 1 to n, reporting progress at each step")
async def count(n: int, ctx: Context) -> str:
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i} of {n}")
        await anyio.sleep(0.05)
    return f"counted to {n}"


class Confirmation(BaseModel):
    confirm: bool


def ask_confirmation(item: str) -> Elicit[Confirmation]:
    return Elicit(f"Delete {item}?", Confirmation)


@mcp.tool(description="Delete an item once the user confirms (asks through elicitation)")
def confirm_delete(item: str, answer: Annotated[Confirmation, Resolve(ask_confirmation)]) -> str:
    return f"deleted {item}" if answer.confirm else f"kept {item}"


@mcp.resource(
    "interop://greeting",
    name="greeting",
    description="A fixed greeting",
    mime_type="text/plain",
)
def greeting() -> str:
    return "Hello from the Python SDK"


@mcp.prompt(description="Ask for a summary of a topic")
def summarize(topic: str) -> str:
    return f"Please summarize {topic} in one paragraph."


async def serve_http(port: int, sse: bool = False) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    if sse:
        url, app = f"{base}/sse", mcp.sse_app(host="127.0.0.1")
    else:
        url, app = f"{base}/mcp", mcp.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)
    print(json.dumps({"url": url}), flush=True)
    await server.serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stdio", action="store_true", help="serve over stdio")
    mode.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT")
    mode.add_argument("--sse", type=int, metavar="PORT", help="serve HTTP+SSE (2024-11-05) on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.stdio:
        mcp.run("stdio")
    elif args.sse is not None:
        anyio.run(serve_http, args.sse, True)
    else:
        anyio.run(serve_http, args.http)


if __name__ == "__main__":
    sys.exit(main())
