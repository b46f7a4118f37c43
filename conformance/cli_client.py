#!/usr/bin/env python3
"""The `snodo` command line as the conformance runner's client, for the OAuth
extension scenarios its options cover: `auth/wif-jwt-bearer` (--client-id with
--workload-token FILE), `auth/enterprise-managed-authorization` (--client-id,
--client-secret, --idp-token-endpoint, --idp-client-id, --id-token FILE), and
`auth/dpop` and `auth/dpop-nonce` (`snodo login --dpop`, its authorization URL
visited as a browser would, then `snodo tools --dpop` with the stored token and
key).

    cli_client.py SNODO URL      (the runner appends URL and sets
                                  MCP_CONFORMANCE_CONTEXT)

The tokens the scenario hands out are written to files, as a workload's token
file or a saved ID token would be, and `snodo tools` lists the server's tools
with them; its exit status is this script's.
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request


def login(snodo: str, url: str, env: dict) -> int:
    """`snodo login --dpop --no-browser URL`, with its authorization URL
    opened as a browser would (the runner's authorization server approves at
    once and redirects to the command's loopback listener)."""
    with subprocess.Popen(
        [snodo, "login", "--dpop", "--no-browser", url],
        env=env, stderr=subprocess.PIPE, text=True,
    ) as child:
        assert child.stderr is not None
        for line in child.stderr:
            sys.stderr.write(line)
            if line.startswith("  http"):
                with urllib.request.urlopen(line.strip(), timeout=30) as answer:
                    answer.read()
                break
        rest = child.stderr.read()
        sys.stderr.write(rest)
        return child.wait(timeout=60)


def main() -> int:
    snodo, url = sys.argv[1], sys.argv[-1]
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory() as scratch:

        def token_file(name: str, text: str) -> str:
            path = os.path.join(scratch, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            return path

        env = dict(os.environ, SNODO_CONFIG_DIR=os.path.join(scratch, "config"))
        if os.environ.get("MCP_CONFORMANCE_SCENARIO", "").startswith("auth/dpop"):
            status = login(snodo, url, env)
            if status != 0:
                return status
            return subprocess.run([snodo, "tools", "--dpop", url], env=env, check=False).returncode
        args = [snodo, "tools", "--client-id", context["client_id"]]
        if "valid_jwt" in context:
            args += ["--workload-token", token_file("workload.jwt", context["valid_jwt"])]
        elif "idp_id_token" in context:
            args += [
                "--client-secret", context["client_secret"],
                "--idp-token-endpoint", context["idp_token_endpoint"],
                "--idp-client-id", context["idp_client_id"],
                "--id-token", token_file("id.jwt", context["idp_id_token"]),
            ]
        else:
            print(f"cli_client.py: no option covers this scenario's context: {sorted(context)}")
            return 2
        return subprocess.run(args + [url], env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
