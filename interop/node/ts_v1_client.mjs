// Drives `snodo demo` with the official TypeScript SDK v1 client
// (@modelcontextprotocol/sdk, pinned in package.json), which speaks only the
// initialize-era revisions. Every check compares what the SDK returned with
// the demo's documented answer; the last line is `<label>: N passed, M failed`.
//
//   node ts_v1_client.mjs --stdio "<command line>" [--label NAME]
//   node ts_v1_client.mjs --http URL [--label NAME]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { attempt, check, finish, negotiatedOn, opt, text, transportFromArgs } from "./checks.mjs";

const label = opt("--label") ?? "ts-sdk-v1";

const transport = transportFromArgs(StdioClientTransport, StreamableHTTPClientTransport, "ts_v1_client.mjs");

const negotiated = negotiatedOn(transport);

const client = new Client({ name: "snodo-interop-ts-v1", version: "1.0.0" }, { capabilities: { elicitation: {} } });
let elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  return { action: "accept", content: { confirm: true } };
});

await attempt("initialize", async () => {
  await client.connect(transport);
  const version = client.getServerVersion();
  check("initialize", version?.name === "snodo-demo", version);
  check("negotiated 2025-11-25 (the SDK's newest)", negotiated() === "2025-11-25", negotiated());
  const caps = client.getServerCapabilities();
  check("capabilities have tools, resources, prompts, completions", caps?.tools && caps?.resources && caps?.prompts && caps?.completions, caps);
});

await attempt("tools/list", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check("tools/list", JSON.stringify(names) === JSON.stringify(["add", "announce", "confirm_delete", "count", "greet", "lookup", "report"]), names);
});

await attempt("call greet", async () => {
  const r = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
  check("call greet", text(r) === "Hello, Ada!" && !r.isError, r);
});

await attempt("call add (structuredContent)", async () => {
  const r = await client.callTool({ name: "add", arguments: { a: 2, b: 40 } });
  check("call add (structuredContent)", r.structuredContent?.sum === 42 && !r.isError, r);
});

await attempt("call lookup (isError)", async () => {
  const r = await client.callTool({ name: "lookup", arguments: { word: "zzz-unknown" } });
  check("call lookup of an unknown word is isError", r.isError === true && text(r).length > 0, r);
});

await attempt("missing argument (isError)", async () => {
  const r = await client.callTool({ name: "greet", arguments: {} });
  check("missing argument is isError naming it", r.isError === true && text(r).includes("name"), r);
});

await attempt("unknown tool (JSON-RPC error)", async () => {
  try {
    const r = await client.callTool({ name: "no_such_tool", arguments: {} });
    check("unknown tool is a JSON-RPC error", false, r);
  } catch (e) {
    check("unknown tool is a JSON-RPC error", e?.code === -32602, `${e?.code} ${e?.message}`);
  }
});

await attempt("count with progress", async () => {
  const steps = [];
  const r = await client.callTool({ name: "count", arguments: { to: 3 } }, CallToolResultSchema, {
    onprogress: (p) => steps.push(p.progress),
  });
  check("count: one progress notification per step", JSON.stringify(steps) === "[1,2,3]", steps);
  check("count: result after progress", text(r) === "Counted to 3", r);
});

await attempt("confirm_delete through elicitation", async () => {
  elicitations = [];
  const r = await client.callTool({ name: "confirm_delete", arguments: { path: "/tmp/demo.txt" } });
  check("confirm_delete: the server sent elicitation/create", elicitations.length === 1 && elicitations[0].requestedSchema?.properties?.confirm, elicitations);
  check("confirm_delete: answered after the elicitation", text(r).startsWith("Deleted /tmp/demo.txt"), r);
});

await attempt("read demo://readme", async () => {
  const r = await client.readResource({ uri: "demo://readme" });
  check("read demo://readme", r.contents?.[0]?.text?.includes("Tools:"), r);
});

await attempt("read demo://greetings/Ada", async () => {
  const r = await client.readResource({ uri: "demo://greetings/Ada" });
  check("read demo://greetings/Ada", r.contents?.[0]?.text === "Hello, Ada!", r);
});

await attempt("prompt introduce", async () => {
  const r = await client.getPrompt({ name: "introduce", arguments: { name: "Grace" } });
  check("prompt introduce", r.messages?.[0]?.content?.text === "Please introduce Grace in two sentences.", r);
});

await attempt("completion", async () => {
  const r = await client.complete({ ref: { type: "ref/prompt", name: "introduce" }, argument: { name: "name", value: "A" } });
  check("completion of introduce/name", JSON.stringify(r.completion?.values) === '["Ada","Alan"]', r);
});

await attempt("ping", async () => {
  const r = await client.ping();
  check("ping", r && Object.keys(r).length === 0, r);
});

await client.close().catch(() => {});
finish(label);
