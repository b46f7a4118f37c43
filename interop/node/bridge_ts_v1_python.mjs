// The official TypeScript SDK v1 client (initialize era only) through
// `snodo serve` to the official Python SDK's server on 2026-07-28
// (interop/python/server.py): the bridge translates the revisions both ways.
// Every check compares what the SDK returned with the Python server's
// documented answer; the last line is `<label>: N passed, M failed`.
//
//   node bridge_ts_v1_python.mjs --stdio "<snodo serve --stdio ...>" [--label NAME]
//   node bridge_ts_v1_python.mjs --http URL [--label NAME]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { attempt, check, expectRpcError, finish, negotiatedOn, opt, text, transportFromArgs } from "./checks.mjs";

const label = opt("--label") ?? "bridge-ts-v1-python";

const transport = transportFromArgs(StdioClientTransport, StreamableHTTPClientTransport, "bridge_ts_v1_python.mjs");

const negotiated = negotiatedOn(transport);

const client = new Client({ name: "snodo-bridge-ts-v1", version: "1.0.0" }, { capabilities: { elicitation: {} } });
let elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  return { action: "accept", content: { confirm: true } };
});

await attempt("initialize", async () => {
  await client.connect(transport);
  const version = client.getServerVersion();
  check("initialize: the bridge carries the Python server's name", version?.name === "snodo-interop-python", version);
  check("negotiated 2025-11-25 with the bridge", negotiated() === "2025-11-25", negotiated());
});

await attempt("tools/list", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check("tools/list", JSON.stringify(names) === JSON.stringify(["add", "confirm_delete", "count", "echo"]), names);
});

await attempt("call add (structuredContent)", async () => {
  const r = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  check("call add: structured result", r.structuredContent?.result === 42 && text(r) === "42" && !r.isError, r);
});

await attempt("call add with a bad argument (isError)", async () => {
  const r = await client.callTool({ name: "add", arguments: { a: 2, b: "x" } });
  check("a tool's own failure stays an isError result", r.isError === true && text(r).includes("validation error"), r);
});

await attempt("unknown tool (JSON-RPC error)", () =>
  expectRpcError("unknown tool is a JSON-RPC error", () => client.callTool({ name: "no_such_tool", arguments: {} }), -32602),
);

await attempt("count with progress", async () => {
  const steps = [];
  const r = await client.callTool({ name: "count", arguments: { n: 3 } }, CallToolResultSchema, {
    onprogress: (p) => steps.push(`${p.progress}/${p.total} ${p.message}`),
  });
  check("count: the backend's progress reaches the client", JSON.stringify(steps) === JSON.stringify(["1/3 step 1 of 3", "2/3 step 2 of 3", "3/3 step 3 of 3"]), steps);
  check("count: result", text(r) === "counted to 3", r);
});

await attempt("confirm_delete through elicitation", async () => {
  elicitations = [];
  const r = await client.callTool({ name: "confirm_delete", arguments: { item: "report.txt" } });
  check("confirm_delete: the backend's input request became elicitation/create", elicitations.length === 1 && elicitations[0].message === "Delete report.txt?" && elicitations[0].requestedSchema?.properties?.confirm, elicitations);
  check("confirm_delete: the answer went back to the backend", text(r) === "deleted report.txt" && !r.isError, r);
});

await attempt("read interop://greeting", async () => {
  const r = await client.readResource({ uri: "interop://greeting" });
  check("read interop://greeting", r.contents?.[0]?.text === "Hello from the Python SDK", r);
});

await attempt("prompt summarize", async () => {
  const r = await client.getPrompt({ name: "summarize", arguments: { topic: "MCP" } });
  check("prompt summarize", r.messages?.[0]?.content?.text === "Please summarize MCP in one paragraph.", r);
});

await client.close().catch(() => {});
finish(label);
