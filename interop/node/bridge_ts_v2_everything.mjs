// The official TypeScript SDK v2 client (2026-07-28, multi round-trip
// input) through `snodo serve` to @modelcontextprotocol/server-everything
// over stdio (an SDK v1 server: initialize era, server-initiated sampling
// and elicitation requests): the bridge turns each of the server's requests
// into an `input_required` answer and the client's answer back into the
// response the server waits for. The last line is `<label>: N passed, M failed`.
//
//   node bridge_ts_v2_everything.mjs --http URL [--label NAME]
//   node bridge_ts_v2_everything.mjs --stdio "<snodo serve --stdio ...>" [--label NAME]
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { attempt, check, expectRpcError, finish, opt, text, transportFromArgs, watchdog } from "./checks.mjs";

const label = opt("--label") ?? "bridge-ts-v2-everything";
const transport = transportFromArgs(StdioClientTransport, StreamableHTTPClientTransport, "bridge_ts_v2_everything.mjs");

const client = new Client(
  { name: "snodo-bridge-ts-v2", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: "auto" } },
);

watchdog(label, transport, client);

let elicitations = [];
client.setRequestHandler("elicitation/create", async (request) => {
  elicitations.push(request.params);
  return { action: "accept", content: { name: "Ada", check: true } };
});
let samplings = [];
client.setRequestHandler("sampling/createMessage", async (request) => {
  samplings.push(request.params);
  return { role: "assistant", model: "interop-model", content: { type: "text", text: "sampled by the client" } };
});

await attempt("connect", async () => {
  await client.connect(transport);
  check("negotiated 2026-07-28 with the bridge", client.getNegotiatedProtocolVersion() === "2026-07-28", client.getNegotiatedProtocolVersion());
  check("the bridge carries the backend's name", /everything/i.test(client.getServerVersion()?.name ?? ""), client.getServerVersion());
});

await attempt("tools/list", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  const want = ["echo", "get-sum", "get-structured-content", "trigger-long-running-operation", "trigger-sampling-request", "trigger-elicitation-request"];
  check("tools/list has the backend's tools", want.every((n) => names.includes(n)), names);
});

await attempt("call echo", async () => {
  const r = await client.callTool({ name: "echo", arguments: { message: "hi" } });
  check("call echo", text(r) === "Echo: hi" && !r.isError, r);
});

await attempt("call get-structured-content", async () => {
  const r = await client.callTool({ name: "get-structured-content", arguments: { location: "New York" } });
  check("structured content crosses the bridge", typeof r.structuredContent?.temperature === "number", r);
});

await attempt("unknown tool (JSON-RPC error)", () =>
  expectRpcError("unknown tool is a JSON-RPC error", () => client.callTool({ name: "no_such_tool", arguments: {} }), -32602),
);

await attempt("progress", async () => {
  const steps = [];
  const r = await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 2 } }, {
    onprogress: (p) => steps.push(p.progress),
  });
  check("the backend's progress reaches the client", steps.length >= 1 && steps[0] === 1, steps);
  check("long-running operation completes", text(r).includes("completed"), r);
});

await attempt("sampling", async () => {
  samplings = [];
  const r = await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hello", maxTokens: 10 } });
  check("the backend's sampling request reached the client", samplings.length === 1 && samplings[0].maxTokens === 10, samplings);
  check("the client's sample went back to the backend", text(r).includes("sampled by the client"), r);
});

await attempt("elicitation", async () => {
  elicitations = [];
  const r = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
  check("the backend's elicitation request reached the client", elicitations.length === 1 && elicitations[0].requestedSchema?.required?.includes("name"), elicitations);
  check("the client's answer went back to the backend", text(r).includes("User provided the requested information") && text(r).includes("Ada"), r);
});

await attempt("resources", async () => {
  const { resources } = await client.listResources();
  check("resources/list", resources.length > 0, resources.length);
  const r = await client.readResource({ uri: resources[0].uri });
  check("read a resource", r.contents?.[0]?.uri === resources[0].uri, r);
});

await attempt("prompts", async () => {
  const r = await client.getPrompt({ name: "simple-prompt", arguments: {} });
  check("get a prompt", r.messages?.length > 0, r);
});

await client.close().catch(() => {});
finish(label);
