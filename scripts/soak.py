#!/usr/bin/env python3
"""A bounded hostile soak of `snodo demo --http` on 127.0.0.1.

    python3 scripts/soak.py                # 180 s, the default mix
    python3 scripts/soak.py --seconds 60   # shorter
    python3 scripts/soak.py --json out.json

Builds the release CLI, starts `snodo demo --http 127.0.0.1:0` pinned to CPU
0, and drives from CPU 1, for a bounded time:

- valid load: keep-alive `tools/call add` over 2026-07-28 (each answer's id
  and sum checked) and calls inside initialize-era sessions;
- hostile traffic: malformed and truncated JSON, mismatched `Mcp-*` headers,
  3 MB bodies (declared and chunked) written before reading, requests
  abandoned half-way, slow clients dribbling their headers, idle sockets,
  listen streams opened and dropped, sessions opened and never ended;
- floods of what every client shares, each from an address of its own: finished
  and unfinished initialize-era handshakes from 127.0.0.1 (the share fills,
  the rest must be 503 with a Retry-After), and tasks from 127.0.0.3 (past
  the share, a retryable -32603 with retryAfterMs), while the legitimate
  session clients come from 127.0.0.2 and a task client from 127.0.0.4, and
  each of them must get in at every try.

It samples the server's resident memory every second and fails (exit 1) on
memory growth (the peak of the last quarter above the peak of the second
quarter by more than 25 % + 4 MiB), on a wrong id or sum, on any 5xx, or on
a valid call that waits more than 2 s. It prints one summary: duration,
calls, hostile requests by kind, memory start/peak/end, errors. Loopback
only; every loop stops at the deadline. Needs Linux (taskset, /proc).
"""

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
STALL = 2.0


class Stats:
    def __init__(self):
        self.calls = 0
        self.session_calls = 0
        self.hostile = {}
        self.errors = []
        self.latencies = []
        self.status = {}

    def error(self, what):
        if len(self.errors) < 50:
            self.errors.append(what)
        else:
            self.errors[-1] = f"... and more (last: {what})"

    def count(self, kind):
        self.hostile[kind] = self.hostile.get(kind, 0) + 1

    def saw(self, status):
        self.status[status] = self.status.get(status, 0) + 1
        if 500 <= status and status != 503:
            self.error(f"HTTP {status}")


