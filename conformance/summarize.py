"""Summarize a conformance run (the runner's -o folder) as a Markdown table.

    summarize.py RAW_DIR OUT.md NAME ARGS      write the table
    summarize.py --check-warnings RAW_DIR BASELINE [MIN_SCENARIOS MIN_PASSED]
        exit 1 when a check has a WARNING or FAILURE that the baseline does not
        list (by scenario, or by `scenario:check-id`), when a listed check of a
        scenario in this run now passes (a stale entry), or when the run has
        fewer scenarios or passed checks than the minimums (so that a run that
        selected nothing cannot pass). No scenario is exempt by its name.
"""
import json
import pathlib
import re
import sys


def checks_of(raw):
    """{scenario: [(check id, status)]} of a run."""
    out = {}
    # A scenario named `auth/x` is written to `auth/x-<time>/`.
    for checks in sorted(pathlib.Path(raw).rglob("checks.json")):
        folder = checks.parent.relative_to(raw).as_posix()
        name = re.sub(r"^server-|-\d{4}-\d{2}-\d{2}T.*$", "", folder)
        data = json.loads(checks.read_text())
        items = data if isinstance(data, list) else data.get("checks", [])
        out[name] = [(item.get("id") or item.get("name") or "?", item.get("status")) for item in items]
    return out


def scenarios(raw):
    out = {}
    for name, items in checks_of(raw).items():
        counts = {"SUCCESS": 0, "FAILURE": 0, "WARNING": 0}
        for _, status in items:
            if status in counts:
                counts[status] += 1
        out[name] = counts
    return out


def baseline(path):
    """The `server:` entries: whole scenarios, and `scenario:check-id` pairs."""
    whole, checks, section = set(), set(), None
    for line in pathlib.Path(path).read_text().splitlines():
        if re.match(r"^server\s*:", line):
            section = "server"
        elif re.match(r"^\w+\s*:", line):
            section = None
        m = re.match(r"^\s*-\s*['\"]?([^'\"\s#]+)", line)
        if m and section == "server":
            entry = m.group(1)
            if ":" in entry:
                checks.add(tuple(entry.split(":", 1)))
            else:
                whole.add(entry)
    return whole, checks


def unexpected(raw, base):
    """Failures the baseline does not list, and listed checks that now pass."""
    whole, listed = base
    bad, stale = [], []
    for scenario, items in checks_of(raw).items():
        failing = [cid for cid, status in items if status in ("FAILURE", "WARNING")]
        if scenario in whole:
            if not failing:
                stale.append(scenario)
            continue
        bad.extend(f"{scenario}:{cid}" for cid in failing if (scenario, cid) not in listed)
        passing = {cid for cid, status in items if status == "SUCCESS"}
        stale.extend(f"{s}:{c}" for s, c in sorted(listed) if s == scenario and c in passing)
    return bad, stale


def main(argv):
    if argv[0] == "--check-warnings":
        raw, base = argv[1], baseline(argv[2])
        bad, stale = unexpected(raw, base)
        for entry in bad:
            print(f"conformance: {raw}: unexpected failure or warning: {entry}")
        for entry in stale:
            print(f"conformance: {raw}: baseline entry now passes, remove it: {entry}")
        bad = bad + stale
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
    # Failures the baseline lists are counted apart, so that the totals of
    # scripts/test.sh show them without calling a passing run failed.
    base_path = pathlib.Path(__file__).with_name("baseline.yml")
    whole, listed = baseline(base_path) if base_path.exists() else (set(), set())
    known = sum(
        1 for scenario, items in checks_of(raw).items() for cid, status in items
        if status in ("FAILURE", "WARNING") and (scenario in whole or (scenario, cid) in listed)
    )
    lines.append("")
    lines.append(f"{known} of the failures and warnings are known, listed in `conformance/baseline.yml`.")
    pathlib.Path(out).write_text("\n".join(lines) + "\n")
    unknown_failed = total["FAILURE"] + total["WARNING"] - known
    print(f"{name}: {total['SUCCESS']} passed, {unknown_failed} failed, {known} known failures (baseline)")
    print(f"{name}: {len(rows)} scenarios")
    return 0


sys.exit(main(sys.argv[1:]))
