"""Self-test of summarize.py --check-warnings: a listed check may fail, an
unlisted one fails the leg, a listed check that passes is stale, and a run with
too few scenarios fails. Run: python3 conformance/test_summarize.py"""
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).parent


def run(raw, baseline, *minimums):
    return subprocess.run(
        [sys.executable, str(HERE / "summarize.py"), "--check-warnings", str(raw), str(baseline), *minimums],
        capture_output=True, text=True,
    )


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        raw = tmp / "raw"
        for scenario, checks in {
            "tools-call": [("a", "SUCCESS"), ("b", "FAILURE")],
            "tasks-x": [("c", "FAILURE"), ("d", "SUCCESS")],
        }.items():
            folder = raw / f"server-{scenario}-2026-12-01T00-00-00-000Z"
            folder.mkdir(parents=True)
            (folder / "checks.json").write_text(json.dumps([{"id": i, "status": s} for i, s in checks]))
        base = tmp / "baseline.yml"
        failures = []

        def expect(code, text, baseline, *minimums):
            base.write_text(baseline)
            out = run(raw, base, *minimums)
            if out.returncode != code or text not in out.stdout:
                failures.append(f"{baseline!r} {minimums}: exit {out.returncode}, {out.stdout!r}")

        expect(1, "unexpected failure or warning: tools-call:b", "server:\n  - tasks-x:c\n")
        expect(1, "unexpected failure or warning: tasks-x:c", "server:\n  - tools-call:b\n")
        expect(0, "", "server:\n  - tools-call:b\n  - tasks-x:c\n")
        expect(0, "", "server:\n  - tools-call\n  - tasks-x\n")
        expect(1, "now passes, remove it: tasks-x:d", "server:\n  - tools-call:b\n  - tasks-x:c\n  - tasks-x:d\n")
        expect(1, "fewer than the expected", "server:\n  - tools-call:b\n  - tasks-x:c\n", "3", "1")
        expect(1, "unexpected failure or warning", "server: []\nclient:\n  - tools-call:b\n")
    for failure in failures:
        print("summarize self-test:", failure)
    print(f"summarize self-test: {7 - len(failures)} of 7 cases behave")
    return 1 if failures else 0


sys.exit(main())
