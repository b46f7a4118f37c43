// The official TypeScript SDK v2 client (2026-07-28) against `snodo proxy`
// with the demo (`demo`, a URL backend) and server-everything (`everything`,
// a stdio backend) behind it: names namespaced, a call routed to each.
// `--expect withdrawn` checks instead that the demo's tools are gone while
// it is down and server-everything's still answer. The last line is
// `<label>: N passed, M failed`.
//
//   node proxy_ts_v2.mjs --http URL [--expect both|withdrawn] [--label NAME]
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { attempt, check, expectRpcError, finish, opt, text, watchdog } from "./checks.mjs";

const label = opt("--label") ?? "proxy-ts-v2";
const expect = opt("--expect") ?? "both";
const transport = new StreamableHTTPClientTransport(new URL(opt("--http")));
const client = new Client({ name: "snodo-proxy-ts-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });

watchdog(label, transport, client);

await attempt("connect", async () => {
  await client.connect(transport);
  check("negotiated 2026-07-28 with the proxy", client.getNegotiatedProtocolVersion() === "2026-07-28", client.getNegotiatedProtocolVersion());
});

await attempt("tools/list", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check("every name is namespaced by its backend", names.every((n) => n.startsWith("demo.") || n.startsWith("everything.")), names);
  check("server-everything's tools are listed", names.includes("everything.echo") && names.includes("everything.get-sum"), names);
  if (expect === "both") {
    check("the demo's tools are listed", names.includes("demo.add") && names.includes("demo.greet"), names);
  } else {
    check("the demo's tools are withdrawn while it is down", !names.some((n) => n.startsWith("demo.")), names);
  }
});

await attempt("a call routed to server-everything", async () => {
  const r = await client.callTool({ name: "everything.get-sum", arguments: { a: 2, b: 3 } });
  check("everything.get-sum", text(r).includes("5"), r);
});

if (expect === "both") {
  await attempt("a call routed to the demo", async () => {
    const r = await client.callTool({ name: "demo.add", arguments: { a: 2, b: 40 } });
    check("demo.add (structured)", r.structuredContent?.sum === 42, r);
  });
  await attempt("a resource of the demo, under its backend's scheme", async () => {
    const r = await client.readResource({ uri: "demo+demo://greetings/Ada" });
    check("read demo+demo://greetings/Ada", r.contents?.[0]?.text === "Hello, Ada!" && r.contents?.[0]?.uri === "demo+demo://greetings/Ada", r);
  });
  await attempt("a prompt of the demo", async () => {
    const r = await client.getPrompt({ name: "demo.introduce", arguments: { name: "Grace" } });
    check("prompt demo.introduce", r.messages?.[0]?.content?.text === "Please introduce Grace in two sentences.", r);
  });
} else {
  await attempt("a call to a withdrawn tool", () =>
    expectRpcError("a withdrawn tool is unknown (JSON-RPC error)", () => client.callTool({ name: "demo.add", arguments: { a: 1, b: 1 } }), -32602),
  );
}

await client.close().catch(() => {});
finish(label);
