// What the interop client scripts share: their command-line options, the
// `ok   NAME` / `FAIL NAME: detail` lines, and the closing
// `<label>: N passed, M failed` line that the test suite totals.

const argv = process.argv.slice(2);

/** The value after `--name` on the command line. */
export function opt(name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

let passed = 0;
let failed = 0;

/** Records one check and prints its line. */
export function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  }
}

/** Runs `fn`; a throw is a failed check named `name`. */
export async function attempt(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(name, false, `threw ${e?.code ?? ""} ${e?.message ?? e}`);
  }
}

/** The text blocks of a tool result, joined by newlines. */
export const text = (result) =>
  (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** Prints the closing line and exits: 0 when nothing failed. */
export function finish(label) {
  console.log(`${label}: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

/** The transport the command line asks for: `--stdio "<command line>"` or
 * `--http URL`, built with the SDK's own classes; exits with a usage line
 * otherwise. */
export function transportFromArgs(StdioTransport, HttpTransport, script) {
  if (opt("--stdio")) {
    const [command, ...args] = opt("--stdio").split(" ");
    return new StdioTransport({ command, args, stderr: "inherit" });
  }
  if (opt("--http")) {
    return new HttpTransport(new URL(opt("--http")));
  }
  console.error(`usage: ${script} --stdio CMD | --http URL`);
  process.exit(2);
}

/** Checks that `call` fails with a JSON-RPC error of `code`. */
export async function expectRpcError(name, call, code) {
  try {
    const r = await call();
    check(name, false, r);
  } catch (e) {
    check(name, e?.code === code, `${e?.code} ${e?.message}`);
  }
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A hung server or SDK must not hang the run: after 60 s the run fails,
 * closes what `closers` return (ending a stdio server) and finishes. */
export function watchdog(label, ...closers) {
  setTimeout(async () => {
    check("finished within 60 s", false, "timed out");
    await Promise.race([Promise.allSettled(closers.map((c) => c.close())), sleep(3000)]);
    finish(label);
  }, 60_000).unref();
}

/** The revision the TypeScript SDK v1 tells `transport` it negotiated, as a
 * getter (noted on the way through `setProtocolVersion`). */
export function negotiatedOn(transport) {
  let negotiated;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setProtocolVersion?.(version);
  };
  return () => negotiated;
}
