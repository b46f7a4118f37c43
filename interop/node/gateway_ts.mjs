// The official TypeScript SDK client, v1 (@modelcontextprotocol/sdk,
// initialize era) or v2 (@modelcontextprotocol/client, 2026-07-28), against
// `snodo proxy` as a gateway with a front door: the bearer token given is
// sent on every request, the tools listed must be exactly those expected
// (what the caller's roles and the virtual server allow), one call must
// answer the expected text, and each hidden tool must be unknown (-32602).
// The last line is `<label>: N passed, M failed`.
//
//   node gateway_ts.mjs --sdk v1|v2 --http URL --token TOKEN --tools a,b
//        --call NAME --args JSON --text TEXT [--hidden x,y] [--label NAME]
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { attempt, check, expectRpcError, finish, negotiatedOn, opt, text, watchdog } from "./checks.mjs";

const sdk = opt("--sdk") ?? "v2";
const label = opt("--label") ?? `gateway-ts-${sdk}`;
const url = new URL(opt("--http"));
const requestInit = { headers: { Authorization: `Bearer ${opt("--token")}` } };
const list = (name) => (opt(name) ? opt(name).split(",").filter(Boolean) : []);

const transport = sdk === "v1" ? new HttpV1(url, { requestInit }) : new HttpV2(url, { requestInit });
const negotiated = negotiatedOn(transport);
const client =
  sdk === "v1"
    ? new ClientV1({ name: "snodo-gateway-ts-v1", version: "1.0.0" })
    : new ClientV2({ name: "snodo-gateway-ts-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });

watchdog(label, transport, client);

await attempt("connect with the token", async () => {
  await client.connect(transport);
  const version = sdk === "v1" ? negotiated() : client.getNegotiatedProtocolVersion();
  check(`connected (${sdk})`, sdk === "v1" ? version === "2025-11-25" : version === "2026-07-28", version);
});

await attempt("tools/list", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  const want = list("--tools").sort();
  check("the tools the caller may see, and no other", JSON.stringify(names) === JSON.stringify(want), names);
});

await attempt("a call through the gateway", async () => {
  const r = await client.callTool({ name: opt("--call"), arguments: JSON.parse(opt("--args") ?? "{}") });
  check(`${opt("--call")} answers`, text(r).includes(opt("--text")), r);
});

for (const hidden of list("--hidden")) {
  await attempt(`${hidden} hidden`, () =>
    expectRpcError(`${hidden} cannot be called (unknown)`, () => client.callTool({ name: hidden, arguments: {} }), -32602),
  );
}

await client.close().catch(() => {});
finish(label);
