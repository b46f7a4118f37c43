// The official TypeScript SDK v2 client (2026-07-28) against `snodo proxy`
// with the demo (`demo`, a URL backend) and server-everything (`everything`,
// a stdio backend) behind it: names namespaced, a call routed to each.
// `--expect withdrawn --kill PID` instead listens for tool list changes,
// kills the demo (PID), and checks that `list_changed` arrives, that the
// demo's tools are gone and that server-everything's still answer. The last
// line is `<label>: N passed, M failed`.
//
//   node proxy_ts_v2.mjs --http URL [--expect both | --expect withdrawn --kill PID] [--label NAME]
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { attempt, check, expectRpcError, finish, opt, sleep, text, watchdog } from "./checks.mjs";

const label = opt("--label") ?? "proxy-ts-v2";
const expect = opt("--expect") ?? "both";
const transport = new StreamableHTTPClientTransport(new URL(opt("--http")));
const client = new Client({ name: "snodo-proxy-ts-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });

watchdog(label, transport, client);

await attempt("connect", async () => {
  await client.connect(transport);
  check("negotiated 2026-07-28 with the proxy", client.getNegotiatedProtocolVersion() === "2026-07-28", client.getNegotiatedProtocolVersion());
});

if (expect === "withdrawn") {
  await attempt("the demo killed: list_changed", async () => {
    let changed = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      changed++;
    });
    const subscription = await client.listen({ toolsListChanged: true });
    try {
      process.kill(Number(opt("--kill")));
      const deadline = Date.now() + 15_000;
      while (changed === 0 && Date.now() < deadline) await sleep(50);
      check("tools list_changed arrives when the demo goes down", changed >= 1, `${changed} notifications`);
    } finally {
      await subscription.close();
    }
  });
}

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
