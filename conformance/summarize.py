"""Summarize a conformance run (the runner's -o folder) as a Markdown table.

    summarize.py RAW_DIR OUT.md NAME ARGS      write the table
    summarize.py --check-warnings RAW_DIR BASELINE [MIN_SCENARIOS MIN_PASSED]
        exit 1 when a scenario not in the baseline has a WARNING or FAILURE,
        or when the run has fewer scenarios or passed checks than the minimums
        (so that a run that selected nothing cannot pass)
"""
import json
import pathlib
import re
import sys


def scenarios(raw):
    out = {}
    for checks in sorted(pathlib.Path(raw).glob("*/checks.json")):
        name = re.sub(r"^server-|-\d{4}-\d{2}-\d{2}T.*$", "", checks.parent.name)
        data = json.loads(checks.read_text())
        items = data if isinstance(data, list) else data.get("checks", [])
        counts = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
        for item in items:
            status = item.get("status")
            if status in counts:
                counts[status] += 1
        out[name] = counts
    return out


def baseline(path):
    names, section = set(), None
    for line in pathlib.Path(path).read_text().splitlines():
        if re.match(r"^server\s*:", line):
            section = "server"
        elif re.match(r"^\w+\s*:", line):
            section = None
        m = re.match(r"^\s*-\s*(\S+)", line)
        if m and section == "server":
            names.add(m.group(1))
    return names


def main(argv):
    if argv[0] == "--check-warnings":
        raw, base = argv[1], baseline(argv[2])
        bad = [
            (n, c) for n, c in scenarios(raw).items()
            if n not in base and not n.startswith("tasks-") and (c["WARNING"] or c["FAILURE"])
        ]
        for name, counts in bad:
            print(f"conformance: {name}: {counts['FAILURE']} failure(s), {counts['WARNING']} warning(s)")
        short = False
        if len(argv) >= 5:
            rows = scenarios(raw)
            passed = sum(c["SUCCESS"] for c in rows.values())
            want_scenarios, want_passed = int(argv[3]), int(argv[4])
            if len(rows) < want_scenarios or passed < want_passed:
                print(f"conformance: {raw}: {len(rows)} scenarios and {passed} passed checks, "
                      f"fewer than the expected {want_scenarios} and {want_passed}")
                short = True
        return 1 if bad or short else 0
    raw, out, name, args = argv
    rows = scenarios(raw)
    total = {k: sum(c[k] for c in rows.values()) for k in ("SUCCESS", "FAILURE", "WARNING")}
    lines = [
        f"# Conformance: {name}",
        "",
        f"Runner `@modelcontextprotocol/conformance` (version pinned in `conformance/package.json`), arguments `{args}`.",
        "",
        "| scenario | passed | failed | warnings |",
        "|---|---|---|---|",
    ]
    for scenario, c in sorted(rows.items()):
        lines.append(f"| {scenario} | {c['SUCCESS']} | {c['FAILURE']} | {c['WARNING']} |")
    lines.append(f"| **total ({len(rows)} scenarios)** | {total['SUCCESS']} | {total['FAILURE']} | {total['WARNING']} |")
    pathlib.Path(out).write_text("\n".join(lines) + "\n")
    core = {n: c for n, c in rows.items() if not n.startswith("tasks-")}
    ext = {n: c for n, c in rows.items() if n.startswith("tasks-")}
    count = lambda group, k: sum(c[k] for c in group.values())
    print(f"{name}: {count(core, 'SUCCESS')} passed, {count(core, 'FAILURE')} failed, {count(core, 'WARNING')} warnings")
    if ext:
        print(f"  (the Tasks extension, not implemented and not scored: {len(ext)} scenarios, "
              f"{count(ext, 'SUCCESS')} checks pass, {count(ext, 'FAILURE')} fail)")
    return 0


sys.exit(main(sys.argv[1:]))
