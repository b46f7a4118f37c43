// Drives `snodo demo` with the official TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in package.json), which negotiates
// revision 2026-07-28 with `server/discover` and carries elicitations as
// multi-round-trip `input_required` results. Every check compares what the
// SDK returned with the demo's documented answer; the last line is
// `<label>: N passed, M failed`.
//
//   node ts_v2_client.mjs --stdio "<command line>" [--label NAME]
//   node ts_v2_client.mjs --http URL [--label NAME]
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { attempt, check, finish, opt, sleep, text, transportFromArgs, watchdog } from "./checks.mjs";

const MODERN = "2026-07-28";
const TOOLS = ["add", "announce", "confirm_delete", "count", "greet", "lookup", "report"];

const label = opt("--label") ?? "ts-sdk-v2";
const transport = transportFromArgs(StdioClientTransport, StreamableHTTPClientTransport, "ts_v2_client.mjs");

// Note the requests the SDK writes, to see the multi-round-trip retry.
const sent = [];
const send = transport.send.bind(transport);
transport.send = (message, options) => {
  if (message?.method) sent.push(message);
  return send(message, options);
};

// `auto`: the SDK probes with server/discover and picks the modern era only
// on definitive evidence, falling back to initialize otherwise.
const client = new Client(
  { name: "snodo-interop-ts-v2", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } },
);

// A hung server or SDK must not hang the run. Closing the transport also
// ends the server process (and the SDK's stdio probe process, if it is
// still probing).
watchdog(label, transport, client);

// On 2026-07-28 the elicitation arrives inside an `input_required` result;
// the SDK fulfils it through this same handler and retries the call.
let elicitations = [];
client.setRequestHandler("elicitation/create", async (request) => {
  elicitations.push(request.params);
  return { action: "accept", content: { confirm: true } };
});
let toolsChanged = 0;
client.setNotificationHandler("notifications/tools/list_changed", () => {
  toolsChanged++;
});

await attempt("connect", async () => {
  await client.connect(transport);
  const version = client.getServerVersion();
  check("connect (server/discover)", version?.name === "snodo-demo", version);
  check(`negotiated ${MODERN}`, client.getNegotiatedProtocolVersion() === MODERN, client.getNegotiatedProtocolVersion());
  check("protocol era is modern", client.getProtocolEra() === "modern", client.getProtocolEra());
  const supported = client.getDiscoverResult()?.supportedVersions;
  check(`server/discover offers ${MODERN}`, Array.isArray(supported) && supported.includes(MODERN), client.getDiscoverResult());
  const caps = client.getServerCapabilities();
  check("capabilities have tools, resources, prompts, completions", caps?.tools && caps?.resources && caps?.prompts && caps?.completions, caps);
});

await attempt("tools/list", async () => {
  const before = sent.length;
  const { tools, nextCursor } = await client.listTools();
  const requests = sent.slice(before).filter((m) => m.method === "tools/list").length;
  const names = tools.map((t) => t.name).sort();
  check(`tools/list (the SDK walked ${requests} page${requests === 1 ? "" : "s"})`, JSON.stringify(names) === JSON.stringify(TOOLS) && nextCursor === undefined, names);
});

await attempt("tools/list page by page", async () => {
  // The first page without a cursor, then `nextCursor` until it runs out.
  let page = await client.request({ method: "tools/list", params: {} });
  const names = page.tools.map((t) => t.name);
  let pages = 1;
  while (page.nextCursor !== undefined && pages <= TOOLS.length) {
    page = await client.listTools({ cursor: page.nextCursor });
    names.push(...page.tools.map((t) => t.name));
    pages++;
  }
  names.sort();
  check(`tools/list page by page (${pages} page${pages === 1 ? "" : "s"})`, JSON.stringify(names) === JSON.stringify(TOOLS) && page.nextCursor === undefined, { pages, names });
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
  const r = await client.callTool({ name: "lookup", arguments: { word: "nope" } });
  check("call lookup of an unknown word is isError", r.isError === true && text(r) === 'No definition for "nope"', r);
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
  const r = await client.callTool({ name: "count", arguments: { to: 3 } }, {
    onprogress: (p) => steps.push(p),
  });
  check("count: one progress notification per step", JSON.stringify(steps.map((p) => p.progress)) === "[1,2,3]", steps);
  check("count: progress carries total and message", steps.length === 3 && steps.every((p, i) => p.total === 3 && p.message === `Counted ${i + 1} of 3`), steps);
  check("count: result after progress", text(r) === "Counted to 3" && !r.isError, r);
});

await attempt("confirm_delete through input_required", async () => {
  elicitations = [];
  const before = sent.length;
  const r = await client.callTool({ name: "confirm_delete", arguments: { path: "/tmp/demo.txt" } });
  const calls = sent.slice(before).filter((m) => m.method === "tools/call");
  const retry = calls[1]?.params;
  check("confirm_delete: input_required, then a retry with inputResponses and requestState", calls.length === 2 && calls[0].params?.inputResponses === undefined && retry?.inputResponses?.confirm?.action === "accept" && typeof retry?.requestState === "string" && calls[0].id !== calls[1].id, calls);
  check("confirm_delete: the elicitation reached the handler", elicitations.length === 1 && elicitations[0].requestedSchema?.properties?.confirm && elicitations[0].message === "Really delete /tmp/demo.txt?", elicitations);
  check("confirm_delete: answered after the elicitation", text(r).startsWith("Deleted /tmp/demo.txt") && !r.isError, r);
});

await attempt("read demo://readme", async () => {
  const r = await client.readResource({ uri: "demo://readme" });
  check("read demo://readme", r.contents?.[0]?.text?.includes("snodo demo") && r.contents?.[0]?.text?.includes("Tools:"), r);
});

await attempt("read demo://greetings/Ada", async () => {
  const r = await client.readResource({ uri: "demo://greetings/Ada" });
  check("read demo://greetings/Ada", r.contents?.[0]?.text === "Hello, Ada!", r);
});

await attempt("prompt introduce", async () => {
  const r = await client.getPrompt({ name: "introduce", arguments: { name: "Grace" } });
  check("prompt introduce", r.messages?.[0]?.role === "user" && r.messages?.[0]?.content?.text === "Please introduce Grace in two sentences.", r);
});

await attempt("completion", async () => {
  const r = await client.complete({ ref: { type: "ref/prompt", name: "introduce" }, argument: { name: "name", value: "A" } });
  check("completion of introduce/name", JSON.stringify(r.completion?.values) === '["Ada","Alan"]', r);
});

await attempt("subscriptions/listen", async () => {
  const subscription = await client.listen({ toolsListChanged: true });
  try {
    check("subscriptions/listen acknowledged for tools", subscription.honoredFilter?.toolsListChanged === true, subscription.honoredFilter);
    toolsChanged = 0;
    const r = await client.callTool({ name: "announce", arguments: { what: "tools" } });
    check("call announce", text(r) === "Announced tools" && !r.isError, r);
    const deadline = Date.now() + 5000;
    while (toolsChanged === 0 && Date.now() < deadline) await sleep(20);
    check("tools list_changed arrives on the listen stream within 5 s", toolsChanged >= 1, `${toolsChanged} notifications`);
  } finally {
    await subscription.close();
  }
  const reason = await Promise.race([subscription.closed, sleep(5000).then(() => "still open")]);
  check("subscription closes locally", reason === "local", reason);
});

await client.close().catch(() => {});
finish(label);
