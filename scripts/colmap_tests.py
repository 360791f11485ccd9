#!/usr/bin/env python3
"""COLMAP's own tests on the programs scripts/build_colmap.sh builds, and
their tally.

scripts/build_colmap.sh builds COLMAP's estimator, cost function, mapper and
controller tests twice: with the patch and SQRTBA_ENABLED=ON
(<cache>/sqrtba/tests, where every bundle adjustment and global positioning
solves with square-root BA) and with the option off (<cache>/sqrtba-off/tests,
COLMAP as released). This runs every test binary of each, one after the other,
and prints per binary the tests run, passed, failed and skipped and the
seconds, then every failed test with the first line of its failure.

    python3 scripts/colmap_tests.py                 # both builds
    python3 scripts/colmap_tests.py --builds sqrtba --json tally.json

Exit status: 0 when every test of every build passed, 1 otherwise, 2 when
COLMAP is not built.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def colmap_cache():
    done = subprocess.run(["bash", os.path.join(ROOT, "scripts", "build_colmap.sh"), "--if-built"],
                          stdout=subprocess.PIPE, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def run_binary(path, timeout):
    """Runs one gtest binary; returns its tally and failures."""
    with tempfile.TemporaryDirectory(prefix="colmap-test-") as work:
        report = os.path.join(work, "report.json")
        start = time.monotonic()
        try:
            done = subprocess.run([path, "--gtest_output=json:" + report], cwd=work,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  errors="replace", timeout=timeout)
            code, output = done.returncode, done.stdout
        except subprocess.TimeoutExpired as e:
            # The output so far (bytes here, whatever text= says).
            output = e.stdout or ""
            code = "timeout"
            if isinstance(output, bytes):
                output = output.decode(errors="replace")
        seconds = time.monotonic() - start
        row = {"binary": os.path.basename(path), "exit": code, "seconds": round(seconds, 1),
               "tests": 0, "passed": 0, "failed": 0, "skipped": 0, "failures": []}
        if not os.path.exists(report):
            row["failed"] = 1
            tail = output.strip().splitlines()[-1:] or [""]
            row["failures"].append({"test": "(the binary)", "message": "exit %s: %s" % (code, tail[0])})
            return row
        with open(report) as f:
            data = json.load(f)
    for suite in data.get("testsuites", []):
        for test in suite.get("testsuite", []):
            row["tests"] += 1
            name = "%s.%s" % (suite["name"], test["name"])
            if test.get("failures"):
                row["failed"] += 1
                message = test["failures"][0].get("failure", "").strip().splitlines()
                row["failures"].append({"test": name, "message": " / ".join(message[:3])})
            elif test.get("result") == "SKIPPED" or test.get("status") == "NOTRUN":
                row["skipped"] += 1
            else:
                row["passed"] += 1
    if code not in (0, 1) and not row["failures"]:
        row["failed"] += 1
        row["failures"].append({"test": "(the binary)", "message": "exit %s" % code})
    return row


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", default=None, help="scripts/build_colmap.sh's cache")
    parser.add_argument("--builds", nargs="*", default=["sqrtba", "sqrtba-off"])
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per test binary")
    parser.add_argument("--json", default=None, help="write the tally here")
    args = parser.parse_args(argv)
    cache = args.cache or colmap_cache()
    if not cache:
        print("colmap_tests: COLMAP is not built: run scripts/build_colmap.sh", file=sys.stderr)
        return 2
    results = {}
    for build in args.builds:
        tests = os.path.join(cache, build, "tests")
        if not os.path.isdir(tests):
            print("colmap_tests: no tests in %s" % tests, file=sys.stderr)
            return 2
        rows = []
        for name in sorted(os.listdir(tests)):
            row = run_binary(os.path.join(tests, name), args.timeout)
            print("%s %s: %d passed, %d failed, %d skipped (%.1f s)" % (
                build, name, row["passed"], row["failed"], row["skipped"], row["seconds"]),
                file=sys.stderr)
            rows.append(row)
        results[build] = rows
    for build, rows in results.items():
        total = {k: sum(r[k] for r in rows) for k in ("tests", "passed", "failed", "skipped")}
        print("\n### %s: %d test binaries, %d tests, %d passed, %d failed, %d skipped\n" % (
            build, len(rows), total["tests"], total["passed"], total["failed"], total["skipped"]))
        print("| binary | tests | passed | failed | skipped | seconds |")
        print("|---|---:|---:|---:|---:|---:|")
        for r in rows:
            print("| %s | %d | %d | %d | %d | %.1f |" % (r["binary"], r["tests"], r["passed"],
                                                       r["failed"], r["skipped"], r["seconds"]))
        failures = [(r["binary"], f) for r in rows for f in r["failures"]]
        if failures:
            print("\nFailed:\n")
            for binary, f in failures:
                print("- `%s` %s: %s" % (binary, f["test"], f["message"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r["failed"] == 0 for rows in results.values() for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