async def read_response(reader, timeout):
    """Reads one HTTP/1.1 response: (status, headers, body)."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    body = b""
    if "content-length" in headers:
        n = int(headers["content-length"])
        body = await asyncio.wait_for(reader.readexactly(n), timeout)
    elif headers.get("transfer-encoding") == "chunked":
        while True:
            size = int((await asyncio.wait_for(reader.readline(), timeout)).strip(), 16)
            if size == 0:
                await asyncio.wait_for(reader.readline(), timeout)
                break
            body += await asyncio.wait_for(reader.readexactly(size + 2), timeout)
            body = body[:-2]
    return status, headers, body


def request(port, body, headers):
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    head += "Accept: application/json, text/event-stream\r\n"
    for k, v in headers.items():
        head += f"{k}: {v}\r\n"
    head += f"Content-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def call_body(rid, a, b, meta=True):
    params = {"name": "add", "arguments": {"a": a, "b": b}}
    if meta:
        params["_meta"] = META
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode()


def sse_data(body):
    """The JSON messages of an SSE body, or of a JSON body."""
    text = body.decode("utf-8", "replace")
    if text.lstrip().startswith("{"):
        return [json.loads(text)]
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


async def valid_worker(port, deadline, stats, wid):
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "add"}
    reader = writer = None
    n = 0
    while time.monotonic() < deadline:
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            n += 1
            rid = f"w{wid}-{n}"
            a, b = random.randint(-10**6, 10**6), random.randint(-10**6, 10**6)
            started = time.monotonic()
            writer.write(request(port, call_body(rid, a, b), headers))
            status, _, body = await read_response(reader, STALL * 5)
            took = time.monotonic() - started
            stats.saw(status)
            stats.latencies.append(took)
            if took > STALL:
                stats.error(f"a valid call waited {took:.2f} s")
            if status != 200:
                stats.error(f"valid call: HTTP {status}")
                continue
            reply = sse_data(body)[-1]
            if reply.get("id") != rid:
                stats.error(f"wrong id: sent {rid}, got {reply.get('id')}")
            elif reply.get("result", {}).get("structuredContent", {}).get("sum") != a + b:
                stats.error(f"wrong sum for {rid}: {reply}")
            stats.calls += 1
        except (asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            stats.error(f"a valid call stalled or broke: {type(e).__name__}")
            writer = close(writer)
        except OSError as e:
            stats.error(f"a valid call's connection failed: {e}")
            writer = close(writer)
    close(writer)


def close(writer):
    if writer is not None:
        try:
            writer.close()
        except Exception:
            pass
    return None


async def session_worker(port, deadline, stats, wid):
    """Initialize-era sessions from 127.0.0.2: initialize, a few calls,
    DELETE. The session flood comes from another address: these must get in
    every time."""
    while time.monotonic() < deadline:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.2", 0))
            init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {},
                "clientInfo": {"name": "soak", "version": "1"}}}).encode()
            writer.write(request(port, init, {"MCP-Protocol-Version": LEGACY}))
            status, headers, _ = await read_response(reader, STALL * 5)
            stats.saw(status)
            sid = headers.get("mcp-session-id")
            if status != 200 or not sid:
                stats.error(f"initialize: HTTP {status}")
                close(writer)
                continue
            h = {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": sid}
            note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
            writer.write(request(port, note, h))
            status, _, _ = await read_response(reader, STALL * 5)
            stats.saw(status)
            for i in range(20):
                a, b = random.randint(0, 1000), random.randint(0, 1000)
                rid = 1000 * wid + i
                started = time.monotonic()
                writer.write(request(port, call_body(rid, a, b, meta=False), h))
                status, _, body = await read_response(reader, STALL * 5)
                took = time.monotonic() - started
                stats.saw(status)
                if took > STALL:
                    stats.error(f"a session call waited {took:.2f} s")
                reply = sse_data(body)[-1] if status == 200 else {}
                if reply.get("id") != rid:
                    stats.error(f"session: wrong id: sent {rid}, got {reply.get('id')}")
                elif reply.get("result", {}).get("structuredContent", {}).get("sum") != a + b:
                    stats.error(f"session: wrong sum: {reply}")
                stats.session_calls += 1
            # A well-behaved client ends its session (the flood leaves
            # its own open, from another address).
            writer.write(f"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {sid}\r\nMCP-Protocol-Version: {LEGACY}\r\n\r\n".encode())
            status, _, _ = await read_response(reader, STALL * 5)
            stats.saw(status)
            close(writer)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, OSError) as e:
            stats.error(f"session worker: {type(e).__name__}: {e}")


TASKS_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}


def task_call(rid):
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
        "name": "report", "arguments": {"seconds": 1}, "_meta": TASKS_META}}).encode()


async def session_flood(port, deadline, stats):
    """Handshakes from 127.0.0.1 on one keep-alive connection, finished and
    not: past the address's share every one is 503 with a Retry-After."""
    rid = 0
    while time.monotonic() < deadline:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.1", 0))
            while time.monotonic() < deadline:
                rid += 1
                init = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": {
                    "protocolVersion": LEGACY, "capabilities": {},
                    "clientInfo": {"name": "flood", "version": "1"}}}).encode()
                writer.write(request(port, init, {"MCP-Protocol-Version": LEGACY}))
                status, headers, _ = await read_response(reader, STALL * 5)
                stats.saw(status)
                if status == 503:
                    stats.count("session flood refused")
                    if not headers.get("retry-after", "").isdigit():
                        stats.error("a refused initialize has no Retry-After")
                    continue
                stats.count("session flood opened")
                sid = headers.get("mcp-session-id")
                if sid and rid % 2 == 0:
                    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
                    writer.write(request(port, note, {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": sid}))
                    status, _, _ = await read_response(reader, STALL * 5)
                    stats.saw(status)
            close(writer)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            stats.error(f"session flood: no answer in time ({type(e).__name__})")
        except OSError:
            stats.count("session flood (reset)")


async def task_worker(port, deadline, stats, source, flood):
    """Tasks of the demo's `report` from `source`: as fast as possible when
    `flood` (past the share: a retryable -32603), one every half second
    otherwise (each must become a task)."""
    rid = 0
    while time.monotonic() < deadline:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            while time.monotonic() < deadline:
                rid += 1
                writer.write(request(port, task_call(rid), {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "report"}))
                status, _, body = await read_response(reader, STALL * 5)
                stats.saw(status)
                replies = sse_data(body) if status == 200 else []
                reply = replies[-1] if replies else {}
                created = reply.get("result", {}).get("resultType") == "task"
                if flood:
                    error = reply.get("error", {})
                    if created:
                        stats.count("task flood created")
                    elif error.get("code") == -32603 and error.get("data", {}).get("retryable"):
                        stats.count("task flood refused")
                    else:
                        stats.error(f"task flood: unexpected answer {reply}")
                else:
                    if not created:
                        stats.error(f"a task client beside the flood was refused: {reply}")
                    stats.count("task beside the flood")
                    await asyncio.sleep(0.5)
            close(writer)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            stats.error(f"tasks from {source}: no answer in time ({type(e).__name__})")


MALFORMED = [
    b"{",
    b"not json",
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"',
    b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}',
    b"[" * 10000 + b"]" * 10000,
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":' + b"9" * 5000 + b',"b":1}}}',
    b"\xff\xfe\x00garbage",
    b"",
]


async def hostile_worker(port, deadline, stats, kind):
    while time.monotonic() < deadline:
        try:
            if kind == "malformed":
                body = random.choice(MALFORMED)
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(request(port, body, {"MCP-Protocol-Version": MODERN}))
                status, _, _ = await read_response(reader, 10)
                stats.saw(status)
                stats.count(kind)
                close(writer)
            elif kind == "mismatched headers":
                rid = random.randint(1, 10**9)
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list", "Mcp-Name": "nope"}
                writer.write(request(port, call_body(rid, 1, 2), headers))
                status, _, body = await read_response(reader, 10)
                stats.saw(status)
                if status == 200:
                    stats.error("mismatched headers were accepted")
                stats.count(kind)
                close(writer)
            elif kind == "oversized":
                await oversized(port, stats, chunked=random.random() < 0.5)
            elif kind == "abandoned":
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                full = request(port, call_body(1, 1, 1), {"MCP-Protocol-Version": MODERN})
                writer.write(full[: random.randint(1, len(full) - 1)])
                await writer.drain()
                await asyncio.sleep(random.random() * 0.2)
                close(writer)
                stats.count(kind)
            elif kind == "slow":
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
                for byte in head:
                    if time.monotonic() > deadline:
                        break
                    writer.write(bytes([byte]))
                    await writer.drain()
                    await asyncio.sleep(0.5)
                close(writer)
                stats.count(kind)
            elif kind == "idle":
                conns = []
                for _ in range(50):
                    conns.append((await asyncio.open_connection("127.0.0.1", port))[1])
                await asyncio.sleep(min(5, max(0, deadline - time.monotonic())))
                for w in conns:
                    close(w)
                stats.count(kind)
            elif kind == "listen dropped":
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                                   "params": {"_meta": META, "notifications": {"toolsListChanged": True}}}).encode()
                writer.write(request(port, body, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"}))
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
                stats.saw(int(head.split(b" ")[1]))
                await asyncio.sleep(random.random())
                close(writer)
                stats.count(kind)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            stats.error(f"{kind}: no answer in time ({type(e).__name__})")
        except OSError:
            # A reset after a refusal is fine for hostile clients.
            stats.count(f"{kind} (reset)")


async def oversized(port, stats, chunked):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    size = 3_000_000
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
    writer.write(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n".encode())
    chunk = b" " * 65536
    left = size
    while left > 0:
        n = min(left, len(chunk))
        if chunked:
            writer.write(f"{n:x}\r\n".encode() + chunk[:n] + b"\r\n")
        else:
            writer.write(chunk[:n])
        await writer.drain()
        left -= n
    if chunked:
        writer.write(b"0\r\n\r\n")
    await writer.drain()
    status, _, _ = await read_response(reader, 10)
    stats.saw(status)
    if status != 413:
        stats.error(f"oversized body: HTTP {status}")
    stats.count("oversized (chunked)" if chunked else "oversized")
    close(writer)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def sample(pid, deadline, samples):
    while time.monotonic() < deadline:
        samples.append(rss_kib(pid))
        await asyncio.sleep(1)
    samples.append(rss_kib(pid))


async def soak(port, pid, seconds, stats, samples):
    deadline = time.monotonic() + seconds
    tasks = [asyncio.create_task(sample(pid, deadline, samples))]
    tasks += [asyncio.create_task(valid_worker(port, deadline, stats, i)) for i in range(8)]
    tasks += [asyncio.create_task(session_worker(port, deadline, stats, i)) for i in range(2)]
    mix = ["malformed", "malformed", "mismatched headers", "oversized", "abandoned",
           "abandoned", "slow", "slow", "idle", "listen dropped", "listen dropped"]
    tasks += [asyncio.create_task(hostile_worker(port, deadline, stats, k)) for k in mix]
    tasks.append(asyncio.create_task(session_flood(port, deadline, stats)))
    tasks.append(asyncio.create_task(task_worker(port, deadline, stats, "127.0.0.3", True)))
    tasks.append(asyncio.create_task(task_worker(port, deadline, stats, "127.0.0.4", False)))
    await asyncio.wait_for(asyncio.gather(*tasks), seconds + 60)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=180)
    parser.add_argument("--json", help="also write the summary as JSON here")
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not 10 <= args.seconds <= 1800:
        sys.exit("--seconds must be between 10 and 1800")
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "snodo-cli"], cwd=ROOT, check=True)
    binary = os.path.join(ROOT, "target", "release", "snodo")
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") and os.cpu_count() > 1 else []
    server = subprocess.Popen(pin + [binary, "demo", "--http", "127.0.0.1:0"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    try:
        line = server.stdout.readline().decode()
        url = json.loads(line)["url"]
        port = int(re.search(r":(\d+)/", url).group(1))
        if pin:
            os.sched_setaffinity(0, {1})
        stats, samples = Stats(), []
        started = time.monotonic()
        asyncio.run(soak(port, server.pid, args.seconds, stats, samples))
        took = time.monotonic() - started
        alive = server.poll() is None
    finally:
        server.stdin.close()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    q = max(1, len(samples) // 4)
    second_quarter_peak = max(samples[q:2 * q] or samples)
    last_quarter_peak = max(samples[-q:])
    if last_quarter_peak > second_quarter_peak * 1.25 + 4096:
        stats.error(f"memory grew: second-quarter peak {second_quarter_peak} KiB, last-quarter peak {last_quarter_peak} KiB")
    if not alive:
        stats.error("the server exited during the soak")
    lat = sorted(stats.latencies) or [0]
    summary = {
        "seconds": round(took, 1),
        "valid_calls": stats.calls,
        "session_calls": stats.session_calls,
        "hostile": stats.hostile,
        "status_counts": {str(k): v for k, v in sorted(stats.status.items())},
        "valid_call_latency_ms": {
            "p50": round(statistics.median(lat) * 1000, 2),
            "p99": round(lat[int(len(lat) * 0.99) - 1 if len(lat) > 1 else 0] * 1000, 2),
            "max": round(lat[-1] * 1000, 2),
        },
        "rss_kib": {"start": samples[0], "peak": max(samples), "end": samples[-1]},
        "errors": stats.errors,
    }
    print(f"soak: {summary['seconds']} s, {stats.calls} valid calls, {stats.session_calls} session calls")
    print("hostile: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.hostile.items())))
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in summary["status_counts"].items()))
    print("valid call latency ms: p50 {p50}, p99 {p99}, max {max}".format(**summary["valid_call_latency_ms"]))
    print("memory KiB: start {start}, peak {peak}, end {end}".format(**summary["rss_kib"]))
    print(f"errors: {len(stats.errors)}")
    for e in stats.errors:
        print(f"  {e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    sys.exit(1 if stats.errors else 0)


if __name__ == "__main__":
    main()
